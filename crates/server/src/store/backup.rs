//! Backups that restore (docs/backups.md): `as-capone backup` and
//! `as-capone restore` as a library.
//!
//! - **SQLite**: an online copy through SQLite's backup API, stepping a
//!   few pages at a time while the server keeps writing. The source
//!   connection holds one read transaction across every step, so that the
//!   copy is one snapshot (WAL: the writer never waits for a reader; the
//!   WAL only grows a little until the copy ends) and the backup never
//!   starts again because the server committed meanwhile. The copy is
//!   switched out of WAL (one self-contained file), checked (`PRAGMA
//!   integrity_check`, `foreign_key_check`, the schema's migrations) and
//!   written atomically: a temporary file beside the target, synced, then
//!   renamed. A restore copies a checked backup into a new database file
//!   the same way, and refuses to replace a database (unless forced) or
//!   one a server is serving (its `FILE.lock`, even forced).
//! - **PostgreSQL**: `pg_dump --format=custom` (a consistent snapshot in one
//!   repeatable-read transaction, online), checked with `pg_restore --list`;
//!   a restore is `pg_restore --single-transaction --exit-on-error` into an
//!   empty database.
//!
//! After a restore, [`check_database`] reads the database as the server
//! would: the schema's migrations, the ledger (guarantee 3) and the audit
//! chain.

use super::audit::{self, AuditCheck};
use super::backend;
use super::db::{Db, on_db};
use super::ledger::{self, LedgerCheck};
use super::ticket_rows::{self, RowsCheck};
use crate::config::sqlite_path;
use anyhow::Context as _;
use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How an online SQLite backup steps.
#[derive(Debug, Clone, Copy)]
pub struct BackupPace {
    /// Pages copied per step.
    pub pages_per_step: i32,
    /// Pause between two steps.
    pub pause: Duration,
}

impl Default for BackupPace {
    fn default() -> BackupPace {
        BackupPace { pages_per_step: 1024, pause: Duration::from_millis(2) }
    }
}

/// What an online SQLite backup did.
#[derive(Debug, Clone)]
pub struct SqliteBackup {
    /// Pages copied (the source's page count in the snapshot).
    pub pages: u64,
    /// Steps taken.
    pub steps: u64,
    /// Size of the backup file, in bytes.
    pub bytes: u64,
    /// From the snapshot's start to the file renamed into place.
    pub elapsed: Duration,
    /// The copy's own check.
    pub check: FileCheck,
}

/// A SQLite file's own check: SQLite's integrity and foreign keys, and the
/// schema's migrations.
#[derive(Debug, Clone)]
pub struct FileCheck {
    /// The last migration applied (`_sqlx_migrations`).
    pub schema_version: i64,
    /// Migrations applied.
    pub migrations: i64,
}

/// A restored (or any) database read as the server would read it.
#[derive(Debug, Clone)]
pub struct DatabaseCheck {
    /// The last migration applied.
    pub schema_version: i64,
    pub ledger: LedgerCheck,
    pub audit: AuditCheck,
    /// Every published block's ticket rows against its published root.
    pub rows: RowsCheck,
    /// PostgreSQL: the first object of the schema that is not what the
    /// migrations make (`pg_objects.rs`); a SQLite file's schema is checked
    /// by [`check_sqlite_file`].
    pub schema_difference: Option<String>,
    /// Players, tickets sold (any channel: online, and paper sold by a
    /// shop), paper tickets printed and not sold yet (counted apart: a
    /// printed ticket is not a sale), and actions stored.
    pub players: i64,
    pub tickets_sold: i64,
    pub tickets_printed: i64,
    pub actions: i64,
}

impl DatabaseCheck {
    /// The ledger is sound, the audit chain unbroken, and every ticket row
    /// the one published.
    pub fn is_sound(&self) -> bool {
        self.schema_difference.is_none()
            && self.ledger.is_sound()
            && self.audit.first_broken.is_none()
            && self.rows.first_mismatch.is_none()
    }
}

/// A temporary name beside `target`, removed on drop unless kept.
struct TempBeside {
    path: PathBuf,
    keep: bool,
}

