//! The binary's version, and `as-capone serve` on a database that a newer
//! release migrated: refused, exit non-zero, with what to do, the
//! database unchanged (docs/upgrading.md). The upgrade of every release's
//! fixture is the server's `upgrade` test (crates/server/tests/api/upgrade.rs).

use crate::common;

use sqlx::Connection;
use std::path::Path;
use std::process::Command;
use testkit::TestDb;

#[test]
fn version_names_the_release_and_the_schema() {
    let out = Command::new(common::exe()).arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let want = format!("as-capone {} (schema {})\n", env!("CARGO_PKG_VERSION"), server::schema_version());
    assert_eq!(text, want);
    assert!(server::schema_version() >= 6, "release 0.1.0 shipped migrations 1 to 6");
}

/// Starts `serve` on `db_url` (migrating it), stops it, marks the database
/// as migrated by a newer release (a row of version 9999 in
/// `_sqlx_migrations`), and starts `serve` again: its exit status and log.
fn serve_on_a_newer_database(dir: &Path, db_url: &str, rt: &tokio::runtime::Runtime) -> (bool, String) {
    std::fs::write(dir.join("table.toml"), testkit::table_toml("UPG", 300, 100, &[(100, [300, 1000, 10000, 100000])]))
        .unwrap();
    let mut first = common::spawn_server(dir, db_url, &["--initial-blocks", "1"]).wait_listening("first");
    first.sigkill().unwrap();
    let insert = "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
                  VALUES (9999, 'a newer release', TRUE, X'00', 1)";
    let count = "SELECT COUNT(*) FROM _sqlx_migrations";
    let before: i64 = rt.block_on(async {
        if db_url.starts_with("postgres") {
            let mut c = sqlx::PgConnection::connect(db_url).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(insert.replace("X'00'", "'\\x00'::bytea"))).execute(&mut c).await.unwrap();
            sqlx::query_scalar(count).fetch_one(&mut c).await.unwrap()
        } else {
            let mut c = sqlx::SqliteConnection::connect(db_url).await.unwrap();
            sqlx::query(insert).execute(&mut c).await.unwrap();
            sqlx::query_scalar(count).fetch_one(&mut c).await.unwrap()
        }
    });
    let out = testkit::serve_command(common::exe(), dir, db_url, &[]).output().unwrap();
    let after: i64 = rt.block_on(async {
        if db_url.starts_with("postgres") {
            let mut c = sqlx::PgConnection::connect(db_url).await.unwrap();
            sqlx::query_scalar(count).fetch_one(&mut c).await.unwrap()
        } else {
            let mut c = sqlx::SqliteConnection::connect(db_url).await.unwrap();
            sqlx::query_scalar(count).fetch_one(&mut c).await.unwrap()
        }
    });
    assert_eq!(before, after, "no migration ran");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_refused(ok: bool, log: &str) {
    assert!(!ok, "serve refuses: {log}");
    let want = format!(
        "this database has schema version 9999, newer than this binary's {} (as-capone {}): use a newer binary",
        server::schema_version(),
        env!("CARGO_PKG_VERSION")
    );
    assert!(log.contains(&want), "{log}");
    assert!(log.contains("nothing was changed"), "{log}");
    assert!(!log.contains("listening on"), "{log}");
}

#[test]
fn serve_refuses_a_sqlite_database_of_a_newer_release() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = testkit::sqlite_url(dir.path(), "newer.db");
    let (ok, log) = serve_on_a_newer_database(dir.path(), &url, &rt);
    assert_refused(ok, &log);
}

#[test]
fn serve_refuses_a_postgres_database_of_a_newer_release() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let Some(db) = rt.block_on(TestDb::create()) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (ok, log) = serve_on_a_newer_database(dir.path(), &db.url, &rt);
    rt.block_on(db.drop_db());
    assert_refused(ok, &log);
}

/// Every finished ticket's record in each release's fixture (what that
/// release's API answered, and what the upgraded server must still answer:
/// the server's `upgrade` test) verifies with this binary's `verify`,
/// against the roots the release published; a changed record does not.
#[test]
fn the_records_of_every_release_verify_with_this_binary() {
    let releases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/tests/fixtures/releases");
    let dir = tempfile::tempdir().unwrap();
    let mut verified = 0;
    for release in std::fs::read_dir(&releases).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        for backend in ["sqlite", "postgres"] {
            let facts: serde_json::Value =
                serde_json::from_slice(&std::fs::read(release.join(format!("{backend}.json"))).unwrap()).unwrap();
            let published = dir.path().join("emissions.json");
            std::fs::write(&published, facts["observed"]["emissions"].to_string()).unwrap();
            let finished =
                facts["observed"]["tickets"].as_array().unwrap().iter().filter(|t| !t["record"]["result"].is_null());
            for t in finished {
                let file = dir.path().join("record.json");
                std::fs::write(&file, t["record"].to_string()).unwrap();
                let verify = |file: &Path| {
                    Command::new(common::exe())
                        .arg("verify")
                        .arg(file)
                        .arg("--manifest")
                        .arg(&published)
                        .output()
                        .unwrap()
                };
                let out = verify(&file);
                assert!(out.status.success(), "{}: {}", release.display(), String::from_utf8_lossy(&out.stdout));
                let mut changed = t["record"].clone();
                changed["result"]["prize_cents"] =
                    serde_json::json!(changed["result"]["prize_cents"].as_i64().unwrap() + 1);
                std::fs::write(&file, changed.to_string()).unwrap();
                assert!(!verify(&file).status.success(), "a changed record fails");
                verified += 1;
            }
        }
    }
    assert!(verified >= 12, "release 0.1.0's finished tickets, on both databases: {verified}");
}
