//! What every browser test starts: the real server on port 0 with a fresh
//! SQLite database and the test-only fixed server seed, and a headless
//! Chromium driven through chromedriver: its own, or under nextest a
//! session kept by its slot from an earlier test and cleared (pool.rs).
//! Everything is stopped or given back when the test ends, panics included
//! ([`Browser`]'s `Drop`).

use crate::pool;
use crate::webdriver::{Screen, Session};
use serde_json::{Value, json};
use server::ServerSeeds;
use server::{App, AppOptions, Config};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use testkit::{SEED, START, TABLE};

pub struct TestServer {
    pub app: App,
    pub url: String,
    _dir: tempfile::TempDir,
}

pub async fn spawn_server() -> TestServer {
    spawn_server_with(|_| {}).await
}

/// [`spawn_server`] with `change` applied to its configuration (operator
/// and retailer tokens...).
pub async fn spawn_server_with(change: impl FnOnce(&mut Config)) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config {
        listen: "127.0.0.1:0".into(),
        db: format!("sqlite://{}", dir.path().join("test.db").display()),
        start_balance_cents: START as u64,
        demo_token: String::new(),
        initial_blocks: 1,
        // The small test table (blocks of 100 tickets) is not art. 2's.
        allow_non_regulation_table: true,
        // Players buy without choosing a limit on stakes first; the rule's
        // own tests turn it on (limits.rs).
        stake_limit_required: false,
        ..Config::default()
    };
    change(&mut config);
    let table = math::PrizeTable::parse_toml(TABLE).unwrap();
    let app = App::start(AppOptions { config, table, seeds: ServerSeeds::InsecureFixedForTests(SEED) })
        .await
        .expect("server starts");
    let url = app.url();
    TestServer { app, url, _dir: dir }
}

impl TestServer {
    /// The URL of its SQLite database (what `as-capone report --db` takes).
    pub fn db_url(&self) -> String {
        format!("sqlite://{}", self._dir.path().join("test.db").display())
    }

    /// `GET path` with the player's token: the JSON answer.
    pub async fn get(&self, path: &str, token: &str) -> Value {
        let r = reqwest::Client::new().get(format!("{}{path}", self.url)).bearer_auth(token).send().await.unwrap();
        assert!(r.status().is_success(), "GET {path}: {}", r.status());
        r.json().await.unwrap()
    }

    /// `GET path` with a token: the answer's text, which must be a success.
    pub async fn get_text(&self, path: &str, token: &str) -> String {
        let r = reqwest::Client::new().get(format!("{}{path}", self.url)).bearer_auth(token).send().await.unwrap();
        assert!(r.status().is_success(), "GET {path}: {}", r.status());
        r.text().await.unwrap()
    }

