//! The server key ring in the database (docs/keys.md): table `server_keys`
//! keeps each key's id and fingerprint, never a key, and which one is
//! current for new emissions; `emissions.key_id` the key each emission was
//! made with.
//!
//! - At start ([`check_ring`], under PostgreSQL's start-up lock, so one
//!   process at a time): every key this process holds is checked against
//!   the fingerprint the database keeps for its id (another key under a
//!   known id is refused), keys the database does not know are recorded,
//!   a database without a current key (a new one) makes the highest id
//!   current, and the process is refused when it lacks the current key or
//!   the key of an emission that still has unfinished tickets (unsold,
//!   printed, sold and not opened, or in play): at start, naming the
//!   emission, the key id and its fingerprint, not at the first purchase.
//! - Which key is current is the database's, changed by a command
//!   ([`make_current`], `as-capone keys use ID`), never by a process's
//!   configuration: the processes sharing one PostgreSQL database then
//!   cannot disagree about it, and an emission reads it inside its own
//!   transaction under the emission lock that the command takes too.

use super::clock::now_ms;
use super::db::{Db, on_db};
use super::offline::{offline_db, server_lock};
use crate::config::is_postgres_url;
use crate::keys::{KeyId, Keyring};
use crate::store::error::DbResult;
use anyhow::Context;
use domain::error::AppError;

/// One key as the database knows it (`as-capone keys list`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RingKey {
    pub key_id: i64,
    pub fingerprint: String,
    pub created_ms: i64,
    /// New emissions are made with it.
    pub current: bool,
    /// When it last became current.
    pub current_from_ms: Option<i64>,
    /// When it stopped being current.
    pub retired_ms: Option<i64>,
    /// The emissions made with it: number, and tickets not finished.
    pub emissions: Vec<(i64, i64)>,
}

/// PostgreSQL advisory lock key of emission writing (as `emissions.rs`).
const EMISSION_LOCK: i64 = 0x4153_4345_4d49;

/// Tickets of emission `$1` not finished: unsold or printed while its sale
/// is open (and their block not withdrawn after a restore), or sold and not finished (a paper ticket not opened yet, an
/// operator-mode round held, a game in play).
const UNFINISHED: &str = "SELECT COUNT(*) FROM tickets t JOIN blocks b ON b.id = t.block_id
 JOIN emissions e ON e.id = b.emission_id LEFT JOIN ticket_games g ON g.ticket_id = t.id
 WHERE b.emission_id = $1 AND b.published_ms IS NOT NULL
   AND ((t.status IN ('unsold', 'printed') AND e.sale_end_ms IS NULL AND b.withdrawn_ms IS NULL)
     OR (t.status IN ('sold', 'paid') AND (g.ticket_id IS NULL OR g.phase <> 'finished')))";

type KeyRow = (i64, String, i64, i64, Option<i64>, Option<i64>);
const KEYS: &str =
    "SELECT key_id, fingerprint, created_ms, is_current, current_from_ms, retired_ms FROM server_keys ORDER BY key_id";

async fn key_rows(db: &Db) -> Result<Vec<KeyRow>, sqlx::Error> {
    Ok(on_db!(db, pool => sqlx::query_as(KEYS).fetch_all(pool).await?))
}

async fn unfinished(db: &Db, emission: i64) -> Result<i64, sqlx::Error> {
    Ok(on_db!(db, pool => sqlx::query_scalar(UNFINISHED).bind(emission).fetch_one(pool).await?))
}

/// The first 16 hex digits of a fingerprint, for messages.
fn short(fingerprint: &str) -> &str {
    &fingerprint[..fingerprint.len().min(16)]
}

