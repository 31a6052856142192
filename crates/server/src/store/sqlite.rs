//! The SQLite shell: one file, one process, durable and fast.
//!
//! - WAL journal and `synchronous=FULL`: a COMMIT is on disk before its
//!   answers leave ("Nothing is shown to a player before it is durable").
//! - **Group commit**: one writer task owns the one write connection and is
//!   fed by a channel. It takes every pending write request (up to
//!   `group_commit_max`), runs each as a [`Unit`] inside its own SAVEPOINT
//!   of one transaction (a failed request rolls back only its savepoint),
//!   COMMITs once (one disk sync for all), then answers them all. With
//!   `group_commit = false` every request is its own transaction.
//! - **Memory**: sqlx runs a SQLite connection on a thread of its own, so
//!   every statement is a round trip between threads. The writer keeps what
//!   only it changes in memory (sold tickets' games, players' balances, the
//!   sale queue, the audit chain's head) and writes each unit's [`Plan`] as
//!   ONE script. That memory is right only because this task is the only
//!   writer of the file: a lock file keeps a second process out (several
//!   processes share a PostgreSQL database instead). It is dropped and
//!   reloaded whenever a write fails, and every write is guarded anyway
//!   (see [`super::plan`]), so stale memory fails loudly, never silently.
//! - Reads use a separate pool of connections, which WAL runs beside the
//!   writer.
//!
//! The rules are not here: the use cases and decisions are
//! [`crate::core`]'s, shared with PostgreSQL.

use super::audit::{self, Head};
use super::plan::{Plan, SQLITE_GUARD_TABLE};
use super::reads::{
    ACCOUNT_OF_PLAYER, ACTION_SELECT, FOR_SALE_SELECT, IDEMPOTENCY_SELECT, LIMITS_SELECT, LOGIN_OWNER_SELECT,
    LimitsTuple, PAPER_SELECT, PASSWORD_HASH_SELECT, TICKET_COLUMNS, TICKET_FROM, USAGE_SELECT, for_sale, limits_row,
    paper_row, paper_where, stored_answer, ticket_row,
};
use super::{Db, bind_values};
use crate::config::Config;
use crate::core::usecase::PaperKey;
use crate::core::usecase::{self, Done, Op};
use crate::core::{
    Account, AccountId, Changes, ForSale, LimitsRow, PaperRow, PlayerId, PlayerWrite, StoredAnswer, TicketId,
    TicketRow, Unit, Usage,
};
use crate::error::{AppError, StoreError};
use crate::keys::Keyring;
use crate::metrics::Metrics;
use anyhow::Context;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{AssertSqlSafe, Connection};
use std::collections::{HashMap, VecDeque};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Connection options from a URL: `sqlite://PATH`, `sqlite:PATH` or a bare path.
fn connect_options(url: &str) -> anyhow::Result<SqliteConnectOptions> {
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

/// An opened SQLite database.
pub(super) struct Opened {
    pub read: SqlitePool,
    pub writer: SqliteWriter,
    pub description: String,
}

/// Opens (creating and migrating) the database and starts the writer.
pub(super) async fn open(config: &Config, metrics: Arc<Metrics>, keys: Arc<Keyring>) -> anyhow::Result<Opened> {
    let opts = connect_options(&config.db)?;
    let path = opts.get_filename().display().to_string();
    let lock = lock_file(&path)?;
    let mut conn = SqliteConnection::connect_with(&opts)
        .await
        .with_context(|| format!("cannot open the SQLite database {path}"))?;
    sqlx::migrate!("./migrations/sqlite").run(&mut conn).await.context("database migrations")?;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&mut conn).await?;
    let sync: i64 = sqlx::query_scalar("PRAGMA synchronous").fetch_one(&mut conn).await?;
    anyhow::ensure!(mode.eq_ignore_ascii_case("wal"), "SQLite refused WAL mode (journal_mode={mode})");
    anyhow::ensure!(sync == 2, "SQLite refused synchronous=FULL (synchronous={sync})");
    sqlx::query(SQLITE_GUARD_TABLE).execute(&mut conn).await?;
    let read = SqlitePoolOptions::new()
        .max_connections(config.read_connections)
        .min_connections(1)
        .acquire_timeout(Duration::from_millis(config.db_acquire_timeout_ms))
        .connect_with(opts.clone())
        .await
        .context("read pool")?;
    let state = WriterState::load(&Db::Sqlite(read.clone()), keys).await?;
    let checkpoints = tokio::spawn(checkpointer(read.clone()));
    let (tx, rx) = mpsc::channel(4096);
    let cap = config.batch_cap();
    let task = tokio::spawn(writer_loop(conn, rx, state, cap, metrics));
    let description = format!(
        "SQLite {path} (WAL, synchronous=FULL, {})",
        if config.group_commit { format!("group commit up to {cap}") } else { "one transaction per request".into() }
    );
    let writer = SqliteWriter {
        sender: Mutex::new(Some(tx)),
        task: tokio::sync::Mutex::new(Some(task)),
        checkpoints: Mutex::new(Some(checkpoints)),
        lock: Mutex::new(Some(lock)),
    };
    Ok(Opened { read, writer, description })
}

