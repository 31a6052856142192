//! [`PgUnit`]: one request's unit of work on PostgreSQL, the core's
//! [`Unit`] over a transaction, a connection of its own (an optimistic
//! unit) or the batches' connection.

use crate::keys::Keyring;
use crate::store::audit_mac;
use crate::store::clock::now_ms;
use crate::store::db::bind_values;
use crate::store::error::DbResult;
use crate::store::plan::{Val, WritePlan};
use crate::store::reads::{
    ACCOUNT_OF_PLAYER, ACTION_SELECT, COUNTER_SELECT, IDEMPOTENCY_SELECT, IN_PLAY_SELECT, LIMITS_SELECT,
    LOGIN_OWNER_SELECT, LimitsTuple, NEXT_FOR_SALE_POSTGRES, PAPER_SELECT, PASSWORD_HASH_SELECT, TICKET_COLUMNS,
    TICKET_FROM, USAGE_SELECT, for_sale, limits_row, paper_row, paper_where, stored_answer, ticket_row,
};
use crate::store::tokens::TokenCheck;
use crate::store::wallet_loads::{Fetch, OwnedRow, owned_pg, wallet_loads};
use domain::error::StoreError;
use domain::limits::Counter;
use domain::usecase::PaperKey;
use domain::{
    Account, AccountId, Changes, ForSale, LimitsRow, PaperRow, PlayerId, StoredAnswer, TicketId, TicketRow, Unit, Usage,
};
use sqlx::postgres::PgConnection;
use sqlx::{AssertSqlSafe, Postgres, Row, Transaction};
use std::sync::Arc;

/// Whether the player `$2` still holds the token of hash `$3` at `$4`: as
/// its own token, or as a session that has not ended.
const TOKEN_OK: &str = "(EXISTS (SELECT 1 FROM players WHERE id = $2 AND token_hash = $3) \
     OR EXISTS (SELECT 1 FROM sessions WHERE token_hash = $3 AND player_id = $2 AND expires_ms > $4))";

/// A unit's connection: in a transaction, or on its own (each statement
/// commits itself).
pub(super) enum Conn {
    Tx(Transaction<'static, Postgres>),
    Auto(sqlx::pool::PoolConnection<Postgres>),
    /// The batches' own connection ([`super::batch`]).
    Own(PgConnection),
}

/// One request's unit of work.
pub(crate) struct PgUnit {
    pub(super) conn: Conn,
    /// The account of the ticket's owner, loaded and locked with the
    /// ticket (one round trip less for every action).
    pub(super) owner_account: Option<Account>,
    pub(super) keys: Arc<Keyring>,
    /// A remembered token that [`Unit::ticket`]'s statement confirms.
    pub(super) token_check: Option<TokenCheck>,
    /// In a batch of actions ([`super::batch`]): the ticket its batch
    /// read, and the plan of the write the batch's statement makes.
    pub(super) batched: Option<Batched>,
}

/// One action of a batch, decided on a unit ([`PgUnit::batch_unit`]).
#[derive(Default)]
pub(super) struct Batched {
    ticket: Option<TicketRow>,
    /// The plan of its write, and the account whose balance it guards.
    pub plan: Option<(WritePlan, Option<AccountId>)>,
}

impl PgUnit {
    /// The connection its statements run on.
    pub fn c(&mut self) -> &mut PgConnection {
        match &mut self.conn {
            Conn::Tx(tx) => tx,
            Conn::Auto(c) => c,
            Conn::Own(c) => c,
        }
    }

    /// A unit for a batch of actions on `conn`: no transaction, each
    /// action's ticket given by the batch's read ([`PgUnit::prepare`]), its
    /// write kept for the batch's statement ([`PgUnit::take_write`]).
    pub(super) fn batch_unit(conn: PgConnection, keys: Arc<Keyring>) -> PgUnit {
        PgUnit { conn: Conn::Own(conn), owner_account: None, keys, token_check: None, batched: None }
    }

    /// The batch's connection back, after its batch.
    pub(super) fn into_own(self) -> Option<PgConnection> {
        match self.conn {
            Conn::Own(c) => Some(c),
            _ => None,
        }
    }

