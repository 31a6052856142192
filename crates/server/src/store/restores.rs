//! A database that was restored to an earlier point knows it, and never
//! sells a ticket whose seed may have been revealed after that point
//! (docs/backups.md, "After a restore").
//!
//! Why: every ticket's server seed is fixed when its block is emitted, and
//! revealed when its game ends. A restored database has forgotten the sales
//! and games after its point, so the tickets those sales took are unsold
//! again: sold a second time, they would be played with a seed that the
//! first buyer (or anyone reading the public record) already knows, and the
//! new buyer could choose a client seed offline. Which unsold tickets were
//! sold after the point cannot be read from the restored database, so every
//! online block on sale at the point is withdrawn whole.
//!
//! - [`mark`] (`as-capone restore`, from a backup file or `--recovered-by`
//!   after a point-in-time recovery or a promoted standby) writes a row of
//!   `restores`: the point (the newest event the database holds) and where
//!   the database came from.
//! - [`Store::settle_restores`], at every server start before anything is
//!   served, settles each row not settled yet, in one unit: every online
//!   block published, not withdrawn, with an unsold ticket gets
//!   `withdrawn_ms` (the sale queries read only the blocks on sale,
//!   `reads::blocks_on_sale`), and an audit entry `blocks_withdrawn` lists
//!   them with their unsold (void) tickets. Then a new emission of the same
//!   table, with a new secret salt, replaces each emission's withdrawn
//!   blocks one for one, and the row records it. A block's sold tickets stay
//!   what they are (their games, prizes and records); a new block's odds are
//!   its table's, as every block's.
//! - Paper blocks are not withdrawn: their tickets are in holders' hands.

use super::clock::now_ms;
use super::db::{Db, on_db};
// Settling a restore takes the emissions' lock: it emits.
use super::emissions::EMISSION_LOCK;
use super::offline::{offline_db, server_lock};
use super::shell::Store;
use crate::store::error::DbResult;
use domain::api::Channel;
use domain::error::AppError;
use domain::{AuditRecord, Changes, Effect, RestoreWrite};
use math::PrizeTable;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A restore just marked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    pub id: i64,
    /// The newest event the restored database holds (unix ms).
    pub point_ms: i64,
    /// Online blocks on sale at that point: what the next start withdraws.
    pub blocks_on_sale: i64,
}

/// The newest event a database holds: its audit entries, actions, movements
/// of money, sales and payments.
pub(super) const POINT: &str = "SELECT CAST(COALESCE(MAX(m), 0) AS BIGINT) FROM (
    SELECT MAX(created_ms) AS m FROM audit_log
    UNION ALL SELECT MAX(created_ms) FROM actions
    UNION ALL SELECT MAX(created_ms) FROM movements
    UNION ALL SELECT MAX(sold_ms) FROM tickets
    UNION ALL SELECT MAX(paid_ms) FROM tickets) AS newest";

