//! Prize tables (art. 3.1), CONTRACT.md's TOML format. (In progress: the emission work owns this file.)
use engine::PrizeSchedule;

/// A validated prize table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrizeTable {
    pub game: String,
    pub code: String,
    pub price_cents: u64,
    pub block_size: u32,
    pub schedules: Vec<ScheduleRow>,
}

/// One row: `tickets` per block carry the schedule `prizes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleRow {
    pub tickets: u32,
    pub prizes: PrizeSchedule,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TableError(pub String);
