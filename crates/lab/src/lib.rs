//! `as-capone-lab`: the evidence around the game, as a library the
//! `as-capone` binary calls. Nothing here is on a player's path: these parts
//! measure, attack and report on the server and the engine from outside,
//! through the same binary, HTTP API and database players and operators use.
//!
//! - [`reliability`]: `as-capone reliability <part>`, run by the project (CI
//!   and before a release) against the real `as-capone serve` started as a
//!   child process. It proves that the server survives SIGKILLs under load
//!   without losing or replaying an action, keeps its memory flat in a soak,
//!   refuses a hostile corpus with a 4xx in the error shape without changing
//!   anything, and holds its limits on guessing, its shops' retries and its
//!   accounts' floods. What it measured: `RELIABILITY.md`.
//! - [`loadtest`]: `as-capone loadtest`, the load generator an operator or a
//!   contributor points at a server of theirs: players playing real games to
//!   the end over HTTP, with actions per second and latency percentiles
//!   (`BENCHMARKS.md`).
//! - [`certify`]: the certification report for a test laboratory
//!   (`as-capone report --table`): tickets played through the real engine on
//!   each draw source, the exact odds beside the observed counts, the
//!   statistical checks and their verdict, the dieharder appendix
//!   (`docs/certification.md`). It is the crate `as-capone-certify`
//!   (crates/certify), below the server so that the desk can download it
//!   too, re-exported here; [`build_info`] is what this crate's build script
//!   knows of the binary for its subject.
//! - [`report`]: `as-capone report`, the operator's figures of every
//!   emission read from the database (the same code as the admin API), or
//!   the certification report when given a prize table.
//! - [`reconcile`]: `as-capone reconcile`, our rounds of a period against
//!   the operator's wallet transactions (operator mode), each mismatch
//!   listed.
//! - [`rng_stream`]: the raw words of the two draw sources, which
//!   `as-capone rng-stream` pipes into dieharder for the report's appendix.
//!
//! Each part's clap arguments ([`reliability::ReliabilityArgs`],
//! [`loadtest::LoadtestArgs`], [`report::ReportArgs`]) live beside it, so the
//! binary only flattens them into its commands and calls `run`.

pub use ::certify;
pub mod loadtest;
pub mod reconcile;
pub mod reliability;
pub mod report;
pub mod rng_stream;

use math::PrizeTable;
use std::path::Path;

/// Where this binary was built, from crates/lab/build.rs: the certification
/// report's subject. The binary registers it at start
/// (`certify::BuildInfo::register`) so that the server's reports say it too.
pub fn build_info() -> certify::BuildInfo {
    certify::BuildInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        git_commit: env!("AS_CAPONE_GIT_COMMIT").into(),
        git_dirty: match env!("AS_CAPONE_GIT_DIRTY") {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        rules_files: env!("AS_CAPONE_RULES_DIGESTS").split(';').filter(|s| !s.is_empty()).map(String::from).collect(),
    }
}

/// Loads and validates a prize table, naming the file in errors.
pub fn load_table(path: &Path) -> anyhow::Result<PrizeTable> {
    PrizeTable::load(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
