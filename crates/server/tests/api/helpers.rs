use engine::{Action, Event, PrizeSchedule};
use reqwest::StatusCode;
use serde_json::{Value, json};
use server::ServerKey;
use server::ServerSeeds;
use server::{App, AppOptions, Config};
use std::path::{Path, PathBuf};

use testkit::TestDb;
pub use testkit::{Foreseen, SEED, START, TABLE};

/// The storage a test runs on ([`backend`]): each test written in
/// `both!` runs once on each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

tokio::task_local! {
    /// The backend of the running test, set by [`on`].
    static BACKEND: Backend;
}

/// The backend of the running test: the one [`on`] set for it, SQLite for
/// the tests that run only there (outside `both!`).
pub fn backend() -> Backend {
    BACKEND.try_with(|b| *b).unwrap_or(Backend::Sqlite)
}

/// Runs a test's body on `backend` (`both!`'s two halves).
pub async fn on(backend: Backend, test: impl std::future::Future<Output = ()>) {
    BACKEND.scope(backend, test).await
}

/// The operator token every test server accepts (`Config::operator_tokens`).
pub const OPERATOR: &str = "operator-token-of-the-api-tests";

/// The retailers every test server knows (`Config::retailer_tokens`,
/// "SHOP NAME:TOKEN", docs/contract.md Operator): each token names its shop.
pub const SHOP_A: &str = "Tabac de la Gare";
pub const SHOP_A_TOKEN: &str = "retailer-token-tabac-de-la-gare";
pub const SHOP_B: &str = "Bar des Sports";
pub const SHOP_B_TOKEN: &str = "retailer-token-bar-des-sports";

/// The client seed the tests send with a ticket's first action (`seq` 0,
/// docs/contract.md Fairness 2): [`action_body`] sends it and [`search`] plans
/// with it, so that a plan found offline is the game the server plays.
pub const CLIENT_SEED: &str = "api-test-client-seed";

/// The test database of one test: a SQLite file in a temporary directory,
/// or a fresh PostgreSQL database (dropped by [`TestDatabase::remove`], or
/// by `TestDb`'s `Drop` when a test panics); and the server key's
/// file, in a temporary directory of its own, kept with the database so
/// that a restart on it uses the same key.
pub struct TestDatabase {
    /// The server's `db` setting: `sqlite://PATH` or `postgres://...`.
    pub url: String,
    /// The server's `key_file` setting (created by the first server).
    pub key_file: PathBuf,
    dir: tempfile::TempDir,
    pg: Option<TestDb>,
}

impl TestDatabase {
    /// A new, empty database of the test's [`backend`]; `None` when PostgreSQL is
    /// unreachable and not required (the test then passes doing nothing).
    pub async fn create() -> Option<TestDatabase> {
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join("server.key");
        match backend() {
            Backend::Sqlite => {
                let url = format!("sqlite://{}", dir.path().join("test.db").display());
                Some(TestDatabase { url, key_file, dir, pg: None })
            }
            Backend::Postgres => {
                let db = TestDb::create().await?;
                Some(TestDatabase { url: db.url.clone(), key_file, dir, pg: Some(db) })
            }
        }
    }

    /// The temporary directory of this database's files (the SQLite file, the key).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Removes the database (the directory, and `DROP DATABASE`).
    pub async fn remove(self) {
        if let Some(db) = self.pg {
            db.drop_db().await;
        }
        drop(self.dir);
    }
}

pub struct TestApp {
    pub app: App,
    pub url: String,
    pub client: reqwest::Client,
    pub backend: Backend,
    /// The database's URL, as given to the server (`Config::db`).
    pub db_url: String,
    db: TestDatabase,
}

/// A server on a fresh database of the test's [`backend`]; `None` only when
/// PostgreSQL is unreachable and not required.
pub async fn spawn_app() -> Option<TestApp> {
    spawn_app_with(|_| {}).await
}

pub async fn spawn_app_with(tune: impl FnOnce(&mut Config)) -> Option<TestApp> {
    let db = TestDatabase::create().await?;
    Some(spawn_app_on(db, tune).await)
}

