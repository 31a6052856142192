//! [`PgWriter`]: PostgreSQL's write half. Each request is one unit
//! ([`super::unit::PgUnit`]), locking or optimistic ([`Mode`]), run again
//! when PostgreSQL aborted it for a conflict; game actions go through the
//! batches first ([`super::batch`]). Beside it, the sealer chains the
//! audit entries of every process and folds the block figures of ended
//! connections.

use super::batch::{Answer, Batcher};
use super::unit::{Conn, PgUnit};
use crate::keys::Keyring;
use crate::metrics::Metrics;
use crate::store::audit;
use crate::store::clock::now_ms;
use crate::store::error::DbResult;
use crate::store::tokens::TokenCheck;
use domain::error::{AppError, StoreError};
use domain::usecase::{self, Done, Op};
use sqlx::postgres::PgPool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinHandle;

/// How often a request that PostgreSQL aborted (deadlock, serialization) is run again.
const RETRIES: usize = 5;

/// The write half: the pool, and the audit sealer running beside it.
pub(crate) struct PgWriter {
    pool: PgPool,
    metrics: Arc<Metrics>,
    keys: Arc<Keyring>,
    sealer: Mutex<Option<JoinHandle<()>>>,
    /// The game actions' batches ([`super::batch`]).
    batcher: Batcher,
}

impl PgWriter {
    pub fn start(pool: PgPool, metrics: Arc<Metrics>, keys: Arc<Keyring>) -> PgWriter {
        let sealer = tokio::spawn(sealer(pool.clone(), keys.clone()));
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
    /// A game action goes to the next batch ([`super::batch`]) first,
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
async fn sealer(pool: PgPool, keys: Arc<Keyring>) {
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for n in 0u64.. {
        tick.tick().await;
        if let Err(e) = audit::seal_pending(&pool, &keys, audit::Wait::No).await {
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
pub(crate) async fn fold_block_figures(pool: &PgPool) -> Result<u64, StoreError> {
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
