//! Chromium sessions kept between the browser tests of one nextest run
//! (docs/testing.md "How the suite runs"). Starting a chromedriver and a
//! Chromium costs about 3 s of CPU, and the suite opens about a hundred:
//! under nextest, each of the `browser` group's slots keeps its
//! chromedriver and a few sessions (one per window shape) for the next test
//! of the slot, in `target/tmp/browser-pool/RUN/slot-N/`.
//!
//! What a kept session must not carry from one test to the next:
//! - storage: every test's server listens on a port of its own, so its
//!   page is an origin of its own (local storage, IndexedDB, caches);
//!   the origin's data is cleared anyway, in case a port comes back;
//! - cookies, which are the host's for every port: cleared;
//! - the console: its entries are read and dropped (each test checks its
//!   own console at its end, `Browser::close`);
//! - a page still running: a released session is left on `about:blank`.
//!
//! A test that fails (panics) ends its session instead of returning it;
//! a slot whose chromedriver does not answer starts a new one. When the
//! nextest run ends, a watchdog started with each chromedriver kills its
//! process group and removes the run's directory. Without nextest (`cargo
//! test`), or with `AS_CAPONE_BROWSER_POOL=0`, every test starts its own
//! browser as before.

use crate::harness::driver_ready;
use crate::webdriver::{Screen, Session};
use serde_json::{Value, json};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Sessions a slot keeps at most (the least recently used is ended).
const KEPT_PER_SLOT: usize = 3;

/// This test's slot directory, when it runs under nextest in the `browser`
/// test group (which gives each running test a slot of its own) and the
/// pool is not turned off.
pub fn slot() -> Option<PathBuf> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if var("AS_CAPONE_BROWSER_POOL").as_deref() == Some("0") || var("NEXTEST_TEST_GROUP")? != "browser" {
        return None;
    }
    let (run, slot) = (var("NEXTEST_RUN_ID")?, var("NEXTEST_TEST_GROUP_SLOT")?);
    let run_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-pool").join(run);
    let dir = run_dir.join(format!("slot-{slot}"));
    std::fs::create_dir_all(&dir).expect("create the browser pool's slot directory");
    Some(dir)
}

/// A kept session lent to one test: given back by [`Lease::release`] when
/// the test passed, ended by [`Lease::discard`] when it failed.
pub struct Lease {
    slot: PathBuf,
    port: u16,
    key: String,
    id: String,
}

/// The slot's state between its tests: its chromedriver (process id, which
/// is its process group's, and port) and the sessions it keeps, the most
/// recently used last.
fn read_state(slot: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(slot.join("state.json")).ok()?).ok()
}

fn write_state(slot: &Path, state: &Value) {
    let tmp = slot.join("state.json.tmp");
    std::fs::write(&tmp, serde_json::to_vec(state).unwrap()).expect("write the browser pool's state");
    std::fs::rename(&tmp, slot.join("state.json")).expect("write the browser pool's state");
}

/// A session of the slot for a window `screen` with Chromium's `args`, its
/// state cleared for a page at `origin`: a kept one, or a new one.
pub async fn acquire(
    slot: &Path,
    tools: (&Path, &Path),
    screen: Screen,
    args: &[String],
    origin: &str,
) -> (Session, Lease) {
    let (chromium, driver) = tools;
    let key = format!("{screen:?} {args:?}");
    let mut state = match read_state(slot) {
        Some(s) if driver_ready(s["port"].as_u64().unwrap_or(0) as u16, Duration::from_secs(2)).await => s,
        old => {
            if let Some(old) = old {
                kill_driver(&old);
            }
            start_driver(driver, slot).await
        }
    };
    let port = state["port"].as_u64().unwrap() as u16;
    let url = format!("http://127.0.0.1:{port}");
    let sessions = state["sessions"].as_array_mut().unwrap();
    let mut found = None;
    if let Some(i) = sessions.iter().position(|s| s["key"] == key.as_str()) {
        let kept = sessions.remove(i);
        let session = Session::attach(&url, kept["id"].as_str().unwrap());
        match clear(&session, origin).await {
            Ok(()) => found = Some(session),
            Err(_) => session.quit().await,
        }
    }
    let session = match found {
        Some(s) => s,
        None => {
            while sessions.len() >= KEPT_PER_SLOT {
                let oldest = sessions.remove(0);
                Session::attach(&url, oldest["id"].as_str().unwrap()).quit().await;
            }
            let profile = slot.join(format!("profile-{}", crate::harness::unique()));
            std::fs::create_dir_all(&profile).expect("create a profile directory");
            Session::start(&url, chromium, &profile, screen, args).await
        }
    };
    // The session is the test's until it gives it back: not listed meanwhile.
    write_state(slot, &state);
    let lease = Lease { slot: slot.to_path_buf(), port, key, id: session.id.clone() };
    (session, lease)
}

/// What a kept session carries that the next test must not see.
async fn clear(session: &Session, origin: &str) -> Result<(), String> {
    session.try_goto("about:blank").await?;
    session.cdp("Network.clearBrowserCookies", json!({})).await?;
    session.cdp("Storage.clearDataForOrigin", json!({"origin": origin, "storageTypes": "all"})).await?;
    session.try_browser_log().await?;
    Ok(())
}

