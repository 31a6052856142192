//! [`SqliteWriter`]: the write half of SQLite, a channel to the writer
//! thread, which runs the requests waiting as one transaction (group
//! commit) and answers them once it is durable.

use super::connect::{
    checkpointer, connect_options, create_private, exec, finish_checkpoint, lock_file, write_connection,
};
use super::memory::WriterState;
use super::unit::SqliteUnit;
use crate::config::Config;
use crate::keys::Keyring;
use crate::metrics::Metrics;
use crate::store::clock::now_ms;
use crate::store::db::Db;
use crate::store::error::sqlite_error;
use anyhow::Context as _;
use domain::error::{AppError, StoreError};
use domain::usecase::{self, Done, Op};
use rusqlite::Connection;
use sqlx::Connection as _;
use sqlx::sqlite::{SqliteConnection, SqlitePool, SqlitePoolOptions};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// An opened SQLite database.
pub(crate) struct Opened {
    pub read: SqlitePool,
    pub writer: SqliteWriter,
    pub description: String,
}

/// Opens (creating and migrating) the database and starts the writer.
pub(crate) async fn open(config: &Config, metrics: Arc<Metrics>, keys: Arc<Keyring>) -> anyhow::Result<Opened> {
    let opts = connect_options(&config.db)?;
    let file = opts.get_filename().to_path_buf();
    let path = file.display().to_string();
    let lock = lock_file(&path)?;
    create_private(&file).with_context(|| format!("cannot create the SQLite database {path}"))?;
    let mut migrate = SqliteConnection::connect_with(&opts)
        .await
        .with_context(|| format!("cannot open the SQLite database {path}"))?;
    crate::store::schema::migrate_sqlite(&mut migrate).await?;
    migrate.close().await.context("closing the migrations' connection")?;
    let conn = write_connection(&file).with_context(|| format!("cannot open the SQLite database {path} to write"))?;
    let read = SqlitePoolOptions::new()
        .max_connections(config.read_connections)
        .min_connections(1)
        .acquire_timeout(Duration::from_millis(config.db_acquire_timeout_ms))
        .connect_with(opts.clone())
        .await
        .context("read pool")?;
    let state = WriterState::load(&Db::Sqlite(read.clone()), keys).await?;
    let finish = Arc::new(AtomicBool::new(false));
    let checkpoints = tokio::spawn(checkpointer(read.clone(), finish.clone(), metrics.clone()));
    let (tx, rx) = mpsc::channel(4096);
    let (stopped_tx, stopped) = oneshot::channel();
    let cap = config.batch_cap();
    std::thread::Builder::new()
        .name("sqlite-writer".into())
        .spawn(move || {
            writer_loop(conn, rx, state, cap, &metrics, &finish);
            let _ = stopped_tx.send(());
        })
        .context("starting the writer thread")?;
    let description = format!(
        "SQLite {path} (WAL, synchronous=FULL, {})",
        if config.group_commit { format!("group commit up to {cap}") } else { "one transaction per request".into() }
    );
    let writer = SqliteWriter {
        sender: Mutex::new(Some(tx)),
        stopped: tokio::sync::Mutex::new(Some(stopped)),
        checkpoints: Mutex::new(Some(checkpoints)),
        lock: Mutex::new(Some(lock)),
    };
    Ok(Opened { read, writer, description })
}

/// The write half: a channel to the writer thread.
pub(crate) struct SqliteWriter {
    sender: Mutex<Option<mpsc::Sender<Job>>>,
    /// Told when the writer thread has committed its queue and closed the
    /// connection.
    stopped: tokio::sync::Mutex<Option<oneshot::Receiver<()>>>,
    checkpoints: Mutex<Option<tokio::task::JoinHandle<()>>>,
    lock: Mutex<Option<std::fs::File>>,
}

pub(super) struct Job {
    pub(super) op: Op,
    pub(super) reply: oneshot::Sender<Result<Done, AppError>>,
}

impl SqliteWriter {
    pub async fn write(&self, op: Op) -> Result<Done, AppError> {
        let sender = self.sender.lock().expect("writer lock").clone().ok_or(StoreError::ShuttingDown)?;
        let (reply, rx) = oneshot::channel();
        sender.send(Job { op, reply }).await.map_err(|_| StoreError::ShuttingDown)?;
        rx.await.map_err(|_| AppError::internal("the writer stopped before answering"))?
    }

    /// Stops taking writes, lets the writer commit what is queued, and
    /// releases the file.
    pub async fn close(&self) -> Result<(), AppError> {
        // Dropping the sender lets the writer drain its queue and stop.
        self.sender.lock().expect("writer lock").take();
        if let Some(stopped) = self.stopped.lock().await.take() {
            stopped.await.map_err(|_| AppError::internal("the writer thread ended abnormally"))?;
        }
        if let Some(task) = self.checkpoints.lock().expect("checkpoint lock").take() {
            task.abort();
        }
        self.lock.lock().expect("file lock").take();
        Ok(())
    }
}

