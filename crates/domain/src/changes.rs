//! What a decision writes: one [`Changes`] value (the game's new state, the
//! action, the double-entry [`Movement`], the audit entry, the answer),
//! which a backend commits in one transaction, or a [`Decision`] to replay
//! the answer stored the first time.

use crate::rows::*;
use wallet::TxKind;

/// Everything one decision writes, in one transaction.
#[derive(Debug, Clone)]
pub struct Changes {
    /// A ticket changing hands: `unsold` to `sold`.
    pub sale: Option<Sale>,
    /// The player's seed, recorded with the ticket's first action.
    pub client_seed: Option<ClientSeedWrite>,
    /// The ticket's game after the change.
    pub game: Option<GameWrite>,
    /// The applied action and its answer (guarantee 4).
    pub action: Option<ActionWrite>,
    /// The money that moves (guarantee 3).
    pub movement: Option<Movement>,
    /// A purchase's Idempotency-Key with its answer.
    pub idempotency: Option<IdempotencyWrite>,
    /// The audit log's entry for this change.
    pub audit: Option<AuditRecord>,
    /// The JSON answer, as it is stored and sent.
    pub answer: String,
    /// Rows of an emission being written, or blocks being published.
    pub emission: Option<EmissionRows>,
    /// A paper ticket sold by a shop, paid by a shop, or joining a player's history.
    pub retail: Option<RetailWrite>,
    /// The limits' counters to change ([`crate::limits`]).
    pub counters: Vec<crate::changes::CounterWrite>,
    /// Counters whose window began before this (unix ms) are deleted.
    pub expire_counters_before: Option<i64>,
    /// An emission whose sale ends, with its closing notice.
    pub close: Option<crate::changes::Close>,
    /// A player's login, session or limits ([`PlayerWrite`]).
    pub player: Option<PlayerWrite>,
    /// The operator mode's rows: launches, rounds, the outbox ([`crate::operator`]).
    pub wallet: Vec<crate::changes::WalletWrite>,
    /// Signed calls' nonces seen before this (unix ms) are deleted.
    pub expire_nonces_before: Option<i64>,
    /// A restored database's blocks withdrawn, or their replacement recorded.
    pub restore: Option<RestoreWrite>,
    /// What the change did, for the metrics (counted after COMMIT).
    pub effect: Effect,
}

impl Changes {
    /// Changes that write nothing yet, with their effect.
    pub fn none(effect: Effect) -> Changes {
        Changes {
            sale: None,
            client_seed: None,
            game: None,
            action: None,
            movement: None,
            idempotency: None,
            audit: None,
            answer: String::new(),
            emission: None,
            retail: None,
            counters: Vec::new(),
            expire_counters_before: None,
            close: None,
            player: None,
            wallet: Vec::new(),
            expire_nonces_before: None,
            restore: None,
            effect,
        }
    }
}

/// A sale: the ticket gets its owner (its seed and commitment were fixed
/// when its block was emitted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sale {
    pub ticket_id: TicketId,
    pub owner: PlayerId,
    pub sold_ms: i64,
}

/// A change of a paper ticket's row, each guarded by the status it was decided on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetailWrite {
    /// `printed` to `sold`, by `shop`.
    Sell { ticket_id: TicketId, shop: String, sold_ms: i64 },
    /// `sold` to `paid`, by `shop`.
    Pay { ticket_id: TicketId, shop: String, paid_ms: i64 },
    /// `sold` to `paid` by the operator's payment centre (a claim above a
    /// shop's payout ceiling), with the payment's reference.
    OperatorPay { ticket_id: TicketId, reference: String, prize_cents: i64, paid_ms: i64 },
    /// A redeemed ticket joins a player's history (while it has no owner).
    Owner { ticket_id: TicketId, serial: String, owner: PlayerId },
}

/// The player's seed of a ticket, written once (guarded: while none is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSeedWrite {
    pub ticket_id: TicketId,
    pub client_seed: String,
}

/// A new emission's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmissionRow {
    /// Its number, printed in serials (1 to 999).
    pub id: i64,
    pub code: String,
    pub channel: crate::api::Channel,
    pub table_toml: String,
    pub table_digest: String,
    pub price_cents: i64,
    pub block_size: i64,
    /// Hex; public: the secret is the server key (the server's key ring).
    pub seed_salt: String,
    /// The server key it is made with, for its whole life (its id in the ring).
    pub key_id: i64,
    /// The official notice that announces it (art. 1), if given.
    pub notice_ref: Option<String>,
    pub created_ms: i64,
}

