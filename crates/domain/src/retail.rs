//! The decisions of the retail channel: a paper ticket's sale, its
//! redemption by a player, and the shop's validation and payment. Pure
//! functions like [`crate::online`]'s; the words for the counter (amounts
//! and dates) are written by the `format` crate.

use crate::changes::{AuditRecord, Changes, Decision, Effect, GameWrite, Movement, Reason, RetailWrite};

use crate::api::Channel;
use crate::deadline::deadline_passed;
use crate::error::AppError;
use crate::rows::{AccountId, PaperRow, PlayerId, ShopAnswer, TicketStatus};
use engine::Game;
// The calendar is the format crate's, written once.
use format::calendar::{Day, day_text, paris_day_bounds};
use serde_json::json;

/// The serial as the shop typed it, checked: any case, with or without dashes.
pub fn parse_serial(typed: &str) -> Result<String, AppError> {
    emission::Serial::parse(typed).map(|s| s.to_string()).map_err(|e| {
        AppError::BadRequest(format!("{e}: check the serial, as printed on the ticket (e.g. ASC-001-00001-000042-81)"))
    })
}

/// A paper ticket's status at the counter (the `status` of [`RetailAnswer`],
/// docs/shops.md): its row's, and once sold its game's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaperStatus {
    /// Not sold yet.
    Printed,
    /// Sold by a shop, its play code not used yet.
    Sold,
    /// Opened with its play code (its game exists), not finished.
    InPlay,
    /// Finished with a prize, not paid.
    Won,
    /// Finished without a prize.
    Lost,
    /// Its prize paid, by a shop or the operator's payment centre.
    Paid,
}

impl PaperStatus {
    pub const ALL: [PaperStatus; 6] = [
        PaperStatus::Printed,
        PaperStatus::Sold,
        PaperStatus::InPlay,
        PaperStatus::Won,
        PaperStatus::Lost,
        PaperStatus::Paid,
    ];

    /// Its text in the answers (`in_play`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            PaperStatus::Printed => "printed",
            PaperStatus::Sold => "sold",
            PaperStatus::InPlay => "in_play",
            PaperStatus::Won => "won",
            PaperStatus::Lost => "lost",
            PaperStatus::Paid => "paid",
        }
    }

    /// Its text read back; `None` for any other.
    pub fn parse(text: &str) -> Option<PaperStatus> {
        PaperStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The status of the paper ticket of `row`: printed and paid from its
    /// row; sold, then (the play code opened it: its game exists) in play
    /// from then on, before its first action too, then won or lost.
    pub fn of(row: &PaperRow) -> PaperStatus {
        match (row.status, row.game.as_ref().map(|g| g.result())) {
            (TicketStatus::Printed, _) => PaperStatus::Printed,
            (TicketStatus::Paid, _) => PaperStatus::Paid,
            (_, None) => PaperStatus::Sold,
            (_, Some(None)) => PaperStatus::InPlay,
            (_, Some(Some(result))) if result.prize_cents == 0 => PaperStatus::Lost,
            (_, Some(Some(_))) => PaperStatus::Won,
        }
    }
}

/// Who pays a won paper ticket's prize. A shop pays prizes up to its
/// payout ceiling; the operator's payment centre pays larger ones (FDJ's
/// regulation of instant games, art. 8.2): [`payer`]. In the counter's
/// answer (`pay_at`) the payment centre is `operator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Payer {
    /// The shop (the one that sold it; any shop where the operator allows it).
    #[serde(rename = "shop")]
    Shop,
    /// The operator's payment centre, on showing the ticket (a claim).
    #[serde(rename = "operator")]
    PaymentCentre,
}

/// Who pays a prize of `prize_cents` where the paying shop's payout
/// ceiling is `ceiling_cents`: the shop up to its ceiling, the operator's
/// payment centre above it (art. 8.2).
pub fn payer(prize_cents: i64, ceiling_cents: i64) -> Payer {
    if prize_cents > ceiling_cents { Payer::PaymentCentre } else { Payer::Shop }
}