/// `PATH.lock`, locked for as long as the server runs: the writer's memory
/// is right only while it is the file's only writer.
fn lock_file(path: &str) -> anyhow::Result<std::fs::File> {
    let lock_path = format!("{path}.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("cannot create the lock file {lock_path}"))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "another as-capone process is serving {path}: a SQLite database serves one process \
             (run several processes on PostgreSQL: --db postgres://...)"
        ),
        Err(std::fs::TryLockError::Error(e)) => Err(e).with_context(|| format!("cannot lock {lock_path}")),
    }
}

/// Copies the WAL into the database file twice a second, on a read
/// connection: a PASSIVE checkpoint never blocks the writer, so its disk
/// syncs stay out of the players' answers.
async fn checkpointer(pool: SqlitePool) {
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&pool).await {
            tracing::warn!(error = %e, "WAL checkpoint");
        }
    }
}

/// The write half: a channel to the writer task.
pub(super) struct SqliteWriter {
    sender: Mutex<Option<mpsc::Sender<Job>>>,
    task: tokio::sync::Mutex<Option<JoinHandle<()>>>,
    checkpoints: Mutex<Option<JoinHandle<()>>>,
    lock: Mutex<Option<std::fs::File>>,
}

struct Job {
    op: Op,
    reply: oneshot::Sender<Result<Done, AppError>>,
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
        if let Some(task) = self.task.lock().await.take() {
            task.await.map_err(|e| AppError::internal(format!("writer task: {e}")))?;
        }
        if let Some(task) = self.checkpoints.lock().expect("checkpoint lock").take() {
            task.abort();
        }
        self.lock.lock().expect("file lock").take();
        Ok(())
    }
}

/// Most rows remembered; past that the memory starts again empty.
const CACHE_LIMIT: usize = 200_000;

/// What only the writer changes, kept in memory (see the module's doc).
struct WriterState {
    keys: Arc<Keyring>,
    audit_head: Head,
    /// Sold, unfinished tickets by serial, as last written.
    tickets: HashMap<String, TicketRow>,
    accounts: HashMap<PlayerId, Account>,
    /// Players' limits (`None`: the player set none), as last read or written.
    limits: HashMap<PlayerId, Option<LimitsRow>>,
    /// The next unsold tickets, in sale order.
    for_sale: VecDeque<ForSale>,
}

impl WriterState {
    async fn load(db: &Db, keys: Arc<Keyring>) -> Result<WriterState, StoreError> {
        Ok(WriterState {
            keys,
            audit_head: audit::head(db).await?,
            tickets: HashMap::new(),
            accounts: HashMap::new(),
            limits: HashMap::new(),
            for_sale: VecDeque::new(),
        })
    }

    async fn reload(&mut self, conn: &mut SqliteConnection) {
        self.tickets.clear();
        self.accounts.clear();
        self.limits.clear();
        self.for_sale.clear();
        match sqlx::query_as(audit::HEAD_SELECT).fetch_optional(&mut *conn).await {
            Ok(row) => self.audit_head = Head::stored(row),
            Err(e) => tracing::error!(error = %e, "reloading the audit chain's head"),
        }
    }

    /// What the memory learns from a unit written in the transaction.
    fn written(&mut self, changes: &Changes) {
        if let Some(sale) = &changes.sale
            && self.for_sale.front().is_some_and(|f| f.ticket_id == sale.ticket_id)
        {
            self.for_sale.pop_front();
        }
        if let Some(g) = &changes.game {
            if g.row.ticket.game.is_finished() {
                self.tickets.remove(&g.row.ticket.serial);
            } else {
                if self.tickets.len() >= CACHE_LIMIT {
                    self.tickets.clear();
                }
                self.tickets.insert(g.row.ticket.serial.clone(), g.row.clone());
            }
        }
        if let Some(b) = changes.movement.as_ref().and_then(|m| m.player_balance)
            && let Some(a) = self.accounts.get_mut(&b.player)
        {
            a.balance_cents = b.after;
        }
        if let Some(crate::core::RetailWrite::Owner { serial, .. }) = &changes.retail {
            self.tickets.remove(serial);
        }
        if changes.close.is_some() {
            // Tickets of an emission whose sale ended are no longer for sale.
            self.for_sale.clear();
        }
        if let Some(PlayerWrite::Limits { player, row, .. }) = &changes.player {
            self.limits.insert(*player, Some(*row));
        }
    }
}

