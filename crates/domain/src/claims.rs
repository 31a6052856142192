//! Claims: the prizes a shop may not pay, and the deadline of every paper
//! prize. Pure functions like [`crate::retail`]'s.
//!
//! - **The claim deadline.** The instant games' general rules (FDJ's
//!   regulation of instant games, art. 10.1) end the right to a prize 30
//!   days after the date in the emission's closing notice, moved to the
//!   next working day when it falls on a Sunday or a public holiday.
//!   [`claim_deadline`] computes it for a configured number of days
//!   (`claim_days`, 30 by default); [`claim_end_ms`] is its last instant,
//!   Paris civil time.
//! - **The payout ceiling.** A shop pays prizes up to its ceiling (FDJ's
//!   art. 8.2: larger prizes are paid by the operator's payment centres);
//!   [`operator_pay`] records the payment centre's payment of a larger one,
//!   once.
//!
//! The public holidays are the French ones of the Code du travail, art.
//! L3133-1 (1 January, Easter Monday, 1 May, 8 May, Ascension, Whit Monday,
//! 14 July, 15 August, 1 November, 11 November, 25 December); Easter is
//! computed by the Gregorian computus (the anonymous algorithm published by
//! Meeus), written here because it is short and checked against known
//! dates below. Alsace-Moselle's two extra days are not counted.

use crate::api::Channel;
use crate::changes::Close;
use crate::changes::{AuditRecord, Changes, Decision, Effect, Movement, Reason, RetailWrite};
use crate::error::AppError;
use crate::retail::{Day, PAYMENT_CENTRE_FR, day_text, paid_answer, paris_day_bounds, retail_answer};
use crate::rows::{AccountId, PaperRow};
use format::{civil_from_days, days_from_civil};
use serde_json::json;

/// Easter Sunday of `year` (Gregorian calendar).
pub fn easter(year: i64) -> Day {
    let a = year % 19;
    let (b, c) = (year / 100, year % 100);
    let (d, e) = (b / 4, b % 4);
    let f = (b + 8) / 25;
    let g = (b - f + 1) / 3;
    let h = (19 * a + b - d - g + 15) % 30;
    let (i, k) = (c / 4, c % 4);
    let l = (32 + 2 * e + 2 * i - h - k) % 7;
    let m = (a + 11 * h + 22 * l) / 451;
    let month = (h + l - 7 * m + 114) / 31;
    let day = (h + l - 7 * m + 114) % 31 + 1;
    (year, month as u32, day as u32)
}

/// Whether `day` is a French public holiday (Code du travail, art. L3133-1).
pub fn is_public_holiday(day: Day) -> bool {
    let (year, month, d) = day;
    let fixed = matches!((month, d), (1, 1) | (5, 1) | (5, 8) | (7, 14) | (8, 15) | (11, 1) | (11, 11) | (12, 25));
    let after_easter = days_from_civil(day) - days_from_civil(easter(year));
    // Easter Monday, Ascension (Thursday 39 days after), Whit Monday.
    fixed || matches!(after_easter, 1 | 39 | 50)
}

/// Whether `day` is a Sunday.
pub fn is_sunday(day: Day) -> bool {
    // 1970-01-01 was a Thursday: (days + 4) mod 7 is 0 on a Sunday.
    (days_from_civil(day) + 4).rem_euclid(7) == 0
}

/// The last day a paper prize is paid: `days` after the closing notice's
/// date, moved to the next day that is neither a Sunday nor a holiday.
pub fn claim_deadline(notice: Day, days: u32) -> Day {
    let mut n = days_from_civil(notice) + i64::from(days);
    while is_sunday(civil_from_days(n)) || is_public_holiday(civil_from_days(n)) {
        n += 1;
    }
    civil_from_days(n)
}

/// The last instant (unix ms) of the deadline's day, Paris civil time: a
/// prize is paid while `now <= claim_end_ms`.
pub fn claim_end_ms(deadline: Day) -> i64 {
    paris_day_bounds(deadline).1 - 1
}

