//! Floods (the second outside audit, finding 5; docs/limits.md "Ceilings"): demo games and
//! registrations sent as fast as they go from ever new networks (every
//! request from another /64, through a trusted proxy's `X-Forwarded-For`),
//! against a running server on each backend, while a few honest players
//! buy and play tickets at a steady pace.
//!
//! Two phases of `--flood-secs` each: the honest players alone, then with
//! the flood. A flood that has not met a ceiling by the end of its phase
//! (a slow or loaded machine answers fewer requests) goes on, up to three
//! more phases, until it meets one: the ceilings are what it tests. The verdict: what the flood stored stays under the global
//! ceilings (rows counted in the database), every refusal is 503
//! `unavailable` with `Retry-After` (or a network's 429), no honest
//! purchase or action is refused, no other 5xx. The figures: the honest
//! purchases' p50 and p99 before and during the flood, and the database's
//! growth in each phase. `--flood-no-ceilings` runs the same flood with the
//! ceilings off (the server before the second outside audit), for comparison; `--flood-rate`
//! paces it (requests a second; 0: as fast as the server answers), so that
//! both runs send the same load.
//!
//! Every loop is bounded in time and count (`--flood-requests`); the
//! traffic goes to the server on 127.0.0.1 only.

use super::args::{Backend, ReliabilityArgs};
use super::latency::quantile_ms;
use super::testbed::{Database, start_server};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use testkit::next_action;

/// Honest players, each buying a ticket and playing it out, one ticket per [`HONEST_PACE`].
const HONEST: usize = 4;
const HONEST_PACE: Duration = Duration::from_millis(40);
/// Requests of the flood in flight at once.
const FLOODERS: u64 = 16;
/// The ceilings of the run: demo games an hour (`demo_games_alive` / 26) and players an hour.
const DEMOS_AN_HOUR: u32 = 200;
const PLAYERS_AN_HOUR: u32 = 100;

pub fn run(args: &ReliabilityArgs, backends: &[Backend], rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    let mut parts = Vec::new();
    let mut ok = true;
    for &b in backends {
        let r = one(args, b, rt)?;
        ok &= r["ok"] == true || r["skipped"] == true;
        parts.push(r);
    }
    println!("floods: {}", if ok { "PASS" } else { "FAIL" });
    Ok(json!({"ok": ok, "ceilings": !args.flood_no_ceilings, "rate": args.flood_rate, "backends": parts}))
}

/// The honest players' side of a phase.
#[derive(Default)]
struct Honest {
    purchases_us: Vec<u32>,
    tickets_finished: u64,
    refused: Vec<String>,
}

/// The flood's answers.
#[derive(Default)]
struct Flood {
    sent: u64,
    created_demos: u64,
    created_players: u64,
    /// 503 `unavailable` with `Retry-After` and `params.ceiling`, by ceiling.
    ceiling: u64,
    by_ceiling: std::collections::BTreeMap<String, u64>,
    /// 429 of a network's own limit.
    network: u64,
    others: Vec<String>,
    /// How long the flood lasted: its phase, or more until it met a ceiling.
    secs: f64,
}

