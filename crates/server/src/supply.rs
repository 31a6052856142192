//! Where the server's tickets come from: blocks of an emission (art. 2,
//! 3.1), made by the `emission` crate (seeded Fisher-Yates, serials, play
//! codes, Merkle root) and turned into rows for the storage.

use emission::{Emission, EmissionSeed};
use engine::PrizeSchedule;
use math::PrizeTable;

/// One ticket of a block, in sale order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TicketSpec {
    /// Place in the block's sale order, from 1 (as in the print files).
    pub position: u32,
    pub serial: String,
    /// SHA-256 (hex) of the secret play code's compact form, as in the
    /// block's Merkle leaf; the server keeps only the hash.
    pub play_code_hash: String,
    /// Index of the schedule row in the table.
    pub row: u32,
    pub prizes: PrizeSchedule,
}

/// A block ready to be stored.
#[derive(Debug, Clone)]
pub struct GeneratedBlock {
    pub tickets: Vec<TicketSpec>,
    /// Hex Merkle root over the tickets (guarantee 6).
    pub commitment: String,
}

/// Block `number` (from 1) of emission `emission` made from its secret
/// seed: the same inputs give the same block (`as-capone verify-block`
/// can re-check it from the same seed).
pub fn generate_block(
    table: &PrizeTable,
    emission: u32,
    number: u32,
    seed: &[u8; 32],
) -> anyhow::Result<GeneratedBlock> {
    let e = Emission::new(emission, table.clone(), EmissionSeed::from_bytes(*seed))
        .map_err(|e| anyhow::anyhow!("emission {emission}: {e}"))?;
    let block = e.generate_block(number).map_err(|e| anyhow::anyhow!("block {number}: {e}"))?;
    let tickets = block
        .tickets
        .iter()
        .map(|t| TicketSpec {
            position: t.position,
            serial: t.serial.to_string(),
            play_code_hash: hex::encode(t.play_code.sha256()),
            row: t.row as u32,
            prizes: t.prizes,
        })
        .collect();
    Ok(GeneratedBlock { tickets, commitment: hex::encode(block.merkle_root) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_carries_each_schedule_as_often_as_the_table_says() {
        let table = PrizeTable::example();
        let b = generate_block(&table, 1, 1, &[3; 32]).unwrap();
        assert_eq!(b.tickets.len(), table.block_size as usize);
        for (i, r) in table.schedules.iter().enumerate() {
            let n = b.tickets.iter().filter(|t| t.row == i as u32).count();
            assert_eq!(n, r.tickets as usize, "row {i}");
        }
        assert_eq!(b.tickets[0].position, 1);
        let again = generate_block(&table, 1, 1, &[3; 32]).unwrap();
        assert_eq!(again.commitment, b.commitment);
        assert_ne!(generate_block(&table, 1, 2, &[3; 32]).unwrap().commitment, b.commitment);
    }
}