impl Lease {
    /// The test passed: the session goes back to the slot, on a blank page.
    pub async fn release(self, session: &Session) {
        if session.try_goto("about:blank").await.is_err() {
            session.quit().await;
            return;
        }
        let Some(mut state) = read_state(&self.slot) else { return session.quit().await };
        if state["port"].as_u64() != Some(u64::from(self.port)) {
            return session.quit().await;
        }
        state["sessions"].as_array_mut().unwrap().push(json!({"key": self.key, "id": self.id}));
        write_state(&self.slot, &state);
    }

    /// The test failed: its session is ended (blocking: `Drop` cannot
    /// await), the slot's other sessions stay.
    pub fn discard(&self) {
        crate::harness::end_session(self.port, &self.id);
    }
}

/// Kills a slot's old chromedriver (its process group), if it is still one.
fn kill_driver(state: &Value) {
    let Some(pid) = state["pid"].as_i64().filter(|p| *p > 1) else { return };
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if comm.trim() == "chromedriver" {
        unsafe {
            libc::kill(-(pid as i32), libc::SIGKILL);
        }
    }
}

/// Starts the slot's chromedriver in a process group of its own, with a
/// watchdog in that group that ends the group and removes the slot's
/// directory once nextest (this test process's parent) has ended.
async fn start_driver(driver: &Path, slot: &Path) -> Value {
    let (child, port) = crate::harness::spawn_driver(driver);
    let pid = child.id() as i32;
    let runner = unsafe { libc::getppid() };
    // It ignores the TERM it sends its group, removes the slot's directory
    // once Chromium has stopped writing its profiles, then ends with the rest.
    let watchdog = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' TERM; while kill -0 {runner} 2>/dev/null; do sleep 2; done; kill -TERM 0; sleep 1; \
             rm -rf '{slot}'; rmdir '{run}' 2>/dev/null; kill -KILL 0",
            slot = slot.display(),
            run = slot.parent().unwrap().display(),
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(pid)
        .spawn()
        .expect("start the browser pool's watchdog");
    // chromedriver and its watchdog outlive this test: they are the slot's
    // (their group is killed by the watchdog, or by a later test of the slot
    // if chromedriver stops answering).
    std::mem::forget((child, watchdog));
    assert!(driver_ready(port, Duration::from_secs(20)).await, "chromedriver did not become ready on port {port}");
    let state = json!({"pid": pid, "port": port, "sessions": []});
    write_state(slot, &state);
    state
}

/// Ends a slot's chromedriver and every session in it (the pool's own test).
pub fn shut(slot: &Path) {
    if let Some(state) = read_state(slot) {
        kill_driver(&state);
    }
}

/// A kept session, lent to the next test of its slot, carries nothing of
/// the test before: no console entry, no cookie, no storage of an origin
/// whose port comes back; another window shape gets a session of its own,
/// and a failed test's session is never lent again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_session_carries_nothing_from_one_test_to_the_next() {
    let Some(tools) = crate::harness::tools() else { return };
    let tools = (tools.0.as_path(), tools.1.as_path());
    let slot = tempfile::tempdir().unwrap();
    let (one, two) = (crate::harness::spawn_server().await, crate::harness::spawn_server().await);
    let desktop = Screen::Desktop { width: 1000, height: 800 };
    let leave_traces = "localStorage.setItem('asc.adult', '1'); document.cookie = 'kept=1; path=/'; \
                        console.error('left by the test before');";
    let (s, lease) = acquire(slot.path(), tools, desktop, &[], &one.url).await;
    s.goto(&format!("{}/favicon.svg", one.url)).await;
    s.exec(leave_traces, json!([])).await;
    let first = s.id.clone();
    lease.release(&s).await;

    // The next test, on another server: the same session, nothing left.
    let (s, lease) = acquire(slot.path(), tools, desktop, &[], &two.url).await;
    assert_eq!(s.id, first, "the slot lends the session it kept");
    assert_eq!(s.browser_log().await, Vec::<Value>::new(), "the console starts empty");
    s.goto(&format!("{}/favicon.svg", two.url)).await;
    assert_eq!(s.exec("return document.cookie", json!([])).await, "", "no cookie of the host");
    lease.release(&s).await;

    // The first server's port again (a port the kernel gives twice): its storage is gone.
    let (s, lease) = acquire(slot.path(), tools, desktop, &[], &one.url).await;
    assert_eq!(s.id, first);
    s.goto(&format!("{}/favicon.svg", one.url)).await;
    let kept = s.exec("return [localStorage.length, document.cookie]", json!([])).await;
    assert_eq!(kept, json!([0, ""]), "the origin's storage and the cookies are cleared");

    // Another window shape, meanwhile: a session of its own; failed, it is ended.
    let phone = Screen::Phone { width: 390, height: 844 };
    let (p, failed) = acquire(slot.path(), tools, phone, &[], &one.url).await;
    assert_ne!(p.id, first);
    failed.discard();
    lease.release(&s).await;
    let (again, lease) = acquire(slot.path(), tools, phone, &[], &one.url).await;
    assert_ne!(again.id, p.id, "a failed test's session is never lent again");
    lease.release(&again).await;
    let state = read_state(slot.path()).unwrap();
    let kept: Vec<&str> = state["sessions"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(kept, [first.as_str(), again.id.as_str()], "the slot keeps one session per window shape");
    shut(slot.path());
}
