//! The reference operator: the operator's side of the wallet protocol
//! (docs/operator-integration.md, `docs/operator-wallet.openapi.json`),
//! with its own durable ledger, a chaos switch and a demo lobby.
//!
//! The game server's tests, the chaos run and the two-command demo run it,
//! in process ([`start`]) or as the `as-capone-operator` program
//! (crates/operator/README.md).
//!
//! Every module is private; what other crates use is re-exported here.
//!
//! - `ledger/`: [`Ledger`], players, double-entry movements, every
//!   transaction and its stored answer, in SQLite (exactly once: same id
//!   and payload, same answer; money moved once);
//! - `chaos.rs`: [`Chaos`], delays, 5xx, dropped answers, duplicate
//!   deliveries, skew;
//! - `client.rs`: the operator's launch client ([`launch`]) and a signed
//!   wallet client ([`WalletClient`]) for tests and tools;
//! - `start.rs`: [`start`] from [`Options`], and the [`Running`] operator;
//!   `app.rs` what its handlers share; `clock.rs` its clock ([`now_ms`]);
//! - the HTTP side: the signed wallet (`/wallet/*`, `wallet_api.rs`), the
//!   admin endpoints (`/admin/*`, bearer admin token), the demo page (`/`)
//!   and the OpenAPI document (`/openapi.json`, [`OPENAPI`]) in `admin.rs`,
//!   the connections in `serve.rs`.

#![warn(missing_docs)]

mod admin;
mod app;
mod chaos;
mod client;
mod clock;
mod ledger;
mod serve;
mod start;
mod wallet_api;

pub use admin::OPENAPI;
pub use chaos::{Chaos, ChaosConfig, Counters, CountersView, DropMode, Plan};
pub use client::{LaunchError, WalletClient, WalletReply, launch};
pub use clock::now_ms;
pub use ledger::{
    Answer, KindTotals, Ledger, LedgerError, MAX_AMOUNT_CENTS, MAX_BALANCE_CENTS, NonceUse, PlayerView, Summary,
    WEEK_MS,
};
pub use start::{Options, PlayerSeed, Running, start};
