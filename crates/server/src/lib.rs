//! # as-capone-server: the remote game server
//!
//! `as-capone serve` as a library: the HTTP API (axum), the storage on
//! SQLite or PostgreSQL (sqlx) that loads and commits for the `domain`
//! crate's decisions, the operator mode's wallet client, the server keys,
//! Prometheus metrics, the OpenAPI document and the embedded web page.
//! Every module is private; what other crates use is re-exported here.
//!
//! The map of its modules, what each may import, and the guarantees the
//! server keeps with the tests that prove them are in
//! [ARCHITECTURE.md](../../../ARCHITECTURE.md) at the repository's root
//! (section `crates/server`), kept there only, so that one map is checked
//! (`scripts/house-check`) and none goes stale.

mod app;
mod config;
mod devices;
mod fairness;
mod http;
mod keys;
mod metrics;
mod operator;
mod store;

pub use app::{App, AppOptions};
pub use config::{Config, LogFormat, WalletMode, sqlite_path};
pub use domain::api::ActionRequest;
pub use domain::error::{AppError, CODES as ERROR_CODES, REASONS as ERROR_REASONS, StoreError};
pub use domain::retail::parse_serial;
pub use domain::{BuyRequest, Caller};
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
    AuditCheck, EmissionReport, Figures, LedgerCheck, Marked, NEXT_FOR_SALE_POSTGRES, NEXT_FOR_SALE_SQLITE, RingKey,
    SchemaError, Store, VERSION, make_current, mark_restored, now_ms, report_from, ring_from, schema_version,
    token_hash,
};

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

/// Layers run one way (ARCHITECTURE.md). Cargo keeps the `domain` crate
/// (the decisions) free of the database and HTTP: neither is its
/// dependency. Inside this crate, what Cargo cannot say: `store` runs the
/// use cases without HTTP.
#[cfg(test)]
mod layers {
    use std::path::{Path, PathBuf};

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

    #[test]
    fn store_imports_no_http_module_nor_axum() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join("store");
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        assert!(!files.is_empty(), "no Rust file under {}", dir.display());
        let mut found = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            found.extend(
                NOT_IN_STORE
                    .iter()
                    .filter(|name| text.contains(*name))
                    .map(|name| format!("{} mentions {name}", file.display())),
            );
        }
        assert!(found.is_empty(), "store must not depend on HTTP: {found:#?}");
    }

    #[test]
    fn the_domain_crate_depends_on_no_database_nor_http_library() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../domain/Cargo.toml");
        let text = std::fs::read_to_string(manifest).unwrap();
        let dependencies = text.split("[dependencies]").nth(1).expect("a [dependencies] table");
        for library in ["axum", "sqlx", "rusqlite", "tokio", "hyper", "as-capone-server"] {
            let named = dependencies.lines().any(|l| l.split(['=', '.', ' ']).next() == Some(library));
            assert!(!named, "crates/domain must not depend on {library}");
        }
    }
}