/// A server whose tickets' seeds are derived from its key file, as in
/// production (`ServerSeeds::FromKey`): nobody can predict its draws.
pub async fn spawn_app_from_key(tune: impl FnOnce(&mut Config)) -> Option<TestApp> {
    let db = TestDatabase::create().await?;
    Some(try_spawn_app_on(db, ServerSeeds::FromKey, TABLE, tune).await.map_err(|(_, e)| e).expect("server starts"))
}

/// A server on an existing test database (a restart: see [`TestApp::stop`]),
/// with the test-only fixed seed.
pub async fn spawn_app_on(db: TestDatabase, tune: impl FnOnce(&mut Config)) -> TestApp {
    try_spawn_app_on(db, ServerSeeds::InsecureFixedForTests(SEED), TABLE, tune)
        .await
        .map_err(|(_, e)| e)
        .expect("server starts")
}

/// The configuration of a test server on `db`: its key file, the operator
/// token [`OPERATOR`], and the small test table allowed (blocks of 100
/// tickets are not art. 2's 300 000).
pub fn test_config(db: &TestDatabase) -> Config {
    Config {
        listen: "127.0.0.1:0".into(),
        db: db.url.clone(),
        start_balance_cents: START as u64,
        demo_token: String::new(),
        initial_blocks: 2,
        key_file: Some(db.key_file.clone()),
        operator_tokens: vec![OPERATOR.to_string()],
        allow_non_regulation_table: true,
        // The tests register many players from 127.0.0.1; errors.rs tests the limit.
        registrations_per_address: 0,
        // Players buy without choosing a limit on stakes first; limits.rs
        // turns the rule on (décret 2010-518, art. 16).
        stake_limit_required: false,
        retailer_tokens: vec![format!("{SHOP_A}:{SHOP_A_TOKEN}"), format!("{SHOP_B}:{SHOP_B_TOKEN}")],
        ..Config::default()
    }
}

/// Starts a server on `db` with these seeds and this start-up table (TOML);
/// a refusal gives the database back with the error.
pub async fn try_spawn_app_on(
    db: TestDatabase,
    seeds: ServerSeeds,
    table: &str,
    tune: impl FnOnce(&mut Config),
) -> Result<TestApp, (TestDatabase, anyhow::Error)> {
    let mut config = test_config(&db);
    tune(&mut config);
    let table = math::PrizeTable::parse_toml(table).unwrap();
    match App::start(AppOptions { config, table, seeds }).await {
        Ok(app) => {
            let url = app.url();
            Ok(TestApp { app, url, client: reqwest::Client::new(), backend: backend(), db_url: db.url.clone(), db })
        }
        Err(e) => Err((db, e)),
    }
}

/// Shuts down a server shared by tasks (all of them finished) and removes
/// its database.
pub async fn shutdown_shared(app: std::sync::Arc<TestApp>) {
    let app = std::sync::Arc::into_inner(app).expect("no task holds the app any more");
    app.shutdown().await;
}

pub struct Resp {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub bytes: Vec<u8>,
    pub json: Value,
}

