//! The free demo games' rows (`demo_games`, [`domain::demo`]). A demo
//! game touches no other table: no ticket, no ledger, no audit entry. Each
//! write is one statement, so it needs no transaction and no lock on
//! either backend: an action is written only while the row still has the
//! `seq` it was decided on (two processes deciding the same action at once:
//! one writes, the other decides again and replays). On SQLite these rare
//! statements are not the writer's: they wait their turn on the file's
//! lock (busy timeout) like the desk's.

use super::db::on_db;
use super::shell::Store;
use crate::store::error::DbResult;
use domain::demo::DemoRow;
use domain::error::AppError;
use engine::PrizeSchedule;

type Columns = (String, String, i64, i64, i64, i64, String, Option<String>, String, i64, Option<i64>);

fn row_of(c: Columns) -> Result<DemoRow, AppError> {
    let (id, token_hash, p5, p6, p7, p8, seed, client_seed, actions_json, created_ms, finished_ms) = c;
    let server_seed = record::parse_seed(&seed).ok_or_else(|| AppError::internal(format!("demo game {id}: seed")))?;
    let actions: Vec<String> =
        serde_json::from_str(&actions_json).map_err(|e| AppError::internal(format!("demo game {id}: actions: {e}")))?;
    Ok(DemoRow {
        id,
        token_hash,
        prizes: PrizeSchedule::new([p5, p6, p7, p8].map(|p| p as u64)),
        server_seed,
        client_seed,
        actions,
        created_ms,
        finished_ms,
    })
}

fn actions_json(row: &DemoRow) -> String {
    serde_json::to_string(&row.actions).expect("strings serialize")
}

impl Store {
    /// Writes a new demo game.
    pub async fn insert_demo(&self, row: &DemoRow) -> Result<(), AppError> {
        let [p5, p6, p7, p8] = row.prizes.cents().map(|p| p as i64);
        let sql = "INSERT INTO demo_games (id, token_hash, prize5_cents, prize6_cents, prize7_cents, prize8_cents, \
                   server_seed, client_seed, actions_json, created_ms, finished_ms, seq) \
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
        on_db!(&self.db, pool => sqlx::query(sql)
            .bind(&row.id)
            .bind(&row.token_hash)
            .bind(p5)
            .bind(p6)
            .bind(p7)
            .bind(p8)
            .bind(hex::encode(row.server_seed))
            .bind(row.client_seed.as_deref())
            .bind(actions_json(row))
            .bind(row.created_ms)
            .bind(row.finished_ms)
            .bind(row.actions.len() as i64)
            .execute(pool)
            .await
            .db()?
            .rows_affected());
        Ok(())
    }

    /// The demo game of the token whose SHA-256 is `token_hash`, if it began after `since_ms`.
    pub async fn demo_of_token(&self, token_hash: &str, since_ms: i64) -> Result<Option<DemoRow>, AppError> {
        let sql = "SELECT id, token_hash, prize5_cents, prize6_cents, prize7_cents, prize8_cents, server_seed, \
                   client_seed, actions_json, created_ms, finished_ms FROM demo_games \
                   WHERE token_hash = $1 AND created_ms >= $2";
        let found: Option<Columns> = on_db!(&self.db, pool => sqlx::query_as(sql)
            .bind(token_hash)
            .bind(since_ms)
            .fetch_optional(pool)
            .await
            .db()?);
        found.map(row_of).transpose()
    }

    /// Writes `row`, one action further, if the stored game is still at
    /// `from_seq`; false when another request moved it first.
    pub async fn save_demo_action(&self, row: &DemoRow, from_seq: u64) -> Result<bool, AppError> {
        let sql = "UPDATE demo_games SET client_seed = $1, actions_json = $2, seq = $3, finished_ms = $4 \
                   WHERE id = $5 AND seq = $6";
        let done = on_db!(&self.db, pool => sqlx::query(sql)
            .bind(row.client_seed.as_deref())
            .bind(actions_json(row))
            .bind(row.actions.len() as i64)
            .bind(row.finished_ms)
            .bind(&row.id)
            .bind(from_seq as i64)
            .execute(pool)
            .await
            .db()?
            .rows_affected());
        Ok(done == 1)
    }

    /// Removes the demo games that began before `before_ms`; how many.
    pub async fn purge_demos(&self, before_ms: i64) -> Result<u64, AppError> {
        Ok(on_db!(&self.db, pool => sqlx::query("DELETE FROM demo_games WHERE created_ms < $1")
            .bind(before_ms)
            .execute(pool)
            .await
            .db()?
            .rows_affected()))
    }
}
