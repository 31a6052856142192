//! Claims: the prizes a shop may not pay. Pure functions like
//! [`crate::retail`]'s.
//!
//! A shop pays prizes up to its payout ceiling (FDJ's regulation of instant
//! games, art. 8.2: larger prizes are paid by the operator's payment
//! centres; who pays is [`crate::retail::payer`]); [`operator_pay`] records
//! the payment centre's payment of a larger one, once, before the claim
//! deadline ([`crate::deadline`]).

use crate::api::Channel;
use crate::changes::{AuditRecord, Changes, Decision, Effect, Movement, Reason, RetailWrite};
use crate::error::AppError;
use crate::retail::{PAYMENT_CENTRE_FR, PaperStatus, Payer, paid_answer, payer, retail_answer};
use crate::rows::{AccountId, PaperRow};
use serde_json::json;

/// A reference the operator typed (a notice's, a payment's): trimmed, 1 to
/// 200 printable characters.
pub fn reference(what: &str, text: &str) -> Result<String, AppError> {
    let t = text.trim();
    if t.is_empty() || t.chars().count() > 200 || t.chars().any(char::is_control) {
        return Err(AppError::BadRequest(format!(
            "{what} must be 1 to 200 characters without control characters (e.g. a cheque or transfer number)"
        )));
    }
    Ok(t.to_string())
}

/// The operator's payment centre pays a won paper ticket whose prize is
/// above `ceiling` (the payout ceiling of the shop that sold it), once,
/// before the claim deadline. The same reference again gets the stored
/// answer (a retry); another reference, or a ticket already paid by a
/// shop, is refused with 409.
pub fn operator_pay(
    row: Option<PaperRow>,
    payment_reference: &str,
    ceiling: i64,
    centre: AccountId,
    now: i64,
) -> Result<Decision, AppError> {
    let row = row.ok_or_else(|| AppError::NotFound("no ticket has this serial".into()))?;
    if row.channel != Channel::Paper {
        return Err(AppError::Conflict(format!(
            "ticket {} was sold online: its prize went to the player's account",
            row.serial
        )));
    }
    if let Some(paid) = &row.claim {
        if paid.reference == payment_reference {
            return Ok(Decision::Replay(paid.answer_json.clone()));
        }
        return Err(AppError::Conflict(format!(
            "ticket {} was already paid by {PAYMENT_CENTRE_FR} (reference {})",
            row.serial, paid.reference
        )));
    }
    // What validate says of the ticket now: its status, prize and deadline.
    let validation = retail_answer(&row, now, ceiling);
    let prize = validation.prize_cents;
    if validation.status != PaperStatus::Won {
        return Err(AppError::Conflict(format!("ticket {} cannot be paid: {}", row.serial, validation.message)));
    }
    if let (true, Some(until)) = (validation.expired, validation.claim_until_ms) {
        return Err(AppError::Conflict(format!(
            "the claim deadline of ticket {} passed on {}",
            row.serial,
            format::french_date(until)
        )));
    }
    if payer(prize, ceiling) != Payer::PaymentCentre {
        return Err(AppError::Conflict(format!(
            "ticket {}'s prize ({}) is within the payout ceiling of its shop ({}): the shop pays it",
            row.serial,
            format::euros(prize),
            format::euros(ceiling)
        )));
    }
    let mut answer = paid_answer(&row, now, ceiling, None);
    answer.message = format!("Paiement de {} enregistré (référence {payment_reference}).", format::euros(prize));
    Ok(Decision::Apply(Box::new(Changes {
        retail: Some(RetailWrite::OperatorPay {
            ticket_id: row.id,
            reference: payment_reference.to_string(),
            prize_cents: prize,
            paid_ms: now,
        }),
        movement: Some(Movement::house(Reason::Prize, row.id, crate::rows::HOUSE_PRIZES, centre, prize, now)),
        audit: Some(AuditRecord {
            created_ms: now,
            kind: "claim_paid",
            data_json: json!({
                "serial": row.serial,
                "prize_cents": prize,
                "reference": payment_reference,
                "sold_by": row.retail.sold_by,
            })
            .to_string(),
        }),
        answer: serde_json::to_string(&answer).expect("an answer serializes"),
        ..Changes::none(Effect::Retail)
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_is_one_line_of_printable_text() {
        assert_eq!(reference("r", "  CHQ 0012 ").unwrap(), "CHQ 0012");
        assert!(reference("r", "   ").is_err());
        assert!(reference("r", "a\nb").is_err());
        assert!(reference("r", &"x".repeat(201)).is_err());
    }
}
