//! Makes the example table's block 1 `COUNT` times, for `perf stat`: its
//! task-clock divided by `COUNT` is the CPU time of one block, a figure
//! that other processes on a shared machine disturb less than wall time.
//!
//! ```sh
//! cargo build --release -p as-capone-emission --example blocks
//! perf stat -e task-clock target/release/examples/blocks sequential 20
//! perf stat -e task-clock target/release/examples/blocks 1 20   # threads, count
//! ```

use as_capone_emission::{Emission, EmissionSeed};
use math::PrizeTable;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("2", String::as_str);
    let count: u32 = args.get(2).map_or(10, |c| c.parse().expect("COUNT is a number"));
    let emission = Emission::new(1, PrizeTable::example(), EmissionSeed::from_bytes([7; 32])).unwrap();
    let start = std::time::Instant::now();
    let mut x = 0u8;
    for _ in 0..count {
        let block = match mode {
            "sequential" => emission.generate_block_sequential(1),
            threads => emission.generate_block_threads(1, threads.parse().expect("sequential or a thread count")),
        };
        x ^= block.unwrap().merkle_root[0];
    }
    let each = start.elapsed().as_secs_f64() * 1e3 / f64::from(count);
    println!("{mode}: {count} blocks, {each:.1} ms each (wall), root byte {x}");
}
