//! `as-capone serve` and its database at start-up: an unreachable
//! PostgreSQL is waited for a bounded time with a clear message, then
//! refused; a SQLite file already served by another process is refused.

use sqlx::Connection;
use std::process::Command;
use std::time::{Duration, Instant};
use testkit::{Spawned, TestDb, postgres_admin_url};

fn serve(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_as-capone"));
    c.arg("serve").args(["--listen", "127.0.0.1:0", "--demo-token", ""]).args(args).env("RUST_LOG", "info");
    c
}

#[test]
fn an_unreachable_postgres_is_waited_for_then_refused_with_the_reason() {
    // Port 1 on the loopback: nothing listens there, the connection is refused at once.
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("server.key");
    let started = Instant::now();
    let db = "postgres://postgres:secret@127.0.0.1:1/nowhere";
    let out = serve(&["--db", db, "--db-start-wait-s", "2", "--key-file", key.to_str().unwrap()]).output().unwrap();
    let took = started.elapsed();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("waiting for PostgreSQL at postgres://postgres@127.0.0.1:1/nowhere"), "{log}");
    assert!(log.contains("cannot connect to PostgreSQL at postgres://postgres@127.0.0.1:1/nowhere"), "{log}");
    assert!(!log.contains("secret"), "the password never reaches the log: {log}");
    assert!(log.matches("waiting for PostgreSQL").count() >= 2, "it retried: {log}");
    assert!(took >= Duration::from_secs(2) && took < Duration::from_secs(30), "bounded: {took:?}");
}

#[test]
fn a_sqlite_file_serves_one_process_and_the_second_is_told_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("one.db").display());
    let mut first = Spawned::new(&mut serve(&["--db", &db, "--initial-blocks", "1"]))
        .unwrap()
        .try_wait_listening(Some("first"), Duration::from_secs(120))
        .expect("the first server starts");
    let second = serve(&["--db", &db]).output().unwrap();
    let log = String::from_utf8_lossy(&second.stderr);
    first.sigkill().unwrap();
    assert!(!second.status.success(), "{log}");
    assert!(log.contains("another as-capone process is serving"), "{log}");
    assert!(log.contains("postgres"), "it says where several processes go: {log}");
}

/// `/healthz` says 503 while the database refuses connections, and 200
/// again once it takes them: a load balancer can take the process out and
/// back in.
#[test]
fn healthz_follows_the_postgres_database() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let Some(db) = rt.block_on(TestDb::create()) else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("table.toml"),
        testkit::table_toml("HLT", 300, 100, &[(100, [300, 1000, 10000, 100000])]),
    )
    .unwrap();
    let table = dir.path().join("table.toml");
    let key = dir.path().join("server.key");
    let mut server = Spawned::new(&mut serve(&[
        "--db",
        &db.url,
        "--table",
        table.to_str().unwrap(),
        "--initial-blocks",
        "1",
        "--allow-non-regulation-table",
        "--key-file",
        key.to_str().unwrap(),
    ]))
    .unwrap()
    .wait_listening("server");
    let url = server.url.clone();
    rt.block_on(async {
        let health = || async { reqwest::get(format!("{url}/healthz")).await.unwrap() };
        assert_eq!(health().await.status(), 200);
        let admin = || async { sqlx::PgConnection::connect(&postgres_admin_url()).await.unwrap() };
        let mut conn = admin().await;
        let off = format!("ALTER DATABASE {} ALLOW_CONNECTIONS false", db.name);
        sqlx::query(sqlx::AssertSqlSafe(off)).execute(&mut conn).await.unwrap();
        let kick = format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}'", db.name);
        sqlx::query(sqlx::AssertSqlSafe(kick)).execute(&mut conn).await.unwrap();
        let r = health().await;
        assert_eq!(r.status(), 503);
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["error"], "unavailable", "{body}");
        let on = format!("ALTER DATABASE {} ALLOW_CONNECTIONS true", db.name);
        sqlx::query(sqlx::AssertSqlSafe(on)).execute(&mut conn).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while health().await.status() != 200 {
            assert!(Instant::now() < deadline, "healthz came back");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        // And the server serves again.
        let r = reqwest::Client::new()
            .post(format!("{url}/api/players"))
            .json(&serde_json::json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
    });
    server.sigkill().unwrap();
    rt.block_on(db.drop_db());
}
