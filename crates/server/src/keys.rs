//! The server key and everything secret derived from it (docs/contract.md
//! Fairness, 4): a copy of the database must not reveal any unrevealed
//! server seed nor any play code, so neither is stored.
//!
//! - The **server key** is 32 random bytes kept outside the database: the
//!   `AS_CAPONE_KEY` environment variable (64 hex digits), or a key file
//!   (`key_file` in the configuration, `--key-file`), or by default for a
//!   SQLite database the file `DB_FILE.key` beside it. A key file that does
//!   not exist is created (mode 0600) on first start, and the log says so.
//!   PostgreSQL has no default: every process sharing a database must be
//!   given the same key.
//! - Each emission stores a random public `seed_salt`; its secret seed is
//!   `HMAC-SHA256(key = server key, message = "as-capone emission seed v1"
//!   || 0x00 || the 32 salt bytes)`. From that seed the `emission` crate
//!   derives the block's shuffle, play codes and every ticket's server seed
//!   ([`emission::seed`]).
//! - The database keeps the key's fingerprint, `HMAC-SHA256(key, "as-capone
//!   key check v1")`, and a server started with another key is refused: its
//!   seeds would not be the committed ones.

use crate::config::Config;
use anyhow::Context;
use emission::EmissionSeed;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::path::{Path, PathBuf};

/// The environment variable that may hold the key itself.
pub const KEY_ENV: &str = "AS_CAPONE_KEY";

/// The server key (see the module doc). `Debug` never shows it.
#[derive(Clone)]
pub struct ServerKey([u8; 32]);

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerKey(<secret>)")
    }
}

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

fn parse_key(text: &str, origin: &str) -> anyhow::Result<ServerKey> {
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(text.trim(), &mut bytes)
        .map_err(|_| anyhow::anyhow!("{origin} must hold the server key as 64 hex digits"))?;
    Ok(ServerKey(bytes))
}

impl ServerKey {
    pub fn from_bytes(bytes: [u8; 32]) -> ServerKey {
        ServerKey(bytes)
    }

    /// The key of `config` (see the module doc), and a line for the log
    /// saying where it comes from.
    pub fn load(config: &Config) -> anyhow::Result<(ServerKey, String)> {
        if let Ok(text) = std::env::var(KEY_ENV) {
            return Ok((parse_key(&text, KEY_ENV)?, format!("server key from ${KEY_ENV}")));
        }
        let path = match (&config.key_file, crate::store::sqlite_path(&config.db)) {
            (Some(p), _) => p.clone(),
            (None, Some(db)) => PathBuf::from(format!("{}.key", db.display())),
            (None, None) => anyhow::bail!(
                "a PostgreSQL database needs the server key: give every process the same --key-file FILE \
                 (created when missing) or ${KEY_ENV} (64 hex digits)"
            ),
        };
        ServerKey::load_or_create(&path)
    }

    /// Reads the key file, creating it with a fresh key when it is missing.
    /// The key is written whole to a temporary file beside it and synced,
    /// then linked to its name (`link` fails if the name exists: no other
    /// process's key is ever replaced), so that a process starting at the
    /// same moment reads either no file or a whole key, never a file still
    /// being written.
    pub fn load_or_create(path: &Path) -> anyhow::Result<(ServerKey, String)> {
        let origin = format!("the key file {}", path.display());
        match std::fs::read_to_string(path) {
            Ok(text) => return Ok((parse_key(&text, &origin)?, format!("server key from {}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {origin}")),
        }
        let key = ServerKey(crate::fairness::random_bytes::<32>());
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".{}.tmp", hex::encode(crate::fairness::random_bytes::<8>())));
        let tmp = PathBuf::from(tmp);
        let written = (|| {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(&tmp)?;
            use std::io::Write;
            writeln!(file, "{}", hex::encode(key.0))?;
            file.sync_all()?;
            std::fs::hard_link(&tmp, path)
        })();
        let _ = std::fs::remove_file(&tmp);
        match written {
            Ok(()) => {
                // The new name itself is durable once its directory is.
                #[cfg(unix)]
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::File::open(dir)
                        .and_then(|d| d.sync_all())
                        .with_context(|| format!("cannot sync {origin}"))?;
                }
                tracing::warn!(
                    file = %path.display(),
                    "created a new server key: keep it safe and apart from the database; without it no \
                     unfinished ticket can be played and no paper block printed"
                );
                Ok((key, format!("new server key in {}", path.display())))
            }
            // Another process created it first: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => ServerKey::load_or_create(path),
            Err(e) => Err(e).with_context(|| format!("cannot create {origin}")),
        }
    }

    /// `HMAC-SHA256(key, parts...)`: what else the key authenticates (a
    /// paper ticket's own token).
    pub fn hmac(&self, parts: &[&[u8]]) -> [u8; 32] {
        hmac(&self.0, parts)
    }

    /// `hex(HMAC-SHA256(key, "as-capone key check v1"))`, kept in the database.
    pub fn fingerprint(&self) -> String {
        hex::encode(hmac(&self.0, &[b"as-capone key check v1"]))
    }

    /// The secret seed of the emission whose salt is `salt`.
    pub fn emission_seed(&self, salt: &[u8; 32]) -> EmissionSeed {
        EmissionSeed::from_bytes(hmac(&self.0, &[b"as-capone emission seed v1", &[0], salt]))
    }
}

