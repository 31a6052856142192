//! What a player counted, and the run's totals.

use super::operator_mode::Purchase;

#[derive(Default)]
pub(super) struct Tally {
    pub(super) action_us: Vec<u32>,
    /// Latencies of the actions sent inside the steady window.
    pub(super) steady_action_us: Vec<u32>,
    pub(super) purchase_us: Vec<u32>,
    /// Operator mode: each purchase's serial, start and latency.
    pub(super) purchases_seen: Vec<Purchase>,
    /// The prizes won, in cents, and a ticket's price as answered.
    pub(super) won_cents: i64,
    pub(super) price_cents: Option<i64>,
    /// With `--timeline`: each action's window (from the run's start),
    /// latency, and the load generator's own lateness in sending it.
    pub(super) timeline: Vec<(u32, u32, u32)>,
    pub(super) actions: u64,
    pub(super) purchases: u64,
    pub(super) players: u64,
    pub(super) finished: u64,
    pub(super) won: u64,
    pub(super) errors: u64,
    pub(super) first_error: Option<String>,
}

impl Tally {
    pub(super) fn error(&mut self, e: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(e);
        }
    }
    pub(super) fn merge(&mut self, o: Tally) {
        self.action_us.extend(o.action_us);
        self.steady_action_us.extend(o.steady_action_us);
        self.purchase_us.extend(o.purchase_us);
        self.purchases_seen.extend(o.purchases_seen);
        self.won_cents += o.won_cents;
        self.price_cents = self.price_cents.or(o.price_cents);
        self.timeline.extend(o.timeline);
        self.actions += o.actions;
        self.purchases += o.purchases;
        self.players += o.players;
        self.finished += o.finished;
        self.won += o.won;
        self.errors += o.errors;
        if self.first_error.is_none() {
            self.first_error = o.first_error;
        }
    }
}
