//! A session opened by a login, and a logout.

use super::unit::{Outcome, Unit, apply};
use crate::account::{self, Via};
use crate::error::AppError;
use crate::rows::PlayerId;

/// A session, once the password matched the hash `verified`.
#[derive(Debug, Clone)]
pub struct OpenSession {
    pub player: PlayerId,
    pub verified: String,
    pub token_hash: String,
    pub expires_ms: i64,
}

impl OpenSession {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let current = unit.password_hash(self.player).await?;
        let OpenSession { player, verified, token_hash, expires_ms } = self;
        apply(unit, account::open_session(*player, current, verified, token_hash, *expires_ms, now)?).await
    }
}

/// A logout: the token the request came with stops working.
#[derive(Debug, Clone)]
pub struct Logout {
    pub player: PlayerId,
    pub via: Via,
}

impl Logout {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let current = match self.via {
            Via::OwnToken => unit.password_hash(self.player).await?,
            Via::Session(_) => None,
        };
        apply(unit, account::logout(self.player, &self.via, current.as_deref(), now)?).await
    }
}
