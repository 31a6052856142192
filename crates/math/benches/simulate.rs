//! Simulation speed through the real engine: tickets per second on one
//! thread (`run_chunk`) and with all threads (`simulate`).
use as_capone_math::simulate::{CHUNK, run_chunk};
use as_capone_math::{SimConfig, simulate};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("simulate");
    g.throughput(Throughput::Elements(CHUNK));
    g.bench_function("one_thread_chunk", |b| b.iter(|| run_chunk(black_box(1), 0, CHUNK)));
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let games = 16 * CHUNK;
    g.throughput(Throughput::Elements(games));
    g.bench_function(format!("all_threads_{threads}"), |b| {
        b.iter(|| simulate(&SimConfig { games, seed: black_box(1), threads }, &|_| {}))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
