//! An emission's stored values read back: numbers and channels, a value
//! out of its range being a corrupt database.

use domain::api::Channel;
use domain::error::{AppError, StoreError};

pub(super) fn corrupt(what: String) -> AppError {
    AppError::Storage(StoreError::Corrupt(what))
}

pub(super) fn number(v: i64) -> Result<u32, AppError> {
    u32::try_from(v).map_err(|_| corrupt(format!("number {v} out of range")))
}

pub(super) fn parse_channel(s: &str) -> Result<Channel, AppError> {
    Channel::parse(s).ok_or_else(|| corrupt(format!("unknown channel {s:?}")))
}
