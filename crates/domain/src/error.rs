//! [`AppError`]: every refusal of the API, in the one shape of docs/contract.md:
//! `{"error": code, "message": text}`, with `params` when a page needs them
//! to word the refusal in its player's language (which limit, its value,
//! until when: [`AppError::with`]; every code is in [`CODES`], every
//! `reason` in [`REASONS`], and the player's and shop's pages have a
//! wording of each in French and English). A refused request changes nothing
//! (guarantee 7): the core refuses before anything is written, and a
//! failure inside a group commit undoes only its own writes (the batch is
//! run again with a savepoint per request, `store::sqlite::run_batch`).
//!
//! [`StoreError`]: what a storage backend can fail with, keeping the
//! database's error as its `source`. It becomes an [`AppError::Storage`]
//! and is logged, with its whole chain of causes, at the HTTP edge
//! (`IntoResponse`, in `http`), once, whatever built it.

use serde::Serialize;
use std::sync::Arc;

/// A storage failure. Cloneable (a group commit answers every request of a
/// failed batch with it), so the database's error is shared.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached, or no connection was free in time.
    #[error("database unavailable")]
    Unavailable(#[source] Arc<dyn std::error::Error + Send + Sync>),
    /// The database refused or failed a statement; `retryable` when the
    /// same request, run again from the start, may pass (a transient
    /// conflict between transactions: see [`StoreError::is_retryable`]).
    #[error("database error")]
    Database {
        retryable: bool,
        #[source]
        source: Arc<dyn std::error::Error + Send + Sync>,
    },
    /// A stored row cannot be read back (a bug, or someone edited the data).
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
    /// A token this process remembered was found revoked by the request's
    /// own first statement (PostgreSQL's game actions): 401.
    #[error("the bearer token was revoked")]
    TokenRevoked,
    /// A guarded write found the row changed since it was loaded.
    #[error("a write found its row changed since it was loaded: {0}")]
    Stale(String),
    /// The server stops and takes no more writes.
    #[error("the server is shutting down")]
    ShuttingDown,
}

impl StoreError {
    /// A transient conflict between transactions that the same request,
    /// run again from the start, may pass (on PostgreSQL: a serialization
    /// failure, a deadlock, or a unique key taken by a concurrent
    /// transaction). The backend that built the error decided it.
    pub fn is_retryable(&self) -> bool {
        matches!(self, StoreError::Database { retryable: true, .. })
    }
}

