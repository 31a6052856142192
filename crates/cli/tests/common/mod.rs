//! What the binary's integration tests share: starting the real
//! `as-capone serve` on a free port.

#![allow(dead_code)] // each test binary uses its own part of this module

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Starts `as-capone serve` on port 0 with the table at `dir/table.toml` and
/// an SQLite file `dir/{db_name}`, and reads its address from the start log
/// line. `extra` is appended to the command line.
pub fn start_server(dir: &Path, db_name: &str, extra: &[&str]) -> (Child, String) {
    let db = format!("sqlite://{}", dir.join(db_name).display());
    start_server_on(dir, &db, extra)
}

/// Starts `as-capone serve` on port 0 with the table at `dir/table.toml` and
/// any database URL (`sqlite://...`, `postgres://...`), and waits for its
/// address.
pub fn start_server_on(dir: &Path, db_url: &str, extra: &[&str]) -> (Child, String) {
    let mut child = spawn_server(dir, db_url, extra);
    let url = wait_listening(&mut child, "server");
    (child, url)
}

/// The server key of the servers started in `dir` (created by the first).
pub fn key_file(dir: &Path) -> std::path::PathBuf {
    dir.join("server.key")
}

/// Spawns `as-capone serve` without waiting for it: several servers can be
/// started at the same moment, then [`wait_listening`] on each. The tests'
/// tables have small blocks, so the server is told to allow them; every
/// server of `dir` shares the key [`key_file`].
pub fn spawn_server(dir: &Path, db_url: &str, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .arg("serve")
        .args([
            "--listen",
            "127.0.0.1:0",
            "--allow-non-regulation-table",
            "--registrations-per-address",
            "0",
            "--table",
        ])
        .arg(dir.join("table.toml"))
        .arg("--db")
        .arg(db_url)
        .arg("--key-file")
        .arg(key_file(dir))
        .args(extra)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads the server's log until its start line "listening on http://ADDR"
/// and returns `http://ADDR`; afterwards the log keeps being drained (so
/// the server never blocks on it) and its warnings and errors are copied to
/// the test's stderr, prefixed with `label`. Kills the server and panics,
/// with the log so far, when it exits or is silent for 60 s first.
pub fn wait_listening(child: &mut Child, label: &str) -> String {
    let stderr = child.stderr.take().expect("the server's stderr is piped");
    let (tx, rx) = mpsc::channel::<String>();
    let label = label.to_string();
    std::thread::spawn(move || {
        let mut started = false;
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if started {
                if line.contains(" WARN ") || line.contains(" ERROR ") || line.contains("panicked") {
                    eprintln!("[{label}] {line}");
                }
            } else {
                started = line.contains("listening on http://");
                let _ = tx.send(line);
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut log = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest.split([',', ' ']).next().unwrap().to_string();
                    return format!("http://{addr}");
                }
                log.push(line);
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server did not start; its log:\n{}", log.join("\n"));
            }
        }
    }
}

/// The prize table of the crash and scale-out tests: blocks of 2 000
/// tickets, so that a database starts in a moment.
pub const BLOCKS_OF_2000: &str = r#"
game = "As Capone"
code = "TST"
price_cents = 300
block_size = 2000

[[schedule]]
tickets = 1500
prizes_cents = { 5 = 300, 6 = 1000, 7 = 10000, 8 = 100000 }

[[schedule]]
tickets = 500
prizes_cents = { 5 = 600, 6 = 3000, 7 = 20000, 8 = 200000 }
"#;

/// The server in-process on a test's database (prize table
/// [`BLOCKS_OF_2000`], the key of the servers started in `dir`), to run its
/// own checks of the ledger and the audit log.
pub async fn in_process_app(db: String, dir: &Path) -> server::App {
    let config = server::Config {
        listen: "127.0.0.1:0".into(),
        db,
        demo_token: String::new(),
        key_file: Some(key_file(dir)),
        allow_non_regulation_table: true,
        ..Default::default()
    };
    let table = math::PrizeTable::parse_toml(BLOCKS_OF_2000).unwrap();
    server::App::start(server::AppOptions { config, table, seeds: Default::default() }).await.unwrap()
}

/// The next action of a ticket as the API shows it: its first card while
/// it is played, else a draw.
pub fn next_action(t: &serde_json::Value) -> serde_json::Value {
    let seq = t["seq"].as_u64().unwrap();
    if t["phase"] == "play" {
        serde_json::json!({"seq": seq, "action": "play", "card": t["hand"][0]})
    } else {
        serde_json::json!({"seq": seq, "action": "draw"})
    }
}
