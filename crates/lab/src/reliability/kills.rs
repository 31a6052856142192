//! SIGKILL at random moments under load, restart on the same database, and
//! check that nothing answered was lost, changed or re-rolled.
//!
//! Several client players register, buy tickets (each purchase with an
//! `Idempotency-Key`) and play them to the end. Every answered action and
//! purchase goes into a client-side journal: ticket id, seq, the exact
//! request body and the exact answer bytes. A request that got no answer
//! (the server died under it) is sent again, identical, after the restart:
//! docs/contract.md's retry rule (the same `seq` and body, or the same
//! Idempotency-Key, returns the identical answer and draws nothing new).
//!
//! After each kill, before the restart: the ledger (every movement sums to
//! zero, every balance is the sum of its entries, none negative) and the
//! audit hash chain are checked in-process on the database. After each
//! restart: every journal entry of the last run, and a random sample of the
//! older ones, is replayed and must come back byte-identical; the public
//! record of every ticket touched must begin with exactly the draws its
//! answers showed (no re-roll), and a finished ticket's record must verify
//! (seed against commitment, every draw, the result). Every tenth restart,
//! and at the end, every player's balance is recomputed from its tickets
//! and the operator's report must count exactly the tickets the players
//! hold. At the end, the whole journal is replayed.

use super::args::{Backend, ReliabilityArgs};
use super::rng::Rng;
use super::testbed::{Database, START_CENTS, start_server};
use math::REGULATION_PRICE_CENTS;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use testkit::next_action;

/// One answered request, as the client saw it.
#[derive(Clone)]
struct Entry {
    player: usize,
    /// Ticket id (for a purchase: the ticket bought).
    ticket: String,
    /// `None` for a purchase.
    seq: Option<u64>,
    /// Action: the JSON body sent; purchase: the Idempotency-Key.
    request: Vec<u8>,
    answer: Vec<u8>,
    /// The run (between two kills) that saw it.
    #[allow(dead_code)]
    epoch: u32,
}

#[derive(Default)]
struct Journal {
    entries: Vec<Entry>,
    /// (ticket, seq) -> entry index; (ticket, None) for the purchase.
    index: HashMap<(String, Option<u64>), usize>,
}

#[derive(Default)]
struct Counters {
    answered_actions: AtomicU64,
    answered_purchases: AtomicU64,
    server_errors: AtomicU64,
    unexpected: AtomicU64,
    changed: AtomicU64,
    resent_after_restart: AtomicU64,
}

/// What a client player keeps across kills.
#[derive(Clone, Default)]
struct Player {
    token: Option<String>,
    /// The ticket being played (its last JSON).
    ticket: Option<Value>,
    /// A request sent and not answered: sent again, identical.
    pending: Option<Pending>,
    sold_out: bool,
}

#[derive(Clone)]
enum Pending {
    Buy { key: String },
    Act { id: String, seq: u64, body: Vec<u8> },
}

struct Shared {
    journal: Mutex<Journal>,
    counters: Counters,
    failures: Mutex<Vec<String>>,
    epoch: AtomicU64,
}

impl Shared {
    fn fail(&self, what: String) {
        let mut f = self.failures.lock().unwrap();
        if f.len() < 40 {
            eprintln!("  FAIL {what}");
            f.push(what);
        }
    }

    /// Journals an answer; an answer for a (ticket, seq) already journaled
    /// must be the same bytes.
    fn record(&self, e: Entry) {
        let key = (e.ticket.clone(), e.seq);
        let mut j = self.journal.lock().unwrap();
        if let Some(&i) = j.index.get(&key) {
            if j.entries[i].answer != e.answer {
                drop(j);
                self.counters.changed.fetch_add(1, Ordering::Relaxed);
                self.fail(format!("ticket {} seq {:?}: a second answer differs from the first", key.0, key.1));
            }
            return;
        }
        let i = j.entries.len();
        j.entries.push(e);
        j.index.insert(key, i);
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(20)).pool_max_idle_per_host(4).build().expect("http client")
}

