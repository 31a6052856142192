//! One block of the example table (300 000 tickets): shuffled, numbered,
//! coded and committed, and its block file; each beside its baseline in
//! the same group (the machine is shared, so compare within a run). Goal:
//! one block in at most 60 ms.
//!
//! `cargo bench -p as-capone-emission --bench block`

use as_capone_emission::{Emission, EmissionSeed, write_block_csv, write_block_csv_sequential};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use math::PrizeTable;
use sha2::{Digest, Sha256};
use std::hint::black_box;

fn generation(c: &mut Criterion) {
    let seed = EmissionSeed::from_bytes([7; 32]);
    let emission = Emission::new(1, PrizeTable::example(), seed).unwrap();
    // The threads `generate_block` uses: the machine's available parallelism.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut g = c.benchmark_group("emission");
    g.sample_size(10);
    g.bench_function("generate_block_300000_sequential_baseline", |b| {
        b.iter(|| black_box(emission.generate_block_sequential(black_box(1)).unwrap().merkle_root))
    });
    g.bench_function("generate_block_300000_1_thread", |b| {
        b.iter(|| black_box(emission.generate_block_threads(black_box(1), 1).unwrap().merkle_root))
    });
    g.bench_function(format!("generate_block_300000_{threads}_threads"), |b| {
        b.iter(|| black_box(emission.generate_block(black_box(1)).unwrap().merkle_root))
    });
    g.bench_function("shuffle_only_300000", |b| b.iter(|| black_box(emission.shuffled_rows(black_box(1)).unwrap())));
    let block = emission.generate_block(1).unwrap();
    g.bench_function("write_csv_300000_sequential_baseline", |b| {
        b.iter(|| write_block_csv_sequential(&mut std::io::sink(), black_box(&block), false).unwrap())
    });
    g.bench_function(format!("write_csv_300000_{threads}_threads"), |b| {
        b.iter(|| write_block_csv(&mut std::io::sink(), black_box(&block), false).unwrap())
    });
    g.finish();
}

/// SHA-256 of 64-byte messages (one compression and its padding block, as
/// a play code's or a commitment's hash): the `sha2` crate (which uses the
/// CPU's SHA extensions when it has them) against a plain software
/// implementation of FIPS 180-4 written here, the baseline.
fn sha256(c: &mut Criterion) {
    let messages: Vec<[u8; 64]> = (0..4096u32).map(|i| std::array::from_fn(|k| (i as usize * 31 + k) as u8)).collect();
    assert_eq!(plain::sha256(&messages[5]), <[u8; 32]>::from(Sha256::digest(messages[5])));
    let mut g = c.benchmark_group("sha256_64_byte_messages");
    g.throughput(Throughput::Bytes(64 * messages.len() as u64));
    g.bench_function("plain_software_baseline", |b| {
        b.iter(|| messages.iter().fold(0u8, |acc, m| acc ^ plain::sha256(black_box(m))[0]))
    });
    g.bench_function("sha2_crate", |b| {
        b.iter(|| messages.iter().fold(0u8, |acc, m| acc ^ Sha256::digest(black_box(m))[0]))
    });
    g.finish();
}

/// One-block compressions of independent messages: the
/// `sha2` crate one message at a time (its SHA-NI backend, the baseline)
/// against `sha256x` with 1, 2 and 4 messages interleaved. Each is 4 096
/// compressions from the initial state, as a block's hashes are.
fn sha256_lanes(c: &mut Criterion) {
    use as_capone_emission::sha256x;
    use sha2::digest::generic_array::GenericArray;
    let blocks: Vec<[u8; 64]> = (0..4096u32).map(|i| std::array::from_fn(|k| (i as usize * 31 + k) as u8)).collect();
    let mut g = c.benchmark_group("sha256_compressions");
    g.throughput(Throughput::Elements(blocks.len() as u64));
    g.bench_function("sha2_compress256_one_stream_baseline", |b| {
        b.iter(|| {
            blocks.iter().fold(0u32, |acc, m| {
                let mut state = sha256x::IV;
                sha2::compress256(&mut state, std::slice::from_ref(GenericArray::from_slice(black_box(m))));
                acc ^ state[0]
            })
        })
    });
    fn lanes<const N: usize>(blocks: &[[u8; 64]]) -> u32 {
        blocks.chunks_exact(N).fold(0u32, |acc, m| {
            let mut states = [sha256x::IV; N];
            sha256x::compress(&mut states, std::array::from_fn(|j| std::slice::from_ref(&m[j])));
            states.iter().fold(acc, |a, s| a ^ s[0])
        })
    }
    g.bench_function("sha256x_1_lane", |b| b.iter(|| lanes::<1>(black_box(&blocks))));
    g.bench_function("sha256x_2_lanes", |b| b.iter(|| lanes::<2>(black_box(&blocks))));
    g.bench_function("sha256x_4_lanes", |b| b.iter(|| lanes::<4>(black_box(&blocks))));
    g.finish();
}

/// SHA-256 as FIPS 180-4 writes it, nothing else.
mod plain {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
        0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
        0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
        0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
        0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
        0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
        0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];

    fn compress(h: &mut [u32; 8], block: &[u8]) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = *h;
        for i in 0..64 {
            let t1 = hh
                .wrapping_add(e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25))
                .wrapping_add((e & f) ^ (!e & g))
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let t2 =
                (a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22)).wrapping_add((a & b) ^ (a & c) ^ (b & c));
            (hh, g, f, e, d, c, b, a) = (g, f, e, d.wrapping_add(t1), c, b, a, t1.wrapping_add(t2));
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }

    /// SHA-256 of one 64-byte message: its block, then the padding block.
    pub fn sha256(m: &[u8; 64]) -> [u8; 32] {
        let mut h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19u32];
        compress(&mut h, m);
        let mut pad = [0u8; 64];
        pad[0] = 0x80;
        pad[56..].copy_from_slice(&512u64.to_be_bytes());
        compress(&mut h, &pad);
        let mut out = [0u8; 32];
        for (o, x) in out.chunks_exact_mut(4).zip(h) {
            o.copy_from_slice(&x.to_be_bytes());
        }
        out
    }
}

criterion_group!(benches, generation, sha256, sha256_lanes);
criterion_main!(benches);
