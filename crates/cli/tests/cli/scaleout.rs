//! The scale-out test (ARCHITECTURE.md guarantee 8: any number of server
//! processes may share one PostgreSQL database). Two real `as-capone serve`
//! processes, A and B, start at the same moment on one fresh database; many
//! concurrent players play whole games through both, every purchase (same
//! `Idempotency-Key`) and every action (same `seq`, same body) sent to BOTH
//! processes at the same moment, so that the two race on every write. In
//! the middle, A is killed with SIGKILL, the players go on through B alone,
//! and A is restarted on the same database. Then it is proven from the API
//! and from the database itself that:
//!
//! - every answer was the same whichever process gave it, and is replayed
//!   byte for byte by both (guarantee 4: no re-roll is possible);
//! - every ticket was sold at most once, to one player, with one sale;
//! - every action was applied once: as many actions and gapless draws as
//!   the ticket's `seq`, and every finished ticket's public record verifies
//!   (guarantee 6);
//! - every balance is the start balance minus the tickets plus the prizes,
//!   the ledger sums to zero and each balance equals its entries
//!   (guarantee 3);
//! - the audit log holds one entry per player, sale and finished game, and
//!   its hash chain verifies once sealed.
//!
//! The test runs on the local PostgreSQL (see `testkit::TestDb`);
//! without one it says so and passes, unless `AS_CAPONE_REQUIRE_POSTGRES`
//! is set.

use crate::common;

use record::{Record, verify};
use serde_json::{Value, json};
use sqlx::Connection;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use testkit::TestDb;

const TABLE: &str = common::BLOCKS_OF_2000;
const START: i64 = 1_000_000;
const PRICE: i64 = 300;
const PLAYERS: usize = 32;
const NAMES: [&str; 2] = ["A", "B"];

/// A server process on `db`, not yet listening; killed (SIGKILL) when
/// dropped, as the server it becomes: a failing test leaves no server behind.
fn spawn(dir: &std::path::Path, db: &str) -> common::Spawned {
    let start = START.to_string();
    common::spawn_server(dir, db, &["--start-balance-cents", &start, "--demo-token", "", "--initial-blocks", "2"])
}

/// Waits for two servers started together; when the first does not start,
/// the panic shows the second's log too (the one that held the start-up
/// lock meanwhile: a CI run once saw A wait 60 s for it, unexplained).
fn both_listening(a: common::Spawned, b: common::Spawned) -> (common::Server, common::Server) {
    match a.try_wait_listening(Some("A"), Duration::from_secs(60)) {
        Ok(a) => (a, b.wait_listening("B")),
        Err(log_a) => {
            let log_b = match b.try_wait_listening(Some("B"), Duration::from_secs(5)) {
                Ok(_) => "B started".to_string(),
                Err(log) => log,
            };
            panic!("A did not start: {log_a}\n--- B, started with it: {log_b}")
        }
    }
}

/// Where the players find the two processes: per process, its generation
/// (even while it runs, odd while it is down: bumped just before a kill and
/// after a restart) and its base URL.
struct Procs {
    slots: [Mutex<(u64, String)>; 2],
}

impl Procs {
    fn get(&self, i: usize) -> (u64, String) {
        self.slots[i].lock().unwrap().clone()
    }
    fn generation(&self, i: usize) -> u64 {
        self.slots[i].lock().unwrap().0
    }
    fn going_down(&self, i: usize) {
        let mut s = self.slots[i].lock().unwrap();
        assert_eq!(s.0 % 2, 0);
        s.0 += 1;
    }
    fn up(&self, i: usize, url: String) {
        let mut s = self.slots[i].lock().unwrap();
        assert_eq!(s.0 % 2, 1);
        *s = (s.0 + 1, url);
    }
}

/// What one process answered to one request.
#[derive(Clone, Debug)]
enum Reply {
    /// Status and body, and the generation of the process that gave them.
    Answer(u16, Vec<u8>, u64),
    /// No answer at the connection level, from a process that was down or
    /// was killed while the request was in flight.
    Down(String),
}

