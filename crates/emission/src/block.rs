//! Emissions and their blocks of tickets (art. 2, 3.1).
//!
//! A block is a pure function of (emission seed, emission number, block
//! number, prize table): [`Emission::generate_block`] lays out the table's
//! counts, shuffles them ([`crate::shuffle`]), numbers the tickets
//! ([`crate::serial`]), gives each its secret code ([`crate::play_code`])
//! and commits to the lot ([`crate::merkle`]).

use crate::merkle::{self, Hash, MerkleProof, MerkleTree};
use crate::pages;
use crate::play_code::PlayCode;
use crate::seed::{self, EmissionSeed, HmacSha256, Purpose};
use crate::serial::{
    BlockSerials, GameCode, MAX_BLOCK, MAX_EMISSION, MAX_POSITION, MAX_SERIAL_LEN, Serial, SerialError,
};
use crate::sha256x;
use crate::shuffle;
use engine::PrizeSchedule;
use math::PrizeTable;
use rand_core::RngCore;
use sha2::{Digest, Sha256};
use std::mem::MaybeUninit;

/// One emission: a prize table, its number and its secret seed.
#[derive(Clone)]
pub struct Emission {
    number: u32,
    table: PrizeTable,
    seed: EmissionSeed,
    code: GameCode,
    mac: HmacSha256,
}

/// Why an emission or a block cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmissionError {
    #[error("emission number {0} is out of range 1..={MAX_EMISSION} (three digits of the serial)")]
    Number(u32),
    #[error("block {0} is out of range 1..={MAX_BLOCK} (five digits of the serial)")]
    Block(u32),
    #[error("block_size {0} is larger than {MAX_POSITION}, the six digits of a serial's position")]
    BlockSize(u32),
    #[error(transparent)]
    Serial(#[from] SerialError),
}

impl Emission {
    /// Emission `number` (1 to 999) of `table`, from `seed`.
    pub fn new(number: u32, table: PrizeTable, seed: EmissionSeed) -> Result<Emission, EmissionError> {
        if !(1..=MAX_EMISSION).contains(&number) {
            return Err(EmissionError::Number(number));
        }
        if table.block_size > MAX_POSITION {
            return Err(EmissionError::BlockSize(table.block_size));
        }
        let code = GameCode::parse(&table.code)?;
        let mac = seed.mac();
        Ok(Emission { number, table, seed, code, mac })
    }

    pub fn number(&self) -> u32 {
        self.number
    }
    pub fn table(&self) -> &PrizeTable {
        &self.table
    }
    pub fn seed(&self) -> &EmissionSeed {
        &self.seed
    }
    pub fn code(&self) -> GameCode {
        self.code
    }

    /// The ChaCha20 key for `purpose` in `block`: HMAC-SHA256 of the seed over
    /// the purpose, the emission and the block (`seed.rs`).
    pub fn block_key(&self, purpose: Purpose, block: u32) -> [u8; 32] {
        seed::derive_key(&self.mac, purpose, self.number, block)
    }

    /// The schedule row (from 0) of each ticket of `block` in sale order:
    /// the shuffle alone.
    pub fn shuffled_rows(&self, block: u32) -> Result<Vec<u32>, EmissionError> {
        check_block(block)?;
        Ok(shuffle::shuffled_rows(&self.table.counts(), self.block_key(Purpose::Shuffle, block)))
    }

    /// Block `block` (from 1): its tickets in sale order and its commitment,
    /// made on every core (the machine's available parallelism); the same block whatever the count
    /// ([`Emission::generate_block_threads`]).
    pub fn generate_block(&self, block: u32) -> Result<Block, EmissionError> {
        self.generate_block_threads(block, threads())
    }

