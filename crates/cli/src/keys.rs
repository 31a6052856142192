//! `as-capone keys`: the server key ring (docs/keys.md). `new` makes a
//! key file, `list` shows the ring as the database knows it, `use` makes a
//! key current for new emissions.

use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct KeysArgs {
    #[command(subcommand)]
    command: KeysCommand,
}

#[derive(Subcommand, Debug)]
enum KeysCommand {
    /// Make a new server key (OS CSPRNG) in a key directory, as KEY_DIR/ID.key (0600); print its id and
    /// fingerprint. It is not current until `keys use ID`.
    New {
        /// The key directory (created 0700 when missing).
        #[arg(long, env = "AS_CAPONE_KEY_DIR")]
        key_dir: PathBuf,
        /// The key id [default: one more than the highest in the directory].
        #[arg(long)]
        id: Option<u32>,
    },
    /// The key ring as the database knows it: ids, fingerprints, created, current, and which emissions
    /// use each key (with their unfinished tickets).
    List {
        /// The database (sqlite://FILE or postgres://...).
        #[arg(long, env = "AS_CAPONE_DB")]
        db: String,
        /// One JSON document rather than lines.
        #[arg(long)]
        json: bool,
    },
    /// Make key ID current: new emissions are made with it; earlier emissions keep their own key. Every
    /// server process must hold its file first. On SQLite, stop the server first.
    Use {
        /// The key id (its file KEY_DIR/ID.key).
        id: u32,
        /// The key directory holding ID.key.
        #[arg(long, env = "AS_CAPONE_KEY_DIR")]
        key_dir: PathBuf,
        /// The database (sqlite://FILE or postgres://...).
        #[arg(long, env = "AS_CAPONE_DB")]
        db: String,
    },
}

pub fn run(args: KeysArgs) -> anyhow::Result<()> {
    let rt = || tokio::runtime::Builder::new_current_thread().enable_all().build();
    match args.command {
        KeysCommand::New { key_dir, id } => {
            let (id, key, path) = server::new_key_file(&key_dir, id)?;
            println!("key {id} fingerprint {} file {}", key.fingerprint(), path.display());
            println!(
                "copy it to every server's key directory and keep a copy apart from the database; then \
                 `as-capone keys use {id}` makes it current"
            );
        }
        KeysCommand::List { db, json } => {
            let ring = rt()?.block_on(server::ring_from(&db))?;
            if json {
                println!("{}", serde_json::json!({ "keys": ring }));
                return Ok(());
            }
            for k in &ring {
                let state = match (k.current, k.retired_ms) {
                    (true, _) => "current".to_string(),
                    (false, Some(ms)) => format!("retired {}", format::iso8601(ms)),
                    (false, None) => "never current".to_string(),
                };
                let used: Vec<String> =
                    k.emissions.iter().map(|(e, left)| format!("{e} ({left} unfinished)")).collect();
                println!(
                    "key {} fingerprint {} created {} {state}; emissions: {}",
                    k.key_id,
                    k.fingerprint,
                    format::iso8601(k.created_ms),
                    if used.is_empty() { "none".to_string() } else { used.join(", ") }
                );
            }
        }
        KeysCommand::Use { id, key_dir, db } => {
            let ring = server::Keyring::with_keys(server::read_key_dir(&key_dir)?, None);
            println!("{}", rt()?.block_on(server::make_current(&db, &ring, id))?);
        }
    }
    Ok(())
}
