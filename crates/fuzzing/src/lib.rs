//! # as-capone-fuzzing: the invariants the fuzz targets check
//!
//! One module and one function per fuzz target of `fuzz/` (see
//! `docs/fuzzing.md`): each takes arbitrary bytes and panics when an
//! invariant breaks. The cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`, on
//! the nightly toolchain, with libFuzzer) call them; so does the stable
//! test `tests/replay.rs`, which replays the committed corpus and
//! regressions and a few thousand pseudo-random inputs per target, so that
//! CI runs the same checks in seconds.

mod codes;
mod engine_actions;
mod http_bodies;
mod prize_table;
mod record_verify;

pub use engine_actions::{Summary, engine_actions_summary};
pub use record_verify::reference_records;

/// A harness: arbitrary bytes in, a panic when an invariant breaks.
pub type Harness = fn(&[u8]);

/// The targets, by name: the names of `fuzz/fuzz_targets/` and of the
/// directories of `fuzz/corpus/` and `fuzz/regressions/`.
pub const TARGETS: [(&str, Harness); 5] = [
    ("engine_actions", engine_actions),
    ("prize_table", prize_table),
    ("record_verify", record_verify),
    ("codes", codes),
    ("http_bodies", http_bodies),
];

/// `engine_actions`: a ticket played from arbitrary actions and draws (`engine_actions.rs`).
pub fn engine_actions(data: &[u8]) {
    engine_actions::run(data)
}

/// `prize_table`: prize tables parsed from arbitrary TOML or JSON text (`prize_table.rs`).
pub fn prize_table(data: &[u8]) {
    prize_table::run(data)
}

/// `record_verify`: the record verifier on arbitrary and mutated records (`record_verify.rs`).
pub fn record_verify(data: &[u8]) {
    record_verify::run(data)
}

/// `codes`: the play-code and serial parsers (`codes.rs`).
pub fn codes(data: &[u8]) {
    codes::run(data)
}

/// `http_bodies`: request bodies sent to a real server (`http_bodies.rs`).
pub fn http_bodies(data: &[u8]) {
    http_bodies::run(data)
}
