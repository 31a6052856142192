//! The chaos switch: what the network and a flaky operator do to the wallet
//! calls, on purpose, so that the game server's exactly-once machinery is
//! exercised (docs/operator-integration.md, and the chaos run of `as-capone reliability wallet-chaos` in RELIABILITY.md).
//!
//! Each wallet call (balance, debit, credit, rollback; the transaction
//! export is left alone so that reconciliation reads the truth) draws its
//! fate from one seeded random stream:
//! - a **delay** of `delay_ms[0]..=delay_ms[1]` with probability `delay_rate`;
//! - an **error** (500 or 503, half each) with probability `error_rate`,
//!   answered *without* applying anything;
//! - a **drop** with probability `drop_rate`: the call is applied and
//!   committed, then its answer is lost (the connection is closed without a
//!   response, or, `drop_mode = "hang"`, held `hang_ms` then closed);
//! - a **duplicate** with probability `duplicate_rate`: the verified request
//!   is processed twice at once, as a duplicate delivery would be (the copy
//!   skips the nonce check, as a retry with a fresh nonce would pass it);
//! - a **skew** of `skew_ms` on the clock that checks requests and signs
//!   answers (always, when not 0).
//!
//! Probabilities are fractions in [0, 1] (not money: floats are fine).

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// How a dropped answer is lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum DropMode {
    /// Close the connection without a response.
    #[default]
    Close,
    /// Hold the connection `hang_ms`, past the client's timeout, then close it.
    Hang,
}

/// The chaos switch's settings (flags at start, `PUT /admin/chaos` live).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChaosConfig {
    /// The delay's range in ms, both ends included.
    pub delay_ms: [u64; 2],
    /// Probability of a delay.
    pub delay_rate: f64,
    /// Probability of a 500/503 answer without applying.
    pub error_rate: f64,
    /// Probability of an applied call whose answer is lost.
    pub drop_rate: f64,
    /// How an answer is lost.
    pub drop_mode: DropMode,
    /// How long a hung connection is held (drop_mode = hang), in ms.
    pub hang_ms: u64,
    /// Probability of a call processed twice concurrently.
    pub duplicate_rate: f64,
    /// Offset of the clock that checks requests and signs answers, in ms.
    pub skew_ms: i64,
    /// The random stream's seed; none: drawn from the operating system.
    pub seed: Option<u64>,
}

impl Default for ChaosConfig {
    fn default() -> Self {
        ChaosConfig {
            delay_ms: [0, 0],
            delay_rate: 0.0,
            error_rate: 0.0,
            drop_rate: 0.0,
            drop_mode: DropMode::Close,
            hang_ms: 10_000,
            duplicate_rate: 0.0,
            skew_ms: 0,
            seed: None,
        }
    }
}

impl ChaosConfig {
    /// Checks the ranges; a sentence when one is wrong.
    pub fn validate(&self) -> Result<(), String> {
        for (name, p) in [
            ("delay_rate", self.delay_rate),
            ("error_rate", self.error_rate),
            ("drop_rate", self.drop_rate),
            ("duplicate_rate", self.duplicate_rate),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{name} is a probability between 0 and 1, not {p}"));
            }
        }
        if self.delay_ms[0] > self.delay_ms[1] {
            return Err("delay_ms is [min, max] with min <= max".into());
        }
        if self.delay_ms[1] > 600_000 || self.hang_ms > 600_000 {
            return Err("delays and hangs are at most 600000 ms".into());
        }
        Ok(())
    }

    /// Whether any chaos is on.
    pub fn active(&self) -> bool {
        self.delay_rate > 0.0
            || self.error_rate > 0.0
            || self.drop_rate > 0.0
            || self.duplicate_rate > 0.0
            || self.skew_ms != 0
    }
}

/// What chaos did, since the start.
#[derive(Debug, Default)]
pub struct Counters {
    calls: AtomicU64,
    delayed: AtomicU64,
    errors_500: AtomicU64,
    errors_503: AtomicU64,
    dropped: AtomicU64,
    duplicated: AtomicU64,
    skewed: AtomicU64,
}

/// A snapshot of [`Counters`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountersView {
    /// Wallet calls that went through the switch.
    pub calls: u64,
    /// Calls delayed.
    pub delayed: u64,
    /// Calls answered 500 without applying.
    pub errors_500: u64,
    /// Calls answered 503 without applying.
    pub errors_503: u64,
    /// Calls applied whose answer was lost.
    pub dropped: u64,
    /// Calls processed twice.
    pub duplicated: u64,
    /// Calls checked and answered with a skewed clock.
    pub skewed: u64,
}

/// The fate of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Plan {
    /// Wait this long first.
    pub delay_ms: Option<u64>,
    /// Answer this 5xx without applying.
    pub error: Option<u16>,
    /// Apply, then lose the answer.
    pub drop: Option<DropMode>,
    /// Process twice concurrently.
    pub duplicate: bool,
    /// The clock's offset.
    pub skew_ms: i64,
}

