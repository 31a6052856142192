//! The operator mode in the store: the purchase's two steps, the outbox's
//! reads and bookkeeping, and the reads of the reconciliation and of a
//! player's session. The loads of `core::operator`'s decisions are in
//! `wallet_loads.rs`.

use super::db::on_db;
use super::shell::Store;
use crate::store::error::DbResult;
use domain::error::AppError;
use domain::operator::DebitOutcome;
use domain::usecase;
use domain::usecase::Launch;
use domain::{Changes, Effect, Op, PlayerId};
use domain::{RoundState, WalletWrite};

/// The debits sent before `$1` and never settled, oldest first: `state IN
/// (...)` is the partial index `wallet_rounds_in_flight`'s condition, word
/// for word (migration 0019).
const STALE_DEBITS: &str = "SELECT round_id FROM wallet_rounds WHERE state IN ('debiting', 'rolling_back') \
                            AND state = 'debiting' AND created_ms < $1 ORDER BY created_ms LIMIT $2";
/// The rounds still waiting on the operator (`wallet_rounds_in_flight`).
const UNRESOLVED_ROUNDS: &str =
    "SELECT CAST(COUNT(*) AS BIGINT) FROM wallet_rounds WHERE state IN ('debiting', 'rolling_back')";
/// The outbox's depth and oldest entry, and the rounds in flight, in one statement.
const WALLET_FIGURES: &str = "SELECT \
     (SELECT CAST(COUNT(*) AS BIGINT) FROM wallet_outbox WHERE acked_ms IS NULL), \
     (SELECT MIN(created_ms) FROM wallet_outbox WHERE acked_ms IS NULL), \
     (SELECT CAST(COUNT(*) AS BIGINT) FROM wallet_rounds WHERE state IN ('debiting', 'rolling_back'))";
/// The outbox's entries due at `$1` (the partial index `wallet_outbox_due`).
const OUTBOX_DUE: &str = "SELECT transaction_id, round_id, kind, body_json, attempts, created_ms FROM wallet_outbox \
                          WHERE acked_ms IS NULL AND next_ms <= $1 ORDER BY next_ms LIMIT $2";
/// The games in play bought through the wallet, from the unfinished games
/// (the partial index `ticket_games_unfinished`), not from every round ever
/// sold: CROSS JOIN keeps SQLite's order.
const OPERATOR_GAMES_IN_PLAY: &str = "SELECT CAST(COUNT(*) AS BIGINT) FROM ticket_games g CROSS JOIN wallet_rounds r \
                                      WHERE r.ticket_id = g.ticket_id AND g.phase <> 'finished' AND r.state = 'sold'";

/// What the first step of a purchase gave.
#[derive(Debug, Clone)]
pub enum Reservation {
    /// A new round: the debit to send (its JSON, a `wallet::MoneyRequest`).
    Debit(wallet::MoneyRequest),
    /// The Idempotency-Key's purchase, already sold: its answer.
    Replayed(String),
}

/// An entry of the outbox that is due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEntry {
    pub transaction_id: String,
    pub round: String,
    pub kind: wallet::TxKind,
    pub body_json: String,
    pub attempts: i64,
    pub created_ms: i64,
}

/// A player's session in operator mode, with what the launch asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub started_ms: i64,
    pub expires_ms: i64,
    pub flags_json: Option<String>,
    pub lobby_url: Option<String>,
    pub language: Option<String>,
}

/// A player's play since an instant: tickets bought, staked, won.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlaySummary {
    pub tickets: i64,
    pub staked_cents: i64,
    pub won_cents: i64,
}

impl Store {
    /// A launch (its signature checked by the caller): the answer's JSON.
    pub async fn launch(&self, op: Launch) -> Result<String, AppError> {
        Ok(self.write(Op::Launch(Box::new(op))).await?.answer)
    }

    /// A launch code exchanged for a session: the answer's JSON (without the token).
    pub async fn exchange_launch(
        &self,
        code_hash: String,
        session_hash: String,
        session_expires_ms: i64,
    ) -> Result<String, AppError> {
        Ok(self.write(Op::Exchange(usecase::Exchange { code_hash, session_hash, session_expires_ms })).await?.answer)
    }

    /// A purchase's first step: the ticket held, the round durable.
    pub async fn reserve(&self, player: PlayerId, key: Option<String>) -> Result<Reservation, AppError> {
        let done = self.write(Op::Reserve(usecase::Reserve { player, key })).await?;
        if done.effect.is_none() {
            return Ok(Reservation::Replayed(done.answer));
        }
        let debit = serde_json::from_str(&done.answer).map_err(AppError::internal)?;
        Ok(Reservation::Debit(debit))
    }

    /// A purchase's second step: the debit's fate; the purchase's answer
    /// when it was acknowledged.
    pub async fn settle(&self, round: &str, outcome: DebitOutcome) -> Result<String, AppError> {
        Ok(self.write(Op::Settle(usecase::Settle { round: round.to_string(), outcome })).await?.answer)
    }

