//! A paper block's print file and its downloads (the second outside audit).
//!
//! The print file (`emit`'s block file) holds every play code of the
//! block, and a play code opens its ticket: it is for the printer, before
//! the block is sold. So:
//! - **with its play codes** it is given only while no ticket of the block
//!   is sold (`block_figures.sold`, kept with every sale): from the first
//!   sale on it is refused with 409, and no other request gives a code;
//! - **without them** (`codes=false`: the `play_code` column left empty;
//!   serials, rows, prizes and commitments, none of which opens a ticket)
//!   it may be downloaded at any time, e.g. to reprint covers or check a
//!   delivery;
//! - **every download** is written to the audit log (kind
//!   [`DOWNLOAD_KIND`]: the emission, the block, whether the codes were in
//!   it, which operator token asked, from which address), before the file
//!   leaves; the desk reads them back ([`downloads`]) through the partial
//!   index of migration 20.
//!
//! A download racing the block's first sale: the sales are checked before
//! the file is made and again after its audit entry is committed, so a file
//! with codes leaves only if no ticket was sold when its entry was written
//! (the entry then stays, the trace of a download refused at the last
//! moment).

use super::stored::{corrupt, parse_channel};
use crate::keys::parse_salt;
use crate::store::clock::now_ms;
use crate::store::db::{Db, on_db};
use crate::store::error::DbResult;
use crate::store::shell::Store;
use domain::api::Channel;
use domain::error::AppError;
use domain::{AuditRecord, Changes, Effect, Op};
use math::PrizeTable;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The audit log's kind of a print file's download.
pub const DOWNLOAD_KIND: &str = "print_file_downloaded";

/// The audit entries of the downloads, oldest first. The condition is
/// migration 20's partial index's, word for word (a bound parameter would
/// not let SQLite use it).
const DOWNLOADS_SELECT: &str =
    "SELECT created_ms, data_json FROM audit_log WHERE kind = 'print_file_downloaded' ORDER BY id";

/// A paper block's print file downloads, from the audit log (the desk).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct PrintDownloads {
    /// Downloads of the block's print file, with or without its play codes.
    pub count: u32,
    /// Of which with the play codes.
    pub with_codes: u32,
    /// The latest download, if any.
    pub last: Option<PrintDownload>,
}

/// One download of a print file, as its audit entry says it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct PrintDownload {
    /// When (unix milliseconds).
    #[serde(default)]
    pub at_ms: i64,
    /// Whether the file held the play codes.
    pub codes: bool,
    /// Which operator token asked: its place in the server's
    /// `operator_tokens`, from 1.
    pub operator_token: u32,
    /// The client's address, as the server saw it (`trust_forwarded_for`).
    pub address: String,
}

/// What an audit entry of [`DOWNLOAD_KIND`] holds.
#[derive(Deserialize)]
struct Entry {
    emission: u32,
    block: u32,
    #[serde(flatten)]
    download: PrintDownload,
}

/// Every print file download, by `(emission, block)`.
pub(super) async fn downloads(db: &Db) -> Result<HashMap<(u32, u32), PrintDownloads>, AppError> {
    let rows: Vec<(i64, String)> = on_db!(db, pool => sqlx::query_as(DOWNLOADS_SELECT).fetch_all(pool).await.db()?);
    let mut out: HashMap<(u32, u32), PrintDownloads> = HashMap::new();
    for (created_ms, data) in rows {
        let mut e: Entry = serde_json::from_str(&data)
            .map_err(|e| corrupt(format!("an audit entry {DOWNLOAD_KIND} does not read ({e}): {data}")))?;
        e.download.at_ms = created_ms;
        let seen = out.entry((e.emission, e.block)).or_default();
        seen.count += 1;
        seen.with_codes += u32::from(e.download.codes);
        seen.last = Some(e.download);
    }
    Ok(out)
}

/// The print file without its play codes: the header as it is, each line's
/// `play_code` field left empty.
fn without_codes(csv: &[u8]) -> Vec<u8> {
    let header = emission::CSV_HEADER;
    let column = header.split(',').position(|c| c == "play_code").expect("the block file has a play_code column");
    let mut out = Vec::with_capacity(csv.len());
    for (n, line) in csv.split_inclusive(|b| *b == b'\n').enumerate() {
        if n == 0 {
            out.extend_from_slice(line);
            continue;
        }
        let mut commas = line.iter().enumerate().filter(|(_, b)| **b == b',').map(|(i, _)| i);
        let before = if column == 0 { None } else { commas.nth(column - 1) };
        let after = commas.next().expect("a field after the play code");
        out.extend_from_slice(&line[..before.map_or(0, |b| b + 1)]);
        out.extend_from_slice(&line[after..]);
    }
    out
}