fn one(args: &ReliabilityArgs, backend: Backend, rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    let Some(db) = Database::create(args, backend, "floods")? else {
        println!("floods on {}: skipped (PostgreSQL unreachable)", backend.name());
        return Ok(json!({"backend": backend.name(), "skipped": true}));
    };
    let config = db.dir.path.join("floods.toml");
    let (alive, players) = if args.flood_no_ceilings { (0, 0) } else { (DEMOS_AN_HOUR * 26, PLAYERS_AN_HOUR) };
    let counters = if args.flood_no_ceilings { 0 } else { 500_000 };
    std::fs::write(
        &config,
        format!(
            "demo_games_alive = {alive}\nregistrations_per_hour = {players}\nlimit_counters_per_hour = {counters}\n"
        ),
    )?;
    let config = config.to_string_lossy().into_owned();
    let server = start_server(&db, &["--config", &config, "--trust-forwarded-for", "--initial-blocks", "4"])?;
    let url = server.url.clone();
    let phase = Duration::from_secs_f64(args.flood_secs);
    let (before, during, flood, growth) = rt.block_on(async {
        let c = reqwest::Client::builder().timeout(Duration::from_secs(20)).build()?;
        let mut tokens = Vec::new();
        for _ in 0..HONEST {
            tokens.push(register(&c, &url).await?);
        }
        let size0 = disk_bytes(&db).await?;
        let before = honest_phase(&url, &tokens, phase).await;
        let size1 = disk_bytes(&db).await?;
        let flood = Arc::new(Mutex::new(Flood::default()));
        let budget = Arc::new(AtomicU64::new(args.flood_requests));
        let pace = (args.flood_rate > 0.0).then(|| Duration::from_secs_f64(FLOODERS as f64 / args.flood_rate));
        let end = Instant::now() + phase;
        let overtime = (!args.flood_no_ceilings).then(|| end + 3 * phase);
        let flooders: Vec<_> = (0..FLOODERS)
            .map(|w| tokio::spawn(flooder(url.clone(), w, (end, overtime, pace), budget.clone(), flood.clone())))
            .collect();
        let during = honest_phase(&url, &tokens, phase).await;
        for f in flooders {
            f.await?;
        }
        flood.lock().unwrap().secs = (Instant::now() - (end - phase)).as_secs_f64();
        let size2 = disk_bytes(&db).await?;
        let flood = Arc::try_unwrap(flood).map_err(|_| anyhow::anyhow!("a flooder outlived its phase"))?;
        anyhow::Ok((before, during, flood.into_inner().expect("flood tally"), (size1 - size0, size2 - size1)))
    })?;
    let rows = rt.block_on(rows(&db))?;
    let server_errors: Vec<String> =
        server.errors.lock().unwrap().iter().filter(|l| !l.contains("Status code: 503")).cloned().collect();
    drop(server);
    verdict(args, backend, (before, during), flood, growth, rows, server_errors)
}

/// The figures of one backend and whether the checks held.
fn verdict(
    args: &ReliabilityArgs,
    backend: Backend,
    (mut before, mut during): (Honest, Honest),
    flood: Flood,
    (growth_before, growth_during): (i64, i64),
    (demo_rows, player_rows, counter_rows): (i64, i64, i64),
    server_errors: Vec<String>,
) -> anyhow::Result<Value> {
    let ceilings = !args.flood_no_ceilings;
    let mut failures: Vec<String> = flood.others.iter().take(5).cloned().collect();
    failures.extend(before.refused.iter().chain(&during.refused).take(5).cloned());
    failures.extend(server_errors.iter().take(5).cloned());
    if ceilings {
        if demo_rows > i64::from(DEMOS_AN_HOUR) || flood.created_demos > u64::from(DEMOS_AN_HOUR) {
            failures.push(format!("{demo_rows} demo games stored, ceiling {DEMOS_AN_HOUR}"));
        }
        if player_rows > i64::from(PLAYERS_AN_HOUR) {
            failures.push(format!("{player_rows} players stored ({HONEST} honest), ceiling {PLAYERS_AN_HOUR}"));
        }
        if flood.ceiling == 0 {
            failures.push("the flood never reached a ceiling: send more (--flood-requests, --flood-secs)".into());
        }
    }
    if during.purchases_us.is_empty() || before.purchases_us.is_empty() {
        failures.push("an honest phase bought nothing".into());
    }
    let ok = failures.is_empty();
    let (p50_before, p99_before) =
        (quantile_ms(&mut before.purchases_us, 0.5), quantile_ms(&mut before.purchases_us, 0.99));
    let (p50_during, p99_during) =
        (quantile_ms(&mut during.purchases_us, 0.5), quantile_ms(&mut during.purchases_us, 0.99));
    println!(
        "floods on {}{}: {} requests from as many networks in {:.1} s: {} demo games and {} players stored \
         ({} refused by a ceiling, {} by a network's limit); {demo_rows} demo games, {player_rows} players, \
         {counter_rows} counters in the database; its growth {:.0} KiB with the flood, {:.0} KiB without; \
         honest purchases p50/p99 {p50_before:.1}/{p99_before:.1} ms before, {p50_during:.1}/{p99_during:.1} ms during \
         ({} and {} purchases): {}",
        backend.name(),
        if ceilings { "" } else { " (ceilings off)" },
        flood.sent,
        flood.secs,
        flood.created_demos,
        flood.created_players,
        flood.ceiling,
        flood.network,
        growth_during as f64 / 1024.0,
        growth_before as f64 / 1024.0,
        before.purchases_us.len(),
        during.purchases_us.len(),
        if ok { "ok" } else { "FAIL" }
    );
    Ok(json!({
        "backend": backend.name(),
        "ok": ok,
        "seconds_per_phase": args.flood_secs,
        "flood_rate_per_s": args.flood_rate,
        "flood_requests": flood.sent,
        "flood_seconds": flood.secs,
        "flood_demo_games_created": flood.created_demos,
        "flood_players_created": flood.created_players,
        "refused_by_ceiling": flood.ceiling,
        "refused_by_each_ceiling": flood.by_ceiling,
        "refused_by_network_limit": flood.network,
        "demo_games_stored": demo_rows,
        "players_stored": player_rows,
        "counters_stored": counter_rows,
        "ceiling_demo_games_an_hour": if ceilings { DEMOS_AN_HOUR } else { 0 },
        "ceiling_players_an_hour": if ceilings { PLAYERS_AN_HOUR } else { 0 },
        "disk_growth_bytes_before": growth_before,
        "disk_growth_bytes_during": growth_during,
        "honest_purchases_before": before.purchases_us.len(),
        "honest_purchases_during": during.purchases_us.len(),
        "honest_tickets_finished": before.tickets_finished + during.tickets_finished,
        "purchase_p50_ms_before": p50_before,
        "purchase_p99_ms_before": p99_before,
        "purchase_p50_ms_during": p50_during,
        "purchase_p99_ms_during": p99_during,
        "failures": failures,
    }))
}