impl TempBeside {
    fn new(target: &Path) -> TempBeside {
        let mut name = target.as_os_str().to_owned();
        name.push(format!(".{}.tmp", hex::encode(crate::fairness::random_bytes::<6>())));
        TempBeside { path: PathBuf::from(name), keep: false }
    }

    /// Creates the file empty, mode 0600 (a database holds password hashes).
    fn create(&self) -> anyhow::Result<std::fs::File> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(&self.path).with_context(|| format!("cannot create {}", self.path.display()))
    }

    /// Syncs the file, renames it to `target` and syncs the directory.
    fn commit(mut self, target: &Path) -> anyhow::Result<()> {
        std::fs::File::open(&self.path)
            .and_then(|f| f.sync_all())
            .with_context(|| format!("cannot sync {}", self.path.display()))?;
        std::fs::rename(&self.path, target)
            .with_context(|| format!("cannot rename {} to {}", self.path.display(), target.display()))?;
        self.keep = true;
        sync_dir(target)
    }
}

impl Drop for TempBeside {
    fn drop(&mut self) {
        if !self.keep {
            for suffix in ["", "-journal", "-wal", "-shm"] {
                let mut p = self.path.as_os_str().to_owned();
                p.push(suffix);
                let _ = std::fs::remove_file(PathBuf::from(p));
            }
        }
    }
}

/// The directory of `path`, synced: a rename is durable once it is.
fn sync_dir(path: &Path) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .with_context(|| format!("cannot sync {}", dir.display()))?;
    }
    Ok(())
}

/// Refuses an existing `out` unless `force`.
fn refuse_existing(out: &Path, force: bool, what: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        force || !out.exists(),
        "{} exists: {what} never replaces a file unless given --force",
        out.display()
    );
    Ok(())
}

/// An online backup of the SQLite database `src` into the new file `out`
/// (see the module doc). The server may be running on `src` all along.
pub fn backup_sqlite(src: &Path, out: &Path, pace: BackupPace, force: bool) -> anyhow::Result<SqliteBackup> {
    anyhow::ensure!(src.is_file(), "no SQLite database file {}", src.display());
    refuse_existing(out, force, "a backup")?;
    anyhow::ensure!(pace.pages_per_step > 0, "pages per step must be at least 1");
    let began = Instant::now();
    let source = Connection::open_with_flags(src, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .with_context(|| format!("cannot open {} to read", src.display()))?;
    source.busy_timeout(Duration::from_secs(10))?;
    // One read transaction for every step: one snapshot, never restarted.
    source.execute_batch("BEGIN")?;
    source.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))?;
    let temp = TempBeside::new(out);
    drop(temp.create()?);
    let mut copy = Connection::open(&temp.path).with_context(|| format!("cannot open {}", temp.path.display()))?;
    let (pages, steps) = {
        let backup = Backup::new(&source, &mut copy)?;
        let mut steps = 0u64;
        loop {
            steps += 1;
            match backup.step(pace.pages_per_step)? {
                StepResult::Done => break,
                StepResult::More => std::thread::sleep(pace.pause),
                // The copy's own file is ours alone; the source is read in a
                // snapshot: either is busy only for a moment.
                _ => std::thread::sleep(Duration::from_millis(10)),
            }
            anyhow::ensure!(began.elapsed() < Duration::from_secs(6 * 3600), "the backup took more than 6 hours");
        }
        (backup.progress().pagecount as u64, steps)
    };
    source.execute_batch("COMMIT")?;
    drop(source);
    // One self-contained file: no WAL beside it.
    let mode: String = copy.query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))?;
    anyhow::ensure!(mode.eq_ignore_ascii_case("delete"), "the copy kept journal_mode={mode}");
    let check = check_file(&copy).with_context(|| format!("the copy {} fails its check", temp.path.display()))?;
    copy.close().map_err(|(_, e)| e)?;
    temp.commit(out)?;
    let bytes = std::fs::metadata(out)?.len();
    Ok(SqliteBackup { pages, steps, bytes, elapsed: began.elapsed(), check })
}