/// An error answer of the API.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AppError {
    /// 400 `bad_request`: malformed JSON, wrong content type, bad field.
    #[error("{0}")]
    BadRequest(String),
    /// 401 `unauthorized`: no token, or a token nobody holds.
    #[error("{0}")]
    Unauthorized(String),
    /// 403 `forbidden`: a known token without the right (a player at the operator's desk).
    #[error("{0}")]
    Forbidden(String),
    /// 403 `limit_reached`: a purchase beyond a limit the player set.
    #[error("{0}")]
    LimitReached(String),
    /// 403 `self_excluded`: a purchase during the player's self-exclusion.
    #[error("{0}")]
    SelfExcluded(String),
    /// 402 `insufficient_funds`.
    #[error("a ticket costs {price} cents and your balance is {balance} cents")]
    InsufficientFunds { balance: i64, price: i64 },
    /// 404 `not_found`: also a ticket of another player.
    #[error("{0}")]
    NotFound(String),
    /// 405 `method_not_allowed`.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// 409 `conflict`: a stale or future `seq`, a different body for an
    /// applied `seq`, a reused Idempotency-Key.
    #[error("{0}")]
    Conflict(String),
    /// 429 `too_many_attempts`, with `Retry-After` (seconds).
    #[error("{message}")]
    TooManyAttempts { message: String, retry_after_s: u64 },
    /// 413 `payload_too_large`.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// 415 `unsupported_media_type`: a write (POST, PUT, PATCH, DELETE)
    /// without `Content-Type: application/json` (docs/limits.md
    /// "Cross-site requests": what a form or a simple request can send).
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 422 `invalid_action`: the engine refused the action (engine::ActionError).
    #[error("{0}")]
    InvalidAction(String),
    /// 503 `timeout`: the request took longer than the configured limit.
    /// An action that reached the writer may still be applied: retrying
    /// the same request returns its answer (guarantee 4).
    #[error("{0}")]
    Timeout(String),
    /// 503 `sold_out`: no ticket of the emission is left for sale.
    #[error("{0}")]
    SoldOut(String),
    /// 503 `unavailable`: the database cannot be reached or is shutting down.
    #[error("{0}")]
    Unavailable(String),
    /// 503 `unavailable`, with `Retry-After` (seconds): the server is busy
    /// with work it bounds (passwords to hash) and takes no more for now.
    #[error("{message}")]
    Busy { message: String, retry_after_s: u64 },
    /// 402 with the operator's code (`insufficient_funds`, `limit_reached`,
    /// `player_blocked`, `session_expired`): the operator's wallet refused
    /// the debit; the ticket went back to the pool (operator mode).
    #[error("{message}")]
    WalletRefused { code: &'static str, message: String },
    /// 503 `wallet_unavailable`: the operator's wallet did not answer the
    /// debit (or not in time); it is rolled back, the ticket was not sold.
    #[error("{0}")]
    WalletUnavailable(String),
    /// 401 `launch_invalid`: a launch code unknown, expired or already used.
    #[error("{0}")]
    LaunchInvalid(String),
    /// 401 `bad_signature`: a signed call of the operator failed its check.
    #[error("{0}")]
    BadSignature(String),
    /// 403 `operator_mode`: an account operation of ours while the operator owns the players.
    #[error("{0}")]
    OperatorMode(String),
    /// 500 `internal` (503 `unavailable` when the database is out of
    /// reach): details go to the log only.
    #[error(transparent)]
    Storage(#[from] StoreError),
    /// 500 `internal`: a bug; details go to the log only.
    #[error("{0}")]
    Internal(String),
    /// 403 `limit_required`: a purchase by a player who has not chosen a
    /// limit on their stakes over seven days (décret 2010-518, art. 16:
    /// a new account chooses it before its first purchase).
    #[error("{0}")]
    LimitRequired(String),
    /// Another refusal with its parameters (`params` in the body): same
    /// status, code and message as the refusal it carries.
    #[error("{error}")]
    Detailed { error: Box<AppError>, params: serde_json::Map<String, serde_json::Value> },
    /// 409 `ticket_in_play`: an account closed while one of its tickets is not finished (docs/player-api.md "Closing an account").
    #[error("{0}")]
    TicketInPlay(String),
    /// 409 `self_excluded` (`params`: `reason` `account_close`, `until_ms`):
    /// an account closed during its self-exclusion (the second outside audit): the
    /// exclusion is not undone by closing the account and opening another.
    #[error("{0}")]
    ExcludedAccountClose(String),
}

/// Every `error` code the API answers with (the operator wallet's refusals
/// included): the pages word each one (a browser test checks it).
pub const CODES: &[&str] = &[
    "bad_request",
    "unauthorized",
    "insufficient_funds",
    "forbidden",
    "limit_reached",
    "limit_required",
    "self_excluded",
    "not_found",
    "method_not_allowed",
    "conflict",
    "player_blocked",
    "session_expired",
    "wallet_refused",
    "wallet_unavailable",
    "launch_invalid",
    "bad_signature",
    "operator_mode",
    "payload_too_large",
    "unsupported_media_type",
    "too_many_attempts",
    "invalid_action",
    "timeout",
    "sold_out",
    "unavailable",
    "internal",
    "ticket_in_play",
];

/// Every `params.reason` a refusal may carry, with its code: what the
/// pages word in place of the English message.
pub const REASONS: &[(&str, &str)] = &[
    // limit_reached: which limit (with `max`, `used`, ... ).
    ("limit_reached", "tickets_per_day"),
    ("limit_reached", "spend_per_week"),
    // self_excluded on POST /api/me/close (409, with `until_ms`): the account
    // cannot be closed before the self-exclusion ends.
    ("self_excluded", "account_close"),
    // bad_request on PUT /api/me/limits: the stake limit cannot be removed.
    ("bad_request", "stake_limit_required"),
    // The counter's refusals (docs/shops.md).
    ("not_found", "unknown_serial"),
    ("not_found", "unknown_play_code"),
    ("conflict", "sold_online"),
    ("conflict", "already_sold"),
    ("conflict", "sale_ended"),
    ("conflict", "already_paid"),
    ("conflict", "not_sold_yet"),
    ("conflict", "not_played"),
    ("conflict", "in_play"),
    ("conflict", "lost"),
    ("conflict", "claim_deadline"),
    // Opening a paper ticket with an online ticket's code.
    ("conflict", "online_ticket"),
    ("forbidden", "other_shop"),
    ("forbidden", "above_ceiling"),
];

/// `{"key": value, ...}` for [`AppError::with`].
#[macro_export]
macro_rules! params {
    ($($k:literal : $v:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut m = serde_json::Map::new();
        $( m.insert($k.to_string(), serde_json::json!($v)); )*
        m
    }};
}

/// The JSON body of every error.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// `bad_request`, `unauthorized`, `insufficient_funds`, `not_found`,
    /// `conflict`, `payload_too_large`, `invalid_action`, ...
    pub error: &'static str,
    /// In English, for logs and programs; a page words the refusal from
    /// `error` and `params`.
    pub message: String,
    /// What the page needs to word the refusal in its player's language:
    /// `reason` (one of the code's reasons), the limit's `max`, what was
    /// `used`, an `until_ms`, a `shop`... (docs/contract.md). Absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
}