    /// The next action of the batch: its ticket and owner's account, as
    /// the batch read them.
    pub(super) fn prepare(&mut self, ticket: TicketRow, account: Option<Account>) {
        self.owner_account = account;
        self.token_check = None;
        self.batched = Some(Batched { ticket: Some(ticket), plan: None });
    }

    /// What the action decided on the unit would write.
    pub(super) fn take_write(&mut self) -> Option<(WritePlan, Option<AccountId>)> {
        self.batched.take().and_then(|b| b.plan)
    }

    fn locking(&self) -> bool {
        matches!(self.conn, Conn::Tx(_))
    }

    /// `FOR UPDATE OF <of>` when the unit locks what it reads, else nothing.
    fn for_update(&self, of: &str) -> String {
        if self.locking() { format!(" FOR UPDATE OF {of}") } else { String::new() }
    }

    /// Commits the transaction (its write already committed itself
    /// without one).
    pub async fn commit(self) -> Result<(), StoreError> {
        match self.conn {
            Conn::Tx(tx) => Ok(tx.commit().await.db()?),
            Conn::Auto(_) | Conn::Own(_) => Ok(()),
        }
    }

    /// Whether the remembered token still names its player (its own
    /// token, or a session not ended): a statement of its own, for when
    /// the ticket's statement found no row to carry the check.
    async fn confirm_token(&mut self, serial: &str, check: &TokenCheck) -> Result<(), StoreError> {
        // `$1` is the ticket's serial, as in the ticket's statement.
        let sql = format!("SELECT {TOKEN_OK} WHERE CAST($1 AS TEXT) IS NOT NULL");
        let ok: bool = sqlx::query_scalar(AssertSqlSafe(sql))
            .bind(serial)
            .bind(check.player)
            .bind(&check.token_hash)
            .bind(now_ms())
            .fetch_one(self.c())
            .await
            .db()?;
        if ok { Ok(()) } else { Err(StoreError::TokenRevoked) }
    }

    pub(super) async fn rollback(self) {
        if let Conn::Tx(tx) = self.conn {
            let _ = tx.rollback().await;
        }
    }
}

impl Unit for PgUnit {
    async fn account(&mut self, player: PlayerId) -> Result<Option<Account>, StoreError> {
        if let Some(a) = self.owner_account.filter(|a| a.player == player) {
            return Ok(Some(a));
        }
        let sql = format!("{ACCOUNT_OF_PLAYER}{}", self.for_update("a"));
        let row: Option<(i64, i64)> =
            sqlx::query_as(AssertSqlSafe(sql)).bind(player).fetch_optional(self.c()).await.db()?;
        Ok(row.map(|(id, balance_cents)| Account { player, id, balance_cents }))
    }

    async fn idempotency(&mut self, player: PlayerId, key: &str) -> Result<Option<StoredAnswer>, StoreError> {
        let row = sqlx::query_as(IDEMPOTENCY_SELECT).bind(player).bind(key).fetch_optional(self.c()).await.db()?;
        Ok(stored_answer(row))
    }

    async fn next_for_sale(&mut self) -> Result<Option<ForSale>, StoreError> {
        // Concurrent purchases skip each other's locked ticket instead of
        // waiting; the plan reads one ticket whatever the statistics.
        let row = sqlx::query(NEXT_FOR_SALE_POSTGRES).fetch_optional(self.c()).await.db()?;
        row.map(|r| for_sale(&r, &self.keys)).transpose()
    }