    /// `POST path` with a JSON body (and a token): the JSON answer, which must be a success.
    pub async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> Value {
        let mut req = reqwest::Client::new().post(format!("{}{path}", self.url)).json(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.unwrap();
        assert!(r.status().is_success(), "POST {path}: {}", r.status());
        r.json().await.unwrap()
    }
}

/// Opens the page's hash route `hash` (from the top of the page) and waits
/// until the screen `view` is shown and idle.
pub async fn go(b: &Browser, hash: &str, view: &str) {
    b.exec("location.hash = arguments[0]; window.scrollTo(0, 0);", json!([hash])).await;
    b.wait_for(
        &format!("document.body.dataset.view === '{view}' && document.body.dataset.state === 'idle'"),
        &format!("the {view} view"),
    )
    .await;
}

/// axe-core finds nothing on the screen shown now (`what` names it in the failure).
pub async fn axe_clean(b: &Browser, what: &str) {
    if let Some(v) = b.axe().await {
        assert!(v.is_empty(), "axe-core on {what}:\n{}", v.join("\n"));
    }
}

/// The serial of the `position`-th ticket sold by a fresh test server
/// (emission 1, block 1, sold in order): known before buying, so a test can
/// choose a client seed that steers the game (and type it before the first
/// card).
pub fn serial_of_sale(position: u32) -> String {
    let code = emission::GameCode::parse("TST").unwrap();
    emission::Serial::new(code, 1, 1, position).unwrap().to_string()
}

// ------------------------------------------------------------------ plans

pub use testkit::{Foreseen, action_json, find_seed, prize_of, shown_after};

// ------------------------------------------------------------------ the browser

fn in_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for n in names {
            let p = dir.join(n);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Chromium and chromedriver, or `None` after a loud message when they are
/// missing and `AS_CAPONE_REQUIRE_BROWSER` is unset (a failure when set).
pub fn tools() -> Option<(PathBuf, PathBuf)> {
    match find_tools() {
        Ok(t) => Some(t),
        Err(why) => {
            if std::env::var_os("AS_CAPONE_REQUIRE_BROWSER").is_some() {
                panic!("AS_CAPONE_REQUIRE_BROWSER is set but the browser tests cannot run: {why}");
            }
            // Straight to the process's stderr: the test harness captures eprintln!.
            let _ = writeln!(
                std::io::stderr(),
                "\n=================================================================\n\
                 !!! BROWSER TEST skipped: chromium not found !!!\n!!! {why}\n\
                 !!! set AS_CAPONE_REQUIRE_BROWSER=1 to make this a failure\n\
                 ================================================================="
            );
            None
        }
    }
}

fn find_tools() -> Result<(PathBuf, PathBuf), String> {
    let chosen = |var: &str, names: &[&str]| match std::env::var_os(var) {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => in_path(names),
    };
    let chromium = chosen("AS_CAPONE_CHROMIUM", &["chromium", "chromium-browser", "google-chrome"]);
    let driver = chosen("AS_CAPONE_CHROMEDRIVER", &["chromedriver"]);
    match (chromium, driver) {
        (Some(c), Some(d)) => Ok((c, d)),
        (c, d) => Err(format!(
            "chromium not found (chromium: {}, chromedriver: {}); on Debian: apt-get install chromium chromium-driver",
            c.map(|p| p.display().to_string()).unwrap_or_else(|| "missing".into()),
            d.map(|p| p.display().to_string()).unwrap_or_else(|| "missing".into()),
        )),
    }
}

/// Where screenshots go: `target/browser-artifacts/`.
pub fn artifacts_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(tmp).join("browser-artifacts");
    std::fs::create_dir_all(&dir).expect("create target/browser-artifacts");
    dir
}

/// `node_modules/axe-core/axe.min.js` of `tests/browser/node/` (`npm ci`
/// there, as `.ci/run` does), or `None` after a loud message when it is
/// missing and `AS_CAPONE_REQUIRE_BROWSER` is unset.
pub fn axe_source() -> Option<String> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/tests/browser/node/node_modules/axe-core/axe.min.js");
    match std::fs::read_to_string(&p) {
        Ok(s) => Some(s),
        Err(e) => {
            if std::env::var_os("AS_CAPONE_REQUIRE_BROWSER").is_some() {
                panic!(
                    "AS_CAPONE_REQUIRE_BROWSER is set but axe-core is missing ({}: {e}); run npm ci in tests/browser/node",
                    p.display()
                );
            }
            let _ = writeln!(
                std::io::stderr(),
                "\n!!! ACCESSIBILITY CHECK skipped: {} is missing ({e}); run `npm ci` in crates/server/tests/browser/node",
                p.display()
            );
            None
        }
    }
}

/// A browser session: a chromedriver process of the test's own (in its
/// own process group, with Chromium under it), or a session lent by the
/// test's slot of the pool (pool.rs). Dropping it ends the session and
/// kills the group, also when the test panics; a lent session goes back
/// to the slot when the test passed ([`Browser::close`]).
pub struct Browser {
    pub s: Session,
    driver: Driver,
    pub base: String,
    /// The session was ended or given back by [`Browser::close`]: `Drop`
    /// only kills the test's own process group.
    ended: bool,
    /// The console errors a test causes on purpose ([`Browser::expect_console_error`]).
    expected_errors: std::sync::Mutex<Vec<String>>,
}

