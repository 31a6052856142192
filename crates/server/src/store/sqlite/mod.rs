//! The SQLite shell: one file, one process, durable and fast.
//!
//! - WAL journal and `synchronous=FULL`: a COMMIT is on disk before its
//!   answers leave ("Nothing is shown to a player before it is durable").
//! - **Group commit**: one writer thread owns the one write connection and
//!   is fed by a channel. It takes every pending write request (up to
//!   `group_commit_max`), runs each as a [`Unit`] of one transaction,
//!   COMMITs once (one disk sync for all), then answers them all. A request
//!   that fails after writing undoes only itself: the batch is then run
//!   again with each unit in its own SAVEPOINT ([`run_batch`]). With
//!   `group_commit = false` every request is its own transaction.
//! - **One thread, no hops**: the write connection is a `rusqlite` one,
//!   owned by the writer's own OS thread, which runs a whole batch
//!   synchronously: loads, each plan's statements (prepared once and kept
//!   in the connection's statement cache), COMMIT. A request crosses
//!   threads twice (to the writer and back), not once per statement as
//!   with an async driver's worker thread. The use cases are `async` (the
//!   PostgreSQL units await their database); on this connection nothing
//!   ever waits, so the writer polls each one once ([`now_or_never`]).
//! - **Memory**: the writer keeps what only it changes in memory (sold
//!   tickets' games, players' balances and limits, the sale queue, the
//!   audit chain's head). That memory is right only because this thread is
//!   the only writer of the file: a lock file keeps a second process out
//!   (several processes share a PostgreSQL database instead). It is dropped
//!   and reloaded whenever a write fails, and every write is guarded anyway
//!   (see [`super::plan`]): stale memory is never written over the
//!   database. A guarded write that finds its row changed (a change made
//!   behind the server's back) rolls the batch back, and the batch is
//!   decided again from the database ([`run_batch`]).
//! - Migrations run first on an sqlx connection; reads use sqlx's pool of
//!   connections, which WAL runs beside the writer.
//!
//! The rules are not here: the use cases and decisions are
//! [`domain`]'s, shared with PostgreSQL.

use super::Db;
use super::audit::{self, Head};
use super::plan::{Val, WritePlan};
use super::reads::{
    ACCOUNT_OF_PLAYER, ACTION_SELECT, COUNTER_SELECT, IDEMPOTENCY_SELECT, IN_PLAY_SELECT, LIMITS_SELECT,
    LOGIN_OWNER_SELECT, NEXT_FOR_SALE_SQLITE, PAPER_SELECT, PASSWORD_HASH_SELECT, TICKET_COLUMNS, TICKET_FROM,
    USAGE_SELECT, for_sale, limits_row, paper_row, paper_where, stored_answer, ticket_row,
};
use crate::config::Config;
use crate::keys::Keyring;
use crate::metrics::Metrics;
use crate::store::error::DbResult;
use anyhow::Context as _;
use domain::error::{AppError, StoreError};
use domain::limits::Counter;
use domain::usecase::{self, Done, Op};
use domain::{
    Account, AccountId, Changes, ForSale, LimitsRow, PaperRow, PlayerId, PlayerWrite, StoredAnswer, TicketId,
    TicketRow, Unit, Usage,
};
use domain::{Reserved, RoundRow, RoundState, WalletWrite};
use rusqlite::{CachedStatement, Connection, OpenFlags, OptionalExtension, Params};
use sqlx::Connection as _;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use unit::SqliteUnit;
use usecase::PaperKey;

mod unit;

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
    let file = opts.get_filename().to_path_buf();
    let path = file.display().to_string();
    let lock = lock_file(&path)?;
    create_private(&file).with_context(|| format!("cannot create the SQLite database {path}"))?;
    let mut migrate = SqliteConnection::connect_with(&opts)
        .await
        .with_context(|| format!("cannot open the SQLite database {path}"))?;
    super::schema::migrate_sqlite(&mut migrate).await?;
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

/// Statements the writer keeps prepared: the reads and each shape of plan
/// statement its units run (a few dozen).
const STATEMENT_CACHE: usize = 256;
/// WritePlan statements with more values than this (an emission's chunks of
/// tickets) are prepared each time rather than kept.
const CACHED_VALUES: usize = 64;

