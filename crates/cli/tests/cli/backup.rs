//! Backups that restore (docs/backups.md), on SQLite and PostgreSQL. A real
//! `as-capone serve` sells and plays under a load of players; while they
//! play, `as-capone backup` copies its database (SQLite's backup API,
//! stepping a few pages at a time; `pg_dump` on PostgreSQL); the load goes
//! on, then `as-capone restore` makes a new database of the copy and a
//! server is started on it with the same key file. It is proven that:
//!
//! - every request answered before the backup started is in the restored
//!   database: the purchase's ticket, every action (replayed byte for
//!   byte), and the player's balance as last answered;
//! - each player's requests there are a prefix of what they were answered
//!   (an action answered during the backup is wholly there or wholly
//!   absent, never half a game), and the balance is the one answered last
//!   among them;
//! - the restored database's ledger is sound and its audit chain verifies,
//!   every finished ticket's record verifies, unfinished games go on and
//!   new tickets are sold;
//! - SQLite: the server kept answering while the backup stepped; a restore
//!   never replaces a database (unless forced, and never one a server
//!   serves), a damaged backup and one whose schema was changed (an added
//!   trigger) are refused, and the restored database with another key file
//!   is refused at start.

use crate::common;

use record::{Record, verify};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use testkit::TestDb;

const START: i64 = 1_000_000;
const PRICE: i64 = 300;
const PLAYERS: usize = 8;

fn server_args() -> Vec<String> {
    ["--start-balance-cents", &START.to_string(), "--demo-token", "", "--initial-blocks", "2"]
        .map(str::to_string)
        .to_vec()
}

fn start(dir: &Path, db: &str) -> common::Server {
    let args = server_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::spawn_server(dir, db, &args).wait_listening("server")
}

/// One answered request of a player: a purchase (`seq` None) or an action.
#[derive(Clone, Debug)]
struct Answered {
    ticket: String,
    seq: Option<u64>,
    body: Value,
    answer: Vec<u8>,
    balance: i64,
    at: Instant,
}

/// What one player was answered, in order.
#[derive(Default)]
struct Player {
    token: String,
    answers: Vec<Answered>,
}

async fn post(c: &reqwest::Client, url: &str, token: Option<&str>, body: &Value) -> (u16, Vec<u8>) {
    let mut r = c.post(url).json(body);
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    let resp = r.send().await.expect("the server answers");
    let status = resp.status().as_u16();
    (status, resp.bytes().await.expect("a whole answer").to_vec())
}

async fn get(c: &reqwest::Client, url: &str, token: &str) -> Value {
    c.get(url).bearer_auth(token).send().await.unwrap().json().await.unwrap()
}

/// A player buying and playing whole games until `stop`, each answer
/// recorded with the moment it arrived.
async fn play(url: String, me: Arc<Mutex<Player>>, stop: Arc<AtomicBool>) {
    let c = reqwest::Client::new();
    let token = me.lock().unwrap().token.clone();
    while !stop.load(Ordering::Relaxed) {
        let (status, bytes) = post(&c, &format!("{url}/api/tickets"), Some(&token), &json!({})).await;
        if status == 503 {
            return; // sold out
        }
        assert_eq!(status, 201, "{}", String::from_utf8_lossy(&bytes));
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        let mut t = v["ticket"].clone();
        let id = t["id"].as_str().unwrap().to_string();
        let balance = v["balance_cents"].as_i64().unwrap();
        let at = Instant::now();
        let bought = Answered { ticket: id.clone(), seq: None, body: json!({}), answer: bytes, balance, at };
        me.lock().unwrap().answers.push(bought);
        while t["phase"] != "finished" && !stop.load(Ordering::Relaxed) {
            let body = common::next_action(&t);
            let (status, bytes) = post(&c, &format!("{url}/api/tickets/{id}/actions"), Some(&token), &body).await;
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            t = v["ticket"].clone();
            let (seq, balance) = (body["seq"].as_u64(), v["balance_cents"].as_i64().unwrap());
            let answered = Answered { ticket: id.clone(), seq, body, answer: bytes, balance, at: Instant::now() };
            me.lock().unwrap().answers.push(answered);
        }
    }
}

