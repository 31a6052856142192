//! What every part runs on: a database in a temporary folder, the real
//! `as-capone serve` started on it as a child, and the checks of its
//! ledger, audit chain and operator's figures.

use super::args::{Backend, ReliabilityArgs};
use anyhow::Context;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

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
/// regulation's price ([`math::REGULATION_PRICE_CENTS`]).
pub fn table() -> String {
    testkit::table_toml("REL", math::REGULATION_PRICE_CENTS, 2000, &testkit::BLOCKS_OF_2000_ROWS)
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
    _pg: Option<testkit::TestDb>,
    pub dir: TempDir,
}

impl Database {
    /// `Ok(None)` when PostgreSQL is unreachable and not required.
    pub fn create(args: &ReliabilityArgs, backend: Backend, label: &str) -> anyhow::Result<Option<Database>> {
        let dir = TempDir::new(label, args.keep)?;
        std::fs::write(dir.path.join("table.toml"), table())?;
        match backend {
            Backend::Sqlite => {
                let url = testkit::sqlite_url(&dir.path, "rel.db");
                Ok(Some(Database { url, backend, _pg: None, dir }))
            }
            Backend::Postgres => {
                let prefix = format!("as_capone_rel_{}", label.replace('-', "_"));
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
                let created = rt.block_on(testkit::TestDb::create_on(&args.pg_admin, args.require_postgres, &prefix));
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
        testkit::key_file(&self.dir.path)
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
pub type Server = testkit::Server;

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
    let spawned = testkit::Spawned::new(&mut command).context("starting as-capone serve")?;
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
