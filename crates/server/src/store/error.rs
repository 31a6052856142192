//! The databases' errors as [`StoreError`]s: which failures mean the
//! database is unavailable (503) and which conflicts a request may retry.
//! Here, in the store, so that `error.rs` and `core` name no database
//! library.

use crate::error::{AppError, StoreError};
use std::sync::Arc;

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
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
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode::{CannotOpen, DatabaseBusy, DatabaseLocked, DiskFull, SystemIoFailure};
        match e.sqlite_error_code() {
            Some(DatabaseBusy | DatabaseLocked | DiskFull | CannotOpen | SystemIoFailure) => {
                StoreError::Unavailable(Arc::new(e))
            }
            // One writer, one connection: nothing to retry against.
            _ => StoreError::Database { retryable: false, source: Arc::new(e) },
        }
    }
}

impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> AppError {
        AppError::Storage(StoreError::from(e))
    }
}
