//! An attempt admitted or refused by the limits on guessing (logins,
//! registrations, demo games), counted when admitted.

use super::unit::{Outcome, Unit, apply};
use crate::changes::{Changes, CounterWrite, Effect};
use crate::error::AppError;
use crate::limits::{self, Ceiling, Counter};

/// The limits an attempt must pass; `rows`: the ceiling on the limits'
/// counters opened.
#[derive(Debug, Clone)]
pub struct Admit {
    pub admissions: Vec<Admission>,
    pub rows: Option<Ceiling>,
}

/// One limit an attempt must pass ([`Admit`]).
#[derive(Debug, Clone)]
pub enum Admission {
    /// At most `limit` attempts per window from one client network (0: no
    /// limit), and under `ceiling` from everyone.
    Network { bucket: String, limit: u32, window_ms: i64, what: &'static str, ceiling: Option<Ceiling> },
    /// A password check of one account, counted in the account's bucket
    /// or a known device's ([`limits::login_admit`]).
    Account { bucket: String },
}

impl Admission {
    /// The counter it counts in (none: a network without a limit).
    fn bucket(&self) -> Option<&str> {
        match self {
            Admission::Network { limit: 0, .. } => None,
            Admission::Network { bucket, .. } | Admission::Account { bucket, .. } => Some(bucket),
        }
    }

    /// The global ceiling it is under, if any.
    pub fn ceiling(&self) -> Option<&Ceiling> {
        match self {
            Admission::Network { ceiling, .. } => ceiling.as_ref(),
            Admission::Account { .. } => None,
        }
    }

    fn decide(&self, counter: &Counter, now: i64) -> Result<Option<CounterWrite>, AppError> {
        match self {
            Admission::Network { bucket, limit, window_ms, what, .. } => {
                limits::attempt(bucket, counter, *limit, *window_ms, what, now)
            }
            Admission::Account { bucket } => limits::login_admit(bucket, counter, now),
        }
    }
}

impl Admit {
    /// Admits an attempt past its limits, counting it, or refuses it: each
    /// client's counter (locked) first, then the global ceilings in their
    /// order ([`limits::CEILINGS`]), last `rows`, the ceiling on the
    /// counters' windows opened (the rows anonymous clients add to
    /// `limit_counters`), which only an attempt that opens one reads.
    /// Refused: nothing counted.
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let mut changes = Changes::none(Effect::Counted);
        let mut opened = 0;
        for a in &self.admissions {
            let Some(bucket) = a.bucket() else { continue };
            let counter = unit.counter(bucket, true).await?;
            if let Some(write) = a.decide(&counter, now)? {
                opened += i64::from(counter.count_at(now, write.window_ms) == 0);
                changes.counters.push(write);
            }
        }
        let mut ceilings: Vec<&Ceiling> = self.admissions.iter().filter_map(Admission::ceiling).collect();
        ceilings.sort_by_key(|c| limits::CEILINGS.iter().position(|n| *n == c.name));
        for c in ceilings {
            let counter = unit.counter(&c.bucket(), true).await?;
            changes.counters.extend(c.admit(&counter, 1, now)?);
        }
        if let Some(rows) = self.rows.as_ref().filter(|_| opened > 0) {
            let counter = unit.counter(&rows.bucket(), true).await?;
            changes.counters.extend(rows.admit(&counter, opened, now)?);
        }
        if changes.counters.is_empty() { Ok(Outcome::Replayed(String::new())) } else { apply(unit, changes).await }
    }
}
