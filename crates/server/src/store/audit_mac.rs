//! The audit log's entries sealed with the server key: every movement of
//! money is accounted for by an entry that a forger without the server key
//! can neither add nor change.
//!
//! The chain of `audit.rs` orders the entries and shows a changed one, but
//! its hashes take no key: whoever edits a copy of the database can add an
//! entry and hash again. So each entry is also written with `mac`:
//! HMAC-SHA256 under a server key of the ring (`key_id`, the highest) of
//! [`mac_input`]: the entry's time, kind and data, and, when the same
//! change moved money, the movement (`movement_id`): its id, reason,
//! ticket and ledger entries. [`check`] then holds, from where
//! `audit_keyed` says the keyed entries begin (migration 22): every entry's
//! `mac` is the server key's, and every movement of money is named by
//! exactly one such entry, with the same ledger entries. A balanced fake
//! movement, an entry added or changed, a movement's amount changed: each
//! is named. It takes the server key, so the server checks it (a start on
//! a database marked restored; `Store::check_audit_chain`).

use super::db::{Db, on_db};
use super::plan::EntryMac;
use crate::keys::Keyring;
use crate::store::error::DbResult;
use domain::error::AppError;
use domain::{AuditRecord, Movement};
use std::collections::HashMap;

/// A movement as the seal reads it: id, reason, ticket, and its ledger
/// entries `account:amount` in account order.
fn movement_text(id: &str, reason: &str, ticket: Option<i64>, entries: &mut [(i64, i64)]) -> String {
    entries.sort_unstable();
    let entries: Vec<String> = entries.iter().map(|(a, c)| format!("{a}:{c}")).collect();
    format!("{id}\n{reason}\n{}\n{}", ticket.map_or_else(|| "-".to_string(), |t| t.to_string()), entries.join(","))
}

/// What an entry's `mac` seals.
fn mac_input(created_ms: i64, kind: &str, data_json: &str, movement: &str) -> [Vec<u8>; 5] {
    [
        b"as-capone audit entry v1".to_vec(),
        created_ms.to_string().into_bytes(),
        kind.as_bytes().to_vec(),
        data_json.as_bytes().to_vec(),
        movement.as_bytes().to_vec(),
    ]
}

fn mac_of(keys: &Keyring, key_id: i64, input: &[Vec<u8>; 5]) -> Option<String> {
    let key = keys.get(u32::try_from(key_id).ok()?)?;
    let parts: Vec<&[u8]> = input.iter().flat_map(|p| [p.as_slice(), &[0u8][..]]).collect();
    Some(hex::encode(key.hmac(&parts)))
}

/// The keyed columns of `entry`, written with it (`movement`: the money
/// its change moves). `None` when the ring holds no key (it always does
/// once a server runs).
pub fn seal(keys: &Keyring, entry: &AuditRecord, movement: Option<&Movement>) -> Option<EntryMac> {
    let key_id = i64::from(keys.keys().map(|(id, _)| id).max()?);
    let text = movement
        .map_or_else(String::new, |m| movement_text(&m.id, m.reason.as_str(), m.ticket_id, &mut m.entries().to_vec()));
    let mac = mac_of(keys, key_id, &mac_input(entry.created_ms, entry.kind, &entry.data_json, &text))?;
    Some(EntryMac { key_id, mac, movement_id: movement.map(|m| m.id.clone()) })
}

/// Rewrites the chain's sealed head (`$1` position, `$2` hash, `$3` key,
/// `$4` MAC), in the transaction that seals up to it.
pub const HEAD_UPSERT: &str =
    "INSERT INTO audit_head_seal (one, chain_pos, hash, key_id, mac) VALUES (1, $1, $2, $3, $4)
 ON CONFLICT (one) DO UPDATE SET chain_pos = excluded.chain_pos, hash = excluded.hash, key_id = excluded.key_id,
   mac = excluded.mac";

fn head_input(chain_pos: i64, hash: &str) -> [Vec<u8>; 5] {
    mac_input(chain_pos, "as-capone audit head v1", hash, "")
}

/// The head's seal: `(key_id, mac)` of the chain's last sealed entry.
pub fn seal_head(keys: &Keyring, chain_pos: i64, hash: &str) -> Option<(i64, String)> {
    let key_id = i64::from(keys.keys().map(|(id, _)| id).max()?);
    Some((key_id, mac_of(keys, key_id, &head_input(chain_pos, hash))?))
}

