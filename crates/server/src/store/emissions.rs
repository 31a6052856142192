//! Emissions in the database, written once for both backends: creating an
//! emission or adding blocks to one (the operator's desk and the first
//! start), what is public of them (`GET /api/emissions`), the operator's
//! figures; a paper block's print file and its downloads are in
//! [`print`]. (The key ring's checks are in `keyring.rs`.)
//!
//! **Writing a block.** Its tickets are generated from the emission's seed
//! (derived from the server key, [`crate::keys`]), written unpublished, then
//! published: `published_ms` is set, with an audit entry holding the
//! roots, in one unit. The sale queue only reads published blocks, so a
//! block is public before any of its tickets can be sold, and is never sold
//! half-written.
//! - PostgreSQL: the whole emission is one transaction (any number of
//!   processes may sell meanwhile: they never see it until it commits),
//!   under an advisory lock so that two desks number emissions in turn.
//! - SQLite: the writer task owns the file, so the rows go through it as
//!   units of 2 000 tickets, each in the queue beside the players'
//!   requests: a block never stops the game for more than one such unit.
//!   A crash half-way leaves an unpublished block, removed at the next
//!   start ([`remove_unpublished`]).

use super::backend::Units;
use super::clock::now_ms;
use super::db::{Db, on_db};
use super::keyring::current_key;
use super::offline::offline_db;
use super::shell::Store;
use crate::keys::{Keyring, parse_salt};
use crate::store::error::DbResult;
use domain::api::Channel;
use domain::error::{AppError, StoreError};
use domain::supply::{self, TicketSpec};
use domain::{AuditRecord, BlockRow, Changes, Effect, EmissionRow, EmissionRows};
use math::PrizeTable;
use num_bigint::BigInt;
use num_rational::BigRational;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::AssertSqlSafe;
use std::sync::Arc;

mod print;
mod stored;
use print::PrintDownloads;
use stored::{corrupt, number, parse_channel};

/// Tickets per unit of work when a block is written.
const TICKETS_PER_UNIT: usize = 2_000;
/// The most blocks one call makes (a block of 300 000 tickets takes a few seconds).
pub const MAX_BLOCKS_PER_CALL: u32 = 20;
/// Serials have three digits for the emission.
const MAX_EMISSIONS: i64 = 999;
/// PostgreSQL advisory lock key of emission writing.
pub(super) const EMISSION_LOCK: i64 = 0x4153_4345_4d49; // "ASCEMI"

/// A block just published.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct PublishedBlock {
    pub block: u32,
    pub root: String,
}

/// `POST /api/admin/emissions` answer.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct EmissionCreated {
    pub emission: u32,
    pub channel: Channel,
    pub blocks: Vec<PublishedBlock>,
}

/// One emission as `GET /api/emissions` shows it: everything public.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PublicEmission {
    pub emission: u32,
    pub code: String,
    pub channel: Channel,
    pub price_cents: i64,
    pub block_size: i64,
    pub table_digest: String,
    /// The prize table, as TOML.
    pub table: String,
    pub blocks: Vec<PublicBlock>,
}

/// A published block.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PublicBlock {
    pub block: u32,
    pub size: i64,
    pub root: String,
    /// When it was published (unix milliseconds); never changes after.
    pub published_ms: i64,
    /// The same, as UTC ISO 8601.
    pub published_at: String,
}

/// The operator's figures of one block or of a whole emission.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Figures {
    pub printed: i64,
    pub sold: i64,
    /// Sold and opened (online: bought; paper: its play code redeemed), not
    /// finished. A paper ticket sold and not opened yet is in `sold` only.
    pub in_play: i64,
    pub finished: i64,
    pub won: i64,
    pub lost: i64,
    pub sales_cents: i64,
    /// Prizes of finished tickets.
    pub prizes_won_cents: i64,
    /// Prizes credited to players' wallets (online) or paid by a retailer (paper).
    pub prizes_paid_cents: i64,
    /// Won but not paid yet.
    pub prizes_owed_cents: i64,
}

impl Figures {
    /// Adds another block's figures (an emission's totals).
    pub fn add(&mut self, o: &Figures) {
        self.printed += o.printed;
        self.sold += o.sold;
        self.in_play += o.in_play;
        self.finished += o.finished;
        self.won += o.won;
        self.lost += o.lost;
        self.sales_cents += o.sales_cents;
        self.prizes_won_cents += o.prizes_won_cents;
        self.prizes_paid_cents += o.prizes_paid_cents;
        self.prizes_owed_cents += o.prizes_owed_cents;
    }
}

