//! `as-capone reliability <kills|soak|hostile|accounts|floods|all>`: the fault and load
//! evidence, run against the real `as-capone serve` binary (this
//! very executable, started as a child process on a fresh temporary
//! database), so that it exercises the code players hit.
//!
//! - [`kills`]: the server SIGKILLed at random moments under load, restarted
//!   on the same database each time; a client-side journal of every answered
//!   action is checked after each restart (present, byte-identical on
//!   replay, draws unchanged, ledger and audit chain sound).
//! - [`soak`]: a steady paced load for minutes, sampling throughput, p99
//!   latency and the server's resident memory; a verdict on memory growth.
//! - [`hostile`]: a programmatic corpus of hostile requests, written on raw
//!   TCP sockets; each must be refused with a 4xx in the error shape and
//!   change nothing.
//! - [`guessing`]: the attacks on the limits on guessing (docs/limits.md)
//!   on each backend: a forged `X-Forwarded-For`, right play codes whose
//!   clients hang up, a lockout attempt from many networks, one login
//!   guessed from many networks, two processes on one database.
//! - [`shops`]: the answers of paper tickets' sales and payments lost
//!   (connection dropped, server SIGKILLed, requests sent at once), the
//!   shop's retry answered with the first answer, nothing applied twice.
//! - [`wallet_chaos`]: the operator mode through the reference operator
//!   with its chaos switch on, our servers and the operator SIGKILLed at
//!   random moments; afterwards the reconciliation is clean, no debit is
//!   doubled or orphaned, every prize is credited once and the operator's
//!   ledger is balanced (`as-capone reliability wallet-chaos`).
//! - [`accounts`]: a flood of logins keeps the server's memory bounded
//!   (503 with `Retry-After` beyond the password hashes in flight), and a
//!   password change or a logout ends the tokens it must, on each backend.
//! - [`races`]: logins with the old password sent at the same moment as a
//!   password change, a recovery or a closure, on one process (SQLite) and
//!   two (PostgreSQL): no session of the old password survives, and a
//!   closed account never buys.
//!
//! - [`floods`]: demo games and registrations flooded from ever new
//!   networks stop at the global ceilings (the rows stored, the disk's
//!   growth), while honest players buy and play: their purchases' p50 and
//!   p99 before and during the flood.
//!
//! Every part prints a text summary; `--json-out FILE` writes one JSON
//! object with every figure (what `tests/reliability.rs` asserts). The exit
//! status is non-zero when any check failed.

pub mod accounts;
pub mod floods;
pub mod guessing;
pub mod hostile;
pub mod kills;
pub mod races;
pub mod shops;
pub mod soak;
pub mod wallet_chaos;

use anyhow::Context;
use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

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