/// What the shop's screen says of a paper ticket (validate, and the
/// answers of sell and pay): its status and the words for the counter.
/// `ceiling`: the payout ceiling of the shop asking (cents): a larger prize
/// is paid by the operator's payment centre (`pay_at`).
pub fn retail_answer(row: &PaperRow, now: i64, ceiling: i64) -> RetailAnswer {
    let prize = row.game.as_ref().and_then(|g| g.result()).map_or(0, |r| r.prize_cents as i64);
    let shop_side = &row.retail;
    let status = PaperStatus::of(row);
    let expired = deadline_passed(shop_side.claim_until_ms, now);
    let message = match status {
        PaperStatus::Printed => "Pas encore vendu : vendez-le avant que le joueur ne le joue.".to_string(),
        PaperStatus::Paid => format!(
            "Déjà payé ({}) le {} par {}.",
            format::euros(prize),
            format::french_date(shop_side.paid_ms.unwrap_or(0)),
            // No shop paid it: the operator's payment centre did (a claim).
            shop_side.paid_by.as_deref().unwrap_or(PAYMENT_CENTRE_FR)
        ),
        PaperStatus::Sold => "Vendu, pas encore joué : le joueur joue le duel en ligne avec son code.".into(),
        PaperStatus::InPlay => "Partie en cours : le joueur doit la terminer en ligne avant tout paiement.".into(),
        PaperStatus::Lost => "Perdant : rien à payer.".into(),
        PaperStatus::Won => match (shop_side.claim_until_ms, payer(prize, ceiling)) {
            (Some(until), _) if expired => format!(
                "Gagnant ({}), mais le délai de paiement a expiré le {}.",
                format::euros(prize),
                format::french_date(until)
            ),
            (until, Payer::PaymentCentre) => format!(
                "Gagnant ({}), au-delà du plafond de paiement de ce point de vente ({}) : \
                 le gagnant est payé par {}, sur présentation du ticket{}. Ne le payez pas.",
                format::euros(prize),
                format::euros(ceiling),
                PAYMENT_CENTRE_FR,
                until.map(|u| format!(", jusqu'au {}", format::french_date(u))).unwrap_or_default()
            ),
            (_, Payer::Shop) => format!("Gagnant : {} à payer.", format::euros(prize)),
        },
    };
    RetailAnswer {
        serial: row.serial.clone(),
        status,
        prize_cents: prize,
        message,
        sold_by: shop_side.sold_by.clone(),
        paid_ms: shop_side.paid_ms,
        paid_by: shop_side.paid_by.clone(),
        claim_until_ms: shop_side.claim_until_ms,
        expired,
        pay_at: (status == PaperStatus::Won).then(|| payer(prize, ceiling)),
    }
}

/// What the counter says of `row` once paid at `now` by `paid_by` (a shop;
/// `None`: the operator's payment centre).
pub(super) fn paid_answer(row: &PaperRow, now: i64, ceiling: i64, paid_by: Option<String>) -> RetailAnswer {
    let mut after = row.clone();
    after.status = TicketStatus::Paid;
    after.retail.paid_ms = Some(now);
    after.retail.paid_by = paid_by;
    retail_answer(&after, now, ceiling)
}

/// Who pays a prize no shop may pay, in the counter's words.
pub const PAYMENT_CENTRE_FR: &str = "le centre de paiement de l'opérateur";

/// Where and until when a paper ticket's prize is paid, for its holder:
/// the shop that sold it (or any shop, when the operator allows it), or the
/// operator's payment centre above the paying shop's ceiling (the seller's,
/// or with any shop the lowest ceiling: the holder is never sent to a shop
/// that may not pay).
pub fn claim(
    ticket: &crate::api::TicketView,
    any_shop: bool,
    ceilings: &crate::retail::PayoutCeilings,
    claim_days: u32,
    now: i64,
) -> Result<crate::api::PaperClaim, AppError> {
    let retail = ticket.retail.clone().ok_or_else(|| {
        AppError::Conflict(format!("ticket {} was sold online: its prize went to the player's account", ticket.serial))
            .because("sold_online", crate::params! {})
    })?;
    let prize = ticket.result.as_ref().map_or(0, |r| r.prize_cents as i64);
    let expired = deadline_passed(retail.claim_until_ms, now);
    let paid = retail.paid_ms.is_some();
    let ceiling = match (&retail.sold_by, any_shop) {
        (Some(shop), false) => ceilings.of(shop),
        _ => ceilings.lowest(),
    };
    let pay_at = (prize > 0 && !paid && !expired).then(|| match (payer(prize, ceiling), any_shop) {
        (Payer::PaymentCentre, _) => "payment_centre",
        (Payer::Shop, true) => "any_shop",
        (Payer::Shop, false) => "seller",
    });
    Ok(crate::api::PaperClaim {
        pay_at: pay_at.map(str::to_string),
        shop: retail.sold_by,
        prize_cents: prize,
        paid_ms: retail.paid_ms,
        paid_by: retail.paid_by,
        claim_until_ms: retail.claim_until_ms,
        claim_days,
        expired,
    })
}