/// Checks this process's ring against the database's at start (see the
/// module doc); a line for the log.
pub(super) async fn check_ring(db: &Db, keys: &Keyring) -> anyhow::Result<String> {
    let rows = key_rows(db).await.context("reading the server key ring")?;
    for (id, key) in keys.keys() {
        let fingerprint = key.fingerprint();
        if let Some(other) = rows.iter().find(|r| r.1 == fingerprint && r.0 != i64::from(id)) {
            anyhow::bail!(
                "the key file of key {id} holds the database's key {} (fingerprint {}…): a key has one id; name \
                 its file {}.key",
                other.0,
                short(&fingerprint),
                other.0
            );
        }
        match rows.iter().find(|r| r.0 == i64::from(id)) {
            Some(row) if row.1 != fingerprint => anyhow::bail!(
                "the key file of key {id} holds a key of fingerprint {}…, but the database's key {id} has fingerprint \
                 {}…: with another key no committed server seed and no play code can be found again; give the \
                 original key file (docs/keys.md)",
                short(&fingerprint),
                short(&row.1)
            ),
            Some(_) => {}
            None => {
                on_db!(db, pool => {
                    sqlx::query("INSERT INTO server_keys (key_id, fingerprint, created_ms) VALUES ($1, $2, $3)")
                        .bind(i64::from(id))
                        .bind(&fingerprint)
                        .bind(now_ms())
                        .execute(pool)
                        .await
                        .context("recording a server key")?;
                });
                tracing::info!(key_id = id, fingerprint = %short(&fingerprint), "recorded a new server key in the ring");
            }
        }
    }
    if !rows.iter().any(|r| r.3 == 1) {
        let highest = keys.keys().map(|(id, _)| id).max().context("an empty key ring")?;
        on_db!(db, pool => {
            sqlx::query("UPDATE server_keys SET is_current = 1, current_from_ms = $2 WHERE key_id = $1")
                .bind(i64::from(highest))
                .bind(now_ms())
                .execute(pool)
                .await
                .context("making the first server key current")?;
        });
    }
    let rows = key_rows(db).await.context("reading the server key ring")?;
    let held = |id: i64| KeyId::try_from(id).ok().and_then(|id| keys.get(id)).is_some();
    let current = rows.iter().find(|r| r.3 == 1).context("the key ring has no current key")?;
    anyhow::ensure!(
        held(current.0),
        "the database's current server key is key {} (fingerprint {}…), which this process does not hold: every \
         process needs the current key's file (KEY_DIR/{}.key, docs/keys.md)",
        current.0,
        short(&current.1),
        current.0
    );
    let mut missing = Vec::new();
    let emissions: Vec<(i64, Option<i64>)> =
        on_db!(db, pool => sqlx::query_as("SELECT id, key_id FROM emissions ORDER BY id").fetch_all(pool).await?);
    for (emission, key_id) in emissions {
        let key_id = key_id.with_context(|| format!("emission {emission} records no server key"))?;
        if held(key_id) {
            continue;
        }
        let left = unfinished(db, emission).await?;
        if left > 0 {
            let fingerprint = rows.iter().find(|r| r.0 == key_id).map_or("unknown", |r| short(&r.1));
            missing.push(format!(
                "emission {emission} has {left} unfinished tickets and needs server key {key_id} (fingerprint \
                 {fingerprint}…)"
            ));
        }
    }
    anyhow::ensure!(
        missing.is_empty(),
        "{}: this process does not hold that key; give its file (KEY_DIR/ID.key, docs/keys.md says what to do \
         when a key is lost)",
        missing.join("; ")
    );
    let ids: Vec<String> = keys.keys().map(|(id, _)| id.to_string()).collect();
    Ok(format!("key ring: keys {} held, key {} current", ids.join(", "), current.0))
}

/// The database's current key: its id and fingerprint.
pub(super) async fn current_row(db: &Db) -> Result<(i64, String), AppError> {
    let row: Option<(i64, String)> = on_db!(db, pool => sqlx::query_as(
        "SELECT key_id, fingerprint FROM server_keys WHERE is_current = 1",
    )
    .fetch_optional(pool)
    .await.db()?);
    row.ok_or_else(|| AppError::internal("the key ring has no current key"))
}

/// The key new emissions are made with: the database's current key, which
/// this process must hold.
pub(super) async fn current_key(db: &Db, keys: &Keyring) -> Result<i64, AppError> {
    let (id, fingerprint) = current_row(db).await?;
    keys.key(id).map_err(|e| {
        AppError::Unavailable(format!(
            "new emissions use the current key {id} (fingerprint {}…): {e}",
            short(&fingerprint)
        ))
    })?;
    Ok(id)
}

