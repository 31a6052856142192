//! The operator mode's worker, one per process: it sends the outbox's
//! credits and rollbacks until the operator acknowledges them (with backoff,
//! across restarts, whatever became of the player's session), resolves the
//! debits left unanswered (a process that died between the debit and its
//! settlement), and forgets old nonces. (The outbox's gauges are not its:
//! `/metrics` reads them at each scrape, as the desk's health does,
//! [`super::WalletFigures`].)
//!
//! Several processes may run it on one database: an entry is claimed by a
//! guarded write of its attempt count before it is sent, so two processes
//! never send the same attempt (and if a claim's process dies, the entry is
//! due again after its backoff).

use super::OperatorWallet;
use super::client::Answer;
use crate::metrics::Metrics;
use crate::store::{OutboxEntry, now_ms};
use domain::WalletWrite;
use domain::error::{AppError, StoreError};
use domain::operator::{DebitOutcome, backoff_ms};
use std::sync::Arc;
use std::time::Duration;
use wallet::TxKind;

/// How often the worker looks for work.
const TICK: Duration = Duration::from_millis(200);
/// Entries sent at once (a full batch is followed by another at once).
const BATCH: i64 = 64;

/// Runs until `stop` resolves. (`_metrics`: the calls are counted by the
/// wallet's client, the gauges read at each scrape.)
pub async fn run(
    wallet: Arc<OperatorWallet>,
    _metrics: Arc<Metrics>,
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
        // A full batch: more is due, go on at once.
        loop {
            match once(&wallet).await {
                Ok(n) if n >= BATCH as usize => continue,
                Ok(_) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "the wallet's worker");
                    break;
                }
            }
        }
        if rounds.is_multiple_of(10)
            && let Err(e) = wallet.store.prune_nonces(now_ms() - 2 * window_ms).await
        {
            tracing::warn!(error = %e, "forgetting old nonces");
        }
        rounds += 1;
    }
}

/// One pass: unanswered debits, then the outbox's due entries, claimed
/// in one write, sent at once, their acknowledgements written in one.
/// Returns how many entries it handled (a full batch: call again at once).
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
    let due = claim(wallet, wallet.store.outbox_due(now_ms(), BATCH).await?).await?;
    let n = due.len();
    let mut sends = tokio::task::JoinSet::new();
    for entry in due {
        let wallet = wallet.clone();
        sends.spawn(async move {
            let answer = send(&wallet, &entry).await;
            (entry, answer)
        });
    }
    let (mut acked, mut failed) = (Vec::new(), Vec::new());
    while let Some(done) = sends.join_next().await {
        let Ok((entry, answer)) = done else { continue };
        match (answer, entry.kind) {
            (Ok(()), TxKind::Rollback) => {
                match wallet.store.rollback_acknowledged(&entry.round, &entry.transaction_id).await {
                    Ok(()) | Err(AppError::Conflict(_)) => {}
                    Err(e) => tracing::warn!(error = %e, "recording a rollback's acknowledgement"),
                }
            }
            (Ok(()), _) => acked.push(WalletWrite::Acked { transaction_id: entry.transaction_id, acked_ms: now_ms() }),
            (Err(error), _) => {
                failed.push(WalletWrite::Failed { transaction_id: entry.transaction_id, error: truncate(&error, 500) })
            }
        }
    }
    write_each_if_stale(wallet, acked).await?;
    if !failed.is_empty() {
        wallet.store.outbox_write(failed).await?;
    }
    Ok(n + stale.len())
}

/// Claims the entries (their attempt counted, their next try set) in one
/// write; when another process claimed one of them first, one by one,
/// keeping those this process claimed.
async fn claim(wallet: &OperatorWallet, due: Vec<OutboxEntry>) -> Result<Vec<OutboxEntry>, AppError> {
    let claim_of = |entry: &OutboxEntry| {
        let jitter = i64::from(crate::fairness::random_bytes::<2>()[0]) * 4;
        WalletWrite::Attempt {
            transaction_id: entry.transaction_id.clone(),
            attempts: entry.attempts,
            next_ms: now_ms() + backoff_ms(entry.attempts, jitter),
            error: None,
        }
    };
    if due.is_empty() {
        return Ok(due);
    }
    match wallet.store.outbox_write(due.iter().map(claim_of).collect()).await {
        Ok(()) => return Ok(due),
        Err(AppError::Storage(StoreError::Stale(_))) => {}
        Err(e) => return Err(e),
    }
    let mut mine = Vec::new();
    for entry in due {
        match wallet.store.outbox_write(vec![claim_of(&entry)]).await {
            Ok(()) => mine.push(entry),
            Err(AppError::Storage(StoreError::Stale(_))) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(mine)
}

/// Writes guarded rows in one write; if one is stale (another process got
/// there first), each on its own, the stale ones skipped.
async fn write_each_if_stale(wallet: &OperatorWallet, writes: Vec<WalletWrite>) -> Result<(), AppError> {
    if writes.is_empty() {
        return Ok(());
    }
    match wallet.store.outbox_write(writes.clone()).await {
        Ok(()) => return Ok(()),
        Err(AppError::Storage(StoreError::Stale(_))) => {}
        Err(e) => return Err(e),
    }
    for w in writes {
        match wallet.store.outbox_write(vec![w]).await {
            Ok(()) | Err(AppError::Storage(StoreError::Stale(_))) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Sends one claimed entry: `Ok` once the operator acknowledged it, else
/// why not (kept, and tried again after its backoff).
async fn send(wallet: &OperatorWallet, entry: &OutboxEntry) -> Result<(), String> {
    let (kind, path) = match entry.kind {
        TxKind::Credit => ("credit", wallet::paths::CREDIT),
        TxKind::Rollback => ("rollback", wallet::paths::ROLLBACK),
        TxKind::Debit => return Err("a debit in the outbox".into()),
    };
    match wallet.client.call(kind, path, entry.body_json.as_bytes()).await {
        Answer::Applied(_) => Ok(()),
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
            Err(format!("refused {status} {code}: {message}"))
        }
        Answer::Unknown(why) => Err(why),
    }
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}