/// A new block's row, not published yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockRow {
    pub id: i64,
    pub emission_id: i64,
    pub number: i64,
    pub size: i64,
    pub root: String,
    pub chunk_roots: String,
    pub created_ms: i64,
}

/// What a server writes of a restore it settles (`restores` row `restore`),
/// each write guarded so that it happens once whichever process makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreWrite {
    /// A database found behind what a server saw of it: marked restored
    /// from `point_ms` (the newest event it holds).
    Mark { point_ms: i64, marked_ms: i64, source: String },
    /// The blocks on sale at the restored point withdrawn (their ids), the
    /// restore settled with the list of them (`withdrawn_json`).
    Settle { restore: i64, blocks: Vec<i64>, at_ms: i64, withdrawn_json: String },
    /// The emissions that replace them published (`replaced_json`).
    Replaced { restore: i64, at_ms: i64, replaced_json: String },
}

/// Rows of an emission, written in several units (a block's tickets in
/// chunks), then published in one.
#[derive(Debug, Clone, Default)]
pub struct EmissionRows {
    pub emission: Option<EmissionRow>,
    pub block: Option<BlockRow>,
    /// Tickets of `tickets_block`, in sale order.
    pub tickets: std::sync::Arc<[crate::supply::TicketSpec]>,
    pub tickets_block: i64,
    /// The initial status of these tickets: `unsold` (online) or `printed`
    /// (paper), [`crate::TicketStatus::first`].
    pub tickets_status: crate::rows::TicketStatus,
    /// Blocks to publish (their ids), at `published_ms`.
    pub publish: Vec<i64>,
    pub published_ms: i64,
}

/// A ticket's game row after a change: created (`from_seq` `None`) or moved
/// on from `from_seq` (the write is guarded by it).
#[derive(Debug, Clone)]
pub struct GameWrite {
    pub row: TicketRow,
    pub from_seq: Option<u64>,
    pub finished_ms: Option<i64>,
    /// The action moved the game to another phase (always so for a new
    /// game row): an update that neither changes the phase nor finishes
    /// the game writes only its `seq` and state, and the triggers that
    /// watch the phase and the prize are not even considered.
    pub phase_changed: bool,
}

/// The row of an applied action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionWrite {
    pub ticket_id: TicketId,
    pub seq: u64,
    pub request_json: String,
    pub created_ms: i64,
    /// The one draw the action took: number `seq` of the ticket's stream
    /// (every action takes exactly one, so draw `n` is action `n`'s).
    pub draw: record::RecordDraw,
}

/// An Idempotency-Key's row (its answer is [`Changes::answer`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyWrite {
    pub player: PlayerId,
    pub key: String,
    pub request_json: String,
    pub ticket_id: TicketId,
    pub created_ms: i64,
}

/// Why money moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    StartBalance,
    TicketSale,
    /// A paper ticket sold by a shop: the shop owes its price.
    RetailSale,
    Prize,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::StartBalance => "start_balance",
            Reason::TicketSale => "ticket_sale",
            Reason::RetailSale => "retail_sale",
            Reason::Prize => "prize",
        }
    }
}

/// A player's stored balance before and after a movement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BalanceChange {
    pub player: PlayerId,
    pub account: AccountId,
    pub before: i64,
    pub after: i64,
}

/// One double-entry movement (guarantee 3): `amount_cents` leaves `from`
/// and reaches `to`, two ledger entries summing to zero. One of the two
/// accounts is a player's, whose stored balance changes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Movement {
    /// The natural key: `sale:<ticket>`, `prize:<ticket>`, `start:<player>`.
    /// A ticket is sold, and its prize paid, at most once: the database's
    /// primary key says so too, whichever process writes it.
    pub id: String,
    pub reason: Reason,
    pub ticket_id: Option<TicketId>,
    pub from: AccountId,
    pub to: AccountId,
    pub amount_cents: i64,
    /// The player's stored balance, when a player's account moves.
    pub player_balance: Option<BalanceChange>,
    pub created_ms: i64,
}

impl Reason {
    /// Which house account pays or is paid, and whether the money goes to
    /// the player.
    fn house(self) -> (AccountId, bool) {
        match self {
            Reason::StartBalance => (HOUSE_PLAY_MONEY, true),
            Reason::TicketSale | Reason::RetailSale => (HOUSE_SALES, false),
            Reason::Prize => (HOUSE_PRIZES, true),
        }
    }
}

