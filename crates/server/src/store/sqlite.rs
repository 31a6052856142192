//! [`SqliteStore`]: the storage on one SQLite file, durable and fast.
//!
//! - WAL journal and `synchronous=FULL`: a COMMIT is on disk before its
//!   answers leave ("Nothing is shown to a player before it is durable").
//! - **Group commit**: one writer task owns the one write connection and is
//!   fed by a channel. It takes every pending write request (up to
//!   `group_commit_max`), runs each inside its own SAVEPOINT of one
//!   transaction (a refused request rolls back only its savepoint), COMMITs
//!   once (one disk sync for all), then answers them all. With
//!   `group_commit = false` every request is its own transaction.
//! - Reads (`GET`s, authentication) use a separate pool of connections,
//!   which WAL lets run beside the writer.
//!
//! Being the only writer also makes exactly-once actions simple
//! (guarantee 4): two requests on one ticket are applied one after the
//! other, and the second finds the first's `seq` and stored answer.

use super::{AUDIT_GENESIS, AuditCheck, BoxFut, LedgerCheck, PlayerId, Storage, audit_hash, now_ms, token_hash};
use crate::api::{ActionRequest, ClientSeed, IdempotencyKey, Me, PlayerCreated, Purchased, SoldTicket, TicketView};
use crate::config::Config;
use crate::error::AppError;
use crate::metrics::Metrics;
use crate::record::{DrawKind, Record, RecordAction, RecordDraw};
use crate::supply;
use anyhow::Context;
use engine::Game;
use math::PrizeTable;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{Connection, QueryBuilder, Row, Sqlite};
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use tracing::info;
use tokio::task::JoinHandle;

use super::sqlite_writer::{Done, Job, Op, WriterState, create_player, writer_loop};

pub struct SqliteStore {
    read: SqlitePool,
    writer: Mutex<Option<mpsc::Sender<Job>>>,
    writer_task: tokio::sync::Mutex<Option<JoinHandle<()>>>,
    checkpoint_task: Mutex<Option<JoinHandle<()>>>,
    auth_cache: RwLock<HashMap<String, PlayerId>>,
    description: String,
}