/// The writer's connection: WAL, `synchronous=FULL` (checked: a COMMIT is
/// on disk before it returns), foreign keys on.
fn write_connection(file: &Path) -> anyhow::Result<Connection> {
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
fn create_private(file: &Path) -> std::io::Result<()> {
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
async fn checkpointer(pool: SqlitePool, finish: Arc<AtomicBool>, metrics: Arc<Metrics>) {
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
fn finish_checkpoint(conn: &Connection, metrics: &Metrics) {
    let started = Instant::now();
    match conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
        Ok(()) => metrics.writer_checkpoint_seconds.observe(started.elapsed().as_secs_f64()),
        Err(e) => tracing::warn!(error = %e, "WAL checkpoint on the writer"),
    }
}

/// The write half: a channel to the writer thread.
pub(super) struct SqliteWriter {
    sender: Mutex<Option<mpsc::Sender<Job>>>,
    /// Told when the writer thread has committed its queue and closed the
    /// connection.
    stopped: tokio::sync::Mutex<Option<oneshot::Receiver<()>>>,
    checkpoints: Mutex<Option<tokio::task::JoinHandle<()>>>,
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
    /// The rounds of an operator's debit, by round id, with the ticket each
    /// holds, from the reservation until the round leaves `debiting`: the
    /// settlement reads no row (operator mode).
    held: HashMap<String, Reserved>,
    /// Players' operator references (set once by a launch, never changed).
    operator_refs: HashMap<PlayerId, String>,
    /// The ledger's clearing account of the operator's wallet.
    operator_wallet: Option<AccountId>,
    /// Every round of an Idempotency-Key in flight (`debiting` or
    /// `rolling_back`), so that a keyed purchase's reservation reads no row
    /// to learn that its key has none (operator mode). Loaded from the
    /// database when first asked; `None` until then, and again after a
    /// failed write or past [`CACHE_LIMIT`]: then the database answers.
    in_flight_keys: Option<InFlightKeys>,
    /// Sold rounds by ticket, from their settlement until their game ends:
    /// whose operator's wallet a prize is credited to, read from no row.
    sold_rounds: HashMap<TicketId, RoundRow>,
}

/// The rounds of an Idempotency-Key in flight: by player and key, and each
/// one's player and key by round id (a settlement names only its round).
#[derive(Default)]
struct InFlightKeys {
    by_key: HashMap<(PlayerId, String), RoundRow>,
    key_of: HashMap<String, (PlayerId, String)>,
}

impl InFlightKeys {
    /// Every keyed round in flight, from the writer's connection.
    fn load(conn: &Connection) -> Result<InFlightKeys, StoreError> {
        let mut keys = InFlightKeys::default();
        let mut stmt = conn.prepare_cached(&super::wallet::keyed_in_flight_sql()).db()?;
        let mut rows = stmt.query([]).db()?;
        while let Some(row) = rows.next().db()? {
            keys.insert(super::wallet::round_row(&super::wallet::owned_sqlite(row).db()?)?);
        }
        Ok(keys)
    }

    fn insert(&mut self, round: RoundRow) {
        if let Some(key) = &round.idempotency_key {
            self.key_of.insert(round.round.id(), (round.player, key.clone()));
            self.by_key.insert((round.player, key.clone()), round);
        }
    }

    /// Round `round` moved to `to`: still in flight, or gone from here.
    fn moved(&mut self, round: &str, to: RoundState) {
        if matches!(to, RoundState::Debiting | RoundState::RollingBack) {
            if let Some(r) = self.key_of.get(round).and_then(|k| self.by_key.get_mut(k)) {
                r.state = to;
            }
        } else if let Some(k) = self.key_of.remove(round) {
            self.by_key.remove(&k);
        }
    }
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
            held: HashMap::new(),
            operator_refs: HashMap::new(),
            in_flight_keys: None,
            sold_rounds: HashMap::new(),
            operator_wallet: match db {
                Db::Sqlite(pool) => sqlx::query_scalar("SELECT id FROM accounts WHERE name = 'house:operator_wallet'")
                    .fetch_optional(pool)
                    .await
                    .db()?,
                _ => None,
            },
        })
    }

    fn reload(&mut self, conn: &Connection) {
        self.tickets.clear();
        self.accounts.clear();
        self.limits.clear();
        self.for_sale.clear();
        self.held.clear();
        self.operator_refs.clear();
        self.in_flight_keys = None;
        self.sold_rounds.clear();
        match conn.query_row(audit::HEAD_SELECT, [], |r| Ok((r.get(0)?, r.get(1)?))).optional() {
            Ok(row) => self.audit_head = Head::stored(row),
            Err(e) => tracing::error!(error = %e, "reloading the audit chain's head"),
        }
    }

    fn remember_ref(&mut self, player: PlayerId, reference: &str) {
        if self.operator_refs.len() >= CACHE_LIMIT {
            self.operator_refs.clear();
        }
        self.operator_refs.insert(player, reference.to_string());
    }

    /// What the memory learns from a unit written in the transaction.
    fn written(&mut self, changes: &Changes) {
        if let Some(sale) = &changes.sale
            && self.for_sale.front().is_some_and(|f| f.ticket_id == sale.ticket_id)
        {
            let sold = self.for_sale.pop_front();
            let new_round = changes
                .wallet
                .iter()
                .find(|w| matches!(w, WalletWrite::NewRound { ticket_id, .. } if *ticket_id == sale.ticket_id));
            if let (Some(ticket), Some(new_round), Some(wallet_account)) = (sold, new_round, self.operator_wallet)
                && let Some((id, round)) = held_round(new_round, wallet_account)
            {
                if self.held.len() >= CACHE_LIMIT {
                    self.held.clear();
                }
                self.held.insert(id, Reserved { round, ticket });
            }
        }
        for w in &changes.wallet {
            match w {
                WalletWrite::NewRound { key: Some(_), .. } if self.in_flight_keys.is_some() => {
                    match self.operator_wallet.and_then(|account| held_round(w, account)) {
                        Some((_, round))
                            if self.in_flight_keys.as_ref().is_some_and(|k| k.by_key.len() < CACHE_LIMIT) =>
                        {
                            self.in_flight_keys.as_mut().expect("checked just above").insert(round);
                        }
                        // Not known whole any more: the database answers.
                        _ => self.in_flight_keys = None,
                    }
                }
                WalletWrite::Round { round, to, .. } => {
                    if let Some(keys) = &mut self.in_flight_keys {
                        keys.moved(round, *to);
                    }
                    if *to != RoundState::Debiting
                        && let Some(held) = self.held.remove(round)
                        && *to == RoundState::Sold
                    {
                        if self.sold_rounds.len() >= CACHE_LIMIT {
                            self.sold_rounds.clear();
                        }
                        self.sold_rounds
                            .insert(held.round.ticket_id, RoundRow { state: RoundState::Sold, ..held.round });
                    }
                }
                WalletWrite::OperatorPlayer { player, reference } => self.remember_ref(*player, reference),
                _ => {}
            }
        }
        if let Some(g) = &changes.game {
            if g.row.ticket.game.is_finished() {
                self.tickets.remove(&g.row.ticket.serial);
                self.sold_rounds.remove(&g.row.id);
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
        if let Some(domain::RetailWrite::Owner { serial, .. }) = &changes.retail {
            self.tickets.remove(serial);
        }
        if changes.close.is_some() {
            // Tickets of an emission whose sale ended are no longer for sale.
            self.for_sale.clear();
        }
        if changes.wallet.iter().any(|w| matches!(w, WalletWrite::Release { .. })) {
            // A ticket back in the pool comes before those remembered: read them again.
            self.for_sale.clear();
        }
        if let Some(PlayerWrite::Limits { player, row, .. }) = &changes.player {
            self.limits.insert(*player, Some(*row));
        }
    }
}

/// A round just reserved, by its id, as its settlement will load it.
fn held_round(new_round: &WalletWrite, wallet_account: AccountId) -> Option<(String, RoundRow)> {
    let WalletWrite::NewRound { round, ticket_id, player, operator_ref, price_cents, key, created_ms, .. } = new_round
    else {
        return None;
    };
    Some((
        round.clone(),
        RoundRow {
            round: wallet::RoundId::parse(round)?,
            ticket_id: *ticket_id,
            player: *player,
            operator_ref: operator_ref.clone(),
            price_cents: *price_cents,
            state: RoundState::Debiting,
            idempotency_key: key.clone(),
            created_ms: *created_ms,
            wallet_account,
        },
    ))
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

/// Runs a statement kept in the connection's cache.
fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([])?;
    Ok(())
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
fn run_batch(conn: &mut Connection, state: &mut WriterState, jobs: &[Job]) -> Vec<Result<Done, AppError>> {
    let now = super::now_ms();
    match try_batch(conn, state, jobs, now, false) {
        Some(results) => results,
        None => try_batch(conn, state, jobs, now, true).expect("with savepoints a batch always ends"),
    }
}

/// [`run_batch`]'s one attempt; `None` when, without savepoints, a unit
/// failed after writing (the transaction is then rolled back).
fn try_batch(
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
            let err = AppError::Storage(crate::store::error::sqlite_error(e));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Keyring, ServerKey};

    fn job(op: Op) -> Job {
        let (reply, _) = oneshot::channel();
        Job { op, reply }
    }

    fn new_player(token_hash: &str) -> Op {
        Op::CreatePlayer(usecase::CreatePlayer {
            token_hash: token_hash.into(),
            name: None,
            start_balance: 500,
            credentials: None,
            recovery_hash: None,
        })
    }

    /// A new database `test.db` in a temporary directory, opened with its
    /// writer running.
    async fn opened() -> (tempfile::TempDir, Arc<Keyring>, Arc<Metrics>, Opened) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("test.db");
        let config = Config { db: format!("sqlite://{}", file.display()), ..Config::default() };
        let keys = Arc::new(Keyring::new(ServerKey::from_bytes([1; 32]), None));
        let metrics = Arc::new(Metrics::new());
        let opened = open(&config, metrics.clone(), keys.clone()).await.unwrap();
        (dir, keys, metrics, opened)
    }

    fn count(conn: &Connection, sql: &str) -> i64 {
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// A batch runs without savepoints; a unit that fails after writing
    /// (here a guarded write that finds no row: the end of the sale of an
    /// emission that does not exist) makes the batch run again with
    /// savepoints, and only that unit is undone: the requests before and
    /// after it in the same batch are committed, once.
    #[tokio::test]
    async fn a_unit_failing_after_writing_undoes_itself_alone() {
        let (dir, keys, _, opened) = opened().await;
        let file = dir.path().join("test.db");
        // The test drives batches itself on a second write connection; the
        // opened writer stays idle.
        let mut conn = write_connection(&file).unwrap();
        let mut state = WriterState::load(&Db::Sqlite(opened.read.clone()), keys).await.unwrap();
        let close_unknown = Changes {
            close: Some(domain::changes::Close::new(99, 1, (2026, 12, 5), None, 30)),
            audit: Some(domain::AuditRecord { created_ms: 1, kind: "sale_ended", data_json: "{}".into() }),
            ..Changes::none(domain::Effect::Emission)
        };
        let jobs = [job(new_player("a")), job(Op::Apply(Box::new(close_unknown))), job(new_player("b"))];

        // Without savepoints the batch gives up, and nothing stays written.
        assert!(try_batch(&mut conn, &mut state, &jobs, 1, false).is_none());
        assert!(conn.is_autocommit(), "the failed attempt was rolled back");
        assert_eq!(count(&conn, "SELECT count(*) FROM players"), 0);

        let results = run_batch(&mut conn, &mut state, &jobs);
        assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
        assert!(
            matches!(&results[1], Err(AppError::Storage(StoreError::Stale(m))) if m.contains("close")),
            "{:?}",
            results[1]
        );
        assert_eq!(count(&conn, "SELECT count(*) FROM players WHERE token_hash IN ('a', 'b')"), 2);
        assert_eq!(count(&conn, "SELECT count(*) FROM audit_log WHERE kind = 'sale_ended'"), 0);
        // Each new player's play money was written once.
        assert_eq!(count(&conn, "SELECT count(*) FROM movements"), 2);
        drop(conn);
        opened.writer.close().await.unwrap();
    }

    /// An operator's player (7, `op-7`) and a block of four tickets, three
    /// sold to them: the rows the wallet's rounds below refer to.
    const PLAYER_7_AND_FOUR_TICKETS: &str = "
        INSERT INTO accounts (id, name, kind) VALUES (100, 'player:7', 'player');
        INSERT INTO players (id, token_hash, account_id, created_ms, operator_ref) VALUES (7, 't', 100, 1, 'op-7');
        INSERT INTO emissions (id, code, channel, table_toml, table_digest, price_cents, block_size, seed_salt, created_ms)
             VALUES (1, 'ACP', 'online', '', 'd', 300, 4, 's', 1);
        INSERT INTO blocks (id, emission_id, number, size, root, chunk_roots, created_ms) VALUES (1, 1, 1, 4, 'r', '', 1);
        INSERT INTO tickets (id, block_id, position, serial, play_code_hash, schedule_row, prize_5, prize_6, prize_7,
                             prize_8, commitment, status, owner_id, sold_ms)
             VALUES (1, 1, 1, 'ACP-1', 'h1', 0, 3, 10, 100, 1000, 'c1', 'sold', 7, 5),
                    (2, 1, 2, 'ACP-2', 'h2', 0, 3, 10, 100, 1000, 'c2', 'sold', 7, 6),
                    (3, 1, 3, 'ACP-3', 'h3', 0, 3, 10, 100, 1000, 'c3', 'unsold', NULL, NULL),
                    (4, 1, 4, 'ACP-4', 'h4', 0, 3, 10, 100, 1000, 'c4', 'sold', 7, 8);";

    /// Migration 0019 rebuilds the operator's rounds and outbox WITHOUT
    /// ROWID with the same rows, on a database of schema 18 holding rounds
    /// in every state and owed and acknowledged entries, with foreign keys
    /// on as `open` migrates: the rows are the same, every reference holds
    /// (the outbox's now points at the rebuilt rounds), and the indexes are
    /// the new ones.
    #[tokio::test]
    async fn migration_19_rebuilds_the_rounds_and_the_outbox_with_the_same_rows() {
        use sqlx::{Connection as _, Executor as _};
        let dir = tempfile::tempdir().unwrap();
        let opts = connect_options(&format!("sqlite://{}", dir.path().join("v18.db").display())).unwrap();
        let mut conn = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
        crate::store::schema::SQLITE.run_to(18, &mut conn).await.unwrap();
        conn.execute(PLAYER_7_AND_FOUR_TICKETS).await.unwrap();
        conn.execute(
            "INSERT INTO wallet_rounds (round_id, ticket_id, attempt, player_id, price_cents, state, idempotency_key,
                                        refusal, created_ms, settled_ms)
                  VALUES ('ACP-1.1', 1, 1, 7, 300, 'sold', 'k1', NULL, 10, 11),
                         ('ACP-2.1', 2, 1, 7, 300, 'debiting', 'k2', NULL, 12, NULL),
                         ('ACP-3.1', 3, 1, 7, 300, 'refused', NULL, 'insufficient_funds', 13, 14),
                         ('ACP-3.2', 3, 2, 7, 300, 'rolling_back', NULL, NULL, 15, 16);
             INSERT INTO wallet_outbox (transaction_id, round_id, kind, amount_cents, body_json, created_ms, attempts,
                                        next_ms, last_error, acked_ms)
                  VALUES ('ACP-1.1.credit', 'ACP-1.1', 'credit', 1000, '{\"c\":1}', 20, 2, 21, 'timeout', 22),
                         ('ACP-3.2.rollback', 'ACP-3.2', 'rollback', 300, '{\"r\":1}', 16, 0, 16, NULL, NULL);",
        )
        .await
        .unwrap();
        const ROUNDS: &str =
            "SELECT group_concat(quote(round_id) || quote(ticket_id) || quote(attempt) || quote(player_id)
                || quote(price_cents) || quote(state) || quote(idempotency_key) || quote(refusal) || quote(created_ms)
                || quote(settled_ms), ';') FROM (SELECT * FROM wallet_rounds ORDER BY round_id)";
        const OUTBOX: &str = "SELECT group_concat(quote(transaction_id) || quote(round_id) || quote(kind)
                || quote(amount_cents) || quote(body_json) || quote(created_ms) || quote(attempts) || quote(next_ms)
                || quote(last_error) || quote(acked_ms), ';') FROM (SELECT * FROM wallet_outbox ORDER BY transaction_id)";
        async fn rows(conn: &mut sqlx::SqliteConnection) -> (String, String) {
            let r: String = sqlx::query_scalar(ROUNDS).fetch_one(&mut *conn).await.unwrap();
            let o: String = sqlx::query_scalar(OUTBOX).fetch_one(&mut *conn).await.unwrap();
            (r, o)
        }
        let before = rows(&mut conn).await;
        assert!(before.0.contains("'rolling_back'") && before.1.contains("'timeout'"), "{before:?}");

        crate::store::schema::SQLITE.run(&mut conn).await.unwrap();
        assert_eq!(rows(&mut conn).await, before);
        let broken: Vec<(String,)> =
            sqlx::query_as("SELECT \"table\" FROM pragma_foreign_key_check").fetch_all(&mut conn).await.unwrap();
        assert!(broken.is_empty(), "{broken:?}");
        let ok: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut conn).await.unwrap();
        assert_eq!(ok, "ok");
        for table in ["wallet_rounds", "wallet_outbox"] {
            let sql: String = sqlx::query_scalar("SELECT sql FROM sqlite_schema WHERE name = $1")
                .bind(table)
                .fetch_one(&mut conn)
                .await
                .unwrap();
            assert!(sql.ends_with("WITHOUT ROWID"), "{sql}");
        }
        let indexes: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('wallet_rounds', 'wallet_outbox')
             ORDER BY name",
        )
        .fetch_all(&mut conn)
        .await
        .unwrap();
        assert_eq!(
            indexes,
            // The keys are the tables themselves; UNIQUE (ticket_id, attempt) stays.
            [
                "sqlite_autoindex_wallet_rounds_2",
                "wallet_outbox_due",
                "wallet_rounds_created",
                "wallet_rounds_in_flight"
            ]
        );
        // The outbox refers to the rebuilt rounds: an entry of no round is refused.
        let orphan = conn
            .execute(
                "INSERT INTO wallet_outbox (transaction_id, round_id, kind, amount_cents, body_json, created_ms, next_ms)
                 VALUES ('ACP-9.1.credit', 'ACP-9.1', 'credit', 1, '{}', 1, 1)",
            )
            .await
            .unwrap_err();
        assert!(orphan.to_string().contains("FOREIGN KEY"), "{orphan}");
        // A second round of the same ticket and attempt is refused too.
        let twice = conn
            .execute(
                "INSERT INTO wallet_rounds (round_id, ticket_id, attempt, player_id, price_cents, state, created_ms)
                 VALUES ('ACP-3.2bis', 3, 2, 7, 300, 'debiting', 30)",
            )
            .await
            .unwrap_err();
        assert!(twice.to_string().contains("UNIQUE"), "{twice}");
        conn.close().await.unwrap();
    }

    /// A new database, its WAL, its shared memory and its lock file are
    /// readable and writable by their owner only (0600): the database holds
    /// password hashes and the hashes of players' tokens.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_new_database_and_its_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, _, _, opened) = opened().await;
        opened.writer.write(new_player("p")).await.unwrap();
        for name in ["test.db", "test.db-wal", "test.db-shm", "test.db.lock"] {
            let mode = std::fs::metadata(dir.path().join(name)).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{name}: {mode:o}");
        }
        opened.writer.close().await.unwrap();
    }

    /// The round reserved for an operator's debit is remembered, with its
    /// ticket, from the reservation until it leaves `debiting`, so the
    /// settlement reads no row (`store/wallet.rs`, `round`);
    /// a sale of another ticket than the queue's next is not remembered;
    /// a failed write (`reload`) forgets it with the rest of the memory.
    #[tokio::test]
    async fn a_held_ticket_is_remembered_from_its_reservation_to_its_settlement() {
        use domain::{Effect, Sale};
        let (dir, keys, _, opened) = opened().await;
        let conn = write_connection(&dir.path().join("test.db")).unwrap();
        let mut state = WriterState::load(&Db::Sqlite(opened.read.clone()), keys).await.unwrap();
        let ticket = |id: TicketId| ForSale {
            ticket_id: id,
            serial: format!("ACP-001-00001-{id:06}-17"),
            prizes: engine::PrizeSchedule::new([300, 1000, 10_000, 1_000_000]),
            price_cents: 300,
            commitment: "c".into(),
            server_seed: [7; 32],
            last_attempt: Some(0),
        };
        let reserve = |id: TicketId, round: &str| Changes {
            sale: Some(Sale { ticket_id: id, owner: 5, sold_ms: 1 }),
            wallet: vec![WalletWrite::NewRound {
                round: round.into(),
                ticket_id: id,
                attempt: 1,
                player: 5,
                operator_ref: "op-5".into(),
                price_cents: 300,
                key: Some(format!("key-{id}")),
                created_ms: 1,
            }],
            ..Changes::none(Effect::Wallet)
        };
        let settle = |round: &str, to: RoundState| Changes {
            wallet: vec![WalletWrite::Round {
                round: round.into(),
                from: RoundState::Debiting,
                to,
                refusal: None,
                settled_ms: 2,
            }],
            ..Changes::none(Effect::Wallet)
        };
        state.for_sale.extend([ticket(1), ticket(2), ticket(3)]);
        // The keyed rounds in flight, loaded from the database (none yet).
        let loaded = InFlightKeys::load(&conn).unwrap();
        assert!(loaded.by_key.is_empty() && loaded.key_of.is_empty());
        state.in_flight_keys = Some(loaded);
        state.written(&reserve(1, "R1.1"));
        let held = &state.held["R1.1"];
        assert_eq!((held.ticket.ticket_id, held.round.ticket_id, held.round.player), (1, 1, 5));
        assert_eq!((held.round.round.id(), held.round.state), ("R1.1".to_string(), RoundState::Debiting));
        assert_eq!((held.round.operator_ref.as_str(), held.round.idempotency_key.as_deref()), ("op-5", Some("key-1")));
        assert_eq!(Some(held.round.wallet_account), state.operator_wallet);
        state.written(&reserve(9, "R9.1"));
        assert!(!state.held.contains_key("R9.1"), "not the queue's next ticket");
        state.written(&reserve(2, "R2.1"));
        state.written(&reserve(3, "R3.1"));
        assert_eq!(state.held.len(), 3);
        // Each keyed round is in flight, the queue's next ticket or not.
        let in_flight = |state: &WriterState, id: TicketId| {
            state
                .in_flight_keys
                .as_ref()
                .unwrap()
                .by_key
                .get(&(5, format!("key-{id}")))
                .map(|r| (r.round.id(), r.state))
        };
        assert_eq!(in_flight(&state, 1), Some(("R1.1".to_string(), RoundState::Debiting)));
        assert_eq!(in_flight(&state, 9), Some(("R9.1".to_string(), RoundState::Debiting)));
        state.written(&settle("R1.1", RoundState::Sold));
        state.written(&settle("R2.1", RoundState::RollingBack));
        assert!(!state.held.contains_key("R1.1") && !state.held.contains_key("R2.1"), "settled");
        assert_eq!(state.held.get("R3.1").map(|t| t.ticket.ticket_id), Some(3), "still debiting");
        // Sold: no longer in flight, and remembered by its ticket for its
        // prize's credit; rolling back: still in flight, until released.
        assert_eq!(in_flight(&state, 1), None);
        let sold = &state.sold_rounds[&1];
        assert_eq!(
            (sold.round.id(), sold.state, sold.player, sold.price_cents),
            ("R1.1".into(), RoundState::Sold, 5, 300)
        );
        assert_eq!(in_flight(&state, 2), Some(("R2.1".to_string(), RoundState::RollingBack)));
        assert!(!state.sold_rounds.contains_key(&2));
        let released = Changes {
            wallet: vec![WalletWrite::Round {
                round: "R2.1".into(),
                from: RoundState::RollingBack,
                to: RoundState::Released,
                refusal: None,
                settled_ms: 3,
            }],
            ..Changes::none(Effect::Wallet)
        };
        state.written(&released);
        assert_eq!(in_flight(&state, 2), None);
        assert_eq!(state.in_flight_keys.as_ref().unwrap().key_of.len(), 2, "R3.1 and R9.1");
        // The sold round is forgotten when its game ends.
        let mut finished = TicketRow {
            id: 1,
            owner: Some(5),
            ticket: domain::api::SoldTicket {
                serial: "ACP-001-00001-000001-17".into(),
                price_cents: 300,
                client_seed: None,
                server_seed: [7; 32],
                commitment: "c".into(),
                channel: domain::api::Channel::Online,
                retail: None,
                sold_ms: Some(1),
                game: engine::Game::new(engine::PrizeSchedule::new([300, 1000, 10_000, 1_000_000])),
            },
        };
        let game = |row: &TicketRow| Changes {
            game: Some(domain::GameWrite {
                row: row.clone(),
                from_seq: Some(0),
                finished_ms: None,
                phase_changed: false,
            }),
            ..Changes::none(Effect::Wallet)
        };
        state.written(&game(&finished));
        assert!(state.sold_rounds.contains_key(&1), "its game is not over");
        let mut draws = engine::FastSource::new([1; 32], 0);
        while !finished.ticket.game.is_finished() {
            let game = &mut finished.ticket.game;
            let action = match game.phase().name() {
                "play" => engine::Action::Play { card: game.hand().iter().next().expect("a card") },
                _ => engine::Action::Draw,
            };
            game.apply(action, &mut draws, &mut engine::Discard).unwrap();
        }
        state.written(&game(&finished));
        assert!(!state.sold_rounds.contains_key(&1), "its game is over");
        // A launch's player's reference is remembered from its write.
        let launch = Changes {
            wallet: vec![WalletWrite::OperatorPlayer { player: 8, reference: "op-8".into() }],
            ..Changes::none(Effect::Wallet)
        };
        state.written(&launch);
        assert_eq!(state.operator_refs.get(&8).map(String::as_str), Some("op-8"));
        state.for_sale.push_back(ticket(4));
        state.written(&reserve(4, "R4.1"));
        assert!(state.sold_rounds.is_empty() && in_flight(&state, 4).is_some());
        state.written(&settle("R4.1", RoundState::Sold));
        assert!(!state.sold_rounds.is_empty());
        state.reload(&conn);
        assert!(state.held.is_empty() && state.operator_refs.is_empty(), "forgotten after a failed write");
        assert!(state.in_flight_keys.is_none() && state.sold_rounds.is_empty(), "the database answers again");
        opened.writer.close().await.unwrap();
    }

    /// A keyed purchase's reservation learns whether its key has a round in
    /// flight from the writer's memory, loaded from the database when first
    /// asked: every keyed round `debiting` or `rolling_back` (here written
    /// behind the writer, as a server restarted with rounds in flight finds
    /// them), none of the others; and a key with none is a known "none".
    #[tokio::test]
    async fn the_keyed_rounds_in_flight_are_loaded_once_and_answered_from_memory() {
        use crate::store::wallet::Fetch as _;
        let (dir, keys, _, opened) = opened().await;
        let mut conn = write_connection(&dir.path().join("test.db")).unwrap();
        conn.execute_batch(PLAYER_7_AND_FOUR_TICKETS).unwrap();
        conn.execute_batch(
            "INSERT INTO wallet_rounds (round_id, ticket_id, attempt, player_id, price_cents, state, idempotency_key,
                                        refusal, created_ms, settled_ms)
                  VALUES ('ACP-1.1', 1, 1, 7, 300, 'sold', 'k1', NULL, 10, 11),
                         ('ACP-2.1', 2, 1, 7, 300, 'debiting', 'k2', NULL, 12, NULL),
                         ('ACP-3.1', 3, 1, 7, 300, 'rolling_back', 'k3', NULL, 13, 14),
                         ('ACP-4.1', 4, 1, 7, 300, 'debiting', NULL, NULL, 15, NULL);",
        )
        .unwrap();
        let mut state = WriterState::load(&Db::Sqlite(opened.read.clone()), keys).await.unwrap();
        let mut unit = SqliteUnit { conn: &mut conn, state: &mut state, savepoints: false, wrote: false, open: false };
        let known = |unit: &mut SqliteUnit<'_>, key: &str| {
            unit.pending_remembered(7, key).unwrap().map(|r| r.map(|r| (r.round.id(), r.state, r.price_cents)))
        };
        assert_eq!(known(&mut unit, "k2"), Some(Some(("ACP-2.1".into(), RoundState::Debiting, 300))));
        assert_eq!(known(&mut unit, "k3"), Some(Some(("ACP-3.1".into(), RoundState::RollingBack, 300))));
        assert_eq!(known(&mut unit, "k1"), Some(None), "sold: not in flight");
        assert_eq!(known(&mut unit, "k9"), Some(None), "no round: a known none");
        assert_eq!(unit.pending_remembered(8, "k2").unwrap().map(|r| r.is_none()), Some(true), "another player's key");
        let loaded = unit.state.in_flight_keys.as_ref().unwrap();
        assert_eq!((loaded.by_key.len(), loaded.key_of.len()), (2, 2), "the unkeyed round is not there");
        // The same answers as the database's query.
        for key in ["k1", "k2", "k3", "k9"] {
            let sql = super::super::wallet::keyed_in_flight_sql() + " AND r.idempotency_key = ?1";
            let read: Option<String> = unit.conn.query_row(&sql, [key], |r| r.get("round_id")).optional().unwrap();
            assert_eq!(known(&mut unit, key).unwrap().map(|r| r.0), read, "{key}");
        }
        // Nothing is remembered of a sold round but from its settlement: the database answers.
        assert!(unit.sold_remembered(1).is_none());
        drop(conn);
        opened.writer.close().await.unwrap();
    }

    /// Under a steady stream of commits the WAL starts again from its
    /// beginning (the writer finishes the background checkpoints): its file
    /// stays a few thousand frames long while about 45 000 are written.
    /// Without the writer's part it passes 12 000 after about 800 commits
    /// (the automatic checkpoint waits for 20 000).
    #[tokio::test]
    async fn the_wal_starts_again_under_a_steady_stream_of_commits() {
        let (dir, _, metrics, opened) = opened().await;
        let frame = 24 + 4096;
        let wal = dir.path().join("test.db-wal");
        // One request at a time: one commit each, of about fifteen pages.
        for player in 0..3000 {
            opened.writer.write(new_player(&format!("p{player}"))).await.unwrap();
            if player % 100 == 99 {
                let frames = std::fs::metadata(&wal).unwrap().len() / frame;
                assert!(frames < 12_000, "the WAL grew to {frames} frames after {player} commits");
            }
        }
        let players: i64 = sqlx::query_scalar("SELECT count(*) FROM players").fetch_one(&opened.read).await.unwrap();
        assert_eq!(players, 3000);
        let restarts = metrics.writer_checkpoint_seconds.get_sample_count();
        assert!(restarts >= 2, "the writer finished {restarts} checkpoints in {players} commits");
        opened.writer.close().await.unwrap();
    }
}