impl Store {
    /// The print file of a paper block, regenerated from the key and
    /// checked against the published root; with its play codes only while
    /// no ticket of the block is sold (409 after). Each download is
    /// written to the audit log with `operator_token` (its place in
    /// `operator_tokens`, from 1) and the client's `address` (module doc).
    pub async fn print_file(
        &self,
        emission: u32,
        block: u32,
        codes: bool,
        operator_token: u32,
        address: String,
    ) -> Result<Vec<u8>, AppError> {
        // channel, table, salt, key id, and the published block's id and root.
        type Row = (String, String, String, i64, Option<i64>, Option<String>);
        let row: Option<Row> = on_db!(&self.db, pool => sqlx::query_as(
            "SELECT e.channel, e.table_toml, e.seed_salt, e.key_id, b.id, b.root FROM emissions e
             LEFT JOIN blocks b ON b.emission_id = e.id AND b.number = $2 AND b.published_ms IS NOT NULL
             WHERE e.id = $1",
        )
        .bind(i64::from(emission))
        .bind(i64::from(block))
        .fetch_optional(pool)
        .await.db()?);
        let Some((channel, toml, salt, key_id, Some(block_id), Some(root))) = row else {
            return Err(AppError::NotFound(format!("emission {emission} has no published block {block}")));
        };
        if parse_channel(&channel)? != Channel::Paper {
            return Err(AppError::Conflict(format!(
                "emission {emission} is sold online: its tickets are never printed, so it has no print file"
            )));
        }
        if codes {
            self.refuse_codes_once_sold(emission, block, block_id).await?;
        }
        let table = PrizeTable::parse_toml(&toml).map_err(|e| corrupt(format!("emission {emission}'s table: {e}")))?;
        let salt = parse_salt(&salt).ok_or_else(|| corrupt(format!("emission {emission}'s salt")))?;
        let seed = self.keys.emission_seed(key_id, &salt).map_err(|e| corrupt(format!("emission {emission}: {e}")))?;
        let fixed = self.keys.fixed();
        let csv = tokio::task::spawn_blocking(move || {
            let e = emission::Emission::new(emission, table, seed).map_err(|e| corrupt(e.to_string()))?;
            let mut b = e.generate_block(block).map_err(|e| corrupt(e.to_string()))?;
            if let Some(f) = fixed {
                b.tickets.iter_mut().for_each(|t| t.server_seed = f);
                let leaves = b.tickets.iter().map(|t| t.leaf_hash()).collect();
                b.merkle_root = emission::merkle_root(leaves);
            }
            if hex::encode(b.merkle_root) != root {
                return Err(corrupt(format!(
                    "block {block} of emission {emission} regenerated from the server key does not match its \
                     published root: is this the key it was made with?"
                )));
            }
            let csv = emission::block_csv(&b, false);
            Ok(if codes { csv } else { without_codes(&csv) })
        })
        .await
        .map_err(|e| AppError::internal(format!("print file task: {e}")))??;
        let data = serde_json::json!({
            "emission": emission, "block": block, "codes": codes, "operator_token": operator_token, "address": address,
        });
        let audit = AuditRecord { created_ms: now_ms(), kind: DOWNLOAD_KIND, data_json: data.to_string() };
        self.write(Op::Apply(Box::new(Changes { audit: Some(audit), ..Changes::none(Effect::Emission) }))).await?;
        if codes {
            self.refuse_codes_once_sold(emission, block, block_id).await?;
        }
        tracing::info!(emission, block, codes, operator_token, "print file downloaded");
        Ok(csv)
    }

    /// 409 once any ticket of the block is sold: its print file no longer
    /// carries play codes.
    async fn refuse_codes_once_sold(&self, emission: u32, block: u32, block_id: i64) -> Result<(), AppError> {
        let sold: i64 = on_db!(&self.db, pool => sqlx::query_scalar(
            "SELECT CAST(COALESCE(SUM(sold), 0) AS BIGINT) FROM block_figures WHERE block_id = $1"
        )
        .bind(block_id)
        .fetch_one(pool)
        .await.db()?);
        if sold > 0 {
            return Err(AppError::Conflict(format!(
                "block {block} of emission {emission} has {sold} ticket(s) sold: its print file no longer carries \
                 the play codes (a play code opens its ticket; the codes are for the printer, before any sale). \
                 Download it without them: print.csv?codes=false"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_codes_empties_the_play_code_column_only() {
        let csv = format!("{}\n1,S-1,AAAA-BBBB,3,0,1,2,3,c1\n2,S-2,CCCC-DDDD,1,0,0,0,9,c2\n", emission::CSV_HEADER);
        let out = String::from_utf8(without_codes(csv.as_bytes())).unwrap();
        assert_eq!(out, format!("{}\n1,S-1,,3,0,1,2,3,c1\n2,S-2,,1,0,0,0,9,c2\n", emission::CSV_HEADER));
    }
}
