//! A shop sells a paper ticket.

use super::unit::{Outcome, PaperKey, Unit, commit};
use crate::error::AppError;
use crate::retail;
use crate::rows::AccountId;

/// A sale at a shop (`ceiling`: its payout ceiling, for the answer's words).
#[derive(Debug, Clone)]
pub struct Sell {
    pub shop: String,
    pub shop_account: AccountId,
    pub ceiling: i64,
    pub serial: String,
}

impl Sell {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let row = unit.paper(&PaperKey::Serial(self.serial.clone())).await?;
        commit(unit, retail::sell(&self.shop, self.shop_account, self.ceiling, row, now)?).await
    }
}