/// One request with an optional bearer token, body and Idempotency-Key:
/// its status and bytes (the reliability runs' one way of sending).
pub(super) async fn send(
    c: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: Option<&str>,
    body: Option<Vec<u8>>,
    idem: Option<&str>,
) -> Result<(u16, Vec<u8>), reqwest::Error> {
    let mut r = c.request(method.clone(), url);
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    if let Some(k) = idem {
        r = r.header("Idempotency-Key", k);
    }
    // Every write says JSON, with a body or without (the server refuses
    // any other with 415: docs/limits.md "Cross-site requests").
    if method != reqwest::Method::GET && method != reqwest::Method::HEAD {
        r = r.header("Content-Type", "application/json");
    }
    if let Some(b) = body {
        r = r.body(b);
    }
    let resp = r.send().await?;
    let status = resp.status().as_u16();
    Ok((status, resp.bytes().await?.to_vec()))
}

/// One player playing until the server dies (a connection error), then
/// handing back its state.
async fn play(url: String, idx: usize, mut p: Player, shared: Arc<Shared>, seed: u64) -> Player {
    let c = client();
    let mut rng = Rng::new(seed);
    let epoch = shared.epoch.load(Ordering::Relaxed) as u32;
    let ctr = &shared.counters;
    loop {
        if p.sold_out {
            return p;
        }
        let Some(token) = p.token.clone() else {
            match send(&c, reqwest::Method::POST, format!("{url}/api/players"), None, Some(b"{}".to_vec()), None).await
            {
                Ok((201, b)) => {
                    let v: Value = serde_json::from_slice(&b).unwrap_or_default();
                    p.token = v["token"].as_str().map(str::to_string);
                    continue;
                }
                Ok((s, b)) => {
                    unexpected(&shared, s, &b, "POST /api/players");
                    return p;
                }
                Err(_) => return p,
            }
        };
        if p.ticket.is_none() && p.pending.is_none() {
            p.pending = Some(Pending::Buy { key: rng.hex(16) });
        }
        if let Some(Pending::Buy { key }) = p.pending.clone() {
            match send(&c, reqwest::Method::POST, format!("{url}/api/tickets"), Some(&token), None, Some(&key)).await {
                Ok((201, b)) => {
                    let v: Value = serde_json::from_slice(&b).unwrap_or_default();
                    let id = v["ticket"]["id"].as_str().unwrap_or_default().to_string();
                    ctr.answered_purchases.fetch_add(1, Ordering::Relaxed);
                    shared.record(Entry {
                        player: idx,
                        ticket: id,
                        seq: None,
                        request: key.into_bytes(),
                        answer: b,
                        epoch,
                    });
                    p.ticket = Some(v["ticket"].clone());
                    p.pending = None;
                }
                Ok((503, b)) if String::from_utf8_lossy(&b).contains("sold_out") => {
                    p.sold_out = true;
                    p.pending = None;
                    return p;
                }
                Ok((s, b)) => {
                    unexpected(&shared, s, &b, "POST /api/tickets");
                    return p;
                }
                Err(_) => return p,
            }
            continue;
        }
        let t = p.ticket.clone().unwrap_or_default();
        if t["phase"] == "finished" {
            p.ticket = None;
            continue;
        }
        let id = t["id"].as_str().unwrap_or_default().to_string();
        let (seq, body) = match &p.pending {
            Some(Pending::Act { id: pid, seq, body }) if *pid == id => {
                ctr.resent_after_restart.fetch_add(1, Ordering::Relaxed);
                (*seq, body.clone())
            }
            _ => {
                let a = next_action(&t);
                let body = serde_json::to_vec(&a).unwrap_or_default();
                let seq = a["seq"].as_u64().unwrap_or(0);
                p.pending = Some(Pending::Act { id: id.clone(), seq, body: body.clone() });
                (seq, body)
            }
        };
        let r = send(
            &c,
            reqwest::Method::POST,
            format!("{url}/api/tickets/{id}/actions"),
            Some(&token),
            Some(body.clone()),
            None,
        )
        .await;
        match r {
            Ok((200, b)) => {
                let v: Value = serde_json::from_slice(&b).unwrap_or_default();
                ctr.answered_actions.fetch_add(1, Ordering::Relaxed);
                shared.record(Entry { player: idx, ticket: id, seq: Some(seq), request: body, answer: b, epoch });
                p.ticket = Some(v["ticket"].clone());
                p.pending = None;
            }
            Ok((s, b)) => {
                unexpected(&shared, s, &b, &format!("POST /api/tickets/{id}/actions seq {seq}"));
                // Resynchronise on the ticket as stored.
                p.pending = None;
                if let Ok((200, b)) =
                    send(&c, reqwest::Method::GET, format!("{url}/api/tickets/{id}"), Some(&token), None, None).await
                {
                    let v: Value = serde_json::from_slice(&b).unwrap_or_default();
                    p.ticket = Some(v["ticket"].clone());
                }
                return p;
            }
            Err(_) => return p,
        }
    }
}

