//! The schema's version and the migrations' gate (docs/upgrading.md).
//!
//! The binary carries its migrations (`migrations/sqlite` and
//! `migrations/postgres`, the same numbers for both databases: the unit
//! test `same_numbers_on_both_databases`); its schema version is the
//! highest of them, read from the embedded migrations, never written by
//! hand. Before the migrations run, [`check_applied`] compares what the
//! database's `_sqlx_migrations` says was applied with what the binary
//! carries, and refuses, changing nothing, a database that a newer binary
//! migrated (a downgrade), whose applied migration is not the text this
//! binary carries (an edited migration) or that misses a migration below
//! one it has (a row of `_sqlx_migrations` deleted), with a message an
//! operator can act on rather than sqlx's; a migration that fails when it
//! runs ([`failed`]) is told the same way, never as a bare SQL error.

use anyhow::Context;
use sqlx::migrate::Migrator;

/// The SQLite migrations embedded in the binary.
pub(crate) static SQLITE: Migrator = sqlx::migrate!("./migrations/sqlite");

/// The PostgreSQL migrations embedded in the binary.
pub(crate) static POSTGRES: Migrator = sqlx::migrate!("./migrations/postgres");

/// The crate's version (the workspace's), as `--version` shows it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The schema version of this binary: its highest migration's number (the
/// same on both databases).
pub fn schema_version() -> i64 {
    highest(&SQLITE)
}

fn highest(migrator: &Migrator) -> i64 {
    migrator.iter().map(|m| m.version).max().unwrap_or(0)
}

/// One row of the database's `_sqlx_migrations`.
#[derive(Clone, Debug)]
pub(crate) struct Applied {
    pub version: i64,
    pub checksum: Vec<u8>,
    pub success: bool,
}

/// Why a database's migrations do not fit this binary.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SchemaError {
    /// A newer binary migrated this database (a downgrade).
    #[error(
        "this database has schema version {database}, newer than this binary's {binary} (as-capone {VERSION}): \
         use a newer binary (docs/upgrading.md); nothing was changed"
    )]
    Newer { database: i64, binary: i64 },
    /// A migration applied to the database is missing from this binary, below its own highest.
    #[error(
        "this database has migration {version} applied, which this binary (as-capone {VERSION}, schema {binary}) \
         does not carry: it was migrated by another build; use the build that made it; nothing was changed"
    )]
    Unknown { version: i64, binary: i64 },
    /// A migration applied to the database is not the text this binary carries.
    #[error(
        "migration {version} applied to this database differs from the one this binary (as-capone {VERSION}) \
         carries: a shipped migration was edited, which is never done (docs/upgrading.md); \
         use the build that migrated this database; nothing was changed"
    )]
    Changed { version: i64 },
    /// A migration started and did not finish.
    #[error(
        "migration {version} did not finish on this database (a failed upgrade): restore the backup taken \
         before the upgrade (docs/upgrading.md); nothing was changed"
    )]
    Unfinished { version: i64 },
    /// A migration below one applied is not recorded as applied: its row of
    /// `_sqlx_migrations` was deleted (running it again would fail, or
    /// change the data a second time).
    #[error(
        "this database has migration {later} applied but not migration {version}, which comes before it: the row \
         of migration {version} in _sqlx_migrations was deleted (a database is migrated in order, never with a \
         gap); running it again would fail or change the data twice, so it is not run: restore the database from \
         a backup (docs/backups.md); nothing was changed"
    )]
    Missing { version: i64, later: i64 },
    /// A migration failed when it ran: its own changes were rolled back
    /// (each runs in one transaction).
    #[error(
        "migration {version} failed on this database and was not applied (its changes were rolled back; the \
         database is left at schema version {left_at}): {error}. If the database already had it (its row of \
         _sqlx_migrations deleted), restore it from a backup (docs/backups.md); otherwise see docs/upgrading.md"
    )]
    Failed { version: i64, left_at: i64, error: String },
}

