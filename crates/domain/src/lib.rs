//! The storage-independent core ("functional core, imperative shell").
//!
//! Every write use case is **load, decide, commit**:
//! - a backend *loads* the rows a request needs ([`Account`], [`TicketRow`],
//!   a [`StoredAnswer`], the ticket [`ForSale`]), locking them where several
//!   processes may race (trait [`Unit`]);
//! - the decisions are plain code that knows no database, by channel
//!   ([`online`], [`retail`], [`account`]): given those rows and the
//!   request they return a refusal (an [`AppError`](error::AppError), nothing written), a
//!   replay (the answer stored the first time), or one [`Changes`] value;
//! - the backend *commits* the [`Changes`] atomically ([`Unit::apply`], then
//!   its transaction's COMMIT) and only then is the answer sent.
//!
//! [`usecase`] strings the three together once for every backend, so the
//! rules of money, of `seq` and of idempotency are written once, here.
//!
//! What the crate shows: the loaded rows and the changes, at its root (their
//! modules are private); the decisions by channel, as namespaces that say
//! whose rules a name is (`domain::account::close`,
//! `domain::retail::payer`); the API's types (`api`), the errors (`error`)
//! and the use cases (`usecase`, one module each).

pub mod account;
pub mod api;
mod changes;
pub mod claims;
pub mod deadline;
pub mod demo;
pub mod error;
pub mod limits;
pub mod online;
pub mod operator;
pub mod retail;
mod rows;
pub mod supply;
pub mod usecase;

pub use changes::*;
pub use online::BuyRequest;
pub use rows::*;
pub use usecase::{Done, Op, Unit};
