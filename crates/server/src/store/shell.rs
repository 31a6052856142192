//! [`Store`]: the server's storage, and its core methods: the players'
//! tokens and sessions, their accounts, purchases, game actions, limits
//! and tickets, the audit chain's and the ledger's checks, closing. The
//! other requests' methods are in files of their own (emissions, retail,
//! claims, the operator mode, the desk); [`Store::open`] and
//! [`Store::bootstrap`] are in `open.rs`.

use super::audit::{self, AuditCheck};
use super::backend::Writer;
use super::ceilings::CeilingState;
use super::clock::now_ms;
use super::db::{Db, on_db};
use super::error::DbResult;
use super::ledger::{self, LedgerCheck};
use super::reads;
use super::tokens::{AuthCache, TokenCheck, token_hash};
use crate::keys::Keyring;
use domain::account::{LimitRules, LimitsRequest, Via};
use domain::api::LimitsView;
use domain::api::{ActionRequest, ClientSeed, Me, PlayerCreated, TicketView};
use domain::error::AppError;
use domain::usecase;
use domain::{BuyRequest, Caller, Done, Op, PlayerId};
use record::Record;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// The server's storage: reads written once for both backends, writes
/// through each backend's shell around the core's use cases.
pub struct Store {
    pub(super) db: Db,
    pub(super) writer: Writer,
    /// Players' own tokens and sessions already seen, by hash (on
    /// PostgreSQL, for `TokenCheck`s only).
    pub(super) auth_cache: RwLock<AuthCache>,
    pub(super) start_balance: i64,
    pub(super) description: String,
    /// PostgreSQL: the start-up lock, held until the bootstrap is done.
    pub(super) startup: tokio::sync::Mutex<Option<sqlx::PgConnection>>,
    /// Where server seeds come from ([`crate::keys`]).
    pub(super) keys: Arc<Keyring>,
    /// One emission written at a time by this process.
    pub(super) emitting: tokio::sync::Mutex<()>,
    /// The shops' ledger accounts, by shop name.
    pub(super) shops: RwLock<HashMap<String, i64>>,
    /// The key id of each emission seen (never changes once written): a
    /// paper ticket's token is checked with its emission's key.
    pub(super) emission_keys: RwLock<HashMap<u32, i64>>,
    /// Online purchases go through the operator's wallet (`wallet = "operator"`).
    pub(super) operator_wallet: bool,
    /// The global ceilings on what anonymous clients make us keep.
    pub(super) ceilings: CeilingState,
}

impl Store {
    /// Whether online purchases go through the operator's wallet.
    pub fn operator_wallet(&self) -> bool {
        self.operator_wallet
    }

    /// The server's keys (device tokens are signed with them: `devices.rs`).
    pub fn keys(&self) -> &Keyring {
        &self.keys
    }

    /// One line for the start log: which database, and how it is written.
    pub fn describe(&self) -> &str {
        &self.description
    }

    /// Ok when the database answers a query.
    pub async fn health(&self) -> Result<(), AppError> {
        reads::health(&self.db).await
    }

    /// The database's schema version: the highest migration applied to it
    /// (`_sqlx_migrations`), which this binary's start made at least
    /// [`schema_version`](super::schema::schema_version).
    pub async fn database_schema(&self) -> Result<i64, AppError> {
        let sql = "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM _sqlx_migrations WHERE success";
        Ok(on_db!(&self.db, pool => sqlx::query_scalar(sql).fetch_one(pool).await.db()?))
    }

    /// The player holding this bearer token.
    pub async fn authenticate(&self, token: &str) -> Result<Option<PlayerId>, AppError> {
        Ok(self.authenticate_via(token).await?.map(|(player, _)| player))
    }