/// Where a [`Browser`]'s session lives.
enum Driver {
    /// A chromedriver started for this test, on `port`, with its profile.
    Own { child: Child, port: u16, _profile: tempfile::TempDir },
    /// A session of the test's slot (`None` once given back).
    Pooled(Option<pool::Lease>),
}

impl std::ops::Deref for Browser {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.s
    }
}

/// Starts Chromium, or returns `None` (after a loud message) when it is not
/// installed and `AS_CAPONE_REQUIRE_BROWSER` is unset. With the variable
/// set (CI), a missing browser fails the test.
///
/// The profile has already answered the page's first-visit question
/// ("Interdit aux mineurs", 18+): tests of the game start at the welcome
/// screen. [`browser_first_visit`] starts without that answer.
pub async fn browser(base: &str, screen: Screen) -> Option<Browser> {
    browser_with_args(base, screen, &[]).await
}

/// [`browser`] with more Chromium command-line arguments (a fake camera: shop_scan.rs).
pub async fn browser_with_args(base: &str, screen: Screen, args: &[String]) -> Option<Browser> {
    let b = browser_first_visit_with_args(base, screen, args).await?;
    // Any page of the origin will do for its storage: not the game's own.
    b.goto(&format!("{base}/favicon.svg")).await;
    // A bare SVG document has no icon link: Chromium asks for /favicon.ico
    // (404) for it. That visit is the harness's own, never the page's.
    b.expect_console_error("/favicon.ico - Failed to load resource: the server responded with a status of 404");
    b.exec("localStorage.setItem('asc.adult', '1');", json!([])).await;
    Some(b)
}

/// [`browser`] with a profile that never opened the page: the 18+ question comes first.
pub async fn browser_first_visit(base: &str, screen: Screen) -> Option<Browser> {
    browser_first_visit_with_args(base, screen, &[]).await
}

async fn browser_first_visit_with_args(base: &str, screen: Screen, args: &[String]) -> Option<Browser> {
    let (chromium, driver) = tools()?;
    let (s, driver) = match pool::slot() {
        Some(slot) => {
            let (s, lease) = pool::acquire(&slot, (&chromium, &driver), screen, args, base).await;
            (s, Driver::Pooled(Some(lease)))
        }
        None => own_driver(&chromium, &driver, screen, args).await,
    };
    let b = Browser { s, driver, base: base.to_string(), ended: false, expected_errors: Default::default() };
    buy_without_confirmation(&b).await;
    Some(b)
}

/// A chromedriver and a Chromium started for this test alone.
async fn own_driver(chromium: &Path, driver: &Path, screen: Screen, args: &[String]) -> (Session, Driver) {
    let (child, port) = spawn_driver(driver);
    let mut guard = DriverGuard { child: Some(child), port, session: None };
    assert!(driver_ready(port, Duration::from_secs(20)).await, "chromedriver did not become ready on port {port}");
    let profile = tempfile::tempdir().unwrap();
    let s = Session::start(&format!("http://127.0.0.1:{port}"), chromium, profile.path(), screen, args).await;
    guard.session = Some(s.id.clone());
    let child = guard.child.take().unwrap();
    std::mem::forget(guard);
    (s, Driver::Own { child, port, _profile: profile })
}

/// Starts chromedriver on a free port, in a process group of its own
/// (Chromium, its child, in it too), answering this machine only.
pub fn spawn_driver(driver: &Path) -> (Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(driver)
        .arg(format!("--port={port}"))
        .arg("--allowed-ips=127.0.0.1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", driver.display()));
    (child, port)
}

