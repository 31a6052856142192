//! A player's login and password: set or changed, recovered with the
//! recovery code, and the recovery code renewed.

use super::unit::{Outcome, Unit, apply, locked_account};
use crate::account::{self, Via};
use crate::error::AppError;
use crate::rows::PlayerId;

/// A login and password hash; `was`: the hash the request was checked
/// against; `via`: the token it came with (the one that keeps working).
#[derive(Debug, Clone)]
pub struct SetCredentials {
    pub player: PlayerId,
    pub login: String,
    pub password_hash: String,
    pub was: Option<String>,
    pub via: Via,
}

impl SetCredentials {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        locked_account(unit, self.player).await?;
        let owner = unit.login_owner(&self.login).await?;
        let current = unit.password_hash(self.player).await?;
        let (player, was) = (self.player, self.was.clone());
        apply(
            unit,
            account::set_credentials(player, current, was, owner, &self.login, &self.password_hash, &self.via, now)?,
        )
        .await
    }
}

/// A new password with the recovery code whose hash `verified` matched.
#[derive(Debug, Clone)]
pub struct Recover {
    pub player: PlayerId,
    pub verified: String,
    pub password_hash: String,
    pub recovery_hash: String,
    pub session_token_hash: String,
    pub expires_ms: i64,
}

impl Recover {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        // Read for its lock (PostgreSQL): a login racing the recovery
        // waits for it, and then finds the new password.
        unit.password_hash(self.player).await?;
        let Recover { player, verified, password_hash, recovery_hash, session_token_hash, expires_ms } = self;
        let changes =
            account::recover(*player, verified, password_hash, recovery_hash, session_token_hash, *expires_ms, now);
        apply(unit, changes).await
    }
}

/// A new recovery code, once the password matched the hash `password_was`.
#[derive(Debug, Clone)]
pub struct RenewRecovery {
    pub player: PlayerId,
    pub password_was: String,
    pub recovery_hash: String,
}

impl RenewRecovery {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        apply(unit, account::renew_recovery(self.player, &self.password_was, &self.recovery_hash, now)).await
    }
}