/// The return to player of the finished tickets, beside the table's exact one.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Rtp {
    /// Prizes won / (price x finished tickets), exact (`"p/q"`), `null` before any finished ticket.
    pub so_far: Option<String>,
    pub so_far_decimal: Option<String>,
    /// The table's exact return to player over a block (math crate).
    pub expected: String,
    pub expected_decimal: String,
}

/// An emission's figures, per block and in total.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct EmissionReport {
    pub emission: u32,
    pub code: String,
    pub channel: Channel,
    pub table_digest: String,
    pub price_cents: i64,
    pub block_size: i64,
    pub created_ms: i64,
    /// The end of sale, once the operator closed it.
    pub sale_end_ms: Option<i64>,
    /// Paper prizes are paid until then: the last instant of the day
    /// `claim_days` after the closing notice's date, or of the next working day.
    pub claim_end_ms: Option<i64>,
    /// The reference of the official notice that announced it (art. 1), if given.
    pub notice_ref: Option<String>,
    /// The date of its closing notice (`YYYY-MM-DD`), once its sale is closed.
    pub closing_notice_date: Option<String>,
    /// The reference of its closing notice, if given.
    pub closing_notice_ref: Option<String>,
    pub totals: Figures,
    pub rtp: Rtp,
    pub blocks: Vec<BlockReport>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct BlockReport {
    pub block: u32,
    pub root: String,
    /// `null` while unpublished.
    pub published_ms: Option<i64>,
    #[serde(flatten)]
    pub figures: Figures,
    /// A paper block's print file downloads, each in the audit log
    /// (`null` for an online block, which has no print file).
    pub print_downloads: Option<PrintDownloads>,
}

/// The first emission of a fresh database (first start); a line for the log.
pub(super) async fn ensure_first(store: &Store, table: &PrizeTable, blocks: u32) -> anyhow::Result<String> {
    remove_unpublished(&store.db).await?;
    let existing: Option<(i64, String, String)> = on_db!(&store.db, pool => sqlx::query_as(
        "SELECT id, code, table_digest FROM emissions ORDER BY id LIMIT 1",
    )
    .fetch_optional(pool)
    .await?);
    if let Some((id, code, digest)) = existing {
        if digest != table.digest() {
            tracing::warn!(
                emission = id,
                "the database's first emission uses the prize table {digest}; the configured table {} is for new \
                 emissions of the operator's desk",
                table.digest()
            );
        }
        let (blocks, unsold): (i64, i64) = on_db!(&store.db, pool => sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM blocks),
                    (SELECT COUNT(*) FROM tickets t JOIN blocks b ON b.id = t.block_id
                      WHERE t.status = 'unsold' AND b.published_ms IS NOT NULL AND b.withdrawn_ms IS NULL)",
        )
        .fetch_one(pool)
        .await?);
        return Ok(format!(
            "first emission {id} ({code}, table {}…); {blocks} blocks, {unsold} tickets for sale",
            &digest[..12]
        ));
    }
    anyhow::ensure!(blocks >= 1, "initial_blocks must be at least 1 on first start");
    let started = std::time::Instant::now();
    let created = store.create_emission(table.clone(), Channel::Online, blocks, None).await?;
    tracing::info!(
        emission = created.emission,
        blocks,
        tickets = u64::from(blocks) * u64::from(table.block_size),
        seconds = started.elapsed().as_secs_f64(),
        "first start: emitted and published the first blocks"
    );
    Ok(format!(
        "emission {} ({}, table {}…, {blocks} new blocks of {} tickets)",
        created.emission,
        table.code,
        &table.digest()[..12],
        table.block_size
    ))
}

/// Removes the rows of blocks whose writing was interrupted (never
/// published, so never seen by anyone), and emissions left with no block.
async fn remove_unpublished(db: &Db) -> Result<(), StoreError> {
    let removed: u64 = on_db!(db, pool => {
        let mut tx = pool.begin().await.db()?;
        let n = sqlx::query("DELETE FROM tickets WHERE block_id IN (SELECT id FROM blocks WHERE published_ms IS NULL)")
            .execute(&mut *tx)
            .await.db()?
            .rows_affected();
        sqlx::query("DELETE FROM blocks WHERE published_ms IS NULL").execute(&mut *tx).await.db()?;
        sqlx::query("DELETE FROM emissions WHERE id NOT IN (SELECT emission_id FROM blocks)").execute(&mut *tx).await.db()?;
        tx.commit().await.db()?;
        n
    });
    if removed > 0 {
        tracing::warn!(tickets = removed, "removed the rows of blocks whose writing was interrupted");
    }
    Ok(())
}