/// The run: players on `live_url`, a backup to `file` while they play.
/// Returns the players, when the backup began and ended, and its output.
fn load_with_backup(
    rt: &tokio::runtime::Runtime,
    url: &str,
    live_url: &str,
    file: &Path,
) -> (Vec<Player>, Instant, Instant, String) {
    let stop = Arc::new(AtomicBool::new(false));
    let (players, began, ended, out) = rt.block_on(async {
        let c = reqwest::Client::new();
        let mut players = Vec::new();
        for _ in 0..PLAYERS {
            let (status, b) = post(&c, &format!("{url}/api/players"), None, &json!({})).await;
            assert_eq!(status, 201);
            let token = serde_json::from_slice::<Value>(&b).unwrap()["token"].as_str().unwrap().to_string();
            players.push(Arc::new(Mutex::new(Player { token, answers: Vec::new() })));
        }
        let tasks: Vec<_> =
            players.iter().map(|p| tokio::spawn(play(url.to_string(), p.clone(), stop.clone()))).collect();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let began = Instant::now();
        let mut backup = std::process::Command::new(common::exe());
        backup.args(["backup", "--db", live_url, "--pages-per-step", "8", "--pause-ms", "5", "--out"]).arg(file);
        let output = tokio::task::spawn_blocking(move || backup.output().unwrap()).await.unwrap();
        let ended = Instant::now();
        let out = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "backup: {out}{}", String::from_utf8_lossy(&output.stderr));
        tokio::time::sleep(Duration::from_millis(500)).await;
        stop.store(true, Ordering::Relaxed);
        for t in tasks {
            t.await.unwrap();
        }
        (players, began, ended, out)
    });
    let players = players.into_iter().map(|p| std::mem::take(&mut *p.lock().unwrap())).collect();
    (players, began, ended, out)
}

/// `as-capone restore`; its output, or its error output when it failed.
fn restore(file: &Path, db: &str, force: bool) -> Result<String, String> {
    let mut c = std::process::Command::new(common::exe());
    c.arg("restore").arg("--from").arg(file).args(["--db", db]);
    if force {
        c.arg("--force");
    }
    let output = c.output().unwrap();
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    if output.status.success() { Ok(out) } else { Err(err) }
}

/// Checks one player's answers against the restored server at `url`
/// (see the module doc); returns the tickets left unfinished and how many
/// of the player's answers the restored database holds.
async fn check_player(c: &reqwest::Client, url: &str, p: &Player, backup_began: Instant) -> (Vec<Value>, usize) {
    let list = get(c, &format!("{url}/api/tickets"), &p.token).await;
    let tickets: std::collections::HashMap<String, Value> = list["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap().to_string(), t.clone()))
        .collect();
    let present = |a: &Answered| match (tickets.get(&a.ticket), a.seq) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(t), Some(seq)) => seq < t["seq"].as_u64().unwrap(),
    };
    let kept = p.answers.iter().take_while(|a| present(a)).count();
    assert!(
        p.answers[kept..].iter().all(|a| !present(a)),
        "the restored requests of a player are a prefix of those answered"
    );
    for a in &p.answers[kept..] {
        assert!(
            a.at >= backup_began,
            "ticket {} seq {:?}: answered before the backup began, yet missing",
            a.ticket,
            a.seq
        );
    }
    assert_eq!(tickets.len(), p.answers[..kept].iter().filter(|a| a.seq.is_none()).count(), "tickets owned");
    for a in p.answers[..kept].iter().filter(|a| a.seq.is_some()) {
        let (status, again) =
            post(c, &format!("{url}/api/tickets/{}/actions", a.ticket), Some(&p.token), &a.body).await;
        assert_eq!((status, &again), (200, &a.answer), "ticket {} seq {:?}: the answer given", a.ticket, a.seq);
    }
    let me = get(c, &format!("{url}/api/me"), &p.token).await;
    let answered = p.answers[..kept].last().map_or(START, |a| a.balance);
    assert_eq!(me["balance_cents"].as_i64().unwrap(), answered, "the balance last answered");
    let mut unfinished = Vec::new();
    for t in tickets.values() {
        if t["phase"] == "finished" {
            let id = t["id"].as_str().unwrap();
            let record: Record = c
                .get(format!("{url}/api/tickets/{id}/record"))
                .bearer_auth(&p.token)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let v = verify(&record);
            assert!(v.is_valid(), "{v}");
        } else {
            unfinished.push(t.clone());
        }
    }
    (unfinished, kept)
}