/// The online blocks on sale, with their emission, number and unsold
/// tickets: what a restore withdraws.
const ON_SALE: &str = concat!(
    "SELECT b.id, b.emission_id, b.number, b.root,
            (SELECT COUNT(*) FROM tickets t WHERE t.block_id = b.id AND t.status = 'unsold') AS unsold
       FROM blocks b JOIN emissions e ON e.id = b.emission_id
      WHERE e.channel = 'online' AND b.id IN (",
    super::reads::blocks_on_sale!(),
    ") AND EXISTS (SELECT 1 FROM tickets t WHERE t.block_id = b.id AND t.status = 'unsold')
      ORDER BY b.id"
);

/// Marks the database `url` restored from `source` (a backup file, or how it
/// was recovered), migrating it first as a server would: its next start
/// withdraws the blocks on sale. On SQLite, refused while a server serves
/// the file.
pub async fn mark(url: &str, source: &str) -> anyhow::Result<Marked> {
    let _lock = server_lock(url)?;
    let db = offline_db(url, false).await?;
    let marked = mark_in(&db, source).await;
    on_db!(&db, pool => pool.close().await);
    marked
}

async fn mark_in(db: &Db, source: &str) -> anyhow::Result<Marked> {
    match db {
        Db::Sqlite(pool) => super::schema::migrate_sqlite(&mut *pool.acquire().await?).await?,
        Db::Postgres(pool) => super::schema::migrate_postgres(&mut *pool.acquire().await?).await?,
    }
    let point_ms: i64 = on_db!(db, pool => sqlx::query_scalar(POINT).fetch_one(pool).await?);
    let blocks_on_sale = on_db!(db, pool => sqlx::query(ON_SALE).fetch_all(pool).await?.len()) as i64;
    let id: i64 = on_db!(db, pool => sqlx::query_scalar(
        "INSERT INTO restores (point_ms, marked_ms, source) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(point_ms)
    .bind(now_ms())
    .bind(source)
    .fetch_one(pool)
    .await?);
    Ok(Marked { id, point_ms, blocks_on_sale })
}

/// A block withdrawn, as the audit entry and the `restores` row list it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct Withdrawn {
    emission: i64,
    block: i64,
    root: String,
    /// Its unsold tickets, void: never sold.
    unsold: i64,
}

/// A new emission replacing an emission's withdrawn blocks.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
struct Replacement {
    emission: u32,
    blocks: u32,
    replaces: i64,
}

impl Store {
    /// Settles every restore not settled yet (see the module doc), before
    /// the server serves; a line for the start log when there was one.
    pub(super) async fn settle_restores(&self) -> anyhow::Result<Option<String>> {
        let pending: Vec<(i64, i64, String, Option<i64>)> = on_db!(&self.db, pool => sqlx::query_as(
            "SELECT id, point_ms, source, settled_ms FROM restores WHERE replaced_ms IS NULL ORDER BY id",
        )
        .fetch_all(pool)
        .await?);
        if !pending.is_empty() {
            // A restored database is believed only once its tickets are those published.
            let rows = super::ticket_rows::check(&self.db).await?;
            let forged = super::audit_mac::check(&self.db, &self.keys).await?;
            if let Some(why) = rows.first_mismatch.or(forged) {
                anyhow::bail!(
                    "this restored database is not what as-capone wrote: {why}; it is not served \
                     (docs/backups.md, \"A backup is not believed\")"
                );
            }
        }
        let mut lines = Vec::new();
        for (id, point_ms, source, settled) in pending {
            let withdrawn = match settled {
                None => self.withdraw(id, point_ms, &source).await?,
                // Settled by a start that stopped before the replacement.
                Some(_) => self.withdrawn_of(id).await?,
            };
            let replaced = self.replace(id, &withdrawn).await?;
            let line = format!(
                "restore {id} (from {source}, point {}): {} blocks withdrawn ({} unsold tickets void), replaced by \
                 emission(s) {}",
                format::calendar::iso8601(point_ms),
                withdrawn.len(),
                withdrawn.iter().map(|w| w.unsold).sum::<i64>(),
                replaced.iter().map(|r| r.emission.to_string()).collect::<Vec<_>>().join(", ")
            );
            tracing::warn!("{line}");
            lines.push(line);
        }
        Ok((!lines.is_empty()).then(|| lines.join("; ")))
    }

    /// Withdraws the online blocks on sale, in one unit with the audit entry
    /// and the restore's row; returns them.
    async fn withdraw(&self, id: i64, point_ms: i64, source: &str) -> Result<Vec<Withdrawn>, AppError> {
        let mut units = self.writer.units().await?;
        units.lock(EMISSION_LOCK).await?;
        let rows: Vec<(i64, i64, i64, String, i64)> =
            on_db!(&self.db, pool => sqlx::query_as(ON_SALE).fetch_all(pool).await.db()?);
        let withdrawn: Vec<Withdrawn> = rows
            .iter()
            .map(|(_, emission, block, root, unsold)| Withdrawn {
                emission: *emission,
                block: *block,
                root: root.clone(),
                unsold: *unsold,
            })
            .collect();
        let at_ms = now_ms();
        let withdrawn_json = serde_json::to_string(&withdrawn).expect("blocks serialize");
        let audit = AuditRecord {
            created_ms: at_ms,
            kind: "blocks_withdrawn",
            data_json: json!({
                "restore": id, "point_ms": point_ms, "source": source,
                "reason": "restored to an earlier point: their unsold tickets may have been sold and revealed after it; \
                           they are void and never sold",
                "blocks": withdrawn,
            })
            .to_string(),
        };
        let write =
            RestoreWrite::Settle { restore: id, blocks: rows.iter().map(|r| r.0).collect(), at_ms, withdrawn_json };
        units.put(Changes { restore: Some(write), audit: Some(audit), ..Changes::none(Effect::Emission) }).await?;
        units.commit().await?;
        Ok(withdrawn)
    }

    async fn withdrawn_of(&self, id: i64) -> anyhow::Result<Vec<Withdrawn>> {
        let json: Option<String> = on_db!(&self.db, pool => sqlx::query_scalar(
            "SELECT withdrawn_json FROM restores WHERE id = $1",
        )
        .bind(id)
        .fetch_one(pool)
        .await?);
        Ok(serde_json::from_str(json.as_deref().unwrap_or("[]"))?)
    }

    /// A new emission of each withdrawn emission's table, with as many
    /// blocks as were withdrawn from it; then the restore's row records them.
    async fn replace(&self, id: i64, withdrawn: &[Withdrawn]) -> anyhow::Result<Vec<Replacement>> {
        let mut per_emission: std::collections::BTreeMap<i64, u32> = std::collections::BTreeMap::new();
        for w in withdrawn {
            *per_emission.entry(w.emission).or_default() += 1;
        }
        let mut replaced = Vec::new();
        for (emission, blocks) in per_emission {
            let toml: String = on_db!(&self.db, pool => sqlx::query_scalar(
                "SELECT table_toml FROM emissions WHERE id = $1",
            )
            .bind(emission)
            .fetch_one(pool)
            .await?);
            let table =
                PrizeTable::parse_toml(&toml).map_err(|e| anyhow::anyhow!("emission {emission}'s table: {e}"))?;
            // An emission is made in calls of at most MAX_BLOCKS_PER_CALL blocks.
            let most = super::emissions::MAX_BLOCKS_PER_CALL;
            let new = self.create_emission(table, Channel::Online, blocks.min(most), None).await?;
            let mut left = blocks - blocks.min(most);
            while left > 0 {
                self.add_blocks(new.emission, left.min(most)).await?;
                left -= left.min(most);
            }
            replaced.push(Replacement { emission: new.emission, blocks, replaces: emission });
        }
        let mut units = self.writer.units().await?;
        let write = RestoreWrite::Replaced {
            restore: id,
            at_ms: now_ms(),
            replaced_json: serde_json::to_string(&replaced).expect("emissions serialize"),
        };
        units.put(Changes { restore: Some(write), ..Changes::none(Effect::Emission) }).await?;
        units.commit().await?;
        Ok(replaced)
    }
}
