//! The use cases, one module each, every one **load, decide, commit**,
//! written once for every backend. A backend gives a [`Unit`] of work (one
//! transaction on PostgreSQL, one savepoint of a group commit on SQLite)
//! and runs an [`Op`] on it with [`run`]; it commits that unit when the
//! request changed something and rolls it back otherwise.
//!
//! A use case's module holds its request (a struct, the fields the HTTP
//! edge or the store filled in), and its `run`: the loads it needs from the
//! [`Unit`], in the order that keeps units from waiting on each other in a
//! circle (a player's account, then a ticket; a network's counter, then the
//! global ones), the decision (a plain function of the channel's module:
//! [`crate::online`], [`crate::retail`], [`crate::account`], ...) and its
//! commit. docs/adding-a-use-case.md walks through adding one.

mod act;
mod admit;
mod buy;
mod close;
mod credentials;
mod launch;
mod limits;
mod pay;
mod redeem;
mod register;
mod reserve;
mod sell;
mod session;
mod settle;
mod unit;

pub use act::PlayAction;
pub use admit::{Admission, Admit};
pub use buy::Buy;
pub use close::CloseAccount;
pub use credentials::{Recover, RenewRecovery, SetCredentials};
pub use launch::{Exchange, Launch};
pub use limits::{SelfExclude, SetLimits};
pub use pay::{ClaimPay, Pay};
pub use redeem::Redeem;
pub use register::CreatePlayer;
pub use reserve::Reserve;
pub use sell::Sell;
pub use session::{Logout, OpenSession};
pub use settle::{RollbackAcknowledged, Settle};
pub use unit::{Outcome, PaperKey, Unit};

use crate::changes::{Changes, Effect};
use crate::error::AppError;
use crate::rows::PlayerId;

/// A write request, as a backend's shell receives it: one use case's request.
#[derive(Debug, Clone)]
pub enum Op {
    CreatePlayer(CreatePlayer),
    SetLimits(SetLimits),
    SelfExclude(SelfExclude),
    SetCredentials(SetCredentials),
    OpenSession(OpenSession),
    Logout(Logout),
    Buy(Buy),
    Recover(Recover),
    RenewRecovery(RenewRecovery),
    Close(CloseAccount),
    PlayAction(PlayAction),
    Sell(Sell),
    Pay(Pay),
    ClaimPay(ClaimPay),
    Redeem(Redeem),
    Admit(Admit),
    /// Rows decided outside a player's request (an emission's), written as they are.
    Apply(Box<Changes>),
    Launch(Box<Launch>),
    Exchange(Exchange),
    Reserve(Reserve),
    Settle(Settle),
    RollbackAcknowledged(RollbackAcknowledged),
}

/// What a write request gave: the answer, and what it did once committed.
#[derive(Debug, Clone)]
pub struct Done {
    /// The new player's id, for [`Op::CreatePlayer`].
    pub player: Option<PlayerId>,
    /// The JSON answer as stored (empty for a new player).
    pub answer: String,
    /// `None` for a replay: nothing was written.
    pub effect: Option<Effect>,
}

/// Runs one write request on a unit: the one entry point of every shell.
pub async fn run(unit: &mut impl Unit, op: &Op, now: i64) -> Result<Done, AppError> {
    let outcome = match op {
        Op::CreatePlayer(r) => {
            let (player, changes) = r.run(unit, now).await?;
            return Ok(Done { player: Some(player), answer: String::new(), effect: Some(changes.effect) });
        }
        Op::SetLimits(r) => r.run(unit, now).await?,
        Op::SelfExclude(r) => r.run(unit, now).await?,
        Op::SetCredentials(r) => r.run(unit, now).await?,
        Op::OpenSession(r) => r.run(unit, now).await?,
        Op::Logout(r) => r.run(unit, now).await?,
        Op::Buy(r) => r.run(unit, now).await?,
        Op::Recover(r) => r.run(unit, now).await?,
        Op::RenewRecovery(r) => r.run(unit, now).await?,
        Op::Close(r) => r.run(unit, now).await?,
        Op::PlayAction(r) => r.run(unit, now).await?,
        Op::Sell(r) => r.run(unit, now).await?,
        Op::Pay(r) => r.run(unit, now).await?,
        Op::ClaimPay(r) => r.run(unit, now).await?,
        Op::Redeem(r) => r.run(unit, now).await?,
        Op::Admit(r) => r.run(unit, now).await?,
        Op::Launch(r) => r.run(unit, now).await?,
        Op::Exchange(r) => r.run(unit, now).await?,
        Op::Reserve(r) => r.run(unit, now).await?,
        Op::Settle(r) => r.run(unit, now).await?,
        Op::RollbackAcknowledged(r) => r.run(unit, now).await?,
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
