//! What the game waits for.

use serde::{Deserialize, Serialize};

/// What the game waits for. A plain enum without data: the simulator
/// dispatches on it several times per trick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The player picks a card.
    Play,
    /// A tied trick is settled by a deck draw (art. 3.2.4).
    TieBreak,
    /// A tied Extra duel is settled by a deck draw (art. 3.2.5.3, second paragraph).
    ExtraTieBreak,
    /// Exactly four tricks: the deck draw of the Extra duel (art. 3.2.5.2).
    ExtraDraw,
    /// The ticket is decided.
    Finished,
}

impl Phase {
    /// The phase's name in the HTTP API: `play`, `tie_break` (for both
    /// kinds of tie), `extra_draw`, `finished`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Play => "play",
            Phase::TieBreak | Phase::ExtraTieBreak => "tie_break",
            Phase::ExtraDraw => "extra_draw",
            Phase::Finished => "finished",
        }
    }

    /// The phase's name in a stored game (its serde name): `play`,
    /// `tie_break`, `extra_tie_break`, `extra_draw`, `finished`.
    pub(super) fn stored_name(self) -> &'static str {
        match self {
            Phase::Play => "play",
            Phase::TieBreak => "tie_break",
            Phase::ExtraTieBreak => "extra_tie_break",
            Phase::ExtraDraw => "extra_draw",
            Phase::Finished => "finished",
        }
    }
}
