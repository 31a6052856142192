//! The API integration tests of tests/api, run on PostgreSQL: the same
//! test bodies (the modules below are tests/api's files), with
//! `BACKEND = Postgres`, so that every test starts the real server on a
//! fresh PostgreSQL database of its own, created on the machine's server
//! (`AS_CAPONE_TEST_PG`, default `postgres://postgres@127.0.0.1:5432/postgres`)
//! and dropped at the end (`testkit::pg`).
//!
//! Where PostgreSQL is unreachable every test here says so on stderr and
//! passes without doing anything, unless `AS_CAPONE_REQUIRE_POSTGRES` is
//! set (CI sets it): then they fail.
//!
//! Run: `AS_CAPONE_REQUIRE_POSTGRES=1 cargo test --release -p as-capone-server --test api_pg`.

extern crate as_capone_server as server;

/// The storage these tests run on.
pub const BACKEND: helpers::Backend = helpers::Backend::Postgres;

#[path = "../api/account_recovery.rs"]
mod account_recovery;
#[path = "../api/claims.rs"]
mod claims;
#[path = "../api/demo.rs"]
mod demo;
#[path = "../api/desk_certify.rs"]
mod desk_certify;
#[path = "../api/desk_charts.rs"]
mod desk_charts;
#[path = "../api/desk_health.rs"]
mod desk_health;
#[path = "../api/emissions.rs"]
mod emissions;
#[path = "../api/emissions_desk.rs"]
mod emissions_desk;
#[path = "../api/emissions_report.rs"]
mod emissions_report;
#[path = "../api/errors.rs"]
mod errors;
#[path = "../api/exactly_once.rs"]
mod exactly_once;
#[path = "../api/fairness.rs"]
mod fairness;
#[path = "../api/games.rs"]
mod games;
#[path = "../api/helpers.rs"]
mod helpers;
#[path = "../api/keys.rs"]
mod keys;
#[path = "../api/limits.rs"]
mod limits;
#[path = "../api/migrations.rs"]
mod migrations;
#[path = "../api/money.rs"]
mod money;
#[path = "../api/operator_mode.rs"]
mod operator_mode;
#[path = "../api/ops.rs"]
mod ops;
#[path = "../api/paper.rs"]
mod paper;
#[path = "../api/paper_codes.rs"]
mod paper_codes;
#[path = "../api/paper_report.rs"]
mod paper_report;
#[path = "../api/paper_retries.rs"]
mod paper_retries;
#[path = "../api/paper_shop_day.rs"]
mod paper_shop_day;
#[path = "../api/player.rs"]
mod player;
#[path = "../api/responsible.rs"]
mod responsible;
#[path = "../api/upgrade.rs"]
mod upgrade;
