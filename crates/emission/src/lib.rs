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
//! - [`seed`]: [`EmissionSeed`] (32 secret bytes, 64 hex digits), the
//!   domain-separated HMAC-SHA256 keys derived per block and [`Purpose`],
//!   and every ticket's server seed.
//! - [`shuffle`]: our own Fisher-Yates over ChaCha20 with rejection scaling,
//!   pinned by golden vectors.
//! - [`serial`]: [`Serial`] (`ASC-001-00001-000042-81`, ISO 7064 MOD 97-10
//!   check digits) and [`GameCode`].
//! - [`play_code`]: [`PlayCode`], 80 secret bits as `7K3M-Q9ZD-XW4P-2HRT`
//!   (Crockford base32).
//! - [`merkle`]: [`MerkleTree`], [`MerkleProof`]: the commitment; chunk
//!   roots, from which a server proves any ticket.
//! - [`block`]: [`Emission`], [`Block`], [`TicketRecord`], [`Leaf`]: a block is a pure
//!   function of the seed, the emission number, the block number and the table.
//! - [`files`]: [`EmissionWriter`] (streams block files, then
//!   `manifest.json`), [`Manifest`], the secret file.
//! - [`verify`]: [`verify_dir`], everything `verify-block` re-checks.
//! - [`print`](mod@print): [`ticket_svg`], one SVG page per paper ticket with its QR code
//!   and its serial's barcode ([`code128`]: Code 128, code set B, and its decoder).
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

pub mod block;
pub mod code128;
pub mod files;
pub mod merkle;
mod pages;
pub mod play_code;
pub mod print;
pub mod seed;
pub mod serial;
pub mod sha256x;
pub mod shuffle;
pub mod verify;

pub use block::{Block, Emission, EmissionError, Leaf, TicketRecord};
pub use files::{BlockEntry, EmissionWriter, Manifest, SecretFile, WriteError};
pub use merkle::{Hash, MerkleProof, MerkleTree};
pub use play_code::{PlayCode, PlayCodeError};
pub use print::ticket_svg;
pub use seed::{EmissionSeed, Purpose, SeedError};
pub use serial::{GameCode, Serial, SerialError};
pub use verify::{VerifyError, VerifyOptions, VerifyReport, verify_dir};