/// Where tickets' server seeds come from.
#[derive(Clone, Debug)]
pub struct Keyring {
    key: ServerKey,
    /// INSECURE, tests only: every ticket's seed (see
    /// [`crate::fairness::ServerSeeds`]), still committed in the leaves.
    fixed: Option<[u8; 32]>,
}

impl Keyring {
    pub fn new(key: ServerKey, fixed: Option<[u8; 32]>) -> Keyring {
        Keyring { key, fixed }
    }

    pub fn key(&self) -> &ServerKey {
        &self.key
    }

    /// The test-only seed every ticket gets, if set.
    pub fn fixed(&self) -> Option<[u8; 32]> {
        self.fixed
    }

    /// The secret seed of the emission whose salt is `salt`.
    pub fn emission_seed(&self, salt: &[u8; 32]) -> EmissionSeed {
        self.key.emission_seed(salt)
    }

    /// The server seed of one ticket, committed in its block's root.
    pub fn server_seed(&self, salt: &[u8; 32], emission: u32, block: u32, position: u32) -> [u8; 32] {
        match self.fixed {
            Some(seed) => seed,
            None => self.emission_seed(salt).server_seed(emission, block, position),
        }
    }
}

/// Parses a stored salt (64 hex digits).
pub fn parse_salt(hex_salt: &str) -> Option<[u8; 32]> {
    let mut salt = [0u8; 32];
    hex::decode_to_slice(hex_salt, &mut salt).ok().map(|_| salt)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Processes starting together on one PostgreSQL database share one
    /// key file: whoever creates it, every one of them reads the whole key,
    /// never a file still being written (a flaky `scaleout` test once
    /// started a second server that read an empty key file).
    #[test]
    fn processes_creating_the_key_file_together_all_read_one_whole_key() {
        for round in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("k.key");
            let start = std::sync::Barrier::new(8);
            let keys: Vec<String> = std::thread::scope(|s| {
                let threads: Vec<_> = (0..8)
                    .map(|_| {
                        s.spawn(|| {
                            start.wait();
                            ServerKey::load_or_create(&path).map(|(k, _)| k.fingerprint())
                        })
                    })
                    .collect();
                threads
                    .into_iter()
                    .map(|t| t.join().unwrap().unwrap_or_else(|e| panic!("round {round}: {e:#}")))
                    .collect()
            });
            assert!(keys.iter().all(|k| *k == keys[0]), "round {round}: different keys {keys:?}");
            let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
            assert_eq!(left, vec![std::ffi::OsString::from("k.key")], "round {round}: temporary files left");
        }
    }

    #[test]
    fn a_missing_key_file_is_created_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.key");
        let (a, line) = ServerKey::load_or_create(&path).unwrap();
        assert!(line.starts_with("new server key"), "{line}");
        let (b, line) = ServerKey::load_or_create(&path).unwrap();
        assert!(line.starts_with("server key from"), "{line}");
        assert_eq!(a.fingerprint(), b.fingerprint());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        std::fs::write(&path, "not hex").unwrap();
        assert!(ServerKey::load_or_create(&path).unwrap_err().to_string().contains("64 hex digits"));
        assert!(!format!("{a:?}").contains(&hex::encode(a.0)));
    }

    #[test]
    fn emission_seeds_are_the_documented_hmac() {
        // Written from the definition with RFC 2104 by hand, so that the
        // derivation does not only agree with itself.
        use sha2::Digest;
        let key = ServerKey([7; 32]);
        let salt = [9u8; 32];
        let (mut ipad, mut opad) = ([0x36u8; 64], [0x5cu8; 64]);
        for i in 0..32 {
            ipad[i] ^= 7;
            opad[i] ^= 7;
        }
        let mut msg = b"as-capone emission seed v1\x00".to_vec();
        msg.extend_from_slice(&salt);
        let inner = Sha256::new().chain_update(ipad).chain_update(&msg).finalize();
        let outer: [u8; 32] = Sha256::new().chain_update(opad).chain_update(inner).finalize().into();
        assert_eq!(key.emission_seed(&salt).as_bytes(), &outer);
        assert_ne!(ServerKey([8; 32]).emission_seed(&salt).as_bytes(), &outer, "another key, another seed");
        let ring = Keyring::new(key.clone(), None);
        assert_eq!(ring.server_seed(&salt, 1, 2, 3), key.emission_seed(&salt).server_seed(1, 2, 3));
        assert_eq!(Keyring::new(key, Some([1; 32])).server_seed(&salt, 1, 2, 3), [1; 32]);
    }
}
