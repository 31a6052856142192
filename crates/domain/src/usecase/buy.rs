//! An online purchase in the internal mode: the price debited from the
//! player's play money and the next ticket sold, once per Idempotency-Key.

use super::unit::{Outcome, Unit, commit, locked_account};
use crate::account;
use crate::error::AppError;
use crate::online::{self, BuyRequest};
use crate::rows::PlayerId;

/// A player's purchase.
#[derive(Debug, Clone)]
pub struct Buy {
    pub player: PlayerId,
    pub request: BuyRequest,
}

impl Buy {
    /// The account is locked first: a player's purchases take turns, so a
    /// key sent twice at once is decided once and replayed once.
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let (player, request) = (self.player, &self.request);
        let account = locked_account(unit, player).await?;
        let stored = match &request.key {
            Some(key) => unit.idempotency(player, key.as_str()).await?,
            None => None,
        };
        if let Some(stored) = stored {
            return commit(unit, online::buy(&account, Some(stored), None, request, now)?).await;
        }
        // The limits the player set, checked here, in the purchase's unit:
        // the account is locked, so the player's purchases are counted in turn.
        let for_sale = unit.next_for_sale().await?;
        let limits = unit.limits(player).await?;
        if limits.is_some() || request.stake_limit_required {
            let limits = limits.unwrap_or_default();
            let (day, week) = account::windows(now);
            let usage = unit.usage(player, day, week).await?;
            let price = account::checked_price(for_sale.as_ref().map(|s| s.price_cents));
            account::check_purchase(&limits, &usage, price, request.stake_limit_required, now)?;
        }
        commit(unit, online::buy(&account, None, for_sale, request, now)?).await
    }
}
