//! [`Store`]: the imperative shell around [`domain`]. Two backends,
//! one set of rules:
//!
//! - **SQLite** (`sqlite://FILE`, the embedded default, one process): a
//!   single writer task owns the write connection, runs many requests'
//!   units in one transaction (group commit) and keeps what only it writes
//!   in memory ([`sqlite`]).
//! - **PostgreSQL** (`postgres://...`, any number of processes on one
//!   database): each request is one transaction whose loads lock their rows
//!   ([`postgres`]).
//!
//! What the backends share is written once: the decisions and use cases
//! ([`domain`]), the SQL of every write ([`plan`]), every read
//! ([`reads`]), the start-up emission and demo player ([`open`]), and
//! the audit chain's sealing and check ([`audit`]). The two backends' SQL
//! is the same text: `$N` placeholders, which both accept, and the same
//! schema (`migrations/sqlite`, `migrations/postgres`); the next ticket for
//! sale has a text of each backend's own ([`NEXT_FOR_SALE_POSTGRES`]: its
//! plan must not depend on PostgreSQL's statistics).
//!
//! The rest of the store reaches a backend only through [`backend`]. This
//! file declares the modules and re-exports what the crate uses; what
//! they share is in files of their own ([`db`], [`clock`], [`tokens`],
//! [`shell`]'s [`Store`]), so that no file imports one that imports it.

mod admit;
mod audit;
mod audit_mac;
mod backend;
pub mod backup;
mod ceilings;
mod claims;
mod clock;
mod db;
mod demo;
mod desk;
mod desk_charts;
mod emissions;
mod error;
mod keyring;
mod ledger;
mod offline;
mod open;
mod pg_objects;
mod plan;
mod postgres;
mod reads;
mod restores;
mod retail;
mod schema;
mod schema_objects;
mod seen;
mod shell;
mod sqlite;
mod ticket_rows;
mod tokens;
mod wallet;
mod wallet_loads;

pub use audit::AuditCheck;
pub use claims::{Claim, Claims};
pub use clock::now_ms;
pub use desk::{CurrentKey, PlayersSummary};
pub use domain::limits::RedeemLimits;
pub use emissions::{EmissionCreated, EmissionReport, Figures, PublicEmission, report_from};
pub use keyring::{RingKey, make_current, ring_from};
pub use ledger::LedgerCheck;
/// The exact text each backend runs to find the next ticket for sale, for
/// the tests that read its plan (`EXPLAIN`).
pub use reads::{NEXT_FOR_SALE_POSTGRES, NEXT_FOR_SALE_SQLITE};
pub use restores::{Marked, mark as mark_restored};
pub use retail::{Redeemed, code_hash};
pub use schema::{SchemaError, VERSION, schema_version};
pub use seen::watch as watch_seen;
pub use shell::Store;
pub use tokens::{TokenCheck, token_hash};
pub use wallet::{OutboxEntry, Reservation};
