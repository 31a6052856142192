//! Simulation speed through the engine, with a baseline measured in the
//! same run: the random draws alone (the same kind and number of draws a
//! ticket needs, from the same source, without the engine).
//! `engine_one_thread` is the simulator's path (`engine::sim`);
//! `game_apply_one_thread` the same tickets through `Game::apply`.
use as_capone_math::simulate::{CHUNK, run_chunk, run_chunk_apply, run_chunk_branchless, run_chunk_single};
use as_capone_math::{SimConfig, simulate};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::{DrawSource, FastSource};
use std::hint::black_box;

/// About a ticket's worth of draws: eight As Capone cards a game, 1.29
/// games a ticket, and 1.5 deck draws of two numbers.
fn draws_only(tickets: u64) -> u32 {
    let mut src = FastSource::from_u64(1, 0);
    let mut acc = 0u32;
    for t in 0..tickets {
        for m in (1..=8).rev() {
            acc = acc.wrapping_add(src.below(m));
        }
        // 0.29 extra games and 1.5 deck draws per ticket on average.
        if t % 100 < 29 {
            for m in (1..=8).rev() {
                acc = acc.wrapping_add(src.below(m));
            }
        }
        let deck = if t % 2 == 0 { 1 } else { 2 };
        for _ in 0..deck {
            acc = acc.wrapping_add(src.below(16) ^ src.below(15));
        }
    }
    acc
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("simulate");
    g.throughput(Throughput::Elements(CHUNK));
    g.bench_function("baseline_draws_only_one_thread", |b| b.iter(|| draws_only(black_box(CHUNK))));
    g.bench_function("engine_one_thread", |b| b.iter(|| run_chunk(black_box(1), 0, CHUNK)));
    g.bench_function("engine_single_one_thread", |b| b.iter(|| run_chunk_single(black_box(1), 0, CHUNK)));
    g.bench_function("engine_branchless_one_thread", |b| b.iter(|| run_chunk_branchless(black_box(1), 0, CHUNK)));
    g.bench_function("game_apply_one_thread", |b| b.iter(|| run_chunk_apply(black_box(1), 0, CHUNK)));
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let games = 16 * CHUNK;
    g.throughput(Throughput::Elements(games));
    g.bench_function(format!("engine_all_threads_{threads}"), |b| {
        b.iter(|| simulate(&SimConfig { games, seed: black_box(1), threads }, &|_| {}))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
