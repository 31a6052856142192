//! The group-commit writer of [`super::sqlite::SqliteStore`].
//!
//! One task owns the one write connection. It takes every pending request
//! (up to the cap), runs them in ONE transaction, each inside its own
//! SAVEPOINT (a request that fails half-way rolls back only its own
//! writes), COMMITs once — one disk sync under `synchronous=FULL` — and only
//! then answers them all ("Nothing is shown to a player before it is
//! durable"). A refused request (409, 402, 404, 422) is refused before it
//! writes anything (guarantee 7).
//!
//! Speed: sqlx runs each SQLite connection on its own thread, so every
//! statement costs a round trip between threads. The writer therefore keeps
//! what only it can change in memory (sold tickets' games, balances, the
//! sale cursor, the next movement id, the audit chain's last hash) and
//! writes each request with ONE multi-statement query, whose statements run
//! back to back on the connection's thread. The memory is authoritative only
//! because this task is the only writer; it is dropped and reloaded from the
//! database whenever a transaction fails. Every write of a game is guarded
//! (`WHERE seq = ?`, `RETURNING`), so stale memory fails loudly instead of
//! writing wrong data.

use super::{PlayerId, answer_json, apply_action, audit_hash, now_ms, AUDIT_GENESIS};
use crate::api::{ActionRequest, ClientSeed, IdempotencyKey, Purchased, SoldTicket};
use crate::error::AppError;
use crate::metrics::Metrics;
use engine::{Game, PrizeSchedule};
use sqlx::sqlite::{SqliteConnection, SqliteRow};
use sqlx::{Connection, Row};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, oneshot};

/// The ledger's house accounts (rows of the first migration).
pub const HOUSE_PLAY_MONEY: i64 = 1;
pub const HOUSE_SALES: i64 = 2;
pub const HOUSE_PRIZES: i64 = 3;

/// A write request.
pub enum Op {
    CreatePlayer { token_hash: String, name: Option<String> },
    Buy { player: PlayerId, client_seed: Option<ClientSeed>, server_seed: [u8; 32], key: Option<IdempotencyKey> },
    Act { player: PlayerId, serial: String, request: ActionRequest },
}

/// What a write did; counters move only once it is committed.
pub enum Done {
    Player { id: PlayerId, balance: i64 },
    Purchase { purchased: Box<Purchased>, new_sale: bool },
    Answer { json: String, finished_prize: Option<u64> },
}

pub struct Job {
    pub op: Op,
    pub reply: oneshot::Sender<Result<Done, AppError>>,
}

/// Why a request was not applied.
enum JobError {
    /// Refused before writing anything: answered as is.
    Refused(AppError),
    /// A write failed after `SAVEPOINT job`: roll it back, answer 500.
    Failed(String),
}

impl From<AppError> for JobError {
    fn from(e: AppError) -> JobError {
        JobError::Refused(e)
    }
}

impl From<sqlx::Error> for JobError {
    fn from(e: sqlx::Error) -> JobError {
        JobError::Refused(AppError::from(e))
    }
}

/// A sold, unfinished ticket as the writer last wrote it.
#[derive(Clone)]
struct CachedTicket {
    id: i64,
    owner: PlayerId,
    ticket: SoldTicket,
}

/// The next tickets for sale online.
struct SaleCursor {
    block_id: i64,
    block_number: i64,
    size: i64,
    /// Tickets of the block already sold online.
    sold: i64,
    price: i64,
    /// Prefetched unsold tickets: (id, position, serial, prizes).
    queue: VecDeque<(i64, i64, String, PrizeSchedule)>,
}

/// What only the writer changes, kept in memory (see the module's doc).
pub struct WriterState {
    pub start_balance: i64,
    last_audit_hash: String,
    next_movement_id: i64,
    tickets: HashMap<String, CachedTicket>,
    balances: HashMap<PlayerId, (i64, i64)>,
    cursor: Option<SaleCursor>,
}

/// Most sold tickets remembered; past that the memory starts again empty.
const CACHE_LIMIT: usize = 200_000;

