//! `as-capone reliability wallet-chaos`: the operator mode under chaos
//! (guarantee 9 of ARCHITECTURE.md, the operator's wallet moves exactly
//! once; docs/operator-integration.md).
//!
//! The reference operator (crate `as-capone-operator`, its own SQLite
//! ledger) runs as a child process (this executable's hidden
//! `reference-operator` subcommand, or `--operator-bin`) with its chaos
//! switch on: delays, 5xx answered
//! without applying, answers dropped after the call was applied and
//! committed, duplicate deliveries, a skewed clock. Our server runs in
//! operator mode against it (`--wallet operator`): one process on SQLite,
//! two processes on one PostgreSQL database. Players are created at the
//! operator, launched the way an operator launches them (a signed
//! `POST /api/operator/launch`, its signed answer checked, then the page's
//! `POST /api/launch` with the one-time code), and buy and play tickets to
//! the end, several at once. Besides the players who never run out, three
//! players meet the operator's refusals: one blocked, one with little
//! money, one with a weekly stake limit.
//!
//! While they play, our server processes are SIGKILLed `--wallet-kills`
//! times and the operator `--operator-kills` times, each at a random moment
//! (a random count of tickets sold, then a random delay), and restarted on
//! the same databases. A request our server died under is sent again,
//! identical (the same `Idempotency-Key`, the same action); a purchase
//! answered 503 `wallet_unavailable` (outcome unknown: rolled back, not
//! sold) or refused (402) is tried again as a new purchase; one answered
//! 409 because the debit of its first attempt is still being settled is
//! sent again, the same, a moment later.
//!
//! After `--rounds` tickets are sold and played, chaos is switched off and
//! the run waits until no round of ours is unresolved and every server's
//! prize outbox is empty (`as_capone_wallet_outbox_depth` on `/metrics`).
//! Then:
//! - the reconciliation (`as-capone reconcile`'s code, `strict`) of the
//!   whole run must be clean;
//! - no double debit: at most one standing debit per ticket, whatever its
//!   rounds;
//! - no debit without a ticket: every standing debit is a ticket a player
//!   was answered 201 for, of that player and of the ticket's price;
//! - no ticket without a debit: every ticket a player holds has exactly
//!   one standing debit;
//! - every prize credited exactly once: each finished ticket's prize, as
//!   its player saw it, is one credit of that amount, and nothing else is
//!   credited;
//! - the operator's ledger is balanced (`GET /admin/summary`), and every
//!   player's balance there is its start minus its standing debits plus its
//!   credits, and what our `/api/me` shows.
//!
//! Figures: rounds sold and released, kills, chaos counts (summed over the
//! operator's lives), refusals by code, purchases answered
//! `wallet_unavailable`, rollbacks, the wait for settlement, time.

//!
//! `run.rs` runs it on a backend; `player.rs` holds the client players,
//! `client.rs` how they speak to our server, `operator_child.rs` the
//! reference operator as a child process and its admin calls, `checks.rs`
//! the settlement and the checks.

mod checks;
mod client;
mod operator_child;
mod player;
mod run;

pub use operator_child::{OperatorChildArgs, reference_operator};
pub(super) use run::run;