/// The sealed head against the chain's last sealed entry: entries removed
/// (from its middle, the chain hashed again, or from its end) show here.
async fn check_head(db: &Db, keys: &Keyring, from_id: i64) -> Result<Option<String>, AppError> {
    let last: Option<(i64, String, i64)> = on_db!(db, pool => sqlx::query_as(
        "SELECT chain_pos, hash, id FROM audit_log WHERE chain_pos IS NOT NULL ORDER BY chain_pos DESC LIMIT 1",
    )
    .fetch_optional(pool)
    .await.db()?);
    let head: Option<(i64, String, i64, String)> = on_db!(db, pool => sqlx::query_as(
        "SELECT chain_pos, hash, key_id, mac FROM audit_head_seal WHERE one = 1",
    )
    .fetch_optional(pool)
    .await.db()?);
    Ok(match (last, head) {
        (None, None) => None,
        // Nothing sealed since the keyed entries began (an older database).
        (Some((_, _, id)), None) if id < from_id => None,
        (_, None) => Some("the audit chain has no head sealed with the server key".to_string()),
        (None, Some((pos, ..))) => Some(format!("the audit chain is empty, its sealed head is at entry {pos}")),
        (Some((pos, hash, _)), Some((head_pos, head_hash, key_id, mac))) => {
            let sealed = mac_of(keys, key_id, &head_input(head_pos, &head_hash)).is_some_and(|m| m == mac);
            if !sealed {
                Some(format!("the audit chain's head (entry {head_pos}) is not sealed with the server key"))
            } else if (pos, &hash) != (head_pos, &head_hash) {
                Some(format!(
                    "the audit chain ends at entry {pos}, its head sealed with the server key is entry {head_pos}: \
                     entries were removed or the chain hashed again outside as-capone"
                ))
            } else {
                None
            }
        }
    })
}

/// `(id, created_ms, kind, data_json, key_id, mac, movement_id)`.
type KeyedRow = (i64, i64, String, String, Option<i64>, Option<String>, Option<String>);

/// The first keyed entry whose seal is not the server key's, or the first
/// movement no keyed entry names (see the module doc); `None`: all hold.
pub async fn check(db: &Db, keys: &Keyring) -> Result<Option<String>, AppError> {
    let (from_id, movements_from_ms): (i64, i64) = on_db!(db, pool => sqlx::query_as(
        "SELECT from_id, movements_from_ms FROM audit_keyed WHERE one = 1",
    )
    .fetch_one(pool)
    .await.db()?);
    if let Some(found) = check_head(db, keys, from_id).await? {
        return Ok(Some(found));
    }
    let mut movements = movements_since(db, movements_from_ms).await?;
    let rows: Vec<KeyedRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, created_ms, kind, data_json, key_id, mac, movement_id FROM audit_log WHERE id >= $1 ORDER BY id",
    )
    .bind(from_id)
    .fetch_all(pool)
    .await.db()?);
    let mut named: HashMap<String, i64> = HashMap::new();
    for (id, created_ms, kind, data_json, key_id, mac, movement_id) in rows {
        let forged = || {
            format!("audit entry {id} ({kind}) is not sealed with the server key: written or changed outside as-capone")
        };
        let (Some(key_id), Some(mac)) = (key_id, mac) else { return Ok(Some(forged())) };
        let text = match &movement_id {
            None => String::new(),
            Some(m) => match movements.get(m) {
                Some(text) => text.clone(),
                None => {
                    return Ok(Some(format!(
                        "audit entry {id} ({kind}) names movement {m}, which is not in the ledger"
                    )));
                }
            },
        };
        match mac_of(keys, key_id, &mac_input(created_ms, &kind, &data_json, &text)) {
            None => {
                return Ok(Some(format!(
                    "audit entry {id} is sealed with key {key_id}, which this server's ring lacks"
                )));
            }
            Some(expected) if expected != mac => return Ok(Some(forged())),
            Some(_) => {}
        }
        if let Some(m) = movement_id
            && let Some(first) = named.insert(m.clone(), id)
        {
            return Ok(Some(format!("movement {m} is named by audit entries {first} and {id}")));
        }
    }
    movements.retain(|id, _| !named.contains_key(id));
    let mut unnamed: Vec<&String> = movements.keys().collect();
    unnamed.sort();
    Ok(unnamed.first().map(|m| {
        format!("movement {m} is named by no audit entry sealed with the server key: written outside as-capone")
    }))
}

/// Every movement since `from_ms`, as [`movement_text`] reads it.
async fn movements_since(db: &Db, from_ms: i64) -> Result<HashMap<String, String>, AppError> {
    type Row = (String, String, Option<i64>, i64, i64);
    let rows: Vec<Row> = on_db!(db, pool => sqlx::query_as(
        "SELECT m.id, m.reason, m.ticket_id, le.account_id, le.amount_cents
           FROM movements m JOIN ledger_entries le ON le.movement_id = m.id
          WHERE m.created_ms >= $1 ORDER BY m.id",
    )
    .bind(from_ms)
    .fetch_all(pool)
    .await.db()?);
    type Grouped = (String, Option<i64>, Vec<(i64, i64)>);
    let mut grouped: HashMap<String, Grouped> = HashMap::new();
    for (id, reason, ticket, account, amount) in rows {
        grouped.entry(id).or_insert_with(|| (reason, ticket, Vec::new())).2.push((account, amount));
    }
    Ok(grouped
        .into_iter()
        .map(|(id, (reason, ticket, mut entries))| {
            let text = movement_text(&id, &reason, ticket, &mut entries);
            (id, text)
        })
        .collect())
}