/// What an emission is, to make its blocks.
struct BlockPlan {
    id: i64,
    table: PrizeTable,
    channel: Channel,
    salt: [u8; 32],
    /// The server key it is made with (its id in the ring).
    key_id: i64,
    /// Numbers of the new blocks, and their row ids.
    blocks: Vec<(u32, i64)>,
    /// The emission's row, when it is new.
    new_row: Option<EmissionRow>,
}

/// The next ids: emission, block.
const NEXT_IDS: &str =
    "SELECT (SELECT COALESCE(MAX(id), 0) + 1 FROM emissions), (SELECT COALESCE(MAX(id), 0) + 1 FROM blocks)";

impl Store {
    /// A new emission of `table` with `blocks` blocks, written and
    /// published; `notice_ref`: the reference of the official notice that
    /// announces it (art. 1), if the operator has it.
    pub async fn create_emission(
        &self,
        table: PrizeTable,
        channel: Channel,
        blocks: u32,
        notice_ref: Option<String>,
    ) -> Result<EmissionCreated, AppError> {
        check_count(blocks)?;
        self.emit(None, Some((table, channel, notice_ref)), blocks).await
    }

    /// `blocks` more blocks of emission `emission`, written and published.
    pub async fn add_blocks(&self, emission: u32, blocks: u32) -> Result<EmissionCreated, AppError> {
        check_count(blocks)?;
        self.emit(Some(i64::from(emission)), None, blocks).await
    }

    async fn emit(
        &self,
        existing: Option<i64>,
        new: Option<(PrizeTable, Channel, Option<String>)>,
        blocks: u32,
    ) -> Result<EmissionCreated, AppError> {
        // One emission at a time in this process (and, on PostgreSQL, in all).
        let _turn = self.emitting.lock().await;
        let mut units = self.writer.units().await?;
        units.lock(EMISSION_LOCK).await?;
        // On SQLite this task is the only one writing emissions to the file: the ids hold.
        let ids = units.read_pair(&self.db, NEXT_IDS).await?;
        let plan = plan(&self.db, &self.keys, existing, new, blocks, ids).await?;
        let created = write_blocks(&plan, &self.keys, &mut units).await?;
        units.commit().await?;
        Ok(created)
    }

    /// Every emission and its published blocks (`GET /api/emissions`).
    pub async fn public_emissions(&self) -> Result<Vec<PublicEmission>, AppError> {
        type Row = (i64, String, String, i64, i64, String, String);
        type BlockRow = (i64, i64, i64, String, i64);
        let (rows, blocks): (Vec<Row>, Vec<BlockRow>) = on_db!(&self.db, pool => {
            let rows = sqlx::query_as(
                "SELECT id, code, channel, price_cents, block_size, table_digest, table_toml FROM emissions ORDER BY id",
            )
            .fetch_all(pool)
            .await.db()?;
            let blocks = sqlx::query_as(
                "SELECT emission_id, number, size, root, published_ms FROM blocks
                 WHERE published_ms IS NOT NULL ORDER BY emission_id, number",
            )
            .fetch_all(pool)
            .await.db()?;
            (rows, blocks)
        });
        rows.into_iter()
            .map(|(id, code, channel, price_cents, block_size, table_digest, table)| {
                Ok(PublicEmission {
                    emission: number(id)?,
                    code,
                    channel: parse_channel(&channel)?,
                    price_cents,
                    block_size,
                    table_digest,
                    table,
                    blocks: blocks
                        .iter()
                        .filter(|b| b.0 == id)
                        .map(|b| {
                            Ok(PublicBlock {
                                block: number(b.1)?,
                                size: b.2,
                                root: b.3.clone(),
                                published_ms: b.4,
                                published_at: format::iso8601(b.4),
                            })
                        })
                        .collect::<Result<_, AppError>>()?,
                })
            })
            .collect::<Result<Vec<_>, AppError>>()
            .map(|mut v: Vec<PublicEmission>| {
                v.retain(|e| !e.blocks.is_empty());
                v
            })
    }