/// The switch: settings, the random stream and the counters.
#[derive(Debug)]
pub struct Chaos {
    config: Mutex<(ChaosConfig, ChaCha8Rng)>,
    counters: Counters,
}

fn rng_for(seed: Option<u64>) -> ChaCha8Rng {
    match seed {
        Some(s) => ChaCha8Rng::seed_from_u64(s),
        None => ChaCha8Rng::from_os_rng(),
    }
}

/// A uniform fraction in [0, 1).
fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

impl Chaos {
    /// A switch with these settings (validated by the caller).
    pub fn new(config: ChaosConfig) -> Chaos {
        let rng = rng_for(config.seed);
        Chaos { config: Mutex::new((config, rng)), counters: Counters::default() }
    }

    /// The current settings.
    pub fn config(&self) -> ChaosConfig {
        self.config.lock().expect("chaos").0.clone()
    }

    /// Replaces the settings (and restarts the random stream from the seed).
    pub fn set(&self, config: ChaosConfig) -> Result<(), String> {
        config.validate()?;
        let rng = rng_for(config.seed);
        *self.config.lock().expect("chaos") = (config, rng);
        Ok(())
    }

    /// The fate of the next call, counted.
    pub fn plan(&self) -> Plan {
        let mut guard = self.config.lock().expect("chaos");
        let (config, rng) = &mut *guard;
        let c = &self.counters;
        c.calls.fetch_add(1, Ordering::Relaxed);
        let mut plan = Plan { skew_ms: config.skew_ms, ..Plan::default() };
        if !config.active() {
            return plan;
        }
        // Every draw is made, whatever the outcome, so that the stream stays
        // aligned with the calls for a given seed.
        let (d, d_len, e, e_kind, x, dup) =
            (unit(rng), rng.next_u64(), unit(rng), rng.next_u64() & 1, unit(rng), unit(rng));
        if d < config.delay_rate {
            let [lo, hi] = config.delay_ms;
            plan.delay_ms = Some(lo + d_len % (hi - lo + 1));
            c.delayed.fetch_add(1, Ordering::Relaxed);
        }
        if e < config.error_rate {
            let status = if e_kind == 0 { 500 } else { 503 };
            plan.error = Some(status);
            if status == 500 { &c.errors_500 } else { &c.errors_503 }.fetch_add(1, Ordering::Relaxed);
            // An error applies nothing: no drop, no duplicate.
        } else {
            if x < config.drop_rate {
                plan.drop = Some(config.drop_mode);
            }
            plan.duplicate = dup < config.duplicate_rate;
        }
        if config.skew_ms != 0 {
            c.skewed.fetch_add(1, Ordering::Relaxed);
        }
        plan
    }

    /// Counts a dropped answer (once it is really dropped: after the commit).
    pub fn count_drop(&self) {
        self.counters.dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a duplicate processing (once it really ran).
    pub fn count_duplicate(&self) {
        self.counters.duplicated.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn counters(&self) -> CountersView {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        CountersView {
            calls: get(&c.calls),
            delayed: get(&c.delayed),
            errors_500: get(&c.errors_500),
            errors_503: get(&c.errors_503),
            dropped: get(&c.dropped),
            duplicated: get(&c.duplicated),
            skewed: get(&c.skewed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_the_same_fates_and_rates_are_followed() {
        let config = ChaosConfig {
            delay_ms: [5, 9],
            delay_rate: 0.5,
            error_rate: 0.2,
            drop_rate: 0.3,
            duplicate_rate: 0.25,
            seed: Some(7),
            ..ChaosConfig::default()
        };
        let a = Chaos::new(config.clone());
        let b = Chaos::new(config);
        let plans: Vec<Plan> = (0..4000).map(|_| a.plan()).collect();
        assert_eq!(plans, (0..4000).map(|_| b.plan()).collect::<Vec<_>>());
        let count = |f: &dyn Fn(&Plan) -> bool| plans.iter().filter(|p| f(p)).count();
        let delayed = count(&|p| p.delay_ms.is_some());
        assert!((1800..2200).contains(&delayed), "{delayed}");
        assert!(plans.iter().filter_map(|p| p.delay_ms).all(|d| (5..=9).contains(&d)));
        let errors = count(&|p| p.error.is_some());
        assert!((650..950).contains(&errors), "{errors}");
        assert!(count(&|p| p.error == Some(500)) > 200 && count(&|p| p.error == Some(503)) > 200);
        assert_eq!(count(&|p| p.error.is_some() && (p.drop.is_some() || p.duplicate)), 0);
        let drops = count(&|p| p.drop.is_some());
        assert!((800..1100).contains(&drops), "{drops}");
        assert_eq!(a.counters().calls, 4000);
        assert_eq!(a.counters().delayed as usize, delayed);
        assert!(ChaosConfig { error_rate: 1.5, ..ChaosConfig::default() }.validate().is_err());
        assert!(ChaosConfig { delay_ms: [9, 5], ..ChaosConfig::default() }.validate().is_err());
    }
}
