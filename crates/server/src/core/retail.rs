//! The decisions of the retail channel: a paper ticket's sale, its
//! redemption by a player, and the shop's validation and payment. Pure
//! functions like [`super::online`]'s; the words for the counter (amounts
//! and dates) are written by the `format` crate.

use super::{
    AccountId, AuditRecord, Changes, Decision, Effect, GameWrite, Movement, PaperRow, PlayerId, Reason, RetailWrite,
    ShopAnswer,
};
use crate::api::Channel;
use crate::error::AppError;
use engine::Game;
use serde_json::json;

/// The serial as the shop typed it, checked: any case, with or without dashes.
pub fn parse_serial(typed: &str) -> Result<String, AppError> {
    emission::Serial::parse(typed).map(|s| s.to_string()).map_err(|e| {
        AppError::BadRequest(format!("{e}: check the serial, as printed on the ticket (e.g. ASC-001-00001-000042-81)"))
    })
}

/// What the shop's screen says of a paper ticket (validate, and the
/// answers of sell and pay): its status and the words for the counter.
pub fn retail_answer(row: &PaperRow, now: i64) -> RetailAnswer {
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
                r.paid_by.as_deref().unwrap_or("?")
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
                _ => ("won", format!("Gagnant : {} à payer.", format::euros(prize))),
            },
        },
    };
    RetailAnswer {
        serial: row.serial.clone(),
        status: status.to_string(),
        prize_cents: prize,
        message,
        sold_by: r.sold_by.clone(),
        paid_ms: r.paid_ms,
        paid_by: r.paid_by.clone(),
        claim_until_ms: r.claim_until_ms,
    }
}

/// The answer stored for `shop`'s earlier request of the same operation,
/// if `shop` made it: its retry (its answer was lost) gets it again.
fn replay_for(stored: Option<&ShopAnswer>, shop: &str) -> Option<Decision> {
    stored.filter(|s| s.shop == shop).map(|s| Decision::Replay(s.answer_json.clone()))
}

/// A paper ticket sold by `shop`; the same shop selling it again gets the
/// answer of its sale (another shop: 409).
pub fn sell(shop: &str, shop_account: AccountId, row: Option<PaperRow>, now: i64) -> Result<Decision, AppError> {
    let row = row.ok_or_else(|| AppError::NotFound("no ticket has this serial".into()))?;
    if row.channel != Channel::Paper {
        return Err(AppError::Conflict(format!("ticket {} is sold online, not in shops", row.serial)));
    }
    if row.status != "printed" {
        if let Some(replay) = replay_for(row.sell_answer.as_ref(), shop) {
            return Ok(replay);
        }
        let sold_by = row.retail.sold_by.as_deref().unwrap_or("?");
        return Err(AppError::Conflict(format!("ticket {} is already sold (by {sold_by})", row.serial)));
    }
    if let Some(end) = row.sale_end_ms.filter(|e| *e <= now) {
        return Err(AppError::Conflict(format!(
            "the sale of ticket {}'s emission ended on {}",
            row.serial,
            format::french_date(end)
        )));
    }
    let mut after = row.clone();
    after.status = "sold".into();
    after.retail.sold_by = Some(shop.to_string());
    let mut answer = retail_answer(&after, now);
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
pub fn pay(
    shop: &str,
    shop_account: AccountId,
    any_shop: bool,
    row: Option<PaperRow>,
    now: i64,
) -> Result<Decision, AppError> {
    let row = row.ok_or_else(|| AppError::NotFound("no ticket has this serial".into()))?;
    if row.channel != Channel::Paper {
        return Err(AppError::Conflict(format!(
            "ticket {} was sold online: its prize went to the player's account",
            row.serial
        )));
    }
    let said = retail_answer(&row, now);
    match said.status.as_str() {
        "won" => {}
        "paid" => {
            if let Some(replay) = replay_for(row.pay_answer.as_ref(), shop) {
                return Ok(replay);
            }
            return Err(AppError::Conflict(format!("ticket {} is already paid: {}", row.serial, said.message)));
        }
        _ => return Err(AppError::Conflict(format!("ticket {} cannot be paid: {}", row.serial, said.message))),
    }
    if let Some(until) = row.retail.claim_until_ms.filter(|u| now > *u) {
        return Err(AppError::Conflict(format!(
            "the claim deadline of ticket {} passed on {}",
            row.serial,
            format::french_date(until)
        )));
    }
    let sold_by = row.retail.sold_by.clone().unwrap_or_default();
    if sold_by != shop && !any_shop {
        return Err(AppError::Forbidden(format!("ticket {} was sold by {sold_by}: it is paid there", row.serial)));
    }
    let mut after = row.clone();
    after.status = "paid".into();
    after.retail.paid_ms = Some(now);
    after.retail.paid_by = Some(shop.to_string());
    let mut answer = retail_answer(&after, now);
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
    let row = row.ok_or_else(|| AppError::NotFound("no ticket has this play code: check it on the ticket".into()))?;
    if row.channel != Channel::Paper {
        return Err(AppError::Conflict(
            "this code is an online ticket's: it is played from its owner's account".into(),
        ));
    }
    if row.status == "printed" {
        return Err(AppError::Conflict(
            "this ticket is not sold yet: ask the shop to sell it (scan it at the counter), then open it".into(),
        ));
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
        game: first.then(|| GameWrite { row: ticket.clone(), from_seq: None, finished_ms: None }),
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::PrizeSchedule;

    const NOW: i64 = 1_700_000_000_000;

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
        }
    }

    #[test]
    fn a_shop_selling_again_gets_its_stored_answer_and_another_shop_a_refusal() {
        let Ok(Decision::Apply(c)) = sell("A", 9, Some(printed_paper()), NOW) else { panic!("sold") };
        let mut after = printed_paper();
        after.status = "sold".into();
        after.retail.sold_by = Some("A".into());
        after.sell_answer = Some(ShopAnswer { shop: "A".into(), answer_json: c.answer.clone() });
        // Later (an emission closed since, a retry typed otherwise): the same bytes.
        after.sale_end_ms = Some(NOW);
        match sell("A", 9, Some(after.clone()), NOW + 1000) {
            Ok(Decision::Replay(a)) => assert_eq!(a, c.answer),
            other => panic!("{other:?}"),
        }
        assert!(matches!(sell("B", 8, Some(after.clone()), NOW), Err(AppError::Conflict(_))));
        // Another operation of the same shop: refused as before (not finished).
        assert!(matches!(pay("A", 9, false, Some(after.clone()), NOW), Err(AppError::Conflict(_))));
        // Sold before answers were stored: refused as before.
        after.sell_answer = None;
        assert!(matches!(sell("A", 9, Some(after), NOW), Err(AppError::Conflict(_))));
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
        match pay("B", 8, true, Some(paid.clone()), NOW + 2) {
            Ok(Decision::Replay(a)) => assert_eq!(a, "{\"paid\":1}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(pay("A", 9, true, Some(paid.clone()), NOW), Err(AppError::Conflict(_))));
        assert!(matches!(sell("B", 8, Some(paid), NOW), Err(AppError::Conflict(_))));
    }
}