    /// The player holding this bearer token, and which of their tokens it
    /// is. A revoked token (a logout, a password change) stops working at
    /// once: on PostgreSQL, shared by several processes, every request
    /// reads it; on SQLite this process alone revokes, and forgets what it
    /// remembered of the player when it does.
    pub async fn authenticate_via(&self, token: &str) -> Result<Option<(PlayerId, Via)>, AppError> {
        let th = token_hash(token);
        // On PostgreSQL what is remembered serves only the game actions'
        // checked tokens ([`Store::action_caller`]).
        let trusted = matches!(self.db, Db::Sqlite(_));
        let generation = {
            let cache = self.auth_cache.read().expect("auth cache");
            if trusted && let Some(id) = cache.players.get(&th) {
                return Ok(Some((*id, Via::OwnToken)));
            }
            if trusted && let Some(&(id, expires_ms)) = cache.sessions.get(&th) {
                return Ok((expires_ms > now_ms()).then_some((id, Via::Session(th))));
            }
            cache.generation
        };
        // On PostgreSQL a session is read every time: a logout in any
        // process or its expiry ends it at once.
        let found = reads::player_by_token_hash(&self.db, &th).await?;
        if let Some((id, expires)) = found {
            let mut cache = self.auth_cache.write().expect("auth cache");
            if cache.generation == generation {
                match expires {
                    None => {
                        if cache.players.len() >= AuthCache::MAX {
                            cache.players.clear();
                        }
                        cache.players.insert(th.clone(), id);
                    }
                    Some(expires_ms) => {
                        if cache.sessions.len() >= AuthCache::MAX {
                            cache.sessions.clear();
                        }
                        cache.sessions.insert(th.clone(), (id, expires_ms));
                    }
                }
            }
        }
        match found {
            Some((id, None)) => Ok(Some((id, Via::OwnToken))),
            Some((id, Some(expires_ms))) if expires_ms > now_ms() => Ok(Some((id, Via::Session(th)))),
            _ => Ok(None),
        }
    }

    /// The caller of a game action: a paper ticket's token, or a player's.
    /// On PostgreSQL a player's token this process has already seen is not
    /// read here: it comes with a `TokenCheck` that the action's first
    /// statement confirms (one round trip less for every action, and a
    /// token revoked by any process still stops at once).
    pub async fn action_caller(&self, token: &str) -> Result<(Caller, Option<TokenCheck>), AppError> {
        if let Some(serial) = self.ticket_of_token(token).await? {
            return Ok((Caller::Ticket(serial), None));
        }
        if matches!(self.db, Db::Postgres(_)) {
            let th = token_hash(token);
            let remembered = {
                let cache = self.auth_cache.read().expect("auth cache");
                cache.players.get(&th).copied().or_else(|| {
                    cache.sessions.get(&th).filter(|&&(_, expires_ms)| expires_ms > now_ms()).map(|&(p, _)| p)
                })
            };
            if let Some(player) = remembered {
                return Ok((Caller::Player(player), Some(TokenCheck { player, token_hash: th })));
            }
        }
        match self.authenticate(token).await? {
            Some(id) => Ok((Caller::Player(id), None)),
            None => Err(AppError::Unauthorized("invalid token".into())),
        }
    }

    /// Forgets one remembered token, found revoked.
    fn forget_token(&self, token_hash: &str) {
        let mut cache = self.auth_cache.write().expect("auth cache");
        cache.players.remove(token_hash);
        cache.sessions.remove(token_hash);
        cache.generation += 1;
    }

    /// Forgets the tokens remembered for `player`, after a revocation.
    fn forget_tokens_of(&self, player: PlayerId) {
        let mut cache = self.auth_cache.write().expect("auth cache");
        cache.players.retain(|_, p| *p != player);
        cache.sessions.retain(|_, (p, _)| *p != player);
        cache.generation += 1;
    }

    /// A new player with the configured play money (a ledger movement).
    /// `credentials`: a login and its password's argon2id hash.
    pub async fn create_player(
        &self,
        name: Option<String>,
        credentials: Option<(String, String)>,
    ) -> Result<PlayerCreated, AppError> {
        self.create_recoverable_player(name, credentials, None).await
    }

    /// [`Store::create_player`] with the hash of the login's recovery code (docs/player-api.md "Recovery without e-mail").
    pub async fn create_recoverable_player(
        &self,
        name: Option<String>,
        credentials: Option<(String, String)>,
        recovery_hash: Option<String>,
    ) -> Result<PlayerCreated, AppError> {
        let token = hex::encode(crate::fairness::random_bytes::<24>());
        self.create_player_with_token(&token, name, credentials, recovery_hash).await
    }

    pub(super) async fn create_player_with_token(
        &self,
        token: &str,
        name: Option<String>,
        credentials: Option<(String, String)>,
        recovery_hash: Option<String>,
    ) -> Result<PlayerCreated, AppError> {
        let op = Op::CreatePlayer(usecase::CreatePlayer {
            token_hash: token_hash(token),
            name,
            start_balance: self.start_balance,
            credentials,
            recovery_hash,
        });
        let id = self.write(op).await?.player.ok_or_else(|| AppError::internal("a new player without an id"))?;
        Ok(PlayerCreated {
            player_id: id,
            token: token.to_string(),
            balance_cents: self.start_balance,
            recovery_code: None,
            device_token: None,
        })
    }