impl TestApp {
    pub async fn send(&self, req: reqwest::RequestBuilder) -> Resp {
        let r = req.send().await.expect("request");
        let status = r.status();
        let headers = r.headers().clone();
        let bytes = r.bytes().await.unwrap().to_vec();
        let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Resp { status, headers, bytes, json }
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Value) -> Resp {
        let mut req = self.client.post(format!("{}{path}", self.url)).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        self.send(req).await
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> Resp {
        let mut req = self.client.get(format!("{}{path}", self.url));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        self.send(req).await
    }

    pub async fn register(&self) -> String {
        let r = self.post("/api/players", None, json!({"name": "test"})).await;
        assert_eq!(r.status, 201, "{}", r.json);
        assert!(r.json["player_id"].as_i64().is_some(), "{}", r.json);
        r.json["token"].as_str().unwrap().to_string()
    }

    /// Buys a ticket (a purchase takes no client seed, docs/contract.md Fairness 2).
    pub async fn buy(&self, token: &str) -> Value {
        let r = self.post("/api/tickets", Some(token), json!({})).await;
        assert_eq!(r.status, 201, "{}", r.json);
        let t = r.json["ticket"].clone();
        assert_eq!(t["client_seed"], Value::Null, "no client seed before the first action: {t}");
        t
    }

    pub async fn balance(&self, token: &str) -> i64 {
        let r = self.get("/api/me", Some(token)).await;
        assert_eq!(r.status, 200);
        r.json["balance_cents"].as_i64().unwrap()
    }

    /// Plays `actions` over HTTP and returns every answer.
    pub async fn play(&self, token: &str, id: &str, actions: &[Action]) -> Vec<Resp> {
        let mut out = Vec::new();
        for (seq, a) in actions.iter().enumerate() {
            let r = self.post(&format!("/api/tickets/{id}/actions"), Some(token), action_body(seq as u64, *a)).await;
            assert_eq!(r.status, 200, "action {seq}: {}", r.json);
            out.push(r);
        }
        out
    }

    /// Runs one SQL statement on the test database, beside the server (a
    /// connection of its own); the rows it changed, or the database's refusal.
    pub async fn exec_sql(&self, sql: &str) -> Result<u64, String> {
        use sqlx::Connection;
        let sql = sqlx::AssertSqlSafe(sql.to_string());
        match self.backend {
            Backend::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&self.db_url).await.map_err(|e| e.to_string())?;
                let r = sqlx::query(sql).execute(&mut conn).await;
                conn.close().await.map_err(|e| e.to_string())?;
                r.map(|r| r.rows_affected()).map_err(|e| e.to_string())
            }
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&self.db_url).await.map_err(|e| e.to_string())?;
                let r = sqlx::query(sql).execute(&mut conn).await;
                conn.close().await.map_err(|e| e.to_string())?;
                r.map(|r| r.rows_affected()).map_err(|e| e.to_string())
            }
        }
    }

    /// Runs one scalar `SELECT` of an integer (cast SUMs to BIGINT: on
    /// PostgreSQL they are NUMERIC) on the test database, beside the server.
    pub async fn query_i64(&self, sql: &str) -> i64 {
        use sqlx::Connection;
        let q = sqlx::AssertSqlSafe(sql.to_string());
        let r = match self.backend {
            Backend::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&self.db_url).await.unwrap();
                let r = sqlx::query_scalar::<_, i64>(q).fetch_one(&mut conn).await;
                conn.close().await.unwrap();
                r
            }
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&self.db_url).await.unwrap();
                let r = sqlx::query_scalar::<_, i64>(q).fetch_one(&mut conn).await;
                conn.close().await.unwrap();
                r
            }
        };
        r.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Runs one scalar `SELECT` of a text on the test database, beside the server.
    pub async fn query_text(&self, sql: &str) -> String {
        use sqlx::Connection;
        let q = sqlx::AssertSqlSafe(sql.to_string());
        let r = match self.backend {
            Backend::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&self.db_url).await.unwrap();
                let r = sqlx::query_scalar::<_, String>(q).fetch_one(&mut conn).await;
                conn.close().await.unwrap();
                r
            }
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&self.db_url).await.unwrap();
                let r = sqlx::query_scalar::<_, String>(q).fetch_one(&mut conn).await;
                conn.close().await.unwrap();
                r
            }
        };
        r.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The server's key, read from its key file.
    pub fn server_key(&self) -> ServerKey {
        let text = std::fs::read_to_string(&self.db.key_file).expect("the server created its key file");
        let mut key = [0u8; 32];
        hex::decode_to_slice(text.trim(), &mut key).expect("64 hex digits");
        ServerKey::from_bytes(key)
    }

    /// The operator's desk: a GET with the operator token.
    pub async fn admin_get(&self, path: &str) -> Resp {
        self.get(path, Some(OPERATOR)).await
    }

    /// The operator's desk: a POST with the operator token.
    pub async fn admin_post(&self, path: &str, body: Value) -> Resp {
        self.post(path, Some(OPERATOR), body).await
    }

    /// The audit chain's check once every committed entry is sealed
    /// (`Store::seal_audit` waits for a sealer at work elsewhere).
    pub async fn sealed_audit_check(&self) -> server::AuditCheck {
        let store = self.app.store();
        store.seal_audit().await.expect("seal_audit");
        let check = store.check_audit_chain().await.expect("check_audit_chain");
        // Everything the server wrote is sealed with its key, and every
        // movement of money is named by such an entry (store/audit_mac.rs).
        assert_eq!(check.forged, None, "{check:?}");
        check
    }

    /// A retailer's call (docs/contract.md Retail tickets): `POST /api/retail/{op}`
    /// (`sell`, `validate` or `pay`) with `{"serial"}` and this bearer token.
    pub async fn retail(&self, op: &str, token: Option<&str>, serial: &str) -> Resp {
        self.post(&format!("/api/retail/{op}"), token, json!({ "serial": serial })).await
    }

    /// `POST /api/tickets/redeem` `{"code"}`, with a player's token or none.
    pub async fn redeem(&self, code: &str, token: Option<&str>) -> Resp {
        self.post("/api/tickets/redeem", token, json!({ "code": code })).await
    }

    /// Another server process on this test's database (PostgreSQL: several
    /// processes share it), with the same settings tuned by `tune`.
    /// (SQLite refuses a second process on its file: `Err`.)
    pub async fn another_process(&self, tune: impl FnOnce(&mut Config)) -> anyhow::Result<App> {
        let mut config = test_config(&self.db);
        tune(&mut config);
        let table = math::PrizeTable::parse_toml(TABLE).unwrap();
        let seeds = ServerSeeds::InsecureFixedForTests(SEED);
        App::start(AppOptions { config, table, seeds }).await
    }

    /// `POST` from the client address `from`, as a trusted proxy says it
    /// (`X-Forwarded-For`, `Config::trust_forwarded_for`), to `url` (this
    /// server's or another process's).
    pub async fn post_from(&self, url: &str, path: &str, from: &str, token: Option<&str>, body: Value) -> Resp {
        let mut req = self.client.post(format!("{url}{path}")).header("x-forwarded-for", from).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        self.send(req).await
    }

    /// `POST /api/tickets/redeem` from the client address `from`, as a
    /// trusted proxy says it (`X-Forwarded-For`, `Config::trust_forwarded_for`).
    pub async fn redeem_from(&self, from: &str, code: &str) -> Resp {
        let req = self
            .client
            .post(format!("{}/api/tickets/redeem", self.url))
            .header("x-forwarded-for", from)
            .json(&json!({ "code": code }));
        self.send(req).await
    }

    /// The print file of a paper block, one [`Printed`] a ticket (with
    /// the play codes: given only before any ticket of the block is sold).
    pub async fn print_file(&self, emission: u64, block: u64) -> Vec<Printed> {
        self.printed(&format!("/api/admin/emissions/{emission}/blocks/{block}/print.csv")).await
    }

    /// The print file of a paper block without its play codes
    /// (`codes=false`, given at any time): every [`Printed::code`] empty.
    pub async fn print_file_without_codes(&self, emission: u64, block: u64) -> Vec<Printed> {
        self.printed(&format!("/api/admin/emissions/{emission}/blocks/{block}/print.csv?codes=false")).await
    }

    /// The print file at `path`, one [`Printed`] a ticket.
    async fn printed(&self, path: &str) -> Vec<Printed> {
        let r = self.admin_get(path).await;
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.bytes));
        let text = String::from_utf8(r.bytes).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name} in {header:?}"));
        let (serial, code, row) = (col("serial"), col("play_code"), col("row"));
        let prizes = [col("prize_5"), col("prize_6"), col("prize_7"), col("prize_8")];
        lines
            .map(|line| {
                let f: Vec<&str> = line.split(',').collect();
                Printed {
                    serial: f[serial].to_string(),
                    code: f[code].to_string(),
                    row: f[row].parse().unwrap(),
                    prizes: PrizeSchedule::new(prizes.map(|i| f[i].parse::<u64>().unwrap())),
                }
            })
            .collect()
    }

    /// Every row `sql` selects, each as one line `column=value|...` (NULL
    /// for a null), whatever the columns' types: to compare a part of the
    /// database before and after a request that must change nothing.
    pub async fn dump(&self, sql: &str) -> Vec<String> {
        dump_at(self.backend, &self.db_url, sql).await
    }

    /// The server's key file (`Config::key_file`).
    pub fn key_file(&self) -> &Path {
        &self.db.key_file
    }

    /// The test database this server runs on.
    pub fn database(&self) -> &TestDatabase {
        &self.db
    }

    /// Shuts the server down gracefully and keeps its database, to start
    /// another server on it ([`spawn_app_on`]).
    pub async fn stop(self) -> TestDatabase {
        self.app.shutdown().await.unwrap();
        self.db
    }

    /// Shuts the server down gracefully, then removes its database.
    pub async fn shutdown(self) {
        self.stop().await.remove().await;
    }
}

