#![no_main]
//! `cargo +nightly fuzz run engine_actions`: the checks are `as_capone_fuzzing::engine_actions` (docs/fuzzing.md).

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::engine_actions(data));
