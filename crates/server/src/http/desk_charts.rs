//! The desk's charts besides a block's risk (drawn by
//! `web/desk-charts.js` as inline SVG, docs/operating.md "The desk page"), each
//! from an endpoint of its own, operator only (none: 401; a player's
//! token: 403; a shop's or any other: 401):
//!
//! - `GET /api/admin/emissions/{id}/sales`: tickets sold per block and
//!   time bucket;
//! - `GET /api/admin/emissions/{id}/prizes`: the prizes won by the
//!   emission's finished games in order of finishing, with the table's
//!   exact mean and variance of one ticket's prize;
//! - `GET /api/admin/shops`: the paper channel per shop.

use super::answer::HttpError;
use super::extract::{Operator, PathParam, path_number};
use super::state::AppState;
use crate::store::now_ms;
use axum::Json;
use axum::extract::State;
use domain::error::AppError;
use serde::Serialize;
use utoipa::ToSchema;

/// About this many buckets of time in a chart of sales.
const SALES_BUCKETS: i64 = 50;

/// `GET /api/admin/emissions/{id}/sales`: an emission's sales over time.
#[derive(Debug, Serialize, ToSchema)]
pub struct SalesChart {
    pub emission: u32,
    /// `online` or `paper`: the channel all its tickets are sold on.
    pub channel: domain::api::Channel,
    pub price_cents: i64,
    /// The first and last sale (unix ms); `null` before any sale.
    pub first_sale_ms: Option<i64>,
    pub last_sale_ms: Option<i64>,
    /// Bucket `k` holds the sales from `from_ms + k × bucket_ms` (included)
    /// to `from_ms + (k + 1) × bucket_ms`: a round width (1 s to 4 weeks)
    /// that cuts the sales into at most about 50 buckets.
    pub from_ms: i64,
    pub bucket_ms: i64,
    /// How many buckets each block's `sold` holds (0 before any sale).
    pub buckets: usize,
    /// Each block of the emission, in order.
    pub blocks: Vec<BlockSales>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BlockSales {
    pub block: u32,
    /// Tickets of the block sold, in all.
    pub total: i64,
    /// Tickets of the block sold in each bucket (not cumulative).
    pub sold: Vec<i64>,
}

/// An emission's tickets sold per block and bucket of time, from its first
/// sale to its last (operator).
#[utoipa::path(get, path = "/api/admin/emissions/{id}/sales", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number")),
    responses((status = 200, description = "the chart's data", body = SalesChart),
              (status = 401, body = domain::error::ErrorBody), (status = 403, body = domain::error::ErrorBody),
              (status = 404, body = domain::error::ErrorBody)))]
pub async fn sales(
    State(state): State<AppState>,
    _: Operator,
    PathParam(id): PathParam<String>,
) -> Result<Json<SalesChart>, HttpError> {
    let emission = path_number(&id, "emission")?;
    let basics = state
        .store
        .emission_basics(emission)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("no emission {emission}")))?;
    let (rows, from_ms, bucket_ms) = state.store.sales_chart(emission, SALES_BUCKETS).await?;
    let buckets = match rows.span {
        Some((_, last)) => usize::try_from((last - from_ms) / bucket_ms + 1)
            .map_err(|_| AppError::internal("sales before the first bucket"))?,
        None => 0,
    };
    let number = |v: i64| u32::try_from(v).map_err(|_| AppError::internal(format!("block number {v} out of range")));
    let mut blocks = rows
        .blocks
        .iter()
        .map(|&b| Ok(BlockSales { block: number(b)?, total: 0, sold: vec![0; buckets] }))
        .collect::<Result<Vec<_>, HttpError>>()?;
    for (block, k, count) in rows.counts {
        let b = blocks
            .iter_mut()
            .find(|s| i64::from(s.block) == block)
            .ok_or_else(|| AppError::internal(format!("sales of an unknown block {block}")))?;
        let slot = usize::try_from(k)
            .ok()
            .and_then(|k| b.sold.get_mut(k))
            .ok_or_else(|| AppError::internal(format!("a sale outside the chart's buckets ({k})")))?;
        *slot += count;
        b.total += count;
    }
    Ok(Json(SalesChart {
        emission,
        channel: domain::api::Channel::parse(&basics.channel)
            .ok_or_else(|| AppError::internal(format!("emission {emission}: unknown channel")))?,
        price_cents: basics.price_cents,
        first_sale_ms: rows.span.map(|s| s.0),
        last_sale_ms: rows.span.map(|s| s.1),
        from_ms,
        bucket_ms,
        buckets,
        blocks,
    }))
}

