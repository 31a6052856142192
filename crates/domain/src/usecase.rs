//! The use cases, each **load, decide, commit**, written once for every
//! backend. A backend gives a [`Unit`] of work: one transaction on
//! PostgreSQL, one savepoint of a group commit on SQLite. The caller
//! commits that unit when the outcome is [`Outcome::Applied`] and rolls it
//! back otherwise.

use super::Decision;
use super::account::{self, LimitsRequest};
use super::limits::{self, Ceiling, Counter, RedeemLimits};
use super::operator::{self, DebitOutcome, LaunchRow, LaunchWrite, Reserved, RoundRow};
use super::{
    Account, AccountId, Caller, Changes, ForSale, LimitsRow, PaperRow, PlayerId, StoredAnswer, TicketId, TicketRow,
    Usage,
};
use super::{online, retail};
use crate::api::{ActionRequest, ClientSeed, IdempotencyKey};
use crate::error::{AppError, StoreError};
use std::future::Future;

/// The price of a ticket (art. 2, docs/rules.md), in cents, as the ledger counts them.
const REGULATION_PRICE_CENTS: i64 = math::table::REGULATION_PRICE_CENTS as i64;

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

/// A purchase request. It draws nothing: the ticket's server seed was
/// fixed when its block was emitted, the player's comes with the first action.
#[derive(Debug, Clone)]
pub struct BuyRequest {
    pub key: Option<IdempotencyKey>,
    /// The player must have a limit on stakes over seven days (config).
    pub stake_limit_required: bool,
}

/// A new player and their play money.
pub async fn create_player(
    unit: &mut impl Unit,
    token_hash: &str,
    name: Option<&str>,
    credentials: Option<&(String, String)>,
    recovery_hash: Option<&str>,
    start_balance: i64,
    now: i64,
) -> Result<(PlayerId, Box<Changes>), AppError> {
    let (player, account) = unit.insert_player(token_hash, name, now).await?;
    let mut changes = account::new_player(player, account, start_balance, now);
    // A login given at registration is written in the same unit, with its recovery code's hash.
    if let Some((login, hash)) = credentials {
        changes.player =
            account::set_credentials(player, None, None, None, login, hash, &account::Via::OwnToken, now)?.player;
        if let Some(super::PlayerWrite::Credentials { recovery_hash: r, .. }) = changes.player.as_mut() {
            *r = recovery_hash.map(str::to_string);
        }
    }
    unit.apply(&changes).await?;
    Ok((player, Box::new(changes)))
}

/// Debits the price and sells the next ticket, once per Idempotency-Key.
/// The account is locked first: a player's purchases take turns, so a key
/// sent twice at once is decided once and replayed once.
pub async fn buy(unit: &mut impl Unit, player: PlayerId, request: &BuyRequest, now: i64) -> Result<Outcome, AppError> {
    let account = unit.account(player).await?.ok_or_else(|| AppError::Unauthorized("unknown player".into()))?;
    let stored = match &request.key {
        Some(key) => unit.idempotency(player, key.as_str()).await?,
        None => None,
    };
    if let Some(stored) = stored {
        return commit(unit, online::buy(&account, Some(stored), None, request, now)?).await;
    }
    // The limits the player set, checked here, in the purchase's unit:
    // the account is locked, so the player's purchases are counted in turn.
    let for_sale = unit.next_for_sale().await?;
    let limits = unit.limits(player).await?;
    if limits.is_some() || request.stake_limit_required {
        let limits = limits.unwrap_or_default();
        let (day, week) = account::windows(now);
        let usage = unit.usage(player, day, week).await?;
        let price = for_sale.as_ref().map_or(REGULATION_PRICE_CENTS, |s| s.price_cents);
        account::check_purchase(&limits, &usage, price, request.stake_limit_required, now)?;
    }
    commit(unit, online::buy(&account, None, for_sale, request, now)?).await
}

