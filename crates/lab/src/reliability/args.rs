//! The arguments of `as-capone reliability`: which part, on which
//! databases, and each part's figures.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
#[command(args_override_self = true)]
pub struct ReliabilityArgs {
    /// Which part to run.
    #[arg(value_enum)]
    pub part: Part,
    /// Database backends of the kills and shops parts (the soak runs on `--soak-db`,
    /// the hostile corpus on SQLite).
    #[arg(long, value_enum, default_value_t = DbChoice::Both)]
    pub db: DbChoice,
    /// SIGKILLs per backend.
    #[arg(long, default_value_t = 200)]
    pub kills: u32,
    /// Concurrent players during the kills part.
    #[arg(long, default_value_t = 8)]
    pub players: usize,
    /// Longest time the server runs under load before a kill, in ms (each
    /// kill comes at a random moment between 1/10 of it and all of it).
    #[arg(long, default_value_t = 1500)]
    pub kill_window_ms: u64,
    /// Length of the soak, in minutes.
    #[arg(long, default_value_t = 10.0)]
    pub minutes: f64,
    /// Seconds between two soak samples.
    #[arg(long, default_value_t = 10)]
    pub sample_secs: u64,
    /// Requests per second (purchases and actions) of the soak's steady load.
    #[arg(long, default_value_t = 200.0)]
    pub soak_rate: f64,
    /// Backend of the soak.
    #[arg(long, value_enum, default_value_t = Backend::Sqlite)]
    pub soak_db: Backend,
    /// Soak verdict: resident memory may grow this many MiB beyond 20 %.
    #[arg(long, default_value_t = 8)]
    pub rss_allowance_mib: u64,
    /// Seconds a half-sent request may stay open before the hostile part
    /// gives up waiting for the server to close it.
    #[arg(long, default_value_t = 45)]
    pub stall_cap_secs: u64,
    /// The short version for CI: 5 kills per backend, a 20 s soak sampled
    /// every 2 s, the full hostile corpus; wallet chaos: 200 rounds, 4 kills
    /// of ours and 2 of the operator's.
    #[arg(long)]
    pub quick: bool,
    /// PostgreSQL maintenance database through which the temporary database
    /// is created and dropped (with `psql`).
    #[arg(long, env = "AS_CAPONE_TEST_PG", default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    pub pg_admin: String,
    /// Fail (instead of skipping PostgreSQL) when it is unreachable.
    #[arg(long, env = "AS_CAPONE_REQUIRE_POSTGRES", value_parser = truthy, default_value = "0")]
    pub require_postgres: bool,
    /// Races: rounds of each race (a password change, a recovery, a closure).
    #[arg(long, default_value_t = 50)]
    pub race_rounds: u32,
    /// Floods: seconds of each phase (honest players alone, then with the flood).
    #[arg(long, default_value_t = 3.0)]
    pub flood_secs: f64,
    /// Floods: requests of the flood at most (demo games and registrations, each from another /64).
    #[arg(long, default_value_t = 20_000)]
    pub flood_requests: u64,
    /// Floods: the global ceilings off (the server before the second outside audit), for comparison.
    #[arg(long)]
    pub flood_no_ceilings: bool,
    /// Floods: requests a second of the flood (0: as fast as the server answers).
    #[arg(long, default_value_t = 0.0)]
    pub flood_rate: f64,
    /// Wallet chaos: tickets sold and played to the end.
    #[arg(long, default_value_t = 5000)]
    pub rounds: u64,
    /// Wallet chaos: SIGKILLs of our server processes.
    #[arg(long, default_value_t = 30)]
    pub wallet_kills: u32,
    /// Wallet chaos: SIGKILLs of the reference operator.
    #[arg(long, default_value_t = 10)]
    pub operator_kills: u32,
    /// Wallet chaos: the reference operator's program, e.g. the `as-capone-operator` binary
    /// [default: this executable's hidden `reference-operator`, the same crate].
    #[arg(long, env = "AS_CAPONE_OPERATOR_BIN")]
    pub operator_bin: Option<PathBuf>,
    /// Wallet chaos: the operator's delays, MIN-MAX ms.
    #[arg(long, default_value = "5-150")]
    pub chaos_delay_ms: String,
    /// Wallet chaos: probability of a delayed wallet call.
    #[arg(long, default_value_t = 0.2)]
    pub chaos_delay_rate: f64,
    /// Wallet chaos: probability of a 500/503 answered without applying.
    #[arg(long, default_value_t = 0.05)]
    pub chaos_error_rate: f64,
    /// Wallet chaos: probability of a call applied whose answer is dropped.
    #[arg(long, default_value_t = 0.05)]
    pub chaos_drop_rate: f64,
    /// Wallet chaos: probability of a call delivered twice at once.
    #[arg(long, default_value_t = 0.05)]
    pub chaos_duplicate_rate: f64,
    /// Wallet chaos: the operator's clock offset, in ms (within the signatures' window).
    #[arg(long, default_value_t = 1500, allow_hyphen_values = true)]
    pub chaos_skew_ms: i64,
    /// Seed of the random kill moments and corpus details [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write every figure as one JSON object to this file.
    #[arg(long)]
    pub json_out: Option<PathBuf>,
    /// Keep the temporary folders (databases, server logs) for inspection.
    #[arg(long)]
    pub keep: bool,
}

fn truthy(s: &str) -> Result<bool, String> {
    Ok(!(s.is_empty() || s == "0" || s.eq_ignore_ascii_case("false") || s.eq_ignore_ascii_case("no")))
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Kills,
    Soak,
    Hostile,
    Guessing,
    Shops,
    Accounts,
    Races,
    Floods,
    /// The operator mode under chaos (not part of `all`: it needs the
    /// reference operator's program).
    WalletChaos,
    All,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbChoice {
    Sqlite,
    Postgres,
    Both,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}