async fn register(c: &reqwest::Client, url: &str) -> anyhow::Result<String> {
    let r = c.post(format!("{url}/api/players")).json(&json!({"name": "honest"})).send().await?;
    let status = r.status().as_u16();
    let v: Value = r.json().await.unwrap_or_default();
    anyhow::ensure!(status == 201, "an honest registration: {status} {v}");
    Ok(v["token"].as_str().unwrap_or_default().to_string())
}

/// The honest players for `length`: each buys a ticket (timed) and plays it
/// out, one ticket per [`HONEST_PACE`]; every refusal is noted.
async fn honest_phase(url: &str, tokens: &[String], length: Duration) -> Honest {
    let deadline = Instant::now() + length;
    let players: Vec<_> = tokens
        .iter()
        .map(|token| {
            let (url, token) = (url.to_string(), token.clone());
            tokio::spawn(async move { honest_player(&url, &token, deadline).await })
        })
        .collect();
    let mut all = Honest::default();
    for p in players {
        match p.await {
            Ok(h) => {
                all.purchases_us.extend(h.purchases_us);
                all.tickets_finished += h.tickets_finished;
                all.refused.extend(h.refused);
            }
            Err(e) => all.refused.push(format!("an honest player's task: {e}")),
        }
    }
    all
}

async fn honest_player(url: &str, token: &str, deadline: Instant) -> Honest {
    let c = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().expect("http client");
    let mut h = Honest::default();
    let mut next = Instant::now();
    while next < deadline && h.refused.is_empty() {
        tokio::time::sleep_until(next.into()).await;
        next += HONEST_PACE;
        let started = Instant::now();
        let (status, mut ticket) = post(&c, &format!("{url}/api/tickets"), token, &json!({})).await;
        if status != 201 {
            h.refused.push(format!("an honest purchase: {status} {ticket}"));
            break;
        }
        h.purchases_us.push(started.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
        ticket = ticket["ticket"].clone();
        // Bounded (the longest of 2 000 games played to measure had 62 actions).
        for _ in 0..200 {
            if ticket["phase"] == "finished" {
                h.tickets_finished += 1;
                break;
            }
            let path = format!("{url}/api/tickets/{}/actions", ticket["id"].as_str().unwrap_or_default());
            let (status, answer) = post(&c, &path, token, &next_action(&ticket)).await;
            if status != 200 {
                h.refused.push(format!("an honest action: {status} {answer}"));
                break;
            }
            ticket = answer["ticket"].clone();
        }
    }
    h
}

async fn post(c: &reqwest::Client, url: &str, token: &str, body: &Value) -> (u16, Value) {
    match c.post(url).bearer_auth(token).json(body).send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.json().await.unwrap_or_default())
        }
        Err(e) => (0, json!(e.to_string())),
    }
}

