//! `as-capone-lab`: the evidence around the game, as a library the
//! `as-capone` binary calls. Nothing here is on a player's path: these parts
//! measure, attack and report on the server and the engine from outside,
//! through the same binary, HTTP API and database players and operators use.
//!
//! - `reliability/` ([`run_reliability`]): `as-capone reliability <part>`, run by the project (CI
//!   and before a release) against the real `as-capone serve` started as a
//!   child process. It proves that the server survives SIGKILLs under load
//!   without losing or replaying an action, keeps its memory flat in a soak,
//!   refuses a hostile corpus with a 4xx in the error shape without changing
//!   anything, and holds its limits on guessing, its shops' retries and its
//!   accounts' floods. What it measured: `RELIABILITY.md`.
//! - `loadtest/` ([`run_loadtest`]): `as-capone loadtest`, the load generator an operator or a
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
//! - `report.rs` ([`run_report`]): `as-capone report`, the operator's figures of every
//!   emission read from the database (the same code as the admin API), or
//!   the certification report when given a prize table.
//! - `reconcile.rs` ([`run_reconcile`]): `as-capone reconcile`, our rounds of a period against
//!   the operator's wallet transactions (operator mode), each mismatch
//!   listed.
//! - `rng_stream.rs` ([`RngStream`]): the raw words of the two draw sources, which
//!   `as-capone rng-stream` pipes into dieharder for the report's appendix.
//!
//! Each part's clap arguments ([`ReliabilityArgs`], [`LoadtestArgs`],
//! [`ReportArgs`], [`ReconcileArgs`]) live beside it, so the binary only
//! flattens them into its commands and calls the part's `run_...`. The
//! modules are private; what the binary uses is re-exported here.

pub use ::certify;

mod build_info;
mod loadtest;
mod prize_table;
mod reconcile;
mod reliability;
mod report;
mod rng_stream;

pub use build_info::build_info;
pub use loadtest::{LoadtestArgs, run as run_loadtest};
pub use prize_table::load_table;
pub use reconcile::{ReconcileArgs, run as run_reconcile};
pub use reliability::{OperatorChildArgs, ReliabilityArgs, reference_operator, run as run_reliability};
pub use report::{ReportArgs, run as run_report};
pub use rng_stream::{
    CLIENT_SEED as RNG_STREAM_CLIENT_SEED, SERIAL as RNG_STREAM_SERIAL, Source as RngSource, Stream as RngStream,
};