impl AppError {
    /// This refusal with its parameters (added to any it carries already).
    pub fn with(self, params: serde_json::Map<String, serde_json::Value>) -> AppError {
        match self {
            AppError::Detailed { error, params: mut had } => {
                had.extend(params);
                AppError::Detailed { error, params: had }
            }
            error => AppError::Detailed { error: Box::new(error), params },
        }
    }

    /// This refusal with `reason` (one of [`REASONS`]) and other parameters.
    pub fn because(self, reason: &'static str, mut params: serde_json::Map<String, serde_json::Value>) -> AppError {
        debug_assert!(REASONS.contains(&(self.code(), reason)), "{}: {reason} is not in REASONS", self.code());
        params.insert("reason".into(), reason.into());
        self.with(params)
    }

    /// The refusal itself, without its parameters.
    pub fn inner(&self) -> &AppError {
        match self {
            AppError::Detailed { error, .. } => error.inner(),
            other => other,
        }
    }

    /// `params.reason`, if the refusal has one.
    pub fn reason(&self) -> Option<&str> {
        match self {
            AppError::Detailed { params, .. } => params.get("reason").and_then(|r| r.as_str()),
            _ => None,
        }
    }

    /// Seconds of `Retry-After`, for the refusals that say when to come back.
    pub fn retry_after_s(&self) -> Option<u64> {
        match self.inner() {
            AppError::TooManyAttempts { retry_after_s, .. } | AppError::Busy { retry_after_s, .. } => {
                Some(*retry_after_s)
            }
            _ => None,
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            AppError::Detailed { error, .. } => error.status(),
            AppError::LimitRequired(_) => 403,
            AppError::BadRequest(_) => 400,
            AppError::Unauthorized(_) => 401,
            AppError::InsufficientFunds { .. } => 402,
            AppError::Forbidden(_) | AppError::LimitReached(_) | AppError::SelfExcluded(_) => 403,
            AppError::NotFound(_) => 404,
            AppError::MethodNotAllowed(_) => 405,
            AppError::Conflict(_) | AppError::TicketInPlay(_) | AppError::ExcludedAccountClose(_) => 409,
            AppError::WalletRefused { .. } => 402,
            AppError::WalletUnavailable(_) => 503,
            AppError::LaunchInvalid(_) | AppError::BadSignature(_) => 401,
            AppError::OperatorMode(_) => 403,
            AppError::PayloadTooLarge(_) => 413,
            AppError::UnsupportedMediaType(_) => 415,
            AppError::TooManyAttempts { .. } => 429,
            AppError::InvalidAction(_) => 422,
            AppError::Timeout(_) | AppError::Unavailable(_) | AppError::Busy { .. } | AppError::SoldOut(_) => 503,
            AppError::Storage(StoreError::Unavailable(_) | StoreError::ShuttingDown) => 503,
            AppError::Storage(_) | AppError::Internal(_) => 500,
        }
    }

