//! The PostgreSQL shell: any number of `as-capone serve` processes on one
//! database (ARCHITECTURE.md guarantee 8), each request one transaction.
//!
//! **Row locks, not serializable transactions.** Every race is on rows a
//! request names: its ticket, its player's account, the next ticket for
//! sale. So each unit locks exactly those (`SELECT ... FOR UPDATE`) in READ
//! COMMITTED and the rest of the database runs free; the second of two
//! requests on one ticket waits for the first, then loads what it wrote
//! (PostgreSQL re-reads a locked row once its lock is released), and its
//! decision is a replay or a 409, never a second application. SERIALIZABLE
//! would give the same answers but by aborting one of the two and retrying,
//! on every concurrent purchase: the sale queue is one index that all of
//! them read. The sale queue takes `FOR UPDATE SKIP LOCKED`: concurrent
//! purchases take different tickets without waiting for each other. Locks
//! are always taken ticket first, then account (a purchase never waits for
//! a ticket), so two units never wait for each other in a circle; should
//! PostgreSQL still report a deadlock or serialization failure, the request
//! runs again from the start ([`StoreError::is_retryable`]).
//!
//! **No shared counter.** What every write would touch is designed away:
//! movements are keyed by what they are (`sale:<ticket>`), house accounts
//! keep no running balance (the sum of their entries is their balance),
//! the sale cursor is the `status` of the tickets themselves, and the audit
//! chain is sealed after commit by one process at a time
//! ([`super::audit`]).
//!
//! A unit's writes are one statement ([`WritePlan::postgres_statement`]): a
//! request is BEGIN, two or three loads, one write, COMMIT.
//!
//! **A game action takes no lock and no transaction** ([`Mode::Optimistic`]):
//! its reads are plain statements and its write one statement that commits
//! itself. That is safe because every write of an action is guarded by the
//! state it was decided on (the game's `seq`, the seed still unset, the
//! balance it was decided on) or keyed by what it is (the action's
//! `(ticket_id, seq)`, the prize's movement): should another request have
//! changed any of it meanwhile, the statement raises a serialization
//! failure (migration 16's `as_capone_stale`), nothing of it stays, and the
//! request runs again from its reads, to find its answer stored (a replay)
//! or a conflict. The locks only turned that rare race into a wait; without
//! them an action is two round trips instead of four, and writes no row
//! lock (BENCHMARKS.md, "PostgreSQL, what a request costs it").

use super::audit;
use super::pg_batch::{Answer, Batcher};
use super::plan::WritePlan;
use super::reads::{
    ACCOUNT_OF_PLAYER, ACTION_SELECT, COUNTER_SELECT, IDEMPOTENCY_SELECT, IN_PLAY_SELECT, LIMITS_SELECT,
    LOGIN_OWNER_SELECT, LimitsTuple, NEXT_FOR_SALE_POSTGRES, PAPER_SELECT, PASSWORD_HASH_SELECT, TICKET_COLUMNS,
    TICKET_FROM, USAGE_SELECT, for_sale, limits_row, paper_row, paper_where, stored_answer, ticket_row,
};
use super::{TokenCheck, bind_values, now_ms};
use crate::config::Config;
use crate::keys::Keyring;
use crate::metrics::Metrics;
use crate::store::error::DbResult;
use anyhow::Context;
use domain::error::{AppError, StoreError};
use domain::limits::Counter;
use domain::usecase::PaperKey;
use domain::usecase::{self, Done, Op};
use domain::{
    Account, AccountId, Changes, ForSale, LimitsRow, PaperRow, PlayerId, StoredAnswer, TicketId, TicketRow, Unit, Usage,
};
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::{AssertSqlSafe, ConnectOptions, Connection, Postgres, Row, Transaction};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// Whether the player `$2` still holds the token of hash `$3` at `$4`: as
/// its own token, or as a session that has not ended.
const TOKEN_OK: &str = "(EXISTS (SELECT 1 FROM players WHERE id = $2 AND token_hash = $3) \
     OR EXISTS (SELECT 1 FROM sessions WHERE token_hash = $3 AND player_id = $2 AND expires_ms > $4))";