/// [`TestApp::dump`] on the database at `db_url`, with or without a
/// server on it (a server that refused to start).
pub async fn dump_at(backend: Backend, db_url: &str, sql: &str) -> Vec<String> {
    use sqlx::{Column, Connection, Row, ValueRef};
    let q = sqlx::AssertSqlSafe(sql.to_string());
    macro_rules! cells {
        ($row:expr) => {{
            let row = $row;
            let mut line = String::new();
            for (i, c) in row.columns().iter().enumerate() {
                let value = if row.try_get_raw(i).unwrap().is_null() {
                    "NULL".to_string()
                } else if let Ok(v) = row.try_get::<i64, _>(i) {
                    v.to_string()
                } else if let Ok(v) = row.try_get::<i32, _>(i) {
                    v.to_string()
                } else if let Ok(v) = row.try_get::<String, _>(i) {
                    format!("{v:?}")
                } else if let Ok(v) = row.try_get::<bool, _>(i) {
                    v.to_string()
                } else if let Ok(v) = row.try_get::<f64, _>(i) {
                    v.to_string()
                } else {
                    panic!("{sql}: column {} of an unexpected type", c.name())
                };
                line.push_str(&format!("{}={value}|", c.name()));
            }
            line
        }};
    }
    match backend {
        Backend::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(db_url).await.unwrap();
            let rows = sqlx::query(q).fetch_all(&mut conn).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
            conn.close().await.unwrap();
            rows.iter().map(|r| cells!(r)).collect()
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(db_url).await.unwrap();
            let rows = sqlx::query(q).fetch_all(&mut conn).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
            conn.close().await.unwrap();
            rows.iter().map(|r| cells!(r)).collect()
        }
    }
}

