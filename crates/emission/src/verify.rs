//! Re-checking an emitted folder against its commitments (guarantee 6), as
//! `as-capone verify-block` does.
//!
//! From the public files alone (`manifest.json` and the block files):
//! the manifest's format and commitment scheme, the table's digest, the
//! game and code; per block the counts per row against the table, every
//! line's position, serial (check digits included, and it names this
//! emission, block and position: so no serial appears twice), play code,
//! row and prizes, no play code twice in the emission, every proof against the root when the file has
//! proofs, the Merkle root recomputed from the lines, and the file's
//! SHA-256. With the seed (from `secret.json` or given), each block is
//! also regenerated and compared byte for byte.
//!
//! The first difference found is returned as a one-line [`VerifyError`]
//! naming the block, the file and line, and what differs.

use crate::block::{Emission, Leaf};
use crate::files::{
    self, BlockEntry, COMMITMENT_SCHEME, CSV_HEADER, MANIFEST_FILE, MANIFEST_FORMAT, Manifest, SECRET_FILE,
    SECRET_FORMAT, SecretFile,
};
use crate::merkle::{MerkleProof, merkle_root};
use crate::play_code::PlayCode;
use crate::seed::EmissionSeed;
use crate::serial::Serial;
use math::PrizeTable;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// What to check.
#[derive(Clone, Debug, Default)]
pub struct VerifyOptions {
    /// The emission seed; when `None`, `DIR/secret.json` is read if present.
    pub seed: Option<EmissionSeed>,
    /// Only this block (from 1); all of the manifest's blocks when `None`.
    pub block: Option<u32>,
}

/// What was checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyReport {
    pub blocks: Vec<u32>,
    pub tickets: u64,
    /// Tickets whose proof line was checked against the root.
    pub proofs: u64,
    /// Whether the blocks were regenerated from the seed and compared byte for byte.
    pub regenerated: bool,
}

/// The first difference found: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct VerifyError {
    /// `manifest.json`, or `block 3 (block-0003.csv line 17)`.
    pub place: String,
    pub what: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.place, self.what)
    }
}

fn fail<T>(place: impl Into<String>, what: impl Into<String>) -> Result<T, VerifyError> {
    Err(VerifyError { place: place.into(), what: what.into() })
}

/// Checks the emission folder `dir`; `on_block(index)` is called as each
/// block starts.
pub fn verify_dir(
    dir: &Path,
    opts: &VerifyOptions,
    on_block: &mut dyn FnMut(u32),
) -> Result<VerifyReport, VerifyError> {
    let manifest = read_manifest(dir)?;
    let seed = match &opts.seed {
        Some(s) => Some(s.clone()),
        None => read_secret(dir, &manifest)?,
    };
    let regenerated = seed.is_some();
    // Without the seed, a placeholder: only the serials' code and numbers are used.
    let emission = Emission::new(
        manifest.emission,
        manifest.table.clone(),
        seed.unwrap_or_else(|| EmissionSeed::from_bytes([0; 32])),
    )
    .or_else(|e| fail(MANIFEST_FILE, e.to_string()))?;

    let entries: Vec<&BlockEntry> = match opts.block {
        Some(b) => match manifest.blocks.iter().find(|e| e.index == b) {
            Some(e) => vec![e],
            None => return fail(MANIFEST_FILE, format!("has no block {b}")),
        },
        None => manifest.blocks.iter().collect(),
    };
    let mut report = VerifyReport { blocks: Vec::new(), tickets: 0, proofs: 0, regenerated };
    let mut all_codes: Vec<u128> = Vec::new();
    for entry in entries {
        on_block(entry.index);
        let checked = verify_block_file(dir, &emission, entry, &mut all_codes)?;
        report.tickets += u64::from(entry.tickets);
        report.proofs += checked.proofs;
        if regenerated {
            compare_regenerated(dir, &emission, entry, checked.has_proofs)?;
        }
        report.blocks.push(entry.index);
    }
    // A play code twice in two blocks would open two tickets.
    all_codes.sort_unstable();
    if let Some(w) = all_codes.windows(2).find(|w| w[0] == w[1]) {
        let code = PlayCode::from_bits(w[0]);
        return fail("emission", format!("play code {code} appears in two blocks"));
    }
    Ok(report)
}