    /// A rollback acknowledged: the round released, its ticket back in the pool.
    pub async fn rollback_acknowledged(&self, round: &str, transaction_id: &str) -> Result<(), AppError> {
        let op = Op::RollbackAcknowledged(usecase::RollbackAcknowledged {
            round: round.to_string(),
            transaction_id: transaction_id.to_string(),
        });
        self.write(op).await.map(|_| ())
    }

    /// Writes outbox bookkeeping as it is (guarded rows: a stale one fails the whole).
    pub async fn outbox_write(&self, wallet: Vec<WalletWrite>) -> Result<(), AppError> {
        let changes = Changes { wallet, ..Changes::none(Effect::Wallet) };
        self.write(Op::Apply(Box::new(changes))).await.map(|_| ())
    }

    /// The outbox's entries due at `now`, oldest first.
    pub async fn outbox_due(&self, now: i64, limit: i64) -> Result<Vec<OutboxEntry>, AppError> {
        let rows: Vec<(String, String, String, String, i64, i64)> =
            on_db!(&self.db, pool => sqlx::query_as(OUTBOX_DUE).bind(now).bind(limit).fetch_all(pool).await.db()?);
        rows.into_iter()
            .map(|(transaction_id, round, kind, body_json, attempts, created_ms)| {
                let kind = wallet::TxKind::parse(&kind)
                    .ok_or_else(|| AppError::internal(format!("outbox {transaction_id}: kind {kind:?}")))?;
                Ok(OutboxEntry { transaction_id, round, kind, body_json, attempts, created_ms })
            })
            .collect()
    }

    /// The outbox's depth and its oldest unacknowledged entry's creation (unix ms).
    pub async fn outbox_stats(&self) -> Result<(i64, Option<i64>), AppError> {
        let sql = "SELECT CAST(COUNT(*) AS BIGINT), MIN(created_ms) FROM wallet_outbox WHERE acked_ms IS NULL";
        let row: (i64, Option<i64>) = on_db!(&self.db, pool => sqlx::query_as(sql).fetch_one(pool).await.db()?);
        Ok(row)
    }

    /// The operator mode's figures in one read (one snapshot): the
    /// outbox's depth, its oldest unacknowledged entry's creation (unix
    /// ms), and the rounds still waiting on the operator. What `/metrics`
    /// and the desk's health both show (`operator::WalletFigures`).
    pub async fn wallet_figures(&self) -> Result<(i64, Option<i64>, i64), AppError> {
        let row: (i64, Option<i64>, i64) =
            on_db!(&self.db, pool => sqlx::query_as(WALLET_FIGURES).fetch_one(pool).await.db()?);
        Ok(row)
    }

    /// Rounds whose debit was sent before `before_ms` and never settled
    /// (the request's process died, or is slower than the wallet's timeout).
    pub async fn stale_debits(&self, before_ms: i64, limit: i64) -> Result<Vec<String>, AppError> {
        Ok(
            on_db!(&self.db, pool => sqlx::query_scalar(STALE_DEBITS).bind(before_ms).bind(limit).fetch_all(pool).await.db()?),
        )
    }

    /// Rounds still waiting on the operator: debits not settled and rollbacks not acknowledged.
    pub async fn unresolved_rounds(&self) -> Result<i64, AppError> {
        Ok(on_db!(&self.db, pool => sqlx::query_scalar(UNRESOLVED_ROUNDS).fetch_one(pool).await.db()?))
    }

    /// Games in play whose ticket was bought through the operator's wallet.
    pub async fn operator_games_in_play(&self) -> Result<i64, AppError> {
        Ok(on_db!(&self.db, pool => sqlx::query_scalar(OPERATOR_GAMES_IN_PLAY).fetch_one(pool).await.db()?))
    }

    /// Deletes the signed calls' nonces seen before `before_ms`.
    pub async fn prune_nonces(&self, before_ms: i64) -> Result<(), AppError> {
        let changes = Changes { expire_nonces_before: Some(before_ms), ..Changes::none(Effect::Wallet) };
        self.write(Op::Apply(Box::new(changes))).await.map(|_| ())
    }

    /// The rounds begun in `[from_ms, to_ms)`, as reconciliation compares them.
    pub async fn wallet_rounds(&self, from_ms: i64, to_ms: i64) -> Result<Vec<wallet::OurRound>, AppError> {
        let sql = "SELECT r.round_id, p.operator_ref, r.price_cents, r.state, g.prize_cents, o.acked_ms \
                   FROM wallet_rounds r JOIN players p ON p.id = r.player_id \
                   LEFT JOIN ticket_games g ON g.ticket_id = r.ticket_id AND r.state = 'sold' \
                   LEFT JOIN wallet_outbox o ON o.round_id = r.round_id AND o.kind = 'credit' \
                   WHERE r.created_ms >= $1 AND r.created_ms < $2 ORDER BY r.created_ms, r.round_id";
        type RoundTuple = (String, Option<String>, i64, String, Option<i64>, Option<i64>);
        let rows: Vec<RoundTuple> =
            on_db!(&self.db, pool => sqlx::query_as(sql).bind(from_ms).bind(to_ms).fetch_all(pool).await.db()?);
        rows.into_iter()
            .map(|(round_id, player, price_cents, state, prize, acked)| {
                use wallet::RoundState as R;
                let state = match RoundState::parse(&state) {
                    Some(RoundState::Sold) => R::Sold,
                    Some(RoundState::Refused | RoundState::Released) => R::Released,
                    Some(RoundState::Debiting | RoundState::RollingBack) => R::Unresolved,
                    None => return Err(AppError::internal(format!("round {round_id}: state {state:?}"))),
                };
                Ok(wallet::OurRound {
                    round_id,
                    player: player.unwrap_or_default(),
                    price_cents,
                    state,
                    prize_cents: prize.filter(|p| *p > 0),
                    credit_acknowledged: acked.is_some(),
                })
            })
            .collect()
    }