/// POST to process `i`. A connection-level failure is only accepted from a
/// process that was down when the request was sent or went down meanwhile.
async fn send(
    c: &reqwest::Client,
    procs: &Procs,
    i: usize,
    path: &str,
    token: &str,
    body: &Value,
    key: Option<&str>,
) -> Reply {
    let (generation, url) = procs.get(i);
    let mut r = c.post(format!("{url}{path}")).bearer_auth(token).json(body);
    if let Some(k) = key {
        r = r.header("Idempotency-Key", k);
    }
    let res = async {
        let resp = r.send().await?;
        let status = resp.status().as_u16();
        Ok::<_, reqwest::Error>((status, resp.bytes().await?.to_vec()))
    }
    .await;
    match res {
        Ok((status, bytes)) => Reply::Answer(status, bytes, generation),
        Err(e) => {
            let now = procs.generation(i);
            assert!(
                generation % 2 == 1 || now != generation,
                "process {} was up (generation {generation}) and did not answer POST {path} {body} (key {key:?}): {e:?}",
                NAMES[i]
            );
            Reply::Down(e.to_string())
        }
    }
}

/// The same request to both processes at the same moment, `first` sent
/// first; the replies indexed by process.
async fn both(
    c: &reqwest::Client,
    procs: &Procs,
    first: usize,
    path: &str,
    token: &str,
    body: &Value,
    key: Option<&str>,
) -> [Reply; 2] {
    let second = 1 - first;
    let (r1, r2) =
        tokio::join!(send(c, procs, first, path, token, body, key), send(c, procs, second, path, token, body, key));
    if first == 0 { [r1, r2] } else { [r2, r1] }
}

/// The one answer both processes agree on: every answer that arrived has
/// the same status and the same bytes, and at least one arrived. Returns it
/// with, per process, the generation that answered.
fn agree(replies: &[Reply; 2], what: &str) -> (u16, Vec<u8>, [Option<u64>; 2]) {
    let mut by = [None, None];
    let mut answer: Option<(u16, &Vec<u8>)> = None;
    for (i, r) in replies.iter().enumerate() {
        if let Reply::Answer(status, bytes, generation) = r {
            by[i] = Some(*generation);
            if let Some((s0, b0)) = answer {
                assert!(
                    s0 == *status && b0 == bytes,
                    "{what}: the two processes answered differently\n  A: {}\n  B: {}",
                    show(&replies[0]),
                    show(&replies[1])
                );
            }
            answer = Some((*status, bytes));
        }
    }
    let (status, bytes) = answer.unwrap_or_else(|| panic!("{what}: no process answered: {replies:?}"));
    (status, bytes.clone(), by)
}

fn show(r: &Reply) -> String {
    match r {
        Reply::Answer(status, bytes, generation) => {
            format!("{status} (generation {generation}) {}", String::from_utf8_lossy(bytes))
        }
        Reply::Down(e) => format!("no answer: {e}"),
    }
}

/// An answered purchase.
#[derive(Clone)]
struct Purchase {
    key: String,
    ticket: String,
    bytes: Vec<u8>,
    by: [Option<u64>; 2],
}

/// An answered action.
#[derive(Clone)]
struct Action {
    ticket: String,
    seq: u64,
    body: Value,
    bytes: Vec<u8>,
    by: [Option<u64>; 2],
}

/// What one player did and was told.
#[derive(Default)]
struct PlayerLog {
    token: String,
    purchases: Vec<Purchase>,
    actions: Vec<Action>,
    /// Requests that one process did not answer (it was down).
    unanswered: u64,
    sold_out: bool,
}

/// One player: registers on one process, then buys and plays whole games,
/// every request sent to both processes at once, until told to stop (the
/// game under way is played to the end).
async fn player(index: usize, procs: Arc<Procs>, stop: Arc<AtomicBool>) -> PlayerLog {
    let c = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    let (_, url) = procs.get(index % 2);
    let resp =
        c.post(format!("{url}/api/players")).json(&json!({"name": format!("player {index}")})).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 201, "POST /api/players on {}", NAMES[index % 2]);
    let created: Value = resp.json().await.unwrap();
    let mut log = PlayerLog { token: created["token"].as_str().unwrap().to_string(), ..Default::default() };
    let token = log.token.clone();
    let mut n = index;
    let mut game = 0;
    while !stop.load(Ordering::Relaxed) {
        let key = format!("scaleout-{index}-{game}");
        let replies = both(&c, &procs, n % 2, "/api/tickets", &token, &json!({}), Some(&key)).await;
        n += 1;
        log.unanswered += replies.iter().filter(|r| matches!(r, Reply::Down(_))).count() as u64;
        let (status, bytes, by) = agree(&replies, &format!("player {index}: POST /api/tickets, Idempotency-Key {key}"));
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        if status == 503 && v["error"] == "sold_out" {
            log.sold_out = true;
            break;
        }
        assert_eq!(status, 201, "player {index}: POST /api/tickets, Idempotency-Key {key}: {v}");
        let mut t = v["ticket"].clone();
        let id = t["id"].as_str().unwrap().to_string();
        log.purchases.push(Purchase { key, ticket: id.clone(), bytes, by });
        let path = format!("/api/tickets/{id}/actions");
        while t["phase"] != "finished" {
            let body = common::next_action(&t);
            let replies = both(&c, &procs, n % 2, &path, &token, &body, None).await;
            n += 1;
            log.unanswered += replies.iter().filter(|r| matches!(r, Reply::Down(_))).count() as u64;
            let what = format!("player {index}: POST {path} {body}");
            let (status, bytes, by) = agree(&replies, &what);
            assert_eq!(status, 200, "{what}: {}", String::from_utf8_lossy(&bytes));
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            t = v["ticket"].clone();
            assert_eq!(t["seq"].as_u64().unwrap(), body["seq"].as_u64().unwrap() + 1, "{what}: one action applied");
            log.actions.push(Action { ticket: id.clone(), seq: body["seq"].as_u64().unwrap(), body, bytes, by });
        }
        game += 1;
    }
    log
}