impl WriterState {
    pub async fn load(conn: &mut SqliteConnection, start_balance: i64) -> Result<WriterState, sqlx::Error> {
        let last_audit_hash: String = sqlx::query_scalar("SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1")
            .fetch_optional(&mut *conn)
            .await?
            .unwrap_or_else(|| AUDIT_GENESIS.to_string());
        let max_movement: i64 =
            sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM movements").fetch_one(&mut *conn).await?;
        Ok(WriterState {
            start_balance,
            last_audit_hash,
            next_movement_id: max_movement + 1,
            tickets: HashMap::new(),
            balances: HashMap::new(),
            cursor: None,
        })
    }

    /// An audit entry chained to the last one; the state moves on only
    /// once it is written ([`WriterState::chained`]).
    fn audit_entry(&self, kind: &'static str, data: serde_json::Value) -> AuditEntry {
        let created_ms = now_ms();
        let data_json = data.to_string();
        let hash = audit_hash(&self.last_audit_hash, created_ms, kind, &data_json);
        AuditEntry { created_ms, kind, data_json, prev_hash: self.last_audit_hash.clone(), hash }
    }

    fn chained(&mut self, entry: AuditEntry) {
        self.last_audit_hash = entry.hash;
    }

    async fn balance(&mut self, conn: &mut SqliteConnection, player: PlayerId) -> Result<(i64, i64), AppError> {
        if let Some(b) = self.balances.get(&player) {
            return Ok(*b);
        }
        let row: Option<(i64, i64)> = sqlx::query_as(
            "SELECT a.id, a.balance_cents FROM players p JOIN accounts a ON a.id = p.account_id WHERE p.id = ?",
        )
        .bind(player)
        .fetch_optional(&mut *conn)
        .await?;
        let b = row.ok_or_else(|| AppError::Unauthorized("unknown player".into()))?;
        if self.balances.len() >= CACHE_LIMIT {
            self.balances.clear();
        }
        self.balances.insert(player, b);
        Ok(b)
    }

    /// The next ticket for sale, without taking it.
    async fn peek_sale(&mut self, conn: &mut SqliteConnection) -> Result<Option<(i64, i64, String, PrizeSchedule, i64)>, AppError> {
        if self.cursor.as_ref().is_some_and(|c| c.sold >= c.size) {
            let c = self.cursor.take().expect("cursor");
            tracing::info!(block = c.block_number, "block sold out; sales go on with the next block");
        }
        if self.cursor.is_none() {
            let row: Option<(i64, i64, i64, i64, i64)> = sqlx::query_as(
                "SELECT b.id, b.number, b.size, b.next_sale, e.price_cents FROM blocks b
                 JOIN emissions e ON e.id = b.emission_id
                 WHERE b.next_sale < b.size ORDER BY b.emission_id, b.number LIMIT 1",
            )
            .fetch_optional(&mut *conn)
            .await?;
            let Some((block_id, block_number, size, sold, price)) = row else { return Ok(None) };
            self.cursor = Some(SaleCursor { block_id, block_number, size, sold, price, queue: VecDeque::new() });
        }
        let c = self.cursor.as_mut().expect("cursor");
        if c.queue.is_empty() {
            let rows = sqlx::query(
                "SELECT id, position, serial, prize_5, prize_6, prize_7, prize_8 FROM tickets
                 WHERE block_id = ? AND position > ? ORDER BY position LIMIT 1024",
            )
            .bind(c.block_id)
            .bind(c.sold)
            .fetch_all(&mut *conn)
            .await?;
            for r in &rows {
                let p = |k: &str| r.try_get::<i64, _>(k).map(|v| v as u64);
                c.queue.push_back((
                    r.try_get("id")?,
                    r.try_get("position")?,
                    r.try_get("serial")?,
                    PrizeSchedule::new([p("prize_5")?, p("prize_6")?, p("prize_7")?, p("prize_8")?]),
                ));
            }
            if c.queue.is_empty() {
                return Err(AppError::internal(format!("block {} has no ticket after position {}", c.block_id, c.sold)));
            }
        }
        let (id, position, serial, prizes) = c.queue.front().expect("queue").clone();
        if position != c.sold + 1 {
            return Err(AppError::internal(format!("block {}: next ticket at {position}, expected {}", c.block_id, c.sold + 1)));
        }
        Ok(Some((id, c.block_id, serial, prizes, c.price)))
    }