    /// The operator's figures of every emission, or of one (404 when unknown).
    pub async fn emission_reports(&self, only: Option<u32>) -> Result<Vec<EmissionReport>, AppError> {
        reports(&self.db, only).await
    }
}

fn check_count(blocks: u32) -> Result<(), AppError> {
    if (1..=MAX_BLOCKS_PER_CALL).contains(&blocks) {
        Ok(())
    } else {
        Err(AppError::BadRequest(format!("blocks must be 1 to {MAX_BLOCKS_PER_CALL} per call")))
    }
}

/// Numbers the new emission or blocks.
async fn plan(
    db: &Db,
    keys: &Keyring,
    existing: Option<i64>,
    new: Option<(PrizeTable, Channel, Option<String>)>,
    blocks: u32,
    (next_emission, next_block): (i64, i64),
) -> Result<BlockPlan, AppError> {
    let now = now_ms();
    let (id, table, channel, salt, key_id, first, new_row) = match (existing, new) {
        (Some(id), _) => {
            let row: Option<(String, String, String, i64, i64, Option<i64>)> = on_db!(db, pool => sqlx::query_as(
                "SELECT e.table_toml, e.channel, e.seed_salt, e.key_id, (SELECT COALESCE(MAX(number), 0) FROM blocks b WHERE b.emission_id = e.id),
                        e.sale_end_ms
                 FROM emissions e WHERE e.id = $1",
            )
            .bind(id)
            .fetch_optional(pool)
            .await.db()?);
            let (toml, channel, salt, key_id, last, sale_end_ms) =
                row.ok_or_else(|| AppError::NotFound(format!("no emission {id}")))?;
            if let Some(ended) = sale_end_ms {
                return Err(AppError::Conflict(format!(
                    "the sale of emission {id} was closed on {}: no block is added to a closed emission; \
                     create a new emission to sell more tickets",
                    format::french_date(ended)
                )));
            }
            let table = PrizeTable::parse_toml(&toml).map_err(|e| corrupt(format!("emission {id}'s table: {e}")))?;
            let salt = parse_salt(&salt).ok_or_else(|| corrupt(format!("emission {id}'s salt")))?;
            (id, table, parse_channel(&channel)?, salt, key_id, last + 1, None)
        }
        (None, Some((table, channel, notice_ref))) => {
            if next_emission > MAX_EMISSIONS {
                return Err(AppError::Conflict(format!(
                    "the database holds {MAX_EMISSIONS} emissions, the most a serial can number; add blocks to one"
                )));
            }
            let salt = crate::fairness::random_bytes::<32>();
            let key_id = current_key(db, keys).await?;
            let row = EmissionRow {
                id: next_emission,
                code: table.code.clone(),
                channel,
                table_toml: table.to_toml(),
                table_digest: table.digest(),
                price_cents: table.price_cents as i64,
                block_size: i64::from(table.block_size),
                seed_salt: hex::encode(salt),
                key_id,
                notice_ref,
                created_ms: now,
            };
            (next_emission, table, channel, salt, key_id, 1, Some(row))
        }
        (None, None) => return Err(AppError::internal("an emission to create or to add to")),
    };
    let last = first + i64::from(blocks) - 1;
    if last > i64::from(emission::MAX_BLOCK) {
        return Err(AppError::Conflict(format!(
            "emission {id} would pass block {}, the most a serial can number",
            emission::MAX_BLOCK
        )));
    }
    let blocks = (first..=last).zip(next_block..).map(|(n, row_id)| (n as u32, row_id)).collect();
    Ok(BlockPlan { id, table, channel, salt, key_id, blocks, new_row })
}

