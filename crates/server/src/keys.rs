//! The server key and everything secret derived from it (docs/contract.md
//! Fairness, 4): a copy of the database must not reveal any unrevealed
//! server seed nor any play code, so neither is stored.
//!
//! - A **server key** is 32 random bytes kept outside the database. The
//!   server holds a **key ring** of them, each with a key id (1, 2, ...):
//!   a key directory (`key_dir`, `--key-dir`) holding one file `ID.key`
//!   per key, or a single key, key id 1: the `AS_CAPONE_KEY` environment
//!   variable (64 hex digits), or a key file (`key_file`, `--key-file`), or
//!   by default for a SQLite database the file `DB_FILE.key` beside it. A
//!   single key file that does not exist (or `KEY_DIR/1.key` in an empty
//!   key directory) is created (mode 0600) on first start, and the log says
//!   so. PostgreSQL has no default: every process sharing a database must
//!   be given the same ring. docs/keys.md has the rotation procedure.
//! - Each emission records the id of the key it was made with (the
//!   database keeps ids and fingerprints, never keys): new emissions use
//!   the database's current key, an emission keeps its own key for its
//!   whole life (its blocks, its tickets' seeds, its paper tickets' tokens).
//! - Each emission stores a random public `seed_salt`; its secret seed is
//!   `HMAC-SHA256(key = server key, message = "as-capone emission seed v1"
//!   || 0x00 || the 32 salt bytes)`. From that seed the `emission` crate
//!   derives the block's shuffle, play codes and every ticket's server seed
//!   ([`emission::EmissionSeed`]).
//! - The database keeps each key's fingerprint, `HMAC-SHA256(key, "as-capone
//!   key check v1")`, by key id, and a server given another key under that
//!   id is refused: its seeds would not be the committed ones
//!   (`store/keyring.rs`).

use crate::config::Config;
use anyhow::Context;
use emission::EmissionSeed;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::BTreeMap;
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

    /// The single key of `config` (key id 1: `AS_CAPONE_KEY`, `key_file` or
    /// the SQLite default; see the module doc), and a line for the log
    /// saying where it comes from. A configuration with `key_dir` has a
    /// ring: [`Keyring::load`].
    pub fn load(config: &Config) -> anyhow::Result<(ServerKey, String)> {
        ServerKey::load_noting(config).map(|(key, line, _)| (key, line))
    }

    /// [`ServerKey::load`], and the key file it created, if it made one.
    fn load_noting(config: &Config) -> anyhow::Result<(ServerKey, String, Option<PathBuf>)> {
        if let Ok(text) = std::env::var(KEY_ENV) {
            return Ok((parse_key(&text, KEY_ENV)?, format!("server key from ${KEY_ENV}"), None));
        }
        let path = match (&config.key_file, crate::config::sqlite_path(&config.db)) {
            (Some(p), _) => p.clone(),
            (None, Some(db)) => PathBuf::from(format!("{}.key", db.display())),
            (None, None) => anyhow::bail!(
                "a PostgreSQL database needs the server key: give every process the same --key-file FILE \
                 (created when missing) or ${KEY_ENV} (64 hex digits)"
            ),
        };
        let (key, line, created) = ServerKey::load_or_create_noting(&path)?;
        Ok((key, line, created.then_some(path)))
    }

    /// Reads the key file, creating it with a fresh key when it is missing.
    /// The key is written whole to a temporary file beside it and synced,
    /// then linked to its name (`link` fails if the name exists: no other
    /// process's key is ever replaced), so that a process starting at the
    /// same moment reads either no file or a whole key, never a file still
    /// being written.
    pub fn load_or_create(path: &Path) -> anyhow::Result<(ServerKey, String)> {
        ServerKey::load_or_create_noting(path).map(|(key, line, _)| (key, line))
    }

    /// [`ServerKey::load_or_create`], and whether this call created the file.
    fn load_or_create_noting(path: &Path) -> anyhow::Result<(ServerKey, String, bool)> {
        let origin = format!("the key file {}", path.display());
        match std::fs::read_to_string(path) {
            Ok(text) => {
                refuse_open_key_file(path)?;
                return Ok((parse_key(&text, &origin)?, format!("server key from {}", path.display()), false));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {origin}")),
        }
        match ServerKey::create(path) {
            Ok(key) => {
                tracing::warn!(
                    file = %path.display(),
                    "created a new server key: keep it safe and apart from the database; without it no \
                     unfinished ticket can be played and no paper block printed"
                );
                Ok((key, format!("new server key in {}", path.display()), true))
            }
            // Another process created it first: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => ServerKey::load_or_create_noting(path),
            Err(e) => Err(e).with_context(|| format!("cannot create {origin}")),
        }
    }

    /// A fresh key (OS CSPRNG) written to `path`, which must not exist
    /// (`AlreadyExists` otherwise: no key is ever replaced). The key is
    /// written whole to a temporary file beside it and synced, then linked
    /// to its name, and the directory synced.
    pub fn create(path: &Path) -> std::io::Result<ServerKey> {
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
        written?;
        // The new name itself is durable once its directory is.
        #[cfg(unix)]
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(dir).and_then(|d| d.sync_all())?;
        }
        Ok(key)
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

/// Where [`Keyring::load`] found the keys: a line for the start's log
/// (its `Display`), and the key file it created, if it made one.
#[derive(Debug)]
pub struct KeyOrigin {
    line: String,
    created: Option<Created>,
}

/// A key file made by this start (and its key directory, if made too).
#[derive(Debug)]
struct Created {
    file: PathBuf,
    fingerprint: String,
    dir: Option<PathBuf>,
}

impl std::fmt::Display for KeyOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.line)
    }
}

