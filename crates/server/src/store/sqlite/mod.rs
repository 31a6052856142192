//! The SQLite shell: one file, one process, durable and fast.
//!
//! - WAL journal and `synchronous=FULL`: a COMMIT is on disk before its
//!   answers leave ("Nothing is shown to a player before it is durable").
//! - **Group commit**: one writer thread owns the one write connection and
//!   is fed by a channel. It takes every pending write request (up to
//!   `group_commit_max`), runs each as a [`Unit`](domain::Unit) of one transaction,
//!   COMMITs once (one disk sync for all), then answers them all. A request
//!   that fails after writing undoes only itself: the batch is then run
//!   again with each unit in its own SAVEPOINT ([`run_batch`](writer::run_batch)). With
//!   `group_commit = false` every request is its own transaction.
//! - **One thread, no hops**: the write connection is a `rusqlite` one,
//!   owned by the writer's own OS thread, which runs a whole batch
//!   synchronously: loads, each plan's statements (prepared once and kept
//!   in the connection's statement cache), COMMIT. A request crosses
//!   threads twice (to the writer and back), not once per statement as
//!   with an async driver's worker thread. The use cases are `async` (the
//!   PostgreSQL units await their database); on this connection nothing
//!   ever waits, so the writer polls each one once (`now_or_never`).
//! - **Memory**: the writer keeps what only it changes in memory (sold
//!   tickets' games, players' balances and limits, the sale queue, the
//!   audit chain's head). That memory is right only because this thread is
//!   the only writer of the file: a lock file keeps a second process out
//!   (several processes share a PostgreSQL database instead). It is dropped
//!   and reloaded whenever a write fails, and every write is guarded anyway
//!   (see [`super::plan`]): stale memory is never written over the
//!   database. A guarded write that finds its row changed (a change made
//!   behind the server's back) rolls the batch back, and the batch is
//!   decided again from the database ([`run_batch`](writer::run_batch)).
//! - Migrations run first on an sqlx connection; reads use sqlx's pool of
//!   connections, which WAL runs beside the writer.
//!
//! The rules are not here: the use cases and decisions are
//! [`domain`]'s, shared with PostgreSQL.

mod connect;
mod memory;
#[cfg(test)]
mod tests;
mod unit;
mod writer;

pub(super) use connect::lock_file;
pub(super) use writer::{SqliteWriter, open};
