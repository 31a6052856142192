//! The storage-independent core ("functional core, imperative shell").
//!
//! Every write use case is **load, decide, commit**:
//! - a backend *loads* the rows a request needs ([`Account`], [`TicketRow`],
//!   a [`StoredAnswer`], the ticket [`ForSale`]), locking them where several
//!   processes may race (trait [`Unit`]);
//! - [`decide`] is plain code that knows no database: given those rows and
//!   the request it returns a refusal (an [`AppError`], nothing written), a
//!   replay (the answer stored the first time), or one [`Changes`] value;
//! - the backend *commits* the [`Changes`] atomically ([`Unit::apply`], then
//!   its transaction's COMMIT) and only then is the answer sent.
//!
//! [`usecase`] strings the three together once for every backend, so the
//! rules of money, of `seq` and of idempotency are written once, here.

pub mod decide;
pub mod usecase;

pub use usecase::{BuyRequest, Done, Op, Outcome, Unit};

use crate::api::SoldTicket;
use engine::PrizeSchedule;

/// A player's row id.
pub type PlayerId = i64;
/// An account's row id.
pub type AccountId = i64;
/// A ticket's row id.
pub type TicketId = i64;

/// The house's ledger accounts (rows of the first migration).
pub const HOUSE_PLAY_MONEY: AccountId = 1;
pub const HOUSE_SALES: AccountId = 2;
pub const HOUSE_PRIZES: AccountId = 3;

/// A player's ledger account, as loaded (and locked) for a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account {
    pub player: PlayerId,
    pub id: AccountId,
    pub balance_cents: i64,
}

/// A sold ticket, as loaded (and locked) for a write.
#[derive(Debug, Clone)]
pub struct TicketRow {
    pub id: TicketId,
    pub owner: PlayerId,
    pub ticket: SoldTicket,
}

/// A request applied earlier and the answer given to it, byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub request_json: String,
    pub answer_json: String,
}

/// The next ticket for sale, as loaded (and locked) for a purchase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForSale {
    pub ticket_id: TicketId,
    pub serial: String,
    pub prizes: PrizeSchedule,
    pub price_cents: i64,
}

/// Everything one decision writes, in one transaction.
#[derive(Debug, Clone)]
pub struct Changes {
    /// A ticket changing hands: `unsold` to `sold`.
    pub sale: Option<Sale>,
    /// The ticket's game after the change.
    pub game: Option<GameWrite>,
    /// The applied action and its answer (guarantee 4).
    pub action: Option<ActionWrite>,
    /// The draws the action took, numbered over the whole ticket.
    pub draws: Vec<crate::record::RecordDraw>,
    /// The money that moves (guarantee 3).
    pub movement: Option<Movement>,
    /// A purchase's Idempotency-Key with its answer.
    pub idempotency: Option<IdempotencyWrite>,
    /// The audit log's entry for this change.
    pub audit: Option<AuditRecord>,
    /// The JSON answer, as it is stored and sent.
    pub answer: String,
    /// What the change did, for the metrics (counted after COMMIT).
    pub effect: Effect,
}

/// A sale: the ticket gets its owner and seeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sale {
    pub ticket_id: TicketId,
    pub owner: PlayerId,
    pub sold_ms: i64,
    pub client_seed: String,
    pub server_seed_hex: String,
    pub commitment: String,
}

/// A ticket's game row after a change: created (`from_seq` `None`) or moved
/// on from `from_seq` (the write is guarded by it).
#[derive(Debug, Clone)]
pub struct GameWrite {
    pub row: TicketRow,
    pub from_seq: Option<u64>,
    pub finished_ms: Option<i64>,
}

/// The row of an applied action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionWrite {
    pub ticket_id: TicketId,
    pub seq: u64,
    pub request_json: String,
    pub created_ms: i64,
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
    Prize,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::StartBalance => "start_balance",
            Reason::TicketSale => "ticket_sale",
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
    pub player_balance: BalanceChange,
    pub created_ms: i64,
}

impl Reason {
    /// Which house account pays or is paid, and whether the money goes to
    /// the player.
    fn house(self) -> (AccountId, bool) {
        match self {
            Reason::StartBalance => (HOUSE_PLAY_MONEY, true),
            Reason::TicketSale => (HOUSE_SALES, false),
            Reason::Prize => (HOUSE_PRIZES, true),
        }
    }
}

impl Movement {
    /// `amount` cents between the player's account and the house account
    /// of `reason`; the movement's key follows from both.
    fn new(reason: Reason, ticket_id: Option<TicketId>, player: &Account, amount: i64, now: i64) -> Movement {
        let (house, to_player) = reason.house();
        let (from, to, after) = if to_player {
            (house, player.id, player.balance_cents + amount)
        } else {
            (player.id, house, player.balance_cents - amount)
        };
        let id = match (reason, ticket_id) {
            (Reason::TicketSale, Some(t)) => format!("sale:{t}"),
            (Reason::Prize, Some(t)) => format!("prize:{t}"),
            _ => format!("start:{}", player.player),
        };
        Movement {
            id,
            reason,
            ticket_id,
            from,
            to,
            amount_cents: amount,
            player_balance: BalanceChange {
                player: player.player,
                account: player.id,
                before: player.balance_cents,
                after,
            },
            created_ms: now,
        }
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
    Played { finished_prize: Option<u64> },
}