/// The answer stored for `shop`'s earlier request of the same operation,
/// if `shop` made it: its retry (its answer was lost) gets it again.
fn replay_for(stored: Option<&ShopAnswer>, shop: &str) -> Option<Decision> {
    stored.filter(|s| s.shop == shop).map(|s| Decision::Replay(s.answer_json.clone()))
}

/// A paper ticket sold by `shop`; the same shop selling it again gets the
/// answer of its sale (another shop: 409).
pub fn sell(
    shop: &str,
    shop_account: AccountId,
    ceiling: i64,
    row: Option<PaperRow>,
    now: i64,
) -> Result<Decision, AppError> {
    let row = row.ok_or_else(|| {
        AppError::NotFound("no ticket has this serial".into()).because("unknown_serial", crate::params! {})
    })?;
    if row.channel != Channel::Paper {
        return Err(AppError::Conflict(format!("ticket {} is sold online, not in shops", row.serial))
            .because("sold_online", crate::params! {}));
    }
    if row.status != TicketStatus::Printed {
        if let Some(replay) = replay_for(row.sell_answer.as_ref(), shop) {
            return Ok(replay);
        }
        let sold_by = row.retail.sold_by.as_deref().unwrap_or("?");
        return Err(AppError::Conflict(format!("ticket {} is already sold (by {sold_by})", row.serial))
            .because("already_sold", crate::params! { "shop": sold_by }));
    }
    if let Some(end) = row.sale_end_ms.filter(|e| *e <= now) {
        return Err(AppError::Conflict(format!(
            "the sale of ticket {}'s emission ended on {}",
            row.serial,
            format::french_date(end)
        ))
        .because("sale_ended", crate::params! { "until_ms": end }));
    }
    let mut after = row.clone();
    after.status = TicketStatus::Sold;
    after.retail.sold_by = Some(shop.to_string());
    let mut answer = retail_answer(&after, now, ceiling);
    answer.message = format!("Ticket vendu ({}).", format::euros(row.price_cents));
    Ok(Decision::Apply(Box::new(Changes {
        retail: Some(RetailWrite::Sell { ticket_id: row.id, shop: shop.to_string(), sold_ms: now }),
        movement: Some(Movement::retail(Reason::RetailSale, row.id, shop_account, row.price_cents, now)),
        audit: Some(AuditRecord {
            created_ms: now,
            kind: "ticket_sold_in_shop",
            data_json: json!({"serial": row.serial, "shop": shop, "price_cents": row.price_cents}).to_string(),
        }),
        answer: serde_json::to_string(&answer).expect("an answer serializes"),
        ..Changes::none(Effect::Retail)
    })))
}