    /// [`Emission::generate_block`] on `threads` threads. The shuffle is
    /// one sequential stream; then each thread makes a contiguous run of
    /// tickets, reading the play-code and server-seed streams from that
    /// run's place in them (3 and 8 words per ticket), and hashes their
    /// leaves; the Merkle tree's wide levels are split the same way
    /// ([`MerkleTree::with_threads`]). Every byte is the sequential
    /// definition's ([`Emission::generate_block_sequential`]; the tests
    /// compare them for several thread counts).
    pub fn generate_block_threads(&self, block: u32, threads: usize) -> Result<Block, EmissionError> {
        let rows = self.shuffled_rows(block)?;
        let Some(last) = rows.len().checked_sub(1) else {
            return Ok(self.assemble(block, Vec::new(), Vec::new()));
        };
        // The only serials that can fail are out of range: check both ends once.
        let first = Serial::new(self.code, self.number, block, 1)?;
        Serial::new(self.code, self.number, block, last as u32 + 1)?;
        let (codes_key, seeds_key) =
            (self.block_key(Purpose::PlayCodes, block), self.block_key(Purpose::ServerSeeds, block));
        let serials = BlockSerials::of(&first);
        let mut leaves = pages::zeroed_hashes(rows.len());
        // Runs of whole lane groups: only the last one may end with fewer.
        let per_thread = rows.len().div_ceil(threads.max(1)).next_multiple_of(LANES);
        // Writes the tickets from index `start` on into `slots`, one per
        // leaf of `leaves` (as many slots as leaves).
        let make = |start: usize, slots: &mut [MaybeUninit<TicketRecord>], leaves: &mut [Hash]| {
            debug_assert_eq!(slots.len(), leaves.len());
            let mut codes = shuffle::stream(codes_key);
            codes.set_word_pos(3 * start as u128);
            let mut seeds = shuffle::stream(seeds_key);
            seeds.set_word_pos(8 * start as u128);
            // The ticket at `index`, the next one of both streams.
            let mut ticket_at = |index: usize| {
                let row = rows[index] as usize;
                let position = index as u32 + 1;
                let (a, b, c) = (codes.next_u32(), codes.next_u32(), codes.next_u32());
                let mut server_seed = [0u8; 32];
                seeds.fill_bytes(&mut server_seed);
                TicketRecord {
                    position,
                    serial: Serial::new(self.code, self.number, block, position).expect("checked range"),
                    play_code: PlayCode::from_words(a, b, c),
                    row,
                    prizes: self.table.schedules[row].prizes,
                    server_seed,
                }
            };
            for (k, (slots, leaves)) in slots.chunks_mut(LANES).zip(leaves.chunks_mut(LANES)).enumerate() {
                let first = start + k * LANES;
                if let (Ok(slots), Ok(leaves)) =
                    (<&mut [_; LANES]>::try_from(&mut *slots), <&mut [Hash; LANES]>::try_from(&mut *leaves))
                {
                    // `from_fn` makes the elements in index order: the streams' order.
                    let made: [TicketRecord; LANES] = std::array::from_fn(|i| ticket_at(first + i));
                    *leaves = leaf_hashes(&made, &serials);
                    for (slot, ticket) in slots.iter_mut().zip(made) {
                        slot.write(ticket);
                    }
                } else {
                    for (i, (slot, leaf)) in slots.iter_mut().zip(leaves).enumerate() {
                        let ticket = ticket_at(first + i);
                        *leaf = ticket.leaf_hash();
                        slot.write(ticket);
                    }
                }
            }
        };
        // Every thread writes its run of tickets in place, into the block's
        // own vector (each thread faults in its own pages; nothing is copied
        // afterwards).
        let n = rows.len();
        let mut tickets = Vec::with_capacity(n);
        let slots = &mut tickets.spare_capacity_mut()[..n];
        pages::advise_huge(slots);
        if threads <= 1 || n < PARALLEL_MIN {
            make(0, slots, &mut leaves);
        } else {
            std::thread::scope(|s| {
                let mut runs = slots.chunks_mut(per_thread).zip(leaves.chunks_mut(per_thread)).enumerate();
                let (_, (first_slots, first_leaves)) = runs.next().expect("at least one ticket");
                for (k, (slots, leaves)) in runs {
                    let make = &make;
                    s.spawn(move || make(k * per_thread, slots, leaves));
                }
                make(0, first_slots, first_leaves);
            });
        }
        // SAFETY: the runs above tile `slots`, the first `n` slots of the
        // spare capacity (`chunks_mut` of both `slots` and `leaves`, which
        // have `n` elements), and `make` writes every slot of its run: one
        // ticket per leaf, the leaves and slots zipped chunk by chunk with
        // equal lengths. A panic in any run propagates out of the scope
        // before this line, so the length is only set once all `n` are written.
        unsafe { tickets.set_len(n) };
        let tree = MerkleTree::with_threads(leaves, threads);
        Ok(Block { index: block, merkle_root: tree.root(), tickets, tree })
    }