/// Plays `t` to its end on the server at `url`; its prize.
async fn finish(c: &reqwest::Client, url: &str, token: &str, mut t: Value) -> i64 {
    let id = t["id"].as_str().unwrap().to_string();
    while t["phase"] != "finished" {
        let (status, bytes) =
            post(c, &format!("{url}/api/tickets/{id}/actions"), Some(token), &common::next_action(&t)).await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
        t = serde_json::from_slice::<Value>(&bytes).unwrap()["ticket"].clone();
    }
    t["result"]["prize_cents"].as_i64().unwrap()
}

/// Everything the module doc promises of the restored database `db`, with a
/// server started on it in `dir` (the same key file as the backed-up one).
fn check_restored(rt: &tokio::runtime::Runtime, dir: &Path, db: &str, players: &[Player], began: Instant) {
    let mut server = start(dir, db);
    let url = server.url.clone();
    rt.block_on(async {
        let c = reqwest::Client::new();
        let mut kept = 0;
        let live_sold = sold_tickets(players);
        for p in players {
            let (unfinished, player_kept) = check_player(&c, &url, p, began).await;
            kept += player_kept;
            let me = get(&c, &format!("{url}/api/me"), &p.token).await;
            let mut balance = me["balance_cents"].as_i64().unwrap();
            for t in unfinished {
                balance += finish(&c, &url, &p.token, t).await;
            }
            // A new ticket is sold and played on the restored database, as an
            // outside test once did to buy again a revealed ticket: no ticket the live server sold
            // (before the backup, or after it and forgotten by the restore,
            // its seed revealed at the end of its game) is ever sold again;
            // the new ones come from the emission that replaced the blocks
            // that were on sale.
            let (status, bytes) = post(&c, &format!("{url}/api/tickets"), Some(&p.token), &json!({})).await;
            assert_eq!(status, 201, "{}", String::from_utf8_lossy(&bytes));
            let t = serde_json::from_slice::<Value>(&bytes).unwrap()["ticket"].clone();
            let (serial, commitment) = (t["serial"].as_str().unwrap(), t["commitment"].as_str().unwrap());
            assert_eq!(serial.split('-').nth(1), Some("002"), "a ticket of the replacing emission 2: {serial}");
            for (s, c) in &live_sold {
                assert!(s != serial && c != commitment, "{serial} ({commitment}) was sold before the restore");
            }
            balance += finish(&c, &url, &p.token, t).await - PRICE;
            let me = get(&c, &format!("{url}/api/me"), &p.token).await;
            assert_eq!(me["balance_cents"].as_i64().unwrap(), balance);
        }
        // The restored database is the backup's snapshot, not the live one.
        let answered: usize = players.iter().map(|p| p.answers.len()).sum();
        eprintln!("restored: {kept} of the {answered} answered requests");
        assert!(kept < answered, "the requests answered after the backup are not in it");
    });
    server.sigkill().unwrap();
    rt.block_on(async {
        // The withdrawal is in the audit log, and the restore's row settled.
        let withdrawn = scalar(db, "SELECT COUNT(*) FROM audit_log WHERE kind = 'blocks_withdrawn'").await;
        assert_eq!(withdrawn, 1);
        let sql = "SELECT COUNT(*) FROM blocks WHERE withdrawn_ms IS NOT NULL AND emission_id = 1";
        assert_eq!(scalar(db, sql).await, 2, "both blocks of emission 1 were on sale");
        let sql = "SELECT COUNT(*) FROM restores WHERE settled_ms IS NOT NULL AND replaced_ms IS NOT NULL";
        assert_eq!(scalar(db, sql).await, 1);
        let app = common::in_process_app(db.to_string(), dir).await;
        let ledger = app.store().check_ledger().await.unwrap();
        assert!(ledger.is_sound(), "{ledger:?}");
        let audit = app.store().check_audit_chain().await.unwrap();
        assert_eq!((audit.first_broken, &audit.forged), (None, &None), "{audit:?}");
        app.shutdown().await.unwrap();
    });
}

/// The serial and commitment of every ticket the players bought.
fn sold_tickets(players: &[Player]) -> Vec<(String, String)> {
    let bought = players.iter().flat_map(|p| &p.answers).filter(|a| a.seq.is_none());
    bought
        .map(|a| {
            let t = &serde_json::from_slice::<Value>(&a.answer).unwrap()["ticket"];
            (t["serial"].as_str().unwrap().to_string(), t["commitment"].as_str().unwrap().to_string())
        })
        .collect()
}

