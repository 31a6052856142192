//! The ledger's check (guarantee 3, `Store::check_ledger`, `as-capone
//! restore`'s check): the entries balance, each player's balance is the sum
//! of their entries, and the figures kept per block and per shop equal
//! their tickets recounted ([`RECOUNT_BLOCKS`], [`RECOUNT_SHOPS`]). The same
//! SQL runs on both databases.

use super::db::{Db, on_db};
use crate::store::error::DbResult;
use domain::HOUSE_PRIZES;
use domain::error::AppError;
use sqlx::AssertSqlSafe;

// Migration 11's triggers and RECOUNT_BLOCKS name house:prizes by its id.
const _: () = assert!(HOUSE_PRIZES == 3);

/// Each block's figures recounted from its tickets, games and ledger
/// entries (`id`, `printed`, `sold`, `in_play`, `won`, `lost`,
/// `prizes_won_cents`, `prizes_paid_cents`): what the kept figures must
/// equal. It reads every ticket and the whole
/// ledger (20 s for 6 million tickets): [`check_ledger`]
/// runs it, never a page.
pub(super) const RECOUNT_BLOCKS: &str = "SELECT b.id AS id, CAST(COUNT(t.id) AS BIGINT) AS printed,
        CAST(COALESCE(SUM(CASE WHEN t.status IN ('sold', 'paid') THEN 1 ELSE 0 END), 0) AS BIGINT) AS sold,
        CAST(COALESCE(SUM(CASE WHEN t.status IN ('sold', 'paid') AND g.phase <> 'finished' THEN 1 ELSE 0 END), 0)
             AS BIGINT) AS in_play,
        CAST(COALESCE(SUM(CASE WHEN g.phase = 'finished' AND g.prize_cents > 0 THEN 1 ELSE 0 END), 0) AS BIGINT) AS won,
        CAST(COALESCE(SUM(CASE WHEN g.phase = 'finished' AND g.prize_cents = 0 THEN 1 ELSE 0 END), 0) AS BIGINT) AS lost,
        CAST(COALESCE(SUM(CASE WHEN g.phase = 'finished' THEN g.prize_cents ELSE 0 END), 0) AS BIGINT)
             AS prizes_won_cents,
        CAST(COALESCE(SUM(pm.amount), 0) AS BIGINT) AS prizes_paid_cents
 FROM blocks b JOIN tickets t ON t.block_id = b.id
 LEFT JOIN ticket_games g ON g.ticket_id = t.id
 LEFT JOIN (SELECT m.ticket_id, SUM(l.amount_cents) AS amount FROM movements m
            JOIN ledger_entries l ON l.movement_id = m.id
            WHERE m.reason = 'prize' AND l.account_id <> 3 GROUP BY m.ticket_id) pm ON pm.ticket_id = t.id
 GROUP BY b.id";

/// Each shop's figures per emission recounted from the paper tickets
/// (`shop`, `emission_id`, `sold`, `redeemed`, `won_unpaid`,
/// `won_unpaid_cents`, `paid`, `paid_cents`; a shop's sales and its
/// payments are separate rows, to be summed): what `shop_figures` must
/// hold. It reads every paper ticket: [`check_ledger`] runs
/// it, never a page.
pub(super) const RECOUNT_SHOPS: &str = "SELECT t.shop AS shop, b.emission_id AS emission_id, 1 AS sold,
        CASE WHEN g.ticket_id IS NOT NULL THEN 1 ELSE 0 END AS redeemed,
        CASE WHEN g.phase = 'finished' AND g.prize_cents > 0 AND t.paid_ms IS NULL THEN 1 ELSE 0 END AS won_unpaid,
        CASE WHEN g.phase = 'finished' AND g.prize_cents > 0 AND t.paid_ms IS NULL THEN g.prize_cents ELSE 0 END
            AS won_unpaid_cents,
        0 AS paid, 0 AS paid_cents
 FROM tickets t JOIN blocks b ON b.id = t.block_id LEFT JOIN ticket_games g ON g.ticket_id = t.id
 WHERE t.shop IS NOT NULL
 UNION ALL
 SELECT t.paid_shop, b.emission_id, 0, 0, 0, 0, 1, COALESCE(g.prize_cents, 0)
 FROM tickets t JOIN blocks b ON b.id = t.block_id JOIN ticket_games g ON g.ticket_id = t.id
 WHERE t.paid_shop IS NOT NULL";

