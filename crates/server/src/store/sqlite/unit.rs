//! The SQLite writer's unit of work: the core's [`Unit`] over the writer's
//! own connection and its memory (the cached accounts and tickets), one
//! per request of a group commit.

use super::connect::{CACHED_VALUES, exec};
use super::memory::{CACHE_LIMIT, InFlightKeys, WriterState};
use crate::keys::Keyring;
use crate::store::audit::Head;
use crate::store::audit_mac;
use crate::store::error::DbResult;
use crate::store::plan::{Val, WritePlan};
use crate::store::reads::{
    ACCOUNT_OF_PLAYER, ACTION_SELECT, COUNTER_SELECT, IDEMPOTENCY_SELECT, IN_PLAY_SELECT, LIMITS_SELECT,
    LOGIN_OWNER_SELECT, NEXT_FOR_SALE_SQLITE, PAPER_SELECT, PASSWORD_HASH_SELECT, TICKET_COLUMNS, TICKET_FROM,
    USAGE_SELECT, for_sale, limits_row, paper_row, paper_where, stored_answer, ticket_row,
};
use crate::store::wallet_loads::{Fetch, OwnedRow, owned_sqlite, wallet_loads};
use domain::error::StoreError;
use domain::limits::Counter;
use domain::usecase::PaperKey;
use domain::{
    Account, AccountId, Changes, ForSale, LimitsRow, PaperRow, PlayerId, Reserved, RoundRow, StoredAnswer, TicketId,
    TicketRow, Unit, Usage,
};
use rusqlite::{CachedStatement, Connection, OptionalExtension, Params};
use std::sync::Arc;

/// One request's unit of work in the writer's transaction, and the
/// writer's memory. With `savepoints`, a savepoint opened by its first
/// write and released by its last, so that a failure undoes this unit
/// alone; released at once, so that savepoints never nest (SQLite copies
/// every page a write touches into a sub-journal for each open savepoint).
pub(super) struct SqliteUnit<'a> {
    pub(super) conn: &'a mut Connection,
    pub(super) state: &'a mut WriterState,
    /// Each unit in its own savepoint ([`run_batch`](super::writer::run_batch)'s second attempt).
    pub(super) savepoints: bool,
    /// The unit has written (or begun to).
    pub(super) wrote: bool,
    /// Its savepoint is open.
    pub(super) open: bool,
}

impl SqliteUnit<'_> {
    /// Before the unit's first write: `SAVEPOINT job` if savepoints are on.
    fn savepoint(&mut self) -> Result<(), StoreError> {
        self.wrote = true;
        if self.savepoints && !self.open {
            exec(self.conn, "SAVEPOINT job").db()?;
            self.open = true;
        }
        Ok(())
    }

    /// After the unit's last write: `RELEASE job` if one is open.
    fn release(&mut self) -> Result<(), StoreError> {
        if self.open {
            exec(self.conn, "RELEASE job").db()?;
            self.open = false;
        }
        Ok(())
    }

    /// A read's statement from the cache; the shared SQL's `$N` are `?N`
    /// here (the N-th value, wherever it stands in the text).
    fn prepared(&self, sql: &str) -> Result<CachedStatement<'_>, StoreError> {
        self.conn.prepare_cached(&sql.replace('$', "?")).db()
    }

    /// The first row of a read, if any, through `f`.
    fn first<T>(
        &self,
        sql: &str,
        params: impl Params,
        f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Option<T>, StoreError> {
        self.prepared(sql)?.query_row(params, f).optional().db()
    }

    /// A stored request and answer.
    fn stored(&self, sql: &str, params: impl Params) -> Result<Option<StoredAnswer>, StoreError> {
        Ok(stored_answer(self.first(sql, params, |r| Ok((r.get(0)?, r.get(1)?)))?))
    }
}

/// Binds a plan statement's values in order and runs it: the rows changed.
fn execute(stmt: &mut rusqlite::Statement<'_>, values: &[Val]) -> rusqlite::Result<usize> {
    for (i, v) in values.iter().enumerate() {
        match v {
            Val::Int(x) => stmt.raw_bind_parameter(i + 1, x)?,
            Val::Text(t) => stmt.raw_bind_parameter(i + 1, t.as_deref())?,
        }
    }
    stmt.raw_execute()
}

