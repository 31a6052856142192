//! The operator's wallet protocol (docs/operator-integration.md), written
//! once for the two sides that speak it: the game server, which launches
//! games and debits and credits the operator's wallet, and the reference
//! operator (`crates/operator`), which keeps the players' money.
//!
//! Every module is private and what other crates use is re-exported here:
//! - `messages.rs`: the JSON bodies of launch, balance, debit, credit,
//!   rollback and the transaction export, with integer cents
//!   ([`MoneyRequest`], [`WalletAnswer`], [`LaunchRequest`], ...), and the
//!   protocol's [`paths`] and refusal codes ([`errors`]), two namespaces of
//!   constants, public because their names (`paths::DEBIT`,
//!   `errors::BAD_REQUEST`) say what they are only under theirs;
//! - `ids.rs`: round and transaction ids derived from the ticket and the
//!   step ([`RoundId`]), never drawn per attempt, so that a retry is the
//!   same transaction;
//! - `sign.rs`: HMAC-SHA256 over method, path, timestamp, nonce and body
//!   ([`Keys`], [`Signed`], [`Covered`]), both ways, with key ids
//!   (rotation), a timestamp window and nonces seen once;
//! - `answers.rs`: what the game believes of a wallet's answer
//!   ([`WalletRequest::read`], [`Verdict`]), checked field by field against
//!   the request it answers;
//! - `reconcile.rs`: our rounds against the operator's transactions
//!   ([`reconcile()`]).
//!
//! Written by hand here, and pinned by tests: the canonical text each
//! signature covers (both sides must compute it byte for byte).

mod answers;
mod ids;
mod messages;
mod reconcile;
mod sign;

pub use answers::{Verdict, WalletRequest};
pub use ids::{RoundId, TxKind};
pub use messages::{
    BalanceRequest, CURRENCY, ErrorBody, LaunchAnswer, LaunchFlags, LaunchRequest, MoneyRequest, OperatorTransaction,
    RollbackRequest, TransactionsAnswer, TransactionsRequest, WalletAnswer, errors, paths,
};
pub use reconcile::{OurRound, Report, RoundState, reconcile};
pub use sign::{Covered, Keys, NONCE_HEADER, Nonces, SIGNATURE_HEADER, SignError, Signed, Signer, TIMESTAMP_HEADER};
