//! Latencies as the parts report them.

/// The `p`-quantile (0..=1) of microsecond samples, in milliseconds.
pub fn quantile_ms(v: &mut [u32], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i] as f64 / 1000.0
}