/// The natural key of a movement.
fn movement_id(reason: Reason, ticket_id: Option<TicketId>, player: PlayerId) -> String {
    match (reason, ticket_id) {
        (Reason::TicketSale, Some(t)) => format!("sale:{t}"),
        (Reason::RetailSale, Some(t)) => format!("retail_sale:{t}"),
        // Migration 11's PostgreSQL trigger on ledger entries looks only at
        // movements whose id starts with "prize:" (the ledger check's
        // recount of the paid prizes would show any other).
        (Reason::Prize, Some(t)) => format!("prize:{t}"),
        _ => format!("start:{player}"),
    }
}

impl Movement {
    /// `amount` cents between the player's account and the house account
    /// of `reason`; the movement's key follows from both.
    pub(crate) fn new(
        reason: Reason,
        ticket_id: Option<TicketId>,
        player: &Account,
        amount: i64,
        now: i64,
    ) -> Movement {
        let (house, to_player) = reason.house();
        let (from, to, after) = if to_player {
            (house, player.id, player.balance_cents + amount)
        } else {
            (player.id, house, player.balance_cents - amount)
        };
        let id = movement_id(reason, ticket_id, player.player);
        Movement {
            id,
            reason,
            ticket_id,
            from,
            to,
            amount_cents: amount,
            player_balance: Some(BalanceChange {
                player: player.player,
                account: player.id,
                before: player.balance_cents,
                after,
            }),
            created_ms: now,
        }
    }

    /// `amount` cents between a shop's account and the house account of
    /// `reason` (a paper ticket sold, or its prize paid by the shop).
    pub fn retail(reason: Reason, ticket_id: TicketId, shop_account: AccountId, amount: i64, now: i64) -> Movement {
        let (house, to_shop) = reason.house();
        let (from, to) = if to_shop { (house, shop_account) } else { (shop_account, house) };
        Movement::house(reason, ticket_id, from, to, amount, now)
    }

    /// `amount` cents between two accounts without a stored balance: house
    /// accounts, a shop's, or the operator's wallet (the house's clearing
    /// account of the operator mode).
    pub fn house(
        reason: Reason,
        ticket_id: TicketId,
        from: AccountId,
        to: AccountId,
        amount: i64,
        now: i64,
    ) -> Movement {
        Movement {
            id: movement_id(reason, Some(ticket_id), 0),
            reason,
            ticket_id: Some(ticket_id),
            from,
            to,
            amount_cents: amount,
            player_balance: None,
            created_ms: now,
        }
    }

    /// The player's balance after it, if a player's account moves.
    pub fn balance_after(&self) -> Option<i64> {
        self.player_balance.map(|b| b.after)
    }

    /// The two ledger entries: `(account, amount)`, summing to zero.
    pub fn entries(&self) -> [(AccountId, i64); 2] {
        [(self.from, -self.amount_cents), (self.to, self.amount_cents)]
    }
}

/// An audit log entry before it is chained (see `store::audit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub created_ms: i64,
    pub kind: &'static str,
    pub data_json: String,
}

/// What a change did, for the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    PlayerCreated,
    Sold,
    Played {
        finished_prize: Option<u64>,
    },
    /// Rows of an emission written or published.
    Emission,
    /// A paper ticket sold, redeemed or paid.
    Retail,
    /// A wrong play code counted; `filled`: its network's limit is now reached.
    WrongCode {
        filled: bool,
    },
    /// A limit's counter changed (an attempt admitted).
    Counted,
    /// A player's login, session or limits changed.
    Player,
    /// A launch, a round's step or the outbox's (operator mode).
    Wallet,
}

