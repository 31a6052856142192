//! The player's statement: what they staked and won per Paris day, week
//! and month.

/// One of the player's money movements for their statement: `ticket_sale`
/// (a stake, negative) or `prize` (a win, positive), in cents, at `ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlayMovement {
    pub stake: bool,
    pub amount_cents: i64,
    pub ms: i64,
}

/// How many days, weeks and months a statement shows.
pub const STATEMENT_DAYS: usize = 7;
pub const STATEMENT_WEEKS: usize = 4;
pub const STATEMENT_MONTHS: usize = 3;

/// The start of the oldest period a statement shows at `now`: the first
/// day of the month [`STATEMENT_MONTHS`] − 1 months back, or the Monday
/// [`STATEMENT_WEEKS`] − 1 weeks back, whichever is earlier (Paris time).
pub fn statement_from(now: i64) -> i64 {
    let periods = statement_periods(now);
    periods.iter().map(|p| p.0).min().unwrap_or(now)
}

/// `(from, to, kind, label)` of every period of a statement at `now`, newest
/// first in each kind: Paris calendar days, ISO weeks (Monday to Sunday)
/// and calendar months; `label` is the day (`2026-12-05`), the week's
/// Monday, or the month (`2026-12`).
fn statement_periods(now: i64) -> Vec<(i64, i64, &'static str, String)> {
    use format::calendar::{civil_from_days, day_text, days_from_civil, monday_of, paris_day, paris_day_bounds};
    let today = days_from_civil(paris_day(now));
    let bounds = |from_days: i64, to_days: i64| {
        (paris_day_bounds(civil_from_days(from_days)).0, paris_day_bounds(civil_from_days(to_days)).0)
    };
    let label = |days: i64| day_text(civil_from_days(days));
    let mut out = Vec::new();
    for k in 0..STATEMENT_DAYS as i64 {
        let (from, to) = bounds(today - k, today - k + 1);
        out.push((from, to, "day", label(today - k)));
    }
    let monday = monday_of(today);
    for k in 0..STATEMENT_WEEKS as i64 {
        let start = monday - 7 * k;
        let (from, to) = bounds(start, start + 7);
        out.push((from, to, "week", label(start)));
    }
    let (mut y, mut m, _) = civil_from_days(today);
    for _ in 0..STATEMENT_MONTHS {
        let start = days_from_civil((y, m, 1));
        let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
        let (from, to) = bounds(start, days_from_civil((ny, nm, 1)));
        out.push((from, to, "month", format!("{y:04}-{m:02}")));
        (y, m) = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
    }
    out
}

/// The player's statement ("bilan de jeu"): stakes, winnings and net
/// result per day, week and month (Paris time), and since `since` when
/// given (the reminder of time played), from their money movements.
pub fn statement(movements: &[PlayMovement], since: Option<i64>, now: i64) -> crate::api::StatementView {
    use crate::api::{StatementPeriod, StatementView};
    let sum = |from: i64, to: i64| {
        let (mut stakes, mut winnings) = (0, 0);
        for m in movements.iter().filter(|m| m.ms >= from && m.ms < to) {
            if m.stake {
                stakes += -m.amount_cents;
            } else {
                winnings += m.amount_cents;
            }
        }
        (stakes, winnings)
    };
    let period = |from: i64, to: i64, label: String| {
        let (stakes_cents, winnings_cents) = sum(from, to);
        StatementPeriod {
            label,
            from_ms: from,
            to_ms: to,
            stakes_cents,
            winnings_cents,
            net_cents: winnings_cents - stakes_cents,
        }
    };
    let mut view = StatementView { days: vec![], weeks: vec![], months: vec![], since: None };
    for (from, to, kind, label) in statement_periods(now) {
        let p = period(from, to, label);
        match kind {
            "day" => view.days.push(p),
            "week" => view.weeks.push(p),
            _ => view.months.push(p),
        }
    }
    view.since = since.map(|s| period(s, now + 1, String::new()));
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_sums_stakes_and_winnings_per_paris_day_week_and_month() {
        use format::calendar::paris_day_bounds;
        // Saturday 5 December 2026, 21:00 in Paris (20:00 UTC).
        let (today, _) = paris_day_bounds((2026, 12, 5));
        let now = today + 21 * 3_600_000;
        let stake = |ms| PlayMovement { stake: true, amount_cents: -300, ms };
        let win = |ms, c| PlayMovement { stake: false, amount_cents: c, ms };
        let (nov30, _) = paris_day_bounds((2026, 11, 30));
        let (oct31, _) = paris_day_bounds((2026, 10, 31));
        let moves = [
            stake(today + 1),           // today, 00:00:00.001 Paris
            win(today + 60_000, 1_000), // today
            stake(today - 1),           // yesterday, 23:59:59.999 Paris
            stake(nov30 + 3_600_000),   // Monday of this week, in November
            stake(oct31 + 3_600_000),   // October: in no day nor week shown, in the third month
        ];
        let v = statement(&moves, Some(today), now);
        assert_eq!((v.days.len(), v.weeks.len(), v.months.len()), (7, 4, 3));
        assert_eq!(v.days[0].label, "2026-12-05");
        assert_eq!((v.days[0].stakes_cents, v.days[0].winnings_cents, v.days[0].net_cents), (300, 1_000, 700));
        assert_eq!((v.days[1].label.as_str(), v.days[1].stakes_cents), ("2026-12-04", 300));
        assert_eq!(v.weeks[0].label, "2026-11-30");
        assert_eq!((v.weeks[0].stakes_cents, v.weeks[0].winnings_cents), (900, 1_000));
        assert_eq!((v.months[0].label.as_str(), v.months[0].stakes_cents), ("2026-12", 600));
        assert_eq!((v.months[1].label.as_str(), v.months[1].stakes_cents), ("2026-11", 300));
        assert_eq!((v.months[2].label.as_str(), v.months[2].stakes_cents), ("2026-10", 300));
        let since = v.since.unwrap();
        assert_eq!((since.stakes_cents, since.winnings_cents, since.net_cents), (300, 1_000, 700));
        // The oldest period read is October's first day.
        assert_eq!(statement_from(now), paris_day_bounds((2026, 10, 1)).0);
    }
}