/// Applies a game action exactly once (guarantee 4). The ticket is locked
/// first, then the account: the same order everywhere, so two units never
/// wait for each other in a circle (a purchase never waits for a ticket).
pub async fn play_action(
    unit: &mut impl Unit,
    caller: &Caller,
    serial: &str,
    request: ActionRequest,
    random_client_seed: &ClientSeed,
    operator_wallet: bool,
    now: i64,
) -> Result<Outcome, AppError> {
    let ticket = unit.ticket(serial).await?;
    let (mut stored, mut payee, mut player) = (None, online::Payee::Nobody, None);
    if let Some(t) = ticket.as_ref().filter(|t| caller.may_play(t)) {
        let seq = t.ticket.game.seq();
        if request.seq < seq {
            stored = unit.stored_action(t.id, request.seq).await?;
        } else if request.seq == seq
            && let Some(p) = caller.player()
        {
            player = Some((p, t.id));
            payee = match operator_wallet {
                // Who is paid is loaded only when the action wins a prize.
                true => online::Payee::Deferred,
                false => unit.account(p).await?.map_or(online::Payee::Nobody, online::Payee::Account),
            };
        }
    }
    let again = matches!(payee, online::Payee::Deferred).then(|| (ticket.clone(), request.clone()));
    let decision = online::decide_action(caller, ticket, stored, payee, request, random_client_seed, now)?;
    if let (Some((ticket, request)), Some((p, ticket_id))) = (again, player)
        && wins_online(&decision)
    {
        // Bought through the operator's wallet, its prize is credited there;
        // else to the player's account. The same inputs decide the same game.
        let payee = match unit.sold_round(ticket_id).await? {
            Some(r) => online::Payee::Round(r),
            None => unit.account(p).await?.map_or(online::Payee::Nobody, online::Payee::Account),
        };
        let decision = online::decide_action(caller, ticket, None, payee, request, random_client_seed, now)?;
        return commit(unit, decision).await;
    }
    commit(unit, decision).await
}

/// Whether a decision finishes an online game with a prize.
fn wins_online(decision: &Decision) -> bool {
    match decision {
        Decision::Apply(c) => {
            let online = c.game.as_ref().is_some_and(|g| g.row.ticket.channel == crate::api::Channel::Online);
            online && matches!(c.effect, super::Effect::Played { finished_prize: Some(p) } if p > 0)
        }
        Decision::Replay(_) => false,
    }
}

/// The player's limits and usage, their account locked first (a purchase's
/// lock order: limits are decided in turn with the player's purchases).
async fn limits_and_usage(
    unit: &mut impl Unit,
    player: PlayerId,
    now: i64,
) -> Result<(Option<LimitsRow>, Usage), AppError> {
    unit.account(player).await?.ok_or_else(|| AppError::Unauthorized("unknown player".into()))?;
    let (day, week) = account::windows(now);
    Ok((unit.limits(player).await?, unit.usage(player, day, week).await?))
}

async fn commit(unit: &mut impl Unit, decision: Decision) -> Result<Outcome, AppError> {
    match decision {
        Decision::Replay(answer) => Ok(Outcome::Replayed(answer)),
        Decision::Apply(changes) => {
            unit.apply(&changes).await?;
            Ok(Outcome::Applied(changes))
        }
    }
}

/// Opens the paper ticket of a play code. The client's network is locked
/// first: its attempts take turns, so attempts sent at once never look up
/// more codes than its limit allows. A right code is never counted, and a
/// wrong one is counted in the same unit that looked it up, so that no
/// lost connection or crash can count a right code or lose a wrong one.
async fn redeem(
    unit: &mut impl Unit,
    code_hash: &str,
    player: Option<PlayerId>,
    token: &str,
    network: &str,
    (limits, rows): (&RedeemLimits, Option<&Ceiling>),
    now: i64,
) -> Result<Outcome, AppError> {
    let bucket = limits::redeem_bucket(network);
    let net = unit.counter(&bucket, true).await?;
    let global = unit.counter(limits::REDEEM_GLOBAL, false).await?;
    limits::redeem_admit(&net, &global, limits, now)?;
    // A wrong code from a network without a window adds a row: under the
    // ceiling on the counters opened, checked before the look-up, so that
    // past it no code is looked up uncounted.
    let opens = rows.filter(|_| net.count_at(now, limits.window_ms) == 0);
    let mut opened = None;
    if let Some(rows) = opens {
        opened = rows.admit(&unit.counter(&rows.bucket(), true).await?, 1, now)?;
    }
    let Some(row) = unit.paper(&PaperKey::CodeHash(code_hash.to_string())).await? else {
        let filled = limits::redeem_fills(&net, &global, limits, now);
        let mut counters = limits::redeem_wrong(&bucket, limits, now);
        counters.extend(opened);
        let changes = Changes { counters, ..Changes::none(super::Effect::WrongCode { filled }) };
        return commit(unit, Decision::Apply(Box::new(changes))).await;
    };
    let changes = retail::redeem(Some(row), player, token, now)?;
    if changes.game.is_some() || changes.retail.is_some() {
        commit(unit, Decision::Apply(Box::new(changes))).await
    } else {
        // The same code again: nothing to write, the ticket as it is.
        Ok(Outcome::Replayed(changes.answer))
    }
}

