//! Simulation speed through the engine, with a baseline measured in the
//! same run: the random draws alone (the same kind and number of draws a
//! ticket needs, from the same source, without the engine).
//! `engine_one_thread` is the simulator's path (`engine::sim`);
//! `game_apply_one_thread` the same tickets through `Game::apply`;
//! `engine_lanes_one_thread` eight chunks side by side in the lanes
//! (`engine::lanes`), the same number of tickets. `engine_all_threads_N` is
//! `simulate()` (the lanes on every thread), `engine_pairs_all_threads_N`
//! the previous `simulate()` (the pair path, a chunk at a time a thread).
use as_capone_math::{
    CHUNK, SimConfig, draws_only, run_chunk, run_chunk_apply, run_chunk_branchless, run_chunk_single, run_lanes,
    simulate, simulate_pairs,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("simulate");
    g.throughput(Throughput::Elements(CHUNK));
    g.bench_function("baseline_draws_only_one_thread", |b| b.iter(|| draws_only(black_box(CHUNK))));
    g.bench_function("engine_one_thread", |b| b.iter(|| run_chunk(black_box(1), 0, CHUNK)));
    g.bench_function("engine_single_one_thread", |b| b.iter(|| run_chunk_single(black_box(1), 0, CHUNK)));
    g.bench_function("engine_branchless_one_thread", |b| b.iter(|| run_chunk_branchless(black_box(1), 0, CHUNK)));
    g.bench_function("game_apply_one_thread", |b| b.iter(|| run_chunk_apply(black_box(1), 0, CHUNK)));
    // Eight chunks of CHUNK / 8 tickets side by side in the lanes: CHUNK tickets.
    g.bench_function("engine_lanes_one_thread", |b| b.iter(|| run_lanes(black_box(1), 8, CHUNK / 8)));
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let games = 16 * CHUNK;
    g.throughput(Throughput::Elements(games));
    g.bench_function(format!("engine_all_threads_{threads}"), |b| {
        b.iter(|| simulate(&SimConfig { games, seed: black_box(1), threads }, &|_| {}))
    });
    g.bench_function(format!("engine_pairs_all_threads_{threads}"), |b| {
        b.iter(|| simulate_pairs(&SimConfig { games, seed: black_box(1), threads }, &|_| {}))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
