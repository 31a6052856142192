//! The test kit of as-capone: what the server's tests, the CLI's tests,
//! fuzzing and the reliability commands share, written once.
//!
//! - [`fixture`]: the test-only server seed, the play money of a new
//!   player and the fixture prize tables (small blocks, so that a test
//!   database starts in milliseconds);
//! - [`serve`]: the real `as-capone serve` on port 0, given the path of the
//!   executable, awaited until it listens, its log drained, and killed when
//!   its [`serve::Server`] is dropped (a panicking test leaves no process
//!   behind);
//! - [`pg`]: a fresh PostgreSQL database per test, dropped at the end, or a
//!   loud skip where PostgreSQL is unreachable (a failure when
//!   `AS_CAPONE_REQUIRE_POSTGRES` is set);
//! - [`steer`]: the next action of a ticket as the API shows it, and games
//!   played offline with the engine and the fair stream, to choose a card
//!   order or a client seed that produces a wanted situation.
//!
//! The kit depends on the engine and on no other crate of the workspace,
//! so that every crate's tests (the server's included) can use it.

pub mod fixture;
pub mod pg;
pub mod serve;
pub mod steer;

pub use fixture::{BLOCKS_OF_2000, SEED, START, TABLE};