/// One integer read from the database `url`.
async fn scalar(url: &str, sql: &str) -> i64 {
    match url.strip_prefix("sqlite://") {
        Some(path) => {
            let pool = sqlx::SqlitePool::connect(&format!("sqlite://{path}")).await.unwrap();
            let n = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string())).fetch_one(&pool).await.unwrap();
            pool.close().await;
            n
        }
        None => {
            let pool = sqlx::PgPool::connect(url).await.unwrap();
            let n = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string())).fetch_one(&pool).await.unwrap();
            pool.close().await;
            n
        }
    }
}

/// Runs `sql` on the database `url`.
async fn exec(url: &str, sql: &str) {
    match url.strip_prefix("sqlite://") {
        Some(_) => {
            let pool = sqlx::SqlitePool::connect(url).await.unwrap();
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string())).execute(&pool).await.unwrap();
            pool.close().await;
        }
        None => {
            let pool = sqlx::PgPool::connect(url).await.unwrap();
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string())).execute(&pool).await.unwrap();
            pool.close().await;
        }
    }
}

/// The players' requests answered before, during and after the backup.
fn counts(players: &[Player], began: Instant, ended: Instant) -> (usize, usize, usize) {
    let all = players.iter().flat_map(|p| &p.answers);
    let before = all.clone().filter(|a| a.at < began).count();
    let during = all.clone().filter(|a| a.at >= began && a.at < ended).count();
    (before, during, all.count() - before - during)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn new_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    dir
}

#[test]
fn sqlite_backup_under_load_restores_every_answered_action() {
    let dir = new_dir();
    let rt = runtime();
    let live = testkit::sqlite_url(dir.path(), "live.db");
    let mut server = start(dir.path(), &live);
    let file = dir.path().join("live.backup");
    let (players, began, ended, out) = load_with_backup(&rt, &server.url, &live, &file);
    let (before, during, after) = counts(&players, began, ended);
    eprintln!("{out}answered: {before} before the backup, {during} during, {after} after");
    assert!(before > 20 && during > 0, "the server kept answering while the backup stepped: {out}");
    let steps: u64 = out.split(" steps").next().unwrap().rsplit(' ').next().unwrap().parse().unwrap();
    assert!(steps > 1, "the backup stepped: {out}");
    server.sigkill().unwrap();

    let restored = testkit::sqlite_url(dir.path(), "restored.db");
    let said = restore(&file, &restored, false).unwrap();
    assert!(said.contains("ledger sound") && said.contains("audit chain verified"), "{said}");
    assert!(said.contains("withdraws the 2 online blocks on sale"), "{said}");
    check_restored(&rt, dir.path(), &restored, &players, began);
}

#[test]
fn postgres_backup_under_load_restores_every_answered_action() {
    let dir = new_dir();
    let rt = runtime();
    let Some(live) = rt.block_on(TestDb::create()) else { return };
    let Some(restored) = rt.block_on(TestDb::create()) else { return };
    let mut server = start(dir.path(), &live.url);
    let file = dir.path().join("live.dump");
    let (players, began, ended, out) = load_with_backup(&rt, &server.url, &live.url, &file);
    let (before, during, after) = counts(&players, began, ended);
    eprintln!("{out}answered: {before} before the backup, {during} during, {after} after");
    assert!(before > 20 && during > 0, "the server kept answering during pg_dump: {out}");
    server.sigkill().unwrap();

    // Never over a database that has tables (here the live one).
    let refused = restore(&file, &live.url, false).unwrap_err();
    assert!(refused.contains("a restore goes into a new, empty database"), "{refused}");
    let said = restore(&file, &restored.url, false).unwrap();
    assert!(said.contains("ledger sound") && said.contains("audit chain verified"), "{said}");
    assert!(said.contains("withdraws the 2 online blocks on sale"), "{said}");
    check_restored(&rt, dir.path(), &restored.url, &players, began);
    rt.block_on(async {
        live.drop_db().await;
        restored.drop_db().await;
    });
}

