//! Game actions in batches on PostgreSQL: a process's actions waiting at
//! the same moment are read by ONE statement and written by ONE statement
//! that commits them together (the SQLite writer's group commit, for
//! PostgreSQL). Each action is still decided alone, by the same use case
//! as on its own ([`usecase::run`]), and each of its writes keeps its
//! guard; the batch only shares what PostgreSQL pays per statement and per
//! commit: the round trips, building each statement's executor, the
//! commit's flush (docs/storage.md, "Actions in batches").
//!
//! A request waits for its batch's commit before it is answered, so what
//! it is answered is durable, as on its own. When anything goes wrong in a
//! batch (a guard found its row changed, an error, a lost connection), no
//! request of it is answered from it: each runs again on its own
//! ([`super::writer::PgWriter::run`]), from its reads, and finds either
//! its action stored (the batch did commit: the stored answer, the same
//! bytes) or not (it is written then). That is the retry every action
//! already allows (guarantee 4), so a batch never answers what is not
//! written nor writes anything twice.
//!
//! What a batch does not take, it sends back to be run on its own: a
//! second action on a ticket already in the batch, a ticket the batch's
//! read does not find with its owner (a paper ticket nobody's history
//! holds, an unknown serial: the answer comes from the usual path), a
//! second balance change of one account (each is guarded by the balance
//! it was decided on), a write of another shape than the batch statement
//! takes ([`postgres_batch`]).

use super::unit::PgUnit;
use crate::keys::Keyring;
use crate::metrics::Metrics;
use crate::store::clock::now_ms;
use crate::store::error::{DbResult, sqlx_error};
use crate::store::plan::{Column, WritePlan, postgres_batch};
use crate::store::reads::{TICKET_COLUMNS, TICKET_FROM, ticket_row};
use crate::store::tokens::TokenCheck;
use domain::error::{AppError, StoreError};
use domain::usecase::{self, Done, Op};
use domain::{Account, AccountId};
use sqlx::postgres::{PgConnection, PgPool};
use sqlx::{AssertSqlSafe, Connection, Row};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio::task::JoinHandle;

/// Batches in flight at once in one process. One: the actions that arrive
/// while a batch is written wait for the next, which is then bigger. Two
/// in flight (one read and decided while the other commits) made smaller
/// batches and fewer actions a second (two servers, 64 players: 5 104
/// against 5 452 actions/s, PostgreSQL's CPU 220 against 192 µs a
/// request; four: 4 072, 303 µs; docs/bench-log/2026-12-06-postgres-action-batches.md).
/// A deployment with more cores runs more processes, each with its batch
/// in flight.
const WORKERS: usize = 1;

/// How many times the worker lets the other tasks run before it closes a
/// batch that could take more: requests already parsed on this process's
/// threads then reach the queue and join it. Idle, each yield returns at
/// once (microseconds); loaded, the batches are bigger and each action
/// cheaper: two servers, 64 players, 8 and 32 yields gave 6 724 and 6 852
/// actions/s against 5 251 without, PostgreSQL's CPU 159 and 156 µs a
/// request against 183 (docs/bench-log/2026-12-06-postgres-action-batches.md).
const GATHER_YIELDS: usize = 16;

/// The most actions one batch takes.
const MAX_BATCH: usize = 64;

/// The batch's read: every waiting action's ticket, its game, its owner's
/// account and whether the caller still holds the remembered token (as
/// `TOKEN_OK` in `store::postgres`, per row; true without one).
const READ: &str = "SELECT r.serial AS batch_serial, a.id AS account_id, a.balance_cents, ";
const READ_TOKEN: &str = ", (r.player IS NULL \
     OR EXISTS (SELECT 1 FROM players WHERE id = r.player AND token_hash = r.token_hash) \
     OR EXISTS (SELECT 1 FROM sessions WHERE token_hash = r.token_hash AND player_id = r.player AND expires_ms > $4)) \
     AS token_ok";
const READ_JOIN: &str = "JOIN unnest(CAST($1 AS text[]), CAST($2 AS bigint[]), CAST($3 AS text[])) \
     AS r(serial, player, token_hash) ON r.serial = t.serial \
     JOIN players p ON p.id = t.owner_id JOIN accounts a ON a.id = p.account_id";

/// One action waiting for its batch.
struct Job {
    op: Op,
    check: Option<TokenCheck>,
    reply: oneshot::Sender<Answer>,
}

/// What a batch answers an action.
pub(super) enum Answer {
    /// Its answer, committed (or its refusal: nothing to write).
    Done(Result<Done, AppError>),
    /// Run it on its own (given back).
    Alone(Op, Option<TokenCheck>),
}

/// The batches of one process.
pub(super) struct Batcher {
    queue: mpsc::UnboundedSender<Job>,
    workers: Vec<JoinHandle<()>>,
}