/// The writer thread: takes every request waiting (up to `cap`), runs
/// them in one transaction, answers them once it is durable; stops when
/// the channel is closed and empty.
fn writer_loop(
    mut conn: Connection,
    mut rx: mpsc::Receiver<Job>,
    mut state: WriterState,
    cap: usize,
    metrics: &Metrics,
    finish: &AtomicBool,
) {
    let mut jobs: Vec<Job> = Vec::with_capacity(cap);
    while let Some(first) = rx.blocking_recv() {
        jobs.push(first);
        while jobs.len() < cap {
            match rx.try_recv() {
                Ok(job) => jobs.push(job),
                Err(_) => break,
            }
        }
        let started = Instant::now();
        let n = jobs.len();
        let results = run_batch(&mut conn, &mut state, &jobs);
        metrics.commit_batch_size.observe(n as f64);
        metrics.commit_seconds.observe(started.elapsed().as_secs_f64());
        for (job, result) in jobs.drain(..).zip(results) {
            if let Ok(Done { effect: Some(effect), .. }) = &result {
                metrics.count(*effect);
            }
            // The client may have gone away; the write stands either way.
            let _ = job.reply.send(result);
        }
        if finish.swap(false, Ordering::Relaxed) {
            finish_checkpoint(&conn, metrics);
        }
    }
    if let Err((_, e)) = conn.close() {
        tracing::warn!(error = %e, "closing the write connection");
    }
    tracing::info!("writer stopped");
}

/// One transaction for all `jobs`; answers are released only after the
/// COMMIT is durable.
///
/// First without savepoints: SQLite copies every page a savepoint's writes
/// touch into its sub-journal, a copy a batch almost never needs (a
/// request's unit fails after its first write only on a stale guard or a
/// broken constraint, never in normal play). If one does, the whole
/// transaction is rolled back and the same jobs run again, each in its own
/// savepoint, so that only the failed one is undone. Running them again is
/// safe: a unit decides from the database, the op and `now` alone (its
/// random values were drawn before it was queued), and nothing of the
/// first run was committed or answered.
pub(super) fn run_batch(conn: &mut Connection, state: &mut WriterState, jobs: &[Job]) -> Vec<Result<Done, AppError>> {
    let now = now_ms();
    match try_batch(conn, state, jobs, now, false) {
        Some(results) => results,
        None => try_batch(conn, state, jobs, now, true).expect("with savepoints a batch always ends"),
    }
}

/// [`run_batch`]'s one attempt; `None` when, without savepoints, a unit
/// failed after writing (the transaction is then rolled back).
pub(super) fn try_batch(
    conn: &mut Connection,
    state: &mut WriterState,
    jobs: &[Job],
    now: i64,
    savepoints: bool,
) -> Option<Vec<Result<Done, AppError>>> {
    let outcome = (|| -> Result<Option<Vec<Result<Done, AppError>>>, rusqlite::Error> {
        exec(conn, "BEGIN IMMEDIATE")?;
        let mut results = Vec::with_capacity(jobs.len());
        for job in jobs {
            let mut unit = SqliteUnit { conn: &mut *conn, state: &mut *state, savepoints, wrote: false, open: false };
            let result = now_or_never(usecase::run(&mut unit, &job.op, now))
                .unwrap_or_else(|| Err(AppError::internal("a unit on the SQLite writer waited")));
            let (wrote, open) = (unit.wrote, unit.open);
            if result.is_err() && wrote {
                if !savepoints {
                    // Undo the whole batch and run it again with savepoints.
                    exec(conn, "ROLLBACK")?;
                    state.reload(conn);
                    return Ok(None);
                }
                // Only this request's writes are undone; the memory, which
                // may hold some of them, starts again from the database.
                if open {
                    exec(conn, "ROLLBACK TO job")?;
                    exec(conn, "RELEASE job")?;
                }
                state.reload(conn);
            }
            results.push(result);
        }
        exec(conn, "COMMIT")?;
        Ok(Some(results))
    })();
    match outcome {
        Ok(results) => results,
        Err(e) => {
            // Nothing of this batch is durable: forget what memory says.
            if !conn.is_autocommit()
                && let Err(e) = conn.execute_batch("ROLLBACK")
            {
                tracing::error!(error = %e, "rolling back a failed batch");
            }
            state.reload(conn);
            let err = AppError::Storage(sqlite_error(e));
            Some(jobs.iter().map(|_| Err(err.clone())).collect())
        }
    }
}

/// The output of a future that is ready at its first poll; `None` if it
/// would wait. The SQLite units never wait (their statements run on the
/// writer's own thread), so the shared `async` use cases complete at once.
fn now_or_never<F: std::future::Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(output) => Some(output),
        std::task::Poll::Pending => None,
    }
}