    fn took_sale(&mut self) {
        if let Some(c) = self.cursor.as_mut() {
            c.queue.pop_front();
            c.sold += 1;
        }
    }
}

struct AuditEntry {
    created_ms: i64,
    kind: &'static str,
    data_json: String,
    prev_hash: String,
    hash: String,
}

pub async fn writer_loop(
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
            if let Ok(done) = &result {
                match done {
                    Done::Player { .. } => metrics.players_created.inc(),
                    Done::Purchase { new_sale: true, .. } => {
                        metrics.tickets_sold.inc();
                        metrics.active_games.inc();
                    }
                    Done::Answer { finished_prize: Some(prize), .. } => {
                        metrics.games_finished.inc();
                        metrics.active_games.dec();
                        metrics.prizes_paid_cents.inc_by(*prize);
                    }
                    _ => {}
                }
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

/// One transaction for all `jobs`; answers are released only after the
/// COMMIT is durable.
async fn run_batch(conn: &mut SqliteConnection, state: &mut WriterState, jobs: &[Job]) -> Vec<Result<Done, AppError>> {
    let outcome: Result<Vec<Result<Done, AppError>>, sqlx::Error> = async {
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        let mut results = Vec::with_capacity(jobs.len());
        for job in jobs {
            let r = match process(&mut tx, state, &job.op).await {
                Ok(done) => Ok(done),
                Err(JobError::Refused(e)) => Err(e),
                Err(JobError::Failed(msg)) => {
                    // Only this request's writes are undone.
                    sqlx::query("ROLLBACK TO job; RELEASE job").execute(&mut *tx).await?;
                    state.tickets.clear();
                    state.balances.clear();
                    state.cursor = None;
                    Err(AppError::internal(msg))
                }
            };
            results.push(r);
        }
        tx.commit().await?;
        Ok(results)
    }
    .await;
    match outcome {
        Ok(results) => results,
        Err(e) => {
            let err = AppError::internal(format!("write transaction failed: {e}"));
            // Nothing of this batch is durable: forget what memory says.
            match WriterState::load(conn, state.start_balance).await {
                Ok(fresh) => *state = fresh,
                Err(e2) => {
                    tracing::error!(error = %e2, "reloading the writer's state");
                    state.tickets.clear();
                    state.balances.clear();
                    state.cursor = None;
                }
            }
            jobs.iter().map(|_| Err(err.clone())).collect()
        }
    }
}

async fn process(conn: &mut SqliteConnection, state: &mut WriterState, op: &Op) -> Result<Done, JobError> {
    match op {
        Op::CreatePlayer { token_hash, name } => {
            sqlx::query("SAVEPOINT job").execute(&mut *conn).await?;
            match create_player(conn, state, token_hash, name.clone()).await {
                Ok((id, balance)) => {
                    sqlx::query("RELEASE job").execute(&mut *conn).await?;
                    Ok(Done::Player { id, balance })
                }
                Err(e) => Err(JobError::Failed(format!("creating a player: {e}"))),
            }
        }
        Op::Buy { player, client_seed, server_seed, key } => {
            buy(conn, state, *player, client_seed.as_ref(), *server_seed, key.as_ref()).await
        }
        Op::Act { player, serial, request } => act(conn, state, *player, serial, *request).await,
    }
}

/// A new player and their play money: one movement of two entries
/// (guarantee 3). Runs inside a savepoint.
pub async fn create_player(
    conn: &mut SqliteConnection,
    state: &mut WriterState,
    token_hash: &str,
    name: Option<String>,
) -> Result<(PlayerId, i64), sqlx::Error> {
    let account: i64 = sqlx::query_scalar("INSERT INTO accounts (name, kind) VALUES (?, 'player') RETURNING id")
        .bind(format!("player:{token_hash}"))
        .fetch_one(&mut *conn)
        .await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO players (token_hash, name, account_id, created_ms) VALUES (?, ?, ?, ?) RETURNING id",
    )
    .bind(token_hash)
    .bind(&name)
    .bind(account)
    .bind(now_ms())
    .fetch_one(&mut *conn)
    .await?;
    let amount = state.start_balance;
    let movement = state.next_movement_id;
    let audit = state.audit_entry("player_created", serde_json::json!({"player_id": id, "balance_cents": amount}));
    sqlx::query(
        "INSERT INTO movements (id, reason, ticket_id, created_ms) VALUES (?, 'start_balance', NULL, ?);
         INSERT INTO ledger_entries (movement_id, account_id, amount_cents) VALUES (?, ?, ?), (?, ?, ?);
         UPDATE accounts SET balance_cents = balance_cents + CASE id WHEN ? THEN ? ELSE ? END WHERE id IN (?, ?);
         INSERT INTO audit_log (created_ms, kind, data_json, prev_hash, hash) VALUES (?, ?, ?, ?, ?);",
    )
    .bind(movement)
    .bind(audit.created_ms)
    .bind(movement)
    .bind(HOUSE_PLAY_MONEY)
    .bind(-amount)
    .bind(movement)
    .bind(account)
    .bind(amount)
    .bind(HOUSE_PLAY_MONEY)
    .bind(-amount)
    .bind(amount)
    .bind(HOUSE_PLAY_MONEY)
    .bind(account)
    .bind(audit.created_ms)
    .bind(audit.kind)
    .bind(&audit.data_json)
    .bind(&audit.prev_hash)
    .bind(&audit.hash)
    .execute(&mut *conn)
    .await?;
    state.next_movement_id += 1;
    state.chained(audit);
    state.balances.insert(id, (account, amount));
    Ok((id, amount))
}

/// The stored ticket with its owner's account: [`super::sqlite::sold_ticket`]'s
/// columns plus `owner_id`.
async fn load_ticket(conn: &mut SqliteConnection, serial: &str) -> Result<Option<CachedTicket>, AppError> {
    let row: Option<SqliteRow> = sqlx::query(
        "SELECT t.id, t.owner_id, t.serial, t.client_seed, t.server_seed, e.price_cents, g.state_json
         FROM tickets t
         JOIN ticket_games g ON g.ticket_id = t.id
         JOIN blocks b ON b.id = t.block_id
         JOIN emissions e ON e.id = b.emission_id
         WHERE t.serial = ?",
    )
    .bind(serial)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else { return Ok(None) };
    Ok(Some(CachedTicket {
        id: row.try_get("id")?,
        owner: row.try_get("owner_id")?,
        ticket: super::sqlite::sold_ticket(&row)?,
    }))
}

fn buy_request_json(client_seed: Option<&ClientSeed>) -> String {
    serde_json::json!({ "client_seed": client_seed.map(|c| c.as_str()) }).to_string()
}

/// The writes of a sale (the SQL texts are `'static` for sqlx's statement cache).
macro_rules! buy_sql {
    () => {
        "SAVEPOINT job;
UPDATE tickets SET status = 'sold', owner_id = ?, sold_ms = ?, client_seed = ?, server_seed = ?, commitment = ?
 WHERE id = ? AND status = 'unsold' RETURNING id;
UPDATE blocks SET next_sale = next_sale + 1 WHERE id = ?;
INSERT INTO movements (id, reason, ticket_id, created_ms) VALUES (?, 'ticket_sale', ?, ?);
INSERT INTO ledger_entries (movement_id, account_id, amount_cents) VALUES (?, ?, ?), (?, ?, ?);
UPDATE accounts SET balance_cents = balance_cents + CASE id WHEN ? THEN ? ELSE ? END WHERE id IN (?, ?);
INSERT INTO ticket_games (ticket_id, seq, phase, state_json) VALUES (?, 0, ?, ?);
INSERT INTO audit_log (created_ms, kind, data_json, prev_hash, hash) VALUES (?, ?, ?, ?, ?);"
    };
}

const BUY_SQL_PLAIN: &str = concat!(buy_sql!(), "\nRELEASE job;");
const BUY_SQL_WITH_KEY: &str = concat!(
    buy_sql!(),
    "\nINSERT INTO idempotency_keys (player_id, key, request_json, ticket_id, created_ms) VALUES (?, ?, ?, ?, ?);\nRELEASE job;"
);

/// Debits the price and assigns the next unsold ticket, in one savepoint.
async fn buy(
    conn: &mut SqliteConnection,
    state: &mut WriterState,
    player: PlayerId,
    client_seed: Option<&ClientSeed>,
    server_seed: [u8; 32],
    key: Option<&IdempotencyKey>,
) -> Result<Done, JobError> {
    let request_json = buy_request_json(client_seed);
    if let Some(key) = key {
        let found: Option<(String, i64)> =
            sqlx::query_as("SELECT request_json, ticket_id FROM idempotency_keys WHERE player_id = ? AND key = ?")
                .bind(player)
                .bind(key.as_str())
                .fetch_optional(&mut *conn)
                .await?;
        if let Some((stored, ticket_id)) = found {
            if stored != request_json {
                return Err(AppError::Conflict("this Idempotency-Key was used for a purchase with another body".into()).into());
            }
            let serial: String =
                sqlx::query_scalar("SELECT serial FROM tickets WHERE id = ?").bind(ticket_id).fetch_one(&mut *conn).await?;
            let cached = match state.tickets.get(&serial) {
                Some(c) => c.clone(),
                None => load_ticket(conn, &serial).await?.ok_or_else(|| AppError::internal("idempotent ticket vanished"))?,
            };
            let (_, balance) = state.balance(conn, player).await?;
            return Ok(Done::Purchase {
                purchased: Box::new(Purchased { ticket: cached.ticket.view(), balance_cents: balance }),
                new_sale: false,
            });
        }
    }
    let (account, balance) = state.balance(conn, player).await?;
    let Some((ticket_id, block_id, serial, prizes, price)) = state.peek_sale(conn).await? else {
        tracing::error!("every block of the emission is sold out: emit more blocks");
        return Err(AppError::Conflict("no ticket left for sale: every block is sold out".into()).into());
    };
    if balance < price {
        return Err(AppError::InsufficientFunds { balance, price }.into());
    }
    let client_seed = client_seed.cloned().unwrap_or_else(ClientSeed::random);
    let commitment = engine::commitment(&server_seed);
    let game = Game::new(prizes);
    let now = now_ms();
    let movement = state.next_movement_id;
    let audit = state.audit_entry(
        "ticket_sold",
        serde_json::json!({"serial": serial, "player_id": player, "price_cents": price, "commitment": commitment}),
    );
    let sql = if key.is_some() { BUY_SQL_WITH_KEY } else { BUY_SQL_PLAIN };
    let mut q = sqlx::query(sql)
        .bind(player)
        .bind(now)
        .bind(client_seed.as_str())
        .bind(hex::encode(server_seed))
        .bind(&commitment)
        .bind(ticket_id)
        .bind(block_id)
        .bind(movement)
        .bind(ticket_id)
        .bind(now)
        .bind(movement)
        .bind(account)
        .bind(-price)
        .bind(movement)
        .bind(HOUSE_SALES)
        .bind(price)
        .bind(account)
        .bind(-price)
        .bind(price)
        .bind(account)
        .bind(HOUSE_SALES)
        .bind(ticket_id)
        .bind(game.phase().name())
        .bind(serde_json::to_string(&game).expect("a game serializes"))
        .bind(audit.created_ms)
        .bind(audit.kind)
        .bind(audit.data_json.clone())
        .bind(audit.prev_hash.clone())
        .bind(audit.hash.clone());
    if let Some(key) = key {
        q = q.bind(player).bind(key.as_str().to_string()).bind(request_json).bind(ticket_id).bind(now);
    }
    match q.fetch_all(&mut *conn).await {
        Ok(rows) if rows.len() == 1 => {}
        Ok(rows) => return Err(JobError::Failed(format!("ticket {serial}: {} rows sold instead of 1", rows.len()))),
        Err(e) => return Err(JobError::Failed(format!("selling {serial}: {e}"))),
    }
    state.next_movement_id += 1;
    state.chained(audit);
    state.took_sale();
    state.balances.insert(player, (account, balance - price));
    let ticket = SoldTicket { serial: serial.clone(), price_cents: price, client_seed: client_seed.as_str().to_string(), server_seed, game };
    let purchased = Box::new(Purchased { ticket: ticket.view(), balance_cents: balance - price });
    if state.tickets.len() >= CACHE_LIMIT {
        state.tickets.clear();
    }
    state.tickets.insert(serial, CachedTicket { id: ticket_id, owner: player, ticket });
    Ok(Done::Purchase { purchased, new_sale: true })
}

const ACT_SQL: &str = "SAVEPOINT job;
INSERT INTO actions (ticket_id, seq, request_json, answer_json, created_ms) VALUES (?, ?, ?, ?, ?);
INSERT INTO draws (ticket_id, n, seq, kind, player, capone) VALUES (?, ?, ?, ?, ?, ?);
UPDATE ticket_games SET seq = ?, phase = ?, state_json = ?, result_tricks = ?, prize_cents = ?, finished_ms = ?
 WHERE ticket_id = ? AND seq = ? RETURNING ticket_id;
RELEASE job;";

const ACT_FINISH_SQL: &str = "SAVEPOINT job;
INSERT INTO actions (ticket_id, seq, request_json, answer_json, created_ms) VALUES (?, ?, ?, ?, ?);
INSERT INTO draws (ticket_id, n, seq, kind, player, capone) VALUES (?, ?, ?, ?, ?, ?);
UPDATE ticket_games SET seq = ?, phase = ?, state_json = ?, result_tricks = ?, prize_cents = ?, finished_ms = ?
 WHERE ticket_id = ? AND seq = ? RETURNING ticket_id;
INSERT INTO audit_log (created_ms, kind, data_json, prev_hash, hash) VALUES (?, ?, ?, ?, ?);
RELEASE job;";

const ACT_PRIZE_SQL: &str = "SAVEPOINT job;
INSERT INTO actions (ticket_id, seq, request_json, answer_json, created_ms) VALUES (?, ?, ?, ?, ?);
INSERT INTO draws (ticket_id, n, seq, kind, player, capone) VALUES (?, ?, ?, ?, ?, ?);
UPDATE ticket_games SET seq = ?, phase = ?, state_json = ?, result_tricks = ?, prize_cents = ?, finished_ms = ?
 WHERE ticket_id = ? AND seq = ? RETURNING ticket_id;
INSERT INTO audit_log (created_ms, kind, data_json, prev_hash, hash) VALUES (?, ?, ?, ?, ?);
INSERT INTO movements (id, reason, ticket_id, created_ms) VALUES (?, 'prize', ?, ?);
INSERT INTO ledger_entries (movement_id, account_id, amount_cents) VALUES (?, ?, ?), (?, ?, ?);
UPDATE accounts SET balance_cents = balance_cents + CASE id WHEN ? THEN ? ELSE ? END WHERE id IN (?, ?);
RELEASE job;";

/// Applies one action exactly once (guarantee 4): events, draw, new state,
/// the answer and, when it finishes the ticket, the prize's ledger movement
/// and an audit entry, all in one savepoint of the batch's transaction.
async fn act(
    conn: &mut SqliteConnection,
    state: &mut WriterState,
    player: PlayerId,
    serial: &str,
    request: ActionRequest,
) -> Result<Done, JobError> {
    let cached = match state.tickets.get(serial) {
        Some(c) => c.clone(),
        None => match load_ticket(conn, serial).await? {
            Some(c) => c,
            None => return Err(AppError::ticket_not_found().into()),
        },
    };
    if cached.owner != player {
        return Err(AppError::ticket_not_found().into());
    }
    let seq = cached.ticket.game.seq();
    let request_json = request.canonical();
    if request.seq < seq {
        // Guarantee 4: a retry gets the answer already given; nothing is drawn.
        let (stored_request, answer): (String, String) =
            sqlx::query_as("SELECT request_json, answer_json FROM actions WHERE ticket_id = ? AND seq = ?")
                .bind(cached.id)
                .bind(request.seq as i64)
                .fetch_one(&mut *conn)
                .await?;
        if stored_request == request_json {
            return Ok(Done::Answer { json: answer, finished_prize: None });
        }
        return Err(AppError::Conflict(format!(
            "action seq {} was already applied with another body; the ticket is at seq {seq}",
            request.seq
        ))
        .into());
    }
    if request.seq > seq {
        return Err(AppError::Conflict(format!("the ticket is at seq {seq}, not {}", request.seq)).into());
    }
    let (account, balance) = state.balance(conn, player).await?;
    let applied = apply_action(cached.ticket.clone(), request)?;
    let [draw] = applied.draws.as_slice() else {
        return Err(AppError::internal(format!("an action took {} draws, not 1", applied.draws.len())).into());
    };
    let game = &applied.ticket.game;
    let result = game.result();
    let prize = result.map_or(0, |r| r.prize_cents as i64);
    let new_balance = balance + prize;
    let answer = answer_json(&applied.ticket, &applied.events, new_balance);
    let now = now_ms();
    let audit = result.map(|r| {
        state.audit_entry(
            "ticket_finished",
            serde_json::json!({"serial": serial, "tricks": r.tricks, "prize_cents": r.prize_cents,
                               "server_seed": hex::encode(applied.ticket.server_seed)}),
        )
    });
    let movement = state.next_movement_id;
    let sql = match (result, prize > 0) {
        (None, _) => ACT_SQL,
        (Some(_), false) => ACT_FINISH_SQL,
        (Some(_), true) => ACT_PRIZE_SQL,
    };
    let mut q = sqlx::query(sql)
        .bind(cached.id)
        .bind(seq as i64)
        .bind(request_json)
        .bind(answer.clone())
        .bind(now)
        .bind(cached.id)
        .bind(draw.n as i64)
        .bind(seq as i64)
        .bind(draw.kind.as_str())
        .bind(draw.player.map(|p| p.as_str()))
        .bind(draw.capone.as_str())
        .bind(game.seq() as i64)
        .bind(game.phase().name())
        .bind(serde_json::to_string(game).expect("a game serializes"))
        .bind(result.map(|r| i64::from(r.tricks)))
        .bind(result.map(|r| r.prize_cents as i64))
        .bind(result.map(|_| now))
        .bind(cached.id)
        .bind(seq as i64);
    if let Some(a) = &audit {
        q = q.bind(a.created_ms).bind(a.kind).bind(a.data_json.clone()).bind(a.prev_hash.clone()).bind(a.hash.clone());
    }
    if prize > 0 {
        // The prize is credited in the transaction that finishes the game.
        q = q
            .bind(movement)
            .bind(cached.id)
            .bind(now)
            .bind(movement)
            .bind(HOUSE_PRIZES)
            .bind(-prize)
            .bind(movement)
            .bind(account)
            .bind(prize)
            .bind(HOUSE_PRIZES)
            .bind(-prize)
            .bind(prize)
            .bind(HOUSE_PRIZES)
            .bind(account);
    }
    match q.fetch_all(&mut *conn).await {
        Ok(rows) if rows.len() == 1 => {}
        Ok(_) => {
            return Err(JobError::Failed(format!("ticket {serial}: the stored game is not at seq {seq}")));
        }
        Err(e) => return Err(JobError::Failed(format!("ticket {serial}: {e}"))),
    }
    if let Some(a) = audit {
        state.chained(a);
    }
    if prize > 0 {
        state.next_movement_id += 1;
        state.balances.insert(player, (account, new_balance));
    }
    if result.is_some() {
        state.tickets.remove(serial);
    } else {
        state.tickets.insert(serial.to_string(), CachedTicket { ticket: applied.ticket, ..cached });
    }
    Ok(Done::Answer { json: answer, finished_prize: result.map(|r| r.prize_cents) })
}
