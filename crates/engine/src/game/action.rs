//! What the player does, and why an action is refused.

use crate::card::Rank;
use serde::{Deserialize, Serialize};

/// What the player does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Pick a card of the hand (art. 3.2.3.1, 3.2.3.2).
    Play { card: Rank },
    /// Click the 16-card deck (art. 3.2.4.2, 3.2.5.2).
    Draw,
}

impl Action {
    pub fn play(card: Rank) -> Action {
        Action::Play { card }
    }
}

/// An action the phase does not allow. Nothing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    #[error("the card {0} is not in your hand")]
    CardNotInHand(Rank),
    #[error("a deck draw is due: click the deck, not a card")]
    DrawExpected,
    #[error("no deck draw is due: pick a card of your hand")]
    CardExpected,
    #[error("the game is finished")]
    Finished,
}
