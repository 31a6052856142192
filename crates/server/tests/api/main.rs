//! Integration tests of the game server over real HTTP: every test starts
//! the real server on port 0 with a fresh database (`spawn_app`). Each test
//! written inside [`both!`] runs twice, as `NAME::sqlite` (a SQLite file in
//! a temporary directory) and `NAME::postgres` (a fresh PostgreSQL
//! database): one body, compiled once, on both backends
//! (`cargo test --test api -- ::postgres` runs the PostgreSQL half). The
//! tests of `hardening` and `schemathesis` run on SQLite only.
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

/// A test on both backends: `async fn NAME() { BODY }`, with its
/// attributes (`#[tokio::test(...)]`, its doc), becomes the body
/// `async fn NAME()` and a module `NAME` of two tests, `sqlite` and
/// `postgres`, that run it with [`helpers::backend`] set
/// ([`helpers::on`]). Where PostgreSQL is unreachable the `postgres` half
/// says so on stderr and passes, unless `AS_CAPONE_REQUIRE_POSTGRES` is set
/// (CI sets it): then it fails.
macro_rules! both {
    ($(#[$attr:meta])* async fn $name:ident() $body:block) => {
        async fn $name() $body

        mod $name {
            $(#[$attr])*
            async fn sqlite() {
                crate::helpers::on(crate::helpers::Backend::Sqlite, super::$name()).await
            }

            $(#[$attr])*
            async fn postgres() {
                crate::helpers::on(crate::helpers::Backend::Postgres, super::$name()).await
            }
        }
    };
}

mod account_guessing;
mod account_races;
mod account_recovery;
mod claims;
mod contract;
mod demo;
mod desk_certify;
mod desk_charts;
mod desk_health;
mod emissions;
mod emissions_desk;
mod emissions_report;
mod errors;
mod exactly_once;
mod exclusion;
mod fairness;
mod file_modes;
mod floods;
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
mod print_file;
mod responsible;
mod schemathesis;
mod startup;
mod upgrade;
mod wallet_answers;
