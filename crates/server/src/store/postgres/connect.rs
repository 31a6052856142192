//! Connecting to PostgreSQL: the URL for the log (without its password),
//! the wait for a database still starting, the start-up lock under which
//! processes starting together migrate and bootstrap one at a time.

use crate::config::Config;
use anyhow::Context;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::{ConnectOptions, Connection};
use std::str::FromStr;
use std::time::{Duration, Instant};

/// The advisory lock held by a process while it migrates and makes the
/// first emission ("ASCSTART").
const STARTUP_LOCK: i64 = 0x4153_4353_5441_5254;

/// The URL without its password, for the log.
fn redacted(url: &str) -> String {
    match PgConnectOptions::from_str(url) {
        Ok(o) => format!(
            "postgres://{}@{}:{}/{}",
            o.get_username(),
            o.get_host(),
            o.get_port(),
            o.get_database().unwrap_or("")
        ),
        Err(_) => "postgres://(unparsable URL)".into(),
    }
}

pub(crate) fn describe(url: &str, config: &Config) -> String {
    format!(
        "PostgreSQL {} (pool of {}, row locks, one transaction per request)",
        redacted(url),
        config.db_max_connections
    )
}

/// A connection error worth waiting out at start-up: the server is not
/// listening yet, or says it is starting or shutting down.
fn transient(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut => true,
        sqlx::Error::Database(d) => d.code().is_some_and(|c| c.starts_with("57P") || c == "53300"),
        _ => false,
    }
}

/// Connects (waiting up to `db_start_wait_s` for a database that does not
/// answer yet), takes the start-up lock and migrates. The returned
/// connection holds the lock until [`release_startup_lock`].
pub(crate) async fn connect(config: &Config) -> anyhow::Result<(PgPool, PgConnection)> {
    let where_ = redacted(&config.db);
    let opts = PgConnectOptions::from_str(&config.db)
        .with_context(|| format!("bad PostgreSQL URL {where_}"))?
        .log_slow_statements(tracing::log::LevelFilter::Warn, Duration::from_secs(1));
    let deadline = Instant::now() + Duration::from_secs(config.db_start_wait_s);
    let mut attempt = 1;
    let mut lock_conn = loop {
        match PgConnection::connect_with(&opts).await {
            Ok(c) => break c,
            Err(e) if transient(&e) && Instant::now() < deadline => {
                tracing::warn!(
                    "waiting for PostgreSQL at {where_} (attempt {attempt}, up to {} s): {e}",
                    config.db_start_wait_s
                );
                attempt += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => {
                return Err(anyhow::anyhow!("cannot connect to PostgreSQL at {where_}: {e}")
                    .context(format!("gave up after {attempt} attempt(s)")));
            }
        }
    };
    let locked: bool =
        sqlx::query_scalar("SELECT pg_try_advisory_lock($1)").bind(STARTUP_LOCK).fetch_one(&mut lock_conn).await?;
    if !locked {
        tracing::info!("another process is starting on this database: waiting for it to finish its start-up");
        sqlx::query("SELECT pg_advisory_lock($1)").bind(STARTUP_LOCK).execute(&mut lock_conn).await?;
    }
    crate::store::schema::migrate_postgres(&mut lock_conn).await?;
    let pool = PgPoolOptions::new()
        .max_connections(config.db_max_connections)
        .acquire_timeout(Duration::from_millis(config.db_acquire_timeout_ms))
        .connect_with(opts)
        .await
        .with_context(|| format!("connection pool to {where_}"))?;
    Ok((pool, lock_conn))
}

/// Lets the next process start.
pub(crate) async fn release_startup_lock(mut conn: PgConnection) {
    if let Err(e) = sqlx::query("SELECT pg_advisory_unlock($1)").bind(STARTUP_LOCK).execute(&mut conn).await {
        tracing::warn!(error = %e, "releasing the start-up lock (it goes with the connection)");
    }
    let _ = conn.close().await;
}
