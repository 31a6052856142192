//! [`Storage`]: everything the HTTP layer asks of the database, behind one
//! trait so that a PostgreSQL implementation can follow the SQLite one
//! ([`sqlite::SqliteStore`]).
//!
//! Writes (new players, purchases, game actions) must follow ARCHITECTURE.md
//! "How a click travels": load the ticket, let the engine apply the action
//! with the ticket's [`engine::FairStream`], write events, draws, ledger
//! entries and the answer in ONE transaction, and return the answer that was
//! written. The helpers of this module ([`apply_action`], [`audit_hash`])
//! are the storage-independent half of that.

pub mod sqlite;
mod sqlite_writer;

use crate::api::{ActionAnswer, ActionRequest, ClientSeed, IdempotencyKey, Me, PlayerCreated, Purchased, SoldTicket, TicketView};
use crate::error::AppError;
use crate::record::{Record, RecordDraw, draws_of};
use engine::{Event, FairStream, GameResult};
use sha2::{Digest, Sha256};
use std::future::Future;
use std::pin::Pin;

pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = Result<T, AppError>> + Send + 'a>>;

/// A player's row id.
pub type PlayerId = i64;

/// The storage of the game server.
pub trait Storage: Send + Sync + 'static {
    /// One line for the start log: which database, which emission.
    fn describe(&self) -> String;
    /// Ok when the database answers a query.
    fn health(&self) -> BoxFut<'_, ()>;
    /// The player holding this bearer token.
    fn authenticate<'a>(&'a self, token: &'a str) -> BoxFut<'a, Option<PlayerId>>;
    /// A new player with the configured play money (a ledger movement).
    fn create_player(&self, name: Option<String>) -> BoxFut<'_, PlayerCreated>;
    fn me(&self, player: PlayerId) -> BoxFut<'_, Me>;
    /// Debits the price and assigns the next unsold ticket, in one
    /// transaction; with an idempotency key already used by this player,
    /// the same ticket again and no debit.
    fn buy_ticket(
        &self,
        player: PlayerId,
        client_seed: Option<ClientSeed>,
        server_seed: [u8; 32],
        key: Option<IdempotencyKey>,
    ) -> BoxFut<'_, Purchased>;
    /// The player's tickets, newest first.
    fn tickets(&self, player: PlayerId) -> BoxFut<'_, Vec<TicketView>>;
    /// One ticket of the player (404 for anybody else's).
    fn ticket<'a>(&'a self, player: PlayerId, id: &'a str) -> BoxFut<'a, TicketView>;
    /// Applies an action exactly once (guarantee 4) and returns the JSON
    /// answer as stored.
    fn act<'a>(&'a self, player: PlayerId, id: &'a str, request: ActionRequest) -> BoxFut<'a, String>;
    /// The public record, built from the stored rows.
    fn record<'a>(&'a self, player: PlayerId, id: &'a str) -> BoxFut<'a, Record>;
    /// Checks the audit log's hash chain.
    fn check_audit_chain(&self) -> BoxFut<'_, AuditCheck>;
    /// Checks the ledger (guarantee 3).
    fn check_ledger(&self) -> BoxFut<'_, LedgerCheck>;
    /// Stops accepting writes, finishes the ones queued and closes.
    fn close(&self) -> BoxFut<'_, ()>;
}

/// The audit log's hash chain, checked entry by entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditCheck {
    pub entries: u64,
    /// The id of the first entry whose `prev_hash` or `hash` is wrong.
    pub first_broken: Option<i64>,
}

/// What the ledger looks like (guarantee 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerCheck {
    pub entries: u64,
    /// Sum of all entries: 0.
    pub sum_cents: i64,
    /// Movements whose entries do not sum to zero, or are not exactly two.
    pub unbalanced_movements: u64,
    /// Accounts whose balance differs from the sum of their entries.
    pub balance_mismatches: u64,
    /// Player accounts below zero.
    pub negative_players: u64,
}

impl LedgerCheck {
    pub fn is_sound(&self) -> bool {
        self.sum_cents == 0 && self.unbalanced_movements == 0 && self.balance_mismatches == 0 && self.negative_players == 0
    }
}

/// The all-zero hash before the audit log's first entry.
pub const AUDIT_GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// `hex(SHA-256(prev_hash "\n" created_ms "\n" kind "\n" data_json))`.
pub fn audit_hash(prev_hash: &str, created_ms: i64, kind: &str, data_json: &str) -> String {
    let mut h = Sha256::new();
    h.update(prev_hash.as_bytes());
    h.update(b"\n");
    h.update(created_ms.to_string().as_bytes());
    h.update(b"\n");
    h.update(kind.as_bytes());
    h.update(b"\n");
    h.update(data_json.as_bytes());
    hex::encode(h.finalize())
}

/// An action the engine accepted: everything to write, and the answer.
pub struct Applied {
    pub ticket: SoldTicket,
    pub events: Vec<Event>,
    pub draws: Vec<RecordDraw>,
    /// Set when this action finished the ticket.
    pub finished: Option<GameResult>,
}

/// Runs the engine on a loaded ticket (guarantee 1): the ticket's own
/// [`FairStream`] gives exactly the draws the rules ask for; a refusal
/// returns 422 and changes nothing (guarantee 7).
pub fn apply_action(mut ticket: SoldTicket, request: ActionRequest) -> Result<Applied, AppError> {
    let first_n = ticket.game.draws();
    let mut stream = FairStream::new(&ticket.server_seed, &ticket.client_seed, &ticket.serial);
    let mut events = Vec::new();
    ticket.game.apply(request.action, &mut stream, &mut events)?;
    let draws = draws_of(&events, first_n);
    let finished = ticket.game.result();
    Ok(Applied { ticket, events, draws, finished })
}

/// The answer of an applied action, as it is stored and sent.
pub fn answer_json(ticket: &SoldTicket, events: &[Event], balance_cents: i64) -> String {
    let answer = ActionAnswer { ticket: ticket.view(), events: events.to_vec(), balance_cents };
    serde_json::to_string(&answer).expect("an answer serializes")
}

/// Hex SHA-256 of a bearer token: the database never holds tokens.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