/// A restore never replaces a database unless forced, never one a server
/// serves even forced, refuses a damaged backup, and the restored database
/// with another server key is refused at start, saying why.
#[test]
fn sqlite_restore_refuses_to_replace_a_database_a_damaged_backup_or_another_key() {
    let dir = new_dir();
    let live = testkit::sqlite_url(dir.path(), "live.db");
    let mut server = start(dir.path(), &live);
    let file = dir.path().join("live.backup");
    let output =
        std::process::Command::new(common::exe()).args(["backup", "--db", &live, "--out"]).arg(&file).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    // A second backup to the same file is refused.
    let again =
        std::process::Command::new(common::exe()).args(["backup", "--db", &live, "--out"]).arg(&file).output().unwrap();
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("--force"));

    let err = restore(&file, &live, false).unwrap_err();
    assert!(err.contains("exists") && err.contains("--force"), "{err}");
    let err = restore(&file, &live, true).unwrap_err();
    assert!(err.contains("another as-capone process is serving"), "{err}");
    server.sigkill().unwrap();

    // A damaged backup: its second half lost.
    let damaged = dir.path().join("damaged.backup");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&damaged, &bytes[..bytes.len() / 2]).unwrap();
    let target = dir.path().join("from-damaged.db");
    let err = restore(&damaged, &format!("sqlite://{}", target.display()), false).unwrap_err();
    assert!(err.contains("fails its check"), "{err}");
    assert!(!target.exists(), "nothing restored from a damaged backup");

    // A backup whose schema was changed outside as-capone (docs/backups.md,
    // "A backup is not believed"): a trigger that would copy every new
    // session's token hash into a table of the forger's, run by the live
    // server once restored. Refused, the object named, nothing restored.
    let tampered = dir.path().join("tampered.backup");
    std::fs::copy(&file, &tampered).unwrap();
    let sql = "CREATE TABLE loot (h TEXT); \
               CREATE TRIGGER copy_tokens AFTER INSERT ON sessions BEGIN INSERT INTO loot VALUES (new.token_hash); END;";
    let out =
        std::process::Command::new("sqlite3").arg(&tampered).arg(sql).output().expect("sqlite3 (.ci/run installs it)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let target = dir.path().join("from-tampered.db");
    let err = restore(&tampered, &format!("sqlite://{}", target.display()), false).unwrap_err();
    assert!(err.contains("holds table loot") && err.contains("not believed"), "{err}");
    assert!(!target.exists(), "nothing restored from a tampered backup");

    // Rows changed outside as-capone: an unsold ticket's prize
    // raised, another's commitment changed. Each is named, nothing restored.
    for (n, (sql, said)) in TAMPERED_ROWS.iter().enumerate() {
        let tampered = dir.path().join(format!("rows-{n}.backup"));
        std::fs::copy(&file, &tampered).unwrap();
        let out = std::process::Command::new("sqlite3").arg(&tampered).arg(sql).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let target = dir.path().join(format!("from-rows-{n}.db"));
        let err = restore(&tampered, &format!("sqlite://{}", target.display()), false).unwrap_err();
        assert!(err.contains(said) && err.contains("nothing restored"), "{err}");
        assert!(!target.exists(), "nothing restored from a backup whose rows were changed");
    }

    // Restored over the stopped server's file with --force, it serves again.
    restore(&file, &live, true).unwrap();
    drop(start(dir.path(), &live));

    // Another key file: refused at start, with the reason.
    let other = new_dir();
    let restored = testkit::sqlite_url(other.path(), "restored.db");
    restore(&file, &restored, false).unwrap();
    let args = server_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err =
        match common::spawn_server(other.path(), &restored, &args).try_wait_listening(None, Duration::from_secs(60)) {
            Ok(_) => panic!("a server with another key started on the restored database"),
            Err(e) => e,
        };
    assert!(err.contains("server key"), "refused, saying why: {err}");
}

/// Rows changed in a backup outside as-capone, and how the refusal names
/// each: the last unsold ticket's top prize raised to 250 000 EUR (its
/// schedule row's prizes are the table's), and its commitment changed (its
/// leaf no longer climbs to the chunk root published with its block).
const TAMPERED_ROWS: [(&str, &str); 2] = [
    (
        "UPDATE tickets SET prize_8 = 25000000 WHERE id = (SELECT MAX(id) FROM tickets WHERE status = 'unsold')",
        "are not those of its schedule row",
    ),
    (
        "UPDATE tickets SET commitment = '00' || substr(commitment, 3) \
         WHERE id = (SELECT MAX(id) FROM tickets WHERE status = 'unsold')",
        "do not make the chunk root published with the block",
    ),
];

