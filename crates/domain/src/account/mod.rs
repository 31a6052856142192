//! The decisions of a player's own account (docs/player-api.md):
//! the limits they set on their play and their self-exclusion, checked in
//! the purchase's unit; their login and password; their sessions. Plain
//! code like [`crate::online`]: the time, the password hashes and the
//! session tokens come in as arguments.
//!
//! `limits`: the limits and the self-exclusion; `credentials`: the
//! login, password, sessions, recovery code and closure; `statement`:
//! what the player staked and won per day, week and month.

mod credentials;
mod limits;
mod statement;

pub use credentials::*;
pub use limits::*;
pub use statement::*;
