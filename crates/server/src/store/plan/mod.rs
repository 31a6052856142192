//! [`WritePlan`]: the SQL statements that write one [`Changes`](domain::Changes), built from named
//! columns (`("seq", value)`) rather than long lists of positional binds,
//! and the same for both backends. Placeholders are numbered `$1, $2, ...`
//! over the whole plan, which PostgreSQL reads in one statement
//! ([`WritePlan::postgres_statement`]); the SQLite writer runs the statements
//! one by one on its own connection, each prepared once
//! ([`WritePlan::sqlite_statements`]).
//!
//! Writes that depend on what was loaded are **guarded**: the ticket is
//! sold only while `unsold`, the game moves on only from the `seq` it was
//! decided on, a balance changes only from the amount it was decided on.
//! A guarded statement that changes no row means the row changed under the
//! decision, and the whole unit is undone
//! ([`domain::error::StoreError::Stale`]): on PostgreSQL each guarded part
//! returns its name and a missing name is the failure; on SQLite the
//! writer reads each guarded statement's count of changed rows.

mod batch;
mod parts;
mod player;
mod write;

pub use batch::{Column, postgres_batch};
pub use write::{EntryMac, Seal, Val, WritePlan};