    /// The machine-readable code of docs/contract.md.
    pub fn code(&self) -> &'static str {
        match self {
            AppError::Detailed { error, .. } => error.code(),
            AppError::LimitRequired(_) => "limit_required",
            AppError::BadRequest(_) => "bad_request",
            AppError::Unauthorized(_) => "unauthorized",
            AppError::InsufficientFunds { .. } => "insufficient_funds",
            AppError::Forbidden(_) => "forbidden",
            AppError::LimitReached(_) => "limit_reached",
            AppError::SelfExcluded(_) | AppError::ExcludedAccountClose(_) => "self_excluded",
            AppError::NotFound(_) => "not_found",
            AppError::MethodNotAllowed(_) => "method_not_allowed",
            AppError::Conflict(_) => "conflict",
            AppError::TicketInPlay(_) => "ticket_in_play",
            AppError::WalletRefused { code, .. } => code,
            AppError::WalletUnavailable(_) => "wallet_unavailable",
            AppError::LaunchInvalid(_) => "launch_invalid",
            AppError::BadSignature(_) => "bad_signature",
            AppError::OperatorMode(_) => "operator_mode",
            AppError::PayloadTooLarge(_) => "payload_too_large",
            AppError::UnsupportedMediaType(_) => "unsupported_media_type",
            AppError::TooManyAttempts { .. } => "too_many_attempts",
            AppError::InvalidAction(_) => "invalid_action",
            AppError::Timeout(_) => "timeout",
            AppError::SoldOut(_) => "sold_out",
            AppError::Unavailable(_) | AppError::Busy { .. } => "unavailable",
            AppError::Storage(StoreError::Unavailable(_) | StoreError::ShuttingDown) => "unavailable",
            AppError::Storage(_) | AppError::Internal(_) => "internal",
        }
    }

    pub fn body(&self) -> ErrorBody {
        let mut params = match self.inner() {
            AppError::InsufficientFunds { balance, price } => {
                Some(params! { "balance_cents": balance, "price_cents": price })
            }
            AppError::TooManyAttempts { retry_after_s, .. } | AppError::Busy { retry_after_s, .. } => {
                Some(params! { "retry_after_s": retry_after_s })
            }
            _ => None,
        };
        if let AppError::Detailed { params: more, .. } = self {
            params.get_or_insert_with(Default::default).extend(more.clone());
        }
        let message = match self.inner() {
            // Never show internals to a client; the log has them.
            AppError::Storage(StoreError::ShuttingDown) => "the server is shutting down; retry on another".to_string(),
            AppError::Storage(StoreError::Unavailable(_)) => {
                "the database is unavailable; the request may be retried".to_string()
            }
            AppError::Storage(_) | AppError::Internal(_) => "internal error; the request may be retried".to_string(),
            other => other.to_string(),
        };
        ErrorBody { error: self.code(), message, params }
    }

    /// A bug: an answer of 500, logged at the edge.
    pub fn internal(e: impl std::fmt::Display) -> AppError {
        AppError::Internal(e.to_string())
    }

    pub fn ticket_not_found() -> AppError {
        AppError::NotFound("no such ticket".into())
    }
}

/// `error: cause: cause of the cause ...`, for the log.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

