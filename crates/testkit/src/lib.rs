//! The test kit of as-capone: what the server's tests, the CLI's tests,
//! fuzzing and the reliability commands share, written once.
//!
//! Every module is private and what the tests use is re-exported here:
//! - `fixture.rs`: the test-only server seed ([`SEED`]), the play money of
//!   a new player ([`START`]) and the fixture prize tables ([`TABLE`],
//!   [`table_toml`]: small blocks, so that a test database starts in
//!   milliseconds);
//! - `serve.rs`: the real `as-capone serve` on port 0, given the path of the
//!   executable ([`start_server`]), awaited until it listens, its log
//!   drained, and killed when its [`Server`] is dropped (a panicking test
//!   leaves no process behind);
//! - `pg.rs`: a fresh PostgreSQL database per test ([`TestDb`]), dropped at
//!   the end, or a loud skip where PostgreSQL is unreachable (a failure when
//!   `AS_CAPONE_REQUIRE_POSTGRES` is set);
//! - `steer.rs`: the next action of a ticket as the API shows it
//!   ([`next_action`]), and games played offline with the engine and the
//!   fair stream, to choose a card order or a client seed that produces a
//!   wanted situation ([`search_card_orders`], [`find_seed`]).
//!
//! The kit depends on the engine and on no other crate of the workspace,
//! so that every crate's tests (the server's included) can use it.

mod fixture;
mod pg;
mod serve;
mod steer;

pub use fixture::{
    BLOCKS_OF_2000, BLOCKS_OF_2000_ROWS, SEED, START, TABLE, blocks_of_50, blocks_of_50_json, table_toml,
};
pub use pg::{TestDb, postgres_admin_url};
pub use serve::{Server, Spawned, key_file, serve_command, spawn_server, sqlite_url, start_server, status_kib};
pub use steer::{Foreseen, action_json, find_seed, next_action, prize_of, search_card_orders, shown_after};
