//! The operator mode's worker, one per process: it sends the outbox's
//! credits and rollbacks until the operator acknowledges them (with backoff,
//! across restarts, whatever became of the player's session), resolves the
//! debits left unanswered (a process that died between the debit and its
//! settlement), keeps the outbox's metrics, and forgets old nonces.
//!
//! Several processes may run it on one database: an entry is claimed by a
//! guarded write of its attempt count before it is sent, so two processes
//! never send the same attempt (and if a claim's process dies, the entry is
//! due again after its backoff).

use super::OperatorWallet;
use super::client::Answer;
use crate::core::operator::{DebitOutcome, WalletWrite, backoff_ms};
use crate::error::{AppError, StoreError};
use crate::metrics::Metrics;
use crate::store::{OutboxEntry, now_ms};
use std::sync::Arc;
use std::time::Duration;
use wallet::TxKind;

/// How often the worker looks for work.
const TICK: Duration = Duration::from_millis(200);
/// Entries sent at once.
const BATCH: i64 = 32;

/// Runs until `stop` resolves.
pub async fn run(
    wallet: Arc<OperatorWallet>,
    metrics: Arc<Metrics>,
    window_ms: i64,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(stop);
    let mut rounds = 0u64;
    loop {
        tokio::select! {
            _ = &mut stop => return Ok(()),
            _ = tick.tick() => {}
        }
        if let Err(e) = once(&wallet).await {
            tracing::warn!(error = %e, "the wallet's worker");
        }
        if rounds.is_multiple_of(10) {
            if let Err(e) = gauges(&wallet, &metrics).await {
                tracing::warn!(error = %e, "the outbox's metrics");
            }
            if let Err(e) = wallet.store.prune_nonces(now_ms() - 2 * window_ms).await {
                tracing::warn!(error = %e, "forgetting old nonces");
            }
        }
        rounds += 1;
    }
}

/// One pass: unanswered debits, then the outbox's due entries.
pub async fn once(wallet: &Arc<OperatorWallet>) -> Result<usize, AppError> {
    let margin = 2_000;
    let stale = wallet.store.stale_debits(now_ms() - wallet.timeout.as_millis() as i64 - margin, BATCH).await?;
    for round in &stale {
        let why = "no settlement recorded within the wallet's timeout (the purchase's process stopped?)".to_string();
        match wallet.store.settle(round, DebitOutcome::Unknown { why }).await {
            Ok(_) | Err(AppError::Conflict(_)) => {}
            Err(e) => tracing::warn!(round, error = %e, "resolving an unanswered debit"),
        }
    }
    let due = wallet.store.outbox_due(now_ms(), BATCH).await?;
    let n = due.len();
    let mut sends = tokio::task::JoinSet::new();
    for entry in due {
        let wallet = wallet.clone();
        sends.spawn(async move { send(&wallet, entry).await });
    }
    while let Some(done) = sends.join_next().await {
        if let Ok(Err(e)) = done {
            tracing::warn!(error = %e, "sending an outbox entry");
        }
    }
    Ok(n + stale.len())
}

/// Claims an entry (its attempt counted, its next try set), sends it, and
/// records the acknowledgement or why it failed.
async fn send(wallet: &OperatorWallet, entry: OutboxEntry) -> Result<(), AppError> {
    let jitter = i64::from(crate::fairness::random_bytes::<2>()[0]) * 4;
    let claim = WalletWrite::Attempt {
        transaction_id: entry.transaction_id.clone(),
        attempts: entry.attempts,
        next_ms: now_ms() + backoff_ms(entry.attempts, jitter),
        error: None,
    };
    match wallet.store.outbox_write(vec![claim]).await {
        Ok(()) => {}
        // Another process claimed it first.
        Err(AppError::Storage(StoreError::Stale(_))) => return Ok(()),
        Err(e) => return Err(e),
    }
    let (kind, path) = match entry.kind {
        TxKind::Credit => ("credit", wallet::paths::CREDIT),
        TxKind::Rollback => ("rollback", wallet::paths::ROLLBACK),
        TxKind::Debit => return Err(AppError::internal("a debit in the outbox")),
    };
    let error = match wallet.client.call(kind, path, entry.body_json.as_bytes()).await {
        Answer::Applied(_) => {
            return match entry.kind {
                TxKind::Rollback => match wallet.store.rollback_acknowledged(&entry.round, &entry.transaction_id).await
                {
                    Ok(()) | Err(AppError::Conflict(_)) => Ok(()),
                    Err(e) => Err(e),
                },
                _ => {
                    let acked = WalletWrite::Acked { transaction_id: entry.transaction_id.clone(), acked_ms: now_ms() };
                    match wallet.store.outbox_write(vec![acked]).await {
                        Ok(()) | Err(AppError::Storage(StoreError::Stale(_))) => Ok(()),
                        Err(e) => Err(e),
                    }
                }
            };
        }
        Answer::Refused { status, code, message } => {
            // Never applied: kept, and retried, until someone looks (the
            // outbox's age alerts); a conflict is a bug on one side.
            tracing::error!(
                transaction = entry.transaction_id,
                status,
                code,
                message,
                "the operator refused an owed transaction"
            );
            format!("refused {status} {code}: {message}")
        }
        Answer::Unknown(why) => why,
    };
    let failed = WalletWrite::Failed { transaction_id: entry.transaction_id, error: truncate(&error, 500) };
    wallet.store.outbox_write(vec![failed]).await
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

async fn gauges(wallet: &OperatorWallet, metrics: &Metrics) -> Result<(), AppError> {
    let (depth, oldest) = wallet.store.outbox_stats().await?;
    metrics.outbox_depth.set(depth);
    metrics.outbox_oldest_age_seconds.set(oldest.map_or(0, |t| ((now_ms() - t) / 1000).max(0)));
    metrics.wallet_unresolved_rounds.set(wallet.store.unresolved_rounds().await?);
    Ok(())
}