/// The ring as the database `url` knows it (`as-capone keys list`), read
/// without a server.
pub async fn ring_from(url: &str) -> anyhow::Result<Vec<RingKey>> {
    let db = offline_db(url, true).await?;
    let read = async {
        let rows =
            key_rows(&db).await.context("reading table server_keys (has a server of this version run on it?)")?;
        let emissions: Vec<(i64, i64)> =
            on_db!(&db, pool => sqlx::query_as("SELECT id, key_id FROM emissions ORDER BY id").fetch_all(pool).await?);
        let mut out = Vec::new();
        for (key_id, fingerprint, created_ms, current, current_from_ms, retired_ms) in rows {
            let mut used = Vec::new();
            for (emission, _) in emissions.iter().filter(|e| e.1 == key_id) {
                used.push((*emission, unfinished(&db, *emission).await?));
            }
            out.push(RingKey {
                key_id,
                fingerprint,
                created_ms,
                current: current == 1,
                current_from_ms,
                retired_ms,
                emissions: used,
            });
        }
        anyhow::Ok(out)
    };
    let out = read.await;
    on_db!(&db, pool => pool.close().await);
    out
}

/// Makes key `id` of `keys` (read from a key directory) the current key
/// of the database `url`: recorded if the database does not know it yet
/// (refused if its fingerprint is not the one recorded for `id`), and the
/// former current key retired, in one transaction. On SQLite the server
/// must be stopped (its lock file is taken); on PostgreSQL it waits for an
/// emission being written and takes effect for the next one. A line saying
/// what was done.
pub async fn make_current(url: &str, keys: &Keyring, id: KeyId) -> anyhow::Result<String> {
    let key = keys.get(id).with_context(|| format!("no key file {id}.key in the key directory"))?;
    let fingerprint = key.fingerprint();
    let _lock = server_lock(url)?;
    let db = offline_db(url, false).await?;
    let now = now_ms();
    let done = on_db!(&db, pool => {
        let mut tx = pool.begin().await?;
        if is_postgres_url(url) {
            sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(EMISSION_LOCK).execute(&mut *tx).await?;
        }
        let rows: Vec<KeyRow> = sqlx::query_as(KEYS)
            .fetch_all(&mut *tx)
            .await
            .context("reading table server_keys (start a server of this version on the database once first)")?;
        let result = match (rows.iter().find(|r| r.0 == i64::from(id)), rows.iter().find(|r| r.1 == fingerprint)) {
            (Some(row), _) if row.1 != fingerprint => Err(anyhow::anyhow!(
                "the key file {id}.key holds a key of fingerprint {}…, but the database's key {id} has fingerprint {}…: \
                 refused",
                short(&fingerprint),
                short(&row.1)
            )),
            (None, Some(other)) => Err(anyhow::anyhow!(
                "the key file {id}.key holds the database's key {} (fingerprint {}…): refused",
                other.0,
                short(&fingerprint)
            )),
            (Some(row), _) if row.3 == 1 => Ok(format!("key {id} (fingerprint {}…) is already current", short(&fingerprint))),
            (found, _) => {
                if found.is_none() {
                    sqlx::query("INSERT INTO server_keys (key_id, fingerprint, created_ms) VALUES ($1, $2, $3)")
                        .bind(i64::from(id))
                        .bind(&fingerprint)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                }
                sqlx::query("UPDATE server_keys SET is_current = 0, retired_ms = $1 WHERE is_current = 1")
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(
                    "UPDATE server_keys SET is_current = 1, current_from_ms = $1, retired_ms = NULL WHERE key_id = $2",
                )
                .bind(now)
                .bind(i64::from(id))
                .execute(&mut *tx)
                .await?;
                Ok(format!(
                    "key {id} (fingerprint {}…) is now current: new emissions are made with it; every earlier emission \
                     keeps its own key",
                    short(&fingerprint)
                ))
            }
        };
        if result.is_ok() {
            tx.commit().await?;
        }
        result
    });
    on_db!(&db, pool => pool.close().await);
    done
}
