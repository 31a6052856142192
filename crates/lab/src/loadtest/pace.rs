//! When a player sends its requests: as soon as it can, or on a fixed
//! schedule whose latency counts from the slot.

use std::time::{Duration, Instant};

/// When a player sends its requests: as soon as it can, or on a fixed schedule.
pub(super) struct Pace {
    pub(super) interval: Option<Duration>,
    pub(super) next: Instant,
}

/// tokio's timer works in whole milliseconds and fires after its deadline:
/// `crates/cli/examples/timer_lateness.rs` measured `sleep_until` waking 0.2 to 2.1
/// ms late (median 1.1 to 1.2 ms), so a sleep until the slot itself sent
/// every paced request that much late and charged it to the server. A
/// player wakes this much before its slot.
pub(super) const TIMER_SLACK: Duration = Duration::from_millis(2);

impl Pace {
    /// Waits for the next slot and returns the instant latency counts from:
    /// the slot, or the moment the request goes out if that is earlier. A
    /// player still waiting for its previous answer when its slot comes
    /// sends at once, and the wait counts (no coordinated omission); one
    /// that is early sleeps until [`TIMER_SLACK`] before the slot and sends
    /// when it wakes, so that the timer's lateness is not counted.
    /// Latency is never measured from later than the request was sent.
    pub(super) async fn slot(&mut self) -> Instant {
        let Some(interval) = self.interval else { return Instant::now() };
        let at = self.next;
        self.next += interval;
        if let Some(wake) = at.checked_sub(TIMER_SLACK) {
            tokio::time::sleep_until(wake.into()).await;
        }
        at.min(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::{Pace, TIMER_SLACK};
    use std::time::{Duration, Instant};

    /// A paced request is measured from its slot, or from when it went out
    /// if that is earlier: a late player is charged from the slot (no
    /// coordinated omission), an early one is not charged the timer's tick.
    #[tokio::test]
    async fn a_paced_request_counts_from_its_slot_or_its_earlier_sending() {
        let interval = Duration::from_millis(5);
        let first = Instant::now() + Duration::from_millis(3);
        let mut pace = Pace { interval: Some(interval), next: first };
        let mut before_the_slot = 0;
        for k in 0..20u32 {
            let at = first + interval * k;
            let start = pace.slot().await;
            let sent = Instant::now();
            assert!(start <= at && start <= sent, "slot {k}: counted from later than the slot or the sending");
            assert!(start + TIMER_SLACK >= at, "slot {k}: sent earlier than the timer's slack before its slot");
            before_the_slot += usize::from(start < at);
        }
        // The timer fires after its deadline: sleeping until the slot itself
        // would never send before it.
        assert!(before_the_slot > 0, "no request went out before its slot");
        // Behind schedule (the previous answer came late): counted from the slot.
        let late = Instant::now() - Duration::from_millis(40);
        let mut pace = Pace { interval: Some(interval), next: late };
        assert_eq!(pace.slot().await, late);
        assert_eq!(pace.slot().await, late + interval);
    }
}
