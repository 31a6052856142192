//! `as-capone serve` and its database at start-up: an unreachable
//! PostgreSQL is waited for a bounded time with a clear message, then
//! refused; a SQLite file already served by another process is refused.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn serve(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_as-capone"));
    c.arg("serve").args(["--listen", "127.0.0.1:0", "--demo-token", ""]).args(args).env("RUST_LOG", "info");
    c
}

#[test]
fn an_unreachable_postgres_is_waited_for_then_refused_with_the_reason() {
    // Port 1 on the loopback: nothing listens there, the connection is refused at once.
    let started = Instant::now();
    let out = serve(&["--db", "postgres://postgres:secret@127.0.0.1:1/nowhere", "--db-start-wait-s", "2"])
        .output()
        .unwrap();
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
    let mut first = serve(&["--db", &db, "--initial-blocks", "1"]).stderr(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(first.stderr.take().unwrap()).lines();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let line = lines.next().expect("the first server logs").unwrap();
        if line.contains("listening on") {
            break;
        }
        assert!(Instant::now() < deadline, "the first server did not start");
    }
    let second = serve(&["--db", &db]).output().unwrap();
    let log = String::from_utf8_lossy(&second.stderr);
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(!second.status.success(), "{log}");
    assert!(log.contains("another as-capone process is serving"), "{log}");
    assert!(log.contains("postgres"), "it says where several processes go: {log}");
}
