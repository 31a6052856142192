//! The operator mode's entrance: a launch asked for by the operator (its
//! signed call checked), and its code exchanged for a player's session.

use super::unit::{Outcome, Unit, apply};
use crate::changes::LaunchWrite;
use crate::error::AppError;
use crate::operator;

/// A launch, its signature checked .
#[derive(Debug, Clone)]
pub struct Launch {
    /// `KEY_ID/NONCE` of the signed call.
    pub nonce: String,
    /// The operator's reference of the player.
    pub reference: String,
    /// A new player's own token's hash: of a random token nobody is given,
    /// so that an operator's player comes in through launches only.
    pub unheld_token_hash: String,
    /// The launch's row (its `player` is found or made here).
    pub write: LaunchWrite,
    /// The answer (the launch URL, the code, its expiry).
    pub answer: String,
}

impl Launch {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let seen = unit.nonce_seen(&self.nonce).await?;
        let mut write = self.write.clone();
        let new_player = match unit.operator_player(&self.reference).await? {
            Some(player) => {
                write.player = player;
                false
            }
            None if seen => false,
            None => {
                write.player = unit.insert_player(&self.unheld_token_hash, Some(&self.reference), now).await?.0;
                true
            }
        };
        let new = new_player.then_some((write.player, self.reference.as_str()));
        apply(unit, operator::launch(seen, &self.nonce, new, write, self.answer.clone())?).await
    }
}

/// A launch code exchanged for a session of its player.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub code_hash: String,
    pub session_hash: String,
    pub session_expires_ms: i64,
}

impl Exchange {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let launch = unit.launch(&self.code_hash).await?;
        apply(unit, operator::exchange(&self.code_hash, launch, &self.session_hash, self.session_expires_ms, now)?)
            .await
    }
}
