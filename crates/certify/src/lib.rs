//! The certification report for a test laboratory (GLI, eCOGRA, a
//! regulator): `as-capone report --table FILE --games N --out report.html`
//! (crates/lab/src/report.rs) and the desk's download
//! (`GET /api/admin/emissions/{id}/certification`, crates/server) both call
//! [`build`] then [`render_html`].
//!
//! One [`Report`] value holds every figure; the HTML page and the JSON
//! (`--json`) are both rendered from it, so they cannot disagree.
//! What is in it, every check and its threshold: `docs/certification.md`.
//!
//! This crate sits below the server (it imports engine, math and format,
//! never the server, lab or an async runtime) and draws no progress bar:
//! the caller passes a [`Progress`] (the CLI's is an indicatif bar).
//!
//! Layout: the modules are private and what other crates use is
//! re-exported here. `run.rs` plays tickets through the real engine with a
//! recording adapter around any draw source; `analysis.rs` turns the
//! counts into figures and checks; `build_report.rs` ([`build`]) puts the
//! streams, the exact figures and the checks together into a [`Report`]
//! (`report.rs`, with its checks in `check.rs` and its fractions in
//! `frac.rs`); `html.rs` and `svg.rs` draw the page from the report alone;
//! `pdf.rs` prints it; `dieharder.rs` reads dieharder's output for the
//! appendix; `build_info.rs` and `progress.rs` hold what the caller gives.

mod analysis;
mod build_info;
mod build_report;
mod check;
mod dieharder;
mod frac;
mod html;
mod pdf;
mod progress;
mod report;
mod run;
mod svg;

pub use analysis::{
    Category, DeckReport, Distribution, Family, MIN_EXPECTED, RtpReport, RunsReport, SerialReport, StreamReport,
    SubTest,
};
pub use build_info::BuildInfo;
pub use build_report::{Options, analyse_stream, build};
pub use check::{Check, THRESHOLD, Verdict, overall};
pub use dieharder::{DieharderLine, DieharderRun, read as read_dieharder};
pub use frac::Frac;
pub use html::render as render_html;
pub use pdf::pdf;
pub use progress::{Progress, Silent, Stopped};
pub use report::{
    Band, BlockRisk, DIEHARDER_COMMAND, DieharderAppendix, Exact, FORMAT, Histogram, Parameters, PrizeChance, RULES,
    Report, RunInfo, Subject, TableInfo, TableRow,
};
pub use run::{CHUNK, DrawFactory, FairFactory, RunConfig, SimFactory};
