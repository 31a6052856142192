//! # as-capone-server: the remote game server
//!
//! `as-capone serve` in a library: the online channel of CONTRACT.md over
//! HTTP (axum), a durable SQLite storage with group commit (sqlx), fair
//! draws that every player can verify, Prometheus metrics, an OpenAPI
//! document and the embedded web page.
//!
//! ## Layout
//! - [`app`]: [`App`], a running server; [`AppOptions`].
//! - [`config`]: [`Config`], from TOML, environment and flags.
//! - `http` (private): the router, handlers and extractors.
//! - [`api`]: the JSON shapes ([`api::TicketView`], ...) and request newtypes.
//! - [`error`]: [`AppError`], every refusal in the shape `{"error", "message"}`;
//!   [`StoreError`], a storage failure with its cause.
//! - [`core`]: the storage-independent core: the use cases (load, decide,
//!   commit) and the pure decisions, shared by both backends.
//! - [`store`]: [`Store`], the shell: SQLite (one process, group commit) or
//!   PostgreSQL (several processes), reads and SQL written once for both.
//! - [`record`]: [`record::Record`], the public record of a ticket, and
//!   [`record::verify`] (shared by `as-capone verify` and the tests).
//! - [`keys`]: the server key, kept outside the database, from which every
//!   emission's seeds (and so every ticket's server seed) are derived.
//! - [`fairness`]: the OS CSPRNG; the test-only fixed seed.
//! - [`supply`]: blocks of tickets from the `emission` crate, as stored.
//! - `admin` (private): the operator's desk and the public list of emissions.
//! - [`metrics`], `openapi` and `web` (private).
//!
//! ## Guarantees (ARCHITECTURE.md), as this crate keeps them
//! 1. The engine alone decides: [`core::decide::act`] calls `Game::apply`.
//! 2. Determinism: [`record::verify`] replays a ticket and must find every draw.
//! 3. Integer cents; every balance change is a [`core::Movement`] of two
//!    entries summing to zero, written in the transaction of its cause;
//!    a player's balance cannot go negative (a CHECK constraint too).
//! 4. Exactly once: an action is applied when its `seq` is the ticket's;
//!    the same request again returns the stored answer, byte for byte.
//! 5. Server seeds are fixed when a block is emitted, derived from the
//!    server key and a CSPRNG salt per emission ([`keys`]).
//! 6. Every ticket's commitment is in its block's Merkle root, published
//!    before the sale; the player's seed comes with the first action; the
//!    server seed is revealed at the end, and the record carries the proof.
//! 7. A refusal is an [`AppError`] and changes nothing.
//! 8. Several processes may share one PostgreSQL database: the rows a
//!    request decides on are locked while it decides ([`store`]).

mod api;
mod app;
mod config;
mod core;
mod error;
mod fairness;
mod http;
mod keys;
mod metrics;
mod store;
mod supply;

pub use api::ActionRequest;
pub use app::{App, AppOptions};
pub use config::Config;
pub use core::retail::parse_serial;
pub use core::{BuyRequest, Caller};
pub use error::{AppError, StoreError};
pub use fairness::ServerSeeds;
pub use keys::{Keyring, ServerKey, parse_salt};
pub use metrics::Metrics;
pub use store::{
    AuditCheck, EmissionReport, Figures, LedgerCheck, NEXT_FOR_SALE_POSTGRES, NEXT_FOR_SALE_SQLITE, Store, now_ms,
    report_from, sqlite_path, token_hash,
};

/// Structured logs on stderr, filtered by `RUST_LOG` (default `info`).
pub fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}

/// Layers run one way (ARCHITECTURE.md): `core` decides without the
/// database or HTTP, `store` runs the core's use cases without HTTP.
#[cfg(test)]
mod layers {
    use std::path::{Path, PathBuf};

    /// What no file under `src/core` may mention.
    const NOT_IN_CORE: &[&str] = &["crate::store", "crate::http", "super::super::store", "axum", "sqlx"];
    /// What no file under `src/store` may mention.
    const NOT_IN_STORE: &[&str] = &["crate::http", "axum"];

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Each file under `src/<layer>` that mentions a forbidden name, with the name.
    fn offences(layer: &str, forbidden: &[&str]) -> Vec<String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(layer);
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        assert!(!files.is_empty(), "no Rust file under {}", dir.display());
        let mut found = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for name in forbidden {
                if text.contains(name) {
                    found.push(format!("{} mentions {name}", file.display()));
                }
            }
        }
        found
    }

    #[test]
    fn core_imports_neither_the_store_nor_http_nor_axum_nor_sqlx() {
        let found = offences("core", NOT_IN_CORE);
        assert!(found.is_empty(), "core must not depend on store or HTTP: {found:#?}");
    }

    #[test]
    fn store_imports_no_http_module_nor_axum() {
        let found = offences("store", NOT_IN_STORE);
        assert!(found.is_empty(), "store must not depend on HTTP: {found:#?}");
    }
}
