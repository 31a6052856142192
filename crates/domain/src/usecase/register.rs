//! A new player: their rows, their play money, and the login they chose
//! at registration, if any.

use super::unit::Unit;
use crate::account;
use crate::changes::{Changes, PlayerWrite};
use crate::error::AppError;
use crate::rows::PlayerId;

/// A registration.
#[derive(Debug, Clone)]
pub struct CreatePlayer {
    pub token_hash: String,
    pub name: Option<String>,
    pub start_balance: i64,
    /// A login and its password's hash, given at registration.
    pub credentials: Option<(String, String)>,
    /// The recovery code's hash, with the login.
    pub recovery_hash: Option<String>,
}

impl CreatePlayer {
    /// The new player and what was written.
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<(PlayerId, Box<Changes>), AppError> {
        if let Some((login, _)) = &self.credentials
            && unit.login_owner(login).await?.is_some()
        {
            return Err(account::login_taken(login));
        }
        let (player, account) = unit.insert_player(&self.token_hash, self.name.as_deref(), now).await?;
        let mut changes = account::new_player(player, account, self.start_balance, now);
        // A login given at registration is written in the same unit, with its recovery code's hash.
        if let Some((login, hash)) = &self.credentials {
            changes.player =
                account::set_credentials(player, None, None, None, login, hash, &account::Via::OwnToken, now)?.player;
            if let Some(PlayerWrite::Credentials { recovery_hash: r, .. }) = changes.player.as_mut() {
                *r = self.recovery_hash.clone();
            }
        }
        unit.apply(&changes).await?;
        Ok((player, Box::new(changes)))
    }
}
