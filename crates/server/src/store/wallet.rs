//! The operator mode in the store: the loads of `core::operator`'s
//! decisions (written once, for both backends, over [`Fetch`]), the
//! purchase's two steps, the outbox's reads and bookkeeping, and the reads
//! of the reconciliation and of a player's session.

use super::plan::Val;
use super::reads::{self, Cols};
use super::{Store, on_db};
use crate::keys::Keyring;
use crate::store::error::DbResult;
use domain::error::{AppError, StoreError};
use domain::operator::DebitOutcome;
use domain::usecase;
use domain::usecase::Launch;
use domain::{Changes, Effect, Op, PlayerId, TicketId};
use domain::{LaunchRow, Reserved, RoundRow, RoundState, WalletWrite};
use sqlx::Row;
use std::collections::HashMap;
use std::future::Future;
use wallet::RoundId;

/// One row of a load, whatever the backend, by column name.
#[derive(Debug, Default)]
pub(super) struct OwnedRow(pub(super) HashMap<String, Val>);

impl Cols for OwnedRow {
    fn int(&self, c: &str) -> Result<Option<i64>, String> {
        match self.0.get(c) {
            Some(Val::Int(v)) => Ok(*v),
            Some(Val::Text(None)) => Ok(None),
            Some(Val::Text(Some(t))) => Err(format!("{c}: text {t:?}, not an integer")),
            None => Err(format!("{c}: no such column")),
        }
    }
    fn text(&self, c: &str) -> Result<Option<String>, String> {
        match self.0.get(c) {
            Some(Val::Text(v)) => Ok(v.clone()),
            Some(Val::Int(None)) => Ok(None),
            Some(Val::Int(Some(i))) => Err(format!("{c}: integer {i}, not text")),
            None => Err(format!("{c}: no such column")),
        }
    }
}

/// A backend's unit, able to run one query of the shared SQL in its
/// transaction and give its first row.
pub(super) trait Fetch: Send {
    /// What locks the loaded rows until the unit ends (`FOR UPDATE OF r`
    /// on PostgreSQL; nothing on SQLite, whose one writer takes turns).
    fn lock(&self, of: &str) -> String;
    fn fetch(&mut self, sql: &str, values: &[Val])
    -> impl Future<Output = Result<Option<OwnedRow>, StoreError>> + Send;
    /// Where server seeds come from.
    fn keyring(&self) -> std::sync::Arc<Keyring>;
    /// A round still `debiting` with the ticket it holds, as the backend's
    /// unit remembers them from the reservation (SQLite's one writer, which
    /// alone changes them); `None`: read them.
    fn held(&self, _round: &str) -> Option<Reserved> {
        None
    }
    /// A player's operator reference, as the backend's unit remembers it
    /// (set once, never changed); `None`: read it.
    fn remembered_ref(&self, _player: PlayerId) -> Option<String> {
        None
    }
    /// Remembers a player's operator reference, read in this unit.
    fn remember_ref(&mut self, _player: PlayerId, _reference: &str) {}
    /// A player's Idempotency-Key's round still in flight, as the backend's
    /// unit knows them all (SQLite's one writer, which alone writes rounds:
    /// `Some(None)` is a known "none"); `None`: read it.
    fn pending_remembered(&mut self, _player: PlayerId, _key: &str) -> Result<Option<Option<RoundRow>>, StoreError> {
        Ok(None)
    }
    /// A ticket's sold round, as the backend's unit remembers it from its
    /// settlement until its game ends; `None`: read it.
    fn sold_remembered(&self, _ticket: TicketId) -> Option<RoundRow> {
        None
    }
}

