//! The staff's side of the ledger, unsigned: players set and read, the
//! transactions of a period, the ledger's summary and its checks.

use super::database::Ledger;
use super::rows::{balance_of, move_money, player_row, stakes_since, transactions_between};
use super::rules::{MAX_BALANCE_CENTS, WEEK_MS, valid_ref};
use super::staff_views::{KindTotals, PlayerView, Summary};
use anyhow::Context;
use wallet::OperatorTransaction;

impl Ledger {
    /// The transactions applied in `[from_ms, to_ms)` (no nonce, no signature: the admin's and the tests' view).
    pub async fn transactions_in(&self, from_ms: i64, to_ms: i64) -> anyhow::Result<Vec<OperatorTransaction>> {
        let mut conn = self.pool.acquire().await?;
        Ok(transactions_between(&mut conn, from_ms, to_ms).await?)
    }

    /// Creates or updates a player (the balance is set through a deposit or
    /// withdrawal entry against the house, so the ledger stays balanced).
    pub async fn set_player(
        &self,
        player: &str,
        balance_cents: i64,
        weekly_limit_cents: Option<i64>,
        blocked: bool,
        now_ms: i64,
    ) -> anyhow::Result<PlayerView> {
        anyhow::ensure!(valid_ref(player, 64), "a player reference is 1 to 64 printable characters");
        anyhow::ensure!(
            (0..=MAX_BALANCE_CENTS).contains(&balance_cents),
            "balance_cents is from 0 to {MAX_BALANCE_CENTS}"
        );
        anyhow::ensure!(weekly_limit_cents.is_none_or(|l| l >= 0), "weekly_limit_cents must not be negative");
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query(
            "INSERT INTO players (player, balance_cents, weekly_limit_cents, blocked, created_ms, updated_ms)
             VALUES (?, 0, ?, ?, ?, ?)
             ON CONFLICT (player) DO UPDATE SET weekly_limit_cents = excluded.weekly_limit_cents,
                 blocked = excluded.blocked, updated_ms = excluded.updated_ms",
        )
        .bind(player)
        .bind(weekly_limit_cents)
        .bind(blocked)
        .bind(now_ms)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        let old = balance_of(&mut tx, player).await?.unwrap_or(0);
        let delta = balance_cents - old;
        if delta != 0 {
            let id = sqlx::query("INSERT INTO adjustments (player, delta_cents, at_ms) VALUES (?, ?, ?)")
                .bind(player)
                .bind(delta)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?
                .last_insert_rowid();
            move_money(&mut tx, player, delta, &format!("adj:{id}"), now_ms).await?;
        }
        tx.commit().await?;
        self.player(player, now_ms).await?.context("the player just written")
    }

    /// A player, with its stakes of the last 7 days.
    pub async fn player(&self, player: &str, now_ms: i64) -> anyhow::Result<Option<PlayerView>> {
        let mut conn = self.pool.acquire().await?;
        let Some(row) = player_row(&mut conn, player).await? else { return Ok(None) };
        let stakes = stakes_since(&mut conn, player, now_ms - WEEK_MS).await?;
        Ok(Some(PlayerView {
            player: player.to_string(),
            balance_cents: row.balance_cents,
            weekly_limit_cents: row.weekly_limit_cents,
            blocked: row.blocked,
            stakes_this_week_cents: stakes,
        }))
    }

    /// Every player's reference and balance, by reference.
    pub async fn players(&self) -> anyhow::Result<Vec<(String, i64, bool)>> {
        Ok(sqlx::query_as("SELECT player, balance_cents, blocked FROM players ORDER BY player")
            .fetch_all(&self.pool)
            .await?)
    }

    /// The ledger's totals and its consistency checks.
    pub async fn summary(&self) -> anyhow::Result<Summary> {
        let mut conn = self.pool.acquire().await?;
        let (players, balances_cents): (i64, i64) =
            sqlx::query_as("SELECT count(*), COALESCE(sum(balance_cents), 0) FROM players")
                .fetch_one(&mut *conn)
                .await?;
        let house_cents: i64 =
            sqlx::query_scalar("SELECT COALESCE(sum(amount_cents), 0) FROM entries WHERE account = 'house'")
                .fetch_one(&mut *conn)
                .await?;
        let entries_sum_cents: i64 =
            sqlx::query_scalar("SELECT COALESCE(sum(amount_cents), 0) FROM entries").fetch_one(&mut *conn).await?;
        let mismatched: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM players p WHERE p.balance_cents !=
                 (SELECT COALESCE(sum(e.amount_cents), 0) FROM entries e WHERE e.account = 'player:' || p.player)",
        )
        .fetch_one(&mut *conn)
        .await?;
        let mut s = Summary {
            players,
            balances_cents,
            house_cents,
            entries_sum_cents,
            balances_match_entries: mismatched == 0,
            balanced: mismatched == 0 && entries_sum_cents == 0,
            ..Summary::default()
        };
        let rows: Vec<(String, i64, i64)> = sqlx::query_as(
            "SELECT kind, count(*), COALESCE(sum(moved_cents), 0) FROM transactions WHERE status = 200 GROUP BY kind",
        )
        .fetch_all(&mut *conn)
        .await?;
        for (kind, count, moved_cents) in rows {
            let totals = KindTotals { count, moved_cents };
            match kind.as_str() {
                "debit" => s.debit = totals,
                "credit" => s.credit = totals,
                _ => s.rollback = totals,
            }
        }
        (s.debits_rolled_back, s.tombstones, s.debits_refused) = sqlx::query_as(
            "SELECT COALESCE(sum(rolled_back), 0), COALESCE(sum(tombstone), 0),
                    COALESCE(sum(CASE WHEN status = 402 THEN 1 ELSE 0 END), 0) FROM transactions",
        )
        .fetch_one(&mut *conn)
        .await?;
        Ok(s)
    }
}