/// One limit an attempt must pass ([`Op::Admit`]).
#[derive(Debug, Clone)]
pub enum Admission {
    /// At most `limit` attempts per window from one client network (0: no
    /// limit), and under `ceiling` from everyone.
    Network { bucket: String, limit: u32, window_ms: i64, what: &'static str, ceiling: Option<Ceiling> },
    /// A password check of one account, counted in the account's bucket
    /// or a known device's ([`limits::login_admit`]).
    Account { bucket: String },
}

impl Admission {
    /// The counter it counts in (none: a network without a limit).
    fn bucket(&self) -> Option<&str> {
        match self {
            Admission::Network { limit: 0, .. } => None,
            Admission::Network { bucket, .. } | Admission::Account { bucket, .. } => Some(bucket),
        }
    }

    /// The global ceiling it is under, if any.
    pub fn ceiling(&self) -> Option<&Ceiling> {
        match self {
            Admission::Network { ceiling, .. } => ceiling.as_ref(),
            Admission::Account { .. } => None,
        }
    }

    fn decide(&self, counter: &Counter, now: i64) -> Result<Option<limits::CounterWrite>, AppError> {
        match self {
            Admission::Network { bucket, limit, window_ms, what, .. } => {
                limits::attempt(bucket, counter, *limit, *window_ms, what, now)
            }
            Admission::Account { bucket } => limits::login_admit(bucket, counter, now),
        }
    }
}

/// Admits an attempt past its limits, counting it, or refuses it: each
/// client's counter (locked) first, then the global ceilings in their
/// order ([`limits::CEILINGS`]), last `rows`, the ceiling on the counters'
/// windows opened (the rows anonymous clients add to `limit_counters`),
/// which only an attempt that opens one reads. Refused: nothing counted.
async fn admit(
    unit: &mut impl Unit,
    admissions: &[Admission],
    rows: Option<&Ceiling>,
    now: i64,
) -> Result<Outcome, AppError> {
    let mut changes = Changes::none(super::Effect::Counted);
    let mut opened = 0;
    for a in admissions {
        let Some(bucket) = a.bucket() else { continue };
        let counter = unit.counter(bucket, true).await?;
        if let Some(write) = a.decide(&counter, now)? {
            opened += i64::from(counter.count_at(now, write.window_ms) == 0);
            changes.counters.push(write);
        }
    }
    let mut ceilings: Vec<&Ceiling> = admissions.iter().filter_map(Admission::ceiling).collect();
    ceilings.sort_by_key(|c| limits::CEILINGS.iter().position(|n| *n == c.name));
    for c in ceilings {
        let counter = unit.counter(&c.bucket(), true).await?;
        changes.counters.extend(c.admit(&counter, 1, now)?);
    }
    if let Some(rows) = rows.filter(|_| opened > 0) {
        let counter = unit.counter(&rows.bucket(), true).await?;
        changes.counters.extend(rows.admit(&counter, opened, now)?);
    }
    if changes.counters.is_empty() {
        Ok(Outcome::Replayed(String::new()))
    } else {
        commit(unit, Decision::Apply(Box::new(changes))).await
    }
}

/// How a paper ticket is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaperKey {
    Serial(String),
    /// Hex SHA-256 of the play code's compact form.
    CodeHash(String),
}