    /// A write request, through the backend's shell. PostgreSQL's runs the
    /// whole use case on the request's task, a future of about 9 KB: it is
    /// boxed, so that every request's future (SQLite's too) stays small
    /// rather than being copied at that size through the HTTP framework's layers (4.6 %
    /// of the server's CPU on SQLite, BENCHMARKS.md).
    pub(super) async fn write(&self, op: Op) -> Result<Done, AppError> {
        self.writer.write(op).await
    }

    /// Sold tickets whose game is not finished, in the whole database.
    pub async fn active_games(&self) -> Result<i64, AppError> {
        reads::active_games(&self.db).await
    }

    /// Audit entries not chained yet, and the age in milliseconds of the
    /// oldest (0: none). SQLite chains each entry in its own transaction;
    /// on PostgreSQL a sealer chains them just after commit, so a count
    /// that stays up means no process is sealing.
    pub async fn unsealed_audit(&self) -> Result<(i64, i64), AppError> {
        let (count, oldest) = reads::unsealed_audit(&self.db).await?;
        Ok((count, oldest.map_or(0, |ms| (now_ms() - ms).max(0))))
    }

    pub async fn me(&self, player: PlayerId) -> Result<Me, AppError> {
        reads::me(&self.db, player).await
    }

    /// Debits the price and assigns the next unsold ticket, in one
    /// transaction; the answer's JSON as stored (an Idempotency-Key used
    /// again gets the same bytes, and no debit).
    pub async fn buy_ticket(&self, player: PlayerId, request: BuyRequest) -> Result<String, AppError> {
        Ok(self.write(Op::Buy(usecase::Buy { player, request })).await?.answer)
    }

    /// Applies an action exactly once (guarantee 4) and returns the JSON
    /// answer as stored.
    pub async fn run_action(&self, caller: &Caller, serial: &str, request: ActionRequest) -> Result<String, AppError> {
        self.run_checked_action(caller, None, serial, request).await
    }

    /// [`Store::run_action`] for a caller from [`Store::action_caller`].
    pub async fn run_checked_action(
        &self,
        caller: &Caller,
        check: Option<TokenCheck>,
        serial: &str,
        request: ActionRequest,
    ) -> Result<String, AppError> {
        let op = Op::PlayAction(usecase::PlayAction {
            caller: caller.clone(),
            serial: serial.to_string(),
            request,
            random_client_seed: ClientSeed::from_random(crate::fairness::random_bytes()),
            operator_wallet: self.operator_wallet,
        });
        let done = self.writer.write_checked(op, check.clone()).await;
        match done {
            Err(AppError::Storage(domain::error::StoreError::TokenRevoked)) => {
                if let Some(c) = check {
                    self.forget_token(&c.token_hash);
                }
                Err(AppError::Unauthorized("invalid token".into()))
            }
            other => Ok(other?.answer),
        }
    }

    /// The player's tickets, newest first: all, or a page of `limit`
    /// bought before the ticket `before`.
    pub async fn tickets(
        &self,
        player: PlayerId,
        limit: Option<u32>,
        before: Option<&str>,
    ) -> Result<Vec<TicketView>, AppError> {
        reads::tickets(&self.db, &self.keys, player, limit, before).await
    }

    /// The prize table of the tickets on sale online (the next one sold,
    /// else the newest online emission's): its digest and TOML.
    pub async fn online_table(&self) -> Result<Option<(String, String)>, AppError> {
        reads::online_table(&self.db).await
    }

    /// The player's limits and usage.
    /// The player's statement ("bilan de jeu"), and since `since` (unix ms).
    pub async fn statement(
        &self,
        player: PlayerId,
        since: Option<i64>,
    ) -> Result<domain::api::StatementView, AppError> {
        reads::statement(&self.db, player, since, now_ms()).await
    }

    pub async fn limits(&self, player: PlayerId, rules: LimitRules) -> Result<LimitsView, AppError> {
        reads::limits(&self.db, player, rules, now_ms()).await
    }

