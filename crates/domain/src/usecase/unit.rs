//! What every use case stands on: the [`Unit`] of work a backend gives
//! (its loads and its commit), and what a use case did ([`Outcome`]).

use crate::changes::{Changes, Decision};
use crate::error::{AppError, StoreError};
use crate::limits::Counter;
use crate::rows::{
    Account, AccountId, ForSale, LaunchRow, LimitsRow, PaperRow, PlayerId, Reserved, RoundRow, StoredAnswer, TicketId,
    TicketRow, Usage,
};
use std::future::Future;

/// The loads and the commit a backend provides. Loads that say "locked"
/// lock their row until the unit ends, so that two processes deciding on
/// the same ticket or the same account take turns.
pub trait Unit: Send {
    /// The player's account, locked.
    fn account(&mut self, player: PlayerId) -> impl Future<Output = Result<Option<Account>, StoreError>> + Send;
    /// The player's Idempotency-Key, if used before.
    fn idempotency(
        &mut self,
        player: PlayerId,
        key: &str,
    ) -> impl Future<Output = Result<Option<StoredAnswer>, StoreError>> + Send;
    /// The next unsold ticket, locked (and skipped by other units while it is).
    fn next_for_sale(&mut self) -> impl Future<Output = Result<Option<ForSale>, StoreError>> + Send;
    /// The sold ticket with this serial, locked.
    fn ticket(&mut self, serial: &str) -> impl Future<Output = Result<Option<TicketRow>, StoreError>> + Send;
    /// A paper (or any) ticket by its serial or its play code's hash,
    /// whatever its status, locked.
    fn paper(&mut self, key: &PaperKey) -> impl Future<Output = Result<Option<PaperRow>, StoreError>> + Send;
    /// The action applied at `seq` and its answer.
    fn stored_action(
        &mut self,
        ticket: TicketId,
        seq: u64,
    ) -> impl Future<Output = Result<Option<StoredAnswer>, StoreError>> + Send;
    /// New rows for a player and their account (no money yet).
    fn insert_player(
        &mut self,
        token_hash: &str,
        name: Option<&str>,
        now: i64,
    ) -> impl Future<Output = Result<(PlayerId, AccountId), StoreError>> + Send;
    /// The limits the player set on their play, if any.
    fn limits(&mut self, player: PlayerId) -> impl Future<Output = Result<Option<LimitsRow>, StoreError>> + Send;
    /// The player's online purchases since `day_since` and `week_since`.
    fn usage(
        &mut self,
        player: PlayerId,
        day_since: i64,
        week_since: i64,
    ) -> impl Future<Output = Result<Usage, StoreError>> + Send;
    /// The player holding `login`.
    fn login_owner(&mut self, login: &str) -> impl Future<Output = Result<Option<PlayerId>, StoreError>> + Send;
    /// The player's password hash (`None`: no login yet), the player's
    /// row locked: a login and a change of credentials take turns.
    fn password_hash(&mut self, player: PlayerId) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;
    /// How many of the player's tickets have a game not finished.
    fn tickets_in_play(&mut self, player: PlayerId) -> impl Future<Output = Result<i64, StoreError>> + Send;
    /// A limit's counter (zero when it has none); `lock`: locked until the
    /// unit ends, so that the units counting in it take turns.
    fn counter(&mut self, bucket: &str, lock: bool) -> impl Future<Output = Result<Counter, StoreError>> + Send;
    /// The player known by this operator reference (operator mode).
    fn operator_player(&mut self, reference: &str)
    -> impl Future<Output = Result<Option<PlayerId>, StoreError>> + Send;
    /// Whether a signed call's nonce (`KEY_ID/NONCE`) was seen before.
    fn nonce_seen(&mut self, nonce: &str) -> impl Future<Output = Result<bool, StoreError>> + Send;
    /// A launch code's row, by the code's hash, locked.
    fn launch(&mut self, code_hash: &str) -> impl Future<Output = Result<Option<LaunchRow>, StoreError>> + Send;
    /// A round (`SERIAL.ATTEMPT`) and its ticket, locked.
    fn round(&mut self, round: &str) -> impl Future<Output = Result<Option<Reserved>, StoreError>> + Send;
    /// The player's round of this Idempotency-Key whose debit is still being settled.
    fn pending_round(
        &mut self,
        player: PlayerId,
        key: &str,
    ) -> impl Future<Output = Result<Option<RoundRow>, StoreError>> + Send;
    /// The ticket's last round's attempt number (0: never offered through the operator's wallet).
    fn last_attempt(&mut self, ticket: TicketId) -> impl Future<Output = Result<u32, StoreError>> + Send;
    /// The ticket's sold round, when it was bought through the operator's wallet.
    fn sold_round(&mut self, ticket: TicketId) -> impl Future<Output = Result<Option<RoundRow>, StoreError>> + Send;
    /// The operator's reference of a player (operator mode).
    fn operator_ref(&mut self, player: PlayerId) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;
    /// Writes `changes`; a guarded row that changed since it was loaded
    /// fails with [`StoreError::Stale`].
    fn apply(&mut self, changes: &Changes) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// What a use case did.
#[derive(Debug)]
pub enum Outcome {
    /// The answer stored the first time; nothing was written.
    Replayed(String),
    /// Written into the unit, to be committed.
    Applied(Box<Changes>),
}

/// Commits a decision: a replay writes nothing; changes are written into
/// the unit, which the caller commits.
pub async fn commit(unit: &mut impl Unit, decision: Decision) -> Result<Outcome, AppError> {
    match decision {
        Decision::Replay(answer) => Ok(Outcome::Replayed(answer)),
        Decision::Apply(changes) => {
            unit.apply(&changes).await?;
            Ok(Outcome::Applied(changes))
        }
    }
}

/// Commits changes a decision made.
pub async fn apply(unit: &mut impl Unit, changes: Changes) -> Result<Outcome, AppError> {
    commit(unit, Decision::Apply(Box::new(changes))).await
}

/// The player's account, locked, or 401: the first load of a player's
/// use cases, so that a player's writes take turns.
pub async fn locked_account(unit: &mut impl Unit, player: PlayerId) -> Result<Account, AppError> {
    unit.account(player).await?.ok_or_else(|| AppError::Unauthorized("unknown player".into()))
}

/// How a paper ticket is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaperKey {
    Serial(String),
    /// Hex SHA-256 of the play code's compact form.
    CodeHash(String),
}
