//! The global ceilings in the store (docs/limits.md "Ceilings",
//! [`domain::limits::Ceiling`]): what anonymous clients can make the
//! server keep (demo games, players, the limits' own counters) is counted
//! from everyone in the database, and refused with 503 past a ceiling.
//!
//! Once a ceiling refused, this process remembers until when (its
//! window's end): the requests that would pass it are refused at once,
//! without a unit of work, so that a flood past the ceiling costs the
//! database nothing and the honest players' requests keep their pace. The
//! ceiling on the counters' windows is not remembered: it refuses only the
//! networks without a window, which only the database knows.

use crate::metrics::Metrics;
use domain::error::AppError;
use domain::limits::{self, CEILINGS, Ceiling, Ceilings};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// A store's ceilings, when each is full until, and where refusals are counted.
pub(super) struct CeilingState {
    pub(super) ceilings: Ceilings,
    /// Unix ms until which each ceiling of [`CEILINGS`] is known full (0: not known).
    full_until: [AtomicI64; CEILINGS.len()],
    pub(super) metrics: Arc<Metrics>,
}

impl CeilingState {
    pub(super) fn new(ceilings: Ceilings, metrics: Arc<Metrics>) -> CeilingState {
        CeilingState { ceilings, full_until: Default::default(), metrics }
    }

    fn slot(name: &str) -> usize {
        CEILINGS.iter().position(|c| *c == name).expect("a ceiling of CEILINGS")
    }

    /// The refusal of a request under `ceiling` while it is known full.
    pub(super) fn known_full(&self, ceiling: &Ceiling, now: i64) -> Option<AppError> {
        let until = self.full_until[Self::slot(ceiling.name)].load(Ordering::Relaxed);
        (until > now).then(|| {
            let retry_after_s = limits::seconds_until(until, now);
            AppError::Busy {
                message: format!(
                    "the server takes no more {} for now (at most {} an hour from everyone): try again in {retry_after_s} s",
                    ceiling.name.replace('_', " "),
                    ceiling.limit
                ),
                retry_after_s,
            }
            .with(domain::params! { "ceiling": ceiling.name })
        })
    }

    /// Counts a refusal of a ceiling, and remembers it full until its window ends.
    pub(super) fn refused(&self, e: &AppError, now: i64) {
        let Some(name) = limits::ceiling_of(e) else { return };
        self.metrics.ceiling_refused.with_label_values(&[name]).inc();
        self.metrics.ceiling_use.with_label_values(&[name]).set(1.0);
        if name != limits::LIMIT_COUNTERS
            && let Some(retry_after_s) = e.retry_after_s()
        {
            let until = now + retry_after_s as i64 * 1000;
            self.full_until[Self::slot(name)].fetch_max(until, Ordering::Relaxed);
        }
    }
}