    async fn ticket(&mut self, serial: &str) -> Result<Option<TicketRow>, StoreError> {
        // The ticket and game rows, then its owner's account: the core's
        // lock order. The ticket's row is locked too: it holds the client
        // seed the first action writes, and a request that waited for that
        // action must re-read it with the game (READ COMMITTED re-reads
        // only the rows it locks), or it sees the new game beside no seed.
        // Without locks (an optimistic unit) the one statement reads all of
        // them from one snapshot, and the write's guards catch what changes.
        // A remembered token is confirmed by the same statement (TOKEN_OK).
        if let Some(b) = &self.batched {
            return Ok(b.ticket.clone());
        }
        let check = self.token_check.take();
        let token_ok = if check.is_some() { format!(", {TOKEN_OK} AS token_ok") } else { String::new() };
        let sql = format!(
            "SELECT a.id AS account_id, a.balance_cents, {TICKET_COLUMNS}{token_ok}{TICKET_FROM}
             JOIN players p ON p.id = t.owner_id JOIN accounts a ON a.id = p.account_id
             WHERE t.serial = $1{}",
            self.for_update("t, g, a")
        );
        let mut query = sqlx::query(AssertSqlSafe(sql)).bind(serial);
        if let Some(c) = &check {
            query = query.bind(c.player).bind(&c.token_hash).bind(now_ms());
        }
        let found = query.fetch_optional(self.c()).await.db()?;
        if let Some(c) = &check {
            let ok = match &found {
                Some(row) => row.try_get("token_ok").db()?,
                None => {
                    self.confirm_token(serial, c).await?;
                    true
                }
            };
            if !ok {
                return Err(StoreError::TokenRevoked);
            }
        }
        let Some(row) = found else {
            // A paper ticket nobody's history holds: no account to lock.
            let sql = format!(
                "SELECT {TICKET_COLUMNS}{TICKET_FROM}WHERE t.serial = $1 AND t.owner_id IS NULL{}",
                self.for_update("t, g")
            );
            let row = sqlx::query(AssertSqlSafe(sql)).bind(serial).fetch_optional(self.c()).await.db()?;
            return row.map(|r| ticket_row(&r, &self.keys)).transpose();
        };
        let ticket = ticket_row(&row, &self.keys)?;
        if let Some(player) = ticket.owner {
            self.owner_account = Some(Account {
                player,
                id: row.try_get("account_id").db()?,
                balance_cents: row.try_get("balance_cents").db()?,
            });
        }
        Ok(Some(ticket))
    }

    async fn paper(&mut self, key: &PaperKey) -> Result<Option<PaperRow>, StoreError> {
        let (cond, value) = paper_where(key);
        // The ticket's row is locked first, then read with what joins it in
        // a second statement: READ COMMITTED re-reads only the rows it
        // locks, so a request that waited for a sale or a payment would see
        // the ticket sold beside no stored answer (the shop's retry refused).
        let lock = format!("SELECT t.id FROM tickets t WHERE {cond}{}", self.for_update("t"));
        let locked: Option<i64> =
            sqlx::query_scalar(AssertSqlSafe(lock)).bind(&value).fetch_optional(self.c()).await.db()?;
        if locked.is_none() {
            return Ok(None);
        }
        let sql = format!("{PAPER_SELECT}{cond}");
        match sqlx::query(AssertSqlSafe(sql)).bind(value).fetch_optional(self.c()).await.db()? {
            Some(row) => Ok(Some(paper_row(&row, &self.keys)?)),
            None => Ok(None),
        }
    }

    async fn stored_action(&mut self, ticket: TicketId, seq: u64) -> Result<Option<StoredAnswer>, StoreError> {
        let row = sqlx::query_as(ACTION_SELECT).bind(ticket).bind(seq as i64).fetch_optional(self.c()).await.db()?;
        Ok(stored_answer(row))
    }

    async fn insert_player(
        &mut self,
        token_hash: &str,
        name: Option<&str>,
        now: i64,
    ) -> Result<(PlayerId, AccountId), StoreError> {
        sqlx::query_as(
            "WITH a AS (INSERT INTO accounts (name, kind) VALUES ($1, 'player') RETURNING id)
             INSERT INTO players (token_hash, name, account_id, created_ms) SELECT $2, $3, a.id, $4 FROM a
             RETURNING id, account_id",
        )
        .bind(format!("player:{token_hash}"))
        .bind(token_hash)
        .bind(name)
        .bind(now)
        .fetch_one(self.c())
        .await
        .db()
    }