/// Generates and writes every block of `plan` through `sink` (one
/// PostgreSQL transaction, or the SQLite writer's queue), then publishes
/// them all in one last unit with their audit entry.
async fn write_blocks(
    plan: &BlockPlan,
    keys: &Arc<Keyring>,
    sink: &mut Units<'_>,
) -> Result<EmissionCreated, AppError> {
    let emission = u32::try_from(plan.id).map_err(|_| AppError::internal("emission number"))?;
    let status = domain::TicketStatus::first(plan.channel);
    let now = now_ms();
    let mut published = Vec::new();
    let mut new_row = plan.new_row.clone();
    for &(number, block_id) in &plan.blocks {
        let seed = keys
            .emission_seed(plan.key_id, &plan.salt)
            .map_err(|e| AppError::Unavailable(format!("emission {emission} cannot get blocks here: {e}")))?;
        let (table, fixed) = (plan.table.clone(), keys.fixed());
        let block = tokio::task::spawn_blocking(move || supply::generate_block(&table, emission, number, seed, fixed))
            .await
            .map_err(|e| AppError::internal(format!("block generation: {e}")))?
            .map_err(|e| AppError::BadRequest(e.to_string()))?;
        let root = hex::encode(block.root);
        let mut block_row = Some(BlockRow {
            id: block_id,
            emission_id: plan.id,
            number: i64::from(number),
            size: block.tickets.len() as i64,
            root: root.clone(),
            chunk_roots: supply::chunk_roots_hex(&block.chunk_roots),
            created_ms: now,
        });
        for chunk in block.tickets.chunks(TICKETS_PER_UNIT) {
            let tickets: Arc<[TicketSpec]> = chunk.to_vec().into();
            let rows = EmissionRows {
                emission: new_row.take(),
                block: block_row.take(),
                tickets,
                tickets_block: block_id,
                tickets_status: status,
                ..EmissionRows::default()
            };
            sink.put(Changes { emission: Some(rows), ..Changes::none(Effect::Emission) }).await?;
        }
        published.push(PublishedBlock { block: number, root });
    }
    let audit = AuditRecord {
        created_ms: now_ms(),
        kind: "blocks_published",
        data_json: json!({
            "emission": emission, "code": plan.table.code, "channel": plan.channel, "table_digest": plan.table.digest(),
            "blocks": published,
        })
        .to_string(),
    };
    let publish = EmissionRows {
        publish: plan.blocks.iter().map(|b| b.1).collect(),
        published_ms: audit.created_ms,
        tickets_status: status,
        ..EmissionRows::default()
    };
    sink.put(Changes { emission: Some(publish), audit: Some(audit), ..Changes::none(Effect::Emission) }).await?;
    tracing::info!(emission, channel = plan.channel.as_str(), blocks = ?published, "blocks published");
    Ok(EmissionCreated { emission, channel: plan.channel, blocks: published })
}

/// The operator's figures read straight from a database, without a
/// server (`as-capone report --db URL`): a read-only SQLite connection (the
/// file may be in use by its server), or a PostgreSQL pool of one.
pub async fn report_from(url: &str, only: Option<u32>) -> anyhow::Result<Vec<EmissionReport>> {
    use anyhow::Context;
    let db = offline_db(url, true).await?;
    let figures = reports(&db, only).await.map_err(|e| match &e {
        AppError::Storage(s) => anyhow::anyhow!("{}", domain::error::error_chain(s)),
        other => anyhow::anyhow!("{other}"),
    });
    on_db!(&db, pool => pool.close().await);
    figures.context("reading the emissions (is this an as-capone database?)")
}

/// Each block's figures as kept by migration 11's triggers
/// (`block_figures`, one row per block, per writing connection on
/// PostgreSQL): emission, number, root, published, printed (the block's
/// size), sold, in play, won, lost, prizes won, prizes paid. Followed by a
/// `WHERE` on `b` and [`KEPT_BLOCKS_GROUP`].
pub(super) const KEPT_BLOCKS: &str = "SELECT b.emission_id, b.number, b.root, b.published_ms, b.size,
        CAST(COALESCE(SUM(f.sold), 0) AS BIGINT), CAST(COALESCE(SUM(f.in_play), 0) AS BIGINT),
        CAST(COALESCE(SUM(f.won), 0) AS BIGINT), CAST(COALESCE(SUM(f.lost), 0) AS BIGINT),
        CAST(COALESCE(SUM(f.prizes_won_cents), 0) AS BIGINT), CAST(COALESCE(SUM(f.prizes_paid_cents), 0) AS BIGINT)
 FROM blocks b LEFT JOIN block_figures f ON f.block_id = b.id";
pub(super) const KEPT_BLOCKS_GROUP: &str =
    "GROUP BY b.id, b.emission_id, b.number, b.root, b.published_ms, b.size ORDER BY b.emission_id, b.number";

