//! The operator's wallet protocol (docs/operator-integration.md), written
//! once for the two sides that speak it: the game server, which launches
//! games and debits and credits the operator's wallet, and the reference
//! operator (`crates/operator`), which keeps the players' money.
//!
//! - [`messages`]: the JSON bodies of launch, balance, debit, credit,
//!   rollback and the transaction export, with integer cents;
//! - [`ids`]: round and transaction ids derived from the ticket and the
//!   step, never drawn per attempt, so that a retry is the same transaction;
//! - [`sign`]: HMAC-SHA256 over method, path, timestamp, nonce and body,
//!   both ways, with key ids (rotation), a timestamp window and nonces seen
//!   once;
//! - [`answers`]: what the game believes of a wallet's answer, checked
//!   field by field against the request it answers;
//! - [`reconcile`]: our rounds against the operator's transactions.
//!
//! Written by hand here, and pinned by tests: the canonical text each
//! signature covers (both sides must compute it byte for byte).

pub mod answers;
pub mod ids;
pub mod messages;
pub mod reconcile;
pub mod sign;

pub use ids::{RoundId, TxKind};
pub use messages::*;
pub use sign::{Keys, Nonces, SignError, Signed, Signer};
