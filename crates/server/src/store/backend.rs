//! The one place where the store's shared code meets a backend: opening
//! one ([`open`]), its [`Writer`] (a write request, closing), the units an
//! emission writes together ([`Units`]), SQLite's lock file, and
//! PostgreSQL's fold of the block figures. No other file outside
//! `sqlite/` and `postgres/` names either backend's internals: what they
//! offer the rest of the store is here, backend-neutral.

use super::db::{Db, on_db};
use super::error::DbResult;
use super::tokens::TokenCheck;
use super::{postgres, sqlite};
use crate::config::{Config, is_postgres_url};
use crate::keys::Keyring;
use crate::metrics::Metrics;
use domain::error::{AppError, StoreError};
use domain::{Changes, Done, Op, Unit};
use std::sync::Arc;

/// The write half of a backend.
pub(super) struct Writer(Backend);

enum Backend {
    Sqlite(sqlite::SqliteWriter),
    Postgres(postgres::PgWriter),
}

/// A backend opened: its pool, its writer, a line for the start log, and
/// on PostgreSQL the connection that holds the start-up lock.
pub(super) struct Opened {
    pub db: Db,
    pub writer: Writer,
    pub description: String,
    pub startup: Option<sqlx::PgConnection>,
}

/// Connects to the backend `config.db` names (waiting for a database that
/// is still starting), migrates, and starts its writer. On PostgreSQL the
/// start-up lock is held until [`release_startup_lock`].
pub(super) async fn open(config: &Config, metrics: Arc<Metrics>, keys: Arc<Keyring>) -> anyhow::Result<Opened> {
    Ok(if is_postgres_url(&config.db) {
        let (pool, startup) = postgres::connect(config).await?;
        let writer = postgres::PgWriter::start(pool.clone(), metrics, keys);
        Opened {
            db: Db::Postgres(pool),
            writer: Writer(Backend::Postgres(writer)),
            description: postgres::describe(&config.db, config),
            startup: Some(startup),
        }
    } else {
        let opened = sqlite::open(config, metrics, keys).await?;
        Opened {
            db: Db::Sqlite(opened.read),
            writer: Writer(Backend::Sqlite(opened.writer)),
            description: opened.description,
            startup: None,
        }
    })
}

/// Lets the next process start (PostgreSQL).
pub(super) async fn release_startup_lock(conn: sqlx::PgConnection) {
    postgres::release_startup_lock(conn).await;
}

impl Writer {
    /// A write request. PostgreSQL's runs the whole use case on the
    /// request's task, a future of about 9 KB: it is boxed (see
    /// `Store::write`).
    pub(super) async fn write(&self, op: Op) -> Result<Done, AppError> {
        match &self.0 {
            Backend::Sqlite(w) => w.write(op).await,
            Backend::Postgres(w) => Box::pin(w.run(op, None)).await,
        }
    }

    /// A write request whose caller's token, remembered by this process,
    /// the request's first statement confirms (PostgreSQL; SQLite trusts
    /// what it remembers).
    pub(super) async fn write_checked(&self, op: Op, check: Option<TokenCheck>) -> Result<Done, AppError> {
        match &self.0 {
            Backend::Sqlite(w) => w.write(op).await,
            Backend::Postgres(w) => Box::pin(w.run(op, check)).await,
        }
    }

    /// Units written together (an emission's), see [`Units`].
    pub(super) async fn units(&self) -> Result<Units<'_>, AppError> {
        Ok(Units(match &self.0 {
            Backend::Sqlite(w) => Several::Sqlite(w),
            Backend::Postgres(w) => Several::Postgres(Box::new(w.unit().await?)),
        }))
    }

    /// Stops taking writes and finishes the ones queued.
    pub(super) async fn close(&self) -> Result<(), AppError> {
        match &self.0 {
            Backend::Sqlite(w) => w.close().await?,
            Backend::Postgres(w) => w.close().await,
        }
        Ok(())
    }
}

/// Where several units go that are written as one (an emission's blocks,
/// written and published): on PostgreSQL one transaction of their own,
/// which any number of processes selling meanwhile never see until it
/// commits; on SQLite each unit a write request in the writer's queue,
/// beside the players' requests, so that a block never stops the game for
/// more than one unit.
pub(super) struct Units<'a>(Several<'a>);

enum Several<'a> {
    Sqlite(&'a sqlite::SqliteWriter),
    Postgres(Box<postgres::PgUnit>),
}

impl Units<'_> {
    /// PostgreSQL: waits for the transaction's advisory lock `key`, which
    /// other processes take too. SQLite has one process: nothing to wait
    /// for.
    pub(super) async fn lock(&mut self, key: i64) -> Result<(), AppError> {
        if let Several::Postgres(unit) = &mut self.0 {
            sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(key).execute(unit.c()).await.db()?;
        }
        Ok(())
    }

    /// A row of two integers read by `sql`: in the transaction on
    /// PostgreSQL, from `db`'s read pool on SQLite.
    pub(super) async fn read_pair(&mut self, db: &Db, sql: &'static str) -> Result<(i64, i64), AppError> {
        Ok(match &mut self.0 {
            Several::Postgres(unit) => sqlx::query_as(sql).fetch_one(unit.c()).await.db()?,
            Several::Sqlite(_) => on_db!(db, pool => sqlx::query_as(sql).fetch_one(pool).await.db()?),
        })
    }

    /// Writes one unit.
    pub(super) async fn put(&mut self, changes: Changes) -> Result<(), AppError> {
        match &mut self.0 {
            Several::Postgres(unit) => Ok(unit.apply(&changes).await?),
            Several::Sqlite(w) => w.write(Op::Apply(Box::new(changes))).await.map(|_| ()),
        }
    }

    /// Commits them (PostgreSQL's transaction; SQLite's units are
    /// committed as they go).
    pub(super) async fn commit(self) -> Result<(), AppError> {
        match self.0 {
            Several::Postgres(unit) => Ok(unit.commit().await?),
            Several::Sqlite(_) => Ok(()),
        }
    }
}

/// Takes the lock file of the SQLite database file `path`, for as long as
/// the file returned is held: refused while a server serves it.
pub(super) fn lock_sqlite_file(path: &str) -> anyhow::Result<std::fs::File> {
    sqlite::lock_file(path)
}

/// Folds the block figures of ended PostgreSQL connections
/// (`postgres::fold_block_figures`); the rows folded. SQLite keeps one row
/// per block: 0.
pub(super) async fn fold_block_figures(db: &Db) -> Result<u64, StoreError> {
    match db {
        Db::Sqlite(_) => Ok(0),
        Db::Postgres(pool) => postgres::fold_block_figures(pool).await,
    }
}