/// Reads and checks `manifest.json` on its own.
pub fn read_manifest(dir: &Path) -> Result<Manifest, VerifyError> {
    let path = dir.join(MANIFEST_FILE);
    let text =
        std::fs::read_to_string(&path).or_else(|e| fail(path.display().to_string(), format!("cannot read: {e}")))?;
    let m: Manifest =
        serde_json::from_str(&text).or_else(|e| fail(MANIFEST_FILE, format!("not a valid manifest: {e}")))?;
    if m.format != MANIFEST_FORMAT {
        return fail(MANIFEST_FILE, format!("format is {:?}, expected {MANIFEST_FORMAT:?}", m.format));
    }
    if m.commitment != COMMITMENT_SCHEME {
        return fail(MANIFEST_FILE, format!("commitment scheme is {:?}, expected {COMMITMENT_SCHEME:?}", m.commitment));
    }
    let digest = m.table.digest();
    if m.table_digest != digest {
        return fail(
            MANIFEST_FILE,
            format!("table_digest is {} but the table it holds has digest {digest}", m.table_digest),
        );
    }
    if m.game != m.table.game || m.code != m.table.code {
        return fail(
            MANIFEST_FILE,
            format!(
                "game {:?} / code {:?} differ from the table's {:?} / {:?}",
                m.game, m.code, m.table.game, m.table.code
            ),
        );
    }
    let mut seen = HashSet::new();
    for e in &m.blocks {
        let place = format!("{MANIFEST_FILE}, block {}", e.index);
        if !seen.insert(e.index) {
            return fail(place, "listed twice");
        }
        if e.file != files::block_file_name(e.index) {
            return fail(place, format!("file is {:?}, expected {:?}", e.file, files::block_file_name(e.index)));
        }
        if e.tickets != m.table.block_size {
            return fail(
                place,
                format!("has {} tickets but the table's block_size is {}", e.tickets, m.table.block_size),
            );
        }
        if e.counts != m.table.counts() {
            return fail(
                place,
                format!("counts per row {:?} differ from the table's {:?}", e.counts, m.table.counts()),
            );
        }
    }
    Ok(m)
}

/// The seed of `DIR/secret.json`, if the file is there.
fn read_secret(dir: &Path, m: &Manifest) -> Result<Option<EmissionSeed>, VerifyError> {
    let path = dir.join(SECRET_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).or_else(|e| fail(SECRET_FILE, format!("cannot read: {e}")))?;
    let s: SecretFile =
        serde_json::from_str(&text).or_else(|e| fail(SECRET_FILE, format!("not a valid secret file: {e}")))?;
    if s.format != SECRET_FORMAT {
        return fail(SECRET_FILE, format!("format is {:?}, expected {SECRET_FORMAT:?}", s.format));
    }
    if s.emission != m.emission || s.code != m.code {
        return fail(
            SECRET_FILE,
            format!("is for {} emission {}, the manifest for {} emission {}", s.code, s.emission, m.code, m.emission),
        );
    }
    EmissionSeed::parse(&s.seed).map(Some).or_else(|e| fail(SECRET_FILE, e.to_string()))
}

struct Checked {
    proofs: u64,
    has_proofs: bool,
}

