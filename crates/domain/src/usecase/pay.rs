//! A won paper ticket paid: by a shop up to its payout ceiling, or by the
//! operator's payment centre above it.

use super::unit::{Outcome, PaperKey, Unit, commit};
use crate::claims;
use crate::error::AppError;
use crate::retail::{self, PayoutCeilings};
use crate::rows::AccountId;
use std::sync::Arc;

/// A shop pays a won paper ticket, up to its payout ceiling.
#[derive(Debug, Clone)]
pub struct Pay {
    pub shop: String,
    pub shop_account: AccountId,
    pub any_shop: bool,
    pub ceiling: i64,
    pub serial: String,
}

impl Pay {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let row = unit.paper(&PaperKey::Serial(self.serial.clone())).await?;
        commit(unit, retail::pay(&self.shop, self.shop_account, self.any_shop, self.ceiling, row, now)?).await
    }
}

/// The operator's payment centre pays a won paper ticket above the payout
/// ceiling of the shop that sold it (`ceilings`), into the account `centre`.
#[derive(Debug, Clone)]
pub struct ClaimPay {
    pub serial: String,
    pub reference: String,
    pub ceilings: Arc<PayoutCeilings>,
    pub centre: AccountId,
}

impl ClaimPay {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let row = unit.paper(&PaperKey::Serial(self.serial.clone())).await?;
        // The ceiling of the shop that sold it: where its holder would be paid.
        let ceiling = self.ceilings.of(row.as_ref().and_then(|r| r.retail.sold_by.as_deref()).unwrap_or(""));
        commit(unit, claims::operator_pay(row, &self.reference, ceiling, self.centre, now)?).await
    }
}