    /// New limits (a raise after the rules' cooling-off): the answer's JSON.
    pub async fn set_limits(
        &self,
        player: PlayerId,
        request: LimitsRequest,
        rules: LimitRules,
    ) -> Result<String, AppError> {
        let rules = reads::priced(&self.db, rules).await?;
        Ok(self.write(Op::SetLimits(usecase::SetLimits { player, request, rules })).await?.answer)
    }

    /// A self-exclusion of `days`: the answer's JSON (the limits).
    pub async fn self_exclude(&self, player: PlayerId, days: i64, rules: LimitRules) -> Result<String, AppError> {
        let rules = reads::priced(&self.db, rules).await?;
        Ok(self.write(Op::SelfExclude(usecase::SelfExclude { player, days, rules })).await?.answer)
    }

    /// The player and password hash of a login.
    pub async fn login(&self, login: &str) -> Result<Option<(PlayerId, Option<String>)>, AppError> {
        reads::login(&self.db, login).await
    }

    /// A player's password hash, if they have a login.
    pub async fn password_hash(&self, player: PlayerId) -> Result<Option<String>, AppError> {
        reads::password_hash(&self.db, player).await
    }

    /// A login and password hash for `player`, replacing the hash `was`:
    /// every token of the player but `via` (the request's) stops working.
    pub async fn set_credentials(
        &self,
        player: PlayerId,
        login: String,
        password_hash: String,
        was: Option<String>,
        via: Via,
    ) -> Result<String, AppError> {
        let done =
            self.write(Op::SetCredentials(usecase::SetCredentials { player, login, password_hash, was, via })).await;
        self.forget_tokens_of(player);
        Ok(done?.answer)
    }

    /// A session for `player`, whose password matched the hash `verified`.
    pub async fn open_session(
        &self,
        player: PlayerId,
        verified: String,
        token_hash: String,
        expires_ms: i64,
    ) -> Result<(), AppError> {
        self.write(Op::OpenSession(usecase::OpenSession { player, verified, token_hash, expires_ms })).await?;
        Ok(())
    }

    /// The player and recovery code's hash of a login (docs/player-api.md "Recovery without e-mail").
    pub async fn recovery(&self, login: &str) -> Result<Option<(PlayerId, Option<String>)>, AppError> {
        reads::recovery(&self.db, login).await
    }

    /// A new password set with the recovery code whose hash `verified`
    /// matched, a new recovery hash, a new session: every other token of
    /// the player stops working. A code used meanwhile: 401.
    pub async fn recover(
        &self,
        player: PlayerId,
        verified: String,
        password_hash: String,
        recovery_hash: String,
        session_token_hash: String,
        expires_ms: i64,
    ) -> Result<(), AppError> {
        let op = Op::Recover(usecase::Recover {
            player,
            verified,
            password_hash,
            recovery_hash,
            session_token_hash,
            expires_ms,
        });
        let done = self.write(op).await;
        self.forget_tokens_of(player);
        match done {
            Err(AppError::Storage(domain::error::StoreError::Stale(_))) => {
                Err(AppError::Unauthorized("wrong login or recovery code".into()))
            }
            other => other.map(|_| ()),
        }
    }

    /// A new recovery code's hash, once the password matched `password_was`.
    pub async fn renew_recovery(
        &self,
        player: PlayerId,
        password_was: String,
        recovery_hash: String,
    ) -> Result<(), AppError> {
        match self.write(Op::RenewRecovery(usecase::RenewRecovery { player, password_was, recovery_hash })).await {
            Err(AppError::Storage(domain::error::StoreError::Stale(_))) => {
                Err(AppError::Conflict("the account's password changed meanwhile: try again".into()))
            }
            other => other.map(|_| ()),
        }
    }

    /// Closes the player's account (its password matched `password_was`;
    /// `None`: an account without one): the answer's JSON.
    pub async fn close_account(&self, player: PlayerId, password_was: Option<String>) -> Result<String, AppError> {
        let done = self.write(Op::Close(usecase::CloseAccount { player, password_was })).await;
        self.forget_tokens_of(player);
        match done {
            Err(AppError::Storage(domain::error::StoreError::Stale(_))) => {
                Err(AppError::Conflict("the account changed meanwhile: try again".into()))
            }
            other => Ok(other?.answer),
        }
    }