/// One of the flood's connections until `deadline` or the budget is
/// spent: demo games and registrations in turn, each from a /64 of its own,
/// one per `pace` (none: as fast as the server answers).
async fn flooder(
    url: String,
    worker: u64,
    (deadline, overtime, pace): (Instant, Option<Instant>, Option<Duration>),
    budget: Arc<AtomicU64>,
    tally: Arc<Mutex<Flood>>,
) {
    let c = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().expect("http client");
    let (mut n, mut k) = (worker, 0u64);
    let mut next = Instant::now() + pace.unwrap_or_default().mul_f64(worker as f64 / FLOODERS as f64);
    // Within the phase; past it, until a ceiling has refused one (at most `overtime`).
    let going =
        |now: Instant| now < deadline || overtime.is_some_and(|o| now < o && tally.lock().unwrap().ceiling == 0);
    while going(Instant::now())
        && budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| b.checked_sub(1)).is_ok()
    {
        if let Some(pace) = pace {
            tokio::time::sleep_until(next.into()).await;
            next += pace;
        }
        let from = format!("2001:db8:{:x}:{:x}::1", (n >> 16) & 0xffff, n & 0xffff);
        let demo = k % 2 == 0;
        let path = if demo { "/api/demo" } else { "/api/players" };
        (n, k) = (n + FLOODERS, k + 1);
        let sent = c.post(format!("{url}{path}")).header("x-forwarded-for", &from).json(&json!({})).send().await;
        let (status, retry, body) = match sent {
            Ok(r) => {
                let status = r.status().as_u16();
                let retry = r.headers().contains_key("retry-after");
                (status, retry, r.json::<Value>().await.unwrap_or_default())
            }
            Err(e) => (0, false, json!(e.to_string())),
        };
        let mut t = tally.lock().unwrap();
        t.sent += 1;
        match status {
            201 if demo => t.created_demos += 1,
            201 => t.created_players += 1,
            503 if retry && body["error"] == "unavailable" && body["params"]["ceiling"].is_string() => {
                t.ceiling += 1;
                *t.by_ceiling.entry(body["params"]["ceiling"].as_str().unwrap_or_default().into()).or_default() += 1;
            }
            429 if retry => t.network += 1,
            _ if t.others.len() < 5 => t.others.push(format!("{path}: {status} {body}")),
            _ => {}
        }
    }
}

/// The database's size: SQLite's pages (`page_count` × `page_size`, as a
/// reader sees the file with its WAL, so that what waits in the WAL for a
/// checkpoint counts once), or PostgreSQL's `pg_database_size`.
async fn disk_bytes(db: &Database) -> anyhow::Result<i64> {
    use sqlx::Connection;
    match db.sqlite_file() {
        Some(_) => {
            let mut conn = sqlx::SqliteConnection::connect(&db.url).await?;
            let pages: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(&mut conn).await?;
            let size: i64 = sqlx::query_scalar("PRAGMA page_size").fetch_one(&mut conn).await?;
            conn.close().await?;
            Ok(pages * size)
        }
        None => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await?;
            let size: i64 =
                sqlx::query_scalar("SELECT pg_database_size(current_database())").fetch_one(&mut conn).await?;
            conn.close().await?;
            Ok(size)
        }
    }
}

/// Demo games, players and limits' counters stored.
async fn rows(db: &Database) -> anyhow::Result<(i64, i64, i64)> {
    use sqlx::Connection;
    const SQL: [&str; 3] =
        ["SELECT COUNT(*) FROM demo_games", "SELECT COUNT(*) FROM players", "SELECT COUNT(*) FROM limit_counters"];
    let mut out = [0i64; 3];
    match db.sqlite_file() {
        Some(_) => {
            let mut conn = sqlx::SqliteConnection::connect(&db.url).await?;
            for (i, sql) in SQL.iter().enumerate() {
                out[i] = sqlx::query_scalar(*sql).fetch_one(&mut conn).await?;
            }
            conn.close().await?;
        }
        None => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await?;
            for (i, sql) in SQL.iter().enumerate() {
                out[i] = sqlx::query_scalar(*sql).fetch_one(&mut conn).await?;
            }
            conn.close().await?;
        }
    }
    Ok((out[0], out[1], out[2]))
}