    fn assemble(&self, block: u32, tickets: Vec<TicketRecord>, leaves: Vec<Hash>) -> Block {
        let tree = MerkleTree::new(leaves);
        Block { index: block, merkle_root: tree.root(), tickets, tree }
    }

    /// The definition of a block, one ticket after the other on one thread:
    /// [`Emission::generate_block`]'s reference (and its benchmark's baseline).
    #[doc(hidden)]
    pub fn generate_block_sequential(&self, block: u32) -> Result<Block, EmissionError> {
        let rows = self.shuffled_rows(block)?;
        let mut codes = shuffle::stream(self.block_key(Purpose::PlayCodes, block));
        let mut seeds = shuffle::stream(self.block_key(Purpose::ServerSeeds, block));
        let mut tickets = Vec::with_capacity(rows.len());
        let mut leaves = Vec::with_capacity(rows.len());
        for (i, &row) in rows.iter().enumerate() {
            let position = i as u32 + 1;
            let (a, b, c) = (codes.next_u32(), codes.next_u32(), codes.next_u32());
            let mut server_seed = [0u8; 32];
            seeds.fill_bytes(&mut server_seed);
            let ticket = TicketRecord {
                position,
                serial: Serial::new(self.code, self.number, block, position)?,
                play_code: PlayCode::from_words(a, b, c),
                row: row as usize,
                prizes: self.table.schedules[row as usize].prizes,
                server_seed,
            };
            leaves.push(ticket.leaf_hash());
            tickets.push(ticket);
        }
        Ok(self.assemble(block, tickets, leaves))
    }

    /// The server seed of one ticket, without making its block: the same
    /// bytes as [`TicketRecord::server_seed`] of [`Emission::generate_block`].
    pub fn server_seed(&self, block: u32, position: u32) -> [u8; 32] {
        seed::server_seed_at(self.block_key(Purpose::ServerSeeds, block), position)
    }
}

/// Below this many tickets a block is made on one thread.
const PARALLEL_MIN: usize = 4096;

/// The threads a block is made with: the machine's available parallelism.
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn check_block(block: u32) -> Result<(), EmissionError> {
    if (1..=MAX_BLOCK).contains(&block) { Ok(()) } else { Err(EmissionError::Block(block)) }
}

impl std::fmt::Debug for Emission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emission")
            .field("number", &self.number)
            .field("code", &self.code)
            .field("table_digest", &self.table.digest())
            .finish_non_exhaustive()
    }
}

/// One ticket of a block.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TicketRecord {
    /// Position in sale order, from 1.
    pub position: u32,
    pub serial: Serial,
    /// The secret under the scratch zone.
    pub play_code: PlayCode,
    /// Index (from 0) of the ticket's row in the table's `schedules`.
    pub row: usize,
    /// That row's prizes (art. 3.1).
    pub prizes: PrizeSchedule,
    /// The secret seed of the ticket's draws (`docs/contract.md` Fairness),
    /// revealed when the ticket is finished.
    pub server_seed: [u8; 32],
}

impl std::fmt::Debug for TicketRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TicketRecord")
            .field("position", &self.position)
            .field("serial", &self.serial)
            .field("row", &self.row)
            .field("prizes", &self.prizes)
            .finish_non_exhaustive()
    }
}

