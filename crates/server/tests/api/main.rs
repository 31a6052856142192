//! Integration tests of the game server over real HTTP: every test starts
//! the real server on port 0 with a fresh database (`spawn_app`), here
//! SQLite (a file in a temporary directory). The same tests run on
//! PostgreSQL as the `api_pg` test binary (tests/api_pg/main.rs).
//! Numbers in test names refer to ARCHITECTURE.md's guarantees.
//!
//! Steering games: the server seed is secret and random, so a test could
//! not choose a tie or an Extra game. Tests therefore start the server with
//! `ServerSeeds::InsecureFixedForTests` (settable only from Rust code, never
//! by configuration; the seed is still committed in the published leaves)
//! and, knowing seed, client seed (`helpers::CLIENT_SEED`, sent with each
//! ticket's first action) and serial, search with the engine and
//! `FairStream` for a card order that produces the wanted situation; then
//! they play it over HTTP and check that the server gives exactly the
//! events the engine predicted. Tests of the seeds themselves start the
//! server with real seeds derived from its key (`spawn_app_from_key`).

extern crate as_capone_server as server;

/// The storage these tests run on.
pub const BACKEND: helpers::Backend = helpers::Backend::Sqlite;

mod account_recovery;
mod claims;
mod demo;
mod desk_certify;
mod desk_charts;
mod desk_health;
mod emissions;
mod emissions_desk;
mod emissions_report;
mod errors;
mod exactly_once;
mod fairness;
mod games;
mod hardening;
mod helpers;
mod keys;
mod limits;
mod migrations;
mod money;
mod operator_mode;
mod ops;
mod paper;
mod paper_codes;
mod paper_report;
mod paper_retries;
mod paper_shop_day;
mod player;
mod responsible;
mod schemathesis;
mod upgrade;
