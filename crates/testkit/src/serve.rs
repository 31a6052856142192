//! The real `as-capone serve`, started on port 0 for a test (or a
//! reliability run) and killed when dropped.
//!
//! The caller gives the executable's path: a test of the CLI crate passes
//! `env!("CARGO_BIN_EXE_as-capone")`, a reliability command its own
//! `std::env::current_exe()`. [`serve_command`] builds the command line of
//! the tests' servers; [`Spawned::new`] starts any such command without
//! waiting, so that several servers can start at the same moment; then
//! [`Spawned::wait_listening`] reads the log until the start line
//! "listening on http://ADDR" and gives a [`Server`], whose log keeps being
//! drained (the server never blocks on it) and whose process is killed
//! (SIGKILL) when it is dropped: a panicking test leaves no server behind.
//! Restarts on the same database are new servers on the same `dir` and
//! URL: every server of a `dir` shares its key ([`key_file`]).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How long a server may take to start before [`Spawned::wait_listening`] gives up.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The ERROR and panic lines a [`Server`] keeps from its log, at most.
const KEPT_ERRORS: usize = 50;

/// The server key of the servers started in `dir` (created by the first).
pub fn key_file(dir: &Path) -> PathBuf {
    dir.join("server.key")
}

/// The URL of the SQLite database `dir/name`.
pub fn sqlite_url(dir: &Path, name: &str) -> String {
    format!("sqlite://{}", dir.join(name).display())
}

/// The command line of a test server: `exe serve` on `127.0.0.1:0` with the
/// table `dir/table.toml`, the database `db_url` (`sqlite://...`,
/// `postgres://...`) and the key [`key_file`]`(dir)` (unless `extra` gives
/// a key ring, `--key-dir`), then `extra`. The
/// tests' tables have small blocks, so the server is told to allow them,
/// and it registers any number of players from one address.
pub fn serve_command(exe: &Path, dir: &Path, db_url: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(exe);
    c.arg("serve")
        .args([
            "--listen",
            "127.0.0.1:0",
            "--allow-non-regulation-table",
            "--registrations-per-address",
            "0",
            // Players buy without choosing a limit on stakes first (the
            // rule's own tests turn it on: crates/server/tests/api/limits.rs).
            "--stake-limit-required",
            "false",
            "--table",
        ])
        .arg(dir.join("table.toml"))
        .arg("--db")
        .arg(db_url);
    if !extra.contains(&"--key-dir") {
        c.arg("--key-file").arg(key_file(dir));
    }
    c.args(extra).env("RUST_LOG", "info");
    c
}

/// Spawns [`serve_command`] without waiting for it.
pub fn spawn_server(exe: &Path, dir: &Path, db_url: &str, extra: &[&str]) -> Spawned {
    Spawned::new(&mut serve_command(exe, dir, db_url, extra)).expect("as-capone serve starts")
}

/// Starts [`serve_command`] and waits until it listens (panics, with its
/// log, when it does not within a minute).
pub fn start_server(exe: &Path, dir: &Path, db_url: &str, extra: &[&str]) -> Server {
    spawn_server(exe, dir, db_url, extra).wait_listening("server")
}

/// A server process started and not yet known to listen; killed when
/// dropped.
pub struct Spawned {
    child: Option<Child>,
    began: Instant,
}

impl Spawned {
    /// Spawns `command` (an `as-capone serve` command line) with its
    /// standard output discarded and its log piped to this process.
    pub fn new(command: &mut Command) -> std::io::Result<Spawned> {
        let began = Instant::now();
        let child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn()?;
        Ok(Spawned { child: Some(child), began })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Waits until the server listens and returns it; afterwards its
    /// warnings and errors are copied to the test's stderr, prefixed with
    /// `label`. Kills the server and panics, with its log so far, when it
    /// exits or is silent for a minute first.
    pub fn wait_listening(self, label: &str) -> Server {
        self.try_wait_listening(Some(label), START_TIMEOUT).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Reads the server's log until its start line "listening on
    /// http://ADDR". Afterwards the log keeps being drained: its ERROR and
    /// panic lines are kept in [`Server::errors`], its WARN lines counted in
    /// [`Server::warnings`], and, with `echo`, warnings and errors are copied
    /// to stderr prefixed with it. When the server exits or is silent for
    /// `timeout` first, it is killed and the error holds its log so far.
    pub fn try_wait_listening(mut self, echo: Option<&str>, timeout: Duration) -> Result<Server, String> {
        let mut child = self.child.take().expect("a spawned server");
        let pid = child.id();
        let Some(stderr) = child.stderr.take() else {
            kill(&mut child);
            return Err("the server's log is not piped".into());
        };
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let warnings = Arc::new(AtomicU64::new(0));
        let (tx, rx) = mpsc::channel::<String>();
        let (kept, counted, echo_label) = (errors.clone(), warnings.clone(), echo.map(str::to_string));
        std::thread::spawn(move || {
            let mut started = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !started {
                    started = line.contains("listening on http://");
                    let _ = tx.send(line);
                    continue;
                }
                let error = line.contains(" ERROR ") || line.contains("panicked");
                let warning = line.contains(" WARN ");
                if let Some(label) = echo_label.as_deref().filter(|_| error || warning) {
                    eprintln!("[{label}] {line}");
                }
                if error {
                    let mut e = kept.lock().unwrap();
                    if e.len() < KEPT_ERRORS {
                        e.push(line);
                    }
                } else if warning {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        let deadline = Instant::now() + timeout;
        let mut log = Vec::new();
        loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => {
                    if let Some(rest) = line.split("listening on http://").nth(1) {
                        let addr = rest.split([',', ' ']).next().unwrap_or_default().to_string();
                        return Ok(Server {
                            child,
                            url: format!("http://{addr}"),
                            addr,
                            pid,
                            errors,
                            warnings,
                            start_ms: self.began.elapsed().as_millis(),
                        });
                    }
                    log.push(line);
                }
                Err(_) => {
                    kill(&mut child);
                    return Err(format!("the server did not start; its log:\n{}", log.join("\n")));
                }
            }
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            kill(child);
        }
    }
}

/// A running `as-capone serve`, killed (SIGKILL) when dropped.
pub struct Server {
    child: Child,
    /// `http://ADDR`.
    pub url: String,
    /// `ADDR` (`127.0.0.1:PORT`).
    pub addr: String,
    /// The process id.
    pub pid: u32,
    /// ERROR and panic lines of its log after the start (the first 50).
    pub errors: Arc<Mutex<Vec<String>>>,
    /// WARN lines of its log after the start.
    pub warnings: Arc<AtomicU64>,
    /// Milliseconds from the spawn to the start line.
    pub start_ms: u128,
}

impl Server {
    /// SIGKILL: no shutdown, no flush; waits for the process to end.
    pub fn kill(&mut self) {
        kill(&mut self.child);
    }

    /// SIGKILL to a server that must still be running: the error of the
    /// kill (a process that already exited) or of the wait.
    pub fn sigkill(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.child.kill()?;
        self.child.wait()
    }

    /// The process, for what this type does not do (signals, exit status).
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Resident memory in KiB (`VmRSS` of /proc/PID/status).
    pub fn rss_kib(&self) -> Option<u64> {
        status_kib(self.pid, "VmRSS:")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

/// A figure of `/proc/PID/status` in KiB (`field` with its colon: `VmHWM:`,
/// `VmRSS:`); `None` when the process or the field is gone.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}