/// A won paper ticket paid by `shop`, once; the same shop paying it again
/// gets the answer of its payment (another shop: 409).
/// A prize above `ceiling` (the paying shop's) is never paid by a shop: it
/// is refused with 403 and the holder is sent to the operator's payment
/// centre ([`crate::claims::operator_pay`]).
pub fn pay(
    shop: &str,
    shop_account: AccountId,
    any_shop: bool,
    ceiling: i64,
    row: Option<PaperRow>,
    now: i64,
) -> Result<Decision, AppError> {
    let row = row.ok_or_else(|| {
        AppError::NotFound("no ticket has this serial".into()).because("unknown_serial", crate::params! {})
    })?;
    if row.channel != Channel::Paper {
        return Err(AppError::Conflict(format!(
            "ticket {} was sold online: its prize went to the player's account",
            row.serial
        ))
        .because("sold_online", crate::params! {}));
    }
    // What validate says of the ticket now: its status, prize and deadline.
    let validation = retail_answer(&row, now, ceiling);
    let prize = validation.prize_cents;
    let not_payable = |reason| {
        AppError::Conflict(format!("ticket {} cannot be paid: {}", row.serial, validation.message))
            .because(reason, crate::params! {})
    };
    match validation.status {
        PaperStatus::Won => {}
        PaperStatus::Paid => {
            if let Some(replay) = replay_for(row.pay_answer.as_ref(), shop) {
                return Ok(replay);
            }
            return Err(AppError::Conflict(format!("ticket {} is already paid: {}", row.serial, validation.message))
                .because(
                    "already_paid",
                    crate::params! { "paid_ms": validation.paid_ms, "paid_by": validation.paid_by, "prize_cents": prize },
                ));
        }
        PaperStatus::Printed => return Err(not_payable("not_sold_yet")),
        PaperStatus::Sold => return Err(not_payable("not_played")),
        PaperStatus::InPlay => return Err(not_payable("in_play")),
        PaperStatus::Lost => return Err(not_payable("lost")),
    }
    if let (true, Some(until)) = (validation.expired, validation.claim_until_ms) {
        return Err(AppError::Conflict(format!(
            "the claim deadline of ticket {} passed on {}",
            row.serial,
            format::french_date(until)
        ))
        .because("claim_deadline", crate::params! { "until_ms": until }));
    }
    let sold_by = row.retail.sold_by.clone().unwrap_or_default();
    if sold_by != shop && !any_shop {
        return Err(AppError::Forbidden(format!("ticket {} was sold by {sold_by}: it is paid there", row.serial))
            .because("other_shop", crate::params! { "shop": sold_by }));
    }
    if payer(prize, ceiling) == Payer::PaymentCentre {
        return Err(AppError::Forbidden(format!(
            "ticket {}'s prize ({}) is above this shop's payout ceiling ({}): the holder is paid by the operator's \
             payment centre, not at the counter",
            row.serial,
            format::euros(prize),
            format::euros(ceiling)
        ))
        .because("above_ceiling", crate::params! { "prize_cents": prize, "ceiling_cents": ceiling }));
    }
    let mut answer = paid_answer(&row, now, ceiling, Some(shop.to_string()));
    answer.message = format!("Payez {} au joueur.", format::euros(prize));
    Ok(Decision::Apply(Box::new(Changes {
        retail: Some(RetailWrite::Pay { ticket_id: row.id, shop: shop.to_string(), paid_ms: now }),
        movement: Some(Movement::retail(Reason::Prize, row.id, shop_account, prize, now)),
        audit: Some(AuditRecord {
            created_ms: now,
            kind: "ticket_paid",
            data_json: json!({"serial": row.serial, "shop": shop, "prize_cents": prize}).to_string(),
        }),
        answer: serde_json::to_string(&answer).expect("an answer serializes"),
        ..Changes::none(Effect::Retail)
    })))
}

/// A play code opens its sold paper ticket: its game is created the first
/// time, a logged-in player's history gets it while it has no owner. The
/// same code again changes nothing. `token` is the ticket's own token.
pub fn redeem(row: Option<PaperRow>, player: Option<PlayerId>, token: &str, now: i64) -> Result<Changes, AppError> {
    let row = row.ok_or_else(|| {
        AppError::NotFound("no ticket has this play code: check it on the ticket".into())
            .because("unknown_play_code", crate::params! {})
    })?;
    if row.channel != Channel::Paper {
        return Err(AppError::Conflict(
            "this code is an online ticket's: it is played from its owner's account".into(),
        )
        .because("online_ticket", crate::params! {}));
    }
    if row.status == TicketStatus::Printed {
        return Err(AppError::Conflict(
            "this ticket is not sold yet: ask the shop to sell it (scan it at the counter), then open it".into(),
        )
        .because("not_sold_yet", crate::params! {}));
    }
    let mut after = row.clone();
    let first = after.game.is_none();
    if first {
        after.game = Some(Game::new(row.prizes));
    }
    let owner = match (row.owner, player) {
        (None, Some(p)) => {
            after.owner = Some(p);
            Some(RetailWrite::Owner { ticket_id: row.id, serial: row.serial.clone(), owner: p })
        }
        _ => None,
    };
    let ticket = after.sold().ok_or_else(|| AppError::internal("a redeemed ticket without a game"))?;
    let answer = json!({"ticket": ticket.ticket.view(), "token": token}).to_string();
    Ok(Changes {
        game: first.then(|| GameWrite { row: ticket.clone(), from_seq: None, finished_ms: None, phase_changed: true }),
        retail: owner,
        audit: first.then(|| AuditRecord {
            created_ms: now,
            kind: "ticket_redeemed",
            data_json: json!({"serial": row.serial, "player_id": player}).to_string(),
        }),
        answer,
        ..Changes::none(Effect::Retail)
    })
}