impl KeyOrigin {
    /// Removes the key file this start created, for a start the database
    /// refused ([`crate::store::SchemaError`]: checked before anything is
    /// written, and every process of this binary is refused the same):
    /// nothing was made with its key, and a fresh key left beside a
    /// database it does not belong to would be taken for that database's
    /// key at the next start. Only a file still holding the key written
    /// here is removed (and its key directory, if made here and now empty).
    /// A line for the log, when a file was removed.
    pub fn undo_creation(&self) -> Option<String> {
        let created = self.created.as_ref()?;
        let text = std::fs::read_to_string(&created.file).ok()?;
        let key = parse_key(&text, "the key file").ok()?;
        if key.fingerprint() != created.fingerprint {
            return None;
        }
        std::fs::remove_file(&created.file).ok()?;
        if let Some(dir) = &created.dir {
            let _ = std::fs::remove_dir(dir);
        }
        Some(format!(
            "removed the key file {} this start created: the database was refused, nothing was made with that key",
            created.file.display()
        ))
    }
}

/// A key's id in the ring: its file's name in a key directory (`ID.key`),
/// 1 for a single key; the database's `server_keys.key_id`.
pub type KeyId = u32;

/// Where tickets' server seeds come from: the server keys this process
/// holds, by key id (see the module doc).
#[derive(Clone, Debug)]
pub struct Keyring {
    keys: BTreeMap<KeyId, ServerKey>,
    /// INSECURE, tests only: every ticket's seed (see
    /// [`crate::fairness::ServerSeeds`]), still committed in the leaves.
    fixed: Option<[u8; 32]>,
}

/// The key file of key `id` in a key directory.
pub fn key_path(dir: &Path, id: KeyId) -> PathBuf {
    dir.join(format!("{id}.key"))
}

/// The keys of a key directory: every file `ID.key` (ID a number from 1);
/// other files are left alone.
pub fn read_key_dir(dir: &Path) -> anyhow::Result<BTreeMap<KeyId, ServerKey>> {
    let mut keys = BTreeMap::new();
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read the key directory {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read the key directory {}", dir.display()))?;
        let name = entry.file_name();
        let Some((stem, id)) =
            name.to_str().and_then(|n| n.strip_suffix(".key")).and_then(|n| n.parse::<KeyId>().ok().map(|id| (n, id)))
        else {
            continue;
        };
        anyhow::ensure!(
            id >= 1 && stem == id.to_string(),
            "{}: a key file is named ID.key, ID a number from 1 without leading zeros",
            entry.path().display()
        );
        let path = entry.path();
        refuse_open_key_file(&path)?;
        let text =
            std::fs::read_to_string(&path).with_context(|| format!("cannot read the key file {}", path.display()))?;
        keys.insert(id, parse_key(&text, &format!("the key file {}", path.display()))?);
    }
    Ok(keys)
}

