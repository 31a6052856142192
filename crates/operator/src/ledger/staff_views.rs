//! What the operator's staff sees: a player, the ledger's summary.

use serde::Serialize;

/// A player as the operator's staff sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlayerView {
    /// The operator's reference.
    pub player: String,
    /// The balance, in cents.
    pub balance_cents: i64,
    /// Stakes allowed over a rolling week, in cents; none: no limit.
    pub weekly_limit_cents: Option<i64>,
    /// Blocked players cannot stake (their prizes are still credited).
    pub blocked: bool,
    /// Stakes (applied debits not rolled back) over the last 7 days.
    pub stakes_this_week_cents: i64,
}

/// Counts and sums of one kind of transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KindTotals {
    /// Transactions applied (status 200).
    pub count: i64,
    /// Cents they moved.
    pub moved_cents: i64,
}

/// The whole ledger at a glance, with its consistency checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Players known.
    pub players: i64,
    /// Sum of the players' balances, in cents.
    pub balances_cents: i64,
    /// The house's account (stakes taken minus prizes paid and deposits made), in cents.
    pub house_cents: i64,
    /// Sum of all entries: 0 in a balanced ledger.
    pub entries_sum_cents: i64,
    /// Every player's balance equals the sum of its entries.
    pub balances_match_entries: bool,
    /// `entries_sum_cents == 0 && balances_match_entries`.
    pub balanced: bool,
    /// Applied debits.
    pub debit: KindTotals,
    /// Applied credits.
    pub credit: KindTotals,
    /// Rollbacks answered 200 (including no-ops and tombstones).
    pub rollback: KindTotals,
    /// Debits later rolled back.
    pub debits_rolled_back: i64,
    /// Rollbacks of a debit never seen.
    pub tombstones: i64,
    /// Debits refused (402) and stored.
    pub debits_refused: i64,
}
