#![no_main]
//! `cargo +nightly fuzz run record_verify`: the checks are `as_capone_fuzzing::record_verify` (docs/fuzzing.md).

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::record_verify(data));
