//! The decisions of the retail channel: a paper ticket's sale, its
//! redemption by a player, and the shop's validation and payment. Pure
//! functions like [`crate::online`]'s; the words for the counter (amounts
//! and dates) are written by the `format` crate.

use crate::changes::{AuditRecord, Changes, Decision, Effect, GameWrite, Movement, Reason, RetailWrite};

use crate::api::Channel;
use crate::error::AppError;
use crate::rows::{AccountId, PaperRow, PlayerId, ShopAnswer};
use engine::Game;
// The civil calendar's arithmetic is the format crate's, written once.
use format::{civil_from_days, days_from_civil};
use serde_json::json;

/// The serial as the shop typed it, checked: any case, with or without dashes.
pub fn parse_serial(typed: &str) -> Result<String, AppError> {
    emission::Serial::parse(typed).map(|s| s.to_string()).map_err(|e| {
        AppError::BadRequest(format!("{e}: check the serial, as printed on the ticket (e.g. ASC-001-00001-000042-81)"))
    })
}

/// What the shop's screen says of a paper ticket (validate, and the
/// answers of sell and pay): its status and the words for the counter.
/// `ceiling`: the payout ceiling of the shop asking (cents): a larger prize
/// is paid by the operator's payment centre (`pay_at`).
pub fn retail_answer(row: &PaperRow, now: i64, ceiling: i64) -> RetailAnswer {
    let game = row.game.as_ref();
    let result = game.and_then(|g| g.result());
    let prize = result.map_or(0, |r| r.prize_cents as i64);
    let r = &row.retail;
    let (status, message) = match row.status.as_str() {
        "printed" => ("printed", "Pas encore vendu : vendez-le avant que le joueur ne le joue.".to_string()),
        "paid" => (
            "paid",
            format!(
                "Déjà payé ({}) le {} par {}.",
                format::euros(prize),
                format::french_date(r.paid_ms.unwrap_or(0)),
                // No shop paid it: the operator's payment centre did (a claim).
                r.paid_by.as_deref().unwrap_or(PAYMENT_CENTRE_FR)
            ),
        ),
        // The play code opened it (its game exists): in play from then on,
        // before its first action too.
        _ => match (game, result) {
            (None, _) => ("sold", "Vendu, pas encore joué : le joueur joue le duel en ligne avec son code.".into()),
            (Some(_), None) => {
                ("in_play", "Partie en cours : le joueur doit la terminer en ligne avant tout paiement.".into())
            }
            (Some(_), Some(_)) if prize == 0 => ("lost", "Perdant : rien à payer.".into()),
            (Some(_), Some(_)) => match r.claim_until_ms {
                Some(until) if now > until => (
                    "won",
                    format!(
                        "Gagnant ({}), mais le délai de paiement a expiré le {}.",
                        format::euros(prize),
                        format::french_date(until)
                    ),
                ),
                _ if prize > ceiling => (
                    "won",
                    format!(
                        "Gagnant ({}), au-delà du plafond de paiement de ce point de vente ({}) : \
                         le gagnant est payé par {}, sur présentation du ticket{}. Ne le payez pas.",
                        format::euros(prize),
                        format::euros(ceiling),
                        PAYMENT_CENTRE_FR,
                        r.claim_until_ms.map(|u| format!(", jusqu'au {}", format::french_date(u))).unwrap_or_default()
                    ),
                ),
                _ => ("won", format!("Gagnant : {} à payer.", format::euros(prize))),
            },
        },
    };
    let pay_at = (status == "won").then(|| if prize > ceiling { "operator" } else { "shop" }.to_string());
    RetailAnswer {
        serial: row.serial.clone(),
        status: status.to_string(),
        prize_cents: prize,
        message,
        sold_by: r.sold_by.clone(),
        paid_ms: r.paid_ms,
        paid_by: r.paid_by.clone(),
        claim_until_ms: r.claim_until_ms,
        pay_at,
    }
}