/// The environment variable systemd sets to its credentials directory
/// (`LoadCredential=`, docs/deployment.md).
const CREDENTIALS_ENV: &str = "CREDENTIALS_DIRECTORY";

/// Refuses a key file its group or others may read or write (the second outside audit):
/// whoever reads a server key opens every unsold paper ticket and foresees
/// every unplayed game, and whoever writes it may swap it. The error names
/// the file, its mode and the fix. A file in systemd's credentials
/// directory (`$CREDENTIALS_DIRECTORY`) is left alone: systemd makes it
/// readable by the service alone, through an ACL that `stat` shows as a
/// group bit (0440).
pub fn refuse_open_key_file(path: &Path) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if std::env::var_os(CREDENTIALS_ENV).is_some_and(|dir| real(path).starts_with(real(Path::new(&dir)))) {
            return Ok(());
        }
        let mode = std::fs::metadata(path)
            .with_context(|| format!("cannot read the mode of the key file {}", path.display()))?
            .permissions()
            .mode()
            & 0o777;
        anyhow::ensure!(
            mode & 0o066 == 0,
            "the key file {} has mode {mode:04o}: its group or others may {} it, and a server key opens every \
             unsold paper ticket and foresees every unplayed game; refused. Make it the owner's alone: chmod 600 {}",
            path.display(),
            match (mode & 0o044 != 0, mode & 0o022 != 0) {
                (true, true) => "read and write",
                (true, false) => "read",
                _ => "write",
            },
            path.display()
        );
    }
    Ok(())
}

/// Creates a key directory (0700) when it is missing.
fn create_key_dir(dir: &Path) -> anyhow::Result<()> {
    if !dir.exists() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).with_context(|| format!("cannot create the key directory {}", dir.display()))?;
    }
    Ok(())
}

