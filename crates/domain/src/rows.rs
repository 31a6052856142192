//! What a use case loads: the rows a decision is made on (an [`Account`],
//! a [`TicketRow`], a [`PaperRow`], a [`StoredAnswer`], the ticket
//! [`ForSale`], the operator mode's [`RoundRow`]), locked by the backend
//! where several processes may race.

use crate::api::SoldTicket;
use engine::PrizeSchedule;
use wallet::RoundId;

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
    /// The player whose history holds it: the buyer online; for a paper
    /// ticket, the logged-in player who redeemed it, if any.
    pub owner: Option<PlayerId>,
    pub ticket: SoldTicket,
}

/// Who acts on a ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// A player's bearer token.
    Player(PlayerId),
    /// A paper ticket's own token (from its play code): that ticket only.
    Ticket(String),
}

impl Caller {
    /// Whether this caller may see and play `row`.
    pub fn may_play(&self, row: &TicketRow) -> bool {
        match self {
            Caller::Player(p) => row.owner == Some(*p),
            Caller::Ticket(serial) => row.ticket.channel == crate::api::Channel::Paper && row.ticket.serial == *serial,
        }
    }

    pub fn player(&self) -> Option<PlayerId> {
        match self {
            Caller::Player(p) => Some(*p),
            Caller::Ticket(_) => None,
        }
    }
}

/// A ticket row's `status` column, as text in both databases
/// ([`TicketStatus::as_str`], [`TicketStatus::parse`]): an online ticket is
/// `unsold`, then `sold`; a paper one `printed`, `sold` by a shop, then
/// `paid` (its prize, by a shop or the operator's payment centre). What the
/// counter says of a paper ticket adds its game's: [`crate::retail::PaperStatus`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TicketStatus {
    /// (The default only of rows that write no ticket: [`crate::EmissionRows`].)
    #[default]
    Unsold,
    Printed,
    Sold,
    Paid,
}

impl TicketStatus {
    pub const ALL: [TicketStatus; 4] =
        [TicketStatus::Unsold, TicketStatus::Printed, TicketStatus::Sold, TicketStatus::Paid];

    /// The column's text.
    pub fn as_str(self) -> &'static str {
        match self {
            TicketStatus::Unsold => "unsold",
            TicketStatus::Printed => "printed",
            TicketStatus::Sold => "sold",
            TicketStatus::Paid => "paid",
        }
    }

    /// The column's text read back; `None` for any other.
    pub fn parse(text: &str) -> Option<TicketStatus> {
        TicketStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The status a ticket of a new block starts with: `unsold` online,
    /// `printed` on paper.
    pub fn first(channel: crate::api::Channel) -> TicketStatus {
        match channel {
            crate::api::Channel::Online => TicketStatus::Unsold,
            crate::api::Channel::Paper => TicketStatus::Printed,
        }
    }
}

/// A paper ticket as the shops and the play code see it, whatever its
/// status (printed, sold, in play, finished, paid), loaded (and locked) for
/// a retail use case or a redemption.
#[derive(Debug, Clone)]
pub struct PaperRow {
    pub id: TicketId,
    pub serial: String,
    pub channel: crate::api::Channel,
    /// Its row's status (`printed`, `sold` or `paid`; `unsold` or `sold` for
    /// an online ticket, which the shops refuse).
    pub status: TicketStatus,
    pub owner: Option<PlayerId>,
    pub price_cents: i64,
    pub prizes: PrizeSchedule,
    pub commitment: String,
    pub server_seed: [u8; 32],
    pub client_seed: Option<String>,
    pub retail: crate::api::RetailView,
    /// The game, once the ticket was redeemed.
    pub game: Option<engine::Game>,
    /// When the emission's sale ended, if it did.
    pub sale_end_ms: Option<i64>,
    /// When a shop sold it.
    pub sold_ms: Option<i64>,
    /// The answer given to the shop that sold it, as stored.
    pub sell_answer: Option<ShopAnswer>,
    /// The answer given to the shop that paid it, as stored.
    pub pay_answer: Option<ShopAnswer>,
    /// Its payment by the operator's payment centre, if it was a claim.
    pub claim: Option<ClaimPayment>,
}

/// A claim's payment by the operator's payment centre: its reference and
/// the answer the desk got (returned again to a retry with that reference).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimPayment {
    pub reference: String,
    pub answer_json: String,
}