impl Close {
    /// The close of `emission` at `now`, its notice dated `notice`, prizes
    /// claimed until `claim_days` later (then the next working day).
    pub fn new(emission: i64, now: i64, notice: Day, notice_ref: Option<String>, claim_days: u32) -> Close {
        Close {
            emission,
            sale_end_ms: now,
            notice_date: day_text(notice),
            notice_ref,
            claim_end_ms: claim_end_ms(claim_deadline(notice, claim_days)),
        }
    }
}

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
    let said = retail_answer(&row, now, ceiling);
    if said.status != "won" {
        return Err(AppError::Conflict(format!("ticket {} cannot be paid: {}", row.serial, said.message)));
    }
    if let Some(until) = row.retail.claim_until_ms.filter(|u| now > *u) {
        return Err(AppError::Conflict(format!(
            "the claim deadline of ticket {} passed on {}",
            row.serial,
            format::french_date(until)
        )));
    }
    if said.pay_at.as_deref() != Some("operator") {
        return Err(AppError::Conflict(format!(
            "ticket {}'s prize ({}) is within the payout ceiling of its shop ({}): the shop pays it",
            row.serial,
            format::euros(said.prize_cents),
            format::euros(ceiling)
        )));
    }
    let mut answer = paid_answer(&row, now, ceiling, None);
    answer.message =
        format!("Paiement de {} enregistré (référence {payment_reference}).", format::euros(said.prize_cents));
    Ok(Decision::Apply(Box::new(Changes {
        retail: Some(RetailWrite::OperatorPay {
            ticket_id: row.id,
            reference: payment_reference.to_string(),
            prize_cents: said.prize_cents,
            paid_ms: now,
        }),
        movement: Some(Movement::house(
            Reason::Prize,
            row.id,
            crate::rows::HOUSE_PRIZES,
            centre,
            said.prize_cents,
            now,
        )),
        audit: Some(AuditRecord {
            created_ms: now,
            kind: "claim_paid",
            data_json: json!({
                "serial": row.serial,
                "prize_cents": said.prize_cents,
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
    fn easter_is_the_computus_of_known_years() {
        // Dates of Easter Sunday as published (e.g. by the Bureau des longitudes).
        for (year, month, day) in [
            (2000, 4, 23),
            (2019, 4, 21),
            (2024, 3, 31),
            (2025, 4, 20),
            (2026, 4, 5),
            (2027, 3, 28),
            (2038, 4, 25),
            (2285, 3, 22),
        ] {
            assert_eq!(easter(year), (year, month, day), "{year}");
        }
    }

    #[test]
    fn the_holidays_are_the_code_du_travail_s() {
        // 2026: Easter 5 April, so Easter Monday 6 April, Ascension 14 May, Whit Monday 25 May.
        for day in [
            (2026, 1, 1),
            (2026, 4, 6),
            (2026, 5, 1),
            (2026, 5, 8),
            (2026, 5, 14),
            (2026, 5, 25),
            (2026, 7, 14),
            (2026, 8, 15),
            (2026, 11, 1),
            (2026, 11, 11),
            (2026, 12, 25),
        ] {
            assert!(is_public_holiday(day), "{day:?}");
        }
        for day in [(2026, 4, 5), (2026, 4, 7), (2026, 5, 15), (2026, 12, 26), (2026, 12, 24)] {
            assert!(!is_public_holiday(day), "{day:?}");
        }
        // Exactly eleven a year.
        let mut count = 0;
        for n in days_from_civil((2027, 1, 1))..days_from_civil((2028, 1, 1)) {
            count += usize::from(is_public_holiday(civil_from_days(n)));
        }
        assert_eq!(count, 11);
        assert!(is_sunday((2026, 12, 6)) && !is_sunday((2026, 12, 5)));
    }

    #[test]
    fn the_deadline_is_thirty_days_after_the_notice_then_the_next_working_day() {
        // A plain day: 30 days after 2 November 2026 is Wednesday 2 December.
        assert_eq!(claim_deadline((2026, 11, 2), 30), (2026, 12, 2));
        // A Saturday is a working day: 2027-05-15.
        assert_eq!(claim_deadline((2027, 4, 15), 30), (2027, 5, 15));
        // A Sunday: 30 days after 6 November 2026 is Sunday 6 December, moved to Monday 7.
        assert_eq!(claim_deadline((2026, 11, 6), 30), (2026, 12, 7));
        // A holiday that is a Saturday, then a Sunday: 1 May 2027, 2 May, to Monday 3 May.
        assert_eq!(claim_deadline((2027, 4, 1), 30), (2027, 5, 3));
        // Ascension 2026 (Thursday 14 May) to Friday 15.
        assert_eq!(claim_deadline((2026, 4, 14), 30), (2026, 5, 15));
        // Christmas 2027 is a Saturday, 26 a Sunday: Monday 27.
        assert_eq!(claim_deadline((2027, 11, 25), 30), (2027, 12, 27));
        // The last instant of the day, Paris time (winter: 22:59:59.999 UTC).
        assert_eq!(format::iso8601(claim_end_ms((2026, 12, 2))), "2026-12-02T22:59:59.999Z");
        let close = Close::new(3, 0, (2026, 11, 6), Some("JO 2026-11-06".into()), 30);
        assert_eq!(close.notice_date, "2026-11-06");
        assert_eq!(close.claim_end_ms, claim_end_ms((2026, 12, 7)));
    }

    #[test]
    fn a_reference_is_one_line_of_printable_text() {
        assert_eq!(reference("r", "  CHQ 0012 ").unwrap(), "CHQ 0012");
        assert!(reference("r", "   ").is_err());
        assert!(reference("r", "a\nb").is_err());
        assert!(reference("r", &"x".repeat(201)).is_err());
    }
}