/// Connection options from a URL: `sqlite://PATH`, `sqlite:PATH` or a bare path.
pub fn connect_options(url: &str) -> anyhow::Result<SqliteConnectOptions> {
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

impl SqliteStore {
    /// Opens (creating and migrating) the database, emits the first blocks
    /// and the demo player on first start, and starts the writer task.
    pub async fn open(config: &Config, table: &PrizeTable, metrics: Arc<Metrics>) -> anyhow::Result<SqliteStore> {
        let opts = connect_options(&config.db)?;
        let path = opts.get_filename().display().to_string();
        let mut conn = SqliteConnection::connect_with(&opts)
            .await
            .with_context(|| format!("cannot open the SQLite database {path}"))?;
        sqlx::migrate!("./migrations").run(&mut conn).await.context("database migrations")?;
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&mut conn).await?;
        let sync: i64 = sqlx::query_scalar("PRAGMA synchronous").fetch_one(&mut conn).await?;
        anyhow::ensure!(mode.eq_ignore_ascii_case("wal"), "SQLite refused WAL mode (journal_mode={mode})");
        anyhow::ensure!(sync == 2, "SQLite refused synchronous=FULL (synchronous={sync})");

        let emission = ensure_emission(&mut conn, config, table).await?;
        let start_balance = i64::try_from(config.start_balance_cents).context("start balance")?;
        let mut state = WriterState::load(&mut conn, start_balance).await?;
        if !config.demo_token.is_empty() {
            let th = token_hash(&config.demo_token);
            let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM players WHERE token_hash = ?")
                .bind(&th)
                .fetch_optional(&mut conn)
                .await?;
            if exists.is_none() {
                let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
                create_player(&mut tx, &mut state, &th, Some("demo".into())).await.context("creating the demo player")?;
                tx.commit().await?;
                info!("created the demo player");
            }
        }
        let active: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM ticket_games WHERE phase <> 'finished'")
            .fetch_one(&mut conn)
            .await?;
        metrics.active_games.set(active);

        let read = SqlitePoolOptions::new()
            .max_connections(config.read_connections)
            .min_connections(1)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(opts.clone())
            .await
            .context("read pool")?;

        let checkpoints = tokio::spawn(checkpointer(read.clone()));
        let (tx, rx) = mpsc::channel(4096);
        let cap = config.batch_cap();
        let task = tokio::spawn(writer_loop(conn, rx, state, cap, metrics));
        let description = format!(
            "SQLite {path} (WAL, synchronous=FULL, {}), {emission}",
            if config.group_commit { format!("group commit up to {cap}") } else { "one transaction per request".into() }
        );
        Ok(SqliteStore {
            read,
            writer: Mutex::new(Some(tx)),
            writer_task: tokio::sync::Mutex::new(Some(task)),
            checkpoint_task: Mutex::new(Some(checkpoints)),
            auth_cache: RwLock::new(HashMap::new()),
            description,
        })
    }

    async fn write(&self, op: Op) -> Result<Done, AppError> {
        let sender = self
            .writer
            .lock()
            .expect("writer lock")
            .clone()
            .ok_or_else(|| AppError::Unavailable("the server is shutting down".into()))?;
        let (reply, rx) = oneshot::channel();
        sender
            .send(Job { op, reply })
            .await
            .map_err(|_| AppError::Unavailable("the server is shutting down".into()))?;
        rx.await.map_err(|_| AppError::internal("the writer stopped before answering"))?
    }

    /// The read pool, for tests and tools that inspect the database.
    pub fn read_pool(&self) -> &SqlitePool {
        &self.read
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

/// The emission in use: the first one of the database, created with
/// `initial_blocks` blocks of `table` on first start.
async fn ensure_emission(conn: &mut SqliteConnection, config: &Config, table: &PrizeTable) -> anyhow::Result<String> {
    let existing: Option<(i64, String, String)> =
        sqlx::query_as("SELECT id, code, table_digest FROM emissions ORDER BY id LIMIT 1")
            .fetch_optional(&mut *conn)
            .await?;
    if let Some((id, code, digest)) = existing {
        if digest != table.digest() {
            tracing::warn!(
                emission = id,
                "the database's emission uses the prize table {digest}; the configured table {} is not used",
                table.digest()
            );
        }
        let (blocks, left): (i64, i64) =
            sqlx::query_as("SELECT COUNT(*), COALESCE(SUM(size - next_sale), 0) FROM blocks WHERE emission_id = ?")
                .bind(id)
                .fetch_one(&mut *conn)
                .await?;
        return Ok(format!("emission {id} ({code}, table {}…, {blocks} blocks, {left} tickets unsold)", &digest[..12]));
    }
    anyhow::ensure!(config.initial_blocks >= 1, "initial_blocks must be at least 1 on first start");
    let started = Instant::now();
    let seed = crate::fairness::random_bytes::<32>();
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    let now = now_ms();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO emissions (code, table_toml, table_digest, price_cents, block_size, secret_seed, created_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(&table.code)
    .bind(table.to_toml())
    .bind(table.digest())
    .bind(table.price_cents as i64)
    .bind(i64::from(table.block_size))
    .bind(hex::encode(seed))
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    for number in 1..=config.initial_blocks {
        let block = supply::generate_block(table, id as u32, number, &seed)?;
        let block_id: i64 = sqlx::query_scalar(
            "INSERT INTO blocks (emission_id, number, size, commitment, created_ms) VALUES (?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(id)
        .bind(i64::from(number))
        .bind(block.tickets.len() as i64)
        .bind(&block.commitment)
        .bind(now)
        .fetch_one(&mut *tx)
        .await?;
        for chunk in block.tickets.chunks(2000) {
            let mut qb: QueryBuilder<Sqlite> = QueryBuilder::new(
                "INSERT INTO tickets (block_id, position, serial, play_code_hash, schedule_row, prize_5, prize_6, prize_7, prize_8) ",
            );
            qb.push_values(chunk, |mut b, t| {
                let [p5, p6, p7, p8] = t.prizes.cents();
                b.push_bind(block_id)
                    .push_bind(i64::from(t.position))
                    .push_bind(t.serial.clone())
                    .push_bind(t.play_code_hash.clone())
                    .push_bind(i64::from(t.row))
                    .push_bind(p5 as i64)
                    .push_bind(p6 as i64)
                    .push_bind(p7 as i64)
                    .push_bind(p8 as i64);
            });
            qb.build().execute(&mut *tx).await?;
        }
    }
    tx.commit().await?;
    tracing::info!(
        emission = id,
        blocks = config.initial_blocks,
        tickets = u64::from(config.initial_blocks) * u64::from(table.block_size),
        seconds = started.elapsed().as_secs_f64(),
        "first start: emitted the first blocks"
    );
    Ok(format!(
        "emission {id} ({}, table {}…, {} new blocks of {} tickets)",
        table.code,
        &table.digest()[..12],
        config.initial_blocks,
        table.block_size
    ))
}

/// The columns [`sold_ticket`] reads, for a `WHERE` to follow.
macro_rules! ticket_select {
    () => {
        "SELECT t.id, t.owner_id, t.serial, t.client_seed, t.server_seed, e.price_cents, g.state_json
         FROM tickets t
         JOIN ticket_games g ON g.ticket_id = t.id
         JOIN blocks b ON b.id = t.block_id
         JOIN emissions e ON e.id = b.emission_id "
    };
}

/// A sold ticket from a row of [`ticket_select!`].
pub(super) fn sold_ticket(row: &SqliteRow) -> Result<SoldTicket, AppError> {
    let seed_hex: String = row.try_get("server_seed")?;
    let server_seed =
        crate::record::parse_seed(&seed_hex).ok_or_else(|| AppError::internal("a stored server seed is not 32 bytes"))?;
    let state: String = row.try_get("state_json")?;
    let game: Game = serde_json::from_str(&state).map_err(|e| AppError::internal(format!("stored game state: {e}")))?;
    Ok(SoldTicket {
        serial: row.try_get("serial")?,
        price_cents: row.try_get("price_cents")?,
        client_seed: row.try_get("client_seed")?,
        server_seed,
        game,
    })
}

// ---------------------------------------------------------------------------
// The trait, reads on the pool.

impl Storage for SqliteStore {
    fn describe(&self) -> String {
        self.description.clone()
    }

    fn health(&self) -> BoxFut<'_, ()> {
        Box::pin(async move {
            let one: i64 = sqlx::query_scalar("SELECT 1").fetch_one(&self.read).await?;
            if one == 1 { Ok(()) } else { Err(AppError::Unavailable("database gave a wrong answer".into())) }
        })
    }

    fn authenticate<'a>(&'a self, token: &'a str) -> BoxFut<'a, Option<PlayerId>> {
        Box::pin(async move {
            let th = token_hash(token);
            if let Some(id) = self.auth_cache.read().expect("auth cache").get(&th) {
                return Ok(Some(*id));
            }
            let id: Option<i64> = sqlx::query_scalar("SELECT id FROM players WHERE token_hash = ?")
                .bind(&th)
                .fetch_optional(&self.read)
                .await?;
            if let Some(id) = id {
                self.auth_cache.write().expect("auth cache").insert(th, id);
            }
            Ok(id)
        })
    }

    fn create_player(&self, name: Option<String>) -> BoxFut<'_, PlayerCreated> {
        Box::pin(async move {
            let token = hex::encode(crate::fairness::random_bytes::<24>());
            let th = token_hash(&token);
            match self.write(Op::CreatePlayer { token_hash: th, name }).await? {
                Done::Player { id, balance } => Ok(PlayerCreated { player_id: id, token, balance_cents: balance }),
                _ => Err(AppError::internal("writer answered another request")),
            }
        })
    }

    fn me(&self, player: PlayerId) -> BoxFut<'_, Me> {
        Box::pin(async move {
            let balance: Option<i64> = sqlx::query_scalar(
                "SELECT a.balance_cents FROM players p JOIN accounts a ON a.id = p.account_id WHERE p.id = ?",
            )
            .bind(player)
            .fetch_optional(&self.read)
            .await?;
            let balance = balance.ok_or_else(|| AppError::Unauthorized("unknown player".into()))?;
            Ok(Me { player_id: player, balance_cents: balance })
        })
    }

    fn buy_ticket(
        &self,
        player: PlayerId,
        client_seed: Option<ClientSeed>,
        server_seed: [u8; 32],
        key: Option<IdempotencyKey>,
    ) -> BoxFut<'_, Purchased> {
        Box::pin(async move {
            match self.write(Op::Buy { player, client_seed, server_seed, key }).await? {
                Done::Purchase { purchased, .. } => Ok(*purchased),
                _ => Err(AppError::internal("writer answered another request")),
            }
        })
    }

    fn tickets(&self, player: PlayerId) -> BoxFut<'_, Vec<TicketView>> {
        Box::pin(async move {
            let rows = sqlx::query(concat!(ticket_select!(), "WHERE t.owner_id = ? ORDER BY t.id DESC"))
            .bind(player)
            .fetch_all(&self.read)
            .await?;
            rows.iter().map(|r| sold_ticket(r).map(|t| t.view())).collect()
        })
    }

    fn ticket<'a>(&'a self, player: PlayerId, id: &'a str) -> BoxFut<'a, TicketView> {
        Box::pin(async move { Ok(self.load_owned(player, id).await?.1.view()) })
    }

    fn act<'a>(&'a self, player: PlayerId, id: &'a str, request: ActionRequest) -> BoxFut<'a, String> {
        Box::pin(async move {
            match self.write(Op::Act { player, serial: id.to_string(), request }).await? {
                Done::Answer { json, .. } => Ok(json),
                _ => Err(AppError::internal("writer answered another request")),
            }
        })
    }

    fn record<'a>(&'a self, player: PlayerId, id: &'a str) -> BoxFut<'a, Record> {
        Box::pin(async move {
            let (ticket_id, ticket) = self.load_owned(player, id).await?;
            // One read transaction: actions and draws of the same moment.
            let mut tx = self.read.begin().await?;
            let actions: Vec<(i64, String)> =
                sqlx::query_as("SELECT seq, request_json FROM actions WHERE ticket_id = ? AND seq < ? ORDER BY seq")
                    .bind(ticket_id)
                    .bind(ticket.game.seq() as i64)
                    .fetch_all(&mut *tx)
                    .await?;
            let draws: Vec<(i64, String, Option<String>, String)> = sqlx::query_as(
                "SELECT n, kind, player, capone FROM draws WHERE ticket_id = ? AND n < ? ORDER BY n",
            )
            .bind(ticket_id)
            .bind(ticket.game.draws() as i64)
            .fetch_all(&mut *tx)
            .await?;
            tx.commit().await?;
            let actions = actions
                .into_iter()
                .map(|(seq, json)| {
                    let req: ActionRequest =
                        serde_json::from_str(&json).map_err(|e| AppError::internal(format!("stored action: {e}")))?;
                    Ok(RecordAction { seq: seq as u64, action: req.action })
                })
                .collect::<Result<Vec<_>, AppError>>()?;
            let draws = draws
                .into_iter()
                .map(|(n, kind, p, c)| {
                    let bad = || AppError::internal("a stored draw is malformed");
                    Ok(RecordDraw {
                        n: n as u64,
                        kind: DrawKind::parse(&kind).ok_or_else(bad)?,
                        player: p.map(|p| p.parse()).transpose().map_err(|_| bad())?,
                        capone: c.parse().map_err(|_| bad())?,
                    })
                })
                .collect::<Result<Vec<_>, AppError>>()?;
            let view = ticket.view();
            Ok(Record {
                serial: ticket.serial.clone(),
                client_seed: ticket.client_seed.clone(),
                commitment: view.commitment,
                server_seed: view.server_seed,
                prizes_cents: ticket.game.prizes(),
                actions,
                draws,
                result: ticket.game.result(),
            })
        })
    }

    fn check_audit_chain(&self) -> BoxFut<'_, AuditCheck> {
        Box::pin(async move {
            let rows: Vec<(i64, i64, String, String, String, String)> = sqlx::query_as(
                "SELECT id, created_ms, kind, data_json, prev_hash, hash FROM audit_log ORDER BY id",
            )
            .fetch_all(&self.read)
            .await?;
            let mut prev = AUDIT_GENESIS.to_string();
            let mut first_broken = None;
            for (id, ms, kind, data, prev_hash, hash) in &rows {
                if *prev_hash != prev || audit_hash(prev_hash, *ms, kind, data) != *hash {
                    first_broken = Some(*id);
                    break;
                }
                prev = hash.clone();
            }
            Ok(AuditCheck { entries: rows.len() as u64, first_broken })
        })
    }

    fn check_ledger(&self) -> BoxFut<'_, LedgerCheck> {
        Box::pin(async move {
            let mut tx = self.read.begin().await?;
            let (entries, sum): (i64, i64) =
                sqlx::query_as("SELECT COUNT(*), COALESCE(SUM(amount_cents), 0) FROM ledger_entries")
                    .fetch_one(&mut *tx)
                    .await?;
            let unbalanced: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM (SELECT movement_id FROM ledger_entries GROUP BY movement_id
                  HAVING SUM(amount_cents) <> 0 OR COUNT(*) <> 2) AS bad",
            )
            .fetch_one(&mut *tx)
            .await?;
            let mismatches: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM accounts a WHERE a.balance_cents <>
                   (SELECT COALESCE(SUM(l.amount_cents), 0) FROM ledger_entries l WHERE l.account_id = a.id)",
            )
            .fetch_one(&mut *tx)
            .await?;
            let negative: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM accounts WHERE kind = 'player' AND balance_cents < 0")
                    .fetch_one(&mut *tx)
                    .await?;
            tx.commit().await?;
            Ok(LedgerCheck {
                entries: entries as u64,
                sum_cents: sum,
                unbalanced_movements: unbalanced as u64,
                balance_mismatches: mismatches as u64,
                negative_players: negative as u64,
            })
        })
    }

    fn close(&self) -> BoxFut<'_, ()> {
        Box::pin(async move {
            // Dropping the sender lets the writer drain its queue and stop.
            self.writer.lock().expect("writer lock").take();
            if let Some(task) = self.writer_task.lock().await.take() {
                task.await.map_err(|e| AppError::internal(format!("writer task: {e}")))?;
            }
            if let Some(task) = self.checkpoint_task.lock().expect("checkpoint lock").take() {
                task.abort();
            }
            self.read.close().await;
            Ok(())
        })
    }
}

impl SqliteStore {
    /// A sold ticket of `player` by its id (the serial); 404 for another
    /// player's ticket, exactly as for a ticket that does not exist.
    async fn load_owned(&self, player: PlayerId, id: &str) -> Result<(i64, SoldTicket), AppError> {
        let row = sqlx::query(concat!(ticket_select!(), "WHERE t.serial = ?"))
        .bind(id)
        .fetch_optional(&self.read)
        .await?;
        let Some(row) = row else { return Err(AppError::ticket_not_found()) };
        let owner: i64 = row.try_get("owner_id")?;
        if owner != player {
            return Err(AppError::ticket_not_found());
        }
        Ok((row.try_get("id")?, sold_ticket(&row)?))
    }
}