impl Batcher {
    pub fn start(pool: PgPool, keys: Arc<Keyring>, metrics: Arc<Metrics>) -> Batcher {
        let (queue, rx) = mpsc::unbounded_channel();
        let rx = Arc::new(Mutex::new(rx));
        let workers = (0..WORKERS)
            .map(|_| tokio::spawn(worker(rx.clone(), pool.clone(), keys.clone(), metrics.clone())))
            .collect();
        Batcher { queue, workers }
    }

    /// Runs a game action in the next batch.
    pub async fn run(&self, op: Op, check: Option<TokenCheck>) -> Answer {
        let (reply, answer) = oneshot::channel();
        if let Err(mpsc::error::SendError(job)) = self.queue.send(Job { op, check, reply }) {
            return Answer::Alone(job.op, job.check);
        }
        answer.await.unwrap_or_else(|_| Answer::Done(Err(StoreError::ShuttingDown.into())))
    }

    pub fn close(&self) {
        for w in &self.workers {
            w.abort();
        }
    }
}

/// The batches' own connection: outside the pool (which it does not
/// count against), with generic plans. A batch's statements take arrays,
/// and PostgreSQL, left to choose, planned them again for every batch (a
/// plan for its exact number of rows looks cheaper than the generic one
/// for ten): 4 % of its CPU in the planner. Whatever the number of rows,
/// the plan is the same (index lookups from each array's rows), so it is
/// planned once per connection. The pool's connections keep the default.
/// A `SET`, not a startup parameter: a pooler in session mode (PgBouncer)
/// refuses startup parameters it does not know, and resets the `SET` when
/// the connection ends (docs/deployment.md, section 6).
async fn connect(pool: &PgPool) -> Result<PgConnection, sqlx::Error> {
    let mut conn = PgConnection::connect_with(&pool.connect_options()).await?;
    sqlx::query("SET plan_cache_mode = force_generic_plan").execute(&mut conn).await?;
    Ok(conn)
}

/// Takes the actions waiting (up to [`MAX_BATCH`]) and runs them as one batch.
async fn worker(rx: Arc<Mutex<mpsc::UnboundedReceiver<Job>>>, pool: PgPool, keys: Arc<Keyring>, metrics: Arc<Metrics>) {
    let mut own: Option<PgConnection> = None;
    loop {
        let jobs = {
            let mut rx = rx.lock().await;
            let Some(first) = rx.recv().await else { return };
            let mut jobs = vec![first];
            let mut yields = 0;
            while jobs.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(job) => jobs.push(job),
                    Err(_) if yields < GATHER_YIELDS => {
                        yields += 1;
                        tokio::task::yield_now().await;
                    }
                    Err(_) => break,
                }
            }
            jobs
        };
        let conn = match own.take() {
            Some(c) => c,
            None => match connect(&pool).await {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "no connection for the batches of actions: each runs on its own");
                    jobs.into_iter().for_each(alone);
                    continue;
                }
            },
        };
        own = run_batch(conn, &keys, &metrics, jobs).await;
    }
}

fn alone(job: Job) {
    let _ = job.reply.send(Answer::Alone(job.op, job.check));
}

fn serial(op: &Op) -> Option<&str> {
    match op {
        Op::PlayAction(usecase::PlayAction { serial, .. }) => Some(serial),
        _ => None,
    }
}

/// One action decided, waiting for the batch's write.
struct Decided {
    job: Job,
    done: Done,
    plan: WritePlan,
}

