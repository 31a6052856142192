//! A database opened by a command without a server (`as-capone report`,
//! `keys list`, `keys use`): a connection of its own, and on SQLite the
//! server's lock file when the command writes.

use super::backend;
use super::db::Db;
use crate::config::sqlite_path;

/// A database opened by a command, without a server: a SQLite connection
/// (read-only when `read_only`: the file may be in use by its server), or a
/// PostgreSQL pool of one.
pub(super) async fn offline_db(url: &str, read_only: bool) -> anyhow::Result<Db> {
    use anyhow::Context;
    Ok(match sqlite_path(url) {
        Some(path) => {
            anyhow::ensure!(path.exists(), "no database file {}", path.display());
            let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).read_only(read_only);
            let pool = sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).connect_with(opts).await?;
            Db::Sqlite(pool)
        }
        None => {
            let pool = sqlx::postgres::PgPoolOptions::new()
                .max_connections(1)
                .acquire_timeout(std::time::Duration::from_secs(10))
                .connect(url)
                .await
                .context("cannot connect to PostgreSQL")?;
            Db::Postgres(pool)
        }
    })
}

/// The lock file of the SQLite database `url`, taken for as long as it is
/// held: refused while a server serves the file (its writer's memory is
/// right only while it is the file's only writer). `None` for PostgreSQL,
/// which has no such lock.
pub(super) fn server_lock(url: &str) -> anyhow::Result<Option<std::fs::File>> {
    Ok(match sqlite_path(url) {
        Some(path) => Some(backend::lock_sqlite_file(&path.display().to_string())?),
        None => None,
    })
}