/// `GET /api/admin/emissions/{id}/prizes`: prizes won against the table's
/// exact expectation as games finish.
#[derive(Debug, Serialize, ToSchema)]
pub struct PrizesChart {
    pub emission: u32,
    /// Games of the emission played to the end, and the prizes they won.
    pub finished: i64,
    pub prizes_won_cents: i64,
    /// The table's exact expected prize of one ticket, in cents, and the
    /// variance of one ticket's prize, in cents squared: fractions `"p/q"`
    /// (`math::Payout`), with their floating-point values for drawing.
    pub mean_cents: String,
    pub variance_cents2: String,
    pub mean_cents_approx: f64,
    pub variance_cents2_approx: f64,
    /// The band drawn is `n × mean ± z × √(n × variance)` for `n` finished
    /// tickets: `z` standard deviations of the sum of `n` independent
    /// tickets' prizes.
    pub z: f64,
    /// The running sums in order of finishing: every finished game when
    /// there are at most 200, else the sums at the end of each of 200 equal
    /// spans of finishing time (each point exact; the last one is
    /// (`finished`, `prizes_won_cents`)).
    pub points: Vec<PrizePoint>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PrizePoint {
    /// Games finished so far.
    pub finished: i64,
    /// The prizes they won, in cents.
    pub prizes_won_cents: i64,
}

/// The band's width, in standard deviations.
const Z: f64 = 3.0;

/// A table's exact mean and variance of one ticket's prize, computed once
/// per table digest by this process (`math::Payout::compute`, which also
/// computes a block's risk: a tenth of a second of CPU).
type Moments = (num_rational::BigRational, num_rational::BigRational);
static MOMENTS: std::sync::Mutex<Vec<(String, std::sync::Arc<Moments>)>> = std::sync::Mutex::new(Vec::new());

fn moments(table: &math::PrizeTable) -> std::sync::Arc<Moments> {
    let digest = table.digest();
    if let Some((_, m)) = MOMENTS.lock().expect("moments").iter().find(|(d, _)| *d == digest) {
        return m.clone();
    }
    let payout = math::Payout::compute(table, &math::Odds::exact());
    let m = std::sync::Arc::new((payout.expected_payout_cents, payout.variance_cents2));
    let mut all = MOMENTS.lock().expect("moments");
    if all.len() >= 64 {
        all.remove(0);
    }
    all.push((digest, m.clone()));
    m
}

/// The prizes won by an emission's finished games in order of finishing,
/// and the table's exact mean and variance of one ticket's prize (operator).
#[utoipa::path(get, path = "/api/admin/emissions/{id}/prizes", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number")),
    responses((status = 200, description = "the chart's data", body = PrizesChart),
              (status = 401, body = domain::error::ErrorBody), (status = 403, body = domain::error::ErrorBody),
              (status = 404, body = domain::error::ErrorBody)))]
pub async fn prizes(
    State(state): State<AppState>,
    _: Operator,
    PathParam(id): PathParam<String>,
) -> Result<Json<PrizesChart>, HttpError> {
    let emission = path_number(&id, "emission")?;
    let table = state
        .store
        .emission_table(emission)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("no emission {emission}")))?;
    let rows = state.store.prize_rows(emission).await?;
    let m = tokio::task::spawn_blocking(move || moments(&table))
        .await
        .map_err(|e| AppError::internal(format!("a table's moments: {e}")))?;
    let (mean, variance) = &*m;
    Ok(Json(PrizesChart {
        emission,
        finished: rows.finished,
        prizes_won_cents: rows.prizes_won_cents,
        mean_cents: math::fraction::to_string(mean),
        variance_cents2: math::fraction::to_string(variance),
        mean_cents_approx: math::fraction::approx(mean),
        variance_cents2_approx: math::fraction::approx(variance),
        z: Z,
        points: rows
            .points
            .into_iter()
            .map(|(finished, prizes_won_cents)| PrizePoint { finished, prizes_won_cents })
            .collect(),
    }))
}

/// `GET /api/admin/shops`: the paper channel per shop.
#[derive(Debug, Serialize, ToSchema)]
pub struct ShopsChart {
    /// When the owed prizes were reckoned (unix ms): a claim whose
    /// deadline has passed is no longer owed.
    pub at_ms: i64,
    /// Each shop: the configured ones and any other a ticket names, by name.
    pub shops: Vec<ShopFigures>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ShopFigures {
    pub shop: String,
    /// Paper tickets the shop sold.
    pub sold: i64,
    /// Of them, opened by their play code (a game exists).
    pub redeemed: i64,
    /// Tickets the shop paid (whichever shop sold them), and their prizes.
    pub paid: i64,
    pub paid_cents: i64,
    /// Tickets the shop sold that won and are not paid, their claim
    /// deadline not passed, and their prizes.
    pub owed: i64,
    pub owed_cents: i64,
}

/// Every shop's paper tickets: sold, redeemed, paid and owed (operator).
#[utoipa::path(get, path = "/api/admin/shops", tag = "operator", security(("bearer" = [])),
    responses((status = 200, description = "the chart's data", body = ShopsChart),
              (status = 401, body = domain::error::ErrorBody), (status = 403, body = domain::error::ErrorBody)))]
pub async fn shops(State(state): State<AppState>, _: Operator) -> Result<Json<ShopsChart>, HttpError> {
    let at_ms = now_ms();
    let rows = state.store.shop_rows(at_ms).await?;
    Ok(Json(ShopsChart {
        at_ms,
        shops: rows
            .into_iter()
            .map(|r| ShopFigures {
                shop: r.shop,
                sold: r.sold,
                redeemed: r.redeemed,
                paid: r.paid,
                paid_cents: r.paid_cents,
                owed: r.owed,
                owed_cents: r.owed_cents,
            })
            .collect(),
    }))
}