/// Whether the migrations `applied` to a database fit the binary's
/// `migrator`: every applied one known, with the same checksum, and none
/// newer.
pub(crate) fn check_applied(applied: &[Applied], migrator: &Migrator) -> Result<(), SchemaError> {
    let binary = highest(migrator);
    if let Some(database) = applied.iter().map(|a| a.version).max().filter(|v| *v > binary) {
        return Err(SchemaError::Newer { database, binary });
    }
    for a in applied {
        let Some(m) = migrator.iter().find(|m| m.version == a.version) else {
            return Err(SchemaError::Unknown { version: a.version, binary });
        };
        if !a.success {
            return Err(SchemaError::Unfinished { version: a.version });
        }
        if *m.checksum != *a.checksum {
            return Err(SchemaError::Changed { version: a.version });
        }
    }
    if let Some(later) = applied.iter().map(|a| a.version).max() {
        let missing =
            migrator.iter().map(|m| m.version).filter(|v| *v < later).find(|v| applied.iter().all(|a| a.version != *v));
        if let Some(version) = missing {
            return Err(SchemaError::Missing { version, later });
        }
    }
    Ok(())
}

/// A failure of the migrations' run (sqlx's) as the refusal it is: which
/// migration failed, and `left_at`, the schema version the database is
/// left at.
fn failed(e: sqlx::migrate::MigrateError, left_at: Option<i64>) -> anyhow::Error {
    match e {
        sqlx::migrate::MigrateError::ExecuteMigration(error, version) => {
            SchemaError::Failed { version, left_at: left_at.unwrap_or(0), error: error.to_string() }.into()
        }
        other => anyhow::Error::new(other).context("database migrations"),
    }
}

fn highest_applied(applied: Result<Vec<Applied>, sqlx::Error>) -> Option<i64> {
    applied.ok()?.into_iter().map(|a| a.version).max()
}

/// Start-up's migrations on SQLite: [`check_applied`], then the missing
/// ones run, a failure told by [`SchemaError`].
pub(crate) async fn migrate_sqlite(conn: &mut sqlx::SqliteConnection) -> anyhow::Result<()> {
    let applied = applied_sqlite(conn).await.context("reading the applied migrations")?;
    check_applied(&applied, &SQLITE)?;
    if let Err(e) = SQLITE.run(&mut *conn).await {
        return Err(failed(e, highest_applied(applied_sqlite(conn).await)));
    }
    Ok(())
}

/// Start-up's migrations on PostgreSQL (under the start-up lock): as
/// [`migrate_sqlite`].
pub(crate) async fn migrate_postgres(conn: &mut sqlx::PgConnection) -> anyhow::Result<()> {
    let applied = applied_postgres(conn).await.context("reading the applied migrations")?;
    check_applied(&applied, &POSTGRES)?;
    if let Err(e) = POSTGRES.run(&mut *conn).await {
        return Err(failed(e, highest_applied(applied_postgres(conn).await)));
    }
    Ok(())
}