impl Unit for SqliteUnit<'_> {
    async fn account(&mut self, player: PlayerId) -> Result<Option<Account>, StoreError> {
        if let Some(a) = self.state.accounts.get(&player) {
            return Ok(Some(*a));
        }
        let row: Option<(i64, i64)> = self.first(ACCOUNT_OF_PLAYER, [player], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let account = row.map(|(id, balance_cents)| Account { player, id, balance_cents });
        if let Some(a) = account {
            if self.state.accounts.len() >= CACHE_LIMIT {
                self.state.accounts.clear();
            }
            self.state.accounts.insert(player, a);
        }
        Ok(account)
    }

    async fn idempotency(&mut self, player: PlayerId, key: &str) -> Result<Option<StoredAnswer>, StoreError> {
        self.stored(IDEMPOTENCY_SELECT, rusqlite::params![player, key])
    }

    async fn next_for_sale(&mut self) -> Result<Option<ForSale>, StoreError> {
        if self.state.for_sale.is_empty() {
            // The writer is the only one to sell: these stay unsold until it does.
            let mut stmt = self.conn.prepare_cached(NEXT_FOR_SALE_SQLITE).db()?;
            let mut rows = stmt.query([]).db()?;
            while let Some(row) = rows.next().db()? {
                let next = for_sale(row, &self.state.keys)?;
                self.state.for_sale.push_back(next);
            }
        }
        Ok(self.state.for_sale.front().cloned())
    }

    async fn ticket(&mut self, serial: &str) -> Result<Option<TicketRow>, StoreError> {
        if let Some(t) = self.state.tickets.get(serial) {
            return Ok(Some(t.clone()));
        }
        let sql = format!("SELECT {TICKET_COLUMNS}{TICKET_FROM}WHERE t.serial = $1");
        let keys = &self.state.keys;
        self.first(&sql, [serial], |row| Ok(ticket_row(row, keys)))?.transpose()
    }

    async fn paper(&mut self, key: &PaperKey) -> Result<Option<PaperRow>, StoreError> {
        let (cond, value) = paper_where(key);
        let sql = format!("{PAPER_SELECT}{cond}");
        let keys = &self.state.keys;
        self.first(&sql, [value], |row| Ok(paper_row(row, keys)))?.transpose()
    }

    async fn stored_action(&mut self, ticket: TicketId, seq: u64) -> Result<Option<StoredAnswer>, StoreError> {
        let seq = i64::try_from(seq).map_err(|_| StoreError::Corrupt(format!("action number {seq}")))?;
        self.stored(ACTION_SELECT, [ticket, seq])
    }

    async fn insert_player(
        &mut self,
        token_hash: &str,
        name: Option<&str>,
        now: i64,
    ) -> Result<(PlayerId, AccountId), StoreError> {
        self.savepoint()?;
        let account: i64 = self
            .prepared("INSERT INTO accounts (name, kind) VALUES ($1, 'player') RETURNING id")?
            .query_row([format!("player:{token_hash}")], |r| r.get(0))
            .db()?;
        let player: i64 = self
            .prepared(
                "INSERT INTO players (token_hash, name, account_id, created_ms) VALUES ($1, $2, $3, $4) RETURNING id",
            )?
            .query_row(rusqlite::params![token_hash, name, account, now], |r| r.get(0))
            .db()?;
        self.state.accounts.insert(player, Account { player, id: account, balance_cents: 0 });
        Ok((player, account))
    }

    async fn limits(&mut self, player: PlayerId) -> Result<Option<LimitsRow>, StoreError> {
        if let Some(l) = self.state.limits.get(&player) {
            return Ok(*l);
        }
        let limits = self
            .first(LIMITS_SELECT, [player], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?
            .map(limits_row);
        if self.state.limits.len() >= CACHE_LIMIT {
            self.state.limits.clear();
        }
        self.state.limits.insert(player, limits);
        Ok(limits)
    }

    async fn usage(&mut self, player: PlayerId, day_since: i64, week_since: i64) -> Result<Usage, StoreError> {
        let (tickets_today, spent_week_cents) = self
            .first(USAGE_SELECT, [player, day_since, week_since], |r| Ok((r.get(0)?, r.get(1)?)))?
            .ok_or_else(|| StoreError::Corrupt("a sum gave no row".into()))?;
        Ok(Usage { tickets_today, spent_week_cents })
    }

    async fn login_owner(&mut self, login: &str) -> Result<Option<PlayerId>, StoreError> {
        self.first(LOGIN_OWNER_SELECT, [login], |r| r.get(0))
    }

    async fn password_hash(&mut self, player: PlayerId) -> Result<Option<String>, StoreError> {
        Ok(self.first(PASSWORD_HASH_SELECT, [player], |r| r.get::<_, Option<String>>(0))?.flatten())
    }

    async fn tickets_in_play(&mut self, player: PlayerId) -> Result<i64, StoreError> {
        Ok(self.first(IN_PLAY_SELECT, [player], |r| r.get(0))?.unwrap_or(0))
    }

    async fn counter(&mut self, bucket: &str, _lock: bool) -> Result<Counter, StoreError> {
        // The writer runs one unit at a time: a read is a lock.
        let row = self.first(COUNTER_SELECT, [bucket], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(row.map_or_else(Counter::default, |(window_start_ms, count, last_ms)| Counter {
            window_start_ms,
            count,
            last_ms,
        }))
    }

    wallet_loads!();

    async fn apply(&mut self, changes: &Changes) -> Result<(), StoreError> {
        let seal = changes.audit.as_ref().map(|a| self.state.audit_head.seal(a));
        let mac = changes.audit.as_ref().and_then(|a| audit_mac::seal(&self.state.keys, a, changes.movement.as_ref()));
        let plan = WritePlan::of(changes, seal.as_ref(), mac.as_ref());
        self.savepoint()?;
        for statement in plan.sqlite_statements() {
            let changed = if statement.values.len() <= CACHED_VALUES {
                execute(&mut *self.conn.prepare_cached(&statement.sql).db()?, statement.values).db()?
            } else {
                execute(&mut self.conn.prepare(&statement.sql).db()?, statement.values).db()?
            };
            if statement.guarded && changed != 1 {
                return Err(StoreError::Stale(format!("a guarded write changed {changed} rows: {}", statement.name)));
            }
        }
        if let Some(seal) = &seal
            && let Some((key_id, mac)) = audit_mac::seal_head(&self.state.keys, seal.chain_pos, &seal.hash)
        {
            let mut head = self.conn.prepare_cached(audit_mac::HEAD_UPSERT).db()?;
            head.execute(rusqlite::params![seal.chain_pos, seal.hash, key_id, mac]).db()?;
        }
        self.release()?;
        if let Some(seal) = &seal {
            self.state.audit_head = Head::after(seal);
        }
        self.state.written(changes);
        Ok(())
    }
}

impl Fetch for SqliteUnit<'_> {
    fn lock(&self, _of: &str) -> String {
        // The one writer takes turns: nothing to lock.
        String::new()
    }

    async fn fetch(&mut self, sql: &str, values: &[Val]) -> Result<Option<OwnedRow>, StoreError> {
        let mut stmt = self.prepared(sql)?;
        for (i, v) in values.iter().enumerate() {
            match v {
                Val::Int(x) => stmt.raw_bind_parameter(i + 1, x).db()?,
                Val::Text(t) => stmt.raw_bind_parameter(i + 1, t.as_deref()).db()?,
            }
        }
        let mut rows = stmt.raw_query();
        match rows.next().db()? {
            Some(row) => Ok(Some(owned_sqlite(row).db()?)),
            None => Ok(None),
        }
    }

    fn keyring(&self) -> Arc<Keyring> {
        self.state.keys.clone()
    }

    fn held(&self, round: &str) -> Option<Reserved> {
        self.state.held.get(round).cloned()
    }

    fn remembered_ref(&self, player: PlayerId) -> Option<String> {
        self.state.operator_refs.get(&player).cloned()
    }

    fn remember_ref(&mut self, player: PlayerId, reference: &str) {
        self.state.remember_ref(player, reference);
    }

    fn pending_remembered(&mut self, player: PlayerId, key: &str) -> Result<Option<Option<RoundRow>>, StoreError> {
        if self.state.in_flight_keys.is_none() {
            let keys = InFlightKeys::load(self.conn)?;
            if keys.by_key.len() >= CACHE_LIMIT {
                return Ok(None);
            }
            self.state.in_flight_keys = Some(keys);
        }
        Ok(self.state.in_flight_keys.as_ref().map(|keys| keys.by_key.get(&(player, key.to_string())).cloned()))
    }

    fn sold_remembered(&self, ticket: TicketId) -> Option<RoundRow> {
        self.state.sold_rounds.get(&ticket).cloned()
    }
}
