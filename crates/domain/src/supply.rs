//! Where the server's tickets come from: blocks of an emission (art. 2,
//! 3.1), made by the `emission` crate (seeded Fisher-Yates, serials, play
//! codes, server seeds, Merkle root) and turned into rows for the storage.
//! Only the public part of each ticket is kept: the SHA-256 of its play code
//! and of its server seed (its `commitment`), never the secrets themselves.

use emission::{CHUNK_LEAVES, Emission, EmissionSeed, Hash, MerkleTree};
use engine::PrizeSchedule;
use math::PrizeTable;

/// One ticket of a block, in sale order, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TicketSpec {
    /// Place in the block's sale order, from 1 (as in the print files).
    pub position: u32,
    pub serial: String,
    /// SHA-256 (hex) of the secret play code's compact form, as in the
    /// block's Merkle leaf.
    pub play_code_hash: String,
    /// Index of the schedule row in the table, from 0.
    pub row: u32,
    pub prizes: PrizeSchedule,
    /// Hex `SHA-256(server_seed)`, as in the leaf.
    pub commitment: String,
}

/// A block ready to be stored.
#[derive(Debug, Clone)]
pub struct GeneratedBlock {
    pub tickets: Vec<TicketSpec>,
    /// The block's Merkle root (guarantee 6).
    pub root: Hash,
    /// The roots of its leaves [`CHUNK_LEAVES`] at a time, to prove any
    /// ticket later from its chunk's rows.
    pub chunk_roots: Vec<Hash>,
}

/// Block `number` (from 1) of emission `emission` made from its secret
/// seed: the same inputs give the same block. `fixed` is the test-only
/// seed every ticket gets instead of its own (still committed in the
/// leaves: see the server's `ServerSeeds`).
pub fn generate_block(
    table: &PrizeTable,
    emission: u32,
    number: u32,
    seed: EmissionSeed,
    fixed: Option<[u8; 32]>,
) -> anyhow::Result<GeneratedBlock> {
    let e = Emission::new(emission, table.clone(), seed).map_err(|e| anyhow::anyhow!("emission {emission}: {e}"))?;
    let mut block = e.generate_block(number).map_err(|e| anyhow::anyhow!("block {number}: {e}"))?;
    let mut leaves: Vec<Hash> = Vec::with_capacity(block.tickets.len());
    let mut tickets = Vec::with_capacity(block.tickets.len());
    for t in &mut block.tickets {
        if let Some(f) = fixed {
            t.server_seed = f;
        }
        let leaf = t.leaf();
        leaves.push(leaf.hash());
        tickets.push(TicketSpec {
            position: t.position,
            serial: t.serial.to_string(),
            play_code_hash: hex::encode(leaf.play_code_sha256),
            row: t.row as u32,
            prizes: t.prizes,
            commitment: hex::encode(leaf.commitment),
        });
    }
    let chunk_roots = emission::chunk_roots(&leaves, CHUNK_LEAVES);
    let root = if fixed.is_some() { MerkleTree::new(leaves).root() } else { block.merkle_root };
    Ok(GeneratedBlock { tickets, root, chunk_roots })
}

/// Chunk roots as stored: their hex, concatenated.
pub fn chunk_roots_hex(roots: &[Hash]) -> String {
    roots.iter().map(hex::encode).collect()
}

/// Reads stored chunk roots back.
pub fn parse_chunk_roots(text: &str) -> Option<Vec<Hash>> {
    if !text.len().is_multiple_of(64) {
        return None;
    }
    text.as_bytes()
        .chunks(64)
        .map(|c| {
            let mut h = [0u8; 32];
            hex::decode_to_slice(c, &mut h).ok().map(|_| h)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_carries_each_schedule_as_often_as_the_table_says() {
        let table = PrizeTable::example();
        let seed = || EmissionSeed::from_bytes([3; 32]);
        let b = generate_block(&table, 1, 1, seed(), None).unwrap();
        assert_eq!(b.tickets.len(), table.block_size as usize);
        for (i, r) in table.schedules.iter().enumerate() {
            let n = b.tickets.iter().filter(|t| t.row == i as u32).count();
            assert_eq!(n, r.tickets as usize, "row {i}");
        }
        assert_eq!(b.tickets[0].position, 1);
        assert_eq!(b.chunk_roots.len(), 300_000usize.div_ceil(CHUNK_LEAVES));
        assert_eq!(emission::merkle_root(b.chunk_roots.clone()), b.root);
        assert_eq!(parse_chunk_roots(&chunk_roots_hex(&b.chunk_roots)).unwrap(), b.chunk_roots);
        let again = generate_block(&table, 1, 1, seed(), None).unwrap();
        assert_eq!(again.root, b.root);
        assert_ne!(generate_block(&table, 1, 2, seed(), None).unwrap().root, b.root);
        // Each commitment is SHA-256 of the seed read back from the key.
        let t = &b.tickets[41];
        assert_eq!(t.commitment, engine::commitment(&seed().server_seed(1, 1, 42)));
        // The test-only fixed seed is committed too.
        let fixed = generate_block(&table, 1, 1, seed(), Some([5; 32])).unwrap();
        assert!(fixed.tickets.iter().all(|t| t.commitment == engine::commitment(&[5; 32])));
        assert_eq!(emission::merkle_root(fixed.chunk_roots.clone()), fixed.root);
        assert_ne!(fixed.root, b.root);
    }
}
