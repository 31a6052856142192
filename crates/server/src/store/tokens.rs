//! Players' bearer tokens in the store: their hash (the database never
//! holds a token), the tokens and sessions one process remembers
//! ([`AuthCache`]), and a remembered token that a request's own first
//! statement confirms ([`TokenCheck`]).

use domain::PlayerId;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// Hex SHA-256 of a bearer token: the database never holds tokens.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A player's bearer token that this process remembered instead of reading
/// it, to be confirmed by the request's own first statement (PostgreSQL's
/// game actions: [`Store::action_caller`](super::shell::Store::action_caller)).
/// A token revoked by any process fails that statement, and the request is
/// refused (401) before anything is decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenCheck {
    pub player: PlayerId,
    pub token_hash: String,
}

/// The players' own tokens and sessions one process remembers. On SQLite
/// (the database of one process) they are trusted; on PostgreSQL only a
/// game action uses them, as a `TokenCheck` its first statement
/// confirms (other processes revoke tokens too). On SQLite a revocation (a logout, a password change:
/// the only ways a session row goes before its expiry) is committed by this
/// process, which then forgets the player's tokens and sessions and moves
/// `generation` on, so that a read that began before the commit cannot put
/// a revoked token back. A session is remembered with its expiry, checked
/// at each request: an expired one is refused as when read from the table.
#[derive(Default)]
pub(super) struct AuthCache {
    pub(super) players: HashMap<String, PlayerId>,
    /// Sessions (a login's, an operator's launch) by token hash: the
    /// player and when the session ends.
    pub(super) sessions: HashMap<String, (PlayerId, i64)>,
    pub(super) generation: u64,
}

impl AuthCache {
    /// At most this many tokens and as many sessions are remembered; past
    /// it the map starts again empty (they are read again as they come).
    pub(super) const MAX: usize = 1_000_000;
}