    /// The player's operator reference, when launched by an operator.
    pub async fn operator_ref_of(&self, player: PlayerId) -> Result<Option<String>, AppError> {
        let sql = "SELECT operator_ref FROM players WHERE id = $1";
        let r: Option<Option<String>> =
            on_db!(&self.db, pool => sqlx::query_scalar(sql).bind(player).fetch_optional(pool).await.db()?);
        Ok(r.flatten())
    }

    /// The session of a token's hash, with its launch's flags when it came from one.
    pub async fn session_info(&self, token_hash: &str) -> Result<Option<SessionInfo>, AppError> {
        let sql = "SELECT s.created_ms, s.expires_ms, l.flags_json, l.lobby_url, l.language FROM sessions s \
                   LEFT JOIN launches l ON l.session_hash = s.token_hash WHERE s.token_hash = $1";
        type SessionTuple = (i64, i64, Option<String>, Option<String>, Option<String>);
        let row: Option<SessionTuple> =
            on_db!(&self.db, pool => sqlx::query_as(sql).bind(token_hash).fetch_optional(pool).await.db()?);
        Ok(row.map(|(started_ms, expires_ms, flags_json, lobby_url, language)| SessionInfo {
            started_ms,
            expires_ms,
            flags_json,
            lobby_url,
            language,
        }))
    }

    /// What the player bought and won since `since_ms` (online tickets).
    pub async fn play_since(&self, player: PlayerId, since_ms: i64) -> Result<PlaySummary, AppError> {
        let sql = "SELECT CAST(COUNT(*) AS BIGINT), CAST(COALESCE(SUM(e.price_cents), 0) AS BIGINT), \
                          CAST(COALESCE(SUM(g.prize_cents), 0) AS BIGINT) \
                   FROM tickets t JOIN ticket_games g ON g.ticket_id = t.id \
                   JOIN blocks b ON b.id = t.block_id JOIN emissions e ON e.id = b.emission_id \
                   WHERE t.owner_id = $1 AND t.sold_ms >= $2 AND e.channel = 'online'";
        let (tickets, staked_cents, won_cents): (i64, i64, i64) =
            on_db!(&self.db, pool => sqlx::query_as(sql).bind(player).bind(since_ms).fetch_one(pool).await.db()?);
        Ok(PlaySummary { tickets, staked_cents, won_cents })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::db::Db;
    use crate::store::wallet_loads::pending_round_sql;

    /// The operator mode's hot queries use the partial indexes of migration
    /// 0018: SQLite uses a partial index only when the query repeats its
    /// condition word for word, so a query reworded, or an index's condition
    /// changed, would fall back to reading every round or every credit ever
    /// written, each time the worker looks (five times a second) or a
    /// purchase is made. Each query's plan on SQLite names its index.
    #[tokio::test]
    async fn the_wallet_queries_use_their_partial_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::sqlite_for_tests(dir.path()).await;
        let Db::Sqlite(pool) = &store.db else { panic!("a SQLite store") };
        let pending = pending_round_sql();
        for (sql, index) in [
            (STALE_DEBITS, "wallet_rounds_in_flight"),
            (UNRESOLVED_ROUNDS, "wallet_rounds_in_flight"),
            (pending.as_str(), "wallet_rounds_in_flight"),
            (OUTBOX_DUE, "wallet_outbox_due"),
            (OPERATOR_GAMES_IN_PLAY, "ticket_games_unfinished"),
        ] {
            let plan: Vec<(i64, i64, i64, String)> =
                sqlx::query_as(sqlx::AssertSqlSafe(format!("EXPLAIN QUERY PLAN {sql}"))).fetch_all(pool).await.unwrap();
            let details: Vec<&str> = plan.iter().map(|p| p.3.as_str()).collect();
            assert!(
                details
                    .iter()
                    .any(|d| d.contains(&format!("INDEX {index} ")) || d.ends_with(&format!("INDEX {index}"))),
                "{sql}: {details:?}"
            );
            assert!(
                !details.iter().any(|d| d.starts_with("SCAN r") || d == &"SCAN wallet_rounds"),
                "{sql}: {details:?}"
            );
        }
        store.close().await.unwrap();
    }
}
