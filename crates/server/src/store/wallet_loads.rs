//! The operator mode's loads, for `core::operator`'s decisions: written
//! once for both backends over [`Fetch`], which each backend's unit
//! implements, and expanded in each unit's [`domain::Unit`] by
//! [`wallet_loads!`].

use super::plan::Val;
use super::reads::{self, Cols};
use crate::keys::Keyring;
use domain::error::StoreError;
use domain::{LaunchRow, PlayerId, Reserved, RoundRow, RoundState, TicketId};
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
            crate::store::wallet_loads::operator_player(self, reference).await
        }
        async fn nonce_seen(&mut self, nonce: &str) -> Result<bool, StoreError> {
            crate::store::wallet_loads::nonce_seen(self, nonce).await
        }
        async fn launch(&mut self, code_hash: &str) -> Result<Option<domain::LaunchRow>, StoreError> {
            crate::store::wallet_loads::launch(self, code_hash).await
        }
        async fn round(&mut self, round: &str) -> Result<Option<domain::Reserved>, StoreError> {
            let keys = crate::store::wallet_loads::Fetch::keyring(self);
            crate::store::wallet_loads::round(self, &keys, round).await
        }
        async fn pending_round(&mut self, player: PlayerId, key: &str) -> Result<Option<domain::RoundRow>, StoreError> {
            crate::store::wallet_loads::pending_round(self, player, key).await
        }
        async fn last_attempt(&mut self, ticket: TicketId) -> Result<u32, StoreError> {
            crate::store::wallet_loads::last_attempt(self, ticket).await
        }
        async fn sold_round(&mut self, ticket: TicketId) -> Result<Option<domain::RoundRow>, StoreError> {
            crate::store::wallet_loads::sold_round(self, ticket).await
        }
        async fn operator_ref(&mut self, player: PlayerId) -> Result<Option<String>, StoreError> {
            crate::store::wallet_loads::operator_ref(self, player).await
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
pub(super) fn pending_round_sql() -> String {
    format!(
        "SELECT {ROUND_COLUMNS} FROM wallet_rounds r JOIN players p ON p.id = r.player_id \
         WHERE r.player_id = $1 AND r.idempotency_key = $2 AND r.state IN ('debiting', 'rolling_back')"
    )
}

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
