//! The audit log's hash chain: every entry holds the hash of the one before
//! it, so that changing, removing or reordering any sealed entry breaks
//! the chain from there on.
//!
//! A chain has one head, and a head that every write moves is a point
//! where every writer waits for the others. So entries are written with
//! their cause, in its transaction, **unsealed**, and are chained in order
//! by a sealer:
//! - SQLite: the one writer task is the sealer; it chains each entry in the
//!   transaction that writes it, from the head it keeps in memory.
//! - PostgreSQL: any process may write entries; one process at a time (a
//!   transaction-scoped advisory lock) seals the committed ones, in the
//!   order of their ids, shortly after commit ([`seal_pending`], run by
//!   every process in the background and at shutdown). An entry committed
//!   late, behind a higher id already sealed, is sealed next: `chain_pos`
//!   is the order of sealing. A crash leaves entries unsealed, never lost:
//!   the next sealer chains them.
//!
//! [`check`] verifies the whole chain, in `chain_pos` order, and counts
//! the entries waiting to be sealed.

use super::db::{Db, on_db};
use super::plan::Seal;
use crate::keys::Keyring;
use crate::store::error::DbResult;
use domain::AuditRecord;
use domain::error::{AppError, StoreError};
use sha2::{Digest, Sha256};

/// The all-zero hash before the audit log's first entry.
pub const AUDIT_GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The advisory lock key of the PostgreSQL sealer ("ASCAUDIT").
const SEAL_LOCK: i64 = 0x4153_4341_5544_4954;

/// `hex(SHA-256(prev_hash "\n" created_ms "\n" kind "\n" data_json))`.
pub fn audit_hash(prev_hash: &str, created_ms: i64, kind: &str, data_json: &str) -> String {
    let mut h = Sha256::new();
    h.update(prev_hash.as_bytes());
    h.update(b"\n");
    h.update(created_ms.to_string().as_bytes());
    h.update(b"\n");
    h.update(kind.as_bytes());
    h.update(b"\n");
    h.update(data_json.as_bytes());
    hex::encode(h.finalize())
}

/// The chain's last sealed entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub chain_pos: i64,
    pub hash: String,
}

impl Head {
    pub fn genesis() -> Head {
        Head { chain_pos: 0, hash: AUDIT_GENESIS.to_string() }
    }

    /// The seal of the entry after this head.
    pub fn seal(&self, entry: &AuditRecord) -> Seal {
        self.seal_raw(entry.created_ms, entry.kind, &entry.data_json)
    }

    fn seal_raw(&self, created_ms: i64, kind: &str, data_json: &str) -> Seal {
        Seal {
            chain_pos: self.chain_pos + 1,
            prev_hash: self.hash.clone(),
            hash: audit_hash(&self.hash, created_ms, kind, data_json),
        }
    }

    pub fn after(seal: &Seal) -> Head {
        Head { chain_pos: seal.chain_pos, hash: seal.hash.clone() }
    }
}

/// The last sealed entry's `(chain_pos, hash)`, read by [`Head::stored`].
pub(super) const HEAD_SELECT: &str =
    "SELECT chain_pos, hash FROM audit_log WHERE chain_pos IS NOT NULL ORDER BY chain_pos DESC LIMIT 1";

impl Head {
    /// The head from a row of [`HEAD_SELECT`] (none: the genesis).
    pub(super) fn stored(row: Option<(i64, String)>) -> Head {
        row.map_or_else(Head::genesis, |(chain_pos, hash)| Head { chain_pos, hash })
    }
}

/// The head as stored.
pub(super) async fn head(db: &Db) -> Result<Head, StoreError> {
    Ok(Head::stored(on_db!(db, pool => sqlx::query_as(HEAD_SELECT).fetch_optional(pool).await.db()?)))
}

/// Whether a sealer waits for another one to finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wait {
    /// The background sealers: another one at work will seal what is there.
    No,
    /// An explicit seal (a check, a shutdown): when it returns, every
    /// entry committed before it was called is sealed.
    Yes,
}