    async fn limits(&mut self, player: PlayerId) -> Result<Option<LimitsRow>, StoreError> {
        let row: Option<LimitsTuple> =
            sqlx::query_as(LIMITS_SELECT).bind(player).fetch_optional(self.c()).await.db()?;
        Ok(row.map(limits_row))
    }

    async fn usage(&mut self, player: PlayerId, day_since: i64, week_since: i64) -> Result<Usage, StoreError> {
        let (tickets_today, spent_week_cents): (i64, i64) = sqlx::query_as(USAGE_SELECT)
            .bind(player)
            .bind(day_since)
            .bind(week_since)
            .fetch_one(self.c())
            .await
            .db()?;
        Ok(Usage { tickets_today, spent_week_cents })
    }

    async fn login_owner(&mut self, login: &str) -> Result<Option<PlayerId>, StoreError> {
        sqlx::query_scalar(LOGIN_OWNER_SELECT).bind(login).fetch_optional(self.c()).await.db()
    }

    async fn password_hash(&mut self, player: PlayerId) -> Result<Option<String>, StoreError> {
        // The player's row locked: whatever ends sessions (new credentials,
        // a recovery, a closure) and whatever opens one (a login) read the
        // credentials here first, so they take turns. A login that waited
        // reads the new hash and is refused; a change that waited writes
        // after the login's commit, and its statement then sees (and ends)
        // the session the login opened.
        let sql = format!("{PASSWORD_HASH_SELECT}{}", self.for_update("players"));
        let hash: Option<Option<String>> =
            sqlx::query_scalar(AssertSqlSafe(sql)).bind(player).fetch_optional(self.c()).await.db()?;
        Ok(hash.flatten())
    }

    async fn tickets_in_play(&mut self, player: PlayerId) -> Result<i64, StoreError> {
        sqlx::query_scalar(IN_PLAY_SELECT).bind(player).fetch_one(self.c()).await.db()
    }

    async fn counter(&mut self, bucket: &str, lock: bool) -> Result<Counter, StoreError> {
        if lock {
            // A transaction's advisory lock on the bucket's name (the row
            // may not exist yet), in a key space of its own: the two-key
            // form never meets the audit chain's one-key lock.
            sqlx::query("SELECT pg_advisory_xact_lock(1094926401, hashtext($1))")
                .bind(bucket)
                .execute(self.c())
                .await
                .db()?;
        }
        let row: Option<(i64, i64, i64)> =
            sqlx::query_as(COUNTER_SELECT).bind(bucket).fetch_optional(self.c()).await.db()?;
        Ok(row.map_or_else(Counter::default, |(window_start_ms, count, last_ms)| Counter {
            window_start_ms,
            count,
            last_ms,
        }))
    }

    wallet_loads!();

    async fn apply(&mut self, changes: &Changes) -> Result<(), StoreError> {
        let mac = changes.audit.as_ref().and_then(|a| audit_mac::seal(&self.keys, a, changes.movement.as_ref()));
        let plan = WritePlan::of(changes, None, mac.as_ref());
        if let Some(b) = &mut self.batched {
            let balance = changes.movement.as_ref().and_then(|m| m.player_balance).map(|b| b.account);
            b.plan = Some((plan, balance));
            return Ok(());
        }
        let sql = if self.locking() { plan.postgres_statement() } else { plan.postgres_statement_all_or_nothing() };
        let returned: Vec<String> =
            bind_values!(sqlx::query_scalar(AssertSqlSafe(sql)), plan.values()).fetch_all(self.c()).await.db()?;
        plan.check_guards(&returned)
    }
}

impl Fetch for PgUnit {
    fn lock(&self, of: &str) -> String {
        self.for_update(of)
    }

    async fn fetch(&mut self, sql: &str, values: &[Val]) -> Result<Option<OwnedRow>, StoreError> {
        let row =
            bind_values!(sqlx::query(AssertSqlSafe(sql.to_string())), values).fetch_optional(self.c()).await.db()?;
        Ok(row.as_ref().map(owned_pg))
    }

    fn keyring(&self) -> Arc<Keyring> {
        self.keys.clone()
    }
}
