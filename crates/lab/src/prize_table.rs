//! The prize table a command is given.

use math::PrizeTable;
use std::path::Path;

/// Loads and validates a prize table, naming the file in errors.
pub fn load_table(path: &Path) -> anyhow::Result<PrizeTable> {
    PrizeTable::load(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
