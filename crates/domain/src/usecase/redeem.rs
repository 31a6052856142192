//! A play code opens its paper ticket, and a wrong code is counted.

use super::unit::{Outcome, PaperKey, Unit, apply};
use crate::changes::{Changes, Effect};
use crate::error::AppError;
use crate::limits::{self, Ceiling, RedeemLimits};
use crate::retail;
use crate::rows::PlayerId;

/// A play code; `token` is the ticket's own. A wrong code is counted
/// against the client's `network` ([`limits::network`]) in the same unit
/// that looks it up.
#[derive(Debug, Clone)]
pub struct Redeem {
    pub code_hash: String,
    pub player: Option<PlayerId>,
    pub token: String,
    pub network: String,
    pub limits: RedeemLimits,
    /// The ceiling on the limits' counters opened (a new network's).
    pub rows: Option<Ceiling>,
}

impl Redeem {
    /// The client's network is locked first: its attempts take turns, so
    /// attempts sent at once never look up more codes than its limit
    /// allows. A right code is never counted, and a wrong one is counted in
    /// the same unit that looked it up, so that no lost connection or crash
    /// can count a right code or lose a wrong one.
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let limits = &self.limits;
        let bucket = limits::redeem_bucket(&self.network);
        let net = unit.counter(&bucket, true).await?;
        let global = unit.counter(limits::REDEEM_GLOBAL, false).await?;
        limits::redeem_admit(&net, &global, limits, now)?;
        // A wrong code from a network without a window adds a row: under the
        // ceiling on the counters opened, checked before the look-up, so that
        // past it no code is looked up uncounted.
        let opens = self.rows.as_ref().filter(|_| net.count_at(now, limits.window_ms) == 0);
        let mut opened = None;
        if let Some(rows) = opens {
            opened = rows.admit(&unit.counter(&rows.bucket(), true).await?, 1, now)?;
        }
        let Some(row) = unit.paper(&PaperKey::CodeHash(self.code_hash.clone())).await? else {
            let filled = limits::redeem_fills(&net, &global, limits, now);
            let mut counters = limits::redeem_wrong(&bucket, limits, now);
            counters.extend(opened);
            return apply(unit, Changes { counters, ..Changes::none(Effect::WrongCode { filled }) }).await;
        };
        let changes = retail::redeem(Some(row), self.player, &self.token, now)?;
        if changes.game.is_some() || changes.retail.is_some() {
            apply(unit, changes).await
        } else {
            // The same code again: nothing to write, the ticket as it is.
            Ok(Outcome::Replayed(changes.answer))
        }
    }
}