/// The operator mode's loads of [`domain::Unit`], for a backend's
/// unit that implements [`Fetch`]: written once here, expanded in each.
macro_rules! wallet_loads {
    () => {
        async fn operator_player(&mut self, reference: &str) -> Result<Option<PlayerId>, StoreError> {
            crate::store::wallet::operator_player(self, reference).await
        }
        async fn nonce_seen(&mut self, nonce: &str) -> Result<bool, StoreError> {
            crate::store::wallet::nonce_seen(self, nonce).await
        }
        async fn launch(&mut self, code_hash: &str) -> Result<Option<domain::rows::LaunchRow>, StoreError> {
            crate::store::wallet::launch(self, code_hash).await
        }
        async fn round(&mut self, round: &str) -> Result<Option<domain::rows::Reserved>, StoreError> {
            let keys = crate::store::wallet::Fetch::keyring(self);
            crate::store::wallet::round(self, &keys, round).await
        }
        async fn pending_round(
            &mut self,
            player: PlayerId,
            key: &str,
        ) -> Result<Option<domain::rows::RoundRow>, StoreError> {
            crate::store::wallet::pending_round(self, player, key).await
        }
        async fn last_attempt(&mut self, ticket: TicketId) -> Result<u32, StoreError> {
            crate::store::wallet::last_attempt(self, ticket).await
        }
        async fn sold_round(&mut self, ticket: TicketId) -> Result<Option<domain::rows::RoundRow>, StoreError> {
            crate::store::wallet::sold_round(self, ticket).await
        }
        async fn operator_ref(&mut self, player: PlayerId) -> Result<Option<String>, StoreError> {
            crate::store::wallet::operator_ref(self, player).await
        }
    };
}
pub(crate) use wallet_loads;

/// A PostgreSQL row, by column name.
pub(super) fn owned_pg(row: &sqlx::postgres::PgRow) -> OwnedRow {
    let mut out = HashMap::new();
    for (i, col) in row.columns().iter().enumerate() {
        use sqlx::Column;
        let v = match row.try_get::<Option<i64>, _>(i) {
            Ok(v) => Val::Int(v),
            Err(_) => Val::Text(row.try_get::<Option<String>, _>(i).ok().flatten()),
        };
        out.insert(col.name().to_string(), v);
    }
    OwnedRow(out)
}

/// A SQLite row (rusqlite), by column name.
pub(super) fn owned_sqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<OwnedRow> {
    use rusqlite::types::ValueRef;
    let mut out = HashMap::new();
    for (i, name) in row.as_ref().column_names().iter().enumerate() {
        let v = match row.get_ref(i)? {
            ValueRef::Integer(x) => Val::Int(Some(x)),
            ValueRef::Null => Val::Int(None),
            ValueRef::Text(t) => Val::Text(Some(String::from_utf8_lossy(t).into_owned())),
            ValueRef::Real(r) => Val::Int(Some(r as i64)),
            ValueRef::Blob(b) => Val::Text(Some(hex::encode(b))),
        };
        out.insert(name.to_string(), v);
    }
    Ok(OwnedRow(out))
}

/// A round's columns (`r`: `wallet_rounds`, `p`: its player).
const ROUND_COLUMNS: &str = "r.round_id, r.ticket_id AS round_ticket, r.attempt, r.player_id, p.operator_ref, \
     r.price_cents AS round_price, r.state, r.idempotency_key, r.created_ms AS round_created, \
     (SELECT id FROM accounts WHERE name = 'house:operator_wallet') AS wallet_account";

pub(super) fn round_row(row: &impl Cols) -> Result<RoundRow, StoreError> {
    let corrupt = |e: String| StoreError::Corrupt(format!("round: {e}"));
    let round = row.req_text("round_id").map_err(corrupt)?;
    let state = row.req_text("state").map_err(corrupt)?;
    Ok(RoundRow {
        round: RoundId::parse(&round).ok_or_else(|| corrupt(format!("round id {round:?}")))?,
        ticket_id: row.req_int("round_ticket").map_err(corrupt)?,
        player: row.req_int("player_id").map_err(corrupt)?,
        operator_ref: row.req_text("operator_ref").map_err(corrupt)?,
        price_cents: row.req_int("round_price").map_err(corrupt)?,
        state: RoundState::parse(&state).ok_or_else(|| corrupt(format!("state {state:?}")))?,
        idempotency_key: row.text("idempotency_key").map_err(corrupt)?,
        created_ms: row.req_int("round_created").map_err(corrupt)?,
        wallet_account: row.req_int("wallet_account").map_err(corrupt)?,
    })
}

