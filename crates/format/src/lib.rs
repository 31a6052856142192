//! # as-capone-format: money and dates for people, written once
//!
//! Every crate that shows an amount or a date to a person formats it here:
//! the print files of an emission (`emission::print`), the shop's and the
//! player's messages (the server), the command line. Amounts are integer
//! cents; dates are Unix milliseconds, always shown in UTC.
//!
//! | function | example | used by |
//! |---|---|---|
//! | [`euros`] | `1 500,00 €` | the counter's and the player's messages |
//! | [`euros_short`], [`euros_short_unsigned`] | `3 €`, `2,50 €` | printed tickets |
//! | [`euros_plain`] | `3.00 €` | the command line |
//! | [`euros_plain_approx`] | `123.46 €` | the command line's estimates |
//! | [`iso8601`] | `2026-12-03T08:43:11.716Z` | reports, logs, the API |
//! | [`french_date`] | `03/12/2026 08:43 UTC` | the counter |
//!
//! The French styles group thousands with a no-break space (U+00A0) and put
//! one before the euro sign, so that an amount never breaks across lines.
//!
//! The calendar those dates are counted in is [`calendar`]: civil dates
//! from days and back, weekdays, `YYYY-MM-DD`, and Paris civil time (the
//! shops' day, a statement's periods, a claim deadline's day).

/// Public as a namespace, where the house's modules are private: its names
/// say what they are under its name (`calendar::parse_day`,
/// `calendar::is_sunday`, `calendar::DAY_MS`), the calendar's one home, with
/// no re-export at the root.
pub mod calendar;

pub use calendar::iso8601;

/// The euro digits grouped by three with no-break spaces: `1500` -> `1 500`.
fn grouped(units: u64) -> String {
    let digits = units.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 * 2);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{a0}');
        }
        out.push(ch);
    }
    out
}

fn sign(cents: i64) -> &'static str {
    if cents < 0 { "-" } else { "" }
}

/// French style, cents always shown: `150000` -> `1 500,00 €`.
pub fn euros(cents: i64) -> String {
    let c = cents.unsigned_abs();
    format!("{}{},{:02}\u{a0}€", sign(cents), grouped(c / 100), c % 100)
}

/// French style, whole euros without cents: `300` -> `3 €`,
/// `1000000` -> `10 000 €`, `250` -> `2,50 €` (a printed ticket).
pub fn euros_short(cents: i64) -> String {
    short(sign(cents), cents.unsigned_abs())
}

/// [`euros_short`] of an unsigned amount: a prize table's amounts are
/// unsigned 64-bit cents, past `i64::MAX` for a table read from JSON.
pub fn euros_short_unsigned(cents: u64) -> String {
    short("", cents)
}

fn short(sign: &str, c: u64) -> String {
    match c % 100 {
        0 => format!("{sign}{}\u{a0}€", grouped(c / 100)),
        r => format!("{sign}{},{r:02}\u{a0}€", grouped(c / 100)),
    }
}

/// Plain style for a terminal: `300` -> `3.00 €` (no grouping).
pub fn euros_plain(cents: i64) -> String {
    let c = cents.unsigned_abs();
    format!("{}{}.{:02} €", sign(cents), c / 100, c % 100)
}

/// Plain style for an amount that is an estimate, not a sum of cents (an
/// expectation, a deviation, a percentile): `12345.678` -> `123.46 €`.
pub fn euros_plain_approx(cents: f64) -> String {
    format!("{:.2} €", cents / 100.0)
}

/// A date for the counter, to the minute: `03/12/2026 09:56 UTC`.
pub fn french_date(ms: i64) -> String {
    let iso = iso8601(ms);
    format!("{}/{}/{} {} UTC", &iso[8..10], &iso[5..7], &iso[0..4], &iso[11..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn euros_in_french_style_with_cents() {
        assert_eq!(euros(150_000), "1\u{a0}500,00\u{a0}€");
        assert_eq!(euros(300), "3,00\u{a0}€");
        assert_eq!(euros(5), "0,05\u{a0}€");
        assert_eq!(euros(-300), "-3,00\u{a0}€");
    }

    #[test]
    fn euros_short_drops_whole_cents() {
        assert_eq!(euros_short(300), "3\u{a0}€");
        assert_eq!(euros_short(1_000_000), "10\u{a0}000\u{a0}€");
        assert_eq!(euros_short(250), "2,50\u{a0}€");
        assert_eq!(euros_short(100_000_000), "1\u{a0}000\u{a0}000\u{a0}€");
        assert_eq!(euros_short(-250), "-2,50\u{a0}€");
        assert_eq!(euros_short_unsigned(250), "2,50\u{a0}€");
        assert_eq!(euros_short_unsigned(u64::MAX), "184\u{a0}467\u{a0}440\u{a0}737\u{a0}095\u{a0}516,15\u{a0}€");
    }

    #[test]
    fn euros_plain_for_a_terminal() {
        assert_eq!(euros_plain(300), "3.00 €");
        assert_eq!(euros_plain(1_000_000), "10000.00 €");
        assert_eq!(euros_plain(7), "0.07 €");
        assert_eq!(euros_plain_approx(12_345.678), "123.46 €");
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_796_287_391_716), "2026-12-03T08:43:11.716Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(french_date(1_796_287_391_716), "03/12/2026 08:43 UTC");
    }
}