/// A write of a player's row, session or limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlayerWrite {
    /// The limits row (created or replaced).
    Limits { player: PlayerId, row: LimitsRow, updated_ms: i64 },
    /// A login and password hash, guarded by the hash they replace. The
    /// player's sessions end, but `keep_session` (the one the change came
    /// with, by its token's hash); `revoke_own_token`: the player's own
    /// token stops working too (the change came with a session).
    Credentials {
        player: PlayerId,
        login: String,
        password_hash: String,
        was: Option<String>,
        keep_session: Option<String>,
        revoke_own_token: bool,
        /// The recovery code's hash written with them (at registration), if any.
        recovery_hash: Option<String>,
    },
    /// A session opened with the login and password.
    OpenSession { token_hash: String, player: PlayerId, created_ms: i64, expires_ms: i64 },
    /// A session closed (logout).
    CloseSession { token_hash: String },
    /// The player's own token revoked (logout with it): it never works again.
    RevokeOwnToken { player: PlayerId },
    /// A new password set with the recovery code, guarded by the recovery
    /// hash it was checked against (a code works once): a new recovery
    /// hash, every token of the player ends, and a new session opens.
    Recover {
        player: PlayerId,
        password_hash: String,
        recovery_hash: String,
        was_recovery: String,
        session_token_hash: String,
        created_ms: i64,
        expires_ms: i64,
    },
    /// A new recovery code's hash, guarded by the password hash the request was checked against.
    SetRecovery { player: PlayerId, recovery_hash: String, password_was: String },
    /// The account closed: its login, password and recovery hashes go,
    /// every token ends; its tickets, games and movements stay.
    Close { player: PlayerId, closed_ms: i64, password_was: Option<String> },
}

/// What a decision leads to when it is not a refusal.
#[derive(Debug, Clone)]
pub enum Decision {
    /// The request was applied before: its stored answer, byte for byte.
    Replay(String),
    /// Write these, in one transaction.
    Apply(Box<Changes>),
}

/// A launch asked for by the operator, checked by the HTTP layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchWrite {
    pub code_hash: String,
    pub player: PlayerId,
    pub language: String,
    pub country: Option<String>,
    pub flags_json: String,
    pub lobby_url: Option<String>,
    pub created_ms: i64,
    pub expires_ms: i64,
}

/// An entry of the outbox: a request sent until the operator acknowledges it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxWrite {
    pub transaction_id: String,
    pub round: String,
    pub kind: TxKind,
    pub amount_cents: i64,
    pub body_json: String,
    pub created_ms: i64,
}

/// The rows the operator mode writes, each in the unit of its decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalletWrite {
    /// A signed call's nonce, seen once.
    Nonce { nonce: String, seen_ms: i64 },
    /// A new player's operator reference.
    OperatorPlayer { player: PlayerId, reference: String },
    /// A launch code.
    Launch(LaunchWrite),
    /// A launch code used (guarded: once).
    LaunchUsed { code_hash: String, used_ms: i64, session_hash: String },
    /// A new round (its ticket is held by [`Changes::sale`]).
    NewRound {
        round: String,
        ticket_id: TicketId,
        attempt: u32,
        player: PlayerId,
        /// The player's operator reference (not written: the round's row
        /// has the player; SQLite's writer remembers the round with it).
        operator_ref: String,
        price_cents: i64,
        key: Option<String>,
        created_ms: i64,
    },
    /// A round moves on (guarded by the state it was decided on).
    Round { round: String, from: RoundState, to: RoundState, refusal: Option<String>, settled_ms: i64 },
    /// The held ticket goes back to the pool (guarded: still held by `owner`, without a game).
    Release { ticket_id: TicketId, owner: PlayerId },
    /// A request for the outbox.
    Outbox(OutboxWrite),
    /// An outbox entry acknowledged (guarded: once).
    Acked { transaction_id: String, acked_ms: i64 },
    /// An outbox entry's attempt (guarded by the attempts it was decided on):
    /// when to try next, and why the last one failed.
    Attempt { transaction_id: String, attempts: i64, next_ms: i64, error: Option<String> },
    /// Why an outbox entry's last attempt failed (not guarded: a note).
    Failed { transaction_id: String, error: String },
}

/// A change of one counter: `add` to its count in the window (a window that
/// began at or before `now - window_ms` starts again at `now`); `admit`
/// sets the last admitted attempt to `now`; `reset` empties it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterWrite {
    pub bucket: String,
    pub now: i64,
    pub window_ms: i64,
    pub add: i64,
    pub admit: bool,
    pub reset: bool,
}

/// The close of an emission's sale: its closing notice and the deadline
/// that follows from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Close {
    pub emission: i64,
    pub sale_end_ms: i64,
    /// The closing notice's date, `YYYY-MM-DD`.
    pub notice_date: String,
    /// The closing notice's reference, if the operator gave it.
    pub notice_ref: Option<String>,
    pub claim_end_ms: i64,
}

/// The canonical text of a purchase request, to tell a retry (same key,
/// same body) from a reuse of the key for another purchase. A purchase has
/// no body any more: every purchase with the same key is the same request.
pub fn buy_request_json() -> String {
    "{}".to_string()
}
