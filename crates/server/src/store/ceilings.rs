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

use super::{Store, now_ms};
use crate::metrics::Metrics;
use domain::error::AppError;
use domain::limits::{self, CEILINGS, Ceiling, Ceilings};
use domain::usecase;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use usecase::Admission;

/// A store's ceilings, when each is full until, and where refusals are counted.
pub(super) struct CeilingState {
    ceilings: Ceilings,
    /// Unix ms until which each ceiling of [`CEILINGS`] is known full (0: not known).
    full_until: [AtomicI64; CEILINGS.len()],
    metrics: Arc<Metrics>,
}

impl CeilingState {
    pub(super) fn new(ceilings: Ceilings, metrics: Arc<Metrics>) -> CeilingState {
        CeilingState { ceilings, full_until: Default::default(), metrics }
    }

    fn slot(name: &str) -> usize {
        CEILINGS.iter().position(|c| *c == name).expect("a ceiling of CEILINGS")
    }

    /// The refusal of a request under `ceiling` while it is known full.
    fn known_full(&self, ceiling: &Ceiling, now: i64) -> Option<AppError> {
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
    fn refused(&self, e: &AppError, now: i64) {
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

impl Store {
    /// The server's ceilings.
    pub fn ceilings(&self) -> Ceilings {
        self.ceilings.ceilings
    }

    /// Admits an attempt past the limits on guessing and the ceilings
    /// (logins, registrations, demo games), counting it, or refuses it:
    /// 429 past a network's limit, 503 past a ceiling.
    pub async fn admit(&self, admissions: Vec<Admission>) -> Result<(), AppError> {
        let now = now_ms();
        for c in admissions.iter().filter_map(Admission::ceiling) {
            if let Some(refusal) = self.ceilings.known_full(c, now) {
                self.ceilings.metrics.ceiling_refused.with_label_values(&[c.name]).inc();
                return Err(refusal);
            }
        }
        let rows = self.ceilings.ceilings.limit_counters;
        let done = self.write(domain::Op::Admit(usecase::Admit { admissions, rows })).await;
        if let Err(e) = &done {
            self.ceilings.refused(e, now);
        }
        done.map(|_| ())
    }

    /// Counts a refusal if it is a ceiling's (a redemption's).
    pub(super) fn ceiling_refused(&self, e: &AppError) {
        self.ceilings.refused(e, now_ms());
    }

    /// Sets the gauges of the ceilings' use from their counters (once a
    /// minute, with the counters' expiry: three rows read).
    pub(super) async fn ceilings_gauges(&self) -> Result<(), AppError> {
        let now = now_ms();
        for c in self.ceilings.ceilings.all() {
            let counter = self.counter(&c.bucket()).await?;
            self.ceilings.metrics.ceiling_use.with_label_values(&[c.name]).set(c.use_ratio(&counter, now));
        }
        Ok(())
    }
}
