//! What the desk's charts read (`http::desk_charts`,
//! `web/desk.js`): an emission's sales per block and time bucket, its
//! finished games' prizes in order of finishing, and the paper channel per
//! shop. The same SQL text runs on SQLite and PostgreSQL ([`on_db!`]); each
//! statement returns a few hundred rows at most, counted by the database:
//!
//! - an emission's sold tickets are read through `tickets_block_sold`
//!   (migration 10: block, sale time, of sold tickets only), one range of it
//!   per block, and its finished games from there by `ticket_games`' key;
//! - a shop's tickets through migration 8's `tickets_shop_sold` (the shop
//!   that sold them) and `tickets_shop_paid` (the shop that paid them).

use super::db::on_db;
use super::shell::Store;
use crate::store::error::DbResult;
use domain::error::AppError;

/// An emission's channel and price (`None`: no such emission).
pub(crate) struct EmissionBasics {
    pub channel: String,
    pub price_cents: i64,
}

/// Sold tickets counted per block and time bucket.
pub(crate) struct SalesRows {
    /// The emission's blocks, in order.
    pub blocks: Vec<i64>,
    /// The first and last sale (unix ms), `None` before any sale.
    pub span: Option<(i64, i64)>,
    /// `(block, bucket, tickets)`, bucket `k` starting at `from + k × width`.
    pub counts: Vec<(i64, i64, i64)>,
}

/// An emission's finished games, in order of finishing: their number and
/// prizes, each point `(finished so far, prizes won so far)`.
pub(crate) struct PrizeRows {
    pub finished: i64,
    pub prizes_won_cents: i64,
    /// Cumulative points, the last one `(finished, prizes_won_cents)`.
    pub points: Vec<(i64, i64)>,
}

/// One shop's paper tickets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ShopRow {
    pub shop: String,
    pub sold: i64,
    pub redeemed: i64,
    pub owed: i64,
    pub owed_cents: i64,
    pub paid: i64,
    pub paid_cents: i64,
}

/// Points of the prize chart at most.
pub(crate) const PRIZE_POINTS: i64 = 200;

/// The tickets of emission `$1` that were sold: the joins and condition
/// every query of an emission below starts from (`t.sold_ms IS NOT NULL`
/// names the partial index `tickets_block_sold`).
const SOLD_OF_EMISSION: &str = " FROM blocks b JOIN tickets t ON t.block_id = b.id
 WHERE b.emission_id = $1 AND t.sold_ms IS NOT NULL";

impl Store {
    /// The channel and price of emission `emission`.
    pub(crate) async fn emission_basics(&self, emission: u32) -> Result<Option<EmissionBasics>, AppError> {
        let row: Option<(String, i64)> = on_db!(&self.db, pool => sqlx::query_as(
            "SELECT channel, price_cents FROM emissions WHERE id = $1",
        )
        .bind(i64::from(emission))
        .fetch_optional(pool)
        .await.db()?);
        Ok(row.map(|(channel, price_cents)| EmissionBasics { channel, price_cents }))
    }

    /// The first and last sale of emission `emission`, and its blocks.
    pub(crate) async fn sales_span(&self, emission: u32) -> Result<(Vec<i64>, Option<(i64, i64)>), AppError> {
        let id = i64::from(emission);
        let blocks: Vec<i64> = on_db!(&self.db, pool => sqlx::query_scalar(
            "SELECT number FROM blocks WHERE emission_id = $1 ORDER BY number",
        )
        .bind(id)
        .fetch_all(pool)
        .await.db()?);
        let sql = format!("SELECT MIN(t.sold_ms), MAX(t.sold_ms){SOLD_OF_EMISSION}");
        let span: (Option<i64>, Option<i64>) =
            on_db!(&self.db, pool => sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_one(pool).await.db()?);
        Ok((blocks, span.0.zip(span.1)))
    }

    /// Emission `emission`'s sold tickets per block and bucket of `width`
    /// ms from `from` (unix ms; every sale at or after it), up to the sale
    /// at `last` (included): a sale made since the span was read is left
    /// for the next reading.
    pub(crate) async fn sales_rows(
        &self,
        emission: u32,
        from: i64,
        width: i64,
        last: i64,
    ) -> Result<Vec<(i64, i64, i64)>, AppError> {
        let sql = format!(
            "SELECT s.number, s.k, CAST(COUNT(*) AS BIGINT) FROM
               (SELECT b.number AS number, (t.sold_ms - $2) / $3 AS k{SOLD_OF_EMISSION} AND t.sold_ms <= $4) s
             GROUP BY s.number, s.k ORDER BY s.number, s.k"
        );
        Ok(on_db!(&self.db, pool => sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(i64::from(emission))
            .bind(from)
            .bind(width.max(1))
            .bind(last)
            .fetch_all(pool)
            .await.db()?))
    }

