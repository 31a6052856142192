//! What the binary's integration tests share: starting the real
//! `as-capone serve` on a free port.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `as-capone serve` on port 0 with the table at `dir/table.toml` and
/// an SQLite file `dir/{db_name}`, and reads its address from the start log
/// line. `extra` is appended to the command line.
pub fn start_server(dir: &Path, db_name: &str, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .arg("serve")
        .args(["--listen", "127.0.0.1:0", "--table"])
        .arg(dir.join("table.toml"))
        .arg("--db")
        .arg(format!("sqlite://{}", dir.join(db_name).display()))
        .args(extra)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let line = match lines.next() {
            Some(Ok(line)) if Instant::now() < deadline => line,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server did not start");
            }
        };
        if let Some(rest) = line.split("listening on http://").nth(1) {
            let addr = rest.split([',', ' ']).next().unwrap().to_string();
            // Keep draining the log so the server never blocks on it.
            std::thread::spawn(move || for _ in lines {});
            return (child, format!("http://{addr}"));
        }
    }
}
