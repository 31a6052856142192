//! The durable ledger: players, double-entry movements and every wallet
//! transaction with the answer it was given, in SQLite.
//!
//! Every wallet call is one `BEGIN IMMEDIATE` transaction (the write lock is
//! taken first, so two calls never interleave): the request's nonce is
//! recorded, the transaction id looked up, the money moved and the answer
//! stored, then committed before the answer leaves. A retry with the same
//! id and payload gets the stored answer, byte for byte; another payload
//! under the same id is refused (409 `transaction_conflict`) and nothing is
//! applied (docs/operator-integration.md, the wallet's rules).
//!
//! `database.rs` opens the ledger and runs each call in its transaction;
//! `wallet_calls.rs` holds the signed wallet's calls, `staff.rs` the
//! staff's; `rows.rs` the SQL of the rows they share; `rules.rs` the
//! rules a request's shape must follow; `answer.rs` and `staff_views.rs`
//! what the calls give back.

mod answer;
mod database;
mod rows;
mod rules;
mod staff;
mod staff_views;
mod wallet_calls;

pub use answer::{Answer, LedgerError, NonceUse};
pub use database::Ledger;
pub use rules::{MAX_AMOUNT_CENTS, MAX_BALANCE_CENTS, WEEK_MS};
pub use staff_views::{KindTotals, PlayerView, Summary};