    /// Emission `emission`'s sold tickets per block and time bucket: about
    /// `buckets` buckets of a round width ([`bucket_width`]) from the
    /// first sale to the last.
    pub(crate) async fn sales_chart(&self, emission: u32, buckets: i64) -> Result<(SalesRows, i64, i64), AppError> {
        let (blocks, span) = self.sales_span(emission).await?;
        let Some((first, last)) = span else {
            return Ok((SalesRows { blocks, span: None, counts: Vec::new() }, 0, bucket_width(0, buckets)));
        };
        let width = bucket_width(last - first + 1, buckets);
        let from = first - first.rem_euclid(width);
        let counts = self.sales_rows(emission, from, width, last).await?;
        Ok((SalesRows { blocks, span, counts }, from, width))
    }

    /// Emission `emission`'s finished games in order of finishing: each
    /// one when there are at most [`PRIZE_POINTS`], else the running sums
    /// at the end of each of [`PRIZE_POINTS`] spans of finishing time
    /// (every point an exact running sum; the last one, all of them). The
    /// games read are those finished by the last finishing time first read
    /// (each block's span of finishing times is kept with its figures): one
    /// finished since is left for the next reading, and the figures given
    /// are the points' own.
    pub(crate) async fn prize_rows(&self, emission: u32) -> Result<PrizeRows, AppError> {
        let id = i64::from(emission);
        let finished_of = format!("{SOLD_OF_EMISSION} AND g.phase = 'finished'").replace(
            "JOIN tickets t ON t.block_id = b.id",
            "JOIN tickets t ON t.block_id = b.id JOIN ticket_games g ON g.ticket_id = t.id",
        );
        // How many, and a span of time that holds every finish: kept per
        // block (migrations 11 and 13), not read from the games.
        let (finished, first, last): (i64, Option<i64>, Option<i64>) = on_db!(&self.db, pool => sqlx::query_as(
            "SELECT CAST(COALESCE(SUM(f.won + f.lost), 0) AS BIGINT), MIN(f.first_finished_ms), MAX(f.last_finished_ms)
             FROM blocks b JOIN block_figures f ON f.block_id = b.id WHERE b.emission_id = $1",
        )
        .bind(id)
        .fetch_one(pool)
        .await.db()?);
        let mut points = Vec::new();
        let (mut n, mut sum) = (0i64, 0i64);
        let (Some(first), Some(last)) = (first, last) else {
            return Ok(PrizeRows { finished: 0, prizes_won_cents: 0, points });
        };
        if finished <= PRIZE_POINTS {
            let sql = format!(
                "SELECT g.prize_cents{finished_of} AND g.finished_ms <= $2 ORDER BY g.finished_ms, t.id LIMIT {PRIZE_POINTS}"
            );
            let prizes: Vec<Option<i64>> = on_db!(&self.db, pool => sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(id)
                .bind(last)
                .fetch_all(pool)
                .await.db()?);
            for p in prizes {
                n += 1;
                sum +=
                    p.ok_or_else(|| AppError::internal(format!("emission {emission}: a finished game has no prize")))?;
                points.push((n, sum));
            }
        } else {
            let width = (last - first) / PRIZE_POINTS + 1;
            let sql = format!(
                "SELECT s.k, CAST(COUNT(*) AS BIGINT), CAST(COALESCE(SUM(s.prize), 0) AS BIGINT) FROM
                   (SELECT (g.finished_ms - $2) / $3 AS k, g.prize_cents AS prize{finished_of} AND g.finished_ms <= $4) s
                 GROUP BY s.k ORDER BY s.k"
            );
            let spans: Vec<(i64, i64, i64)> = on_db!(&self.db, pool => sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(id)
                .bind(first)
                .bind(width)
                .bind(last)
                .fetch_all(pool)
                .await.db()?);
            for (_, count, prizes) in spans {
                n += count;
                sum += prizes;
                points.push((n, sum));
            }
        }
        Ok(PrizeRows { finished: n, prizes_won_cents: sum, points })
    }