async fn get(c: &reqwest::Client, url: &str, token: &str) -> Value {
    let resp = c.get(url).bearer_auth(token).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200, "GET {url}");
    resp.json().await.unwrap()
}

/// Every answer is replayed byte for byte, by both processes (guarantee
/// 4), whichever of them gave it first.
async fn every_answer_replayed_by_both(
    c: &reqwest::Client,
    urls: &[String; 2],
    purchases: &[(String, Purchase)],
    actions: &[(String, Action)],
) {
    let purchases = Arc::new(purchases.to_vec());
    let actions = Arc::new(actions.to_vec());
    let workers = 16;
    let tasks: Vec<_> = (0..workers)
        .map(|w| {
            let (c, urls, purchases, actions) = (c.clone(), urls.clone(), purchases.clone(), actions.clone());
            tokio::spawn(async move {
                for (token, p) in purchases.iter().skip(w).step_by(workers) {
                    for (i, url) in urls.iter().enumerate() {
                        let resp = c
                            .post(format!("{url}/api/tickets"))
                            .bearer_auth(token)
                            .header("Idempotency-Key", &p.key)
                            .json(&json!({}))
                            .send()
                            .await
                            .unwrap();
                        let status = resp.status().as_u16();
                        let again = resp.bytes().await.unwrap();
                        assert_eq!(
                            status,
                            201,
                            "purchase {} replayed by {}: {}",
                            p.key,
                            NAMES[i],
                            String::from_utf8_lossy(&again)
                        );
                        assert!(
                            again == p.bytes,
                            "purchase {} replayed by {}:\n  first: {}\n  again: {}",
                            p.key,
                            NAMES[i],
                            String::from_utf8_lossy(&p.bytes),
                            String::from_utf8_lossy(&again)
                        );
                    }
                }
                for (token, a) in actions.iter().skip(w).step_by(workers) {
                    for (i, url) in urls.iter().enumerate() {
                        let resp = c
                            .post(format!("{url}/api/tickets/{}/actions", a.ticket))
                            .bearer_auth(token)
                            .json(&a.body)
                            .send()
                            .await
                            .unwrap();
                        let status = resp.status().as_u16();
                        let again = resp.bytes().await.unwrap();
                        let what = format!("ticket {} seq {} replayed by {}", a.ticket, a.seq, NAMES[i]);
                        assert_eq!(status, 200, "{what}: {}", String::from_utf8_lossy(&again));
                        assert!(
                            again == a.bytes,
                            "{what}:\n  first: {}\n  again: {}",
                            String::from_utf8_lossy(&a.bytes),
                            String::from_utf8_lossy(&again)
                        );
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}

/// Per player, from both processes: the tickets are exactly the ones
/// bought, no serial belongs to two players, every action answered is in
/// them, every finished record verifies, and the balance adds up.
async fn every_players_tickets_records_and_balance(c: &reqwest::Client, urls: &[String; 2], logs: &[PlayerLog]) {
    let mut owner: HashMap<String, usize> = HashMap::new();
    for (p, log) in logs.iter().enumerate() {
        let url = &urls[p % 2];
        let list = get(c, &format!("{url}/api/tickets"), &log.token).await;
        let other = get(c, &format!("{}/api/tickets", urls[1 - p % 2]), &log.token).await;
        assert_eq!(list, other, "player {p}: both processes list the same tickets");
        let tickets = list["tickets"].as_array().unwrap();
        let ids: HashSet<String> = tickets.iter().map(|t| t["id"].as_str().unwrap().to_string()).collect();
        let bought: HashSet<String> = log.purchases.iter().map(|p| p.ticket.clone()).collect();
        assert_eq!(ids, bought, "player {p} holds exactly the tickets bought");
        assert_eq!(ids.len(), tickets.len());
        let mut prizes = 0;
        for t in tickets {
            let id = t["id"].as_str().unwrap();
            let serial = t["serial"].as_str().unwrap().to_string();
            if let Some(q) = owner.insert(serial.clone(), p) {
                panic!("serial {serial} is in the tickets of players {q} and {p}");
            }
            let answered: Vec<u64> = log.actions.iter().filter(|a| a.ticket == id).map(|a| a.seq).collect();
            let seq = t["seq"].as_u64().unwrap();
            assert_eq!(answered, (0..seq).collect::<Vec<_>>(), "ticket {id}: every applied action was answered once");
            if t["phase"] == "finished" {
                prizes += t["result"]["prize_cents"].as_i64().unwrap();
                let record: Record = c
                    .get(format!("{}/api/tickets/{id}/record", urls[seq as usize % 2]))
                    .bearer_auth(&log.token)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                assert_eq!(record.actions.len() as u64, seq, "ticket {id}: the record holds every action once");
                let v = verify(&record);
                assert!(v.is_valid(), "ticket {id}: {v}");
            }
        }
        for url in urls {
            let me = get(c, &format!("{url}/api/me"), &log.token).await;
            assert_eq!(
                me["balance_cents"].as_i64().unwrap(),
                START - PRICE * tickets.len() as i64 + prizes,
                "player {p}'s balance at {url}: start - tickets + prizes"
            );
        }
    }
}

/// The database's own view: every ticket sold at most once, every action
/// applied once with its draw, the ledger sound (guarantee 3); the audit
/// entries by kind.
async fn the_database_agrees(
    db_url: &str,
    sold_count: i64,
    finished_count: i64,
    answered_actions: i64,
) -> Vec<(String, i64)> {
    let mut conn = sqlx::PgConnection::connect(db_url).await.unwrap();
    let count = |sql: &'static str| sqlx::query_scalar::<_, i64>(sql);

    // Every ticket sold at most once.
    let db_sold = count("SELECT COUNT(*) FROM tickets WHERE status = 'sold'").fetch_one(&mut conn).await.unwrap();
    assert_eq!(db_sold, sold_count, "tickets sold in the database = tickets the players got");
    let double_sales: Vec<i64> = sqlx::query_scalar(
        "SELECT ticket_id FROM movements WHERE reason = 'ticket_sale' GROUP BY ticket_id HAVING COUNT(*) > 1",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert!(double_sales.is_empty(), "tickets with two sales: {double_sales:?}");
    let sales =
        count("SELECT COUNT(*) FROM movements WHERE reason = 'ticket_sale'").fetch_one(&mut conn).await.unwrap();
    assert_eq!(sales, sold_count, "one sale movement per ticket sold");
    let keys = count("SELECT COUNT(*) FROM idempotency_keys").fetch_one(&mut conn).await.unwrap();
    assert_eq!(keys, sold_count, "one idempotency record per purchase");
    let players = count("SELECT COUNT(*) FROM players").fetch_one(&mut conn).await.unwrap();
    assert_eq!(players, PLAYERS as i64, "one row per player registered");

    // Every action applied once: per ticket, as many actions as its seq,
    // numbered 0..seq, each with its draw (number seq), and as many
    // draws as the stored game says it took.
    let rows: Vec<(String, i64, i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT t.serial, g.seq,
                    (SELECT COUNT(*) FROM actions a WHERE a.ticket_id = t.id),
                    (SELECT COALESCE(MAX(a.seq) + 1, 0) FROM actions a WHERE a.ticket_id = t.id),
                    (SELECT COUNT(*) FROM actions a WHERE a.ticket_id = t.id AND a.draw_kind IS NOT NULL
                        AND a.draw_capone IS NOT NULL),
                    CAST(g.state_json::json->>'draws' AS BIGINT)
               FROM tickets t JOIN ticket_games g ON g.ticket_id = t.id
              WHERE t.status = 'sold'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows.len() as i64, sold_count, "one game per ticket sold");
    let mut db_actions = 0;
    for (serial, seq, n_actions, next_seq, n_draws, next_n) in &rows {
        assert_eq!(n_actions, seq, "ticket {serial}: one action row per applied action");
        assert_eq!(next_seq, seq, "ticket {serial}: actions numbered 0..seq");
        assert_eq!(n_draws, seq, "ticket {serial}: one draw stored with each action");
        assert_eq!(next_n, seq, "ticket {serial}: the game took one draw per action");
        assert!(*n_draws >= 8, "ticket {serial}: {n_draws} draws (eight tricks at least)");
        db_actions += n_actions;
    }
    assert_eq!(db_actions, answered_actions, "every action in the database was answered, once");
    let finished =
        count("SELECT COUNT(*) FROM ticket_games WHERE phase = 'finished'").fetch_one(&mut conn).await.unwrap();
    assert_eq!(finished, finished_count, "finished games in the database = games the players finished");

    // The ledger: every player's balance is its entries, the whole sums
    // to zero (guarantee 3).
    let sum: i64 = sqlx::query_scalar("SELECT COALESCE(SUM(amount_cents), 0)::BIGINT FROM ledger_entries")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(sum, 0, "the ledger sums to zero");
    let mismatched: Vec<(i64, i64, i64)> = sqlx::query_as(
            "SELECT a.id, a.balance_cents, COALESCE((SELECT SUM(l.amount_cents) FROM ledger_entries l WHERE l.account_id = a.id), 0)::BIGINT
               FROM accounts a WHERE a.kind = 'player'",
        )
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(mismatched.len(), PLAYERS);
    for (id, balance, entries) in &mismatched {
        assert_eq!(balance, entries, "account {id}: balance = sum of its entries");
    }
    let by_kind: Vec<(String, i64)> =
        sqlx::query_as("SELECT kind, COUNT(*) FROM audit_log GROUP BY kind ORDER BY kind")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    eprintln!("audit entries by kind: {by_kind:?}");
    conn.close().await.unwrap();
    by_kind
}

#[test]
fn two_processes_on_one_postgres_database_sell_and_apply_everything_once() {
    let t0 = Instant::now();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let Some(db) = rt.block_on(TestDb::create()) else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), TABLE).unwrap();

    // Both processes start at the same moment on the empty database: one
    // migrates and emits, the other must wait for it, not do it again.
    let (a, b) = (spawn(dir.path(), &db.url), spawn(dir.path(), &db.url));
    let (mut a, mut b) = both_listening(a, b);
    let (url_a, url_b) = (a.url.clone(), b.url.clone());
    eprintln!("A on {url_a}, B on {url_b}, started in {:.2} s", t0.elapsed().as_secs_f64());

    let procs = Arc::new(Procs { slots: [Mutex::new((0, url_a)), Mutex::new((0, url_b))] });
    let stop = Arc::new(AtomicBool::new(false));
    let logs: Vec<PlayerLog> = rt.block_on(async {
        let tasks: Vec<_> = (0..PLAYERS).map(|i| tokio::spawn(player(i, procs.clone(), stop.clone()))).collect();
        tokio::time::sleep(Duration::from_millis(2000)).await;
        procs.going_down(0);
        a.kill(); // SIGKILL: no shutdown, no flush, requests in flight cut
        eprintln!("A killed at {:.2} s", t0.elapsed().as_secs_f64());
        tokio::time::sleep(Duration::from_millis(1000)).await;
        a = spawn(dir.path(), &db.url).wait_listening("A again");
        let url = a.url.clone();
        eprintln!("A restarted on {url} at {:.2} s", t0.elapsed().as_secs_f64());
        procs.up(0, url);
        tokio::time::sleep(Duration::from_millis(2000)).await;
        stop.store(true, Ordering::Relaxed);
        let mut logs = Vec::new();
        for t in tasks {
            logs.push(t.await.unwrap());
        }
        logs
    });
    eprintln!("players stopped at {:.2} s", t0.elapsed().as_secs_f64());
    let (_, url_a) = procs.get(0);
    let (_, url_b) = procs.get(1);
    let urls = [url_a.clone(), url_b.clone()];

    let purchases: Vec<(String, Purchase)> =
        logs.iter().flat_map(|l| l.purchases.iter().map(|p| (l.token.clone(), p.clone()))).collect();
    let actions: Vec<(String, Action)> =
        logs.iter().flat_map(|l| l.actions.iter().map(|a| (l.token.clone(), a.clone()))).collect();
    let by_both = |by: &[Option<u64>; 2]| by.iter().all(Option::is_some);
    let actions_by_both = actions.iter().filter(|(_, a)| by_both(&a.by)).count();
    let purchases_by_both = purchases.iter().filter(|(_, p)| by_both(&p.by)).count();
    let by_restarted_a = actions.iter().filter(|(_, a)| a.by[0] == Some(2)).count();
    let unanswered: u64 = logs.iter().map(|l| l.unanswered).sum();
    eprintln!(
        "{} purchases ({purchases_by_both} answered by both), {} actions ({actions_by_both} answered by both, \
         {by_restarted_a} by A after its restart), {unanswered} requests unanswered by a dead A{}",
        purchases.len(),
        actions.len(),
        if logs.iter().any(|l| l.sold_out) { ", sold out" } else { "" }
    );
    // Enough happened for the proofs below to mean something.
    assert!(actions.len() > 200, "enough actions were answered: {}", actions.len());
    assert!(actions_by_both > 100, "enough actions were answered by both processes: {actions_by_both}");
    assert!(purchases_by_both > 10, "enough purchases were answered by both processes: {purchases_by_both}");
    assert!(by_restarted_a > 20, "the restarted A answered actions: {by_restarted_a}");
    assert!(unanswered > 0, "some requests reached A while it was down");

    // Every ticket went to one purchase: no two keys got the same ticket.
    let mut sold: HashMap<String, String> = HashMap::new(); // ticket -> key
    for (_, p) in &purchases {
        if let Some(other) = sold.insert(p.ticket.clone(), p.key.clone()) {
            panic!("ticket {} was sold twice: to the purchases {other} and {}", p.ticket, p.key);
        }
    }

    rt.block_on(async {
        let c = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();

        every_answer_replayed_by_both(&c, &urls, &purchases, &actions).await;
        eprintln!("every answer replayed by both at {:.2} s", t0.elapsed().as_secs_f64());

        every_players_tickets_records_and_balance(&c, &urls, &logs).await;
        eprintln!("every player's tickets, records and balance checked at {:.2} s", t0.elapsed().as_secs_f64());

        // Both processes report the same games in play, whichever sold them.
        let unfinished: usize = logs
            .iter()
            .map(|l| {
                let finished: HashSet<&str> = l
                    .actions
                    .iter()
                    .filter(|a| serde_json::from_slice::<Value>(&a.bytes).unwrap()["ticket"]["phase"] == "finished")
                    .map(|a| a.ticket.as_str())
                    .collect();
                l.purchases.iter().filter(|p| !finished.contains(p.ticket.as_str())).count()
            })
            .sum();
        for url in &urls {
            let text = c.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap();
            assert!(
                text.lines().any(|l| l == format!("as_capone_active_games {unfinished}")),
                "{url}/metrics counts {unfinished} games in play: {}",
                text.lines().find(|l| l.starts_with("as_capone_active_games ")).unwrap_or("none")
            );
        }
    });
    // The API's view is checked; now the database's own.
    a.kill();
    b.kill();

    let sold_count = sold.len() as i64;
    let finished_count = logs
        .iter()
        .flat_map(|l| &l.actions)
        .filter(|a| {
            let v: Value = serde_json::from_slice(&a.bytes).unwrap();
            v["ticket"]["phase"] == "finished"
        })
        .count() as i64;
    rt.block_on(async {
        let by_kind = the_database_agrees(&db.url, sold_count, finished_count, actions.len() as i64).await;

        // The server's own checks, in-process on the same database.
        let app = common::in_process_app(db.url.clone(), dir.path()).await;
        let ledger = app.store().check_ledger().await.unwrap();
        assert!(ledger.is_sound(), "{ledger:?}");
        app.store().seal_audit().await.unwrap();
        let audit = app.store().check_audit_chain().await.unwrap();
        assert_eq!((audit.first_broken, &audit.forged), (None, &None), "{audit:?}");
        assert_eq!(audit.unsealed, 0, "{audit:?}");
        assert_eq!(
            audit.entries,
            (1 + PLAYERS as i64 + sold_count + finished_count) as u64,
            "one audit entry for the first start's blocks, then one per player, sale and finished game ({by_kind:?})"
        );
        app.shutdown().await.unwrap();
    });
    rt.block_on(db.drop_db());
    eprintln!("done in {:.2} s", t0.elapsed().as_secs_f64());
}