/// Length of the longest [`Leaf::bytes`].
const MAX_LEAF_BYTES: usize = 1 + MAX_SERIAL_LEN + 4 + 4 + 32 + 32 + 32;

/// What a ticket's Merkle leaf commits to: public fields only (the play
/// code and the server seed enter as their SHA-256). A record carries these
/// fields, so anyone can recompute the leaf and climb its proof to the
/// block's published root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf {
    pub serial: Serial,
    /// Position in the block's sale order, from 1.
    pub position: u32,
    /// Schedule row in the table, from 0.
    pub row: u32,
    pub prizes: PrizeSchedule,
    /// `SHA-256` of the play code's 16 characters without dashes.
    pub play_code_sha256: Hash,
    /// `SHA-256(server_seed)`: the ticket's `commitment`.
    pub commitment: Hash,
}

impl Leaf {
    /// The canonical bytes of a ticket that its Merkle leaf hashes
    /// (ticket bytes version 2), in order:
    ///
    /// 1. the serial's length (1 byte) and its ASCII text with dashes;
    /// 2. the position, `u32` big-endian;
    /// 3. the schedule row (from 0), `u32` big-endian;
    /// 4. the prizes for 5, 6, 7 and 8 tricks, four `u64` big-endian;
    /// 5. `SHA-256` of the play code's 16 characters without dashes: never
    ///    the code itself, since roots and proofs are public;
    /// 6. the commitment, `SHA-256(server_seed)` (32 bytes).
    ///
    /// Returns a fixed buffer and the length used.
    pub fn bytes(&self) -> ([u8; MAX_LEAF_BYTES], usize) {
        let mut buf = [0u8; MAX_LEAF_BYTES];
        let len = self.write_bytes(&mut buf);
        (buf, len)
    }

    /// Writes [`Leaf::bytes`] at the start of `buf` (at least
    /// [`MAX_LEAF_BYTES`] long) and returns their length.
    fn write_bytes(&self, buf: &mut [u8]) -> usize {
        let (serial, len) = self.serial.to_ascii();
        buf[0] = len as u8;
        buf[1..1 + len].copy_from_slice(&serial[..len]);
        self.write_fields(buf, 1 + len)
    }

