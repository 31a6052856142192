//! Every ticket row checked against what was published, so that a restore
//! believes no row it reads: a backup's unsold ticket whose prize was
//! raised, or whose commitment was changed, is named and refused.
//!
//! For each emission and each of its published blocks:
//! - the emission's prize table matches its digest, and the digest is the
//!   one the audit log's `blocks_published` entry announced;
//! - the block's root is the one that entry published (a changed root in
//!   `blocks` is named);
//! - each ticket, in position order from 1: its prizes are its schedule
//!   row's in the table (a raised prize names its ticket), and the block
//!   holds each schedule row as many times as the table says;
//! - the leaves rebuilt from the rows (serial, position, row, prizes, play
//!   code hash, commitment: `emission::Leaf`) make the block's chunk roots
//!   and its root: a changed commitment or play code hash names the chunk
//!   of 1 024 tickets that holds it (finding the one ticket would take the
//!   server key, which a restore does not read).
//!
//! Without the server key these checks can be defeated only by also
//! rewriting the audit log's entry and every chain hash after it, which
//! the audit log's seals under the server key show (`audit_mac.rs`).

use super::db::{Db, on_db};
use super::reads::{LeafRow, leaf_rows, record_leaf};
use crate::store::error::DbResult;
use domain::error::{AppError, StoreError};
use emission::{CHUNK_LEAVES, Hash, chunk_roots, merkle_root};
use math::PrizeTable;
use std::collections::HashMap;

/// What the check read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowsCheck {
    pub blocks: u64,
    pub tickets: u64,
    /// The first emission, block or ticket that differs from what was
    /// published, in words; `None`: every row is what was published.
    pub first_mismatch: Option<String>,
}

/// `(emission, table_toml, table_digest)`.
type EmissionRow = (i64, String, String);
/// `(id, emission, number, size, root, chunk_roots)`.
type BlockRow = (i64, i64, i64, i64, String, String);

/// The roots and digests the audit log's `blocks_published` entries published.
#[derive(Default)]
struct Published {
    roots: HashMap<(i64, i64), String>,
    digests: HashMap<i64, String>,
}

async fn published(db: &Db) -> Result<Published, AppError> {
    let entries: Vec<String> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT data_json FROM audit_log WHERE kind = 'blocks_published' ORDER BY id",
    )
    .fetch_all(pool)
    .await.db()?);
    let mut p = Published::default();
    for data in entries {
        let v: serde_json::Value = serde_json::from_str(&data)
            .map_err(|e| StoreError::Corrupt(format!("a blocks_published audit entry: {e}")))?;
        let emission = v["emission"].as_i64().unwrap_or(0);
        if let Some(d) = v["table_digest"].as_str() {
            p.digests.insert(emission, d.to_string());
        }
        for b in v["blocks"].as_array().into_iter().flatten() {
            if let (Some(n), Some(root)) = (b["block"].as_i64(), b["root"].as_str()) {
                p.roots.insert((emission, n), root.to_string());
            }
        }
    }
    Ok(p)
}

/// Checks every published block's rows (see the module doc).
pub async fn check(db: &Db) -> Result<RowsCheck, AppError> {
    let published = published(db).await?;
    let emissions: Vec<EmissionRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, table_toml, table_digest FROM emissions ORDER BY id",
    )
    .fetch_all(pool)
    .await.db()?);
    let blocks: Vec<BlockRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, emission_id, number, size, root, chunk_roots FROM blocks WHERE published_ms IS NOT NULL
          ORDER BY emission_id, number",
    )
    .fetch_all(pool)
    .await.db()?);
    let mut out = RowsCheck::default();
    let mut tables = HashMap::new();
    for block in blocks {
        // An emission is checked with its first published block (one still
        // being written has no audit entry yet, and nothing of it is public).
        if !tables.contains_key(&block.1) {
            let Some((id, toml, digest)) = emissions.iter().find(|e| e.0 == block.1) else {
                return Ok(RowsCheck { first_mismatch: Some(format!("block {} has no emission", block.0)), ..out });
            };
            match table_of(*id, toml, digest, published.digests.get(id)) {
                Ok(t) => tables.insert(*id, t),
                Err(why) => return Ok(RowsCheck { first_mismatch: Some(why), ..out }),
            };
        }
        let table = &tables[&block.1];
        out.blocks += 1;
        match check_block(db, &block, table, published.roots.get(&(block.1, block.2))).await? {
            Ok(tickets) => out.tickets += tickets,
            Err(why) => return Ok(RowsCheck { first_mismatch: Some(why), ..out }),
        }
    }
    Ok(out)
}

