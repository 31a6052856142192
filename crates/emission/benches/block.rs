//! One block of the example table (300 000 tickets): shuffled, numbered,
//! coded and committed. Goal: under 0.3 s in release on the CI machine.
//!
//! `cargo bench -p as-capone-emission --bench block`

use as_capone_emission::{Emission, EmissionSeed, files};
use criterion::{Criterion, criterion_group, criterion_main};
use math::PrizeTable;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let seed = EmissionSeed::from_bytes([7; 32]);
    let emission = Emission::new(1, PrizeTable::example(), seed).unwrap();
    let mut g = c.benchmark_group("emission");
    g.sample_size(10);
    g.bench_function("generate_block_300000", |b| {
        b.iter(|| black_box(emission.generate_block(black_box(1)).unwrap().merkle_root))
    });
    g.bench_function("shuffle_only_300000", |b| b.iter(|| black_box(emission.shuffled_rows(black_box(1)).unwrap())));
    let block = emission.generate_block(1).unwrap();
    g.bench_function("write_csv_300000", |b| {
        b.iter(|| {
            let mut sink = std::io::sink();
            files::write_block_csv(&mut sink, black_box(&block), false).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