/// A balanced fake movement: 4 000 EUR from the prizes' house account to
/// the newest player, their stored balance raised to match. The ledger
/// stays sound (two entries summing to zero, the balance their sum); no
/// audit entry sealed with the server key names it.
const FAKE_MOVEMENT: &str = "INSERT INTO movements (id, reason, ticket_id, created_ms)
       VALUES ('prize:forged', 'prize', NULL, 1800000000000);
     INSERT INTO ledger_entries (movement_id, account_id, amount_cents)
       VALUES ('prize:forged', 3, -400000),
              ('prize:forged', (SELECT MAX(id) FROM accounts WHERE kind = 'player'), 400000);
     UPDATE accounts SET balance_cents = balance_cents + 400000
      WHERE id = (SELECT MAX(id) FROM accounts WHERE kind = 'player');";

/// Creates a player on the server at `url`; its token.
async fn new_player(c: &reqwest::Client, url: &str) -> String {
    let (status, b) = post(c, &format!("{url}/api/players"), None, &json!({})).await;
    assert_eq!(status, 201);
    serde_json::from_slice::<Value>(&b).unwrap()["token"].as_str().unwrap().to_string()
}

/// The same on PostgreSQL, and objects added to its schema: each change
/// made in a live database, its dump restored; refused, named, and the
/// database it went into left empty.
#[test]
fn postgres_restore_refuses_rows_and_objects_changed_outside_as_capone() {
    let dir = new_dir();
    let rt = runtime();
    // Also objects the migrations do not make: a trigger and its function
    // copying every new session's token hash, a function alone, and the
    // audit log's append-only function made to allow anything.
    let objects = [
        (
            "CREATE TABLE loot (h TEXT); CREATE FUNCTION loot() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN INSERT INTO loot VALUES (NEW.token_hash); RETURN NEW; END $$; \
             CREATE TRIGGER copy_tokens AFTER INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION loot();",
            "the schema holds column loot.h",
        ),
        ("CREATE FUNCTION helper() RETURNS int LANGUAGE sql AS 'SELECT 1'", "the schema holds function helper()"),
        (
            "CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RETURN NEW; END $$",
            "function audit_log_append_only() is not what the migrations up to version",
        ),
    ];
    for (n, (sql, said)) in TAMPERED_ROWS.iter().chain(&objects).enumerate() {
        let Some(live) = rt.block_on(TestDb::create()) else { return };
        let Some(target) = rt.block_on(TestDb::create()) else { return };
        start(dir.path(), &live.url).sigkill().unwrap();
        rt.block_on(exec(&live.url, sql));
        let file = dir.path().join(format!("rows-{n}.dump"));
        let mut backup = std::process::Command::new(common::exe());
        let out = backup.args(["backup", "--db", &live.url, "--out"]).arg(&file).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let err = restore(&file, &target.url, false).unwrap_err();
        assert!(err.contains(said) && err.contains("nothing restored"), "{err}");
        let tables = "SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE schemaname = 'public'";
        assert_eq!(rt.block_on(scalar(&target.url, tables)), 0, "nothing restored");
        rt.block_on(async {
            live.drop_db().await;
            target.drop_db().await;
        });
    }
    // A balanced fake movement keeps the ledger sound, so the restore (which
    // has no server key) takes it; the server's start, which checks the
    // audit log's keyed seals, refuses the database and names the movement.
    let Some(live) = rt.block_on(TestDb::create()) else { return };
    let Some(target) = rt.block_on(TestDb::create()) else { return };
    let mut server = start(dir.path(), &live.url);
    rt.block_on(new_player(&reqwest::Client::new(), &server.url));
    server.sigkill().unwrap();
    rt.block_on(exec(&live.url, FAKE_MOVEMENT));
    let file = dir.path().join("fake-movement.dump");
    let mut backup = std::process::Command::new(common::exe());
    let out = backup.args(["backup", "--db", &live.url, "--out"]).arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = restore(&file, &target.url, false).unwrap();
    assert!(said.contains("ledger sound"), "{said}");
    let refused = refused_start(dir.path(), &target.url);
    assert!(
        refused.contains("movement prize:forged is named by no audit entry sealed with the server key"),
        "{refused}"
    );
    rt.block_on(async {
        live.drop_db().await;
        target.drop_db().await;
    });
}

