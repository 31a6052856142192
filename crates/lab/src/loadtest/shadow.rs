//! `loadtest --shadow-wallet`: the internal mode with the operator's side
//! of the wallet busy as in the operator mode, for a fair comparison on one
//! machine (`bench/operator-wallet.sh` with `SHADOW=1`).
//!
//! In the operator mode the reference operator runs in this process, beside
//! the players, and answers a signed debit per purchase and a signed credit
//! per prize: on a machine of two cores, that work shares the other core
//! (and its caches) with the load generator, and slows the server on its
//! own core with it (BENCHMARKS.md, "The operator mode": a neighbour alone
//! took a quarter of the internal mode's actions). The shadow gives the
//! internal mode the same neighbour: the same reference operator, started
//! the same way, and from this process, for each purchase the server
//! answered, the debit the operator mode's server would have sent (same
//! transaction id, round, player, amount), and for each prize its credit.
//! The players never wait for them (in the internal mode the server does
//! not call any wallet); the calls are sent by tasks of their own, with the
//! game server's own wallet client (`server::WalletClient`), and their
//! outcomes counted. The client's own work (about 30 µs a call) then runs
//! here rather than in the server: a little more neighbour in the internal
//! rounds than in the operator rounds, which is said with the figures.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use wallet::{MoneyRequest, RoundId, TxKind};

/// The shadow's client and what became of its calls.
pub(super) struct Shadow {
    client: Arc<server::WalletClient>,
    sent: AtomicU64,
    outcomes: Arc<Outcomes>,
}

/// The calls' outcomes, counted by the tasks that send them.
#[derive(Default)]
struct Outcomes {
    applied: AtomicU64,
    failed: AtomicU64,
    first_failure: std::sync::Mutex<Option<String>>,
}

impl Shadow {
    /// A shadow sending to the reference operator at `url`, signed with `keys`.
    pub(super) fn new(url: &str, keys: wallet::Keys) -> anyhow::Result<Shadow> {
        let metrics = Arc::new(server::Metrics::new());
        Ok(Shadow {
            client: Arc::new(server::WalletClient::new(url, keys, Duration::from_secs(10), metrics)?),
            sent: AtomicU64::new(0),
            outcomes: Arc::default(),
        })
    }

    /// Sends, without waiting, the wallet call the operator mode would make
    /// for ticket `serial`'s first round: its debit, or a prize's credit.
    pub(super) fn send(&self, kind: TxKind, serial: &str, player: String, amount_cents: i64) {
        let round = RoundId::new(serial, 1);
        let request = MoneyRequest {
            transaction_id: round.tx(kind),
            round_id: round.id(),
            player,
            amount_cents,
            currency: wallet::CURRENCY.to_string(),
            game: serial.split('-').next().unwrap_or(serial).to_string(),
        };
        let body = serde_json::to_vec(&request).expect("a wallet request serializes");
        let (name, path) = match kind {
            TxKind::Credit => ("credit", wallet::paths::CREDIT),
            _ => ("debit", wallet::paths::DEBIT),
        };
        self.sent.fetch_add(1, Ordering::Relaxed);
        let (client, outcomes) = (self.client.clone(), self.outcomes.clone());
        tokio::spawn(async move {
            match client.call(name, path, &body).await {
                server::WalletCallAnswer::Applied(_) => {
                    outcomes.applied.fetch_add(1, Ordering::Relaxed);
                }
                other => {
                    outcomes.failed.fetch_add(1, Ordering::Relaxed);
                    let mut first = outcomes.first_failure.lock().expect("not poisoned");
                    first.get_or_insert_with(|| format!("{name} {}: {other:?}", request.transaction_id));
                }
            }
        });
    }

    /// Waits (up to a minute) until every call sent has an outcome; then
    /// the report's `shadow_wallet` object and, if any call was not
    /// applied, what went wrong.
    pub(super) async fn finish(&self) -> (serde_json::Value, Option<String>) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let o = &self.outcomes;
        let done = || o.applied.load(Ordering::Relaxed) + o.failed.load(Ordering::Relaxed);
        while done() < self.sent.load(Ordering::Relaxed) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let (sent, applied, failed) =
            (self.sent.load(Ordering::Relaxed), o.applied.load(Ordering::Relaxed), o.failed.load(Ordering::Relaxed));
        let json = serde_json::json!({"calls": sent, "applied": applied, "failed": failed});
        let problem = if applied == sent {
            None
        } else {
            let first = o.first_failure.lock().expect("not poisoned").clone();
            Some(format!(
                "{} of {sent} shadow wallet calls were not applied (first: {})",
                sent - applied,
                first.unwrap_or_else(|| "still unanswered after a minute".into())
            ))
        };
        (json, problem)
    }
}
