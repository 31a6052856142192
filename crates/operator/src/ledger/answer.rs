//! What a wallet call gives back, records and fails with: an answer ready
//! to be signed, the request's nonce, the errors besides an answer.

use serde::Serialize;
use wallet::ErrorBody;

/// An answer ready to be signed and sent: its status and its exact body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body, exactly as sent (and stored, for a transaction).
    pub body: Vec<u8>,
}

impl Answer {
    pub(super) fn json(status: u16, value: &impl Serialize) -> Answer {
        Answer { status, body: serde_json::to_vec(value).expect("serializable") }
    }

    /// An [`ErrorBody`] answer.
    pub fn error(status: u16, error: &str, message: impl Into<String>) -> Answer {
        Answer::json(status, &ErrorBody { error: error.to_string(), message: message.into() })
    }
}

/// The request's nonce, recorded in the call's own transaction.
#[derive(Debug, Clone)]
pub struct NonceUse {
    /// The key id that signed.
    pub key_id: String,
    /// The request's nonce.
    pub nonce: String,
    /// Nonces seen before this instant (ms) are forgotten (twice the window back).
    pub forget_before_ms: i64,
}

/// What a wallet call can fail with besides an answer.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The nonce was seen before: the request is a replay (401).
    #[error("this nonce was already used")]
    Replayed,
    /// The database failed; nothing was committed.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
}