/// The loads of `core::operator`, written once over [`Fetch`].
pub(super) async fn operator_player(f: &mut impl Fetch, reference: &str) -> Result<Option<PlayerId>, StoreError> {
    let row = f.fetch("SELECT id FROM players WHERE operator_ref = $1", &[reference.into()]).await?;
    row.map(|r| r.req_int("id").map_err(StoreError::Corrupt)).transpose()
}

pub(super) async fn operator_ref(f: &mut impl Fetch, player: PlayerId) -> Result<Option<String>, StoreError> {
    if let Some(reference) = f.remembered_ref(player) {
        return Ok(Some(reference));
    }
    let row = f.fetch("SELECT operator_ref FROM players WHERE id = $1", &[player.into()]).await?;
    let reference = row.map(|r| r.text("operator_ref").map_err(StoreError::Corrupt)).transpose()?.flatten();
    if let Some(r) = &reference {
        f.remember_ref(player, r);
    }
    Ok(reference)
}

pub(super) async fn nonce_seen(f: &mut impl Fetch, nonce: &str) -> Result<bool, StoreError> {
    Ok(f.fetch("SELECT seen_ms FROM signed_nonces WHERE nonce = $1", &[nonce.into()]).await?.is_some())
}

pub(super) async fn launch(f: &mut impl Fetch, code_hash: &str) -> Result<Option<LaunchRow>, StoreError> {
    let sql = format!(
        "SELECT l.player_id, p.operator_ref, l.language, l.flags_json, l.lobby_url, l.expires_ms, l.used_ms \
         FROM launches l JOIN players p ON p.id = l.player_id WHERE l.code_hash = $1{}",
        f.lock("l")
    );
    let Some(row) = f.fetch(&sql, &[code_hash.into()]).await? else { return Ok(None) };
    let corrupt = |e: String| StoreError::Corrupt(format!("launch: {e}"));
    Ok(Some(LaunchRow {
        player: row.req_int("player_id").map_err(corrupt)?,
        operator_ref: row.req_text("operator_ref").map_err(corrupt)?,
        language: row.req_text("language").map_err(corrupt)?,
        flags_json: row.req_text("flags_json").map_err(corrupt)?,
        lobby_url: row.text("lobby_url").map_err(corrupt)?,
        expires_ms: row.req_int("expires_ms").map_err(corrupt)?,
        used_ms: row.int("used_ms").map_err(corrupt)?,
    }))
}

pub(super) async fn round(f: &mut impl Fetch, keys: &Keyring, round: &str) -> Result<Option<Reserved>, StoreError> {
    if let Some(reserved) = f.held(round) {
        // Its state changes only through the writer that remembers it; the
        // settlement's write is guarded by it all the same.
        return Ok(Some(reserved));
    }
    let sql = format!(
        "SELECT {ROUND_COLUMNS}, t.id, t.serial, t.prize_5, t.prize_6, t.prize_7, t.prize_8, t.commitment, \
                t.position, b.number AS block_number, e.id AS emission_id, e.seed_salt, e.key_id, e.price_cents \
         FROM wallet_rounds r JOIN players p ON p.id = r.player_id JOIN tickets t ON t.id = r.ticket_id \
         JOIN blocks b ON b.id = t.block_id JOIN emissions e ON e.id = b.emission_id \
         WHERE r.round_id = $1{}",
        f.lock("r")
    );
    let Some(row) = f.fetch(&sql, &[round.into()]).await? else { return Ok(None) };
    Ok(Some(Reserved { round: round_row(&row)?, ticket: reads::for_sale(&row, keys)? }))
}