/// Runs one batch on `conn`, and gives the connection back unless it failed.
async fn run_batch(
    mut conn: PgConnection,
    keys: &Arc<Keyring>,
    metrics: &Metrics,
    jobs: Vec<Job>,
) -> Option<PgConnection> {
    // One action a ticket per batch.
    let mut seen = HashSet::new();
    let mut batch = Vec::with_capacity(jobs.len());
    for job in jobs {
        match serial(&job.op) {
            Some(s) if seen.insert(s.to_string()) => batch.push(job),
            _ => alone(job),
        }
    }
    let rows = match read(&mut conn, keys, &batch).await {
        Ok(rows) => rows,
        Err(e) => {
            tracing::debug!(error = %domain::error::error_chain(&e), "a batch's read failed: each action runs on its own");
            batch.into_iter().for_each(alone);
            return reusable(conn, &e);
        }
    };
    let mut unit = PgUnit::batch_unit(conn, keys.clone());
    let mut decided: Vec<Decided> = Vec::with_capacity(batch.len());
    let mut balances: HashSet<AccountId> = HashSet::new();
    for job in batch {
        let Some(row) = serial(&job.op).and_then(|s| rows.get(s)) else {
            alone(job);
            continue;
        };
        let row = match row {
            Ok(row) => row,
            Err(Refused::Token) => {
                let _ = job.reply.send(Answer::Done(Err(StoreError::TokenRevoked.into())));
                continue;
            }
            Err(Refused::Corrupt(e)) => {
                let _ = job.reply.send(Answer::Done(Err(e.clone().into())));
                continue;
            }
        };
        unit.prepare(row.ticket.clone(), row.account);
        let outcome = usecase::run(&mut unit, &job.op, now_ms()).await;
        let write = unit.take_write();
        match outcome {
            // Refused, or a replay: nothing to write.
            Ok(done) if done.effect.is_none() => {
                let _ = job.reply.send(Answer::Done(Ok(done)));
            }
            Err(AppError::Storage(_)) => alone(job),
            Err(e) => {
                let _ = job.reply.send(Answer::Done(Err(e)));
            }
            Ok(done) => match write {
                Some((plan, balance)) if balance.is_none_or(|a| balances.insert(a)) => {
                    decided.push(Decided { job, done, plan })
                }
                _ => alone(job),
            },
        }
    }
    if decided.is_empty() {
        return unit.into_own();
    }
    let plans: Vec<&WritePlan> = decided.iter().map(|d| &d.plan).collect();
    let Some(statement) = postgres_batch(&plans) else {
        decided.into_iter().for_each(|d| alone(d.job));
        return unit.into_own();
    };
    let mut query = sqlx::query(AssertSqlSafe(statement.sql));
    for column in statement.columns {
        query = match column {
            Column::Int(v) => query.bind(v),
            Column::Text(v) => query.bind(v),
        };
    }
    let written = query.bind(statement.guarded_rows).execute(unit.c()).await;
    let conn = unit.into_own()?;
    match written {
        Ok(_) => {
            metrics.commit_batch_size.observe(decided.len() as f64);
            for d in decided {
                if let Some(effect) = d.done.effect {
                    metrics.count(effect);
                }
                let _ = d.job.reply.send(Answer::Done(Ok(d.done)));
            }
        }
        Err(e) => {
            // Committed or not (a lost connection leaves it unknown), each
            // action's own run finds out from its reads.
            tracing::debug!(error = %e, actions = decided.len(), "a batch's write did not commit: each action runs on its own");
            decided.into_iter().for_each(|d| alone(d.job));
            return reusable(conn, &sqlx_error(e));
        }
    }
    Some(conn)
}

/// The connection after an error: kept when the database refused a
/// statement (the connection is fine), dropped otherwise (closed, or in a
/// state nobody knows); the next batch connects again.
fn reusable(conn: PgConnection, e: &StoreError) -> Option<PgConnection> {
    let refused = match e {
        StoreError::Database { source, .. } => {
            source.downcast_ref::<sqlx::Error>().is_some_and(|e| e.as_database_error().is_some())
        }
        StoreError::Corrupt(_) | StoreError::Stale(_) => true,
        _ => false,
    };
    refused.then_some(conn)
}

/// An action's ticket as the batch read it.
struct Read {
    ticket: domain::TicketRow,
    account: Option<Account>,
}

/// Why a row read does not go on.
enum Refused {
    /// The remembered token is no longer held: 401.
    Token,
    Corrupt(StoreError),
}

/// The batch's read, by serial. A serial without a row is not in the map.
async fn read(
    conn: &mut sqlx::PgConnection,
    keys: &Keyring,
    batch: &[Job],
) -> Result<HashMap<String, Result<Read, Refused>>, StoreError> {
    let serials: Vec<String> = batch.iter().filter_map(|j| serial(&j.op)).map(str::to_string).collect();
    let players: Vec<Option<i64>> = batch.iter().map(|j| j.check.as_ref().map(|c| c.player)).collect();
    let tokens: Vec<Option<String>> = batch.iter().map(|j| j.check.as_ref().map(|c| c.token_hash.clone())).collect();
    let sql = format!("{READ}{TICKET_COLUMNS}{READ_TOKEN}{TICKET_FROM}{READ_JOIN}");
    let rows = sqlx::query(AssertSqlSafe(sql))
        .bind(serials)
        .bind(players)
        .bind(tokens)
        .bind(now_ms())
        .fetch_all(conn)
        .await
        .db()?;
    let mut out = HashMap::with_capacity(rows.len());
    for row in rows {
        let serial: String = row.try_get("batch_serial").db()?;
        let read = if !row.try_get::<bool, _>("token_ok").db()? {
            Err(Refused::Token)
        } else {
            match ticket_row(&row, keys) {
                Ok(ticket) => {
                    let account = match ticket.owner {
                        Some(player) => Some(Account {
                            player,
                            id: row.try_get("account_id").db()?,
                            balance_cents: row.try_get("balance_cents").db()?,
                        }),
                        None => None,
                    };
                    Ok(Read { ticket, account })
                }
                Err(e) => Err(Refused::Corrupt(e)),
            }
        };
        out.insert(serial, read);
    }
    Ok(out)
}