/// The error of a server that refuses to start on `db`.
fn refused_start(dir: &Path, db: &str) -> String {
    let args = server_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match common::spawn_server(dir, db, &args).try_wait_listening(None, Duration::from_secs(60)) {
        Ok(_) => panic!("a server started on a database changed outside as-capone"),
        Err(e) => e,
    }
}

/// A database brought back by other means (a point-in-time recovery, a
/// standby promoted behind, a file-system snapshot) is marked with `restore
/// --recovered-by`, never while a server serves it; the next start
/// withdraws the blocks that were on sale and sells from a new emission.
#[test]
fn a_database_recovered_by_other_means_is_marked_and_its_blocks_on_sale_withdrawn() {
    let dir = new_dir();
    let rt = runtime();
    let live = testkit::sqlite_url(dir.path(), "live.db");
    let mut server = start(dir.path(), &live);
    let recovered = |extra: &[&str]| {
        let mut c = std::process::Command::new(common::exe());
        c.args(["restore", "--recovered-by", "a file-system snapshot", "--db", &live]).args(extra);
        let out = c.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let (ok, said) = recovered(&[]);
    assert!(!ok && said.contains("another as-capone process is serving"), "{said}");
    rt.block_on(new_player(&reqwest::Client::new(), &server.url));
    server.sigkill().unwrap();
    let (ok, said) = recovered(&["--force"]);
    assert!(!ok && said.contains("not with --recovered-by"), "{said}");
    let (ok, said) = recovered(&[]);
    assert!(ok && said.contains("marked restored (restore 1)"), "{said}");
    assert!(said.contains("withdraws the 2 online blocks on sale"), "{said}");
    let neither = std::process::Command::new(common::exe()).args(["restore", "--db", &live]).output().unwrap();
    assert!(!neither.status.success(), "a restore says where from");

    // Changed after it was marked: the start refuses it, naming the ticket,
    // then the balanced fake movement.
    rt.block_on(exec(&live, "UPDATE tickets SET prize_5 = prize_5 + 100 WHERE id = 7"));
    let refused = refused_start(dir.path(), &live);
    assert!(refused.contains("is not what as-capone wrote") && refused.contains("-000007-"), "{refused}");
    rt.block_on(exec(&live, "UPDATE tickets SET prize_5 = prize_5 - 100 WHERE id = 7"));
    rt.block_on(exec(&live, FAKE_MOVEMENT));
    let refused = refused_start(dir.path(), &live);
    assert!(
        refused.contains("movement prize:forged is named by no audit entry sealed with the server key"),
        "{refused}"
    );
    let undo = "UPDATE accounts SET balance_cents = balance_cents - 400000 WHERE id = (SELECT MAX(id) FROM accounts \
                WHERE kind = 'player'); DELETE FROM ledger_entries WHERE movement_id = 'prize:forged'; \
                DELETE FROM movements WHERE id = 'prize:forged';";
    rt.block_on(exec(&live, undo));
    // The chain's last entry removed (the append-only trigger dropped and
    // made again): the head sealed with the server key shows it.
    let cut = dir.path().join("cut.db");
    let copy = std::process::Command::new("sqlite3")
        .arg(dir.path().join("live.db"))
        .arg(format!("VACUUM INTO '{}'", cut.display()))
        .output()
        .unwrap();
    assert!(copy.status.success(), "{}", String::from_utf8_lossy(&copy.stderr));
    let cut = format!("sqlite://{}", cut.display());
    rt.block_on(exec(
        &cut,
        "DROP TRIGGER audit_log_no_delete; DELETE FROM audit_log WHERE id = (SELECT MAX(id) FROM audit_log); \
         CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log \
         BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;",
    ));
    let refused = refused_start(dir.path(), &cut);
    assert!(refused.contains("entries were removed or the chain hashed again"), "{refused}");

    let mut server = start(dir.path(), &live);
    let url = server.url.clone();
    rt.block_on(async {
        let c = reqwest::Client::new();
        let token = new_player(&c, &url).await;
        let (status, bytes) = post(&c, &format!("{url}/api/tickets"), Some(&token), &json!({})).await;
        assert_eq!(status, 201, "{}", String::from_utf8_lossy(&bytes));
        let serial = serde_json::from_slice::<Value>(&bytes).unwrap()["ticket"]["serial"].as_str().unwrap().to_string();
        assert_eq!(serial.split('-').nth(1), Some("002"), "{serial}");
    });
    server.sigkill().unwrap();
    rt.block_on(async {
        assert_eq!(scalar(&live, "SELECT COUNT(*) FROM blocks WHERE withdrawn_ms IS NOT NULL").await, 2);
        let sql = "SELECT COUNT(*) FROM audit_log WHERE kind = 'blocks_withdrawn' AND data_json LIKE '%file-system snapshot%'";
        assert_eq!(scalar(&live, sql).await, 1);
    });
}

/// Without `pg_dump` on PATH, a PostgreSQL backup says what to install and
/// where the procedure is, and writes nothing.
#[test]
fn postgres_backup_without_the_client_tools_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("db.dump");
    let output = std::process::Command::new(common::exe())
        .args(["backup", "--db", "postgres://postgres@127.0.0.1:5432/postgres", "--out"])
        .arg(&out)
        .env("PATH", "")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{err}");
    assert!(err.contains("cannot run pg_dump") && err.contains("docs/backups.md"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no file left");
}

/// A SQLite file put back by hand to an earlier copy (as a file-system
/// restore or a careless `cp` would), with no `as-capone restore`: the
/// server recorded how far it saw the audit chain (`live.db.seen`), so
/// its next start finds the database behind, marks it restored and
/// withdraws the blocks on sale; the start after that finds nothing more.
#[test]
fn a_database_put_back_without_a_word_is_found_at_the_next_start() {
    let dir = new_dir();
    let rt = runtime();
    let live = testkit::sqlite_url(dir.path(), "live.db");
    let file = dir.path().join("early.backup");
    let mut server = start(dir.path(), &live);
    let url = server.url.clone();
    let (token, sold) = rt.block_on(async {
        let c = reqwest::Client::new();
        let token = new_player(&c, &url).await;
        let mut sold = Vec::new();
        for n in 0..5 {
            if n == 2 {
                let mut backup = std::process::Command::new(common::exe());
                let out = backup.args(["backup", "--db", &live, "--out"]).arg(&file).output().unwrap();
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            }
            let (status, bytes) = post(&c, &format!("{url}/api/tickets"), Some(&token), &json!({})).await;
            assert_eq!(status, 201, "{}", String::from_utf8_lossy(&bytes));
            let t = serde_json::from_slice::<Value>(&bytes).unwrap()["ticket"].clone();
            sold.push(t["serial"].as_str().unwrap().to_string());
            finish(&c, &url, &token, t).await;
        }
        // The server records what it saw every second.
        tokio::time::sleep(Duration::from_millis(2500)).await;
        (token, sold)
    });
    server.sigkill().unwrap();
    let seen = std::fs::read_to_string(dir.path().join("live.db.seen")).expect("the server's record");
    assert!(seen.contains("chain_pos"), "{seen}");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(dir.path().join(format!("live.db{suffix}")));
    }
    std::fs::copy(&file, dir.path().join("live.db")).unwrap();

    for start_number in 0..2 {
        let mut server = start(dir.path(), &live);
        let url = server.url.clone();
        rt.block_on(async {
            let c = reqwest::Client::new();
            let (status, bytes) = post(&c, &format!("{url}/api/tickets"), Some(&token), &json!({})).await;
            assert_eq!(status, 201, "{}", String::from_utf8_lossy(&bytes));
            let serial =
                serde_json::from_slice::<Value>(&bytes).unwrap()["ticket"]["serial"].as_str().unwrap().to_string();
            assert!(!sold.contains(&serial), "{serial} was sold before the file was put back");
            assert_eq!(serial.split('-').nth(1), Some("002"), "{serial}");
            tokio::time::sleep(Duration::from_millis(1500)).await;
        });
        server.sigkill().unwrap();
        let found = "SELECT COUNT(*) FROM restores WHERE source LIKE 'found behind at a start%'";
        assert_eq!(rt.block_on(scalar(&live, found)), 1, "start {start_number}: marked once");
        assert_eq!(rt.block_on(scalar(&live, "SELECT COUNT(*) FROM emissions")), 2, "start {start_number}");
    }
}
