//! The report's data: one [`Report`] value holds every figure, which the
//! HTML page and the JSON are both rendered from.

use crate::analysis::StreamReport;
use crate::check::{Check, Verdict};
use crate::dieharder::DieharderRun;
use crate::frac::Frac;
use serde::{Deserialize, Serialize};

/// The report's format, first field of the JSON.
pub const FORMAT: &str = "as-capone certification report v1";
/// The rules the engine follows.
pub const RULES: &str = "Annexe 3 to the regulation of the \"Illiko Live\" game offer, game \"As Capone\" \
    (articles 1 to 3), as read in docs/rules.md";
/// How the dieharder appendix is produced.
pub const DIEHARDER_COMMAND: &str = "as-capone rng-stream --source fair | dieharder -a -g 200 > fair.dieharder.txt; \
    as-capone rng-stream --source sim | dieharder -a -g 200 > sim.dieharder.txt";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Subject {
    pub game: String,
    pub rules: String,
    /// SHA-256 of the rules' files found at build time, or why not.
    pub rules_files: Vec<String>,
    pub version: String,
    /// `git rev-parse HEAD` at build time, or "unknown".
    pub git_commit: String,
    /// Uncommitted changes to tracked files at build time (None: unknown).
    pub git_dirty: Option<bool>,
    /// SHA-256 of the executable that wrote the report.
    pub binary_sha256: String,
    pub command: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Parameters {
    pub tickets: u64,
    pub seed: u64,
    pub checkpoint_step: u64,
    pub threshold: f64,
    pub min_expected: f64,
    /// Checks with a p-value: under fair streams, the chance that any of
    /// them fails by bad luck is at most their number times the threshold.
    pub statistical_checks: usize,
    pub family_wise_false_alarm_bound: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableRow {
    pub tickets: u32,
    /// Prizes for 5, 6, 7 and 8 tricks.
    pub prizes_cents: [u64; 4],
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableInfo {
    pub file: String,
    /// SHA-256 of the file's bytes.
    pub file_sha256: String,
    /// The table's digest: SHA-256 of its canonical form (`PrizeTable::digest`).
    pub digest: String,
    pub canonical: String,
    pub game: String,
    pub code: String,
    pub price_cents: u64,
    pub block_size: u32,
    pub rows: Vec<TableRow>,
    pub regulation_deviations: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrizeChance {
    pub prize_cents: u64,
    pub chance: Frac,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Band {
    pub name: String,
    pub low: Frac,
    pub high: Frac,
    pub inside: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Exact {
    /// Tricks 0 to 8 in one game.
    pub per_round: Vec<Frac>,
    pub extra_per_round: Frac,
    /// The ticket: 5, 6, 7, 8 tricks, lost.
    pub final_outcome: Vec<Frac>,
    pub expected_games: Frac,
    pub deck_tie: Frac,
    pub deck_duel_win: Frac,
    pub expected_payout_cents: Frac,
    pub rtp: Frac,
    pub hit_rate: Frac,
    pub variance_cents2: Frac,
    pub std_dev_cents: f64,
    pub largest_prize_cents: u64,
    pub prize_chances: Vec<PrizeChance>,
    pub legal_band: Band,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Histogram {
    pub start_cents: f64,
    pub bin_cents: f64,
    pub probabilities: Vec<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BlockRisk {
    pub method: String,
    pub sales_cents: u64,
    pub mean_cents: f64,
    pub std_dev_cents: f64,
    pub p_prizes_exceed_sales: f64,
    pub p99_cents: f64,
    pub p9999_cents: f64,
    pub histogram: Histogram,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DieharderAppendix {
    pub command: String,
    pub runs: Vec<DieharderRun>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunInfo {
    pub threads: usize,
    pub seconds: f64,
}

/// The whole report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub format: String,
    pub subject: Subject,
    pub parameters: Parameters,
    pub table: TableInfo,
    pub exact: Exact,
    pub block_risk: BlockRisk,
    pub streams: Vec<StreamReport>,
    pub dieharder: DieharderAppendix,
    pub checks: Vec<Check>,
    pub verdict: Verdict,
    /// How the run went (threads, time): the only part that depends on the machine.
    pub run: RunInfo,
}
