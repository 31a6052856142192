//! The JSON bodies of the protocol, both directions. Amounts are integer
//! cents of `currency` (ISO 4217; the game sells in EUR only); players are
//! the operator's references, opaque to the game.
//!
//! The game server calls the operator's wallet (`POST` each):
//! [`paths::BALANCE`], [`paths::DEBIT`], [`paths::CREDIT`],
//! [`paths::ROLLBACK`], and [`paths::TRANSACTIONS`] to reconcile. The
//! operator's server calls the game's [`paths::LAUNCH`].

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The endpoints, relative to each side's base URL.
pub mod paths {
    /// The operator's wallet: a player's balance.
    pub const BALANCE: &str = "/wallet/balance";
    /// The operator's wallet: take a ticket's price.
    pub const DEBIT: &str = "/wallet/debit";
    /// The operator's wallet: pay a prize.
    pub const CREDIT: &str = "/wallet/credit";
    /// The operator's wallet: undo a debit (a no-op success when the debit was never seen).
    pub const ROLLBACK: &str = "/wallet/rollback";
    /// The operator's wallet: the transactions of a period, for reconciliation.
    pub const TRANSACTIONS: &str = "/wallet/transactions";
    /// The game server: launch a game for a player.
    pub const LAUNCH: &str = "/api/operator/launch";
}

/// The only currency the game sells in.
pub const CURRENCY: &str = "EUR";

/// `POST /wallet/balance`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BalanceRequest {
    pub player: String,
    pub currency: String,
}

/// A wallet's answer to balance, debit, credit or rollback. Only these
/// fields: any other, a field twice or a `null` does not read (the
/// document's `additionalProperties: false`); what the game believes of
/// one that reads is [`Verdict`](crate::Verdict)'s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalletAnswer {
    /// The transaction answered (absent for a balance).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub transaction_id: Option<String>,
    /// The player's balance after the transaction, in cents.
    pub balance_cents: i64,
    pub currency: String,
    /// The operator's own id of the transaction, for its records.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub operator_transaction_id: Option<String>,
}

/// An optional string that, when present, is a string (not `null`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    String::deserialize(d).map(Some)
}

/// `POST /wallet/debit`, `/wallet/credit`: money moved for a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoneyRequest {
    /// Derived from the round and the step (`ROUND:debit`, `ROUND:credit`): the idempotency key.
    pub transaction_id: String,
    /// The round: the ticket's serial and its sale's attempt (`SERIAL.N`).
    pub round_id: String,
    pub player: String,
    /// Strictly positive integer cents.
    pub amount_cents: i64,
    pub currency: String,
    /// The game's code (the emission's), for the operator's reports.
    pub game: String,
}

/// `POST /wallet/rollback`: undo a debit whose outcome we do not know or
/// whose ticket was never shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RollbackRequest {
    /// `ROUND:rollback`.
    pub transaction_id: String,
    pub round_id: String,
    pub player: String,
    /// The debit undone (`ROUND:debit`).
    pub debit_transaction_id: String,
    /// The debit's amount, checked against it when the operator has it.
    pub amount_cents: i64,
    pub currency: String,
}

/// A refusal, either side: a stable `error` code and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: String,
    pub message: String,
}

/// The refusals a wallet gives to a debit (HTTP 402 for the first four,
/// 409 for the conflict, 404 for an unknown player). Any other answer (5xx,
/// none, a body we cannot read) leaves the debit unknown.
pub mod errors {
    /// Not enough money in the player's wallet.
    pub const INSUFFICIENT_FUNDS: &str = "insufficient_funds";
    /// One of the operator's limits on stakes or losses would be passed.
    pub const LIMIT_REACHED: &str = "limit_reached";
    /// The player may not play (self-excluded, banned, account closed).
    pub const PLAYER_BLOCKED: &str = "player_blocked";
    /// The player's session at the operator ended.
    pub const SESSION_EXPIRED: &str = "session_expired";
    /// The player reference is not the operator's.
    pub const UNKNOWN_PLAYER: &str = "unknown_player";
    /// This transaction id was used with another amount, round, player or kind.
    pub const TRANSACTION_CONFLICT: &str = "transaction_conflict";
    /// A missing, unknown-key, stale, replayed or wrong signature.
    pub const BAD_SIGNATURE: &str = "bad_signature";
    /// A malformed request.
    pub const BAD_REQUEST: &str = "bad_request";
    /// A credit or debit for a round that the operator rolled back.
    pub const ROLLED_BACK: &str = "rolled_back";
}

/// `POST /wallet/transactions`: the operator's transactions of a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransactionsRequest {
    /// From this instant (unix ms, included).
    pub from_ms: i64,
    /// Until this instant (unix ms, excluded).
    pub to_ms: i64,
}

/// One transaction as the operator applied it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperatorTransaction {
    pub transaction_id: String,
    pub kind: crate::ids::TxKind,
    pub round_id: String,
    pub player: String,
    pub amount_cents: i64,
    /// When the operator applied it (unix ms).
    pub applied_ms: i64,
    /// A debit later undone by a rollback (for a debit only).
    #[serde(default)]
    pub rolled_back: bool,
}

/// The answer to [`TransactionsRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionsAnswer {
    pub transactions: Vec<OperatorTransaction>,
}

/// What the operator lets the page show and asks it to do for this player
/// (jurisdiction flags and the operator's own limits).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchFlags {
    /// Show the return to player of the table (odds page, purchase).
    #[serde(default)]
    pub show_rtp: bool,
    /// Show the time since the session began.
    #[serde(default)]
    pub session_timer: bool,
    /// Every this many minutes, a reality check (time played, net result,
    /// continue or stop); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1440)]
    pub reality_check_minutes: Option<u32>,
    /// The session ends after this many minutes of play; absent: no end
    /// but the session's own expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1440)]
    pub session_limit_minutes: Option<u32>,
}

/// `POST /api/operator/launch`, the operator's server to the game server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchRequest {
    /// The operator's reference of the player (1 to 64 printable characters).
    #[schema(min_length = 1, max_length = 64, pattern = "^[!-~]{1,64}$")]
    pub player: String,
    /// Must be `EUR`.
    #[schema(pattern = "^EUR$")]
    pub currency: String,
    /// `fr` or `en`.
    #[schema(pattern = "^(fr|en)$")]
    pub language: String,
    /// The player's country (ISO 3166-1 alpha-2), for the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^[A-Z]{2}$")]
    pub country: Option<String>,
    #[serde(default)]
    pub flags: LaunchFlags,
    /// Where "back to the lobby" leads (http or https).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^https?://", max_length = 2048)]
    pub lobby_url: Option<String>,
}

/// The answer to a launch: the URL to open in the player's browser, which
/// holds a one-time code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct LaunchAnswer {
    /// Open it in the player's browser: it holds the one-time code.
    pub url: String,
    /// The one-time code (also in the URL).
    pub code: String,
    /// The code is refused after this instant (unix ms).
    pub expires_ms: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_money_request_has_a_stable_shape() {
        let r = MoneyRequest {
            transaction_id: "S.1:debit".into(),
            round_id: "S.1".into(),
            player: "p-1".into(),
            amount_cents: 300,
            currency: CURRENCY.into(),
            game: "ACP".into(),
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"transaction_id":"S.1:debit","round_id":"S.1","player":"p-1","amount_cents":300,"currency":"EUR","game":"ACP"}"#
        );
        assert!(serde_json::from_str::<MoneyRequest>(r#"{"transaction_id":"x","round_id":"x","player":"p","amount_cents":1,"currency":"EUR","game":"g","extra":1}"#).is_err());
    }
}