pub fn run(mut args: ReliabilityArgs) -> anyhow::Result<()> {
    if args.quick {
        args.kills = args.kills.min(5);
        args.minutes = args.minutes.min(20.0 / 60.0);
        args.sample_secs = args.sample_secs.min(2);
        args.kill_window_ms = args.kill_window_ms.min(1200);
        args.rounds = args.rounds.min(200);
        args.wallet_kills = args.wallet_kills.min(4);
        args.operator_kills = args.operator_kills.min(2);
        args.race_rounds = args.race_rounds.min(5);
        args.flood_secs = args.flood_secs.min(2.0);
        args.flood_requests = args.flood_requests.min(5000);
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    let started = Instant::now();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut summary = json!({
        "seed": seed,
        "quick": args.quick,
        "version": env!("CARGO_PKG_VERSION"),
        "date_unix": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
    });
    let mut ok = true;
    let backends: Vec<Backend> = match args.db {
        DbChoice::Sqlite => vec![Backend::Sqlite],
        DbChoice::Postgres => vec![Backend::Postgres],
        DbChoice::Both => vec![Backend::Sqlite, Backend::Postgres],
    };
    if matches!(args.part, Part::Kills | Part::All) {
        let mut parts = Vec::new();
        for (i, &b) in backends.iter().enumerate() {
            let r = kills::run(&args, b, seed.wrapping_add(i as u64), &rt)?;
            ok &= r.get("ok").and_then(Value::as_bool).unwrap_or(false);
            parts.push(r);
        }
        summary["kills"] = Value::Array(parts);
    }
    if matches!(args.part, Part::Hostile | Part::All) {
        let r = hostile::run(&args, seed)?;
        ok &= r["ok"].as_bool().unwrap_or(false);
        summary["hostile"] = r;
    }
    if matches!(args.part, Part::Guessing | Part::All) {
        let mut parts = Vec::new();
        for &b in &backends {
            let r = guessing::run(&args, b, &rt)?;
            ok &= r.get("ok").and_then(Value::as_bool).unwrap_or(false);
            parts.push(r);
        }
        summary["guessing"] = Value::Array(parts);
    }
    if matches!(args.part, Part::Shops | Part::All) {
        let mut parts = Vec::new();
        for (i, &b) in backends.iter().enumerate() {
            let r = shops::run(&args, b, seed.wrapping_add(100 + i as u64), &rt)?;
            ok &= r.get("ok").and_then(Value::as_bool).unwrap_or(false);
            parts.push(r);
        }
        summary["shops"] = Value::Array(parts);
    }
    if matches!(args.part, Part::Accounts | Part::All) {
        let r = accounts::run(&args, &backends, &rt)?;
        ok &= r["ok"].as_bool().unwrap_or(false);
        summary["accounts"] = r;
    }
    if matches!(args.part, Part::Races | Part::All) {
        let r = races::run(&args, &backends, &rt)?;
        ok &= r["ok"].as_bool().unwrap_or(false);
        summary["races"] = r;
    }
    if matches!(args.part, Part::Floods | Part::All) {
        let r = floods::run(&args, &backends, &rt)?;
        ok &= r["ok"].as_bool().unwrap_or(false);
        summary["floods"] = r;
    }
    if args.part == Part::WalletChaos {
        let mut parts = Vec::new();
        for (i, &b) in backends.iter().enumerate() {
            let r = wallet_chaos::run(&args, b, seed.wrapping_add(200 + i as u64), &rt)?;
            ok &= r.get("ok").and_then(Value::as_bool).unwrap_or(false);
            parts.push(r);
        }
        summary["wallet_chaos"] = Value::Array(parts);
    }
    if matches!(args.part, Part::Soak | Part::All) {
        let r = soak::run(&args, args.soak_db, &rt)?;
        ok &= r.get("ok").and_then(Value::as_bool).unwrap_or(false);
        summary["soak"] = r;
    }
    summary["ok"] = json!(ok);
    summary["seconds"] = json!(started.elapsed().as_secs_f64());
    if let Some(path) = &args.json_out {
        std::fs::write(path, serde_json::to_vec_pretty(&summary)?).with_context(|| format!("{}", path.display()))?;
    }
    println!(
        "\nreliability: {} in {:.0} s (seed {seed})",
        if ok { "PASS" } else { "FAIL" },
        started.elapsed().as_secs_f64()
    );
    anyhow::ensure!(ok, "some reliability checks failed (see above)");
    Ok(())
}

/// A small deterministic PRNG (SplitMix64) for kill moments and corpus details.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5851_f42d_4c95_7f2d)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    pub fn hex(&mut self, bytes: usize) -> String {
        (0..bytes).map(|_| format!("{:02x}", self.next_u64() as u8)).collect()
    }
}

/// A temporary folder, removed when dropped (unless kept).
pub struct TempDir {
    pub path: PathBuf,
    keep: bool,
}

