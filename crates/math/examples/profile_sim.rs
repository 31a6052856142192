//! Plays a fixed number of tickets on one thread, for profilers
//! (`valgrind --tool=cachegrind --branch-sim=yes`, callgrind, perf):
//! `profile_sim [TICKETS] [sim|single|branchless|apply|lanes|draws]`, the simulator's path by default;
//! `draws` runs the draws-only baseline of the benchmarks; `lanes` plays the
//! tickets as eight chunks side by side in the lanes (`run_lanes`).
fn main() {
    let games: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    if std::env::args().nth(2).as_deref() == Some("draws") {
        println!("{}", as_capone_math::draws_only(games));
        return;
    }
    let c = match std::env::args().nth(2).as_deref() {
        Some("apply") => as_capone_math::run_chunk_apply(1, 0, games),
        Some("single") => as_capone_math::run_chunk_single(1, 0, games),
        Some("lanes") => as_capone_math::run_lanes(1, 8, games / 8),
        Some("branchless") => as_capone_math::run_chunk_branchless(1, 0, games),
        _ => as_capone_math::run_chunk(1, 0, games),
    };
    println!("{:?}", c.outcomes);
}