async fn writer_loop(
    mut conn: SqliteConnection,
    mut rx: mpsc::Receiver<Job>,
    mut state: WriterState,
    cap: usize,
    metrics: Arc<Metrics>,
) {
    let mut jobs: Vec<Job> = Vec::with_capacity(cap);
    while rx.recv_many(&mut jobs, cap).await > 0 {
        let started = Instant::now();
        let n = jobs.len();
        let results = run_batch(&mut conn, &mut state, &jobs).await;
        metrics.commit_batch_size.observe(n as f64);
        metrics.commit_seconds.observe(started.elapsed().as_secs_f64());
        for (job, result) in jobs.drain(..).zip(results) {
            if let Ok(Done { effect: Some(effect), .. }) = &result {
                metrics.count(*effect);
            }
            // The client may have gone away; the write stands either way.
            let _ = job.reply.send(result);
        }
    }
    if let Err(e) = conn.close().await {
        tracing::warn!(error = %e, "closing the write connection");
    }
    tracing::info!("writer stopped");
}

/// One transaction for all `jobs`, each in its own savepoint; answers are
/// released only after the COMMIT is durable.
async fn run_batch(conn: &mut SqliteConnection, state: &mut WriterState, jobs: &[Job]) -> Vec<Result<Done, AppError>> {
    let outcome: Result<Vec<Result<Done, AppError>>, sqlx::Error> = async {
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        let now = super::now_ms();
        let mut results = Vec::with_capacity(jobs.len());
        for job in jobs {
            let mut unit = SqliteUnit { conn: &mut tx, state: &mut *state, savepoint: false };
            let result = usecase::run(&mut unit, &job.op, now).await;
            if result.is_err() && unit.savepoint {
                // Only this request's writes are undone; the memory, which
                // may hold some of them, starts again from the database.
                sqlx::query("ROLLBACK TO job; RELEASE job").execute(&mut *tx).await?;
                state.reload(&mut tx).await;
            }
            results.push(result);
        }
        tx.commit().await?;
        Ok(results)
    }
    .await;
    match outcome {
        Ok(results) => results,
        Err(e) => {
            // Nothing of this batch is durable: forget what memory says.
            state.reload(conn).await;
            let err = AppError::Storage(StoreError::from(e));
            jobs.iter().map(|_| Err(err.clone())).collect()
        }
    }
}

/// One request's unit of work: a savepoint of the writer's transaction,
/// opened by its first write and released by its last, and the writer's
/// memory. Released at once, so that savepoints never nest: SQLite copies
/// every page a write touches into a sub-journal for each open savepoint.
struct SqliteUnit<'a> {
    conn: &'a mut SqliteConnection,
    state: &'a mut WriterState,
    /// A savepoint is open.
    savepoint: bool,
}

impl SqliteUnit<'_> {
    /// `SAVEPOINT job;` before the unit's first write.
    fn savepoint_prefix(&mut self) -> &'static str {
        if std::mem::replace(&mut self.savepoint, true) { "" } else { "SAVEPOINT job;\n" }
    }
}