impl TempDir {
    pub fn new(label: &str, keep: bool) -> anyhow::Result<TempDir> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.subsec_nanos();
        let path = std::env::temp_dir().join(format!("as-capone-rel-{label}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(TempDir { path, keep })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("kept {}", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// The prize table of these runs: the test kit's blocks of 2 000 tickets
/// (a database starts in a moment) under game code `REL`, at the
/// regulation's price ([`math::table::REGULATION_PRICE_CENTS`]).
pub fn table() -> String {
    testkit::fixture::table_toml(
        "REL",
        math::table::REGULATION_PRICE_CENTS,
        2000,
        &testkit::fixture::BLOCKS_OF_2000_ROWS,
    )
}

/// Play money of every player of these runs: nobody runs out.
pub const START_CENTS: i64 = 1_000_000_000;
/// The operator token of the servers started here.
pub const OPERATOR_TOKEN: &str = "reliability-operator-token-0123456789";

/// A database for one part: a SQLite file in a temp folder, or a fresh
/// PostgreSQL database from the test kit (dropped at the end unless
/// `--keep`).
pub struct Database {
    pub url: String,
    pub backend: Backend,
    /// Held for its drop, which drops the database.
    _pg: Option<testkit::pg::TestDb>,
    pub dir: TempDir,
}

impl Database {
    /// `Ok(None)` when PostgreSQL is unreachable and not required.
    pub fn create(args: &ReliabilityArgs, backend: Backend, label: &str) -> anyhow::Result<Option<Database>> {
        let dir = TempDir::new(label, args.keep)?;
        std::fs::write(dir.path.join("table.toml"), table())?;
        match backend {
            Backend::Sqlite => {
                let url = testkit::serve::sqlite_url(&dir.path, "rel.db");
                Ok(Some(Database { url, backend, _pg: None, dir }))
            }
            Backend::Postgres => {
                let prefix = format!("as_capone_rel_{}", label.replace('-', "_"));
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
                let created =
                    rt.block_on(testkit::pg::TestDb::create_on(&args.pg_admin, args.require_postgres, &prefix));
                let Some(mut pg) = created.map_err(anyhow::Error::msg)? else { return Ok(None) };
                if args.keep {
                    pg.keep();
                }
                Ok(Some(Database { url: pg.url.clone(), backend, _pg: Some(pg), dir }))
            }
        }
    }

    pub fn sqlite_file(&self) -> Option<PathBuf> {
        match self.backend {
            Backend::Sqlite => server::sqlite_path(&self.url),
            Backend::Postgres => None,
        }
    }

    pub fn key_file(&self) -> PathBuf {
        testkit::serve::key_file(&self.dir.path)
    }

    /// The server's configuration, for in-process checks of the ledger and
    /// the audit chain.
    pub fn config(&self) -> server::Config {
        server::Config {
            listen: "127.0.0.1:0".into(),
            db: self.url.clone(),
            demo_token: String::new(),
            key_file: Some(self.key_file()),
            allow_non_regulation_table: true,
            start_balance_cents: START_CENTS as u64,
            stake_limit_required: false,
            ..Default::default()
        }
    }
}

/// A running `as-capone serve` child process of a run (the test kit's:
/// killed when dropped).
pub type Server = testkit::serve::Server;

/// Starts this executable's `serve` on port 0 with the run's table,
/// database, key, play money and operator token, then `extra`, and waits
/// (at most 120 s) for its start line.
pub fn start_server(db: &Database, extra: &[&str]) -> anyhow::Result<Server> {
    let exe = std::env::current_exe()?;
    let mut command = Command::new(exe);
    command
        .arg("serve")
        .args(["--listen", "127.0.0.1:0", "--allow-non-regulation-table", "--stake-limit-required", "false", "--table"])
        .arg(db.dir.path.join("table.toml"))
        .arg("--db")
        .arg(&db.url)
        .arg("--key-file")
        .arg(db.key_file())
        .args(["--start-balance-cents", &START_CENTS.to_string(), "--demo-token", ""])
        .args(["--operator-tokens", OPERATOR_TOKEN])
        .args(extra)
        .env("RUST_LOG", "info")
        .env_remove("AS_CAPONE_CONFIG");
    let spawned = testkit::serve::Spawned::new(&mut command).context("starting as-capone serve")?;
    spawned.try_wait_listening(None, Duration::from_secs(120)).map_err(anyhow::Error::msg)
}

/// The ledger and the audit chain, checked in-process on a database no
/// server is writing (after a kill, before the restart).
pub async fn check_ledger_and_audit(db: &Database) -> anyhow::Result<(server::LedgerCheck, server::AuditCheck)> {
    let config = db.config();
    let (keys, _) = server::Keyring::load(&config, None)?;
    let store = server::Store::open(&config, Arc::new(server::Metrics::new()), keys).await?;
    let ledger = store.check_ledger().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let audit = store.check_audit_chain().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    store.close().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((ledger, audit))
}

/// Totals of the operator's report over every emission (what
/// `as-capone report --db URL --json` prints).
pub async fn report_totals(url: &str) -> anyhow::Result<Value> {
    let reports = server::report_from(url, None).await?;
    let mut t = serde_json::Map::new();
    for r in &reports {
        let v = serde_json::to_value(&r.totals)?;
        for (k, x) in v.as_object().into_iter().flatten() {
            let sum = t.get(k).and_then(Value::as_i64).unwrap_or(0) + x.as_i64().unwrap_or(0);
            t.insert(k.clone(), json!(sum));
        }
    }
    Ok(Value::Object(t))
}

/// The `p`-quantile (0..=1) of microsecond samples, in milliseconds.
pub fn quantile_ms(v: &mut [u32], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i] as f64 / 1000.0
}

pub use testkit::steer::next_action;
