//! A purchase's second step in the operator mode: the debit's fate, and
//! a rollback acknowledged.

use super::unit::{Outcome, Unit, apply};
use crate::error::AppError;
use crate::operator::{self, DebitOutcome};
use crate::rows::Reserved;

/// The operator's answer to a round's debit.
#[derive(Debug, Clone)]
pub struct Settle {
    pub round: String,
    pub outcome: DebitOutcome,
}

impl Settle {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let reserved = stored_round(unit, &self.round).await?;
        apply(unit, operator::settle(reserved, &self.outcome, now)?).await
    }
}

/// A rollback acknowledged: the round released, its ticket back in the pool.
#[derive(Debug, Clone)]
pub struct RollbackAcknowledged {
    pub round: String,
    pub transaction_id: String,
}

impl RollbackAcknowledged {
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let reserved = stored_round(unit, &self.round).await?;
        apply(unit, operator::rollback_acknowledged(reserved.round, &self.transaction_id, now)?).await
    }
}

/// The round, locked: it was recorded by its reservation.
async fn stored_round(unit: &mut impl Unit, round: &str) -> Result<Reserved, AppError> {
    unit.round(round).await?.ok_or_else(|| AppError::internal(format!("round {round} is not stored")))
}