/// The answer of the shop's three endpoints.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct RetailAnswer {
    pub serial: String,
    /// `printed`, `sold`, `in_play`, `won`, `lost` or `paid`.
    #[schema(value_type = String, pattern = "^(printed|sold|in_play|won|lost|paid)$")]
    pub status: PaperStatus,
    pub prize_cents: i64,
    /// What to do, in words, for the counter.
    pub message: String,
    pub sold_by: Option<String>,
    pub paid_ms: Option<i64>,
    pub paid_by: Option<String>,
    pub claim_until_ms: Option<i64>,
    /// The claim deadline has passed (at the answer's instant): no prize
    /// can be paid any more. The counter's page says it from this, never
    /// from its own clock (absent from answers stored before it was added).
    #[serde(default)]
    pub expired: bool,
    /// A won ticket: `shop` (this shop pays it) or `operator` (its prize is
    /// above this shop's payout ceiling: the operator's payment centre pays it).
    #[schema(value_type = Option<String>, pattern = "^(shop|operator)$")]
    pub pay_at: Option<Payer>,
}

/// The shops' figures are counted by the shop's own calendar day: French
/// civil time, `Europe/Paris` ([`format::calendar`]).
pub const SHOP_TIME_ZONE: &str = format::calendar::PARIS_TIME_ZONE;

/// `YYYY-MM-DD`, a day that exists (400 otherwise).
pub fn parse_day(text: &str) -> Result<Day, AppError> {
    format::calendar::parse_day(text).ok_or_else(|| {
        AppError::BadRequest(format!("day {text:?} is not a calendar day: write it YYYY-MM-DD, e.g. 2026-12-05"))
    })
}

/// A count of tickets and their amount, in cents.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct CountAmount {
    pub count: i64,
    pub amount_cents: i64,
}

/// One prize a shop paid: the facts of its receipt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct ShopPayment {
    pub serial: String,
    pub prize_cents: i64,
    /// When it was paid (unix ms).
    pub paid_ms: i64,
}

/// `GET /api/retail/report`: one shop's day, from its own ticket rows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct ShopReport {
    pub shop: String,
    /// The day, `YYYY-MM-DD`, in `time_zone`.
    pub day: String,
    /// Always `Europe/Paris`: the day's bounds are French civil time.
    pub time_zone: String,
    /// The day's first instant (unix ms, included).
    pub from_ms: i64,
    /// The next day's first instant (unix ms, excluded).
    pub to_ms: i64,
    /// The paper tickets this shop sold that day, at their price.
    pub sold: CountAmount,
    /// The prizes this shop paid that day.
    pub paid: CountAmount,
    /// `sold.amount_cents - paid.amount_cents`: positive, what the shop owes
    /// the operator for the day; negative, what the operator owes the shop.
    pub net_cents: i64,
    /// The day's payments, in the order paid (a receipt each).
    pub payments: Vec<ShopPayment>,
}

impl ShopReport {
    /// The report of `shop` for `day` from its sales and its payments.
    pub fn new(shop: &str, day: Day, sold: CountAmount, payments: Vec<ShopPayment>) -> ShopReport {
        let (from_ms, to_ms) = paris_day_bounds(day);
        let paid =
            CountAmount { count: payments.len() as i64, amount_cents: payments.iter().map(|p| p.prize_cents).sum() };
        ShopReport {
            shop: shop.to_string(),
            day: day_text(day),
            time_zone: SHOP_TIME_ZONE.to_string(),
            from_ms,
            to_ms,
            net_cents: sold.amount_cents - paid.amount_cents,
            sold,
            paid,
            payments,
        }
    }
}

/// `GET /api/retail/me`: the shop a retailer token signs in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct ShopMe {
    /// The shop's name, as configured (`--retailer-tokens "NAME:TOKEN"`).
    pub shop: String,
    /// The largest prize this shop pays, in cents; a larger one is paid by
    /// the operator's payment centre.
    pub payout_ceiling_cents: i64,
}

