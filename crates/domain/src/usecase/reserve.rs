//! A purchase's first step in the operator mode: the ticket held and the
//! round recorded, before the operator's wallet is asked for the debit.

use super::unit::{Outcome, Unit, commit, locked_account};
use crate::error::AppError;
use crate::operator;
use crate::rows::{ForSale, PlayerId};

/// A player's purchase through the operator's wallet.
#[derive(Debug, Clone)]
pub struct Reserve {
    pub player: PlayerId,
    pub key: Option<String>,
}

impl Reserve {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let (player, key) = (self.player, self.key.as_deref());
        // The account is locked first, as a purchase's: a player's
        // purchases take turns, so one key sent at once reserves once.
        locked_account(unit, player).await?;
        let reference =
            unit.operator_ref(player).await?.ok_or_else(|| AppError::Unauthorized("unknown player".into()))?;
        // The key's round still settling is read before its stored
        // answer: a settlement committing between the two reads is then
        // seen by the second (read in the other order, a purchase settled
        // in between was neither pending nor stored, and its key reserved
        // a second ticket, on PostgreSQL).
        let (stored, pending) = match key {
            Some(k) => {
                let pending = unit.pending_round(player, k).await?;
                (unit.idempotency(player, k).await?, pending)
            }
            None => (None, None),
        };
        let for_sale = match (&stored, &pending) {
            (None, None) => unit.next_for_sale().await?,
            _ => None,
        };
        let last = match &for_sale {
            Some(ForSale { last_attempt: Some(n), .. }) => *n,
            Some(s) => unit.last_attempt(s.ticket_id).await?,
            None => 0,
        };
        commit(unit, operator::reserve(player, &reference, key, stored, pending, for_sale, last, now)?).await
    }
}
