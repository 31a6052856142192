//! The SQLite file and its connections: the read pool's options, the
//! writer's own connection (WAL, `synchronous=FULL`, checked), a new file
//! made private, the lock file that keeps a second server out, and the
//! checkpoints of the WAL.

use crate::metrics::Metrics;
use anyhow::Context as _;
use rusqlite::{Connection, OpenFlags};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqliteSynchronous};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Connection options from a URL: `sqlite://PATH`, `sqlite:PATH` or a bare path.
pub(super) fn connect_options(url: &str) -> anyhow::Result<SqliteConnectOptions> {
    if url.contains(":memory:") || url.contains("mode=memory") {
        anyhow::bail!("an in-memory SQLite database cannot be shared by the writer and the readers; give a file");
    }
    let opts = if url.starts_with("sqlite:") {
        SqliteConnectOptions::from_str(url).with_context(|| format!("bad SQLite URL {url}"))?
    } else {
        SqliteConnectOptions::new().filename(url)
    };
    Ok(opts
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // Full durability: the WAL is synced at every COMMIT.
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        // Checkpoints run on a background connection (see `checkpointer`),
        // not inside the writer's COMMITs; this is only a safety net.
        .pragma("wal_autocheckpoint", "20000")
        .busy_timeout(Duration::from_secs(10)))
}

/// Statements the writer keeps prepared: the reads and each shape of plan
/// statement its units run (a few dozen).
const STATEMENT_CACHE: usize = 256;
/// WritePlan statements with more values than this (an emission's chunks of
/// tickets) are prepared each time rather than kept.
pub(super) const CACHED_VALUES: usize = 64;

/// The writer's connection: WAL, `synchronous=FULL` (checked: a COMMIT is
/// on disk before it returns), foreign keys on.
pub(super) fn write_connection(file: &Path) -> anyhow::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(file, flags)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    // Checkpoints run on a background connection (see `checkpointer`),
    // not inside the writer's COMMITs; the automatic one is a safety net.
    // Each request's unit runs in a SAVEPOINT, and SQLite keeps the pages
    // a savepoint changes in a sub-journal: in memory, not in a temporary
    // file (whose writes were a quarter of the writer's time). It holds only
    // pages of the open transaction, never what a COMMIT makes durable.
    conn.execute_batch(
        "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 20000; \
         PRAGMA temp_store = MEMORY;",
    )?;
    let sync: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0))?;
    let keys: i64 = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?;
    let temp: i64 = conn.query_row("PRAGMA temp_store", [], |r| r.get(0))?;
    anyhow::ensure!(mode.eq_ignore_ascii_case("wal"), "SQLite refused WAL mode (journal_mode={mode})");
    anyhow::ensure!(sync == 2, "SQLite refused synchronous=FULL (synchronous={sync})");
    anyhow::ensure!(keys == 1, "SQLite refused foreign keys");
    anyhow::ensure!(temp == 2, "SQLite refused temp_store=MEMORY (temp_store={temp})");
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(conn)
}

/// A new database file, empty, readable and writable by its owner only
/// (0600: it holds password hashes and tokens' hashes); SQLite makes its
/// `-wal` and `-shm` files with the database file's mode. An existing file
/// is left as it is.
pub(super) fn create_private(file: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(file) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// `PATH.lock`, locked for as long as the server runs: the writer's memory
/// is right only while it is the file's only writer. Created 0600, as the
/// database.
pub(crate) fn lock_file(path: &str) -> anyhow::Result<std::fs::File> {
    let lock_path = format!("{path}.lock");
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&lock_path).with_context(|| format!("cannot create the lock file {lock_path}"))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "another as-capone process is serving {path}: a SQLite database serves one process \
             (run several processes on PostgreSQL: --db postgres://...)"
        ),
        Err(std::fs::TryLockError::Error(e)) => Err(e).with_context(|| format!("cannot lock {lock_path}")),
    }
}

/// How often the background connection checkpoints the WAL.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);
/// Past this many frames in the WAL (16 MiB of 4 KiB pages), the writer is
/// asked to finish a checkpoint so that the WAL starts again.
const RESTART_FRAMES: i64 = if cfg!(test) { 512 } else { 4096 };

/// Copies the WAL into the database file ten times a second, on a read
/// connection: a PASSIVE checkpoint never blocks the writer, so the bulk of
/// the copying and its disk syncs stay out of the players' answers.
///
/// Under a steady stream of commits such a checkpoint is never complete:
/// it copies the frames there were when it started, and the writer appends
/// more meanwhile. SQLite starts the WAL again from its beginning only when
/// a write transaction begins after a complete checkpoint, so the WAL grew
/// until the writer's automatic checkpoint (`wal_autocheckpoint`, 20 000
/// frames) ran inside a COMMIT, 10 to 20 ms every half second at 11 000
/// actions/s, most of it waiting for the database file's disk sync: the
/// open-loop tail (BENCHMARKS.md). So when the WAL is past
/// [`RESTART_FRAMES`], the writer is asked (`finish`) to checkpoint between
/// two batches, after answering: it copies only the frames of the last few
/// milliseconds, and its next transaction starts the WAL again. The
/// automatic checkpoint stays as a safety net that no longer runs.
pub(super) async fn checkpointer(pool: SqlitePool, finish: Arc<AtomicBool>, metrics: Arc<Metrics>) {
    let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let started = Instant::now();
        match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(&pool).await {
            Ok((_busy, log, _copied)) => {
                metrics.checkpoint_seconds.observe(started.elapsed().as_secs_f64());
                metrics.wal_frames.set(log);
                if log > RESTART_FRAMES {
                    finish.store(true, Ordering::Relaxed);
                }
            }
            Err(e) => tracing::warn!(error = %e, "WAL checkpoint"),
        }
    }
}

/// The writer's part of a checkpoint (see [`checkpointer`]): copies the
/// frames the background one left, so that the next transaction starts the
/// WAL again. Nothing else writes meanwhile, so it is complete unless a
/// reader still holds an older snapshot (the next background checkpoint
/// then asks again).
pub(super) fn finish_checkpoint(conn: &Connection, metrics: &Metrics) {
    let started = Instant::now();
    match conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
        Ok(()) => metrics.writer_checkpoint_seconds.observe(started.elapsed().as_secs_f64()),
        Err(e) => tracing::warn!(error = %e, "WAL checkpoint on the writer"),
    }
}

/// Runs a statement kept in the connection's cache.
pub(super) fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([])?;
    Ok(())
}
