//! Admissions past the limits on guessing and the global ceilings
//! (`ceilings.rs` says how a full ceiling is remembered), and the ceilings'
//! gauges.

use super::clock::now_ms;
use super::shell::Store;
use domain::error::AppError;
use domain::limits::Ceilings;
use domain::usecase;
use usecase::Admission;

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