/// A write request, as a backend's shell receives it.
#[derive(Debug, Clone)]
pub enum Op {
    CreatePlayer {
        token_hash: String,
        name: Option<String>,
        start_balance: i64,
        /// A login and its password's hash, given at registration.
        credentials: Option<(String, String)>,
        /// The recovery code's hash, with the login (issue 31).
        recovery_hash: Option<String>,
    },
    /// New limits on the player's play (the server's rules: the cooling-off before a raise applies).
    SetLimits {
        player: PlayerId,
        request: LimitsRequest,
        rules: account::LimitRules,
    },
    /// A self-exclusion of `days`.
    SelfExclude {
        player: PlayerId,
        days: i64,
        rules: account::LimitRules,
    },
    /// A login and password hash; `was`: the hash the request was checked
    /// against; `via`: the token it came with (the one that keeps working).
    SetCredentials {
        player: PlayerId,
        login: String,
        password_hash: String,
        was: Option<String>,
        via: account::Via,
    },
    /// A session, once the password matched the hash `verified`.
    OpenSession {
        player: PlayerId,
        verified: String,
        token_hash: String,
        expires_ms: i64,
    },
    /// A logout: the token the request came with stops working.
    Logout {
        player: PlayerId,
        via: account::Via,
    },
    Buy {
        player: PlayerId,
        request: BuyRequest,
    },
    /// A new password with the recovery code whose hash `verified` matched (issue 31).
    Recover {
        player: PlayerId,
        verified: String,
        password_hash: String,
        recovery_hash: String,
        session_token_hash: String,
        expires_ms: i64,
    },
    /// A new recovery code, once the password matched the hash `password_was`.
    RenewRecovery {
        player: PlayerId,
        password_was: String,
        recovery_hash: String,
    },
    /// The account closed, once its password matched `password_was` (`None`: an account without one).
    Close {
        player: PlayerId,
        password_was: Option<String>,
    },
    /// A game action; `random_client_seed` is the seed a first action
    /// without one gets (drawn beforehand: decisions draw nothing).
    PlayAction {
        caller: Caller,
        serial: String,
        request: ActionRequest,
        random_client_seed: ClientSeed,
        /// Tickets bought through the operator's wallet are credited there.
        operator_wallet: bool,
    },
    /// A shop sells a paper ticket (`ceiling`: its payout ceiling, for the answer's words).
    Sell {
        shop: String,
        shop_account: AccountId,
        ceiling: i64,
        serial: String,
    },
    /// A shop pays a won paper ticket, up to its payout ceiling.
    Pay {
        shop: String,
        shop_account: AccountId,
        any_shop: bool,
        ceiling: i64,
        serial: String,
    },
    /// The operator's payment centre pays a won paper ticket above the
    /// payout ceiling of the shop that sold it (`ceilings`), into the
    /// account `centre`.
    ClaimPay {
        serial: String,
        reference: String,
        ceilings: std::sync::Arc<crate::retail::PayoutCeilings>,
        centre: AccountId,
    },
    /// A play code opens its paper ticket; `token` is the ticket's own.
    /// A wrong code is counted against the client's `network`
    /// ([`limits::network`]) in the same unit that looks it up.
    Redeem {
        code_hash: String,
        player: Option<PlayerId>,
        token: String,
        network: String,
        limits: RedeemLimits,
        /// The ceiling on the limits' counters opened (a new network's).
        rows: Option<Ceiling>,
    },
    /// An attempt admitted or refused by the limits on guessing (logins,
    /// registrations, demo games), counted when admitted; `rows`: the
    /// ceiling on the limits' counters opened.
    Admit {
        admissions: Vec<Admission>,
        rows: Option<Ceiling>,
    },
    /// Rows decided outside a player's request (an emission's), written as they are.
    Apply(Box<Changes>),
    /// The operator launches a game for a player (its signed call checked).
    Launch(Box<LaunchOp>),
    /// A launch code exchanged for a session of its player.
    Exchange {
        code_hash: String,
        session_hash: String,
        session_expires_ms: i64,
    },
    /// A purchase's first step in operator mode: the ticket held, the round recorded.
    Reserve {
        player: PlayerId,
        key: Option<String>,
    },
    /// A purchase's second step: the debit's fate.
    Settle {
        round: String,
        outcome: DebitOutcome,
    },
    /// A rollback acknowledged: the round released, its ticket back in the pool.
    RollbackAcknowledged {
        round: String,
        transaction_id: String,
    },
}

/// A launch, its signature checked ([`Op::Launch`]).
#[derive(Debug, Clone)]
pub struct LaunchOp {
    /// `KEY_ID/NONCE` of the signed call.
    pub nonce: String,
    /// The operator's reference of the player.
    pub reference: String,
    /// A new player's own token's hash: of a random token nobody is given,
    /// so that an operator's player comes in through launches only.
    pub unheld_token_hash: String,
    /// The launch's row (its `player` is found or made here).
    pub write: LaunchWrite,
    /// The answer (the launch URL, the code, its expiry).
    pub answer: String,
}