    /// Every shop's paper tickets at `now` (unix ms): the configured shops
    /// and any other a ticket names, by name. Sold, redeemed and owed count
    /// the tickets a shop sold; paid, the ones it paid (a shop may pay
    /// another's ticket). Owed: won, not paid, and the claim deadline of
    /// its emission not passed (none yet: the sale is open). Read from the
    /// figures kept per shop and emission (`shop_figures`, migration 12),
    /// never from the tickets; [`RECOUNT_SHOPS`](super::ledger::RECOUNT_SHOPS) is their check.
    pub(crate) async fn shop_rows(&self, now: i64) -> Result<Vec<ShopRow>, AppError> {
        type Kept = (String, i64, i64, i64, i64, i64, i64);
        let kept: Vec<Kept> = on_db!(&self.db, pool => sqlx::query_as(
            "SELECT f.shop, CAST(SUM(f.sold) AS BIGINT), CAST(SUM(f.redeemed) AS BIGINT),
                    CAST(SUM(CASE WHEN e.claim_end_ms IS NULL OR e.claim_end_ms > $1 THEN f.won_unpaid ELSE 0 END) AS BIGINT),
                    CAST(SUM(CASE WHEN e.claim_end_ms IS NULL OR e.claim_end_ms > $1 THEN f.won_unpaid_cents ELSE 0 END)
                         AS BIGINT),
                    CAST(SUM(f.paid) AS BIGINT), CAST(SUM(f.paid_cents) AS BIGINT)
             FROM shop_figures f JOIN emissions e ON e.id = f.emission_id
             GROUP BY f.shop",
        )
        .bind(now)
        .fetch_all(pool)
        .await.db()?);
        let mut shops: std::collections::BTreeMap<String, ShopRow> = self
            .shops
            .read()
            .expect("shops")
            .keys()
            .map(|s| (s.clone(), ShopRow { shop: s.clone(), ..ShopRow::default() }))
            .collect();
        fn row<'a>(shops: &'a mut std::collections::BTreeMap<String, ShopRow>, shop: &str) -> &'a mut ShopRow {
            shops.entry(shop.to_string()).or_insert_with(|| ShopRow { shop: shop.to_string(), ..ShopRow::default() })
        }
        for (shop, sold, redeemed, owed, owed_cents, paid, paid_cents) in kept {
            let r = row(&mut shops, &shop);
            (r.sold, r.redeemed, r.owed, r.owed_cents, r.paid, r.paid_cents) =
                (sold, redeemed, owed, owed_cents, paid, paid_cents);
        }
        Ok(shops.into_values().collect())
    }
}

/// The bucket widths a chart of sales uses, in ms: round spans of time.
const WIDTHS: [i64; 17] = [
    1_000,
    5_000,
    10_000,
    30_000,
    60_000,
    5 * 60_000,
    15 * 60_000,
    30 * 60_000,
    3_600_000,
    3 * 3_600_000,
    6 * 3_600_000,
    12 * 3_600_000,
    86_400_000,
    2 * 86_400_000,
    7 * 86_400_000,
    14 * 86_400_000,
    28 * 86_400_000,
];

/// The smallest round width that cuts `span` ms into at most `buckets`
/// buckets (plus one: the first bucket starts at a multiple of the width);
/// past four weeks a width, the multiple of four weeks that does.
pub(crate) fn bucket_width(span: i64, buckets: i64) -> i64 {
    let buckets = buckets.max(1);
    WIDTHS.iter().copied().find(|w| ceil_div(span, *w) <= buckets).unwrap_or_else(|| {
        let month = WIDTHS[WIDTHS.len() - 1];
        ceil_div(ceil_div(span, buckets), month) * month
    })
}

/// `a / b` rounded up, for `a >= 0` and `b > 0`.
fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_is_the_smallest_round_width_that_fits() {
        assert_eq!(bucket_width(0, 50), 1_000);
        assert_eq!(bucket_width(50_000, 50), 1_000);
        assert_eq!(bucket_width(50_001, 50), 5_000);
        assert_eq!(bucket_width(2 * 3_600_000, 50), 5 * 60_000);
        assert_eq!(bucket_width(30 * 86_400_000, 50), 86_400_000);
        // A year in 50 buckets: two weeks (27 of them); 40 years: past four
        // weeks a width, a multiple of four weeks.
        let year = 365 * 86_400_000;
        assert_eq!(bucket_width(year, 50), 14 * 86_400_000);
        assert_eq!(bucket_width(year, 20), 28 * 86_400_000);
        assert_eq!(bucket_width(40 * year, 50), 28 * 86_400_000 * 11);
        assert!(ceil_div(40 * year, bucket_width(40 * year, 50)) <= 50);
    }
}
