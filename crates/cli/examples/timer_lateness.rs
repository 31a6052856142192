//! How late tokio's `sleep_until` wakes, on the load generator's kind of
//! runtime (multi-thread, two workers) and at its pace (64 players at
//! 11 000 requests/s: one slot every 5.8 ms). `loadtest --rate` wakes a
//! player `TIMER_SLACK` (2 ms) before its slot because of what this prints.
//!
//!     cargo run --release -p as-capone --example timer_lateness

use std::time::{Duration, Instant};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut late = Vec::new();
    let mut next = Instant::now() + Duration::from_millis(3);
    for _ in 0..200 {
        tokio::time::sleep_until(next.into()).await;
        late.push(Instant::now().duration_since(next).as_micros());
        next += Duration::from_micros(5818);
    }
    late.sort_unstable();
    let at = |p: usize| late[(late.len() - 1) * p / 100];
    println!(
        "sleep_until woke late by (µs): min {} p10 {} p50 {} p90 {} max {}",
        at(0),
        at(10),
        at(50),
        at(90),
        at(100)
    );
}
