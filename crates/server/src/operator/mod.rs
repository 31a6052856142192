//! The operator mode's moving parts (docs/operator-integration.md): the
//! client of the operator's wallet ([`client`]), a purchase's two steps
//! around its debit ([`OperatorWallet::buy`]), and the worker that sends
//! the outbox and resolves debits left unanswered ([`worker`]).
//!
//! The decisions are `core::operator`'s and the writes the store's; this
//! module only talks to the operator and strings the steps together:
//! reserve (the round durable) -> debit -> settle (the ticket shown only
//! with the acknowledgement, in one transaction).

pub mod client;
pub mod transport;
pub mod worker;

use crate::metrics::Metrics;
use crate::store::{Reservation, Store};
use client::{Answer, WalletClient};
use domain::error::AppError;
use domain::operator::{DebitOutcome, unconfirmed_message};
use std::sync::Arc;
use std::time::Duration;
use wallet::errors;

/// The operator's wallet, as the HTTP handlers use it.
pub struct OperatorWallet {
    pub client: WalletClient,
    pub store: Arc<Store>,
    /// A debit unanswered for longer (plus a margin) is resolved by the worker.
    pub timeout: Duration,
}

impl OperatorWallet {
    pub fn new(
        config: &crate::config::Config,
        store: Arc<Store>,
        metrics: Arc<Metrics>,
    ) -> anyhow::Result<OperatorWallet> {
        let url = config.operator_wallet_url.as_deref().unwrap_or_default();
        let timeout = Duration::from_millis(config.wallet_timeout_ms);
        Ok(OperatorWallet { client: WalletClient::new(url, config.wallet_keys()?, timeout, metrics)?, store, timeout })
    }

    /// A purchase: the ticket held and its round recorded, the debit sent,
    /// its fate recorded; the purchase's answer once acknowledged.
    pub async fn buy(&self, player: domain::PlayerId, key: Option<String>) -> Result<String, AppError> {
        let debit = match self.store.reserve(player, key).await? {
            Reservation::Replayed(answer) => return Ok(answer),
            Reservation::Debit(d) => d,
        };
        let body = serde_json::to_vec(&debit).expect("a debit serializes");
        let outcome = match self.client.call("debit", wallet::paths::DEBIT, &body).await {
            // The client believes only an answer that matches this debit.
            Answer::Applied(a) => DebitOutcome::Acknowledged { balance_cents: a.balance_cents },
            Answer::Refused { code, message, .. } => DebitOutcome::Refused { code, message },
            Answer::Unknown(why) => DebitOutcome::Unknown { why },
        };
        let answer = self.store.settle(&debit.round_id, outcome.clone()).await?;
        match outcome {
            DebitOutcome::Acknowledged { .. } => Ok(answer),
            DebitOutcome::Refused { code, message } => Err(refusal(&code, &message)),
            DebitOutcome::Unknown { .. } => Err(AppError::WalletUnavailable(unconfirmed_message())),
        }
    }

    /// The player's balance at the operator.
    pub async fn balance(&self, player: domain::PlayerId) -> Result<i64, AppError> {
        let reference = self
            .store
            .operator_ref_of(player)
            .await?
            .ok_or_else(|| AppError::OperatorMode("this player was not launched by the operator".into()))?;
        self.client.balance(&reference).await.map_err(|why| {
            tracing::warn!(why, "the operator's wallet did not give the balance");
            AppError::WalletUnavailable("the operator's wallet did not give your balance; try again".into())
        })
    }
}

/// The operator mode's figures, read from the database when asked (the
/// same in every process): what `GET /metrics` (its gauges) and `GET
/// /api/admin/health` (`wallet`) show, both read at the request, so that
/// they agree at any moment. All 0 in the internal mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalletFigures {
    /// Credits and rollbacks owed to the operator, not acknowledged yet.
    pub outbox_depth: i64,
    /// The age of the oldest of them, in seconds (0: none).
    pub outbox_oldest_age_s: i64,
    /// Rounds whose debit is not settled or whose rollback is not acknowledged.
    pub unresolved_rounds: i64,
}

impl WalletFigures {
    /// Reads them (in one statement) and sets `metrics`' gauges to them.
    pub async fn read(store: &Store, metrics: &Metrics) -> Result<WalletFigures, AppError> {
        let figures = if store.operator_wallet() {
            let (outbox_depth, oldest_created_ms, unresolved_rounds) = store.wallet_figures().await?;
            let now = crate::store::now_ms();
            let outbox_oldest_age_s = oldest_created_ms.map_or(0, |c| (now - c).max(0) / 1000);
            WalletFigures { outbox_depth, outbox_oldest_age_s, unresolved_rounds }
        } else {
            WalletFigures::default()
        };
        metrics.outbox_depth.set(figures.outbox_depth);
        metrics.outbox_oldest_age_seconds.set(figures.outbox_oldest_age_s);
        metrics.wallet_unresolved_rounds.set(figures.unresolved_rounds);
        Ok(figures)
    }
}

/// A refused debit in the player's words (the page words it again in the
/// player's language from the code).
pub fn refusal(code: &str, operator_message: &str) -> AppError {
    let (code, message): (&'static str, &str) = match code {
        errors::INSUFFICIENT_FUNDS => {
            (errors::INSUFFICIENT_FUNDS, "your balance at the operator is too low for a ticket")
        }
        errors::LIMIT_REACHED => {
            (errors::LIMIT_REACHED, "this ticket would pass a limit on your play set with the operator")
        }
        errors::PLAYER_BLOCKED => (errors::PLAYER_BLOCKED, "the operator does not allow you to play at the moment"),
        errors::SESSION_EXPIRED => {
            (errors::SESSION_EXPIRED, "your session at the operator has ended: open the game again from its site")
        }
        _ => ("wallet_refused", "the operator's wallet refused the payment"),
    };
    tracing::info!(code, operator_message, "the operator refused a debit");
    AppError::WalletRefused { code, message: format!("{message}; no money was taken and no ticket was sold") }
}
