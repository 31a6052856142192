//! The limits a player sets on their play, and a self-exclusion: decided
//! with the player's account locked, in turn with their purchases.

use super::unit::{Outcome, Unit, apply, locked_account};
use crate::account::{self, LimitRules, LimitsRequest};
use crate::error::AppError;
use crate::rows::{LimitsRow, PlayerId, Usage};

/// New limits on the player's play (the server's rules: the cooling-off before a raise applies).
#[derive(Debug, Clone)]
pub struct SetLimits {
    pub player: PlayerId,
    pub request: LimitsRequest,
    pub rules: LimitRules,
}

impl SetLimits {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let (current, usage) = limits_and_usage(unit, self.player, now).await?;
        apply(unit, account::set_limits(self.player, current, self.request, &usage, self.rules, now)?).await
    }
}

/// A self-exclusion of `days`.
#[derive(Debug, Clone)]
pub struct SelfExclude {
    pub player: PlayerId,
    pub days: i64,
    pub rules: LimitRules,
}

impl SelfExclude {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let (current, usage) = limits_and_usage(unit, self.player, now).await?;
        apply(unit, account::self_exclude(self.player, current, self.days, &usage, self.rules, now)?).await
    }
}

/// The player's limits and usage, their account locked first (a purchase's
/// lock order: limits are decided in turn with the player's purchases).
async fn limits_and_usage(
    unit: &mut impl Unit,
    player: PlayerId,
    now: i64,
) -> Result<(Option<LimitsRow>, Usage), AppError> {
    locked_account(unit, player).await?;
    let (day, week) = account::windows(now);
    Ok((unit.limits(player).await?, unit.usage(player, day, week).await?))
}