fn unexpected(shared: &Shared, status: u16, body: &[u8], what: &str) {
    if status >= 500 {
        shared.counters.server_errors.fetch_add(1, Ordering::Relaxed);
    } else {
        shared.counters.unexpected.fetch_add(1, Ordering::Relaxed);
    }
    shared.fail(format!("{what}: {status} {}", String::from_utf8_lossy(&body[..body.len().min(300)])));
}

#[derive(Default, Debug)]
struct CheckTally {
    replayed_actions: u64,
    replayed_purchases: u64,
    lost: u64,
    changed: u64,
    rerolls: u64,
    records_checked: u64,
    records_verified: u64,
    balance_checks: u64,
    server_errors: u64,
}

/// The draws an action's answer showed, as the record lists them.
fn draws_of_answer(answer: &[u8]) -> Vec<Value> {
    let v: Value = serde_json::from_slice(answer).unwrap_or_default();
    let mut out = Vec::new();
    for e in v["events"].as_array().into_iter().flatten() {
        match e["type"].as_str() {
            Some("trick") => out.push(json!({"kind": "capone", "capone": e["capone"]})),
            Some("deck") => out.push(json!({"kind": "deck", "player": e["player"], "capone": e["capone"]})),
            _ => {}
        }
    }
    out
}

impl CheckTally {
    fn add(&mut self, o: &CheckTally) {
        self.replayed_actions += o.replayed_actions;
        self.replayed_purchases += o.replayed_purchases;
        self.lost += o.lost;
        self.changed += o.changed;
        self.rerolls += o.rerolls;
        self.records_checked += o.records_checked;
        self.records_verified += o.records_verified;
        self.balance_checks += o.balance_checks;
        self.server_errors += o.server_errors;
    }
}

/// Concurrent checkers.
const WORKERS: usize = 8;

