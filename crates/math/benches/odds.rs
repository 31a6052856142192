//! `as-capone odds --table`: the payout figures of the example table, whose
//! cost is the distribution of a block's prizes on a lattice of 2^21 points
//! (goal: under 0.2 s). Each beside its baseline in the same group: the
//! machine is shared, so compare within a run.
//!
//! `cargo bench -p as-capone-math --bench odds`

use as_capone_math as math;
use criterion::{Criterion, criterion_group, criterion_main};
use math::{Odds, Payout, PrizeTable, block_distribution, block_distribution_fft};
use std::hint::black_box;

fn odds(c: &mut Criterion) {
    let table = PrizeTable::example();
    let odds = Odds::exact();
    let mut g = c.benchmark_group("block_distribution_2p21_points");
    g.sample_size(10);
    g.bench_function("complex_fft_every_row_baseline", |b| {
        b.iter(|| black_box(block_distribution_fft(black_box(&table), &odds).1.len()))
    });
    g.bench_function("pruned_spectrum_real_inverse", |b| {
        b.iter(|| black_box(block_distribution(black_box(&table), &odds).1.len()))
    });
    g.finish();
    let mut g = c.benchmark_group("odds_with_table");
    g.sample_size(10);
    g.bench_function("odds_exact", |b| b.iter(|| black_box(Odds::exact())));
    g.bench_function("payout_compute_example_table", |b| {
        b.iter(|| black_box(Payout::compute(black_box(&table), &odds).block_risk.p99_cents))
    });
    g.finish();
}

criterion_group!(benches, odds);
criterion_main!(benches);