/// The figures of each block, as kept in `block_figures` (one row per
/// block, not one per ticket: the desk's list of 400 blocks reads 400
/// rows).
async fn reports(db: &Db, only: Option<u32>) -> Result<Vec<EmissionReport>, AppError> {
    type ERow = (
        i64,
        String,
        String,
        String,
        String,
        i64,
        i64,
        i64,
        Option<i64>,
        Option<i64>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let emissions: Vec<ERow> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, code, channel, table_digest, table_toml, price_cents, block_size, created_ms, sale_end_ms, claim_end_ms,
                notice_ref, closing_notice_date, closing_notice_ref
         FROM emissions
         WHERE ($1 < 0 OR id = $1) ORDER BY id",
    )
    .bind(only.map_or(-1, i64::from))
    .fetch_all(pool)
    .await.db()?);
    if let (Some(n), true) = (only, emissions.is_empty()) {
        return Err(AppError::NotFound(format!("no emission {n}")));
    }
    type BRow = (i64, i64, String, Option<i64>, i64, i64, i64, i64, i64, i64, i64);
    let sql = format!("{KEPT_BLOCKS} WHERE ($1 < 0 OR b.emission_id = $1) {KEPT_BLOCKS_GROUP}");
    let blocks: Vec<BRow> = on_db!(db, pool => sqlx::query_as(AssertSqlSafe(sql))
        .bind(only.map_or(-1, i64::from))
        .fetch_all(pool)
        .await.db()?);
    let mut downloads = if emissions.iter().any(|e| e.2 == Channel::Paper.as_str()) {
        print::downloads(db).await?
    } else {
        Default::default()
    };
    let mut out = Vec::new();
    for (
        id,
        code,
        channel,
        table_digest,
        toml,
        price_cents,
        block_size,
        created_ms,
        sale_end_ms,
        claim_end_ms,
        notice_ref,
        closing_notice_date,
        closing_notice_ref,
    ) in emissions
    {
        let table = PrizeTable::parse_toml(&toml).map_err(|e| corrupt(format!("emission {id}'s table: {e}")))?;
        let emission = number(id)?;
        let mut totals = Figures::default();
        let mut list = Vec::new();
        for b in blocks.iter().filter(|b| b.0 == id) {
            let (printed, sold, in_play, won, lost, prizes, paid) = (b.4, b.5, b.6, b.7, b.8, b.9, b.10);
            let figures = Figures {
                printed,
                sold,
                in_play,
                finished: won + lost,
                won,
                lost,
                sales_cents: sold * price_cents,
                prizes_won_cents: prizes,
                prizes_paid_cents: paid,
                prizes_owed_cents: prizes - paid,
            };
            totals.add(&figures);
            let block = number(b.1)?;
            let print_downloads =
                (channel == Channel::Paper.as_str()).then(|| downloads.remove(&(emission, block)).unwrap_or_default());
            list.push(BlockReport { block, root: b.2.clone(), published_ms: b.3, figures, print_downloads });
        }
        let rtp = rtp(&table, &totals);
        out.push(EmissionReport {
            emission,
            code,
            channel: parse_channel(&channel)?,
            table_digest,
            price_cents,
            block_size,
            created_ms,
            sale_end_ms,
            claim_end_ms,
            notice_ref,
            closing_notice_date,
            closing_notice_ref,
            totals,
            rtp,
            blocks: list,
        });
    }
    Ok(out)
}

/// The return to player so far and the table's exact one.
fn rtp(table: &PrizeTable, f: &Figures) -> Rtp {
    let expected = expected_rtp(table);
    let so_far = (f.finished > 0).then(|| {
        BigRational::new(BigInt::from(f.prizes_won_cents), BigInt::from(f.finished) * BigInt::from(table.price_cents))
    });
    Rtp {
        so_far_decimal: so_far.as_ref().map(decimal),
        so_far: so_far.as_ref().map(math::fraction::to_string),
        expected_decimal: decimal(&expected),
        expected: math::fraction::to_string(&expected),
    }
}

/// The table's exact return to player: [`math::Payout::table_rtp`], over
/// the game's exact odds (computed once).
fn expected_rtp(table: &PrizeTable) -> BigRational {
    static ODDS: std::sync::OnceLock<math::Odds> = std::sync::OnceLock::new();
    math::Payout::table_rtp(table, ODDS.get_or_init(math::Odds::exact))
}

/// Six decimals, for people.
fn decimal(r: &BigRational) -> String {
    format!("{:.6}", math::fraction::approx(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_rtp_is_the_math_crates() {
        let table = PrizeTable::example();
        let exact = math::Payout::compute(&table, &math::Odds::exact()).rtp;
        assert_eq!(expected_rtp(&table), exact);
    }
}
