//! Application start-up's first emission, written once for both backends.
//! It runs while the process holds the start-up lock (PostgreSQL: an
//! advisory lock, so processes starting together emit once; SQLite: one
//! process per file), before the server takes requests.

use super::{Db, now_ms, on_db};
use crate::config::Config;
use crate::supply;
use anyhow::Context;
use math::PrizeTable;
use std::time::Instant;

/// The emission in use: the first one of the database, created with
/// `initial_blocks` blocks of `table` when there is none. Returns a line
/// for the start log.
pub(super) async fn ensure_emission(db: &Db, config: &Config, table: &PrizeTable) -> anyhow::Result<String> {
    let existing: Option<(i64, String, String)> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, code, table_digest FROM emissions ORDER BY id LIMIT 1",
    )
    .fetch_optional(pool)
    .await?);
    if let Some((id, code, digest)) = existing {
        if digest != table.digest() {
            tracing::warn!(
                emission = id,
                "the database's emission uses the prize table {digest}; the configured table {} is not used",
                table.digest()
            );
        }
        let (blocks, unsold): (i64, i64) = on_db!(db, pool => sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM blocks WHERE emission_id = $1),
                    (SELECT COUNT(*) FROM tickets t JOIN blocks b ON b.id = t.block_id
                      WHERE b.emission_id = $1 AND t.status = 'unsold')",
        )
        .bind(id)
        .fetch_one(pool)
        .await?);
        return Ok(format!(
            "emission {id} ({code}, table {}…, {blocks} blocks, {unsold} tickets unsold)",
            &digest[..12]
        ));
    }
    anyhow::ensure!(config.initial_blocks >= 1, "initial_blocks must be at least 1 on first start");
    let started = Instant::now();
    let seed = crate::fairness::random_bytes::<32>();
    let now = now_ms();
    on_db!(db, pool => {
        let mut tx = pool.begin().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO emissions (code, table_toml, table_digest, price_cents, block_size, secret_seed, created_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(&table.code)
        .bind(table.to_toml())
        .bind(table.digest())
        .bind(table.price_cents as i64)
        .bind(i64::from(table.block_size))
        .bind(hex::encode(seed))
        .bind(now)
        .fetch_one(&mut *tx)
        .await?;
        for number in 1..=config.initial_blocks {
            let emission = u32::try_from(id).context("emission id")?;
            let block = supply::generate_block(table, emission, number, &seed)?;
            let block_id: i64 = sqlx::query_scalar(
                "INSERT INTO blocks (emission_id, number, size, commitment, created_ms) VALUES ($1, $2, $3, $4, $5) RETURNING id",
            )
            .bind(id)
            .bind(i64::from(number))
            .bind(block.tickets.len() as i64)
            .bind(&block.commitment)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?;
            for chunk in block.tickets.chunks(2000) {
                let mut qb = sqlx::QueryBuilder::new(
                    "INSERT INTO tickets (block_id, position, serial, play_code_hash, schedule_row, prize_5, prize_6, prize_7, prize_8) ",
                );
                qb.push_values(chunk, |mut b, t| {
                    let [p5, p6, p7, p8] = t.prizes.cents();
                    b.push_bind(block_id)
                        .push_bind(i64::from(t.position))
                        .push_bind(t.serial.clone())
                        .push_bind(t.play_code_hash.clone())
                        .push_bind(i64::from(t.row))
                        .push_bind(p5 as i64)
                        .push_bind(p6 as i64)
                        .push_bind(p7 as i64)
                        .push_bind(p8 as i64);
                });
                qb.build().execute(&mut *tx).await?;
            }
        }
        tx.commit().await?;
        tracing::info!(
            emission = id,
            blocks = config.initial_blocks,
            tickets = u64::from(config.initial_blocks) * u64::from(table.block_size),
            seconds = started.elapsed().as_secs_f64(),
            "first start: emitted the first blocks"
        );
        Ok(format!(
            "emission {id} ({}, table {}…, {} new blocks of {} tickets)",
            table.code,
            &table.digest()[..12],
            config.initial_blocks,
            table.block_size
        ))
    })
}