/// PostgreSQL: seals every committed unsealed entry and returns how many
/// it sealed. With [`Wait::No`] it returns 0 at once when another process
/// is sealing right now.
pub(super) async fn seal_pending(pool: &sqlx::PgPool, keys: &Keyring, wait: Wait) -> Result<u64, StoreError> {
    let mut sealed = 0;
    loop {
        let mut tx = pool.begin().await.db()?;
        if wait == Wait::Yes {
            sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(SEAL_LOCK).execute(&mut *tx).await.db()?;
        } else {
            let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
                .bind(SEAL_LOCK)
                .fetch_one(&mut *tx)
                .await
                .db()?;
            if !locked {
                return Ok(sealed);
            }
        }
        let mut head = Head::stored(sqlx::query_as(HEAD_SELECT).fetch_optional(&mut *tx).await.db()?);
        let rows: Vec<(i64, i64, String, String)> = sqlx::query_as(
            "SELECT id, created_ms, kind, data_json FROM audit_log WHERE chain_pos IS NULL ORDER BY id LIMIT 5000",
        )
        .fetch_all(&mut *tx)
        .await
        .db()?;
        if rows.is_empty() {
            return Ok(sealed);
        }
        let (mut ids, mut positions, mut prevs, mut hashes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (id, created_ms, kind, data_json) in &rows {
            let seal = head.seal_raw(*created_ms, kind, data_json);
            head = Head::after(&seal);
            ids.push(*id);
            positions.push(seal.chain_pos);
            prevs.push(seal.prev_hash);
            hashes.push(seal.hash);
        }
        sqlx::query(
            "UPDATE audit_log a SET chain_pos = v.pos, prev_hash = v.prev, hash = v.hash
             FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[]) AS v(id, pos, prev, hash)
             WHERE a.id = v.id",
        )
        .bind(&ids)
        .bind(&positions)
        .bind(&prevs)
        .bind(&hashes)
        .execute(&mut *tx)
        .await
        .db()?;
        if let Some((key_id, mac)) = super::audit_mac::seal_head(keys, head.chain_pos, &head.hash) {
            let upsert = sqlx::query(super::audit_mac::HEAD_UPSERT).bind(head.chain_pos).bind(&head.hash);
            upsert.bind(key_id).bind(mac).execute(&mut *tx).await.db()?;
        }
        tx.commit().await.db()?;
        sealed += rows.len() as u64;
    }
}

/// The audit log's hash chain, checked entry by entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditCheck {
    /// Entries in the log, sealed or not.
    pub entries: u64,
    /// Entries committed and not chained yet (PostgreSQL, just after a write).
    pub unsealed: u64,
    /// The id of the first sealed entry whose position, `prev_hash` or
    /// `hash` is wrong.
    pub first_broken: Option<i64>,
    /// The first entry not sealed with the server key, or movement of
    /// money no such entry names (`audit_mac.rs`); checked only where the
    /// server key is (`Store::check_audit_chain`), else `None`.
    pub forged: Option<String>,
}

/// A row of the audit log.
#[derive(sqlx::FromRow)]
struct Entry {
    id: i64,
    chain_pos: Option<i64>,
    created_ms: i64,
    kind: String,
    data_json: String,
    prev_hash: Option<String>,
    hash: Option<String>,
}

/// Verifies the chain from its first entry.
pub(super) async fn check(db: &Db) -> Result<AuditCheck, AppError> {
    let rows: Vec<Entry> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, chain_pos, created_ms, kind, data_json, prev_hash, hash FROM audit_log
         ORDER BY chain_pos IS NULL, chain_pos, id",
    )
    .fetch_all(pool)
    .await.db()?);
    let mut head = Head::genesis();
    let mut first_broken = None;
    let mut unsealed = 0;
    for e in &rows {
        let (Some(pos), Some(prev_hash), Some(hash)) = (e.chain_pos, &e.prev_hash, &e.hash) else {
            unsealed += 1;
            continue;
        };
        if first_broken.is_some() {
            continue;
        }
        let expected = head.seal_raw(e.created_ms, &e.kind, &e.data_json);
        if pos != expected.chain_pos || *prev_hash != expected.prev_hash || *hash != expected.hash {
            first_broken = Some(e.id);
        }
        head = Head { chain_pos: pos, hash: hash.clone() };
    }
    Ok(AuditCheck { entries: rows.len() as u64, unsealed, first_broken, forged: None })
}