/// The body of action `seq`; the first one (`seq` 0) brings [`CLIENT_SEED`].
pub fn action_body(seq: u64, a: Action) -> Value {
    let mut body = testkit::action_json(seq, a);
    if seq == 0 {
        body["client_seed"] = json!(CLIENT_SEED);
    }
    body
}

/// One ticket of a paper block's print file (`print.csv`): what the shop
/// sells and the player scratches.
#[derive(Clone, Debug)]
pub struct Printed {
    /// As printed: `PAP-002-00001-000007-42`.
    pub serial: String,
    /// The play code under the scratch zone, as printed (`7K3M-Q9ZD-XW4P-2HRT`).
    pub code: String,
    /// The schedule row, from 1 as in the file.
    pub row: u32,
    pub prizes: PrizeSchedule,
}

impl Printed {
    /// The ticket as [`search`] reads it before it is played: its serial,
    /// its prizes, no client seed yet (the first action sends [`CLIENT_SEED`]).
    pub fn unplayed(&self) -> Value {
        json!({"serial": self.serial, "prizes_cents": self.prizes, "client_seed": null})
    }
}

/// [`search`] on a printed ticket not played yet: every paper ticket of a
/// test server has the fixed seed [`SEED`] too.
pub fn search_printed(p: &Printed, tries: u64, want: impl Fn(&Foreseen) -> bool) -> Option<Foreseen> {
    search(&p.unplayed(), tries, want)
}

pub fn prizes_of(ticket: &Value) -> PrizeSchedule {
    serde_json::from_value(ticket["prizes_cents"].clone()).unwrap()
}