/// Sends a journaled request again: the answer must be the same bytes.
async fn replay_one(
    c: &reqwest::Client,
    url: &str,
    e: &Entry,
    token: &str,
    shared: &Shared,
    tally: &mut CheckTally,
) -> anyhow::Result<()> {
    let (r, what, ok_status) = match e.seq {
        Some(seq) => {
            tally.replayed_actions += 1;
            let r = send(
                c,
                reqwest::Method::POST,
                format!("{url}/api/tickets/{}/actions", e.ticket),
                Some(token),
                Some(e.request.clone()),
                None,
            )
            .await;
            (r, format!("ticket {} seq {seq}", e.ticket), 200)
        }
        None => {
            tally.replayed_purchases += 1;
            let key = String::from_utf8_lossy(&e.request).to_string();
            let r = send(c, reqwest::Method::POST, format!("{url}/api/tickets"), Some(token), None, Some(&key)).await;
            (r, format!("purchase of ticket {} (Idempotency-Key {key})", e.ticket), 201)
        }
    };
    let (status, bytes) = r?;
    if status >= 500 {
        tally.server_errors += 1;
        shared.fail(format!("{what}: replay answered {status}"));
    } else if status != ok_status {
        tally.lost += 1;
        shared.fail(format!(
            "LOST {what}: replay answered {status} {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        ));
    } else if bytes != e.answer {
        tally.changed += 1;
        shared.fail(format!(
            "CHANGED {what}:\n    before {}\n    after  {}",
            String::from_utf8_lossy(&e.answer),
            String::from_utf8_lossy(&bytes)
        ));
    }
    Ok(())
}

/// A ticket's public record must begin with the draws its answers showed,
/// and verify once the ticket is finished.
async fn record_one(
    c: &reqwest::Client,
    url: &str,
    id: &str,
    token: &str,
    want: &[Value],
    shared: &Shared,
    tally: &mut CheckTally,
) -> anyhow::Result<()> {
    let (status, bytes) =
        send(c, reqwest::Method::GET, format!("{url}/api/tickets/{id}/record"), Some(token), None, None).await?;
    tally.records_checked += 1;
    if status != 200 {
        if status >= 500 {
            tally.server_errors += 1;
        } else {
            tally.lost += 1;
        }
        shared.fail(format!("record of {id}: {status} {}", String::from_utf8_lossy(&bytes)));
        return Ok(());
    }
    let record: Value = serde_json::from_slice(&bytes)?;
    let draws = record["draws"].as_array().cloned().unwrap_or_default();
    if draws.len() < want.len() {
        tally.lost += 1;
        shared.fail(format!("record of {id}: {} draws, the answers showed {}", draws.len(), want.len()));
        return Ok(());
    }
    for (i, (w, d)) in want.iter().zip(&draws).enumerate() {
        let same = d["n"].as_u64() == Some(i as u64)
            && d["kind"] == w["kind"]
            && d["capone"] == w["capone"]
            && (w["kind"] != "deck" || d["player"] == w["player"]);
        if !same {
            tally.rerolls += 1;
            shared.fail(format!("RE-ROLL ticket {id} draw {i}: answered {w}, record {d}"));
            break;
        }
    }
    if record["server_seed"].is_string() {
        let rec: record::Record = serde_json::from_value(record)?;
        let v = record::verify(&rec);
        tally.records_verified += 1;
        if !v.is_valid() {
            tally.rerolls += 1;
            shared.fail(format!("record of {id} does not verify: {v}"));
        }
    }
    Ok(())
}

/// Replays journal entries and checks the records of their tickets, with
/// [`WORKERS`] concurrent clients.
async fn check(
    url: &str,
    shared: &Arc<Shared>,
    tokens: &[Option<String>],
    which: &[usize],
    tally: &mut CheckTally,
) -> anyhow::Result<()> {
    let entries: Arc<Vec<Entry>> = {
        let j = shared.journal.lock().unwrap();
        Arc::new(which.iter().map(|&i| j.entries[i].clone()).collect())
    };
    let tokens: Arc<Vec<String>> = Arc::new(tokens.iter().map(|t| t.clone().unwrap_or_default()).collect());
    let mut hs = Vec::new();
    for w in 0..WORKERS {
        let (entries, tokens, shared, url) = (entries.clone(), tokens.clone(), shared.clone(), url.to_string());
        hs.push(tokio::spawn(async move {
            let c = client();
            let mut t = CheckTally::default();
            for e in entries.iter().skip(w).step_by(WORKERS) {
                replay_one(&c, &url, e, &tokens[e.player], &shared, &mut t).await?;
            }
            anyhow::Ok(t)
        }));
    }
    for h in hs {
        tally.add(&h.await??);
    }
    // The draws each ticket's answers showed are the start of its record.
    let tickets: HashSet<(usize, String)> = entries.iter().map(|e| (e.player, e.ticket.clone())).collect();
    let mut expected: Vec<(usize, String, Vec<Value>)> = Vec::new();
    {
        let j = shared.journal.lock().unwrap();
        for (player, id) in tickets {
            let draws = (0u64..)
                .map_while(|s| j.index.get(&(id.clone(), Some(s))).copied())
                .flat_map(|i| draws_of_answer(&j.entries[i].answer))
                .collect();
            expected.push((player, id, draws));
        }
    }
    let expected = Arc::new(expected);
    let mut hs = Vec::new();
    for w in 0..WORKERS {
        let (expected, tokens, shared, url) = (expected.clone(), tokens.clone(), shared.clone(), url.to_string());
        hs.push(tokio::spawn(async move {
            let c = client();
            let mut t = CheckTally::default();
            for (player, id, want) in expected.iter().skip(w).step_by(WORKERS) {
                record_one(&c, &url, id, &tokens[*player], want, &shared, &mut t).await?;
            }
            anyhow::Ok(t)
        }));
    }
    for h in hs {
        tally.add(&h.await??);
    }
    Ok(())
}

/// Every player's balance from its tickets, and the operator's count of
/// tickets sold against the players' tickets.
async fn check_balances(url: &str, db: &Database, shared: &Shared, tokens: &[Option<String>]) -> anyhow::Result<()> {
    let c = client();
    let mut held = 0i64;
    let mut prizes_all = 0i64;
    for token in tokens.iter().flatten() {
        let (s, b) = send(&c, reqwest::Method::GET, format!("{url}/api/tickets"), Some(token), None, None).await?;
        anyhow::ensure!(s == 200, "GET /api/tickets: {s}");
        let list: Value = serde_json::from_slice(&b)?;
        let tickets = list["tickets"].as_array().cloned().unwrap_or_default();
        let prizes: i64 = tickets.iter().filter_map(|t| t["result"]["prize_cents"].as_i64()).sum();
        let (s, b) = send(&c, reqwest::Method::GET, format!("{url}/api/me"), Some(token), None, None).await?;
        anyhow::ensure!(s == 200, "GET /api/me: {s}");
        let me: Value = serde_json::from_slice(&b)?;
        let price = REGULATION_PRICE_CENTS as i64;
        let want = START_CENTS - price * tickets.len() as i64 + prizes;
        if me["balance_cents"].as_i64() != Some(want) {
            shared.fail(format!(
                "balance {} != {START_CENTS} - {price} x {} tickets + {prizes} prizes = {want}",
                me["balance_cents"],
                tickets.len()
            ));
        }
        held += tickets.len() as i64;
        prizes_all += prizes;
    }
    let totals = super::testbed::report_totals(&db.url).await?;
    if totals["sold"].as_i64() != Some(held) {
        shared.fail(format!("the operator's report counts {} tickets sold, the players hold {held}", totals["sold"]));
    }
    let finished_prizes = totals["prizes_won_cents"].as_i64().unwrap_or(-1);
    if finished_prizes != prizes_all {
        shared.fail(format!(
            "the operator's report counts {finished_prizes} cents of prizes, the players won {prizes_all}"
        ));
    }
    Ok(())
}

/// What a kills run has counted so far, beside the shared counters.
struct Run {
    started: Instant,
    blocks: u64,
    tally: CheckTally,
    ledger_checks: u64,
    audit_entries: u64,
    survived: u32,
    start_ms: Vec<u128>,
    server_error_lines: Vec<String>,
    down_ms_total: u128,
}

/// Starts the server on the same database `--kills` times, each time checks
/// the journal of answers against it, then loads it and SIGKILLs it at a
/// random moment; returns the report's JSON.
pub fn run(args: &ReliabilityArgs, backend: Backend, seed: u64, rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    let label = format!("kills-{}", backend.name());
    println!("\n== kills on {}: {} SIGKILLs under load, {} players ==", backend.name(), args.kills, args.players);
    let Some(db) = Database::create(args, backend, &label)? else {
        return Ok(json!({"backend": backend.name(), "skipped": true, "ok": !args.require_postgres}));
    };
    // Enough tickets that the players never run out: a generous estimate of
    // a few hundred tickets a second under load.
    let blocks = ((args.kills as u64 * args.kill_window_ms * 300 / 1000 / 2000) + 3).clamp(3, 20); // the server emits at most 20 blocks per call
    let blocks_s = blocks.to_string();
    let extra = ["--initial-blocks", blocks_s.as_str()];
    let mut run = Run {
        started: Instant::now(),
        blocks,
        tally: CheckTally::default(),
        ledger_checks: 0,
        audit_entries: 0,
        survived: 0,
        start_ms: Vec::new(),
        server_error_lines: Vec::new(),
        down_ms_total: 0,
    };
    let shared = Arc::new(Shared {
        journal: Mutex::default(),
        counters: Counters::default(),
        failures: Mutex::default(),
        epoch: AtomicU64::new(0),
    });
    let mut rng = Rng::new(seed);
    let mut players: Vec<Player> = vec![Player::default(); args.players];
    let mut checked_upto = 0usize;
    for k in 0..=args.kills {
        let t_down = Instant::now();
        let mut server = start_server(&db, &extra)?;
        run.down_ms_total += t_down.elapsed().as_millis();
        run.start_ms.push(server.start_ms);
        if k > 0 {
            run.survived += 1;
        }
        let url = server.url.clone();
        let tokens: Vec<Option<String>> = players.iter().map(|p| p.token.clone()).collect();
        // The last run's answers, all of them, and a sample of the older ones.
        let total = shared.journal.lock().unwrap().entries.len();
        let mut which: Vec<usize> = (checked_upto..total).collect();
        if checked_upto > 0 {
            for _ in 0..50 {
                which.push(rng.range(0, checked_upto as u64 - 1) as usize);
            }
        }
        let last = k == args.kills;
        if last {
            which = (0..total).collect(); // the end: the whole journal
        }
        rt.block_on(check(&url, &shared, &tokens, &which, &mut run.tally))?;
        checked_upto = total;
        if k % 10 == 0 || last {
            rt.block_on(check_balances(&url, &db, &shared, &tokens))?;
            run.tally.balance_checks += 1;
        }
        if last {
            run.server_error_lines.extend(server.errors.lock().unwrap().clone());
            server.kill();
            break;
        }
        // Load, then a kill at a random moment.
        shared.epoch.store(k as u64 + 1, Ordering::Relaxed);
        let window = rng.range(args.kill_window_ms / 10, args.kill_window_ms);
        let handles: Vec<_> = players
            .drain(..)
            .enumerate()
            .map(|(i, p)| rt.spawn(play(url.clone(), i, p, shared.clone(), rng.next_u64())))
            .collect();
        std::thread::sleep(Duration::from_millis(window));
        server.kill();
        for h in handles {
            players.push(rt.block_on(h)?);
        }
        run.server_error_lines.extend(server.errors.lock().unwrap().clone());
        after_kill(args, k, rt, &db, &shared, &mut run)?;
        if players.iter().all(|p| p.sold_out) {
            shared.fail("every ticket was sold: more --initial-blocks needed".into());
            break;
        }
    }
    Ok(summary(args, backend, &shared, run))
}

/// Kill number `k + 1` just happened: checks the ledger and the audit chain
/// on the database as the kill left it, and prints the progress every ten.
fn after_kill(
    args: &ReliabilityArgs,
    k: u32,
    rt: &tokio::runtime::Runtime,
    db: &Database,
    shared: &Shared,
    run: &mut Run,
) -> anyhow::Result<()> {
    let (ledger, audit) = rt.block_on(super::testbed::check_ledger_and_audit(db))?;
    run.ledger_checks += 1;
    run.audit_entries = audit.entries;
    if !ledger.is_sound() {
        shared.fail(format!("after kill {}: ledger unsound: {ledger:?}", k + 1));
    }
    if audit.first_broken.is_some() || audit.forged.is_some() {
        shared.fail(format!("after kill {}: audit chain broken: {audit:?}", k + 1));
    }
    if (k + 1).is_multiple_of(10) || k + 1 == args.kills {
        let (c, tally) = (&shared.counters, &run.tally);
        println!(
            "  kill {:>4}/{}: {} actions, {} purchases answered; {} replayed; lost {} changed {} re-rolls {} 5xx {} ({:.0} s)",
            k + 1,
            args.kills,
            c.answered_actions.load(Ordering::Relaxed),
            c.answered_purchases.load(Ordering::Relaxed),
            tally.replayed_actions + tally.replayed_purchases,
            tally.lost,
            tally.changed + c.changed.load(Ordering::Relaxed),
            tally.rerolls,
            tally.server_errors + c.server_errors.load(Ordering::Relaxed),
            run.started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// The verdict, printed and as the report's JSON.
fn summary(args: &ReliabilityArgs, backend: Backend, shared: &Shared, run: Run) -> Value {
    let Run {
        started,
        blocks,
        tally,
        ledger_checks,
        audit_entries,
        survived,
        mut start_ms,
        server_error_lines,
        down_ms_total,
    } = run;
    let c = &shared.counters;
    let failures = shared.failures.lock().unwrap().clone();
    let lost = tally.lost;
    let changed = tally.changed + c.changed.load(Ordering::Relaxed);
    let server_errors = tally.server_errors + c.server_errors.load(Ordering::Relaxed);
    let unexpected = c.unexpected.load(Ordering::Relaxed);
    let actions = c.answered_actions.load(Ordering::Relaxed);
    let ok = failures.is_empty()
        && survived == args.kills
        && lost == 0
        && changed == 0
        && tally.rerolls == 0
        && server_errors == 0
        && unexpected == 0
        && server_error_lines.is_empty()
        && actions > 0;
    start_ms.sort_unstable();
    let summary = json!({
        "backend": backend.name(),
        "skipped": false,
        "kills": args.kills,
        "kills_survived": survived,
        "players": args.players,
        "initial_blocks": blocks,
        "actions_answered": actions,
        "purchases_answered": c.answered_purchases.load(Ordering::Relaxed),
        "requests_resent_after_restart": c.resent_after_restart.load(Ordering::Relaxed),
        "actions_replayed": tally.replayed_actions,
        "purchases_replayed": tally.replayed_purchases,
        "records_checked": tally.records_checked,
        "records_verified": tally.records_verified,
        "balance_checks": tally.balance_checks,
        "ledger_checks": ledger_checks,
        "audit_entries": audit_entries,
        "lost": lost,
        "changed": changed,
        "rerolls": tally.rerolls,
        "server_errors_5xx": server_errors,
        "unexpected_4xx": unexpected,
        "server_error_log_lines": server_error_lines,
        "restart_ms_median": start_ms.get(start_ms.len() / 2).copied().unwrap_or(0),
        "restart_ms_max": start_ms.last().copied().unwrap_or(0),
        "restart_ms_total": down_ms_total,
        "seconds": started.elapsed().as_secs_f64(),
        "failures": failures,
        "ok": ok,
    });
    println!(
        "kills on {}: {} of {} kills survived; {} actions and {} purchases answered; {} actions and {} purchases replayed byte for byte; \
         {} records checked ({} verified); lost {}, changed {}, re-rolls {}, 5xx {}, other refusals {}; ledger and audit checked {} times: {}",
        backend.name(),
        survived,
        args.kills,
        actions,
        summary["purchases_answered"],
        tally.replayed_actions,
        tally.replayed_purchases,
        tally.records_checked,
        tally.records_verified,
        lost,
        changed,
        tally.rerolls,
        server_errors,
        unexpected,
        ledger_checks,
        if ok { "PASS" } else { "FAIL" }
    );
    summary
}