/// Each shop's payout ceiling (the server's configuration: `shop_payout_ceiling_cents` and `shop_payout_ceilings`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PayoutCeilings {
    pub default_cents: i64,
    pub shops: std::collections::BTreeMap<String, i64>,
}

impl PayoutCeilings {
    /// The ceiling of `shop`.
    pub fn of(&self, shop: &str) -> i64 {
        self.shops.get(shop).copied().unwrap_or(self.default_cents)
    }

    /// The lowest ceiling of any shop: a prize above it may be a claim.
    pub fn lowest(&self) -> i64 {
        self.shops.values().copied().chain(std::iter::once(self.default_cents)).min().unwrap_or(self.default_cents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::PrizeSchedule;

    const NOW: i64 = 1_700_000_000_000;
    const CEILING: i64 = 500_000;

    #[test]
    fn the_counter_reads_french_amounts_and_dates() {
        assert_eq!(format::euros(150_000), "1\u{a0}500,00\u{a0}€");
        assert_eq!(format::euros(300), "3,00\u{a0}€");
        assert_eq!(format::french_date(1_796_287_391_716), "03/12/2026 08:43 UTC");
    }

    fn printed_paper() -> PaperRow {
        PaperRow {
            id: 42,
            serial: "PAP-001-00001-000001-00".into(),
            channel: Channel::Paper,
            status: TicketStatus::Printed,
            owner: None,
            price_cents: 300,
            prizes: PrizeSchedule::new([300, 1000, 10000, 100000]),
            commitment: engine::commitment(&[9; 32]),
            server_seed: [9; 32],
            client_seed: None,
            retail: crate::api::RetailView { sold_by: None, paid_ms: None, paid_by: None, claim_until_ms: None },
            game: None,
            sale_end_ms: None,
            sold_ms: None,
            sell_answer: None,
            pay_answer: None,
            claim: None,
        }
    }

    #[test]
    fn a_shop_selling_again_gets_its_stored_answer_and_another_shop_a_refusal() {
        let Ok(Decision::Apply(changes)) = sell("A", 9, CEILING, Some(printed_paper()), NOW) else { panic!("sold") };
        let mut after = printed_paper();
        after.status = TicketStatus::Sold;
        after.retail.sold_by = Some("A".into());
        after.sell_answer = Some(ShopAnswer { shop: "A".into(), answer_json: changes.answer.clone() });
        // Later (an emission closed since, a retry typed otherwise): the same bytes.
        after.sale_end_ms = Some(NOW);
        match sell("A", 9, CEILING, Some(after.clone()), NOW + 1000) {
            Ok(Decision::Replay(a)) => assert_eq!(a, changes.answer),
            other => panic!("{other:?}"),
        }
        assert!(matches!(sell("B", 8, CEILING, Some(after.clone()), NOW), Err(ref e) if e.code() == "conflict"));
        // Another operation of the same shop: refused as before (not finished).
        assert!(matches!(pay("A", 9, false, CEILING, Some(after.clone()), NOW), Err(ref e) if e.code() == "conflict"));
        // Sold before answers were stored: refused as before.
        after.sell_answer = None;
        assert!(matches!(sell("A", 9, CEILING, Some(after), NOW), Err(ref e) if e.code() == "conflict"));
    }

    #[test]
    fn a_shop_paying_again_gets_its_stored_answer_and_another_shop_a_refusal() {
        let mut paid = printed_paper();
        paid.status = TicketStatus::Paid;
        paid.retail = crate::api::RetailView {
            sold_by: Some("A".into()),
            paid_ms: Some(NOW),
            paid_by: Some("B".into()),
            claim_until_ms: None,
        };
        paid.pay_answer = Some(ShopAnswer { shop: "B".into(), answer_json: "{\"paid\":1}".into() });
        // The claim deadline passed since: the payer's retry still gets its answer.
        paid.retail.claim_until_ms = Some(NOW + 1);
        match pay("B", 8, true, CEILING, Some(paid.clone()), NOW + 2) {
            Ok(Decision::Replay(a)) => assert_eq!(a, "{\"paid\":1}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(pay("A", 9, true, CEILING, Some(paid.clone()), NOW), Err(ref e) if e.code() == "conflict"));
        assert!(matches!(sell("B", 8, CEILING, Some(paid), NOW), Err(ref e) if e.code() == "conflict"));
    }
    /// A game of `prizes` played to its end (the first card each time) on
    /// the fair stream of the first client seed whose prize `wanted` accepts.
    fn finished_game(prizes: PrizeSchedule, wanted: impl Fn(u64) -> bool) -> Game {
        for n in 0..1000 {
            let mut game = Game::new(prizes);
            let mut stream = engine::FairStream::new(&[9; 32], &format!("seed-{n}"), "PAP-001-00001-000001-00");
            while !game.is_finished() {
                let action = match game.phase() {
                    engine::Phase::Play => engine::Action::play(game.hand().nth(0)),
                    _ => engine::Action::Draw,
                };
                game.apply(action, &mut stream, &mut Vec::new()).unwrap();
            }
            if game.result().is_some_and(|r| wanted(r.prize_cents)) {
                return game;
            }
        }
        panic!("no game of the first thousand seeds has the prize wanted")
    }

    /// A paper ticket sold by shop A whose game is finished with a prize
    /// that `wanted` accepts.
    fn finished_paper(wanted: impl Fn(u64) -> bool) -> PaperRow {
        let mut row = printed_paper();
        row.status = TicketStatus::Sold;
        row.retail.sold_by = Some("A".into());
        row.game = Some(finished_game(row.prizes, wanted));
        row
    }

    #[test]
    fn a_paper_ticket_s_status_is_its_row_s_then_its_game_s_and_reads_back_as_text() {
        let mut row = printed_paper();
        assert_eq!(PaperStatus::of(&row), PaperStatus::Printed);
        row.status = TicketStatus::Sold;
        assert_eq!(PaperStatus::of(&row), PaperStatus::Sold);
        // Its play code opened it: in play before its first action too.
        row.game = Some(Game::new(row.prizes));
        assert_eq!(PaperStatus::of(&row), PaperStatus::InPlay);
        assert_eq!(PaperStatus::of(&finished_paper(|p| p > 0)), PaperStatus::Won);
        assert_eq!(PaperStatus::of(&finished_paper(|p| p == 0)), PaperStatus::Lost);
        let mut paid = finished_paper(|p| p > 0);
        paid.status = TicketStatus::Paid;
        assert_eq!(PaperStatus::of(&paid), PaperStatus::Paid);
        // The text of the answers and of the database, byte for byte.
        let texts: Vec<&str> = PaperStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(texts, ["printed", "sold", "in_play", "won", "lost", "paid"]);
        for status in PaperStatus::ALL {
            assert_eq!(PaperStatus::parse(status.as_str()), Some(status));
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
        for status in TicketStatus::ALL {
            assert_eq!(TicketStatus::parse(status.as_str()), Some(status));
        }
        let texts: Vec<&str> = TicketStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(texts, ["unsold", "printed", "sold", "paid"]);
        assert_eq!((PaperStatus::parse("unsold"), TicketStatus::parse("won")), (None, None));
        assert_eq!(TicketStatus::first(Channel::Online), TicketStatus::Unsold);
        assert_eq!(TicketStatus::first(Channel::Paper), TicketStatus::Printed);
    }

    #[test]
    fn art_8_2_a_shop_pays_up_to_its_ceiling_and_the_payment_centre_above_it() {
        assert_eq!(payer(499_999, CEILING), Payer::Shop);
        assert_eq!(payer(CEILING, CEILING), Payer::Shop, "the ceiling itself is the shop's to pay");
        assert_eq!(payer(CEILING + 1, CEILING), Payer::PaymentCentre);
        // In the counter's answer: `shop` or `operator`.
        assert_eq!(serde_json::to_value(Payer::Shop).unwrap(), "shop");
        assert_eq!(serde_json::to_value(Payer::PaymentCentre).unwrap(), "operator");
        // The counter: validate says who pays a winner, and pay refuses above the ceiling.
        let won = finished_paper(|p| p >= 1000);
        let prize = won.game.as_ref().unwrap().result().unwrap().prize_cents as i64;
        assert_eq!(retail_answer(&won, NOW, prize).pay_at, Some(Payer::Shop));
        assert_eq!(retail_answer(&won, NOW, prize - 1).pay_at, Some(Payer::PaymentCentre));
        assert!(retail_answer(&won, NOW, prize - 1).message.contains("Ne le payez pas"));
        let e = pay("A", 9, false, prize - 1, Some(won.clone()), NOW).unwrap_err();
        assert_eq!((e.status(), e.reason()), (403, Some("above_ceiling")));
        assert!(matches!(pay("A", 9, false, prize, Some(won.clone()), NOW), Ok(Decision::Apply(_))));
        // A ticket not won: nobody pays.
        assert_eq!(retail_answer(&finished_paper(|p| p == 0), NOW, CEILING).pay_at, None);
        // The holder is sent where the prize is paid: the seller, any shop, or the payment centre.
        let view = won.sold().unwrap().ticket.view();
        let ceilings = |cents| PayoutCeilings { default_cents: cents, shops: Default::default() };
        let at = |any_shop, cents| claim(&view, any_shop, &ceilings(cents), 30, NOW).unwrap().pay_at;
        assert_eq!(at(false, prize).as_deref(), Some("seller"));
        assert_eq!(at(true, prize).as_deref(), Some("any_shop"));
        assert_eq!(at(false, prize - 1).as_deref(), Some("payment_centre"));
    }

    #[test]
    fn art_10_1_the_counter_says_the_deadline_passed_and_pays_nothing_after_it() {
        let mut won = finished_paper(|p| p > 0);
        won.retail.claim_until_ms = Some(NOW);
        let on_the_day = retail_answer(&won, NOW, CEILING);
        assert_eq!((on_the_day.status, on_the_day.expired), (PaperStatus::Won, false));
        let after = retail_answer(&won, NOW + 1, CEILING);
        assert_eq!((after.status, after.expired), (PaperStatus::Won, true));
        assert!(after.message.contains("le délai de paiement a expiré"), "{}", after.message);
        let answer = serde_json::to_value(&after).unwrap();
        assert_eq!((answer["expired"].clone(), answer["status"].clone()), (true.into(), "won".into()));
        let e = pay("A", 9, false, CEILING, Some(won.clone()), NOW + 1).unwrap_err();
        assert_eq!((e.status(), e.reason()), (409, Some("claim_deadline")));
        assert!(matches!(pay("A", 9, false, CEILING, Some(won.clone()), NOW), Ok(Decision::Apply(_))));
        let view = won.sold().unwrap().ticket.view();
        let ceilings = PayoutCeilings { default_cents: CEILING, shops: Default::default() };
        let holder = claim(&view, false, &ceilings, 30, NOW + 1).unwrap();
        assert_eq!((holder.expired, holder.pay_at), (true, None));
        // An answer stored before `expired` existed reads as not expired.
        let mut old = serde_json::to_value(&on_the_day).unwrap();
        old.as_object_mut().unwrap().remove("expired");
        assert!(!serde_json::from_value::<RetailAnswer>(old).unwrap().expired);
    }

    #[test]
    fn a_report_day_is_a_real_calendar_day() {
        assert_eq!(parse_day("2026-12-05").unwrap(), (2026, 12, 5));
        assert_eq!(parse_day("2028-02-29").unwrap(), (2028, 2, 29));
        for bad in [
            "2026-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-04-31",
            "2026-12-00",
            "2026-1-05",
            "26-12-05",
            "2026/12/05",
            "+026-12-05",
            "2026-12-0x",
            "",
        ] {
            assert!(matches!(parse_day(bad), Err(AppError::BadRequest(_))), "{bad}");
        }
    }

    #[test]
    fn the_net_is_sales_minus_prizes_paid_in_cents() {
        let payment = |serial: &str, cents| ShopPayment { serial: serial.into(), prize_cents: cents, paid_ms: 1 };
        let report = ShopReport::new(
            "A",
            (2026, 12, 5),
            CountAmount { count: 3, amount_cents: 900 },
            vec![payment("x", 2_000), payment("y", 500)],
        );
        assert_eq!(report.paid, CountAmount { count: 2, amount_cents: 2_500 });
        assert_eq!(report.net_cents, -1_600, "the operator owes the shop");
        assert_eq!((report.day.as_str(), report.time_zone.as_str()), ("2026-12-05", "Europe/Paris"));
    }
}
