//! What happens: the events a game reports, where they go, and the
//! ticket's result.

use crate::card::Rank;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// How a trick or a deck draw went, for the player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Won,
    Lost,
    Tie,
}

impl Outcome {
    #[inline]
    pub(super) fn of(player: Rank, capone: Rank) -> Outcome {
        match player.cmp(&capone) {
            Ordering::Greater => Outcome::Won,
            Ordering::Less => Outcome::Lost,
            Ordering::Equal => Outcome::Tie,
        }
    }
}

/// Why a deck draw happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeckFor {
    /// Settling a tie (art. 3.2.4), of a trick or of an Extra duel.
    TieBreak,
    /// The Extra duel's first draw (art. 3.2.5.2).
    Extra,
}

/// What follows a game of eight tricks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Next {
    /// Exactly four tricks: the Extra duel (art. 3.2.3.4).
    ExtraDraw,
    /// The ticket is decided (art. 3.2.3.3, 3.2.3.5).
    Finished,
}

/// Everything that happens, in order: enough to animate a screen and to audit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A trick: the player's card, As Capone's drawn card (art. 3.2.2), and who won.
    Trick { player: Rank, capone: Rank, outcome: Outcome },
    /// A deck draw (art. 3.2.4.2, 3.2.5.2): one card to each side.
    Deck {
        player: Rank,
        capone: Rank,
        outcome: Outcome,
        #[serde(rename = "for")]
        for_: DeckFor,
    },
    /// A game of eight tricks is over with `tricks` won.
    GameOver { tricks: u8, next: Next },
    /// An Extra game starts with eight new cards (art. 3.2.5.4); `game` is 2
    /// for the first Extra game.
    ExtraGame { game: u32 },
    /// The ticket is decided: the deciding game's tricks (art. 3.2.5.5) and
    /// the prize of the ticket's schedule for them (0 when lost).
    Finished { tricks: u8, prize_cents: u64 },
}

/// Where events go. A simulation discards them ([`Discard`]); the server
/// and the terminal collect them in a `Vec<Event>`.
pub trait EventSink {
    fn push(&mut self, event: Event);
}

impl EventSink for Vec<Event> {
    #[inline]
    fn push(&mut self, event: Event) {
        Vec::push(self, event)
    }
}

/// An [`EventSink`] that keeps nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Discard;

impl EventSink for Discard {
    #[inline(always)]
    fn push(&mut self, _event: Event) {}
}

/// The ticket's result (`docs/contract.md` `result`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GameResult {
    /// Tricks of the deciding game: 5 to 8 for a won ticket, 0 to 4 for a lost one.
    pub tricks: u8,
    /// The prize, 0 for a lost ticket.
    pub prize_cents: u64,
}
