//! A fresh PostgreSQL database for one test, dropped at the end.
//!
//! The tests that need PostgreSQL run on the real PostgreSQL of the machine
//! (`AS_CAPONE_TEST_PG`, default `postgres://postgres@127.0.0.1:5432/postgres`,
//! the maintenance database through which test databases are created and
//! dropped). Where PostgreSQL is unreachable the tests that need it say so
//! loudly and pass, unless `AS_CAPONE_REQUIRE_POSTGRES` is set (CI sets
//! it): then they fail.

use sqlx::Connection;
use std::sync::atomic::{AtomicU64, Ordering};

/// The maintenance database's URL.
pub fn postgres_admin_url() -> String {
    std::env::var("AS_CAPONE_TEST_PG").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// Whether a missing PostgreSQL is a failure (`AS_CAPONE_REQUIRE_POSTGRES`
/// set, and neither empty nor `0`) rather than a loud skip.
fn postgres_required() -> bool {
    std::env::var_os("AS_CAPONE_REQUIRE_POSTGRES").is_some_and(|v| !v.is_empty() && v != "0")
}

/// A database created for one test.
pub struct TestDb {
    /// The database's URL, for the server's `--db`.
    pub url: String,
    /// The database's name (`as_capone_test_<pid>_<n>_<nanos>`).
    pub name: String,
    /// The maintenance database it was created through.
    admin: String,
    dropped: bool,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

impl TestDb {
    /// Creates `as_capone_test_<pid>_<n>`; `None` (after a loud message on
    /// stderr) when PostgreSQL cannot be reached and is not required.
    pub async fn create() -> Option<TestDb> {
        match TestDb::create_on(&postgres_admin_url(), postgres_required(), "as_capone_test").await {
            Ok(db) => db,
            Err(e) => panic!("{e}"),
        }
    }

    /// Creates `<prefix>_<pid>_<n>_<nanos>` through the maintenance database
    /// `admin`. `Ok(None)` (after a loud message on stderr) when PostgreSQL
    /// cannot be reached and `required` is false; an error when it is true.
    pub async fn create_on(admin: &str, required: bool, prefix: &str) -> Result<Option<TestDb>, String> {
        let mut conn = match sqlx::PgConnection::connect(admin).await {
            Ok(c) => c,
            Err(e) if !required => {
                eprintln!(
                    "skipped: PostgreSQL unreachable at {admin} ({e}); set AS_CAPONE_REQUIRE_POSTGRES=1 to fail instead"
                );
                return Ok(None);
            }
            Err(e) => {
                return Err(format!(
                    "PostgreSQL is required (AS_CAPONE_REQUIRE_POSTGRES) and unreachable at {admin}: {e}"
                ));
            }
        };
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().subsec_nanos();
        let name = format!("{prefix}_{}_{n}_{nanos}", std::process::id());
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await
            .map_err(|e| format!("CREATE DATABASE {name}: {e}"))?;
        let _ = conn.close().await;
        let base = admin.rsplit_once('/').map_or(admin, |(b, _)| b);
        Ok(Some(TestDb { url: format!("{base}/{name}"), name, admin: admin.to_string(), dropped: false }))
    }

    /// Leaves the database in place when this value is dropped (a run kept
    /// for inspection).
    pub fn keep(&mut self) {
        self.dropped = true;
    }

    /// Drops the database (connections still open are terminated).
    pub async fn drop_db(mut self) {
        drop_database(&self.admin, &self.name).await;
        self.dropped = true;
    }
}

async fn drop_database(admin: &str, name: &str) {
    if let Ok(mut conn) = sqlx::PgConnection::connect(admin).await {
        let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
        if let Err(e) = sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut conn).await {
            eprintln!("could not drop the test database {name}: {e}");
        }
        let _ = conn.close().await;
    }
}

impl Drop for TestDb {
    /// A test that panicked still removes its database (on a thread of its
    /// own: a runtime cannot be started inside the test's runtime).
    fn drop(&mut self) {
        if self.dropped {
            return;
        }
        let (admin, name) = (self.admin.clone(), self.name.clone());
        let _ = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() {
                rt.block_on(drop_database(&admin, &name));
            }
        })
        .join();
    }
}
