#![no_main]
//! `cargo +nightly fuzz run codes`: the checks are `as_capone_fuzzing::codes` (docs/fuzzing.md).

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::codes(data));