    /// Writes the bytes after the serial (items 2 to 6 of [`Leaf::bytes`])
    /// into `buf` from `at`, and returns where they end.
    fn write_fields(&self, buf: &mut [u8], mut at: usize) -> usize {
        let mut put = |bytes: &[u8]| {
            buf[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        put(&self.position.to_be_bytes());
        put(&self.row.to_be_bytes());
        for p in self.prizes.cents() {
            put(&p.to_be_bytes());
        }
        put(&self.play_code_sha256);
        put(&self.commitment);
        at
    }

    /// `SHA-256(0x00 || bytes)`.
    pub fn hash(&self) -> Hash {
        let (buf, len) = self.bytes();
        merkle::leaf_hash(&buf[..len])
    }
}

impl TicketRecord {
    /// `SHA-256(server_seed)`.
    pub fn commitment(&self) -> Hash {
        Sha256::digest(self.server_seed).into()
    }

    /// The ticket's public leaf.
    pub fn leaf(&self) -> Leaf {
        Leaf {
            serial: self.serial,
            position: self.position,
            row: self.row as u32,
            prizes: self.prizes,
            play_code_sha256: self.play_code.sha256(),
            commitment: self.commitment(),
        }
    }

    /// The leaf's bytes ([`Leaf::bytes`]).
    pub fn leaf_bytes(&self) -> ([u8; MAX_LEAF_BYTES], usize) {
        self.leaf().bytes()
    }

    /// `SHA-256(0x00 || leaf bytes)`.
    pub fn leaf_hash(&self) -> Hash {
        self.leaf().hash()
    }
}

/// Tickets whose hashes go through SHA-256 together ([`crate::sha256x`]).
const LANES: usize = 4;

/// The leaf hashes of four tickets of one block ([`TicketRecord::leaf_hash`]),
/// their SHA-256 interleaved ([`crate::sha256x`]): first the play codes'
/// and the server seeds' (one block each), then the leaves' (three blocks
/// each), every message written straight into its padded blocks.
fn leaf_hashes(tickets: &[TicketRecord; LANES], serials: &BlockSerials) -> [Hash; LANES] {
    // Lanes 2k and 2k+1: ticket k's play code (16 bytes) and server seed (32 bytes).
    let mut small = [[0u8; 64]; 2 * LANES];
    for (pair, t) in small.chunks_exact_mut(2).zip(tickets) {
        pair[0][..16].copy_from_slice(t.play_code.as_bytes());
        sha256x::pad_in_place(&mut pair[0], 16);
        pair[1][..32].copy_from_slice(&t.server_seed);
        sha256x::pad_in_place(&mut pair[1], 32);
    }
    let mut states = [[sha256x::IV; LANES]; 2];
    for (states, half) in states.iter_mut().zip(small.chunks_exact(LANES)) {
        sha256x::compress(states, std::array::from_fn(|j| std::slice::from_ref(&half[j])));
    }
    let digests = states.as_flattened();
    // 0x00 || leaf bytes and the padding: at most 1 + MAX_LEAF_BYTES + 9 = 134 bytes.
    let mut blocks = [[[0u8; 64]; 3]; LANES];
    let mut counts = [0; LANES];
    for (k, t) in tickets.iter().enumerate() {
        let flat = blocks[k].as_flattened_mut();
        let serial_len = serials.write(t.position, &mut flat[2..]);
        flat[1] = serial_len as u8;
        let leaf = Leaf {
            serial: t.serial,
            position: t.position,
            row: t.row as u32,
            prizes: t.prizes,
            play_code_sha256: sha256x::output(&digests[2 * k]),
            commitment: sha256x::output(&digests[2 * k + 1]),
        };
        let len = leaf.write_fields(flat, 2 + serial_len);
        counts[k] = sha256x::pad_in_place(flat, len);
    }
    let mut states = [sha256x::IV; LANES];
    sha256x::compress(&mut states, std::array::from_fn(|k| &blocks[k][..counts[k]]));
    states.map(|s| sha256x::output(&s))
}

/// A block of tickets in sale order and its Merkle commitment.
#[derive(Clone, Debug)]
pub struct Block {
    /// Block number, from 1.
    pub index: u32,
    /// `tickets[k]` is at position `k + 1`.
    pub tickets: Vec<TicketRecord>,
    pub merkle_root: Hash,
    tree: MerkleTree,
}

impl Block {
    /// The inclusion proof of the ticket at `position` (from 1).
    pub fn proof(&self, position: u32) -> Option<MerkleProof> {
        self.tree.proof((position as usize).checked_sub(1)?)
    }

    /// Appends the text of [`Block::proof`]`(position)` to `out`, without
    /// allocating it (for block files).
    pub fn write_proof(&self, position: u32, out: &mut Vec<u8>) {
        if let Some(index) = (position as usize).checked_sub(1) {
            self.tree.write_proof(index, out);
        }
    }

    /// The ticket at `position` (from 1).
    pub fn ticket(&self, position: u32) -> Option<&TicketRecord> {
        self.tickets.get((position as usize).checked_sub(1)?)
    }

    /// The roots of the block's leaves taken [`merkle::CHUNK_LEAVES`] at a
    /// time: what a server keeps to prove any ticket from its chunk's rows.
    pub fn chunk_roots(&self) -> Vec<Hash> {
        merkle::chunk_roots(self.tree.leaves(), merkle::CHUNK_LEAVES)
    }

    /// Tickets per schedule row, in table order (`rows` = the table's row count).
    pub fn counts(&self, rows: usize) -> Vec<u32> {
        let mut counts = vec![0u32; rows];
        for t in &self.tickets {
            counts[t.row] += 1;
        }
        counts
    }
}