/// The emission's table, when it is the one its digest and the audit log name.
fn table_of(id: i64, toml: &str, digest: &str, announced: Option<&String>) -> Result<PrizeTable, String> {
    let table = PrizeTable::parse_toml(toml).map_err(|e| format!("emission {id}'s prize table does not parse: {e}"))?;
    if table.digest() != digest {
        return Err(format!("emission {id}'s prize table is not the one of its digest {digest}: it was changed"));
    }
    match announced {
        Some(d) if d == digest => Ok(table),
        Some(d) => Err(format!("emission {id}'s table digest {digest} is not the one its audit entry published ({d})")),
        None => Err(format!("emission {id} has no blocks_published entry in the audit log")),
    }
}

/// One block's rows: `Ok(Ok(tickets))`, or the first difference in words.
async fn check_block(
    db: &Db,
    (id, emission, number, size, root, chunk_roots_hex): &BlockRow,
    table: &PrizeTable,
    announced: Option<&String>,
) -> Result<Result<u64, String>, AppError> {
    let name = format!("block {number} of emission {emission}");
    match announced {
        Some(r) if r == root => {}
        Some(r) => return Ok(Err(format!("{name}: its root {root} is not the one published in the audit log ({r})"))),
        None => return Ok(Err(format!("{name}: no root of it was published in the audit log"))),
    }
    let mut leaves: Vec<Hash> = Vec::with_capacity(usize::try_from(*size).unwrap_or(0));
    let mut counts = vec![0u32; table.schedules.len()];
    let chunk = CHUNK_LEAVES as i64;
    let mut first = 1;
    while first <= *size {
        for row in leaf_rows(db, *id, first, chunk).await? {
            let at = leaves.len() as i64 + 1;
            match leaf_of(row, at, table, &mut counts) {
                Ok(hash) => leaves.push(hash),
                Err(why) => return Ok(Err(format!("{name}: {why}"))),
            }
        }
        first += chunk;
    }
    let total: i64 = on_db!(db, pool => sqlx::query_scalar("SELECT COUNT(*) FROM tickets WHERE block_id = $1")
        .bind(id)
        .fetch_one(pool)
        .await.db()?);
    if leaves.len() as i64 != *size || total != *size {
        return Ok(Err(format!("{name}: {total} ticket rows, positions 1 to {} of {size}", leaves.len())));
    }
    if let Some((row, s)) = table.schedules.iter().enumerate().find(|(i, s)| counts[*i] != s.tickets) {
        return Ok(Err(format!("{name}: {} tickets of schedule row {row}, the table says {}", counts[row], s.tickets)));
    }
    let chunks = chunk_roots(&leaves, CHUNK_LEAVES);
    let stored = domain::supply::parse_chunk_roots(chunk_roots_hex).unwrap_or_default();
    if let Some(i) = (0..chunks.len()).find(|&i| stored.get(i) != Some(&chunks[i])) {
        let (from, to) = (i * CHUNK_LEAVES + 1, ((i + 1) * CHUNK_LEAVES).min(leaves.len()));
        return Ok(Err(format!(
            "{name}: the rows of tickets at positions {from} to {to} do not make the chunk root published with the \
             block (a commitment, play code hash, serial or prize among them was changed)"
        )));
    }
    if hex::encode(merkle_root(leaves)) != *root {
        return Ok(Err(format!("{name}: its rows do not make its published root {root}")));
    }
    Ok(Ok(*size as u64))
}

/// A row's leaf hash, when it sits at `position` and has its schedule row's prizes.
fn leaf_of(row: LeafRow, position: i64, table: &PrizeTable, counts: &mut [u32]) -> Result<Hash, String> {
    let serial = row.0.clone();
    if row.1 != position {
        return Err(format!("ticket {serial} at position {}, where {position} was expected", row.1));
    }
    let leaf = record_leaf(row).map_err(|e| e.to_string())?;
    let schedule = table
        .schedules
        .get(leaf.row as usize)
        .ok_or_else(|| format!("ticket {serial} has schedule row {}, which the table does not have", leaf.row))?;
    if schedule.prizes != leaf.prizes_cents {
        let show = |p: &engine::PrizeSchedule| p.cents().map(|c| format::euros(c as i64)).join(" / ");
        return Err(format!(
            "ticket {serial}'s prizes for 5 / 6 / 7 / 8 tricks ({}) are not those of its schedule row {} in the \
             table ({}): changed",
            show(&leaf.prizes_cents),
            leaf.row,
            show(&schedule.prizes)
        ));
    }
    counts[leaf.row as usize] += 1;
    leaf.leaf().map(|l| l.hash()).map_err(|e| format!("ticket {serial}: {e}"))
}
