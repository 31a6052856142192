//! A game action, applied exactly once (guarantee 4 of ARCHITECTURE.md).

use super::unit::{Outcome, Unit, commit};
use crate::api::{ActionRequest, Channel, ClientSeed};
use crate::changes::{Decision, Effect};
use crate::error::AppError;
use crate::online::{self, Payee};
use crate::rows::Caller;

/// An action on a ticket; `random_client_seed` is the seed a first action
/// without one gets (drawn beforehand: decisions draw nothing).
#[derive(Debug, Clone)]
pub struct PlayAction {
    pub caller: Caller,
    pub serial: String,
    pub request: ActionRequest,
    pub random_client_seed: ClientSeed,
    /// Tickets bought through the operator's wallet are credited there.
    pub operator_wallet: bool,
}

impl PlayAction {
    /// The ticket is locked first, then the account: the same order
    /// everywhere, so two units never wait for each other in a circle (a
    /// purchase never waits for a ticket).
    pub async fn run(&self, unit: &mut impl Unit, now: i64) -> Result<Outcome, AppError> {
        let PlayAction { caller, serial, request, random_client_seed, operator_wallet } = self;
        let ticket = unit.ticket(serial).await?;
        let (mut stored, mut payee, mut player) = (None, Payee::Nobody, None);
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
                    true => Payee::Deferred,
                    false => unit.account(p).await?.map_or(Payee::Nobody, Payee::Account),
                };
            }
        }
        let again = matches!(payee, Payee::Deferred).then(|| ticket.clone());
        let decision = online::decide_action(caller, ticket, stored, payee, request.clone(), random_client_seed, now)?;
        if let (Some(ticket), Some((p, ticket_id))) = (again, player)
            && wins_online(&decision)
        {
            // Bought through the operator's wallet, its prize is credited there;
            // else to the player's account. The same inputs decide the same game.
            let payee = match unit.sold_round(ticket_id).await? {
                Some(r) => Payee::Round(r),
                None => unit.account(p).await?.map_or(Payee::Nobody, Payee::Account),
            };
            let decision =
                online::decide_action(caller, ticket, None, payee, request.clone(), random_client_seed, now)?;
            return commit(unit, decision).await;
        }
        commit(unit, decision).await
    }
}

/// Whether a decision finishes an online game with a prize.
fn wins_online(decision: &Decision) -> bool {
    match decision {
        Decision::Apply(c) => {
            let online = c.game.as_ref().is_some_and(|g| g.row.ticket.channel == Channel::Online);
            online && matches!(c.effect, Effect::Played { finished_prize: Some(p) } if p > 0)
        }
        Decision::Replay(_) => false,
    }
}