/// Tries up to `tries` random card orders on this ticket
/// ([`testkit::search_card_orders`]) and returns the first plan whose events
/// satisfy `want`: with the fixed seed and the ticket's client seed, or
/// [`CLIENT_SEED`] for a ticket not played yet (what [`action_body`] sends
/// at `seq` 0).
pub fn search(ticket: &Value, tries: u64, want: impl Fn(&Foreseen) -> bool) -> Option<Foreseen> {
    let serial = ticket["serial"].as_str().unwrap();
    let client_seed = ticket["client_seed"].as_str().unwrap_or(CLIENT_SEED);
    testkit::search_card_orders(serial, client_seed, prizes_of(ticket), tries, want)
}

/// Buys tickets until one admits a plan with `want` (at most `max_tickets`).
pub async fn find_ticket(
    app: &TestApp,
    token: &str,
    max_tickets: usize,
    want: impl Fn(&Foreseen) -> bool,
) -> (Value, Foreseen) {
    for _ in 0..max_tickets {
        let t = app.buy(token).await;
        if let Some(p) = search(&t, 300, &want) {
            return (t, p);
        }
    }
    panic!("no ticket among {max_tickets} admits the wanted plan");
}

pub fn all_events(p: &Foreseen) -> impl Iterator<Item = &Event> {
    p.events.iter().flatten()
}

pub fn assert_error(r: &Resp, status: u16, code: &str) {
    assert_eq!(r.status.as_u16(), status, "{}", String::from_utf8_lossy(&r.bytes));
    assert_eq!(r.json["error"], code, "{}", r.json);
    assert!(r.json["message"].as_str().is_some_and(|m| !m.is_empty()), "{}", r.json);
    let body = r.json.as_object().unwrap();
    assert!(
        body.keys().all(|k| ["error", "message", "params"].contains(&k.as_str())),
        "only error, message, params: {}",
        r.json
    );
    // `params`, when present, is an object, and a `reason` is one the pages word (error::REASONS).
    if let Some(params) = body.get("params") {
        assert!(params.is_object(), "{}", r.json);
        if let Some(reason) = params.get("reason") {
            let reason = reason.as_str().expect("a reason is a string");
            assert!(server::ERROR_REASONS.contains(&(code, reason)), "{code}/{reason} is not in REASONS: {}", r.json);
        }
    }
    assert!(server::ERROR_CODES.contains(&code), "{code} is not in CODES");
}

/// Whether Schemathesis (PyPI) is installed; when it is not, a test that
/// needs it is skipped with a message, unless `AS_CAPONE_REQUIRE_SCHEMATHESIS=1`.
pub fn schemathesis_installed() -> bool {
    let found = std::process::Command::new("schemathesis").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("AS_CAPONE_REQUIRE_SCHEMATHESIS").as_deref() != Ok("1"),
            "schemathesis is required (pip install schemathesis)"
        );
        eprintln!("SKIPPED: schemathesis is not installed (pip install schemathesis)");
    }
    found
}

/// Runs Schemathesis on the document of the server at `url` with `token`;
/// fails with its report when it finds anything.
pub async fn run_schemathesis(url: &str, token: &str, scope: &[&str], examples: u32) {
    let scope: Vec<String> = scope.iter().map(|s| s.to_string()).collect();
    let dir = tempfile::tempdir().unwrap();
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/../server/tests/api/schemathesis.toml");
    let url = format!("{url}/api/openapi.json");
    let auth = format!("Authorization: Bearer {token}");
    let started = std::time::Instant::now();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("schemathesis")
            .current_dir(dir.path())
            .env("SCHEMATHESIS_HOOKS", "")
            .args(["--config-file", config, "run", &url, "--checks", "all", "--header", &auth])
            .args(["--max-examples", &examples.to_string()])
            .args(&scope)
            // One worker: with several, Hypothesis parses Python sources in
            // threads at once, which Python 3.11's parser does not survive
            // ("SystemError: AST constructor recursion depth mismatch", a
            // runtime error of the run, seen here under load).
            .args(["--phases", "examples,coverage,fuzzing,stateful", "--workers", "1", "--seed", "20261203"])
            .args(["--no-color", "--suppress-health-check", "all"])
            .output()
            .expect("schemathesis runs")
    })
    .await
    .unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    eprintln!("{report}\n(run in {:.1} s)", started.elapsed().as_secs_f64());
    assert!(output.status.success(), "Schemathesis found problems (report above)");
    assert!(report.contains("passed"), "no test case ran");
}