/// What the counter says of `row` once paid at `now` by `paid_by` (a shop;
/// `None`: the operator's payment centre).
pub(super) fn paid_answer(row: &PaperRow, now: i64, ceiling: i64, paid_by: Option<String>) -> RetailAnswer {
    let mut after = row.clone();
    after.status = "paid".into();
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
    let expired = retail.claim_until_ms.is_some_and(|u| now > u);
    let paid = retail.paid_ms.is_some();
    let ceiling = match (&retail.sold_by, any_shop) {
        (Some(shop), false) => ceilings.of(shop),
        _ => ceilings.lowest(),
    };
    let pay_at = match () {
        _ if prize == 0 || paid || expired => None,
        _ if prize > ceiling => Some("payment_centre"),
        _ if any_shop => Some("any_shop"),
        _ => Some("seller"),
    };
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
    if row.status != "printed" {
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
    after.status = "sold".into();
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
    let said = retail_answer(&row, now, ceiling);
    match said.status.as_str() {
        "won" => {}
        "paid" => {
            if let Some(replay) = replay_for(row.pay_answer.as_ref(), shop) {
                return Ok(replay);
            }
            return Err(AppError::Conflict(format!("ticket {} is already paid: {}", row.serial, said.message)).because(
                "already_paid",
                crate::params! { "paid_ms": said.paid_ms, "paid_by": said.paid_by, "prize_cents": said.prize_cents },
            ));
        }
        other => {
            let reason = match other {
                "printed" => "not_sold_yet",
                "sold" => "not_played",
                "in_play" => "in_play",
                _ => "lost",
            };
            return Err(AppError::Conflict(format!("ticket {} cannot be paid: {}", row.serial, said.message))
                .because(reason, crate::params! {}));
        }
    }
    if let Some(until) = row.retail.claim_until_ms.filter(|u| now > *u) {
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
    if said.prize_cents > ceiling {
        return Err(AppError::Forbidden(format!(
            "ticket {}'s prize ({}) is above this shop's payout ceiling ({}): the holder is paid by the operator's \
             payment centre, not at the counter",
            row.serial,
            format::euros(said.prize_cents),
            format::euros(ceiling)
        ))
        .because("above_ceiling", crate::params! { "prize_cents": said.prize_cents, "ceiling_cents": ceiling }));
    }
    let mut answer = paid_answer(&row, now, ceiling, Some(shop.to_string()));
    answer.message = format!("Payez {} au joueur.", format::euros(said.prize_cents));
    Ok(Decision::Apply(Box::new(Changes {
        retail: Some(RetailWrite::Pay { ticket_id: row.id, shop: shop.to_string(), paid_ms: now }),
        movement: Some(Movement::retail(Reason::Prize, row.id, shop_account, said.prize_cents, now)),
        audit: Some(AuditRecord {
            created_ms: now,
            kind: "ticket_paid",
            data_json: json!({"serial": row.serial, "shop": shop, "prize_cents": said.prize_cents}).to_string(),
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
    if row.status == "printed" {
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
    #[schema(pattern = "^(printed|sold|in_play|won|lost|paid)$")]
    pub status: String,
    pub prize_cents: i64,
    /// What to do, in words, for the counter.
    pub message: String,
    pub sold_by: Option<String>,
    pub paid_ms: Option<i64>,
    pub paid_by: Option<String>,
    pub claim_until_ms: Option<i64>,
    /// A won ticket: `shop` (this shop pays it) or `operator` (its prize is
    /// above this shop's payout ceiling: the operator's payment centre pays it).
    #[schema(pattern = "^(shop|operator)$")]
    pub pay_at: Option<String>,
}

/// The shops' figures are counted by the shop's own calendar day: French
/// civil time, `Europe/Paris` (CET, UTC+1, and CEST, UTC+2, from the last
/// Sunday of March to the last Sunday of October, changing at 01:00 UTC, EU
/// rule since 1996). Written here rather than with a time-zone database: the
/// rule is the law's (directive 2000/84/EC), and a day's bounds are what a
/// shop's report needs of it.
pub const SHOP_TIME_ZONE: &str = "Europe/Paris";

/// A calendar day, `(year, month, day)`.
pub type Day = (i64, u32, u32);

/// Unix ms of 01:00 UTC on the last Sunday of `month` of `year`: when
/// summer time begins (March) or ends (October) in the EU.
fn last_sunday_1h_utc(year: i64, month: u32) -> i64 {
    let last = days_from_civil((year, month, 31));
    // 1970-01-01 was a Thursday: (days + 4) mod 7 is 0 on a Sunday.
    let sunday = last - (last + 4).rem_euclid(7);
    sunday * 86_400_000 + 3_600_000
}

/// The offset of Paris's civil time from UTC at instant `ms`, in ms.
pub fn paris_offset_ms(ms: i64) -> i64 {
    let (year, _, _) = civil_from_days(ms.div_euclid(86_400_000));
    let summer = last_sunday_1h_utc(year, 3) <= ms && ms < last_sunday_1h_utc(year, 10);
    if summer { 7_200_000 } else { 3_600_000 }
}

/// The Paris calendar day at instant `ms`.
pub fn paris_day(ms: i64) -> Day {
    civil_from_days((ms + paris_offset_ms(ms)).div_euclid(86_400_000))
}

/// The instants `[from, to)` (unix ms) of Paris calendar day `day`: its
/// midnight to the next (23, 24 or 25 hours). A midnight is never in a
/// change hour (02:00 to 03:00 local), so the offset an hour before that
/// midnight's UTC guess is its offset.
pub fn paris_day_bounds(day: Day) -> (i64, i64) {
    let midnight = |days: i64| {
        let utc = days * 86_400_000;
        utc - paris_offset_ms(utc - 7_200_000)
    };
    let days = days_from_civil(day);
    (midnight(days), midnight(days + 1))
}

/// `YYYY-MM-DD`, a day that exists (400 otherwise).
pub fn parse_day(text: &str) -> Result<Day, AppError> {
    let bad =
        || AppError::BadRequest(format!("day {text:?} is not a calendar day: write it YYYY-MM-DD, e.g. 2026-12-05"));
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| text[r].parse::<u32>().map_err(|_| bad());
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !text.bytes().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit()) || !(1..=12).contains(&m) {
        return Err(bad());
    }
    let day = (i64::from(y), m, d);
    // A day past its month's end comes back as another date.
    if d == 0 || civil_from_days(days_from_civil(day)) != day {
        return Err(bad());
    }
    Ok(day)
}

/// A day as `YYYY-MM-DD`.
pub fn day_text((y, m, d): Day) -> String {
    format!("{y:04}-{m:02}-{d:02}")
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
            status: "printed".into(),
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
        let Ok(Decision::Apply(c)) = sell("A", 9, CEILING, Some(printed_paper()), NOW) else { panic!("sold") };
        let mut after = printed_paper();
        after.status = "sold".into();
        after.retail.sold_by = Some("A".into());
        after.sell_answer = Some(ShopAnswer { shop: "A".into(), answer_json: c.answer.clone() });
        // Later (an emission closed since, a retry typed otherwise): the same bytes.
        after.sale_end_ms = Some(NOW);
        match sell("A", 9, CEILING, Some(after.clone()), NOW + 1000) {
            Ok(Decision::Replay(a)) => assert_eq!(a, c.answer),
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
        paid.status = "paid".into();
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
    #[test]
    fn a_shops_day_is_paris_civil_time_with_its_summer_time() {
        // Winter (CET, UTC+1): 2026-12-05 runs from 2026-12-04T23:00Z, 24 h.
        let (from, to) = paris_day_bounds((2026, 12, 5));
        assert_eq!(format::iso8601(from), "2026-12-04T23:00:00.000Z");
        assert_eq!(to - from, 24 * 3_600_000);
        // Summer (CEST, UTC+2).
        let (from, _) = paris_day_bounds((2026, 7, 14));
        assert_eq!(format::iso8601(from), "2026-07-13T22:00:00.000Z");
        // The change days: 23 h on 2026-03-29, 25 h on 2026-10-25.
        let (from, to) = paris_day_bounds((2026, 3, 29));
        assert_eq!((format::iso8601(from).as_str(), to - from), ("2026-03-28T23:00:00.000Z", 23 * 3_600_000));
        let (from, to) = paris_day_bounds((2026, 10, 25));
        assert_eq!((format::iso8601(from).as_str(), to - from), ("2026-10-24T22:00:00.000Z", 25 * 3_600_000));
        // An instant's day: 23:30 UTC on 4 December is 00:30 on the 5th in Paris.
        let (from, _) = paris_day_bounds((2026, 12, 5));
        assert_eq!(paris_day(from + 30 * 60_000), (2026, 12, 5));
        assert_eq!(paris_day(from - 1), (2026, 12, 4));
        // Every day of four years: the bounds meet, and each day holds its own instants.
        let mut day = (2025, 1, 1);
        for _ in 0..1461 {
            let (from, to) = paris_day_bounds(day);
            assert_eq!((paris_day(from), paris_day(to - 1)), (day, day), "{day:?}");
            let next = civil_from_days(days_from_civil(day) + 1);
            assert_eq!(paris_day_bounds(next).0, to);
            day = next;
        }
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
        let pay = |serial: &str, cents| ShopPayment { serial: serial.into(), prize_cents: cents, paid_ms: 1 };
        let r = ShopReport::new(
            "A",
            (2026, 12, 5),
            CountAmount { count: 3, amount_cents: 900 },
            vec![pay("x", 2_000), pay("y", 500)],
        );
        assert_eq!(r.paid, CountAmount { count: 2, amount_cents: 2_500 });
        assert_eq!(r.net_cents, -1_600, "the operator owes the shop");
        assert_eq!((r.day.as_str(), r.time_zone.as_str()), ("2026-12-05", "Europe/Paris"));
    }
}
