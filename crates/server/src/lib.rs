//! # as-capone-server: the remote game server
//!
//! `as-capone serve` in a library: the online channel of CONTRACT.md over
//! HTTP (axum), a durable SQLite storage with group commit (sqlx), fair
//! draws that every player can verify, Prometheus metrics, an OpenAPI
//! document and the embedded web page.
//!
//! ## Layout
//! - [`app`]: [`App`], a running server; [`AppOptions`].
//! - [`config`]: [`Config`], from TOML, environment and flags.
//! - `http` (private): the router, handlers and extractors.
//! - [`api`]: the JSON shapes ([`api::TicketView`], ...) and request newtypes.
//! - [`error`]: [`AppError`], every refusal in the shape `{"error", "message"}`;
//!   [`StoreError`], a storage failure with its cause.
//! - [`core`]: the storage-independent core: the use cases (load, decide,
//!   commit) and the pure decisions, shared by both backends.
//! - [`store`]: [`Store`], the shell: SQLite (one process, group commit) or
//!   PostgreSQL (several processes), reads and SQL written once for both.
//! - [`record`]: [`record::Record`], the public record of a ticket, and
//!   [`record::verify`] (shared by `as-capone verify` and the tests).
//! - [`keys`]: the server key, kept outside the database, from which every
//!   emission's seeds (and so every ticket's server seed) are derived.
//! - [`fairness`]: the OS CSPRNG; the test-only fixed seed.
//! - [`supply`]: blocks of tickets from the `emission` crate, as stored.
//! - `admin` (private): the operator's desk and the public list of emissions.
//! - [`metrics`], `openapi` and `web` (private).
//!
//! ## Guarantees (ARCHITECTURE.md), as this crate keeps them
//! 1. The engine alone decides: [`core::decide::act`] calls `Game::apply`.
//! 2. Determinism: [`record::verify`] replays a ticket and must find every draw.
//! 3. Integer cents; every balance change is a [`core::Movement`] of two
//!    entries summing to zero, written in the transaction of its cause;
//!    a player's balance cannot go negative (a CHECK constraint too).
//! 4. Exactly once: an action is applied when its `seq` is the ticket's;
//!    the same request again returns the stored answer, byte for byte.
//! 5. Server seeds are fixed when a block is emitted, derived from the
//!    server key and a CSPRNG salt per emission ([`keys`]).
//! 6. Every ticket's commitment is in its block's Merkle root, published
//!    before the sale; the player's seed comes with the first action; the
//!    server seed is revealed at the end, and the record carries the proof.
//! 7. A refusal is an [`AppError`] and changes nothing.
//! 8. Several processes may share one PostgreSQL database: the rows a
//!    request decides on are locked while it decides ([`store`]).

pub mod account;
mod admin;
pub mod api;
pub mod app;
pub mod config;
pub mod core;
pub mod error;
pub mod fairness;
mod http;
pub mod keys;
mod listener;
pub mod metrics;
mod odds;
mod openapi;
mod retail;
pub mod store;
pub mod supply;
mod web;

pub use app::{App, AppOptions};
pub use config::Config;
pub use error::{AppError, StoreError};
pub use store::{AuditCheck, LedgerCheck, Store};
/// Structured logs on stderr, filtered by `RUST_LOG` (default `info`).
pub fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}
