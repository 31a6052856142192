//! The claim deadline of every paper prize, written once: its day, its
//! last instant, whether it has passed, and the closing notice's date it
//! is counted from. Pure functions like [`crate::retail`]'s; the calendar
//! is [`format::calendar`]'s.
//!
//! The instant games' general rules (FDJ's regulation of instant games,
//! art. 10.1) end the right to a prize 30 days after the date in the
//! emission's closing notice, moved to the next working day when it falls
//! on a Sunday or a public holiday. [`claim_deadline`] computes it for a
//! configured number of days (`claim_days`, 30 by default); [`claim_end_ms`]
//! is its last instant, Paris civil time; [`deadline_passed`] says whether
//! a prize can still be paid, for the counter, the holder, the payment
//! centre and the desk alike.
//!
//! The public holidays are the French ones of the Code du travail, art.
//! L3133-1 (1 January, Easter Monday, 1 May, 8 May, Ascension, Whit Monday,
//! 14 July, 15 August, 1 November, 11 November, 25 December); Easter is
//! computed by the Gregorian computus (the anonymous algorithm published by
//! Meeus), written here because it is short and checked against known
//! dates below. Alsace-Moselle's two extra days are not counted.

use crate::changes::Close;
use crate::error::AppError;
use format::calendar::{Day, civil_from_days, day_text, days_from_civil, is_sunday, paris_day, paris_day_bounds};

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
/// prize is paid while `now <= claim_end_ms` ([`deadline_passed`]).
pub fn claim_end_ms(deadline: Day) -> i64 {
    paris_day_bounds(deadline).1 - 1
}

/// Whether the claim deadline has passed at `now`: its last instant
/// (`claim_until_ms`, [`claim_end_ms`]) is behind. No deadline (the
/// emission's sale is not closed): it has not.
pub fn deadline_passed(claim_until_ms: Option<i64>, now: i64) -> bool {
    claim_until_ms.is_some_and(|until| now > until)
}

/// The date of an emission's closing notice: the one the operator gave
/// (`given`), else today in Paris; never before the day the emission was
/// created (`created_ms`), nor more than a year after today (400).
pub fn closing_notice_day(given: Option<Day>, created_ms: i64, now: i64) -> Result<Day, AppError> {
    let notice = given.unwrap_or_else(|| paris_day(now));
    let created = paris_day(created_ms);
    let day = days_from_civil(notice);
    if day < days_from_civil(created) || day > days_from_civil(paris_day(now)) + 366 {
        return Err(AppError::BadRequest(format!(
            "closing_notice_date {} must be from the emission's creation day ({}) to a year from today",
            day_text(notice),
            day_text(created)
        )));
    }
    Ok(notice)
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
    }

    #[test]
    fn art_10_1_the_deadline_is_thirty_days_after_the_notice_then_the_next_working_day() {
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
    fn art_10_1_a_prize_is_paid_until_the_last_instant_of_the_deadline_s_day_and_never_after() {
        let until = claim_end_ms((2026, 12, 2));
        assert!(!deadline_passed(Some(until), until - 1));
        assert!(!deadline_passed(Some(until), until), "its last millisecond still pays");
        assert!(deadline_passed(Some(until), until + 1));
        // An emission still on sale has no deadline yet.
        assert!(!deadline_passed(None, i64::MAX));
    }

    #[test]
    fn a_closing_notice_is_dated_from_the_emission_s_creation_day_to_a_year_from_today() {
        let created = paris_day_bounds((2026, 11, 2)).0 + 15 * 3_600_000;
        let now = paris_day_bounds((2026, 12, 5)).0 + 10 * 3_600_000;
        // None given: today in Paris.
        assert_eq!(closing_notice_day(None, created, now).unwrap(), (2026, 12, 5));
        // The creation day itself, a past day after it, a day ahead: accepted.
        for day in [(2026, 11, 2), (2026, 11, 20), (2027, 12, 6)] {
            assert_eq!(closing_notice_day(Some(day), created, now).unwrap(), day);
        }
        // Before the creation day, or more than 366 days ahead: 400, said with both days.
        let e = closing_notice_day(Some((2026, 11, 1)), created, now).unwrap_err();
        assert_eq!(
            (e.status(), e.to_string()),
            (
                400,
                "closing_notice_date 2026-11-01 must be from the emission's creation day (2026-11-02) to a year \
                 from today"
                    .to_string()
            )
        );
        assert_eq!(closing_notice_day(Some((2027, 12, 7)), created, now).unwrap_err().code(), "bad_request");
        // The days are Paris days: 23:30 UTC on 1 November is already the 2nd in Paris.
        let late = paris_day_bounds((2026, 11, 2)).0 + 30 * 60_000;
        assert_eq!(paris_day(late), (2026, 11, 2));
        assert!(closing_notice_day(Some((2026, 11, 2)), late, now).is_ok());
    }
}