/// The rows of `_sqlx_migrations` on a SQLite connection (none before the first start).
pub(crate) async fn applied_sqlite(conn: &mut sqlx::SqliteConnection) -> Result<Vec<Applied>, sqlx::Error> {
    let exists: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'")
            .fetch_one(&mut *conn)
            .await?;
    if exists == 0 {
        return Ok(Vec::new());
    }
    let rows: Vec<(i64, Vec<u8>, bool)> =
        sqlx::query_as("SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&mut *conn)
            .await?;
    Ok(rows.into_iter().map(|(version, checksum, success)| Applied { version, checksum, success }).collect())
}

/// The rows of `_sqlx_migrations` on a PostgreSQL connection (none before the first start).
pub(crate) async fn applied_postgres(conn: &mut sqlx::PgConnection) -> Result<Vec<Applied>, sqlx::Error> {
    let exists: bool =
        sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL").fetch_one(&mut *conn).await?;
    if !exists {
        return Ok(Vec::new());
    }
    let rows: Vec<(i64, Vec<u8>, bool)> =
        sqlx::query_as("SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&mut *conn)
            .await?;
    Ok(rows.into_iter().map(|(version, checksum, success)| Applied { version, checksum, success }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(m: &Migrator) -> Vec<i64> {
        m.iter().map(|m| m.version).collect()
    }

    #[test]
    fn same_numbers_on_both_databases() {
        assert_eq!(versions(&SQLITE), versions(&POSTGRES), "every migration is written for both databases");
        let n = versions(&SQLITE);
        assert_eq!(n, (1..=n.len() as i64).collect::<Vec<_>>(), "numbered 1, 2, ... without a gap");
        assert_eq!(schema_version(), n.len() as i64);
        assert_eq!(highest(&POSTGRES), schema_version());
    }

    /// `migrations/RELEASED`: every migration a release shipped, with the
    /// SHA-256 of its bytes. A listed file must be there unchanged; both
    /// folders' files are numbered 1, 2, ... without a gap, every listed
    /// number below every unlisted one (a new migration comes after the
    /// shipped ones, it never replaces one).
    #[test]
    fn shipped_migrations_are_never_edited() {
        use sha2::{Digest, Sha256};
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let manifest = std::fs::read_to_string(root.join("RELEASED")).unwrap();
        let mut listed = std::collections::BTreeSet::new();
        for line in manifest.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let [release, hash, path] = line.split_whitespace().collect::<Vec<_>>()[..] else {
                panic!("RELEASED: `release sha256 path` expected: {line}")
            };
            let bytes = std::fs::read(root.join(path))
                .unwrap_or_else(|e| panic!("{path}, shipped by {release}, is gone ({e}): a shipped migration stays"));
            assert_eq!(
                hex::encode(Sha256::digest(&bytes)),
                hash,
                "{path} was shipped by release {release} and has changed since: a shipped migration is never \
                 edited; put the change in a new migration (docs/upgrading.md)"
            );
            listed.insert(path.to_string());
        }
        for folder in ["sqlite", "postgres"] {
            let mut files: Vec<String> = std::fs::read_dir(root.join(folder))
                .unwrap()
                .map(|e| format!("{folder}/{}", e.unwrap().file_name().to_string_lossy()))
                .collect();
            files.sort();
            let numbers: Vec<i64> = files.iter().map(|f| f[folder.len() + 1..][..4].parse().unwrap()).collect();
            assert_eq!(numbers, (1..=files.len() as i64).collect::<Vec<_>>(), "{folder}: numbered without a gap");
            let shipped = files.iter().take_while(|f| listed.contains(*f)).count();
            assert!(shipped >= 6, "{folder}: release 0.1.0 shipped 0001 to 0006");
            assert!(
                files[shipped..].iter().all(|f| !listed.contains(f)),
                "{folder}: the shipped migrations come first: {files:?}"
            );
        }
        assert_eq!(listed.len() % 2, 0, "each shipped migration on both databases: {listed:?}");
    }

    fn all_applied(m: &Migrator) -> Vec<Applied> {
        m.iter().map(|m| Applied { version: m.version, checksum: m.checksum.to_vec(), success: true }).collect()
    }

    #[test]
    fn a_database_the_binary_migrated_or_an_older_one_fits() {
        let all = all_applied(&SQLITE);
        assert_eq!(check_applied(&all, &SQLITE), Ok(()));
        assert_eq!(check_applied(&all[..2], &SQLITE), Ok(()), "an older database is upgraded");
        assert_eq!(check_applied(&[], &SQLITE), Ok(()), "a new database");
    }

    #[test]
    fn a_newer_an_unknown_an_edited_or_an_unfinished_migration_is_refused() {
        let binary = schema_version();
        let mut newer = all_applied(&POSTGRES);
        newer.push(Applied { version: 9999, checksum: vec![1], success: true });
        let e = check_applied(&newer, &POSTGRES).unwrap_err();
        assert_eq!(e, SchemaError::Newer { database: 9999, binary });
        let text = e.to_string();
        assert!(
            text.contains(&format!("schema version 9999, newer than this binary's {binary} (as-capone {VERSION})"))
        );
        assert!(text.contains("nothing was changed"), "{text}");

        let mut edited = all_applied(&SQLITE);
        edited[1].checksum[0] ^= 1;
        assert_eq!(check_applied(&edited, &SQLITE), Err(SchemaError::Changed { version: 2 }));

        let mut unknown = all_applied(&SQLITE);
        unknown.insert(0, Applied { version: 0, checksum: vec![1], success: true });
        assert_eq!(check_applied(&unknown, &SQLITE), Err(SchemaError::Unknown { version: 0, binary }));

        let mut unfinished = all_applied(&SQLITE);
        unfinished.last_mut().unwrap().success = false;
        assert_eq!(check_applied(&unfinished, &SQLITE), Err(SchemaError::Unfinished { version: binary }));

        // A row deleted below the highest applied: the first, or one between.
        for gone in [0, 2] {
            let mut gap = all_applied(&SQLITE);
            let version = gap.remove(gone).version;
            assert_eq!(check_applied(&gap, &SQLITE), Err(SchemaError::Missing { version, later: binary }));
        }
    }
}
