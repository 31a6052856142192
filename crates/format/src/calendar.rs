//! The calendar, written once: civil dates from a count of days and back
//! (proleptic Gregorian, Howard Hinnant's algorithms), the day of the
//! week, a day written and read as `YYYY-MM-DD`, and Paris civil time.
//!
//! The shops' figures, a player's statement and a claim deadline are
//! counted by the French civil calendar, `Europe/Paris`: CET (UTC+1), and
//! CEST (UTC+2) from the last Sunday of March to the last Sunday of
//! October, changing at 01:00 UTC (the EU rule since 1996, directive
//! 2000/84/EC). It is written here rather than read from a time-zone
//! database: the rule is the law's, and a day's bounds are what the game
//! needs of it.

/// A calendar day, `(year, month, day)`.
pub type Day = (i64, u32, u32);

/// Milliseconds in a day of 24 hours (a day of UTC; a Paris day has 23, 24
/// or 25 hours: [`paris_day_bounds`]).
pub const DAY_MS: i64 = 86_400_000;

/// The time zone of the French civil calendar.
pub const PARIS_TIME_ZONE: &str = "Europe/Paris";

/// The civil date (year, month, day) of a count of days since 1970-01-01,
/// proleptic Gregorian (Howard Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> Day {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's
/// `days_from_civil`), the inverse of [`civil_from_days`]. A day past its
/// month's end counts on into the next month (see [`is_calendar_day`]).
pub fn days_from_civil((y, m, d): Day) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Whether `day` exists: a month from 1 to 12, a day from 1 to its month's
/// last (29 February in leap years only).
pub fn is_calendar_day(day: Day) -> bool {
    let (_, month, d) = day;
    (1..=12).contains(&month) && d >= 1 && civil_from_days(days_from_civil(day)) == day
}

/// The day of the week of a count of days since 1970-01-01, ISO 8601's
/// numbering: 1 for Monday to 7 for Sunday (1970-01-01 was a Thursday, 4).
pub fn iso_weekday(days: i64) -> u32 {
    (days + 3).rem_euclid(7) as u32 + 1
}

/// Whether `day` is a Sunday.
pub fn is_sunday(day: Day) -> bool {
    iso_weekday(days_from_civil(day)) == 7
}

/// The Monday that begins the ISO week of `days` (days since 1970-01-01).
pub fn monday_of(days: i64) -> i64 {
    days - i64::from(iso_weekday(days) - 1)
}

/// The last Sunday of `month` of `year`, in days since 1970-01-01.
pub fn last_sunday(year: i64, month: u32) -> i64 {
    let next_month = if month == 12 { (year + 1, 1, 1) } else { (year, month + 1, 1) };
    let last = days_from_civil(next_month) - 1;
    last - i64::from(iso_weekday(last) % 7)
}