impl Unit for SqliteUnit<'_> {
    async fn account(&mut self, player: PlayerId) -> Result<Option<Account>, StoreError> {
        if let Some(a) = self.state.accounts.get(&player) {
            return Ok(Some(*a));
        }
        let row: Option<(i64, i64)> =
            sqlx::query_as(ACCOUNT_OF_PLAYER).bind(player).fetch_optional(&mut *self.conn).await?;
        let account = row.map(|(id, balance_cents)| Account { player, id, balance_cents });
        if let Some(a) = account {
            if self.state.accounts.len() >= CACHE_LIMIT {
                self.state.accounts.clear();
            }
            self.state.accounts.insert(player, a);
        }
        Ok(account)
    }

    async fn idempotency(&mut self, player: PlayerId, key: &str) -> Result<Option<StoredAnswer>, StoreError> {
        let row = sqlx::query_as(IDEMPOTENCY_SELECT).bind(player).bind(key).fetch_optional(&mut *self.conn).await?;
        Ok(stored_answer(row))
    }

    async fn next_for_sale(&mut self) -> Result<Option<ForSale>, StoreError> {
        if self.state.for_sale.is_empty() {
            // The writer is the only one to sell: these stay unsold until it does.
            let sql = format!("{FOR_SALE_SELECT}LIMIT 1024");
            let rows = sqlx::query(AssertSqlSafe(sql)).fetch_all(&mut *self.conn).await?;
            for row in &rows {
                let next = for_sale(row, &self.state.keys)?;
                self.state.for_sale.push_back(next);
            }
        }
        Ok(self.state.for_sale.front().cloned())
    }

    async fn ticket(&mut self, serial: &str) -> Result<Option<TicketRow>, StoreError> {
        if let Some(t) = self.state.tickets.get(serial) {
            return Ok(Some(t.clone()));
        }
        let sql = format!("SELECT {TICKET_COLUMNS}{TICKET_FROM}WHERE t.serial = $1");
        match sqlx::query(AssertSqlSafe(sql)).bind(serial).fetch_optional(&mut *self.conn).await? {
            Some(row) => Ok(Some(ticket_row(&row, &self.state.keys)?)),
            None => Ok(None),
        }
    }

    async fn paper(&mut self, key: &PaperKey) -> Result<Option<PaperRow>, StoreError> {
        let (cond, value) = paper_where(key);
        let sql = format!("{PAPER_SELECT}{cond}");
        match sqlx::query(AssertSqlSafe(sql)).bind(value).fetch_optional(&mut *self.conn).await? {
            Some(row) => Ok(Some(paper_row(&row, &self.state.keys)?)),
            None => Ok(None),
        }
    }

    async fn stored_action(&mut self, ticket: TicketId, seq: u64) -> Result<Option<StoredAnswer>, StoreError> {
        let row = sqlx::query_as(ACTION_SELECT).bind(ticket).bind(seq as i64).fetch_optional(&mut *self.conn).await?;
        Ok(stored_answer(row))
    }

    async fn insert_player(
        &mut self,
        token_hash: &str,
        name: Option<&str>,
        now: i64,
    ) -> Result<(PlayerId, AccountId), StoreError> {
        let sql =
            format!("{}INSERT INTO accounts (name, kind) VALUES ($1, 'player') RETURNING id", self.savepoint_prefix());
        let account: i64 = sqlx::query_scalar(AssertSqlSafe(sql))
            .bind(format!("player:{token_hash}"))
            .fetch_one(&mut *self.conn)
            .await?;
        let player: i64 = sqlx::query_scalar(
            "INSERT INTO players (token_hash, name, account_id, created_ms) VALUES ($1, $2, $3, $4) RETURNING id",
        )
        .bind(token_hash)
        .bind(name)
        .bind(account)
        .bind(now)
        .fetch_one(&mut *self.conn)
        .await?;
        self.state.accounts.insert(player, Account { player, id: account, balance_cents: 0 });
        Ok((player, account))
    }

    async fn limits(&mut self, player: PlayerId) -> Result<Option<LimitsRow>, StoreError> {
        if let Some(l) = self.state.limits.get(&player) {
            return Ok(*l);
        }
        let row: Option<LimitsTuple> =
            sqlx::query_as(LIMITS_SELECT).bind(player).fetch_optional(&mut *self.conn).await?;
        let limits = row.map(limits_row);
        if self.state.limits.len() >= CACHE_LIMIT {
            self.state.limits.clear();
        }
        self.state.limits.insert(player, limits);
        Ok(limits)
    }

    async fn usage(&mut self, player: PlayerId, day_since: i64, week_since: i64) -> Result<Usage, StoreError> {
        let (tickets_today, spent_week_cents): (i64, i64) = sqlx::query_as(USAGE_SELECT)
            .bind(player)
            .bind(day_since)
            .bind(week_since)
            .fetch_one(&mut *self.conn)
            .await?;
        Ok(Usage { tickets_today, spent_week_cents })
    }

    async fn login_owner(&mut self, login: &str) -> Result<Option<PlayerId>, StoreError> {
        Ok(sqlx::query_scalar(LOGIN_OWNER_SELECT).bind(login).fetch_optional(&mut *self.conn).await?)
    }

    async fn password_hash(&mut self, player: PlayerId) -> Result<Option<String>, StoreError> {
        let hash: Option<Option<String>> =
            sqlx::query_scalar(PASSWORD_HASH_SELECT).bind(player).fetch_optional(&mut *self.conn).await?;
        Ok(hash.flatten())
    }

    async fn apply(&mut self, changes: &Changes) -> Result<(), StoreError> {
        let seal = changes.audit.as_ref().map(|a| self.state.audit_head.seal(a));
        let plan = Plan::of(changes, seal.as_ref());
        let script = plan.sqlite_script(self.savepoint_prefix(), "RELEASE job;");
        let done = bind_values!(sqlx::query(AssertSqlSafe(script)), plan.values()).execute(&mut *self.conn).await;
        if let Err(e) = done {
            return Err(match &e {
                sqlx::Error::Database(d) if d.message().contains("guard_failed") => {
                    StoreError::Stale(format!("a guarded write changed no row: {d}"))
                }
                _ => StoreError::from(e),
            });
        }
        self.savepoint = false;
        if let Some(seal) = &seal {
            self.state.audit_head = Head::after(seal);
        }
        self.state.written(changes);
        Ok(())
    }
}
