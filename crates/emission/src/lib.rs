//! # as-capone-emission: the paper tickets of an emission
//!
//! An emission of As Capone tickets is split into blocks of `block_size`
//! tickets (art. 2: 300 000), each holding exactly the counts of the prize
//! table (art. 3.1) in a random order. This crate makes those blocks from a
//! secret seed, numbers them, gives every ticket a secret play code, commits
//! to every block with a Merkle root, and writes and re-checks the files of
//! `as-capone emit` / `as-capone verify-block`.
//!
//! ## Layout
//! Every module is private and what other crates use is re-exported here,
//! except [`code128`] and [`sha256x`], public namespaces (see each).
//! - `seed.rs`: [`EmissionSeed`] (32 secret bytes, 64 hex digits), the
//!   domain-separated HMAC-SHA256 keys derived per block and [`Purpose`],
//!   and every ticket's server seed.
//! - `shuffle.rs`: our own Fisher-Yates over ChaCha20 with rejection scaling,
//!   pinned by golden vectors.
//! - `serial.rs`: [`Serial`] (`ASC-001-00001-000042-81`, ISO 7064 MOD 97-10
//!   check digits) and [`GameCode`].
//! - `play_code.rs`: [`PlayCode`], 80 secret bits as `7K3M-Q9ZD-XW4P-2HRT`
//!   (Crockford base32).
//! - `merkle.rs`: [`MerkleTree`], [`MerkleProof`]: the commitment; chunk
//!   roots ([`chunk_roots`]), from which a server proves any ticket
//!   ([`chunk_proof`]).
//! - `block.rs`: [`Emission`], [`Block`], [`TicketRecord`], [`Leaf`]: a block is a pure
//!   function of the seed, the emission number, the block number and the table.
//! - `files.rs`: [`EmissionWriter`] (streams block files, then
//!   `manifest.json`), [`Manifest`], the secret file ([`write_secret`]).
//! - `verify.rs`: [`verify_dir`], everything `verify-block` re-checks.
//! - `print.rs`: [`ticket_svg`], one SVG page per paper ticket with its QR code
//!   and its serial's barcode ([`code128`]: Code 128, code set B, and its decoder).
//! - `sha256x.rs`: [`sha256x`], SHA-256 of several messages at once;
//!   `pages.rs`: huge-page advice for a block's buffers.
//!
//! ## Use
//!
//! ```
//! use as_capone_emission::{Emission, EmissionSeed, PlayCode, Serial};
//! use math::PrizeTable;
//!
//! let seed = EmissionSeed::parse(&"00".repeat(32)).unwrap();
//! let emission = Emission::new(1, PrizeTable::example(), seed).unwrap();
//! let block = emission.generate_block(1).unwrap(); // blocks count from 1
//! let ticket = block.ticket(42).unwrap();          // positions too
//! assert_eq!(block.tickets.len(), 300_000);
//! assert!(block.proof(42).unwrap().verify(&ticket.leaf_hash(), &block.merkle_root));
//! // What a player types or a retailer reads back:
//! assert_eq!(PlayCode::parse(&ticket.play_code.to_string().to_lowercase()).unwrap(), ticket.play_code);
//! assert_eq!(Serial::parse(&ticket.serial.to_string()).unwrap(), ticket.serial);
//! ```
//!
//! ## Guarantees (numbered as in ARCHITECTURE.md)
//! 2. Determinism: the same seed, emission number, block number and table
//!    give the same tickets, root and file bytes.
//! 5. Every random number comes from ChaCha20 keyed by HMAC-SHA256 of the
//!    seed, is scaled without bias by rejection ([`engine::uniform_below`]),
//!    and the shuffle is our own Fisher-Yates pinned by golden vectors.
//! 6. Every block is committed by its Merkle root before sale; a ticket's
//!    [`MerkleProof`] shows it belongs to the committed block, and the
//!    public leaf never contains the play code, only its SHA-256.
//! 7. Bad input (a table, a serial, a play code, a seed, a tampered file)
//!    gets a clear error.

mod block;
pub mod code128;
mod files;
mod merkle;
mod pages;
mod play_code;
mod print;
mod seed;
mod serial;
pub mod sha256x;
mod shuffle;
mod verify;

pub use block::{Block, Emission, EmissionError, Leaf, TicketRecord};
pub use files::{
    BlockEntry, CSV_HEADER, EmissionWriter, MANIFEST_FILE, Manifest, SecretFile, WriteError, block_csv,
    block_file_name, write_block_csv, write_block_csv_sequential, write_block_csv_threads, write_secret,
};
pub use merkle::{CHUNK_LEAVES, Hash, MerkleProof, MerkleTree, chunk_proof, chunk_roots, leaf_hash, merkle_root};
pub use play_code::{PlayCode, PlayCodeError};
pub use print::{play_url, ticket_svg};
pub use seed::{EmissionSeed, Purpose, SeedError};
pub use serial::{GameCode, MAX_BLOCK, Serial, SerialError};
pub use verify::{VerifyError, VerifyOptions, VerifyReport, read_manifest, verify_dir};