    /// A logout: the session, or the player's own token, stops working.
    pub async fn logout(&self, player: PlayerId, via: Via) -> Result<(), AppError> {
        let done = self.write(Op::Logout(usecase::Logout { player, via })).await;
        self.forget_tokens_of(player);
        done.map(|_| ())
    }

    /// One ticket of the caller (404 for anybody else's).
    pub async fn ticket(&self, caller: &Caller, serial: &str) -> Result<TicketView, AppError> {
        Ok(reads::owned_ticket(&self.db, &self.keys, caller, serial).await?.ticket.view())
    }

    /// The public record, built from the stored rows.
    pub async fn record(&self, caller: &Caller, serial: &str) -> Result<Record, AppError> {
        reads::record(&self.db, &self.keys, caller, serial).await
    }

    /// Chains the audit entries committed but not sealed yet, waiting for a
    /// sealer at work in another process (PostgreSQL; the SQLite writer
    /// seals in its own transactions), and returns how many it sealed.
    pub async fn seal_audit(&self) -> Result<u64, AppError> {
        match &self.db {
            Db::Postgres(pool) => Ok(audit::seal_pending(pool, &self.keys, audit::Wait::Yes).await?),
            Db::Sqlite(_) => Ok(0),
        }
    }

    /// Checks the audit log's hash chain.
    pub async fn check_audit_chain(&self) -> Result<AuditCheck, AppError> {
        let mut check = audit::check(&self.db).await?;
        check.forged = super::audit_mac::check(&self.db, &self.keys).await?;
        Ok(check)
    }

    /// Checks the ledger (guarantee 3).
    pub async fn check_ledger(&self) -> Result<LedgerCheck, AppError> {
        ledger::check_ledger(&self.db).await
    }

    /// Stops accepting writes, finishes the ones queued, seals the audit
    /// log and closes.
    pub async fn close(&self) -> Result<(), AppError> {
        self.writer.close().await?;
        if let Db::Postgres(pool) = &self.db {
            audit::seal_pending(pool, &self.keys, audit::Wait::Yes).await?;
        }
        on_db!(&self.db, pool => pool.close().await);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request's future is moved whole through the HTTP framework's layers, a copy of
    /// its size each time: PostgreSQL's use case, boxed, must not make
    /// every action's (SQLite's too) 9 KB again (BENCHMARKS.md).
    #[tokio::test]
    async fn a_request_future_stays_small() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::sqlite_for_tests(dir.path()).await;
        let request: ActionRequest = serde_json::from_str(r#"{"seq":0,"action":"draw"}"#).unwrap();
        let act = store.run_action(&Caller::Player(1), "X", request);
        let buy = store.buy_ticket(1, BuyRequest { key: None, stake_limit_required: false });
        let (act, buy) = (std::mem::size_of_val(&act), std::mem::size_of_val(&buy));
        assert!(act <= 2048 && buy <= 2048, "act {act} bytes, buy {buy} bytes");
        store.close().await.unwrap();
    }

    /// A session remembered by a SQLite server ends at its expiry and at
    /// its logout all the same (an operator's launch lasts at most its
    /// `session_limit_minutes`).
    #[tokio::test]
    async fn a_remembered_session_ends_at_its_expiry_and_at_its_logout() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::sqlite_for_tests(dir.path()).await;
        let hash = "$argon2id$not-checked-here".to_string();
        let player = store.create_player(None, Some(("ines".into(), hash.clone()))).await.unwrap().player_id;
        let (short, long) = ("short-session-token", "long-session-token");
        store.open_session(player, hash.clone(), token_hash(short), now_ms() + 400).await.unwrap();
        store.open_session(player, hash, token_hash(long), now_ms() + 3_600_000).await.unwrap();
        for token in [short, long] {
            let seen = store.authenticate_via(token).await.unwrap();
            assert_eq!(seen, Some((player, Via::Session(token_hash(token)))));
            // Seen again from what the process remembers.
            assert_eq!(store.authenticate(token).await.unwrap(), Some(player));
        }
        assert!(store.auth_cache.read().unwrap().sessions.contains_key(&token_hash(short)));
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert_eq!(store.authenticate(short).await.unwrap(), None, "expired while remembered");
        assert_eq!(store.authenticate(long).await.unwrap(), Some(player));
        store.logout(player, Via::Session(token_hash(long))).await.unwrap();
        assert_eq!(store.authenticate(long).await.unwrap(), None, "logged out while remembered");
        store.close().await.unwrap();
    }
}
