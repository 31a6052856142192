//! The PostgreSQL shell: any number of `as-capone serve` processes on one
//! database (ARCHITECTURE.md guarantee 8), each request one transaction.
//!
//! **Row locks, not serializable transactions.** Every race is on rows a
//! request names: its ticket, its player's account, the next ticket for
//! sale. So each unit locks exactly those (`SELECT ... FOR UPDATE`) in READ
//! COMMITTED and the rest of the database runs free; the second of two
//! requests on one ticket waits for the first, then loads what it wrote
//! (PostgreSQL re-reads a locked row once its lock is released), and its
//! decision is a replay or a 409, never a second application. SERIALIZABLE
//! would give the same answers but by aborting one of the two and retrying,
//! on every concurrent purchase: the sale queue is one index that all of
//! them read. The sale queue takes `FOR UPDATE SKIP LOCKED`: concurrent
//! purchases take different tickets without waiting for each other. Locks
//! are always taken ticket first, then account (a purchase never waits for
//! a ticket), so two units never wait for each other in a circle; should
//! PostgreSQL still report a deadlock or serialization failure, the request
//! runs again from the start ([`StoreError::is_retryable`](domain::error::StoreError::is_retryable)).
//!
//! **No shared counter.** What every write would touch is designed away:
//! movements are keyed by what they are (`sale:<ticket>`), house accounts
//! keep no running balance (the sum of their entries is their balance),
//! the sale cursor is the `status` of the tickets themselves, and the audit
//! chain is sealed after commit by one process at a time
//! ([`super::audit`]).
//!
//! A unit's writes are one statement ([`WritePlan::postgres_statement`](super::plan::WritePlan::postgres_statement)): a
//! request is BEGIN, two or three loads, one write, COMMIT.
//!
//! **A game action takes no lock and no transaction** ([`Mode::Optimistic`](writer::Mode::Optimistic)):
//! its reads are plain statements and its write one statement that commits
//! itself. That is safe because every write of an action is guarded by the
//! state it was decided on (the game's `seq`, the seed still unset, the
//! balance it was decided on) or keyed by what it is (the action's
//! `(ticket_id, seq)`, the prize's movement): should another request have
//! changed any of it meanwhile, the statement raises a serialization
//! failure (migration 16's `as_capone_stale`), nothing of it stays, and the
//! request runs again from its reads, to find its answer stored (a replay)
//! or a conflict. The locks only turned that rare race into a wait; without
//! them an action is two round trips instead of four, and writes no row
//! lock (BENCHMARKS.md, "PostgreSQL, what a request costs it").

mod batch;
mod connect;
mod unit;
mod writer;

pub(super) use connect::{connect, describe, release_startup_lock};
pub(super) use unit::PgUnit;
pub(super) use writer::{PgWriter, fold_block_figures};