/// SQLite's own checks of a database, its schema's migrations, and its
/// schema object by object against what they make (schema_objects.rs).
fn check_file(conn: &Connection) -> anyhow::Result<FileCheck> {
    let mut stmt = conn.prepare("PRAGMA integrity_check")?;
    let problems: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    anyhow::ensure!(problems == ["ok"], "PRAGMA integrity_check: {}", problems.join("; "));
    let bad_keys: i64 = conn.query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| r.get(0))?;
    anyhow::ensure!(bad_keys == 0, "PRAGMA foreign_key_check: {bad_keys} rows refer to missing rows");
    let (schema_version, migrations, failed): (Option<i64>, i64, i64) = conn
        .query_row("SELECT MAX(version), COUNT(*), COUNT(*) - SUM(success) FROM _sqlx_migrations", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, Option<i64>>(2)?.unwrap_or(0)))
        })
        .context("no schema version (_sqlx_migrations): is this an as-capone database?")?;
    anyhow::ensure!(failed == 0, "{failed} migrations did not finish");
    let schema_version = schema_version.context("no migration applied: an empty database")?;
    super::schema_objects::check(conn, schema_version)?;
    Ok(FileCheck { schema_version, migrations })
}

/// Checks a SQLite file (a backup) without changing it.
pub fn check_sqlite_file(path: &Path) -> anyhow::Result<FileCheck> {
    anyhow::ensure!(path.is_file(), "no file {}", path.display());
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .with_context(|| format!("cannot open {}", path.display()))?;
    check_file(&conn).with_context(|| format!("{} fails its check", path.display()))
}

/// Restores the backup `from` as the SQLite database `db` (a new file, or
/// with `force` one no server is serving), and checks it. Returns the
/// backup's own check.
pub fn restore_sqlite(from: &Path, db: &Path, force: bool) -> anyhow::Result<FileCheck> {
    let check = check_sqlite_file(from)?;
    refuse_existing(db, force, "a restore")?;
    // A server on `db` holds its lock: never replace a database in use.
    let _lock = backend::lock_sqlite_file(&db.display().to_string())?;
    let temp = TempBeside::new(db);
    {
        let mut file = temp.create()?;
        let mut source = std::fs::File::open(from).with_context(|| format!("cannot read {}", from.display()))?;
        std::io::copy(&mut source, &mut file).with_context(|| format!("cannot copy into {}", temp.path.display()))?;
    }
    // The copy, checked as it will be served.
    check_sqlite_file(&temp.path)?;
    // A WAL left by the replaced database would be replayed into the new one.
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        match std::fs::remove_file(PathBuf::from(&p)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("cannot remove {}", Path::new(&p).display()));
            }
            _ => {}
        }
    }
    temp.commit(db)?;
    Ok(check)
}

