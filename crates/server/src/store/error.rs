//! The databases' errors as [`StoreError`]s: which failures mean the
//! database is unavailable (503) and which conflicts a request may retry.
//! Here, in the store, so that the `domain` crate names no database
//! library. The store's code says where a library's error becomes a
//! [`StoreError`] with [`DbResult::db`]: `query.fetch_one(&mut *tx).await.db()?`.

use domain::error::StoreError;
use std::sync::Arc;

/// A result of a database library, its error made a [`StoreError`].
pub(crate) trait DbResult<T> {
    fn db(self) -> Result<T, StoreError>;
}

impl<T> DbResult<T> for Result<T, sqlx::Error> {
    fn db(self) -> Result<T, StoreError> {
        self.map_err(sqlx_error)
    }
}

impl<T> DbResult<T> for Result<T, rusqlite::Error> {
    fn db(self) -> Result<T, StoreError> {
        self.map_err(sqlite_error)
    }
}

/// sqlx's error (either database) as a [`StoreError`].
pub(crate) fn sqlx_error(e: sqlx::Error) -> StoreError {
    match e {
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_) => {
            StoreError::Unavailable(Arc::new(e))
        }
        e => {
            // PostgreSQL's serialization failure (40001), deadlock
            // (40P01), or a unique key taken by a concurrent
            // transaction (23505).
            let retryable = e
                .as_database_error()
                .and_then(|d| d.code())
                .is_some_and(|code| matches!(code.as_ref(), "40001" | "40P01" | "23505"));
            StoreError::Database { retryable, source: Arc::new(e) }
        }
    }
}

/// rusqlite's error (the SQLite writer's) as a [`StoreError`].
pub(crate) fn sqlite_error(e: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode::{CannotOpen, DatabaseBusy, DatabaseLocked, DiskFull, SystemIoFailure};
    match e.sqlite_error_code() {
        Some(DatabaseBusy | DatabaseLocked | DiskFull | CannotOpen | SystemIoFailure) => {
            StoreError::Unavailable(Arc::new(e))
        }
        // One writer, one connection: nothing to retry against.
        _ => StoreError::Database { retryable: false, source: Arc::new(e) },
    }
}
