//! # as-capone-engine: the rules of As Capone, and nothing else
//!
//! A pure, deterministic state machine of the card duel of the regulation's
//! article 3.2 (see `docs/rules.md`). It does no I/O, reads no clock and
//! owns no global random generator: every random number comes through a
//! [`DrawSource`] passed in by the caller (guarantees 1 and 2 of
//! `ARCHITECTURE.md`).
//!
//! ## Layout
//! - [`card`]: [`Rank`] (art. 3.2.1.3), [`Hand`] and the 16-card deck (art. 3.2.1.4).
//! - [`draw`]: [`DrawSource`], the one door for randomness, and unbiased scaling.
//! - [`fair`]: [`FairStream`], the HMAC-SHA256 draw stream of `docs/fairness.md`
//!   (`docs/contract.md`, Fairness), written by hand because it must be pinned
//!   and audited.
//! - [`fast`]: [`FastSource`], a ChaCha8 source for simulation.
//! - [`game`]: [`Game`], [`Action`], [`Event`], [`Phase`], [`ActionError`]: the duel itself.
//! - [`sim`]: the simulator's path, a whole ticket on bitmasks and tables, tested
//!   against [`Game::apply`] for every word sequence.
//! - [`lanes`]: the simulator's lane path, several chunks' streams a word at a time as a
//!   branch-free state machine, tested against [`sim`] ticket by ticket.
//! - [`prize`]: [`PrizeSchedule`], the prizes a ticket carries for 5 to 8 tricks (art. 3.1).
//!
//! ## Guarantees
//! 1. The rules are written in [`game`]: the server, the terminal game, the
//!    verifier and the fuzzers play through [`Game::apply`]. They are
//!    written again on purpose, for speed or for the browser, in three
//!    places, each bound to [`Game::apply`] by tests:
//!    - [`sim`], the simulator's path: `tests/sim.rs` (same events, words,
//!      result and game number for every word sequence) and the simulator's
//!      golden counts (`as-capone-math`, `simulate.rs`);
//!    - [`lanes`], the path the simulator runs (`math::simulate`): its unit
//!      tests (the vector block against the scalar steps) and `tests/sim.rs`
//!      (ticket by ticket against [`sim`]), and the simulator's counts
//!      against [`Game::apply`] chunk by chunk (`as-capone-math`);
//!    - `web/verify.js`, the browser's verifier of a record: the server's
//!      browser tests (`crates/server/tests/browser/verify.rs`).
//!
//!    `docs/rules.md` states the rules with the regulation's text, and
//!    `ARCHITECTURE.md` lists the places and their tests.
//! 2. Determinism: the same actions and the same draw source give the same
//!    events, bit for bit ([`Game::replay`]).
//! 7. A refused action returns an [`ActionError`] and leaves the game unchanged.
//!
//! ## Feature `bench`
//! Adds the simulator path's slower variants
//! (`sim::play_weakest_first_single`, `sim::play_weakest_first_branchless`),
//! which only the benchmarks compare; the product never enables it.

pub mod card;
pub mod draw;
pub mod fair;
pub mod fast;
pub mod game;
pub mod lanes;
pub mod prize;
pub mod sim;

pub use card::{DECK_SIZE, DeckCard, Hand, ParseRankError, Rank};
pub use draw::{DrawSource, uniform_below};
pub use fair::{FairStream, commitment};
pub use fast::{FastSource, Words16, below16};
pub use game::{Action, ActionError, DeckFor, Discard, Event, EventSink, Game, GameResult, Next, Outcome, Phase};
pub use prize::PrizeSchedule;