/// What a write request gave: the answer, and what it did once committed.
#[derive(Debug, Clone)]
pub struct Done {
    /// The new player's id, for [`Op::CreatePlayer`].
    pub player: Option<PlayerId>,
    /// The JSON answer as stored (empty for a new player).
    pub answer: String,
    /// `None` for a replay: nothing was written.
    pub effect: Option<super::Effect>,
}

/// Runs one write request on a unit: the one entry point of every shell.
pub async fn run(unit: &mut impl Unit, op: &Op, now: i64) -> Result<Done, AppError> {
    let outcome = match op {
        Op::CreatePlayer { token_hash, name, start_balance, credentials, recovery_hash } => {
            if let Some((login, _)) = credentials
                && unit.login_owner(login).await?.is_some()
            {
                return Err(account::login_taken(login));
            }
            let (player, changes) = create_player(
                unit,
                token_hash,
                name.as_deref(),
                credentials.as_ref(),
                recovery_hash.as_deref(),
                *start_balance,
                now,
            )
            .await?;
            return Ok(Done { player: Some(player), answer: String::new(), effect: Some(changes.effect) });
        }
        Op::SetLimits { player, request, rules } => {
            let (current, usage) = limits_and_usage(unit, *player, now).await?;
            let changes = account::set_limits(*player, current, *request, &usage, *rules, now)?;
            commit(unit, Decision::Apply(Box::new(changes))).await?
        }
        Op::SelfExclude { player, days, rules } => {
            let (current, usage) = limits_and_usage(unit, *player, now).await?;
            let changes = account::self_exclude(*player, current, *days, &usage, *rules, now)?;
            commit(unit, Decision::Apply(Box::new(changes))).await?
        }
        Op::SetCredentials { player, login, password_hash, was, via } => {
            unit.account(*player).await?.ok_or_else(|| AppError::Unauthorized("unknown player".into()))?;
            let owner = unit.login_owner(login).await?;
            let current = unit.password_hash(*player).await?;
            let changes =
                account::set_credentials(*player, current, was.clone(), owner, login, password_hash, via, now)?;
            commit(unit, Decision::Apply(Box::new(changes))).await?
        }
        Op::OpenSession { player, verified, token_hash, expires_ms } => {
            let current = unit.password_hash(*player).await?;
            let changes = account::open_session(*player, current, verified, token_hash, *expires_ms, now)?;
            commit(unit, Decision::Apply(Box::new(changes))).await?
        }
        Op::Logout { player, via } => {
            let current = match via {
                account::Via::OwnToken => unit.password_hash(*player).await?,
                account::Via::Session(_) => None,
            };
            let changes = account::logout(*player, via, current.as_deref(), now)?;
            commit(unit, Decision::Apply(Box::new(changes))).await?
        }
        Op::Buy { player, request } => buy(unit, *player, request, now).await?,
        Op::Recover { player, verified, password_hash, recovery_hash, session_token_hash, expires_ms } => {
            // Read for its lock (PostgreSQL): a login racing the recovery
            // waits for it, and then finds the new password.
            unit.password_hash(*player).await?;
            let changes =
                account::recover(*player, verified, password_hash, recovery_hash, session_token_hash, *expires_ms, now);
            commit(unit, Decision::Apply(Box::new(changes))).await?
        }
        Op::RenewRecovery { player, password_was, recovery_hash } => {
            let changes = account::renew_recovery(*player, password_was, recovery_hash, now);
            commit(unit, Decision::Apply(Box::new(changes))).await?
        }
        Op::Close { player, password_was } => {
            // The account locked first, as a purchase's: no ticket is bought while it closes.
            let account =
                unit.account(*player).await?.ok_or_else(|| AppError::Unauthorized("unknown player".into()))?;
            let current = unit.password_hash(*player).await?;
            // Its self-exclusion, if any: closing does not undo it (the second outside audit).
            let limits = unit.limits(*player).await?;
            let in_play = unit.tickets_in_play(*player).await?;
            let changes =
                account::close(*player, password_was.clone(), current, limits, in_play, account.balance_cents, now)?;
            commit(unit, Decision::Apply(Box::new(changes))).await?
        }
        Op::PlayAction { caller, serial, request, random_client_seed, operator_wallet } => {
            play_action(unit, caller, serial, request.clone(), random_client_seed, *operator_wallet, now).await?
        }
        Op::Launch(l) => {
            let seen = unit.nonce_seen(&l.nonce).await?;
            let mut write = l.write.clone();
            let new_player = match unit.operator_player(&l.reference).await? {
                Some(player) => {
                    write.player = player;
                    false
                }
                None if seen => false,
                None => {
                    write.player = unit.insert_player(&l.unheld_token_hash, Some(&l.reference), now).await?.0;
                    true
                }
            };
            let new = new_player.then_some((write.player, l.reference.as_str()));
            commit(unit, Decision::Apply(Box::new(operator::launch(seen, &l.nonce, new, write, l.answer.clone())?)))
                .await?
        }
        Op::Exchange { code_hash, session_hash, session_expires_ms } => {
            let launch = unit.launch(code_hash).await?;
            let changes = operator::exchange(code_hash, launch, session_hash, *session_expires_ms, now)?;
            commit(unit, Decision::Apply(Box::new(changes))).await?
        }
        Op::Reserve { player, key } => {
            // The account is locked first, as a purchase's: a player's
            // purchases take turns, so one key sent at once reserves once.
            unit.account(*player).await?.ok_or_else(|| AppError::Unauthorized("unknown player".into()))?;
            let reference =
                unit.operator_ref(*player).await?.ok_or_else(|| AppError::Unauthorized("unknown player".into()))?;
            // The key's round still settling is read before its stored
            // answer: a settlement committing between the two reads is then
            // seen by the second (read in the other order, a purchase settled
            // in between was neither pending nor stored, and its key reserved
            // a second ticket, on PostgreSQL).
            let (stored, pending) = match key {
                Some(k) => {
                    let pending = unit.pending_round(*player, k).await?;
                    (unit.idempotency(*player, k).await?, pending)
                }
                None => (None, None),
            };
            let for_sale = match (&stored, &pending) {
                (None, None) => unit.next_for_sale().await?,
                _ => None,
            };
            let last = match &for_sale {
                Some(ForSale { last_attempt: Some(n), .. }) => *n,
                Some(s) => unit.last_attempt(s.ticket_id).await?,
                None => 0,
            };
            commit(unit, operator::reserve(*player, &reference, key.as_deref(), stored, pending, for_sale, last, now)?)
                .await?
        }
        Op::Settle { round, outcome } => {
            let reserved =
                unit.round(round).await?.ok_or_else(|| AppError::internal(format!("round {round} is not stored")))?;
            commit(unit, Decision::Apply(Box::new(operator::settle(reserved, outcome, now)?))).await?
        }
        Op::RollbackAcknowledged { round, transaction_id } => {
            let reserved =
                unit.round(round).await?.ok_or_else(|| AppError::internal(format!("round {round} is not stored")))?;
            let changes = operator::rollback_acknowledged(reserved.round, transaction_id, now)?;
            commit(unit, Decision::Apply(Box::new(changes))).await?
        }
        Op::Sell { shop, shop_account, ceiling, serial } => {
            let row = unit.paper(&PaperKey::Serial(serial.clone())).await?;
            commit(unit, retail::sell(shop, *shop_account, *ceiling, row, now)?).await?
        }
        Op::Pay { shop, shop_account, any_shop, ceiling, serial } => {
            let row = unit.paper(&PaperKey::Serial(serial.clone())).await?;
            commit(unit, retail::pay(shop, *shop_account, *any_shop, *ceiling, row, now)?).await?
        }
        Op::ClaimPay { serial, reference, ceilings, centre } => {
            let row = unit.paper(&PaperKey::Serial(serial.clone())).await?;
            // The ceiling of the shop that sold it: where its holder would be paid.
            let ceiling = ceilings.of(row.as_ref().and_then(|r| r.retail.sold_by.as_deref()).unwrap_or(""));
            commit(unit, super::claims::operator_pay(row, reference, ceiling, *centre, now)?).await?
        }
        Op::Redeem { code_hash, player, token, network, limits, rows } => {
            redeem(unit, code_hash, *player, token, network, (limits, rows.as_ref()), now).await?
        }
        Op::Admit { admissions, rows } => admit(unit, admissions, rows.as_ref(), now).await?,
        Op::Apply(changes) => {
            unit.apply(changes).await?;
            Outcome::Applied(changes.clone())
        }
    };
    Ok(match outcome {
        Outcome::Replayed(answer) => Done { player: None, answer, effect: None },
        Outcome::Applied(changes) => Done { player: None, effect: Some(changes.effect), answer: changes.answer },
    })
}
