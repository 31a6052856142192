//! Latencies as the report gives them: percentiles, and the `--timeline`
//! CSV.

use serde_json::json;
use std::time::Duration;

/// The width of a `--timeline` window.
pub(super) const TIMELINE_WINDOW: Duration = Duration::from_millis(100);

/// Percentile `p` (0..=100) of sorted microseconds, in milliseconds.
pub(super) fn percentile_ms(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    f64::from(sorted[rank.clamp(1, sorted.len()) - 1]) / 1000.0
}

/// p50, p90, p99 and max of a set of latencies, in milliseconds.
pub(super) struct Latencies(pub(super) [f64; 4]);

/// Sorts `us` and takes its percentiles.
pub(super) fn latencies(us: &mut [u32]) -> Latencies {
    us.sort_unstable();
    Latencies([50.0, 90.0, 99.0, 100.0].map(|p| percentile_ms(us, p)))
}

impl Latencies {
    pub(super) fn json(&self) -> serde_json::Value {
        let [p50, p90, p99, max] = self.0;
        json!({"p50": p50, "p90": p90, "p99": p99, "max": max})
    }
}

impl std::fmt::Display for Latencies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [p50, p90, p99, max] = self.0;
        write!(f, "p50 {p50:.2}  p90 {p90:.2}  p99 {p99:.2}  max {max:.2}")
    }
}

/// The `--timeline` CSV: one line per window that had actions.
pub(super) fn timeline_csv(timeline: &mut [(u32, u32, u32)]) -> String {
    timeline.sort_unstable();
    let mut csv = String::from("start_s,actions,p50_ms,p99_ms,max_ms,sent_late_p99_ms,sent_late_max_ms\n");
    for window in timeline.chunk_by_mut(|a, b| a.0 == b.0) {
        let start = f64::from(window[0].0) * TIMELINE_WINDOW.as_secs_f64();
        let mut us: Vec<u32> = window.iter().map(|&(_, us, _)| us).collect();
        let mut late: Vec<u32> = window.iter().map(|&(_, _, late)| late).collect();
        let Latencies([p50, _, p99, max]) = latencies(&mut us);
        let Latencies([_, _, late99, late_max]) = latencies(&mut late);
        csv.push_str(&format!("{start:.1},{},{p50:.2},{p99:.2},{max:.2},{late99:.2},{late_max:.2}\n", us.len()));
    }
    csv
}

#[cfg(test)]
mod tests {
    use super::percentile_ms;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u32> = (1..=100).map(|i| i * 1000).collect();
        assert_eq!(percentile_ms(&v, 50.0), 50.0);
        assert_eq!(percentile_ms(&v, 99.0), 99.0);
        assert_eq!(percentile_ms(&v, 100.0), 100.0);
        assert_eq!(percentile_ms(&[], 50.0), 0.0);
    }
}