/// A day as `YYYY-MM-DD`.
pub fn day_text((y, m, d): Day) -> String {
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DD` read as a day that exists; anything else is `None`.
pub fn parse_day(text: &str) -> Option<Day> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    if !b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit()) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| text[r].parse::<u32>().ok();
    let day = (i64::from(num(0..4)?), num(5..7)?, num(8..10)?);
    is_calendar_day(day).then_some(day)
}

/// Unix ms of 01:00 UTC on the last Sunday of `month` of `year`: when
/// summer time begins (March) or ends (October) in the EU.
fn summer_time_change_ms(year: i64, month: u32) -> i64 {
    last_sunday(year, month) * DAY_MS + 3_600_000
}

/// The offset of Paris's civil time from UTC at instant `ms` (unix ms), in ms.
pub fn paris_offset_ms(ms: i64) -> i64 {
    let (year, _, _) = civil_from_days(ms.div_euclid(DAY_MS));
    let summer = summer_time_change_ms(year, 3) <= ms && ms < summer_time_change_ms(year, 10);
    if summer { 7_200_000 } else { 3_600_000 }
}

/// The Paris calendar day at instant `ms` (unix ms).
pub fn paris_day(ms: i64) -> Day {
    civil_from_days((ms + paris_offset_ms(ms)).div_euclid(DAY_MS))
}

/// The instants `[from, to)` (unix ms) of Paris calendar day `day`: its
/// midnight to the next (23, 24 or 25 hours). A midnight is never in a
/// change hour (02:00 to 03:00 local), so the offset an hour before that
/// midnight's UTC guess is its offset.
pub fn paris_day_bounds(day: Day) -> (i64, i64) {
    let midnight = |days: i64| {
        let utc = days * DAY_MS;
        utc - paris_offset_ms(utc - 7_200_000)
    };
    let days = days_from_civil(day);
    (midnight(days), midnight(days + 1))
}

/// Unix milliseconds as UTC ISO 8601 (`2026-12-03T08:40:16.936Z`), by
/// Howard Hinnant's days-to-civil algorithm.
pub fn iso8601(ms: i64) -> String {
    let (days, in_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (year, month, day) = civil_from_days(days);
    let (h, m, s, milli) = (in_day / 3_600_000, in_day / 60_000 % 60, in_day / 1000 % 60, in_day % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_civil_dates_are_inverses() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil((2000, 2, 29)), 11_016);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        for days in -800_000..800_000 {
            assert_eq!(days_from_civil(civil_from_days(days)), days);
        }
    }

    #[test]
    fn a_calendar_day_exists_and_reads_as_yyyy_mm_dd() {
        assert_eq!(parse_day("2026-12-05"), Some((2026, 12, 5)));
        assert_eq!(parse_day("2028-02-29"), Some((2028, 2, 29)));
        assert_eq!(day_text((2026, 1, 5)), "2026-01-05");
        for bad in [
            "2026-02-29",
            "1900-02-29",
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
            assert_eq!(parse_day(bad), None, "{bad}");
        }
        assert!(is_calendar_day((2000, 2, 29)) && !is_calendar_day((2100, 2, 29)));
    }

    #[test]
    fn weekdays_count_from_a_thursday_in_1970() {
        assert_eq!(iso_weekday(0), 4, "1970-01-01 was a Thursday");
        assert_eq!(iso_weekday(days_from_civil((2026, 12, 6))), 7, "a Sunday");
        assert_eq!(iso_weekday(days_from_civil((2026, 12, 7))), 1, "a Monday");
        assert_eq!(iso_weekday(-1), 3, "1969-12-31 was a Wednesday");
        assert!(is_sunday((2026, 12, 6)) && !is_sunday((2026, 12, 5)));
        assert_eq!(civil_from_days(monday_of(days_from_civil((2026, 12, 6)))), (2026, 11, 30));
        assert_eq!(civil_from_days(monday_of(days_from_civil((2026, 11, 30)))), (2026, 11, 30));
        assert_eq!(civil_from_days(last_sunday(2026, 3)), (2026, 3, 29));
        assert_eq!(civil_from_days(last_sunday(2026, 10)), (2026, 10, 25));
        assert_eq!(civil_from_days(last_sunday(2027, 2)), (2027, 2, 28));
        assert_eq!(civil_from_days(last_sunday(2026, 12)), (2026, 12, 27));
    }

    #[test]
    fn a_paris_day_is_civil_time_with_its_summer_time() {
        // Winter (CET, UTC+1): 2026-12-05 runs from 2026-12-04T23:00Z, 24 h.
        let (from, to) = paris_day_bounds((2026, 12, 5));
        assert_eq!(iso8601(from), "2026-12-04T23:00:00.000Z");
        assert_eq!(to - from, 24 * 3_600_000);
        // Summer (CEST, UTC+2).
        let (from, _) = paris_day_bounds((2026, 7, 14));
        assert_eq!(iso8601(from), "2026-07-13T22:00:00.000Z");
        // The change days: 23 h on 2026-03-29, 25 h on 2026-10-25.
        let (from, to) = paris_day_bounds((2026, 3, 29));
        assert_eq!((iso8601(from).as_str(), to - from), ("2026-03-28T23:00:00.000Z", 23 * 3_600_000));
        let (from, to) = paris_day_bounds((2026, 10, 25));
        assert_eq!((iso8601(from).as_str(), to - from), ("2026-10-24T22:00:00.000Z", 25 * 3_600_000));
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
}
