//! The files of an emission, as `as-capone emit` writes them:
//!
//! ```text
//! DIR/manifest.json        public: the table, its digest, per block the counts and the Merkle root
//! DIR/block-0001.csv       for the printer: one line per ticket in sale order (secret play codes!)
//! DIR/secret.json          the seed, when it was drawn from the OS (keep it apart and secret)
//! DIR/print/ticket-0001.svg  sample tickets (`--print K`)
//! ```
//!
//! A block file starts with the header
//! `position,serial,play_code,row,prize_5,prize_6,prize_7,prize_8,commitment`
//! (and `,proof` when proofs are written), then one line per ticket: its
//! position from 1, serial, grouped play code, schedule row **counted from
//! 1** (as in the table's error messages), the four prizes in cents, its
//! commitment (hex `SHA-256` of its server seed, as in its Merkle leaf) and
//! its Merkle proof ([`MerkleProof`](crate::MerkleProof)'s text). Lines end
//! in `\n`; no field needs quoting.
//!
//! Nothing in these files depends on the clock or the machine: the same
//! seed, emission number and table give the same bytes (guarantee 2's
//! spirit, for audits). [`EmissionWriter`] streams: a block is written and
//! can be dropped before the next is made.

use crate::block::{Block, Emission, TicketRecord};
use math::PrizeTable;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// `format` of a manifest.
pub(crate) const MANIFEST_FORMAT: &str = "as-capone emission manifest v2";
/// `commitment` of a manifest: how the roots are computed ([`crate::merkle`]).
pub(crate) const COMMITMENT_SCHEME: &str = "merkle-sha256 v1: leaf = SHA-256(0x00 || ticket bytes v2), node = SHA-256(0x01 || left || right), odd last node promoted";
/// `format` of a secret file.
pub(crate) const SECRET_FORMAT: &str = "as-capone emission secret v1";
/// The block file header, without the proof column.
pub const CSV_HEADER: &str = "position,serial,play_code,row,prize_5,prize_6,prize_7,prize_8,commitment";
pub const MANIFEST_FILE: &str = "manifest.json";
pub(crate) const SECRET_FILE: &str = "secret.json";

/// `block-0001.csv` for block 1.
pub fn block_file_name(index: u32) -> String {
    format!("block-{index:04}.csv")
}

/// The public description of an emission and the commitments of its blocks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: String,
    pub game: String,
    pub code: String,
    pub emission: u32,
    /// [`PrizeTable::digest`] of `table`.
    pub table_digest: String,
    pub table: PrizeTable,
    pub commitment: String,
    pub blocks: Vec<BlockEntry>,
}

/// One block in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockEntry {
    /// Block number, from 1.
    pub index: u32,
    /// Its file, `block-0001.csv`.
    pub file: String,
    pub tickets: u32,
    /// Tickets per schedule row, in table order.
    pub counts: Vec<u32>,
    /// Hex Merkle root of the block's tickets.
    pub merkle_root: String,
    /// Hex SHA-256 of the block file's bytes.
    pub csv_sha256: String,
}

/// The secret part: what regenerates every ticket and play code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretFile {
    pub format: String,
    pub code: String,
    pub emission: u32,
    /// 64 hex digits.
    pub seed: String,
}

/// A file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{} is not empty; emit into a new or empty folder so that no old file passes for a new one", .0.display())]
    NotEmpty(PathBuf),
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> WriteError + '_ {
    move |source| WriteError::Io { path: path.to_path_buf(), source }
}

