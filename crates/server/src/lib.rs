//! # as-capone-server: the remote game server
//!
//! `as-capone serve` in a library: the online and retail channels of
//! docs/contract.md over HTTP (axum), a durable SQLite storage with group
//! commit or a shared PostgreSQL database (sqlx), fair draws that every
//! player can verify, Prometheus metrics, an OpenAPI document and the
//! embedded web page. ARCHITECTURE.md (at the repository's root) draws the
//! whole; this is the server's part of it.
//!
//! ## Layout
//! Layers run one way: `http` calls `store`, `store` runs `core`'s use
//! cases, and `core` knows neither (the unit test `layers` fails when a
//! file under `src/core` names the store, HTTP, axum or sqlx, or one under
//! `src/store` names HTTP or axum). Every module is private; what other
//! crates use is re-exported here.
//! - `app`: [`App`], a running server (listeners, background tasks), from
//!   [`AppOptions`]; `config`: [`Config`], from TOML, environment and flags.
//! - `http`: the router, extractors and middleware (`http/mod.rs`), and one
//!   file per audience: `game` (online play: buy, tickets, actions,
//!   records), `account` (player accounts, logins, limits), `retail` (shops
//!   and paper tickets), `admin` (the operator's desk), `public` (odds,
//!   public emissions, health, metrics, the web page), `openapi` (the
//!   document and its documentation-only request types), `listener`
//!   (HTTP/1.1 connections). [`AppError`]'s `IntoResponse` lives here.
//! - `store`: [`Store`], the shell: SQLite (`store/sqlite`: one process, one
//!   writer thread, group commit) or PostgreSQL (`store/postgres`: several
//!   processes), the SQL of every write (`store/plan`, a `WritePlan` per
//!   change) and every read (`store/reads`) written once for both,
//!   emissions and the operator's figures (`store/emissions`), the audit
//!   chain (`store/audit`).
//! - `core`: the storage-independent rules, each use case **load, decide,
//!   commit** (`core/usecase`, over the trait `Unit` that each backend
//!   implements), the decisions as plain functions by channel:
//!   `core/online` (a purchase, `decide_action`), `core/retail` (a paper
//!   ticket's sale, redemption, validation and payment, [`parse_serial`]),
//!   `core/account` (a player's account, limits, credentials, sessions),
//!   `core/limits` (attempts per network). The ledger's house accounts and
//!   the shared row types are in `core/mod.rs`.
//! - `api`: the JSON shapes of the API and the request newtypes that parse
//!   rather than validate ([`ActionRequest`], ...), shared by `core`,
//!   `store` and `http`.
//! - `error`: [`AppError`], every refusal in the shape `{"error",
//!   "message"}`; [`StoreError`], a storage failure with its cause.
//! - `keys`: [`ServerKey`] and [`Keyring`], the keys kept outside the
//!   database from which every emission's seeds are derived (a ring of
//!   them, by key id: docs/keys.md);
//!   `fairness`: the OS CSPRNG and [`ServerSeeds`]; `supply`: blocks of
//!   tickets from the `emission` crate, as stored; `metrics`: [`Metrics`].
//!
//! The public record of a ticket and its verification are the `record`
//! crate's ([`record::Record`], [`record::verify`]): a verifier links
//! neither axum nor sqlx.
//!
//! ## Guarantees (ARCHITECTURE.md), as this crate keeps them
//! 1. The engine alone decides: `core::online::decide_action` calls
//!    `Game::apply`.
//! 2. Determinism: [`record::verify`] replays a ticket and must find every draw.
//! 3. Integer cents; every balance change is a `core::Movement` of two
//!    entries summing to zero, written in the transaction of its cause;
//!    a player's balance cannot go negative (a CHECK constraint too).
//! 4. Exactly once: an action is applied when its `seq` is the ticket's;
//!    the same request again returns the stored answer, byte for byte
//!    (`core::usecase::play_action`, [`Store::run_action`]).
//! 5. Server seeds are fixed when a block is emitted, derived from the
//!    server key and a CSPRNG salt per emission ([`Keyring`]).
//! 6. Every ticket's commitment is in its block's Merkle root, published
//!    before the sale; the player's seed comes with the first action; the
//!    server seed is revealed at the end, and the record carries the proof.
//! 7. A refusal is an [`AppError`] and changes nothing.
//! 8. Several processes may share one PostgreSQL database: the rows a
//!    request decides on are locked while it decides (`store/postgres`).

mod api;
mod app;
mod config;
mod core;
mod devices;
mod error;
mod fairness;
mod http;
mod keys;
mod metrics;
mod operator;
mod store;
mod supply;

pub use api::ActionRequest;
pub use app::{App, AppOptions};
pub use config::{Config, LogFormat, WalletMode};
pub use core::retail::parse_serial;
pub use core::{BuyRequest, Caller};
pub use error::{AppError, CODES as ERROR_CODES, REASONS as ERROR_REASONS, StoreError};
pub use fairness::ServerSeeds;
pub use keys::{KeyId, KeyOrigin, Keyring, ServerKey, key_path, new_key_file, parse_salt, read_key_dir};
pub use metrics::Metrics;
/// The operator's wallet client, for the load generator's shadow of the
/// wallet's work in the internal mode (`loadtest --shadow-wallet`).
pub use operator::client::{Answer as WalletCallAnswer, WalletClient};
/// The HTTP/1.1 transport of the operator's wallet client, for its benchmark
/// (`examples/wallet_calls.rs`).
pub use operator::transport::Transport as WalletTransport;
pub use store::backup;
pub use store::{
    AuditCheck, EmissionReport, Figures, LedgerCheck, NEXT_FOR_SALE_POSTGRES, NEXT_FOR_SALE_SQLITE, RingKey,
    SchemaError, Store, VERSION, make_current, now_ms, report_from, ring_from, schema_version, sqlite_path, token_hash,
};

/// Structured logs on stderr as text lines, filtered by `RUST_LOG` (default
/// `info`): [`init_logging_as`] with [`LogFormat::Text`].
pub fn init_logging() {
    init_logging_as(LogFormat::Text);
}

/// Structured logs on stderr, filtered by `RUST_LOG` (default `info`): text
/// lines for people, or one JSON object per line (`timestamp`, `level`,
/// `target`, `message` and the event's fields at the top level, the spans
/// under `spans`) for a log collector.
pub fn init_logging_as(format: LogFormat) {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
    };
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
    /// The modules outside `src/core` that core uses: they must keep it free
    /// of the store, HTTP and the database libraries too.
    const USED_BY_CORE: &[&str] = &["api.rs", "error.rs"];
    /// What those modules may not mention.
    const NOT_UNDER_CORE: &[&str] = &["crate::store", "crate::http", "axum", "sqlx", "rusqlite"];

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
        mentions(files, forbidden)
    }

    fn mentions(files: Vec<PathBuf>, forbidden: &[&str]) -> Vec<String> {
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
    fn what_core_uses_outside_it_names_no_store_http_or_database_library() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let found = mentions(USED_BY_CORE.iter().map(|f| src.join(f)).collect(), NOT_UNDER_CORE);
        assert!(found.is_empty(), "core reaches the store, HTTP or a database through: {found:#?}");
    }

    #[test]
    fn store_imports_no_http_module_nor_axum() {
        let found = offences("store", NOT_IN_STORE);
        assert!(found.is_empty(), "store must not depend on HTTP: {found:#?}");
    }
}