/// `as-capone keys new`: a fresh key in `dir` (created 0700 when missing)
/// under the next free id (one more than the highest there), or under `id`;
/// never replaces a file. Its id, key and file.
pub fn new_key_file(dir: &Path, id: Option<KeyId>) -> anyhow::Result<(KeyId, ServerKey, PathBuf)> {
    create_key_dir(dir)?;
    anyhow::ensure!(id != Some(0), "key ids start at 1");
    loop {
        let next = match id {
            Some(id) => id,
            None => read_key_dir(dir)?.keys().next_back().map_or(1, |last| last + 1),
        };
        let path = key_path(dir, next);
        match ServerKey::create(&path) {
            Ok(key) => return Ok((next, key, path)),
            // Made by someone else meanwhile: the next id (or the caller's choice refused).
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && id.is_none() => continue,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                anyhow::bail!("{} exists: a key file is never replaced", path.display())
            }
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
}

impl Keyring {
    /// A ring of one key, key id 1 (a single key file).
    pub fn new(key: ServerKey, fixed: Option<[u8; 32]>) -> Keyring {
        Keyring { keys: BTreeMap::from([(1, key)]), fixed }
    }

    /// A ring of these keys.
    pub fn with_keys(keys: BTreeMap<KeyId, ServerKey>, fixed: Option<[u8; 32]>) -> Keyring {
        Keyring { keys, fixed }
    }

    /// The ring of `config` (see the module doc) and where it came from (a
    /// line for the log, and the file created, if any): the keys of
    /// `key_dir` (`1.key` created when the directory holds none), or the
    /// single key of [`ServerKey::load`] as key 1.
    pub fn load(config: &Config, fixed: Option<[u8; 32]>) -> anyhow::Result<(Keyring, KeyOrigin)> {
        let Some(dir) = &config.key_dir else {
            let (key, origin, created) = ServerKey::load_noting(config)?;
            let created = created.map(|file| Created { fingerprint: key.fingerprint(), file, dir: None });
            return Ok((Keyring::new(key, fixed), KeyOrigin { line: format!("{origin} (key 1)"), created }));
        };
        anyhow::ensure!(
            config.key_file.is_none() && std::env::var_os(KEY_ENV).is_none(),
            "give the server keys one way: key_dir, or key_file or ${KEY_ENV} (a single key), not both"
        );
        let dir_existed = dir.exists();
        let mut keys = if dir_existed { read_key_dir(dir)? } else { BTreeMap::new() };
        let mut created = None;
        if keys.is_empty() {
            create_key_dir(dir)?;
            let file = key_path(dir, 1);
            let (key, _, made) = ServerKey::load_or_create_noting(&file)?;
            let dir = (!dir_existed).then(|| dir.clone());
            created = made.then(|| Created { fingerprint: key.fingerprint(), file, dir });
            keys.insert(1, key);
        }
        let ids: Vec<String> = keys.keys().map(|id| id.to_string()).collect();
        let line = format!("server keys {} from {}", ids.join(", "), dir.display());
        Ok((Keyring { keys, fixed }, KeyOrigin { line, created }))
    }

    /// The key of `id`, if this process holds it.
    pub fn get(&self, id: KeyId) -> Option<&ServerKey> {
        self.keys.get(&id)
    }

    /// Every key held, by id.
    pub fn keys(&self) -> impl Iterator<Item = (KeyId, &ServerKey)> {
        self.keys.iter().map(|(id, k)| (*id, k))
    }

    /// The key of `id` (a stored key id), or what is wrong.
    pub fn key(&self, id: i64) -> Result<&ServerKey, String> {
        KeyId::try_from(id).ok().and_then(|id| self.keys.get(&id)).ok_or_else(|| {
            format!("server key {id} is not in this process's key ring (give its file KEY_DIR/{id}.key; docs/keys.md)")
        })
    }

    /// The test-only seed every ticket gets, if set.
    pub fn fixed(&self) -> Option<[u8; 32]> {
        self.fixed
    }

    /// The secret seed of the emission made with key `key_id` whose salt is `salt`.
    pub fn emission_seed(&self, key_id: i64, salt: &[u8; 32]) -> Result<EmissionSeed, String> {
        Ok(self.key(key_id)?.emission_seed(salt))
    }

    /// The server seed of one ticket, committed in its block's root.
    pub fn server_seed(
        &self,
        key_id: i64,
        salt: &[u8; 32],
        emission: u32,
        block: u32,
        position: u32,
    ) -> Result<[u8; 32], String> {
        match self.fixed {
            Some(seed) => Ok(seed),
            None => Ok(self.emission_seed(key_id, salt)?.server_seed(emission, block, position)),
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

    /// A file written as a key file must be: the owner's alone (0600).
    fn write_0600(path: &Path, text: &str) {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        std::io::Write::write_all(&mut options.open(path).unwrap(), text.as_bytes()).unwrap();
    }

    /// A key file its group or others may read or write is refused, by
    /// name, with its mode and the fix, whether it is the single key file
    /// or one of a key directory's; the owner's alone (0600, 0400) is read.
    #[cfg(unix)]
    #[test]
    fn a_key_file_readable_or_writable_by_group_or_others_is_refused_with_its_mode_and_the_fix() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let single = dir.path().join("server.key");
        let (key, _) = ServerKey::load_or_create(&single).unwrap();
        let ring = dir.path().join("ring");
        let (_, _, one) = new_key_file(&ring, None).unwrap();
        let chmod = |p: &Path, mode: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
        for (mode, may) in
            [(0o644, "read"), (0o604, "read"), (0o640, "read"), (0o620, "write"), (0o666, "read and write")]
        {
            chmod(&single, mode);
            let e = format!("{:#}", ServerKey::load_or_create(&single).unwrap_err());
            let file = single.display();
            assert!(e.contains(&format!("the key file {file} has mode {mode:04o}")), "{e}");
            assert!(e.contains(&format!("its group or others may {may} it")), "{e}");
            assert!(e.contains(&format!("chmod 600 {file}")), "{e}");
            chmod(&one, mode);
            let e = format!("{:#}", read_key_dir(&ring).unwrap_err());
            assert!(e.contains(&format!("the key file {} has mode {mode:04o}", one.display())), "{e}");
            let config = Config { key_dir: Some(ring.clone()), ..Config::default() };
            assert!(format!("{:#}", Keyring::load(&config, None).unwrap_err()).contains("chmod 600"));
        }
        for mode in [0o600, 0o400, 0o700] {
            chmod(&single, mode);
            assert_eq!(ServerKey::load_or_create(&single).unwrap().0.fingerprint(), key.fingerprint());
            chmod(&one, mode);
            assert_eq!(read_key_dir(&ring).unwrap().len(), 1);
        }
    }

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
        assert_eq!(ring.server_seed(1, &salt, 1, 2, 3).unwrap(), key.emission_seed(&salt).server_seed(1, 2, 3));
        assert!(ring.server_seed(2, &salt, 1, 2, 3).unwrap_err().contains("server key 2"));
        assert_eq!(Keyring::new(key, Some([1; 32])).server_seed(1, &salt, 1, 2, 3).unwrap(), [1; 32]);
    }

    /// `keys new` numbers keys one after the other, never replaces a file,
    /// and a key directory reads back every `ID.key` and nothing else.
    #[test]
    fn a_key_directory_holds_numbered_keys_and_new_ones_take_the_next_id() {
        let dir = tempfile::tempdir().unwrap();
        let ring_dir = dir.path().join("keys");
        let (a, ka, pa) = new_key_file(&ring_dir, None).unwrap();
        let (b, kb, _) = new_key_file(&ring_dir, None).unwrap();
        assert_eq!((a, b), (1, 2));
        assert_eq!(pa, ring_dir.join("1.key"));
        assert_ne!(ka.fingerprint(), kb.fingerprint(), "two fresh keys differ");
        assert!(new_key_file(&ring_dir, Some(2)).unwrap_err().to_string().contains("never replaced"));
        let (c, _, _) = new_key_file(&ring_dir, Some(7)).unwrap();
        assert_eq!(c, 7);
        std::fs::write(ring_dir.join("notes.txt"), "not a key").unwrap();
        let read = read_key_dir(&ring_dir).unwrap();
        assert_eq!(read.keys().copied().collect::<Vec<_>>(), vec![1, 2, 7]);
        assert_eq!(read[&2].fingerprint(), kb.fingerprint());
        assert_eq!(new_key_file(&ring_dir, None).unwrap().0, 8);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&ring_dir).unwrap().permissions().mode() & 0o777, 0o700);
            assert_eq!(std::fs::metadata(&pa).unwrap().permissions().mode() & 0o777, 0o600);
        }
        std::fs::write(ring_dir.join("02.key"), "a second name for key 2?").unwrap();
        assert!(read_key_dir(&ring_dir).unwrap_err().to_string().contains("without leading zeros"));
        std::fs::remove_file(ring_dir.join("02.key")).unwrap();
        write_0600(&ring_dir.join("9.key"), "short");
        assert!(read_key_dir(&ring_dir).unwrap_err().to_string().contains("9.key must hold"));
    }

    /// A configuration gives the keys one way; an empty key directory gets
    /// its first key, id 1.
    #[test]
    fn a_configured_key_directory_is_the_ring_and_excludes_a_single_key_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config { key_dir: Some(dir.path().join("ring")), ..Config::default() };
        let (ring, line) = Keyring::load(&config, None).unwrap();
        assert_eq!(ring.keys().map(|(id, _)| id).collect::<Vec<_>>(), vec![1], "{line}");
        assert!(dir.path().join("ring/1.key").exists());
        config.key_file = Some(dir.path().join("k.key"));
        assert!(Keyring::load(&config, None).unwrap_err().to_string().contains("not both"));
    }
}