/// A shop's sale or payment of a paper ticket and the answer it was given,
/// byte for byte: the same shop repeating the same request gets it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShopAnswer {
    pub shop: String,
    pub answer_json: String,
}

impl PaperRow {
    /// The ticket as a player sees it, once it has a game.
    pub fn sold(&self) -> Option<TicketRow> {
        Some(TicketRow {
            id: self.id,
            owner: self.owner,
            ticket: SoldTicket {
                serial: self.serial.clone(),
                price_cents: self.price_cents,
                client_seed: self.client_seed.clone(),
                server_seed: self.server_seed,
                commitment: self.commitment.clone(),
                channel: self.channel,
                retail: Some(self.retail.clone()),
                sold_ms: self.sold_ms,
                game: self.game.clone()?,
            },
        })
    }
}

/// A request applied earlier and the answer given to it, byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub request_json: String,
    pub answer_json: String,
}

/// The next ticket for sale, as loaded (and locked) for a purchase, with
/// the server seed its block committed to (derived by the shell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForSale {
    pub ticket_id: TicketId,
    pub serial: String,
    pub prizes: PrizeSchedule,
    pub price_cents: i64,
    pub commitment: String,
    pub server_seed: [u8; 32],
    /// The attempt of the ticket's last round through an operator's wallet
    /// (0: none), when the loader read it with the ticket (SQLite's queue
    /// of tickets for sale); `None`: the purchase reads it.
    pub last_attempt: Option<u32>,
}

/// A player's limits on their own play, as stored (docs/player-api.md).
/// `None`: no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LimitsRow {
    pub tickets_per_day: Option<i64>,
    pub spend_per_week_cents: Option<i64>,
    /// A raise waiting for its cooling-off.
    pub pending: Option<PendingLimits>,
    pub excluded_until_ms: Option<i64>,
}

/// Limits that apply from `from_ms` (a raise, after its cooling-off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingLimits {
    pub tickets_per_day: Option<i64>,
    pub spend_per_week_cents: Option<i64>,
    pub from_ms: i64,
}

/// A player's online purchases in the limits' windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Tickets bought in the last 24 hours.
    pub tickets_today: i64,
    /// Cents spent on tickets in the last 7 days.
    pub spent_week_cents: i64,
}

/// Where a round stands (`wallet_rounds.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundState {
    /// The ticket is held and the debit is out.
    Debiting,
    /// The debit was acknowledged: the ticket is the player's.
    Sold,
    /// The debit was refused: the ticket went back to the pool.
    Refused,
    /// The debit's outcome is unknown: its rollback is in the outbox.
    RollingBack,
    /// The rollback was acknowledged: the ticket went back to the pool.
    Released,
}

impl RoundState {
    pub fn as_str(self) -> &'static str {
        match self {
            RoundState::Debiting => "debiting",
            RoundState::Sold => "sold",
            RoundState::Refused => "refused",
            RoundState::RollingBack => "rolling_back",
            RoundState::Released => "released",
        }
    }

    pub fn parse(s: &str) -> Option<RoundState> {
        Some(match s {
            "debiting" => RoundState::Debiting,
            "sold" => RoundState::Sold,
            "refused" => RoundState::Refused,
            "rolling_back" => RoundState::RollingBack,
            "released" => RoundState::Released,
            _ => return None,
        })
    }
}

/// A round as loaded (and locked) for a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundRow {
    /// `SERIAL.ATTEMPT`, the id the operator sees.
    pub round: RoundId,
    pub ticket_id: TicketId,
    pub player: PlayerId,
    /// The operator's reference of the player.
    pub operator_ref: String,
    pub price_cents: i64,
    pub state: RoundState,
    pub idempotency_key: Option<String>,
    pub created_ms: i64,
    /// The ledger's clearing account of the operator's wallet.
    pub wallet_account: AccountId,
}

/// A round and its ticket, as loaded to settle its debit.
#[derive(Debug, Clone)]
pub struct Reserved {
    pub round: RoundRow,
    pub ticket: ForSale,
}

/// A launch code's row, as loaded (and locked) for its exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchRow {
    pub player: PlayerId,
    pub operator_ref: String,
    pub language: String,
    pub flags_json: String,
    pub lobby_url: Option<String>,
    pub expires_ms: i64,
    pub used_ms: Option<i64>,
}
