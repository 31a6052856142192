//! # as-capone-engine: the rules of As Capone, and nothing else
//!
//! A pure, deterministic state machine of the card duel of the regulation's
//! article 3.2 (see `docs/rules.md`). It does no I/O, reads no clock and
//! owns no global random generator: every random number comes through a
//! [`DrawSource`] passed in by the caller (guarantees 1 and 2 of
//! `ARCHITECTURE.md`).
//!
//! ## Layout
//! Every module is private; what other crates use is re-exported here.
//! - `card.rs`: [`Rank`] (art. 3.2.1.3), [`Hand`] and the 16-card deck (art. 3.2.1.4).
//! - `draw.rs`: [`DrawSource`], the one door for randomness, and unbiased scaling.
//! - `fair.rs`: [`FairStream`], the HMAC-SHA256 draw stream of `docs/fairness.md`
//!   (`docs/contract.md`, Fairness), written by hand because it must be pinned
//!   and audited.
//! - `fast.rs`: [`FastSource`], a ChaCha8 source for simulation.
//! - `game/`: the duel itself: [`Game`] (`mod.rs`), [`Action`] and
//!   [`ActionError`] (`action.rs`), [`Phase`] (`phase.rs`), [`Event`] and
//!   [`GameResult`] (`event.rs`), a stored game read back ([`GameState`],
//!   `stored.rs`).
//! - `sim.rs`: the simulator's path ([`play_weakest_first`]), a whole ticket
//!   on bitmasks and tables, tested against [`Game::apply`] for every word
//!   sequence.
//! - `lanes.rs`: the simulator's lane path ([`Lanes`], [`finish_ticket`]),
//!   several chunks' streams a word at a time as a branch-free state
//!   machine, tested against the simulator's path ticket by ticket.
//! - `prize.rs`: [`PrizeSchedule`], the prizes a ticket carries for 5 to 8 tricks (art. 3.1).
//!
//! ## Guarantees
//! 1. The rules are written in `game/`: the server, the terminal game, the
//!    verifier and the fuzzers play through [`Game::apply`]. They are
//!    written again on purpose, for speed or for the browser, in three
//!    places, each bound to [`Game::apply`] by tests:
//!    - `sim.rs`, the simulator's path: `tests/engine/sim.rs` (same events, words,
//!      result and game number for every word sequence) and the simulator's
//!      golden counts (`as-capone-math`, `simulate.rs`);
//!    - `lanes.rs`, the path the simulator runs (`math::simulate`): its unit
//!      tests (the vector block against the scalar steps) and `tests/engine/sim.rs`
//!      (ticket by ticket against `sim.rs`), and the simulator's counts
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
//! (`play_weakest_first_single`, `play_weakest_first_branchless`),
//! which only the benchmarks compare; the product never enables it.

mod card;
mod draw;
mod fair;
mod fast;
mod game;
mod lanes;
mod prize;
mod sim;

pub use card::{DECK_SIZE, DeckCard, Hand, ParseRankError, Rank};
pub use draw::{DrawSource, uniform_below};
pub use fair::{FairStream, commitment};
pub use fast::{FastSource, MAX_WINDOW, Words16, accept16, below16};
pub use game::{
    Action, ActionError, DeckFor, Discard, Event, EventSink, Game, GameResult, GameState, Next, Outcome, Phase,
};
pub use lanes::{BLOCK, BlockCounts, LANES, Lane, Lanes, MAX_TICKETS_PER_BLOCK, finish_ticket, transpose};
pub use prize::PrizeSchedule;
pub use sim::play_weakest_first;
#[cfg(feature = "bench")]
pub use sim::{play_weakest_first_branchless, play_weakest_first_single};