/// The advisory lock held by a process while it migrates and makes the
/// first emission ("ASCSTART").
const STARTUP_LOCK: i64 = 0x4153_4353_5441_5254;

/// How often a request that PostgreSQL aborted (deadlock, serialization) is run again.
const RETRIES: usize = 5;

/// The URL without its password, for the log.
fn redacted(url: &str) -> String {
    match PgConnectOptions::from_str(url) {
        Ok(o) => format!(
            "postgres://{}@{}:{}/{}",
            o.get_username(),
            o.get_host(),
            o.get_port(),
            o.get_database().unwrap_or("")
        ),
        Err(_) => "postgres://(unparsable URL)".into(),
    }
}

pub(super) fn describe(url: &str, config: &Config) -> String {
    format!(
        "PostgreSQL {} (pool of {}, row locks, one transaction per request)",
        redacted(url),
        config.db_max_connections
    )
}

/// A connection error worth waiting out at start-up: the server is not
/// listening yet, or says it is starting or shutting down.
fn transient(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut => true,
        sqlx::Error::Database(d) => d.code().is_some_and(|c| c.starts_with("57P") || c == "53300"),
        _ => false,
    }
}

/// Connects (waiting up to `db_start_wait_s` for a database that does not
/// answer yet), takes the start-up lock and migrates. The returned
/// connection holds the lock until [`release_startup_lock`].
pub(super) async fn connect(config: &Config) -> anyhow::Result<(PgPool, PgConnection)> {
    let where_ = redacted(&config.db);
    let opts = PgConnectOptions::from_str(&config.db)
        .with_context(|| format!("bad PostgreSQL URL {where_}"))?
        .log_slow_statements(tracing::log::LevelFilter::Warn, Duration::from_secs(1));
    let deadline = Instant::now() + Duration::from_secs(config.db_start_wait_s);
    let mut attempt = 1;
    let mut lock_conn = loop {
        match PgConnection::connect_with(&opts).await {
            Ok(c) => break c,
            Err(e) if transient(&e) && Instant::now() < deadline => {
                tracing::warn!(
                    "waiting for PostgreSQL at {where_} (attempt {attempt}, up to {} s): {e}",
                    config.db_start_wait_s
                );
                attempt += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => {
                return Err(anyhow::anyhow!("cannot connect to PostgreSQL at {where_}: {e}")
                    .context(format!("gave up after {attempt} attempt(s)")));
            }
        }
    };
    let locked: bool =
        sqlx::query_scalar("SELECT pg_try_advisory_lock($1)").bind(STARTUP_LOCK).fetch_one(&mut lock_conn).await?;
    if !locked {
        tracing::info!("another process is starting on this database: waiting for it to finish its start-up");
        sqlx::query("SELECT pg_advisory_lock($1)").bind(STARTUP_LOCK).execute(&mut lock_conn).await?;
    }
    super::schema::migrate_postgres(&mut lock_conn).await?;
    let pool = PgPoolOptions::new()
        .max_connections(config.db_max_connections)
        .acquire_timeout(Duration::from_millis(config.db_acquire_timeout_ms))
        .connect_with(opts)
        .await
        .with_context(|| format!("connection pool to {where_}"))?;
    Ok((pool, lock_conn))
}

/// Lets the next process start.
pub(super) async fn release_startup_lock(mut conn: PgConnection) {
    if let Err(e) = sqlx::query("SELECT pg_advisory_unlock($1)").bind(STARTUP_LOCK).execute(&mut conn).await {
        tracing::warn!(error = %e, "releasing the start-up lock (it goes with the connection)");
    }
    let _ = conn.close().await;
}

/// The write half: the pool, and the audit sealer running beside it.
pub(super) struct PgWriter {
    pool: PgPool,
    metrics: Arc<Metrics>,
    keys: Arc<Keyring>,
    sealer: Mutex<Option<JoinHandle<()>>>,
    /// The game actions' batches ([`super::pg_batch`]).
    batcher: Batcher,
}

impl PgWriter {
    pub fn start(pool: PgPool, metrics: Arc<Metrics>, keys: Arc<Keyring>) -> PgWriter {
        let sealer = tokio::spawn(sealer(pool.clone()));
        let batcher = Batcher::start(pool.clone(), keys.clone(), metrics.clone());
        PgWriter { pool, metrics, keys, sealer: Mutex::new(Some(sealer)), batcher }
    }

    /// A unit of its own transaction, for writes that span several
    /// [`Changes`] (an emission's blocks, written and published at once).
    pub async fn unit(&self) -> Result<PgUnit, StoreError> {
        Ok(PgUnit {
            conn: Conn::Tx(self.pool.begin().await.db()?),
            owner_account: None,
            keys: self.keys.clone(),
            token_check: None,
            batched: None,
        })
    }

    /// A unit without a transaction: see [`Mode::Optimistic`].
    async fn optimistic_unit(&self) -> Result<PgUnit, StoreError> {
        Ok(PgUnit {
            conn: Conn::Auto(self.pool.acquire().await.db()?),
            owner_account: None,
            keys: self.keys.clone(),
            token_check: None,
            batched: None,
        })
    }

    /// One request: a transaction, run again from the start when
    /// PostgreSQL aborted it for a conflict with another.
    /// `check`: a remembered token the request's first statement confirms.
    /// A game action goes to the next batch ([`super::pg_batch`]) first,
    /// and runs here on its own only when the batch gives it back.
    pub async fn run(&self, op: Op, check: Option<TokenCheck>) -> Result<Done, AppError> {
        let (op, check) = match Mode::of(&op) {
            Mode::Optimistic => match self.batcher.run(op, check).await {
                Answer::Done(done) => return done,
                Answer::Alone(op, check) => (op, check),
            },
            Mode::Locking => (op, check),
        };
        let mut attempt = 1;
        loop {
            match self.run_once(&op, check.as_ref()).await {
                Err(AppError::Storage(e)) if e.is_retryable() && attempt < RETRIES => {
                    tracing::debug!(attempt, error = %domain::error::error_chain(&e), "transaction aborted by a conflict; running it again");
                    tokio::time::sleep(Duration::from_millis(attempt as u64 * 2)).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn run_once(&self, op: &Op, check: Option<&TokenCheck>) -> Result<Done, AppError> {
        let mut unit = match Mode::of(op) {
            Mode::Locking => self.unit().await?,
            Mode::Optimistic => self.optimistic_unit().await?,
        };
        unit.token_check = check.cloned();
        let done = usecase::run(&mut unit, op, now_ms()).await;
        match done {
            Ok(done) if done.effect.is_some() => {
                unit.commit().await?;
                if let Some(effect) = done.effect {
                    self.metrics.count(effect);
                }
                Ok(done)
            }
            // A replay or a refusal wrote nothing.
            other => {
                unit.rollback().await;
                other
            }
        }
    }

    pub async fn close(&self) {
        self.batcher.close();
        if let Some(task) = self.sealer.lock().expect("sealer lock").take() {
            task.abort();
        }
    }
}

/// Seals the audit entries of every process, five times a second, when
/// no other process is doing it; every [`FOLD_EVERY`] ticks, folds the
/// block figures of ended connections.
async fn sealer(pool: PgPool) {
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for n in 0u64.. {
        tick.tick().await;
        if let Err(e) = audit::seal_pending(&pool, audit::Wait::No).await {
            tracing::warn!(error = %domain::error::error_chain(&e), "sealing the audit log");
        }
        if n % FOLD_EVERY == FOLD_EVERY - 1
            && let Err(e) = fold_block_figures(&pool).await
        {
            tracing::warn!(error = %domain::error::error_chain(&e), "folding the block figures");
        }
    }
}

/// The sealer's ticks between two folds of the block figures: 5 minutes.
const FOLD_EVERY: u64 = 5 * 60 * 5;

/// The advisory lock key of the block figures' fold ("ASCFOLDS").
const FOLD_LOCK: i64 = 0x4153_4346_4f4c_4453;

/// Migrations 11 and 12 keep each block's figures, and each shop's per
/// emission, on one row per writing connection (`shard`: its backend's
/// pid), so that no two transactions wait on one counter. Connections end
/// (the pool renews them), and their rows would pile up: this adds the
/// rows of every connection that has ended into the row of shard 0 and
/// deletes them, one statement per table, in one transaction, under an advisory lock (one process folds at a time; the
/// others skip). A row a live transaction holds is skipped, never waited
/// for (`SKIP LOCKED`), so the fold never blocks a sale; a pid reused by a
/// new connection meanwhile only adds to the row before or after it is
/// folded. Returns the rows folded (blocks' and shops').
pub(super) async fn fold_block_figures(pool: &PgPool) -> Result<u64, StoreError> {
    let mut tx = pool.begin().await.db()?;
    let locked: bool =
        sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)").bind(FOLD_LOCK).fetch_one(&mut *tx).await.db()?;
    if !locked {
        return Ok(0);
    }
    let folded: i64 = sqlx::query_scalar(
        "WITH ended AS (
           DELETE FROM block_figures f
           WHERE (f.block_id, f.shard) IN (
             SELECT block_id, shard FROM block_figures
             WHERE shard <> 0 AND shard NOT IN (SELECT pid FROM pg_stat_activity)
             FOR UPDATE SKIP LOCKED)
           RETURNING f.*),
         added AS (
           INSERT INTO block_figures AS f (block_id, shard, sold, in_play, won, lost, prizes_won_cents, prizes_paid_cents,
                                           first_finished_ms, last_finished_ms)
           SELECT block_id, 0, SUM(sold), SUM(in_play), SUM(won), SUM(lost), SUM(prizes_won_cents), SUM(prizes_paid_cents),
                  MIN(first_finished_ms), MAX(last_finished_ms)
           FROM ended GROUP BY block_id
           ON CONFLICT (block_id, shard) DO UPDATE SET
             sold = f.sold + EXCLUDED.sold, in_play = f.in_play + EXCLUDED.in_play,
             won = f.won + EXCLUDED.won, lost = f.lost + EXCLUDED.lost,
             prizes_won_cents = f.prizes_won_cents + EXCLUDED.prizes_won_cents,
             prizes_paid_cents = f.prizes_paid_cents + EXCLUDED.prizes_paid_cents,
             first_finished_ms = LEAST(f.first_finished_ms, EXCLUDED.first_finished_ms),
             last_finished_ms = GREATEST(f.last_finished_ms, EXCLUDED.last_finished_ms)
           RETURNING 1)
         SELECT CAST(COUNT(*) AS BIGINT) FROM ended",
    )
    .fetch_one(&mut *tx)
    .await.db()?;
    // Migration 12's figures per shop and emission, the same way.
    let shops: i64 = sqlx::query_scalar(
        "WITH ended AS (
           DELETE FROM shop_figures f
           WHERE (f.shop, f.emission_id, f.shard) IN (
             SELECT shop, emission_id, shard FROM shop_figures
             WHERE shard <> 0 AND shard NOT IN (SELECT pid FROM pg_stat_activity)
             FOR UPDATE SKIP LOCKED)
           RETURNING f.*),
         added AS (
           INSERT INTO shop_figures AS f (shop, emission_id, shard, sold, redeemed, won_unpaid, won_unpaid_cents,
                                          paid, paid_cents)
           SELECT shop, emission_id, 0, SUM(sold), SUM(redeemed), SUM(won_unpaid), SUM(won_unpaid_cents),
                  SUM(paid), SUM(paid_cents)
           FROM ended GROUP BY shop, emission_id
           ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
             sold = f.sold + EXCLUDED.sold, redeemed = f.redeemed + EXCLUDED.redeemed,
             won_unpaid = f.won_unpaid + EXCLUDED.won_unpaid,
             won_unpaid_cents = f.won_unpaid_cents + EXCLUDED.won_unpaid_cents,
             paid = f.paid + EXCLUDED.paid, paid_cents = f.paid_cents + EXCLUDED.paid_cents
           RETURNING 1)
         SELECT CAST(COUNT(*) AS BIGINT) FROM ended",
    )
    .fetch_one(&mut *tx)
    .await
    .db()?;
    tx.commit().await.db()?;
    Ok((folded + shops) as u64)
}

/// How a request meets the others on the rows it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// One transaction; every row the decision reads is locked first
    /// (`FOR UPDATE`), so a concurrent request on the same rows waits.
    Locking,
    /// No transaction and no lock: plain reads, then one write statement
    /// that commits itself and aborts whole (a serialization failure, run
    /// again) when any of its guards finds its row changed. For the game's
    /// actions, whose every write is guarded (see the module's comment);
    /// not for purchases, whose sale queue is shared by all of them and
    /// whose limits read rows no write guards.
    Optimistic,
}

impl Mode {
    pub(super) fn of(op: &Op) -> Mode {
        match op {
            Op::PlayAction(_) => Mode::Optimistic,
            _ => Mode::Locking,
        }
    }
}

/// A unit's connection: in a transaction, or on its own (each statement
/// commits itself).
pub(super) enum Conn {
    Tx(Transaction<'static, Postgres>),
    Auto(sqlx::pool::PoolConnection<Postgres>),
    /// The batches' own connection ([`super::pg_batch`]).
    Own(PgConnection),
}

/// One request's unit of work.
pub(super) struct PgUnit {
    conn: Conn,
    /// The account of the ticket's owner, loaded and locked with the
    /// ticket (one round trip less for every action).
    owner_account: Option<Account>,
    keys: Arc<Keyring>,
    /// A remembered token that [`Unit::ticket`]'s statement confirms.
    token_check: Option<TokenCheck>,
    /// In a batch of actions ([`super::pg_batch`]): the ticket its batch
    /// read, and the plan of the write the batch's statement makes.
    batched: Option<Batched>,
}

/// One action of a batch, decided on a unit ([`PgUnit::batch_unit`]).
#[derive(Default)]
pub(super) struct Batched {
    ticket: Option<TicketRow>,
    /// The plan of its write, and the account whose balance it guards.
    pub plan: Option<(WritePlan, Option<AccountId>)>,
}

impl PgUnit {
    /// The connection its statements run on.
    pub fn c(&mut self) -> &mut PgConnection {
        match &mut self.conn {
            Conn::Tx(tx) => tx,
            Conn::Auto(c) => c,
            Conn::Own(c) => c,
        }
    }

    /// A unit for a batch of actions on `conn`: no transaction, each
    /// action's ticket given by the batch's read ([`PgUnit::prepare`]), its
    /// write kept for the batch's statement ([`PgUnit::take_write`]).
    pub(super) fn batch_unit(conn: PgConnection, keys: Arc<Keyring>) -> PgUnit {
        PgUnit { conn: Conn::Own(conn), owner_account: None, keys, token_check: None, batched: None }
    }

    /// The batch's connection back, after its batch.
    pub(super) fn into_own(self) -> Option<PgConnection> {
        match self.conn {
            Conn::Own(c) => Some(c),
            _ => None,
        }
    }

    /// The next action of the batch: its ticket and owner's account, as
    /// the batch read them.
    pub(super) fn prepare(&mut self, ticket: TicketRow, account: Option<Account>) {
        self.owner_account = account;
        self.token_check = None;
        self.batched = Some(Batched { ticket: Some(ticket), plan: None });
    }

    /// What the action decided on the unit would write.
    pub(super) fn take_write(&mut self) -> Option<(WritePlan, Option<AccountId>)> {
        self.batched.take().and_then(|b| b.plan)
    }

    fn locking(&self) -> bool {
        matches!(self.conn, Conn::Tx(_))
    }

    /// `FOR UPDATE OF <of>` when the unit locks what it reads, else nothing.
    fn for_update(&self, of: &str) -> String {
        if self.locking() { format!(" FOR UPDATE OF {of}") } else { String::new() }
    }

    /// Commits the transaction (its write already committed itself
    /// without one).
    pub async fn commit(self) -> Result<(), StoreError> {
        match self.conn {
            Conn::Tx(tx) => Ok(tx.commit().await.db()?),
            Conn::Auto(_) | Conn::Own(_) => Ok(()),
        }
    }

    /// Whether the remembered token still names its player (its own
    /// token, or a session not ended): a statement of its own, for when
    /// the ticket's statement found no row to carry the check.
    async fn confirm_token(&mut self, serial: &str, check: &TokenCheck) -> Result<(), StoreError> {
        // `$1` is the ticket's serial, as in the ticket's statement.
        let sql = format!("SELECT {TOKEN_OK} WHERE CAST($1 AS TEXT) IS NOT NULL");
        let ok: bool = sqlx::query_scalar(AssertSqlSafe(sql))
            .bind(serial)
            .bind(check.player)
            .bind(&check.token_hash)
            .bind(now_ms())
            .fetch_one(self.c())
            .await
            .db()?;
        if ok { Ok(()) } else { Err(StoreError::TokenRevoked) }
    }

    async fn rollback(self) {
        if let Conn::Tx(tx) = self.conn {
            let _ = tx.rollback().await;
        }
    }
}

impl Unit for PgUnit {
    async fn account(&mut self, player: PlayerId) -> Result<Option<Account>, StoreError> {
        if let Some(a) = self.owner_account.filter(|a| a.player == player) {
            return Ok(Some(a));
        }
        let sql = format!("{ACCOUNT_OF_PLAYER}{}", self.for_update("a"));
        let row: Option<(i64, i64)> =
            sqlx::query_as(AssertSqlSafe(sql)).bind(player).fetch_optional(self.c()).await.db()?;
        Ok(row.map(|(id, balance_cents)| Account { player, id, balance_cents }))
    }

    async fn idempotency(&mut self, player: PlayerId, key: &str) -> Result<Option<StoredAnswer>, StoreError> {
        let row = sqlx::query_as(IDEMPOTENCY_SELECT).bind(player).bind(key).fetch_optional(self.c()).await.db()?;
        Ok(stored_answer(row))
    }

    async fn next_for_sale(&mut self) -> Result<Option<ForSale>, StoreError> {
        // Concurrent purchases skip each other's locked ticket instead of
        // waiting; the plan reads one ticket whatever the statistics.
        let row = sqlx::query(NEXT_FOR_SALE_POSTGRES).fetch_optional(self.c()).await.db()?;
        row.map(|r| for_sale(&r, &self.keys)).transpose()
    }

    async fn ticket(&mut self, serial: &str) -> Result<Option<TicketRow>, StoreError> {
        // The ticket and game rows, then its owner's account: the core's
        // lock order. The ticket's row is locked too: it holds the client
        // seed the first action writes, and a request that waited for that
        // action must re-read it with the game (READ COMMITTED re-reads
        // only the rows it locks), or it sees the new game beside no seed.
        // Without locks (an optimistic unit) the one statement reads all of
        // them from one snapshot, and the write's guards catch what changes.
        // A remembered token is confirmed by the same statement (TOKEN_OK).
        if let Some(b) = &self.batched {
            return Ok(b.ticket.clone());
        }
        let check = self.token_check.take();
        let token_ok = if check.is_some() { format!(", {TOKEN_OK} AS token_ok") } else { String::new() };
        let sql = format!(
            "SELECT a.id AS account_id, a.balance_cents, {TICKET_COLUMNS}{token_ok}{TICKET_FROM}
             JOIN players p ON p.id = t.owner_id JOIN accounts a ON a.id = p.account_id
             WHERE t.serial = $1{}",
            self.for_update("t, g, a")
        );
        let mut query = sqlx::query(AssertSqlSafe(sql)).bind(serial);
        if let Some(c) = &check {
            query = query.bind(c.player).bind(&c.token_hash).bind(now_ms());
        }
        let found = query.fetch_optional(self.c()).await.db()?;
        if let Some(c) = &check {
            let ok = match &found {
                Some(row) => row.try_get("token_ok").db()?,
                None => {
                    self.confirm_token(serial, c).await?;
                    true
                }
            };
            if !ok {
                return Err(StoreError::TokenRevoked);
            }
        }
        let Some(row) = found else {
            // A paper ticket nobody's history holds: no account to lock.
            let sql = format!(
                "SELECT {TICKET_COLUMNS}{TICKET_FROM}WHERE t.serial = $1 AND t.owner_id IS NULL{}",
                self.for_update("t, g")
            );
            let row = sqlx::query(AssertSqlSafe(sql)).bind(serial).fetch_optional(self.c()).await.db()?;
            return row.map(|r| ticket_row(&r, &self.keys)).transpose();
        };
        let ticket = ticket_row(&row, &self.keys)?;
        if let Some(player) = ticket.owner {
            self.owner_account = Some(Account {
                player,
                id: row.try_get("account_id").db()?,
                balance_cents: row.try_get("balance_cents").db()?,
            });
        }
        Ok(Some(ticket))
    }

    async fn paper(&mut self, key: &PaperKey) -> Result<Option<PaperRow>, StoreError> {
        let (cond, value) = paper_where(key);
        // The ticket's row is locked first, then read with what joins it in
        // a second statement: READ COMMITTED re-reads only the rows it
        // locks, so a request that waited for a sale or a payment would see
        // the ticket sold beside no stored answer (the shop's retry refused).
        let lock = format!("SELECT t.id FROM tickets t WHERE {cond}{}", self.for_update("t"));
        let locked: Option<i64> =
            sqlx::query_scalar(AssertSqlSafe(lock)).bind(&value).fetch_optional(self.c()).await.db()?;
        if locked.is_none() {
            return Ok(None);
        }
        let sql = format!("{PAPER_SELECT}{cond}");
        match sqlx::query(AssertSqlSafe(sql)).bind(value).fetch_optional(self.c()).await.db()? {
            Some(row) => Ok(Some(paper_row(&row, &self.keys)?)),
            None => Ok(None),
        }
    }

    async fn stored_action(&mut self, ticket: TicketId, seq: u64) -> Result<Option<StoredAnswer>, StoreError> {
        let row = sqlx::query_as(ACTION_SELECT).bind(ticket).bind(seq as i64).fetch_optional(self.c()).await.db()?;
        Ok(stored_answer(row))
    }

    async fn insert_player(
        &mut self,
        token_hash: &str,
        name: Option<&str>,
        now: i64,
    ) -> Result<(PlayerId, AccountId), StoreError> {
        Ok(sqlx::query_as(
            "WITH a AS (INSERT INTO accounts (name, kind) VALUES ($1, 'player') RETURNING id)
             INSERT INTO players (token_hash, name, account_id, created_ms) SELECT $2, $3, a.id, $4 FROM a
             RETURNING id, account_id",
        )
        .bind(format!("player:{token_hash}"))
        .bind(token_hash)
        .bind(name)
        .bind(now)
        .fetch_one(self.c())
        .await
        .db()?)
    }

    async fn limits(&mut self, player: PlayerId) -> Result<Option<LimitsRow>, StoreError> {
        let row: Option<LimitsTuple> =
            sqlx::query_as(LIMITS_SELECT).bind(player).fetch_optional(self.c()).await.db()?;
        Ok(row.map(limits_row))
    }

    async fn usage(&mut self, player: PlayerId, day_since: i64, week_since: i64) -> Result<Usage, StoreError> {
        let (tickets_today, spent_week_cents): (i64, i64) = sqlx::query_as(USAGE_SELECT)
            .bind(player)
            .bind(day_since)
            .bind(week_since)
            .fetch_one(self.c())
            .await
            .db()?;
        Ok(Usage { tickets_today, spent_week_cents })
    }

    async fn login_owner(&mut self, login: &str) -> Result<Option<PlayerId>, StoreError> {
        Ok(sqlx::query_scalar(LOGIN_OWNER_SELECT).bind(login).fetch_optional(self.c()).await.db()?)
    }

    async fn password_hash(&mut self, player: PlayerId) -> Result<Option<String>, StoreError> {
        // The player's row locked: whatever ends sessions (new credentials,
        // a recovery, a closure) and whatever opens one (a login) read the
        // credentials here first, so they take turns. A login that waited
        // reads the new hash and is refused; a change that waited writes
        // after the login's commit, and its statement then sees (and ends)
        // the session the login opened.
        let sql = format!("{PASSWORD_HASH_SELECT}{}", self.for_update("players"));
        let hash: Option<Option<String>> =
            sqlx::query_scalar(AssertSqlSafe(sql)).bind(player).fetch_optional(self.c()).await.db()?;
        Ok(hash.flatten())
    }

    async fn tickets_in_play(&mut self, player: PlayerId) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(IN_PLAY_SELECT).bind(player).fetch_one(self.c()).await.db()?)
    }

    async fn counter(&mut self, bucket: &str, lock: bool) -> Result<Counter, StoreError> {
        if lock {
            // A transaction's advisory lock on the bucket's name (the row
            // may not exist yet), in a key space of its own: the two-key
            // form never meets the audit chain's one-key lock.
            sqlx::query("SELECT pg_advisory_xact_lock(1094926401, hashtext($1))")
                .bind(bucket)
                .execute(self.c())
                .await
                .db()?;
        }
        let row: Option<(i64, i64, i64)> =
            sqlx::query_as(COUNTER_SELECT).bind(bucket).fetch_optional(self.c()).await.db()?;
        Ok(row.map_or_else(Counter::default, |(window_start_ms, count, last_ms)| Counter {
            window_start_ms,
            count,
            last_ms,
        }))
    }

    super::wallet::wallet_loads!();

    async fn apply(&mut self, changes: &Changes) -> Result<(), StoreError> {
        let plan = WritePlan::of(changes, None);
        if let Some(b) = &mut self.batched {
            let balance = changes.movement.as_ref().and_then(|m| m.player_balance).map(|b| b.account);
            b.plan = Some((plan, balance));
            return Ok(());
        }
        let sql = if self.locking() { plan.postgres_statement() } else { plan.postgres_statement_all_or_nothing() };
        let returned: Vec<String> =
            bind_values!(sqlx::query_scalar(AssertSqlSafe(sql)), plan.values()).fetch_all(self.c()).await.db()?;
        plan.check_guards(&returned)
    }
}

impl super::wallet::Fetch for PgUnit {
    fn lock(&self, of: &str) -> String {
        self.for_update(of)
    }

    async fn fetch(
        &mut self,
        sql: &str,
        values: &[super::plan::Val],
    ) -> Result<Option<super::wallet::OwnedRow>, StoreError> {
        let row =
            bind_values!(sqlx::query(AssertSqlSafe(sql.to_string())), values).fetch_optional(self.c()).await.db()?;
        Ok(row.as_ref().map(super::wallet::owned_pg))
    }

    fn keyring(&self) -> Arc<Keyring> {
        self.keys.clone()
    }
}
