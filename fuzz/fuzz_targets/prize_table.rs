#![no_main]
//! `cargo +nightly fuzz run prize_table`: the checks are `as_capone_fuzzing::prize_table` (docs/fuzzing.md).

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::prize_table(data));