/// Checks one block file line by line, then its counts, root and hash.
fn verify_block_file(
    dir: &Path,
    emission: &Emission,
    entry: &BlockEntry,
    all_codes: &mut Vec<u128>,
) -> Result<Checked, VerifyError> {
    let table: &PrizeTable = emission.table();
    let path: PathBuf = dir.join(&entry.file);
    let block_place = format!("block {} ({})", entry.index, entry.file);
    let file = File::open(&path).or_else(|e| fail(&block_place, format!("cannot open: {e}")))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut hash = Sha256::new();
    let mut buf = Vec::with_capacity(4096);
    let mut root = [0u8; 32];
    hex::decode_to_slice(&entry.merkle_root, &mut root)
        .or_else(|_| fail(format!("{MANIFEST_FILE}, block {}", entry.index), "merkle_root is not 64 hex digits"))?;

    let mut read_line = |buf: &mut Vec<u8>, n: usize| -> Result<bool, VerifyError> {
        buf.clear();
        let got = reader.read_until(b'\n', buf).or_else(|e| {
            fail(format!("block {} ({} line {n})", entry.index, entry.file), format!("cannot read: {e}"))
        })?;
        hash.update(&buf[..]);
        Ok(got > 0)
    };

    if !read_line(&mut buf, 1)? {
        return fail(&block_place, "is empty");
    }
    let with_proofs = format!("{CSV_HEADER},proof\n");
    let has_proofs = if buf == format!("{CSV_HEADER}\n").as_bytes() {
        false
    } else if buf == with_proofs.as_bytes() {
        true
    } else {
        return fail(format!("block {} ({} line 1)", entry.index, entry.file), format!("header is not {CSV_HEADER:?}"));
    };
    let fields_per_line = if has_proofs { 10 } else { 9 };

    let mut leaves = Vec::with_capacity(entry.tickets as usize);
    let mut codes = HashSet::with_capacity(entry.tickets as usize);
    let mut counts = vec![0u32; table.schedules.len()];
    let mut proofs = 0u64;
    let mut line_no = 1usize;
    loop {
        line_no += 1;
        if !read_line(&mut buf, line_no)? {
            break;
        }
        let place = || format!("block {} ({} line {line_no})", entry.index, entry.file);
        let position = line_no as u32 - 1;
        let Ok(text) = std::str::from_utf8(&buf) else {
            return fail(place(), "is not UTF-8 text");
        };
        let Some(text) = text.strip_suffix('\n') else {
            return fail(place(), "does not end with a newline");
        };
        let f: Vec<&str> = text.split(',').collect();
        if f.len() != fields_per_line {
            return fail(place(), format!("has {} fields, expected {fields_per_line}", f.len()));
        }
        if f[0] != position.to_string() {
            return fail(place(), format!("position is {:?}, expected {position} (tickets are in sale order)", f[0]));
        }
        let serial = Serial::parse(f[1]).or_else(|e| fail(place(), e.to_string()))?;
        let expect = Serial::new(emission.code(), emission.number(), entry.index, position)
            .or_else(|e| fail(place(), e.to_string()))?;
        if serial != expect || f[1] != expect.to_string() {
            return fail(place(), format!("serial is {}, expected {expect}", f[1]));
        }
        let code = PlayCode::parse(f[2]).or_else(|e| fail(place(), e.to_string()))?;
        if f[2] != code.to_string() {
            return fail(place(), format!("play code {:?} is not written in its printed form {code}", f[2]));
        }
        if !codes.insert(code.bits()) {
            return fail(place(), format!("play code {code} appears twice in the block"));
        }
        let row = match f[3].parse::<usize>() {
            Ok(r) if (1..=table.schedules.len()).contains(&r) && f[3] == r.to_string() => r - 1,
            _ => {
                return fail(
                    place(),
                    format!("row {:?} is not a schedule row of the table (1 to {})", f[3], table.schedules.len()),
                );
            }
        };
        let prizes = table.schedules[row].prizes;
        let written: Vec<&str> = f[4..8].to_vec();
        let expected: Vec<String> = prizes.cents().iter().map(u64::to_string).collect();
        if written != expected {
            return fail(
                place(),
                format!(
                    "prizes {} differ from schedule row {} of the table: {}",
                    written.join(","),
                    row + 1,
                    expected.join(",")
                ),
            );
        }
        counts[row] += 1;
        let mut commitment = [0u8; 32];
        if f[8].len() != 64 || hex::decode_to_slice(f[8], &mut commitment).is_err() || f[8] != hex::encode(commitment) {
            return fail(place(), format!("commitment {:?} is not 64 lowercase hex digits", f[8]));
        }
        let leaf =
            Leaf { serial, position, row: row as u32, prizes, play_code_sha256: code.sha256(), commitment }.hash();
        if has_proofs {
            let proof = MerkleProof::parse(f[9]).or_else(|e| fail(place(), e.to_string()))?;
            if !proof.verify(&leaf, &root) {
                return fail(
                    place(),
                    format!("the ticket's proof does not lead to the manifest's merkle root {}", entry.merkle_root),
                );
            }
            proofs += 1;
        }
        leaves.push(leaf);
    }
    if leaves.len() != entry.tickets as usize {
        return fail(
            &block_place,
            format!("has {} tickets, the manifest and the table say {}", leaves.len(), entry.tickets),
        );
    }
    if counts != table.counts() {
        return fail(&block_place, format!("tickets per row {counts:?} differ from the table's {:?}", table.counts()));
    }
    let computed = merkle_root(leaves);
    if computed != root {
        return fail(
            &block_place,
            format!(
                "merkle root of the tickets is {} but manifest.json says {}",
                hex::encode(computed),
                entry.merkle_root
            ),
        );
    }
    let sha = hex::encode(hash.finalize());
    if sha != entry.csv_sha256 {
        return fail(&block_place, format!("SHA-256 of the file is {sha} but manifest.json says {}", entry.csv_sha256));
    }
    all_codes.extend(codes);
    Ok(Checked { proofs, has_proofs })
}

/// Regenerates the block from the seed and compares it with the file.
fn compare_regenerated(dir: &Path, emission: &Emission, entry: &BlockEntry, proofs: bool) -> Result<(), VerifyError> {
    let place = format!("block {} ({})", entry.index, entry.file);
    let block = emission.generate_block(entry.index).or_else(|e| fail(&place, e.to_string()))?;
    if hex::encode(block.merkle_root) != entry.merkle_root {
        return fail(
            &place,
            format!(
                "the seed gives merkle root {}, manifest.json says {}",
                hex::encode(block.merkle_root),
                entry.merkle_root
            ),
        );
    }
    let expected = files::block_csv(&block, proofs);
    drop(block);
    let mut actual = Vec::with_capacity(expected.len());
    File::open(dir.join(&entry.file))
        .and_then(|mut f| f.read_to_end(&mut actual))
        .or_else(|e| fail(&place, format!("cannot read: {e}")))?;
    if actual != expected {
        let line = actual.iter().zip(&expected).take_while(|(a, b)| a == b).filter(|(a, _)| **a == b'\n').count() + 1;
        return fail(&place, format!("differs from the block regenerated from the seed, from line {line} on"));
    }
    Ok(())
}