/// Whether the chromedriver on `port` answers `ready` within `wait`.
pub async fn driver_ready(port: u16, wait: Duration) -> bool {
    if port == 0 {
        return false;
    }
    let http = reqwest::Client::builder().timeout(Duration::from_secs(2)).build().unwrap();
    let started = Instant::now();
    loop {
        if let Ok(r) = http.get(format!("http://127.0.0.1:{port}/status")).send().await
            && let Ok(v) = r.json::<Value>().await
            && v["value"]["ready"] == true
        {
            return true;
        }
        if started.elapsed() > wait {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A name no other profile directory of this machine has.
pub fn unique() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

/// The page asks "Acheter un ticket à 3,00 € ?" before each purchase (on
/// for players); the tests that buy by clicking `#buy` start with it turned
/// off, as "Ne plus demander" leaves it (extras.rs turns it back on).
async fn buy_without_confirmation(b: &Browser) {
    b.goto(&format!("{}/favicon.svg", b.base)).await;
    // A bare SVG document has no icon link: Chromium asks for /favicon.ico
    // (404) for it. That visit is the harness's own, never the page's.
    b.expect_console_error("/favicon.ico - Failed to load resource: the server responded with a status of 404");
    b.exec("localStorage.setItem('asc.confirmBuy', '0');", json!([])).await;
}

impl Browser {
    /// Opens `path` of the test server (`?anim=0`: no animation waits).
    pub async fn open(&self, path: &str) {
        self.goto(&format!("{}{path}", self.base)).await;
        self.wait_for("document.body && document.body.dataset.state === 'idle'", "the page to be ready").await;
    }

    pub async fn shot(&self, name: &str) {
        // Not in the middle of a transition (the deck's endless pulse aside).
        self.wait_for(
            "document.getAnimations().every(a => a.playState !== 'running' || a.effect.getComputedTiming().iterations === Infinity)",
            "animations to end",
        )
        .await;
        let p = artifacts_dir().join(format!("{name}.png"));
        self.screenshot(&p).await;
    }

    /// Waits until the page is idle on a ticket with this `seq`.
    pub async fn wait_seq(&self, seq: usize) {
        self.wait_for(
            &format!(
                "document.body.dataset.state === 'idle' && document.getElementById('view-game').dataset.seq === '{seq}'"
            ),
            &format!("seq {seq}"),
        )
        .await;
    }

    pub async fn text(&self, css: &str) -> String {
        self.exec("const e = document.querySelector(arguments[0]); return e ? e.textContent : null;", json!([css]))
            .await
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}"))
            .to_string()
    }

    /// The page's horizontal overflow in CSS pixels (0 when nothing scrolls sideways).
    pub async fn overflow_x(&self) -> i64 {
        self.exec(
            "const d = document.documentElement; return Math.max(d.scrollWidth, document.body.scrollWidth) - window.innerWidth;",
            json!([]),
        )
        .await
        .as_i64()
        .unwrap()
    }

    /// Elements wider than the viewport or sticking out of it (for a clear failure message).
    pub async fn overflowing(&self) -> Value {
        self.exec(
            "const w = Math.min(window.innerWidth, screen.width); return [...document.querySelectorAll('body *')].filter(e => { const r = e.getBoundingClientRect(); return e.offsetParent !== null && r.width > 0 && (r.right > w + 0.5 || r.left < -0.5); }).slice(0, 8).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().left) + '..' + Math.round(e.getBoundingClientRect().right));",
            json!([]),
        )
        .await
    }

    /// Runs axe-core on the page as it is now and returns its serious and
    /// critical violations, one line each (rule, impact, help, the first
    /// elements), or `None` when axe-core is not installed (and
    /// `AS_CAPONE_REQUIRE_BROWSER` is unset: then it is a failure).
    pub async fn axe(&self) -> Option<Vec<String>> {
        let src = axe_source()?;
        let loaded = self.exec("return typeof window.axe === 'object'", json!([])).await;
        if loaded != true {
            // The page's CSP allows no inline script, but WebDriver's scripts run as the browser's own.
            self.exec("(0, eval)(arguments[0]);", json!([src])).await;
        }
        let v = self
            .exec_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, { resultTypes: ['violations'] })
                   .then(r => done(r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical').map(v =>
                     v.id + ' (' + v.impact + '): ' + v.help + ' — ' +
                     v.nodes.slice(0, 4).map(n => n.target.join(' ') + (n.failureSummary ? ' [' + n.failureSummary.replace(/\\s+/g, ' ').slice(0, 200) + ']' : '')).join(' | '))))
                   .catch(e => done(['axe failed: ' + e]));",
                json!([]),
            )
            .await;
        Some(
            v.as_array()
                .expect("axe's violations")
                .iter()
                .map(|x| x.as_str().unwrap_or_default().to_string())
                .collect(),
        )
    }

    /// A string of the page (`web/i18n.js`) in `lang`, `{name}` placeholders filled.
    pub async fn string(&self, lang: &str, key: &str, params: &[(&str, &str)]) -> String {
        let v = self
            .exec_async(
                "const [lang, key] = arguments; const done = arguments[arguments.length - 1];
                 import('/i18n.js').then(m => done(m.STRINGS[lang][key] ?? null), e => done(String(e)));",
                json!([lang, key]),
            )
            .await;
        let mut s = v.as_str().unwrap_or_else(|| panic!("no {lang} string {key}")).to_string();
        for (k, val) in params {
            s = s.replace(&format!("{{{k}}}"), val);
        }
        s
    }

    /// From now on, every public record the page fetches arrives with one
    /// of As Capone's cards changed (draw 2): a record altered on its way.
    pub async fn alter_records_in_flight(&self) {
        self.exec(
            r#"const real = window.fetch;
               window.fetch = async (url, init) => {
                 const r = await real(url, init);
                 if (!String(url).endsWith('/record')) return r;
                 const rec = await r.json();
                 rec.draws[2].capone = rec.draws[2].capone === 'A' ? '7' : 'A';
                 return new Response(JSON.stringify(rec), {status: 200, headers: {'Content-Type': 'application/json'}});
               };"#,
            json!([]),
        )
        .await;
    }

    /// Waits for the check view's verdict (after a click that opens it).
    pub async fn wait_verdict(&self) -> Value {
        self.wait_for(
            "document.body.dataset.view === 'verify' && document.body.dataset.state === 'idle' && document.getElementById('verdict').dataset.valid",
            "the verdict",
        )
        .await
    }

    /// On a ticket not played yet: checks that the page shows a seed it
    /// drew itself (32 hex digits, from `crypto.getRandomValues`) and the
    /// ticket's commitment, then unfolds the fairness box (one click on
    /// its summary), types `seed` over the drawn one and folds the box
    /// again if it was folded. Returns the seed the page had drawn.
    pub async fn choose_seed(&self, seed: &str) -> String {
        self.wait_for(
            "document.body.dataset.state === 'idle' && !document.getElementById('seed-form').hidden && document.getElementById('ticket-seed').value !== ''",
            "the seed field",
        )
        .await;
        let drawn = self.exec("return document.getElementById('ticket-seed').value", json!([])).await;
        let drawn = drawn.as_str().unwrap().to_string();
        assert!(
            drawn.len() == 32 && drawn.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
            "the page draws a 16-byte hex seed: {drawn:?}"
        );
        let commitment = self.exec("return document.getElementById('ticket-commitment').dataset.full", json!([])).await;
        assert_eq!(commitment.as_str().map(str::len), Some(64), "the ticket's commitment is shown: {commitment}");
        let folded = self.exec("return !document.getElementById('fair').open", json!([])).await == true;
        if folded {
            self.click("#fair > summary").await;
        }
        self.type_into("#ticket-seed", seed).await;
        assert_eq!(self.exec("return document.getElementById('ticket-seed').value", json!([])).await, seed);
        if folded {
            self.exec("document.getElementById('fair').open = false", json!([])).await;
        }
        drawn
    }

    /// The page's player token (localStorage).
    pub async fn token(&self) -> String {
        self.exec("return localStorage.getItem('asc.token');", json!([])).await.as_str().expect("a token").to_string()
    }

    /// A console error this test causes on purpose and may then be logged:
    /// an entry whose message contains `needle` (say the URL and the
    /// status, e.g. `"/api/tickets/redeem - Failed to load resource: the
    /// server responded with a status of 404"`) does not fail the test.
    pub fn expect_console_error(&self, needle: &str) {
        self.expected_errors.lock().unwrap().push(needle.to_string());
    }

    /// A request this test makes fail on purpose: `path` of the test server
    /// (the whole URL up to its end, query included) answered `status`, which
    /// Chromium logs as a console error; [`Browser::expect_console_error`]
    /// for exactly that request and status.
    pub fn expect_http_error(&self, path: &str, status: u16) {
        self.expect_console_error(&format!(
            "{}{path} - Failed to load resource: the server responded with a status of {status} (",
            self.base
        ));
    }

    /// Fails on any error (level SEVERE) in the browser's console since the
    /// last check, those [`Browser::expect_console_error`] allowed aside: a
    /// script error, a Content-Security-Policy violation, a failed request.
    /// [`Browser::close`] runs it at the end of every test.
    pub async fn assert_no_console_errors(&self) {
        let log = self.s.browser_log().await;
        let expected = self.expected_errors.lock().unwrap().clone();
        let errors: Vec<String> = log
            .iter()
            .filter(|e| e["level"] == "SEVERE")
            .map(|e| format!("[{}] {}", e["source"].as_str().unwrap_or("?"), e["message"].as_str().unwrap_or("")))
            .filter(|m| !expected.iter().any(|x| m.contains(x.as_str())))
            .collect();
        assert!(errors.is_empty(), "{} error(s) in the browser's console:\n{}", errors.len(), errors.join("\n"));
    }

    pub async fn close(mut self) {
        // Every test ends here: no error in the browser's console, ever.
        self.assert_no_console_errors().await;
        match &mut self.driver {
            Driver::Own { .. } => self.s.quit().await,
            Driver::Pooled(lease) => lease.take().unwrap().release(&self.s).await,
        }
        self.ended = true;
        // Drop kills the test's own chromedriver's process group.
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        match &mut self.driver {
            Driver::Own { child, port, .. } => {
                if !self.ended {
                    // A test that panicked: Chromium is asked to close cleanly first.
                    end_session(*port, &self.s.id);
                }
                kill_group(child);
            }
            Driver::Pooled(lease) => {
                if let Some(lease) = lease.take() {
                    // A test that panicked: its session is not given back.
                    lease.discard();
                }
            }
        }
    }
}

