//! What the operator's desk reads of the system's health
//! (`GET /api/admin/health`, `web/desk.js`) that no other request reads:
//! the players' responsible-play settings in aggregate, never a name, and
//! the key ring's current key. Each is one statement over a table the
//! desk's screen must answer from within 200 ms (BENCHMARKS.md "The desk with 20 emissions of 20 blocks"): counts over
//! `player_limits` (one row per player who set a limit) and `players`.

use super::backend;
use super::db::{Db, on_db};
use super::keyring::current_row;
use super::shell::Store;
use crate::store::error::DbResult;
use domain::error::AppError;
use serde::Serialize;

/// The players' responsible-play settings, counted: never who.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct PlayersSummary {
    /// Players the database holds (own accounts and the operator's players seen).
    pub registered: i64,
    /// Players with a daily ticket limit or a weekly spending limit of their own.
    pub with_limits: i64,
    /// Players excluded at this moment (a self-exclusion not over yet).
    pub self_excluded: i64,
}

/// The key ring's current key: new emissions are made with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct CurrentKey {
    pub key_id: i64,
    /// `hex(HMAC-SHA256(key, "as-capone key check v1"))` (docs/keys.md): names the key, reveals nothing of it.
    pub fingerprint: String,
    /// This process holds the key (else it cannot make a new emission).
    pub held: bool,
}

impl Store {
    /// The players' settings in aggregate, at `now` (unix ms).
    pub async fn players_summary(&self, now: i64) -> Result<PlayersSummary, AppError> {
        let sql = "SELECT (SELECT CAST(COUNT(*) AS BIGINT) FROM players),
                          (SELECT CAST(COUNT(*) AS BIGINT) FROM player_limits
                            WHERE tickets_per_day IS NOT NULL OR spend_per_week_cents IS NOT NULL),
                          (SELECT CAST(COUNT(*) AS BIGINT) FROM player_limits WHERE excluded_until_ms > $1)";
        let (registered, with_limits, self_excluded): (i64, i64, i64) = on_db!(&self.db, pool => sqlx::query_as(sql)
            .bind(now)
            .fetch_one(pool)
            .await
            .db()?);
        Ok(PlayersSummary { registered, with_limits, self_excluded })
    }

    /// The key ring's current key, and whether this process holds it.
    pub async fn current_key(&self) -> Result<CurrentKey, AppError> {
        let (key_id, fingerprint) = current_row(&self.db).await?;
        let held = self.keys.key(key_id).is_ok();
        Ok(CurrentKey { key_id, fingerprint, held })
    }

    /// The prize table of emission `emission` (`None`: no such emission).
    pub async fn emission_table(&self, emission: u32) -> Result<Option<math::PrizeTable>, AppError> {
        let toml: Option<String> = on_db!(&self.db, pool => sqlx::query_scalar(
            "SELECT table_toml FROM emissions WHERE id = $1",
        )
        .bind(i64::from(emission))
        .fetch_optional(pool)
        .await
        .db()?);
        toml.map(|t| {
            math::PrizeTable::parse_toml(&t)
                .map_err(|e| AppError::internal(format!("emission {emission}'s stored table does not read: {e}")))
        })
        .transpose()
    }

    /// Emission `emission`'s table digest and its table's TOML text as
    /// stored (`None`: no such emission), for the certification report.
    pub async fn emission_table_text(&self, emission: u32) -> Result<Option<(String, String)>, AppError> {
        Ok(on_db!(&self.db, pool => sqlx::query_as(
            "SELECT table_digest, table_toml FROM emissions WHERE id = $1",
        )
        .bind(i64::from(emission))
        .fetch_optional(pool)
        .await
        .db()?))
    }

    /// Each block of emission `emission` as the risk chart draws it:
    /// `(block, printed, finished, prizes won)`, from the figures kept in
    /// `block_figures` (migration 11): a few rows per block, no ticket.
    pub async fn blocks_running(&self, emission: u32) -> Result<Vec<(i64, i64, i64, i64)>, AppError> {
        Ok(on_db!(&self.db, pool => sqlx::query_as(
            "SELECT b.number, b.size,
                    CAST(COALESCE(SUM(f.won + f.lost), 0) AS BIGINT),
                    CAST(COALESCE(SUM(f.prizes_won_cents), 0) AS BIGINT)
             FROM blocks b LEFT JOIN block_figures f ON f.block_id = b.id
             WHERE b.emission_id = $1
             GROUP BY b.id, b.number, b.size ORDER BY b.number",
        )
        .bind(i64::from(emission))
        .fetch_all(pool)
        .await
        .db()?))
    }

    /// Folds the block figures of ended PostgreSQL connections into each
    /// block's row of shard 0 (the server does it every 5 minutes:
    /// `store/postgres/writer.rs` `fold_block_figures`); the rows folded. SQLite
    /// keeps one row per block: 0.
    pub async fn fold_block_figures(&self) -> Result<u64, AppError> {
        Ok(backend::fold_block_figures(&self.db).await?)
    }

    /// `sqlite` or `postgres`.
    pub fn backend(&self) -> &'static str {
        match self.db {
            Db::Sqlite(_) => "sqlite",
            Db::Postgres(_) => "postgres",
        }
    }
}
