//! The ledger's database: opened with its migrations, and every wallet
//! call as one `BEGIN IMMEDIATE` transaction that records its nonce first.

use super::answer::{Answer, LedgerError, NonceUse};
use anyhow::Context;
use sqlx::SqliteConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use std::path::Path;
use std::time::Duration;

/// The ledger's database.
#[derive(Debug, Clone)]
pub struct Ledger {
    pub(super) pool: SqlitePool,
}

impl Ledger {
    /// Opens (creating it if needed) the ledger at `path` and applies the migrations.
    pub async fn open(path: &Path) -> anyhow::Result<Ledger> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // FULL with WAL: a commit is on disk (fsync of the WAL) before
            // its answer leaves, so that an answer given is never lost, even
            // to a power failure (NORMAL would survive a crash of this
            // process but not of the machine).
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .with_context(|| format!("opening the ledger {}", path.display()))?;
        sqlx::migrate!("./migrations").run(&pool).await.context("the ledger's migrations")?;
        Ok(Ledger { pool })
    }

    /// Closes the database (waits for the calls in progress).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn record_nonce(
        conn: &mut SqliteConnection,
        nonce: Option<&NonceUse>,
        now_ms: i64,
    ) -> Result<(), LedgerError> {
        let Some(n) = nonce else { return Ok(()) };
        sqlx::query("DELETE FROM nonces WHERE seen_ms < ?").bind(n.forget_before_ms).execute(&mut *conn).await?;
        let inserted =
            sqlx::query("INSERT INTO nonces (key_id, nonce, seen_ms) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
                .bind(&n.key_id)
                .bind(&n.nonce)
                .bind(now_ms)
                .execute(&mut *conn)
                .await?
                .rows_affected();
        if inserted == 0 { Err(LedgerError::Replayed) } else { Ok(()) }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction after recording the
    /// nonce; commits whatever answer it gives (a refusal moved nothing).
    pub(super) async fn call<F>(&self, nonce: Option<&NonceUse>, now_ms: i64, body: F) -> Result<Answer, LedgerError>
    where
        F: for<'c> AsyncFnOnce(&'c mut SqliteConnection) -> Result<Answer, sqlx::Error>,
    {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        Self::record_nonce(&mut tx, nonce, now_ms).await?;
        let answer = body(&mut *tx).await?;
        tx.commit().await?;
        Ok(answer)
    }

    /// Records the nonce alone (a request refused before the ledger, e.g. a bad body).
    pub async fn nonce_only(&self, nonce: Option<&NonceUse>, now_ms: i64) -> Result<(), LedgerError> {
        self.call(nonce, now_ms, async |_| Ok(Answer { status: 0, body: Vec::new() })).await.map(|_| ())
    }
}
