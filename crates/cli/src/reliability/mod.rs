//! `as-capone reliability <kills|soak|hostile|accounts|all>`: the fault and load
//! evidence of issue 11, run against the real `as-capone serve` binary (this
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
//! - [`accounts`]: a flood of logins keeps the server's memory bounded
//!   (503 with `Retry-After` beyond the password hashes in flight), and a
//!   password change or a logout ends the tokens it must, on each backend.
//!
//! Every part prints a text summary; `--json-out FILE` writes one JSON
//! object with every figure (what `tests/reliability.rs` asserts). The exit
//! status is non-zero when any check failed.

mod accounts;
mod guessing;
mod hostile;
mod kills;
mod shops;
mod soak;

use anyhow::Context;
use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
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
    /// every 2 s, the full hostile corpus.
    #[arg(long)]
    pub quick: bool,
    /// PostgreSQL maintenance database through which the temporary database
    /// is created and dropped (with `psql`).
    #[arg(long, env = "AS_CAPONE_TEST_PG", default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    pub pg_admin: String,
    /// Fail (instead of skipping PostgreSQL) when it is unreachable.
    #[arg(long, env = "AS_CAPONE_REQUIRE_POSTGRES", value_parser = truthy, default_value = "0")]
    pub require_postgres: bool,
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
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    pub fn hex(&mut self, bytes: usize) -> String {
        (0..bytes).map(|_| format!("{:02x}", self.next() as u8)).collect()
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

/// The prize table of these runs: blocks of 2 000 tickets, so that a
/// database starts in a moment (the tests' table).
pub const TABLE: &str = r#"
game = "As Capone"
code = "REL"
price_cents = 300
block_size = 2000

[[schedule]]
tickets = 1500
prizes_cents = { 5 = 300, 6 = 1000, 7 = 10000, 8 = 100000 }

[[schedule]]
tickets = 500
prizes_cents = { 5 = 600, 6 = 3000, 7 = 20000, 8 = 200000 }
"#;

/// Play money of every player of these runs: nobody runs out.
pub const START_CENTS: i64 = 1_000_000_000;
/// The operator token of the servers started here.
pub const OPERATOR_TOKEN: &str = "reliability-operator-token-0123456789";
/// Per-ticket price of [`TABLE`].
pub const PRICE: i64 = 300;

/// A database for one part: a SQLite file in a temp folder, or a fresh
/// PostgreSQL database (dropped at the end).
pub struct Database {
    pub url: String,
    pub backend: Backend,
    pg: Option<(String, String)>, // (admin url, database name)
    pub dir: TempDir,
}

impl Database {
    /// `Ok(None)` when PostgreSQL is unreachable and not required.
    pub fn create(args: &ReliabilityArgs, backend: Backend, label: &str) -> anyhow::Result<Option<Database>> {
        let dir = TempDir::new(label, args.keep)?;
        std::fs::write(dir.path.join("table.toml"), TABLE)?;
        match backend {
            Backend::Sqlite => {
                let url = format!("sqlite://{}", dir.path.join("rel.db").display());
                Ok(Some(Database { url, backend, pg: None, dir }))
            }
            Backend::Postgres => {
                let admin = args.pg_admin.clone();
                if let Err(e) = psql(&admin, "SELECT 1") {
                    if args.require_postgres {
                        anyhow::bail!(
                            "PostgreSQL is required (AS_CAPONE_REQUIRE_POSTGRES) and unreachable at {admin}: {e}"
                        );
                    }
                    eprintln!(
                        "skipped: PostgreSQL unreachable at {admin} ({e}); set AS_CAPONE_REQUIRE_POSTGRES=1 to fail instead"
                    );
                    return Ok(None);
                }
                let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.subsec_nanos();
                let name = format!("as_capone_rel_{}_{}_{nanos}", std::process::id(), label.replace('-', "_"));
                psql(&admin, &format!("CREATE DATABASE {name}"))?;
                let base = admin.rsplit_once('/').map(|(b, _)| b.to_string()).unwrap_or(admin.clone());
                Ok(Some(Database { url: format!("{base}/{name}"), backend, pg: Some((admin, name)), dir }))
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
        self.dir.path.join("server.key")
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
            ..Default::default()
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Some((admin, name)) = &self.pg
            && !self.dir.keep
            && let Err(e) = psql(admin, &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        {
            eprintln!("could not drop the database {name}: {e}");
        }
    }
}

/// Runs one SQL statement with `psql`.
fn psql(url: &str, sql: &str) -> anyhow::Result<String> {
    let out = Command::new("psql")
        .arg(url)
        .args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .env("PGCONNECT_TIMEOUT", "5")
        .stdin(Stdio::null())
        .output()
        .context("running psql")?;
    anyhow::ensure!(out.status.success(), "psql: {}", String::from_utf8_lossy(&out.stderr).trim());
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A running `as-capone serve` child process.
pub struct Server {
    pub child: Child,
    pub url: String,
    pub addr: String,
    pub pid: u32,
    /// ERROR and panic lines of its log after the start.
    pub errors: Arc<Mutex<Vec<String>>>,
    /// WARN lines of its log after the start.
    #[allow(dead_code)]
    pub warnings: Arc<AtomicU64>,
    pub start_ms: u128,
}

impl Server {
    /// Starts `as-capone serve` on port 0 and waits for its start line.
    pub fn start(db: &Database, extra: &[&str]) -> anyhow::Result<Server> {
        let began = Instant::now();
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .arg("serve")
            .args(["--listen", "127.0.0.1:0", "--allow-non-regulation-table", "--table"])
            .arg(db.dir.path.join("table.toml"))
            .arg("--db")
            .arg(&db.url)
            .arg("--key-file")
            .arg(db.key_file())
            .args(["--start-balance-cents", &START_CENTS.to_string(), "--demo-token", ""])
            .args(["--operator-tokens", OPERATOR_TOKEN])
            .args(extra)
            .env("RUST_LOG", "info")
            .env_remove("AS_CAPONE_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting as-capone serve")?;
        let pid = child.id();
        let stderr = child.stderr.take().context("stderr")?;
        let (tx, rx) = mpsc::channel::<String>();
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let warnings = Arc::new(AtomicU64::new(0));
        let (e2, w2) = (errors.clone(), warnings.clone());
        std::thread::spawn(move || {
            let mut started = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if started {
                    if line.contains(" ERROR ") || line.contains("panicked") {
                        let mut e = e2.lock().unwrap();
                        if e.len() < 50 {
                            e.push(line);
                        }
                    } else if line.contains(" WARN ") {
                        w2.fetch_add(1, Ordering::Relaxed);
                    }
                } else {
                    started = line.contains("listening on http://");
                    let _ = tx.send(line);
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut log = Vec::new();
        loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => {
                    if let Some(rest) = line.split("listening on http://").nth(1) {
                        let addr = rest.split([',', ' ']).next().unwrap_or_default().to_string();
                        return Ok(Server {
                            child,
                            url: format!("http://{addr}"),
                            addr,
                            pid,
                            errors,
                            warnings,
                            start_ms: began.elapsed().as_millis(),
                        });
                    }
                    log.push(line);
                }
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    anyhow::bail!("the server did not start; its log:\n{}", log.join("\n"));
                }
            }
        }
    }

    /// SIGKILL: no shutdown, no flush.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Resident memory in KiB (`VmRSS` of /proc/PID/status).
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

/// The ledger and the audit chain, checked in-process on a database no
/// server is writing (after a kill, before the restart).
pub async fn check_ledger_and_audit(db: &Database) -> anyhow::Result<(server::LedgerCheck, server::AuditCheck)> {
    let config = db.config();
    let (key, _) = server::ServerKey::load(&config)?;
    let store = server::Store::open(&config, Arc::new(server::Metrics::new()), server::Keyring::new(key, None)).await?;
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

/// The next action of a ticket: its first card, or a click on the deck.
pub fn next_action(t: &Value) -> Value {
    let seq = t["seq"].as_u64().unwrap_or(0);
    if t["phase"] == "play" {
        json!({"seq": seq, "action": "play", "card": t["hand"][0]})
    } else {
        json!({"seq": seq, "action": "draw"})
    }
}