pub(super) async fn pending_round(
    f: &mut impl Fetch,
    player: PlayerId,
    key: &str,
) -> Result<Option<RoundRow>, StoreError> {
    if let Some(known) = f.pending_remembered(player, key)? {
        return Ok(known);
    }
    f.fetch(&pending_round_sql(), &[player.into(), key.into()]).await?.map(|r| round_row(&r)).transpose()
}

/// Every round of an Idempotency-Key still in flight (`wallet_rounds_in_flight`):
/// what SQLite's writer loads once to answer [`pending_round`] from memory.
pub(super) fn keyed_in_flight_sql() -> String {
    format!(
        "SELECT {ROUND_COLUMNS} FROM wallet_rounds r JOIN players p ON p.id = r.player_id \
         WHERE r.state IN ('debiting', 'rolling_back') AND r.idempotency_key IS NOT NULL"
    )
}

/// [`pending_round`]'s query: `r.state IN (...)` is the partial index
/// `wallet_rounds_in_flight`'s condition, word for word (migration 0019);
/// the player and the key are found in the index among the rows in flight.
fn pending_round_sql() -> String {
    format!(
        "SELECT {ROUND_COLUMNS} FROM wallet_rounds r JOIN players p ON p.id = r.player_id \
         WHERE r.player_id = $1 AND r.idempotency_key = $2 AND r.state IN ('debiting', 'rolling_back')"
    )
}

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

pub(super) async fn last_attempt(f: &mut impl Fetch, ticket: TicketId) -> Result<u32, StoreError> {
    let sql = "SELECT CAST(COALESCE(MAX(attempt), 0) AS BIGINT) AS attempt FROM wallet_rounds WHERE ticket_id = $1";
    let row = f.fetch(sql, &[ticket.into()]).await?;
    let n = row.map(|r| r.req_int("attempt").map_err(StoreError::Corrupt)).transpose()?.unwrap_or(0);
    u32::try_from(n).map_err(|_| StoreError::Corrupt(format!("attempt {n}")))
}

pub(super) async fn sold_round(f: &mut impl Fetch, ticket: TicketId) -> Result<Option<RoundRow>, StoreError> {
    if let Some(round) = f.sold_remembered(ticket) {
        return Ok(Some(round));
    }
    let sql = format!(
        "SELECT {ROUND_COLUMNS} FROM wallet_rounds r JOIN players p ON p.id = r.player_id \
         WHERE r.ticket_id = $1 AND r.state = 'sold'"
    );
    f.fetch(&sql, &[ticket.into()]).await?.map(|r| round_row(&r)).transpose()
}

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
    pub async fn wallet_rounds(&self, from_ms: i64, to_ms: i64) -> Result<Vec<wallet::reconcile::OurRound>, AppError> {
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
                use wallet::reconcile::RoundState as R;
                let state = match RoundState::parse(&state) {
                    Some(RoundState::Sold) => R::Sold,
                    Some(RoundState::Refused | RoundState::Released) => R::Released,
                    Some(RoundState::Debiting | RoundState::RollingBack) => R::Unresolved,
                    None => return Err(AppError::internal(format!("round {round_id}: state {state:?}"))),
                };
                Ok(wallet::reconcile::OurRound {
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
    use crate::store::Db;

    /// The operator mode's hot queries use the partial indexes of migration
    /// 0018: SQLite uses a partial index only when the query repeats its
    /// condition word for word, so a query reworded, or an index's condition
    /// changed, would fall back to reading every round or every credit ever
    /// written, each time the worker looks (five times a second) or a
    /// purchase is made. Each query's plan on SQLite names its index.
    #[tokio::test]
    async fn the_wallet_queries_use_their_partial_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::sqlite_store(dir.path()).await;
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
