//! An account closed by its player.

use super::unit::{Outcome, Unit, apply, locked_account};
use crate::account;
use crate::error::AppError;
use crate::rows::PlayerId;

/// The account closed, once its password matched `password_was` (`None`: an account without one).
#[derive(Debug, Clone)]
pub struct CloseAccount {
    pub player: PlayerId,
    pub password_was: Option<String>,
}

impl CloseAccount {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let player = self.player;
        // The account locked first, as a purchase's: no ticket is bought while it closes.
        let account = locked_account(unit, player).await?;
        let current = unit.password_hash(player).await?;
        // Its self-exclusion, if any: closing does not undo it (the second outside audit).
        let limits = unit.limits(player).await?;
        let in_play = unit.tickets_in_play(player).await?;
        let was = self.password_was.clone();
        apply(unit, account::close(player, was, current, limits, in_play, account.balance_cents, now)?).await
    }
}