impl From<engine::ActionError> for AppError {
    fn from(e: engine::ActionError) -> AppError {
        AppError::InvalidAction(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One refusal of each kind: a new variant fails to compile here until
    /// it is added, and so to [`CODES`] (the test below) and to the pages.
    fn one_of_each() -> Vec<AppError> {
        let s = || String::from("x");
        let all = vec![
            AppError::BadRequest(s()),
            AppError::Unauthorized(s()),
            AppError::Forbidden(s()),
            AppError::LimitReached(s()),
            AppError::SelfExcluded(s()),
            AppError::InsufficientFunds { balance: 1, price: 2 },
            AppError::NotFound(s()),
            AppError::MethodNotAllowed(s()),
            AppError::Conflict(s()),
            AppError::TooManyAttempts { message: s(), retry_after_s: 3 },
            AppError::PayloadTooLarge(s()),
            AppError::UnsupportedMediaType(s()),
            AppError::InvalidAction(s()),
            AppError::Timeout(s()),
            AppError::SoldOut(s()),
            AppError::Unavailable(s()),
            AppError::Busy { message: s(), retry_after_s: 3 },
            AppError::WalletRefused { code: "insufficient_funds", message: s() },
            AppError::WalletRefused { code: "limit_reached", message: s() },
            AppError::WalletRefused { code: "player_blocked", message: s() },
            AppError::WalletRefused { code: "session_expired", message: s() },
            AppError::WalletRefused { code: "wallet_refused", message: s() },
            AppError::WalletUnavailable(s()),
            AppError::LaunchInvalid(s()),
            AppError::BadSignature(s()),
            AppError::OperatorMode(s()),
            AppError::Storage(StoreError::ShuttingDown),
            AppError::Storage(StoreError::Corrupt(s())),
            AppError::Internal(s()),
            AppError::LimitRequired(s()),
            AppError::TicketInPlay(s()),
            AppError::ExcludedAccountClose(s()),
            AppError::Conflict(s()).with(params! { "a": 1 }),
        ];
        for e in &all {
            // Exhaustive, no `_`: a new variant must be listed above.
            match e {
                AppError::BadRequest(_)
                | AppError::Unauthorized(_)
                | AppError::Forbidden(_)
                | AppError::LimitReached(_)
                | AppError::SelfExcluded(_)
                | AppError::InsufficientFunds { .. }
                | AppError::NotFound(_)
                | AppError::MethodNotAllowed(_)
                | AppError::Conflict(_)
                | AppError::TooManyAttempts { .. }
                | AppError::PayloadTooLarge(_)
                | AppError::UnsupportedMediaType(_)
                | AppError::InvalidAction(_)
                | AppError::Timeout(_)
                | AppError::SoldOut(_)
                | AppError::Unavailable(_)
                | AppError::Busy { .. }
                | AppError::WalletRefused { .. }
                | AppError::WalletUnavailable(_)
                | AppError::LaunchInvalid(_)
                | AppError::BadSignature(_)
                | AppError::OperatorMode(_)
                | AppError::Storage(_)
                | AppError::Internal(_)
                | AppError::LimitRequired(_)
                | AppError::TicketInPlay(_)
                | AppError::ExcludedAccountClose(_)
                | AppError::Detailed { .. } => {}
            }
        }
        all
    }

    #[test]
    fn every_code_is_listed_and_every_listed_code_is_answered() {
        let answered: std::collections::BTreeSet<&str> = one_of_each().iter().map(|e| e.code()).collect();
        let listed: std::collections::BTreeSet<&str> = CODES.iter().copied().collect();
        assert_eq!(answered, listed);
        assert_eq!(listed.len(), CODES.len(), "CODES lists a code twice");
        for (code, _) in REASONS {
            assert!(listed.contains(code), "REASONS names the unknown code {code}");
        }
    }

    #[test]
    fn params_travel_with_the_refusal_and_keep_its_status_and_code() {
        let e = AppError::LimitReached("your limit".into()).because("tickets_per_day", params! { "max": 2, "used": 2 });
        assert_eq!((e.status(), e.code(), e.reason()), (403, "limit_reached", Some("tickets_per_day")));
        let body = serde_json::to_value(e.body()).unwrap();
        assert_eq!(body["message"], "your limit");
        assert_eq!(body["params"]["max"], 2);
        let plain = serde_json::to_value(AppError::NotFound("no".into()).body()).unwrap();
        assert!(plain.get("params").is_none(), "no params: none in the body: {plain}");
        let slow = AppError::TooManyAttempts { message: "wait".into(), retry_after_s: 7 }.with(params! { "a": 1 });
        assert_eq!(slow.retry_after_s(), Some(7));
        assert_eq!(
            serde_json::to_value(slow.body()).unwrap()["params"],
            serde_json::json!({"a": 1, "retry_after_s": 7})
        );
    }
}