/// Kills chromedriver (and the Chromium it started) if a test panics while
/// the browser is starting.
struct DriverGuard {
    child: Option<Child>,
    port: u16,
    session: Option<String>,
}

/// `DELETE /session/{id}` to the chromedriver on `port`, with a blocking
/// socket (Drop cannot await): Chromium closes cleanly.
pub fn end_session(port: u16, id: &str) {
    if let Ok(mut s) = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(500)) {
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let req = format!(
            "DELETE /session/{id} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        if s.write_all(req.as_bytes()).is_ok() {
            read_one_response(&mut s);
        }
    }
}

impl Drop for DriverGuard {
    fn drop(&mut self) {
        if let Some(id) = self.session.take() {
            end_session(self.port, &id);
        }
        if let Some(mut c) = self.child.take() {
            kill_group(&mut c);
        }
    }
}

/// Reads one HTTP response to its end (its `Content-Length`): chromedriver
/// keeps the connection open after answering, so reading to the end of the
/// stream would wait for the read timeout.
fn read_one_response(s: &mut TcpStream) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = s.read(&mut chunk) {
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        if buf.len() >= end + 4 + length {
            return;
        }
    }
}

/// SIGKILL to the process group we created for chromedriver (its id is the
/// group's), then reap chromedriver.
fn kill_group(child: &mut Child) {
    let pid = child.id() as i32;
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The page fits a screen `width` CSS pixels wide: a phone widens its
/// layout viewport to fit content that is too wide, so the viewport must
/// stay at the screen's width, and nothing may scroll sideways.
pub async fn assert_fits(b: &Browser, width: u64, screen: &str) {
    let w = b.exec("return [window.innerWidth, screen.width]", json!([])).await;
    assert_eq!(
        w,
        json!([width, width]),
        "{screen}: the page is wider than the screen; too wide: {}",
        b.overflowing().await
    );
    let over = b.overflow_x().await;
    assert!(
        over <= 0,
        "{screen}: the page scrolls sideways by {over} px at {width} px; too wide: {}",
        b.overflowing().await
    );
}
