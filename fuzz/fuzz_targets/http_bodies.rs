#![no_main]
//! `cargo +nightly fuzz run http_bodies`: the checks are `as_capone_fuzzing::http_bodies` (docs/fuzzing.md).

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::http_bodies(data));
