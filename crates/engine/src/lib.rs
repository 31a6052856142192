//! # as-capone-engine: the rules of As Capone, and nothing else
//!
//! A pure, deterministic state machine of the card duel of the regulation's
//! article 3.2 (see `shared/spec/RULES.md`). It does no I/O, reads no clock
//! and owns no global random generator: every random number comes through a
//! [`DrawSource`] passed in by the caller (guarantee 1 and 2 of
//! `ARCHITECTURE.md`).
//!
//! ## Layout
//! - [`card`]: [`Rank`] (art. 3.2.1.3), [`Hand`] and the 16-card deck (art. 3.2.1.4).
//! - [`draw`]: [`DrawSource`], the one door for randomness, and unbiased scaling.
//! - [`fair`]: [`FairStream`], the HMAC-SHA256 draw stream of CONTRACT.md (Fairness),
//!   written by hand because it must be pinned and audited.
//! - [`fast`]: [`FastSource`], a ChaCha8 source for simulation.
//! - [`sim`]: the simulator's path, a whole ticket on bitmasks and tables, tested
//!   against [`Game::apply`] for every word sequence.
//! - [`lanes`]: the simulator's lane path, several chunks' streams a word at a time as a
//!   branch-free state machine, tested against [`sim`] ticket by ticket.
//! - [`prize`]: [`PrizeSchedule`], the prizes a ticket carries for 5 to 8 tricks (art. 3.1).
//! - [`game`]: [`Game`], [`Action`], [`Event`], [`Phase`], [`ActionError`]: the duel itself.
//!
//! ## Guarantees
//! 1. The rules live here alone: server, simulator, terminal game and verifier
//!    all call [`Game::apply`].
//! 2. Determinism: the same actions and the same draw source give the same
//!    events, bit for bit ([`Game::replay`]).
//! 7. A refused action returns an [`ActionError`] and leaves the game unchanged.

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