/// Appends the decimal digits of `v`.
fn push_num(out: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Writes a block file (its lines after [`CSV_HEADER`]: docs/emissions.md),
/// formatted on every core (the machine's available parallelism).
pub fn write_block_csv(w: &mut impl Write, block: &Block, proofs: bool) -> io::Result<()> {
    write_block_csv_threads(w, block, proofs, crate::block::threads())
}

/// Tickets per piece of a block file that one thread formats at a time.
const CSV_PIECE: usize = 8192;
/// The same with proofs (a line is then about 1.3 kB).
const CSV_PIECE_PROOFS: usize = 1024;

/// [`write_block_csv`] with `threads` threads: the lines are formatted a
/// piece of consecutive tickets per thread into buffers that are reused
/// from piece to piece (no allocation per line), and the pieces written in
/// order: the same bytes whatever the thread count.
pub fn write_block_csv_threads(w: &mut impl Write, block: &Block, proofs: bool, threads: usize) -> io::Result<()> {
    let mut header = CSV_HEADER.as_bytes().to_vec();
    if proofs {
        header.extend_from_slice(b",proof");
    }
    header.push(b'\n');
    w.write_all(&header)?;
    let threads = threads.max(1);
    let piece = if proofs { CSV_PIECE_PROOFS } else { CSV_PIECE };
    let mut buffers: Vec<Vec<u8>> = (0..threads).map(|_| Vec::new()).collect();
    for round in block.tickets.chunks(piece * threads) {
        let pieces = round.len().div_ceil(piece);
        if pieces == 1 {
            buffers[0].clear();
            csv_lines(&mut buffers[0], round, block, proofs);
        } else {
            std::thread::scope(|s| {
                for (buf, tickets) in buffers.iter_mut().zip(round.chunks(piece)) {
                    s.spawn(move || {
                        buf.clear();
                        csv_lines(buf, tickets, block, proofs);
                    });
                }
            });
        }
        for buf in &buffers[..pieces] {
            w.write_all(buf)?;
        }
    }
    Ok(())
}

/// Appends the lines of `tickets` (of `block`) to `out`.
fn csv_lines(out: &mut Vec<u8>, tickets: &[TicketRecord], block: &Block, proofs: bool) {
    for t in tickets {
        push_num(out, t.position.into());
        out.push(b',');
        let (serial, len) = t.serial.to_ascii();
        out.extend_from_slice(&serial[..len]);
        out.push(b',');
        out.extend_from_slice(&t.play_code.grouped());
        out.push(b',');
        push_num(out, t.row as u64 + 1);
        for p in t.prizes.cents() {
            out.push(b',');
            push_num(out, p);
        }
        out.push(b',');
        let mut hex = [0u8; 64];
        hex::encode_to_slice(t.commitment(), &mut hex).expect("64 hex digits for 32 bytes");
        out.extend_from_slice(&hex);
        if proofs {
            out.push(b',');
            block.write_proof(t.position, out);
        }
        out.push(b'\n');
    }
}

/// The first writer of block files, one line after the other with each
/// proof made as a [`MerkleProof`](crate::MerkleProof) and its `String`:
/// [`write_block_csv`]'s reference (and its benchmark's baseline).
#[doc(hidden)]
pub fn write_block_csv_sequential(w: &mut impl Write, block: &Block, proofs: bool) -> io::Result<()> {
    let mut line = Vec::with_capacity(2048);
    line.extend_from_slice(CSV_HEADER.as_bytes());
    if proofs {
        line.extend_from_slice(b",proof");
    }
    line.push(b'\n');
    w.write_all(&line)?;
    for t in &block.tickets {
        line.clear();
        push_num(&mut line, t.position.into());
        line.push(b',');
        let (serial, len) = t.serial.to_ascii();
        line.extend_from_slice(&serial[..len]);
        line.push(b',');
        line.extend_from_slice(&t.play_code.grouped());
        line.push(b',');
        push_num(&mut line, t.row as u64 + 1);
        for p in t.prizes.cents() {
            line.push(b',');
            push_num(&mut line, p);
        }
        line.push(b',');
        let mut hex = [0u8; 64];
        hex::encode_to_slice(t.commitment(), &mut hex).expect("64 hex digits for 32 bytes");
        line.extend_from_slice(&hex);
        if proofs {
            line.push(b',');
            let proof = block.proof(t.position).expect("every ticket has a proof");
            line.extend_from_slice(proof.to_string().as_bytes());
        }
        line.push(b'\n');
        w.write_all(&line)?;
    }
    Ok(())
}

/// A block file in memory.
pub fn block_csv(block: &Block, proofs: bool) -> Vec<u8> {
    let mut out = Vec::new();
    write_block_csv(&mut out, block, proofs).expect("writing to memory");
    out
}

/// A writer that hashes what passes through it.
struct Hashing<W> {
    inner: W,
    hash: Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The manifest of `emission` before any block.
fn empty_manifest(emission: &Emission) -> Manifest {
    let table = emission.table().clone();
    Manifest {
        format: MANIFEST_FORMAT.into(),
        game: table.game.clone(),
        code: table.code.clone(),
        emission: emission.number(),
        table_digest: table.digest(),
        table,
        commitment: COMMITMENT_SCHEME.into(),
        blocks: Vec::new(),
    }
}

/// Writes an emission's folder one block at a time, the manifest last.
pub struct EmissionWriter {
    dir: PathBuf,
    manifest: Manifest,
    proofs: bool,
}

impl EmissionWriter {
    /// Creates `dir` (which must be absent or empty) for `emission`;
    /// `proofs` adds each ticket's Merkle proof to the block files.
    pub fn create(dir: &Path, emission: &Emission, proofs: bool) -> Result<EmissionWriter, WriteError> {
        if dir.exists() && fs::read_dir(dir).map_err(io_at(dir))?.next().is_some() {
            return Err(WriteError::NotEmpty(dir.to_path_buf()));
        }
        fs::create_dir_all(dir).map_err(io_at(dir))?;
        Ok(EmissionWriter { dir: dir.to_path_buf(), manifest: empty_manifest(emission), proofs })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `block`'s file and records it for the manifest.
    pub fn write_block(&mut self, block: &Block) -> Result<&BlockEntry, WriteError> {
        let name = block_file_name(block.index);
        let path = self.dir.join(&name);
        let file = File::create(&path).map_err(io_at(&path))?;
        let mut w = Hashing { inner: BufWriter::with_capacity(1 << 20, file), hash: Sha256::new() };
        write_block_csv(&mut w, block, self.proofs).map_err(io_at(&path))?;
        w.flush().map_err(io_at(&path))?;
        let rows = self.manifest.table.schedules.len();
        self.manifest.blocks.push(BlockEntry {
            index: block.index,
            file: name,
            tickets: block.tickets.len() as u32,
            counts: block.counts(rows),
            merkle_root: hex::encode(block.merkle_root),
            csv_sha256: hex::encode(w.hash.finalize()),
        });
        Ok(self.manifest.blocks.last().expect("just pushed"))
    }

    /// Writes `manifest.json` (through a temporary file, so that a folder
    /// with a manifest is always complete) and returns it.
    pub fn finish(self) -> Result<Manifest, WriteError> {
        let path = self.dir.join(MANIFEST_FILE);
        let tmp = self.dir.join("manifest.json.partial");
        fs::write(&tmp, manifest_json(&self.manifest)).map_err(io_at(&tmp))?;
        fs::rename(&tmp, &path).map_err(io_at(&path))?;
        Ok(self.manifest)
    }
}

/// The manifest's bytes: pretty JSON and a final newline.
fn manifest_json(m: &Manifest) -> String {
    serde_json::to_string_pretty(m).expect("a manifest serializes") + "\n"
}

/// Writes `DIR/secret.json` with the emission's seed, readable by its owner
/// only (on Unix). Returns its path.
pub fn write_secret(dir: &Path, emission: &Emission) -> Result<PathBuf, WriteError> {
    let path = dir.join(SECRET_FILE);
    let secret = SecretFile {
        format: SECRET_FORMAT.into(),
        code: emission.table().code.clone(),
        emission: emission.number(),
        seed: emission.seed().to_hex(),
    };
    let text = serde_json::to_string_pretty(&secret).expect("serializes") + "\n";
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(&path).map_err(io_at(&path))?;
    f.write_all(text.as_bytes()).map_err(io_at(&path))?;
    Ok(path)
}