/// What the ledger looks like (guarantee 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerCheck {
    pub entries: u64,
    /// Sum of all entries: 0.
    pub sum_cents: i64,
    /// Movements whose entries do not sum to zero, or are not exactly two.
    pub unbalanced_movements: u64,
    /// Player accounts whose stored balance differs from the sum of their
    /// entries (a house account's balance is the sum of its entries).
    pub balance_mismatches: u64,
    /// Player accounts below zero.
    pub negative_players: u64,
    /// Blocks whose kept figures (`block_figures`, what the desk and
    /// `as-capone report` show) differ from their tickets recounted, or
    /// whose tickets are not as many as the block's size.
    pub block_figure_mismatches: u64,
    /// Shops and emissions whose kept paper figures (`shop_figures`, the
    /// desk's panel of shops) differ from their tickets recounted.
    pub shop_figure_mismatches: u64,
}

impl LedgerCheck {
    pub fn is_sound(&self) -> bool {
        self.sum_cents == 0
            && self.unbalanced_movements == 0
            && self.balance_mismatches == 0
            && self.negative_players == 0
            && self.block_figure_mismatches == 0
            && self.shop_figure_mismatches == 0
    }
}

/// Checks the ledger in one consistent read.
pub(super) async fn check_ledger(db: &Db) -> Result<LedgerCheck, AppError> {
    let (entries, sum, unbalanced, mismatches, negative): (i64, i64, i64, i64, i64) = on_db!(db, pool => sqlx::query_as(
        "SELECT
           (SELECT COUNT(*) FROM ledger_entries),
           (SELECT CAST(COALESCE(SUM(amount_cents), 0) AS BIGINT) FROM ledger_entries),
           (SELECT COUNT(*) FROM (SELECT movement_id FROM ledger_entries GROUP BY movement_id
              HAVING SUM(amount_cents) <> 0 OR COUNT(*) <> 2) AS bad),
           (SELECT COUNT(*) FROM accounts a WHERE a.kind = 'player' AND a.balance_cents <>
              (SELECT CAST(COALESCE(SUM(l.amount_cents), 0) AS BIGINT) FROM ledger_entries l WHERE l.account_id = a.id)),
           (SELECT COUNT(*) FROM accounts WHERE kind = 'player' AND balance_cents < 0)",
    )
    .fetch_one(pool)
    .await.db()?);
    let sql = format!(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM ({RECOUNT_BLOCKS}) r
         JOIN blocks b ON b.id = r.id
         LEFT JOIN (SELECT block_id, SUM(sold) AS sold, SUM(in_play) AS in_play, SUM(won) AS won, SUM(lost) AS lost,
                           SUM(prizes_won_cents) AS prizes_won_cents, SUM(prizes_paid_cents) AS prizes_paid_cents
                    FROM block_figures GROUP BY block_id) k ON k.block_id = r.id
         WHERE b.published_ms IS NOT NULL
           AND (r.printed <> b.size OR r.sold <> COALESCE(k.sold, 0) OR r.in_play <> COALESCE(k.in_play, 0)
                OR r.won <> COALESCE(k.won, 0) OR r.lost <> COALESCE(k.lost, 0)
                OR r.prizes_won_cents <> COALESCE(k.prizes_won_cents, 0)
                OR r.prizes_paid_cents <> COALESCE(k.prizes_paid_cents, 0))"
    );
    let blocks: i64 = on_db!(db, pool => sqlx::query_scalar(AssertSqlSafe(sql)).fetch_one(pool).await.db()?);
    // The recounted rows plus the kept ones negated: a shop and emission
    // whose sums are not all zero differs.
    let sql = format!(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM (
           SELECT shop, emission_id FROM (
             {RECOUNT_SHOPS}
             UNION ALL
             SELECT shop, emission_id, -sold, -redeemed, -won_unpaid, -won_unpaid_cents, -paid, -paid_cents
             FROM shop_figures) x
           GROUP BY shop, emission_id
           HAVING SUM(sold) <> 0 OR SUM(redeemed) <> 0 OR SUM(won_unpaid) <> 0 OR SUM(won_unpaid_cents) <> 0
               OR SUM(paid) <> 0 OR SUM(paid_cents) <> 0) bad"
    );
    let shops: i64 = on_db!(db, pool => sqlx::query_scalar(AssertSqlSafe(sql)).fetch_one(pool).await.db()?);
    Ok(LedgerCheck {
        block_figure_mismatches: blocks as u64,
        shop_figure_mismatches: shops as u64,
        entries: entries as u64,
        sum_cents: sum,
        unbalanced_movements: unbalanced as u64,
        balance_mismatches: mismatches as u64,
        negative_players: negative as u64,
    })
}