/// Runs an outside PostgreSQL tool, its error output in the error.
fn run_tool(command: &mut Command, tool: &str) -> anyhow::Result<String> {
    let output = command.output().with_context(|| {
        format!(
            "cannot run {tool}: install the PostgreSQL client tools (at least the server's version) on PATH, or follow \
             docs/backups.md by hand"
        )
    })?;
    anyhow::ensure!(
        output.status.success(),
        "{tool} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    );
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// What a `pg_dump` did.
#[derive(Debug, Clone)]
pub struct PgDump {
    pub bytes: u64,
    /// Tables whose rows the archive holds.
    pub tables: u64,
    pub elapsed: Duration,
}

/// `pg_dump --format=custom` of the database `url` into the new file `out`
/// (written beside it, listed with `pg_restore --list`, then renamed). The
/// archive holds the password, recovery and token hashes: its file is
/// created here mode 0600, before a byte is written, and `pg_dump` writes
/// into it through its standard output (with `--file` it would create the
/// file itself, 0644 under the usual umask).
pub fn pg_dump(url: &str, out: &Path, force: bool) -> anyhow::Result<PgDump> {
    refuse_existing(out, force, "a backup")?;
    let began = Instant::now();
    let temp = TempBeside::new(out);
    let file = temp.create()?;
    run_tool(Command::new("pg_dump").arg("--format=custom").arg("--dbname").arg(url).stdout(file), "pg_dump")?;
    let tables = pg_archive_tables(&temp.path)?;
    temp.commit(out)?;
    Ok(PgDump { bytes: std::fs::metadata(out)?.len(), tables, elapsed: began.elapsed() })
}

/// The tables whose data a custom-format archive holds; an error when it
/// cannot be read or is not an as-capone database's.
fn pg_archive_tables(archive: &Path) -> anyhow::Result<u64> {
    let list = run_tool(Command::new("pg_restore").arg("--list").arg(archive), "pg_restore --list")?;
    let data: Vec<&str> = list.lines().filter(|l| !l.starts_with(';') && l.contains(" TABLE DATA ")).collect();
    anyhow::ensure!(
        data.iter().any(|l| l.contains(" _sqlx_migrations ")),
        "{} holds no schema version (_sqlx_migrations): not an as-capone database's archive",
        archive.display()
    );
    Ok(data.len() as u64)
}

/// `pg_restore` of the archive `from` into the database `url`, which must
/// exist and be empty (`createdb` it first), in one transaction: a failed
/// restore leaves it empty.
pub async fn pg_restore(from: &Path, url: &str) -> anyhow::Result<()> {
    anyhow::ensure!(from.is_file(), "no archive {}", from.display());
    pg_archive_tables(from)?;
    let pool = pg_pool(url).await?;
    let tables: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
    )
    .fetch_one(&pool)
    .await?;
    pool.close().await;
    anyhow::ensure!(
        tables == 0,
        "the database has {tables} tables: a restore goes into a new, empty database (createdb NAME), never over one"
    );
    run_tool(
        Command::new("pg_restore")
            .args(["--exit-on-error", "--single-transaction", "--no-owner", "--dbname"])
            .arg(url)
            .arg(from),
        "pg_restore",
    )?;
    Ok(())
}

/// Empties the database `url` that a refused restore went into (it was
/// empty before: [`pg_restore`] refuses one with tables).
pub async fn pg_empty(url: &str) -> anyhow::Result<()> {
    let pool = pg_pool(url).await?;
    sqlx::raw_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public").execute(&pool).await?;
    pool.close().await;
    Ok(())
}

async fn pg_pool(url: &str) -> anyhow::Result<sqlx::PgPool> {
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(10))
        .connect(url)
        .await
        .context("cannot connect to PostgreSQL")
}

/// Reads the database `url` (SQLite read-only, or PostgreSQL) as the server
/// would: schema version, ledger, audit chain and a few counts.
pub async fn check_database(url: &str) -> anyhow::Result<DatabaseCheck> {
    let db = match sqlite_path(url) {
        Some(path) => {
            anyhow::ensure!(path.is_file(), "no database file {}", path.display());
            let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).read_only(true);
            Db::Sqlite(sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).connect_with(opts).await?)
        }
        None => Db::Postgres(pg_pool(url).await?),
    };
    let checked = read_checks(&db).await;
    on_db!(&db, pool => pool.close().await);
    let mut checked = checked?;
    if sqlite_path(url).is_none() {
        checked.schema_difference = super::pg_objects::check(url).await?;
    }
    Ok(checked)
}

async fn read_checks(db: &Db) -> anyhow::Result<DatabaseCheck> {
    let storage = |e: domain::error::AppError| anyhow::anyhow!("{e}");
    type Counts = (Option<i64>, i64, i64, i64, i64);
    let (schema_version, players, tickets_sold, tickets_printed, actions): Counts = on_db!(db, pool => sqlx::query_as(
        "SELECT (SELECT MAX(version) FROM _sqlx_migrations),
                (SELECT COUNT(*) FROM accounts WHERE kind = 'player'),
                (SELECT COUNT(*) FROM tickets WHERE status IN ('sold', 'paid')),
                (SELECT COUNT(*) FROM tickets WHERE status = 'printed'),
                (SELECT COUNT(*) FROM actions)",
    )
    .fetch_one(pool)
    .await
    .context("reading the schema version and counts (is this an as-capone database?)")?);
    Ok(DatabaseCheck {
        schema_version: schema_version.context("no migration applied: an empty database")?,
        ledger: ledger::check_ledger(db).await.map_err(storage)?,
        audit: audit::check(db).await.map_err(storage)?,
        rows: ticket_rows::check(db).await.map_err(storage)?,
        schema_difference: None,
        players,
        tickets_sold,
        tickets_printed,
        actions,
    })
}
