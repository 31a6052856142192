//! `as-capone loadtest`: our own load generator. Registers players, buys
//! tickets and plays real games to the end over HTTP, then reports actions
//! per second and latency percentiles. It stops by itself: after `--games`
//! games or `--max-seconds`, whichever comes first. Point it only at a
//! server of yours (a loopback address here).

use anyhow::Context;
use clap::Args;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Args, Debug, Clone)]
pub struct LoadtestArgs {
    /// The server's base URL.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// Concurrent players, each playing one game after another.
    #[arg(long, default_value_t = 64)]
    pub players: usize,
    /// Games to play in all (each: a purchase and its actions to the end).
    #[arg(long, default_value_t = 2000)]
    pub games: u64,
    /// Stop starting new games after this many seconds.
    #[arg(long, default_value_t = 300)]
    pub max_seconds: u64,
    /// Worker threads of the client's runtime.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Pace the players so that together they send this many game requests
    /// (purchases and actions) per second, instead of as fast as the server
    /// answers. Latency is then measured from each request's scheduled time,
    /// so a server that falls behind is charged for the wait too (no
    /// coordinated omission). Without it, each player sends its next request
    /// as soon as the previous one is answered (saturation).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// When a player sends its requests: as soon as it can, or on a fixed schedule.
struct Pace {
    interval: Option<Duration>,
    next: Instant,
}

impl Pace {
    /// Waits for the next slot and returns the instant latency counts from.
    async fn slot(&mut self) -> Instant {
        let Some(interval) = self.interval else { return Instant::now() };
        let at = self.next;
        self.next += interval;
        tokio::time::sleep_until(at.into()).await;
        at
    }
}

#[derive(Default)]
struct Tally {
    action_us: Vec<u32>,
    purchase_us: Vec<u32>,
    actions: u64,
    purchases: u64,
    players: u64,
    finished: u64,
    won: u64,
    errors: u64,
    first_error: Option<String>,
}

impl Tally {
    fn error(&mut self, e: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(e);
        }
    }
    fn merge(&mut self, o: Tally) {
        self.action_us.extend(o.action_us);
        self.purchase_us.extend(o.purchase_us);
        self.actions += o.actions;
        self.purchases += o.purchases;
        self.players += o.players;
        self.finished += o.finished;
        self.won += o.won;
        self.errors += o.errors;
        if self.first_error.is_none() {
            self.first_error = o.first_error;
        }
    }
}

struct Shared {
    client: reqwest::Client,
    url: String,
    games_left: AtomicI64,
    deadline: Instant,
    started: AtomicU64,
    /// Time between two requests of one player, when paced.
    interval: Option<Duration>,
}

/// Percentile `p` (0..=100) of sorted microseconds, in milliseconds.
fn percentile_ms(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    f64::from(sorted[rank.clamp(1, sorted.len()) - 1]) / 1000.0
}

async fn post(s: &Shared, path: &str, token: Option<&str>, body: Value) -> anyhow::Result<(u16, Value, u32)> {
    post_from(s, path, token, body, Instant::now()).await
}

/// POST, with latency counted from `t0` (the request's scheduled time).
async fn post_from(
    s: &Shared,
    path: &str,
    token: Option<&str>,
    body: Value,
    t0: Instant,
) -> anyhow::Result<(u16, Value, u32)> {
    let mut req = s.client.post(format!("{}{path}", s.url)).json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.with_context(|| format!("POST {path}"))?;
    let status = resp.status().as_u16();
    let bytes = resp.bytes().await?;
    let us = t0.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Ok((status, v, us))
}

async fn register(s: &Shared, t: &mut Tally) -> anyhow::Result<String> {
    let (status, v, _) = post(s, "/api/players", None, json!({"name": "loadtest"})).await?;
    anyhow::ensure!(status == 201, "POST /api/players answered {status}: {v}");
    t.players += 1;
    Ok(v["token"].as_str().context("no token")?.to_string())
}

/// One player: games one after another until none is left.
async fn player(s: Arc<Shared>, index: usize, players: usize) -> Tally {
    let mut t = Tally::default();
    // Paced players start spread over one interval.
    let offset = s.interval.map(|i| i.mul_f64(index as f64 / players as f64)).unwrap_or_default();
    let mut pace = Pace { interval: s.interval, next: Instant::now() + offset };
    let mut token = match register(&s, &mut t).await {
        Ok(tok) => tok,
        Err(e) => {
            t.error(format!("{e:#}"));
            return t;
        }
    };
    while Instant::now() < s.deadline && s.games_left.fetch_sub(1, Ordering::Relaxed) > 0 {
        s.started.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = game(&s, &mut t, &mut token, &mut pace).await {
            t.error(format!("{e:#}"));
        }
    }
    t
}

async fn game(s: &Shared, t: &mut Tally, token: &mut String, pace: &mut Pace) -> anyhow::Result<()> {
    let at = pace.slot().await;
    let (mut status, mut v, mut us) = post_from(s, "/api/tickets", Some(token), json!({}), at).await?;
    if status == 402 {
        // Out of play money: a new player takes over.
        *token = register(s, t).await?;
        (status, v, us) = post(s, "/api/tickets", Some(token), json!({})).await?;
    }
    anyhow::ensure!(status == 201, "POST /api/tickets answered {status}: {v}");
    t.purchases += 1;
    t.purchase_us.push(us);
    let mut ticket = v["ticket"].clone();
    let id = ticket["id"].as_str().context("ticket id")?.to_string();
    let path = format!("/api/tickets/{id}/actions");
    loop {
        let seq = ticket["seq"].as_u64().context("seq")?;
        let body = match ticket["phase"].as_str() {
            Some("finished") => break,
            Some("play") => {
                // Any order gives the same odds (RULES.md); play the highest card.
                let card = ticket["hand"].as_array().and_then(|h| h.last()).context("hand")?.clone();
                json!({"seq": seq, "action": "play", "card": card})
            }
            Some(_) => json!({"seq": seq, "action": "draw"}),
            None => anyhow::bail!("ticket without phase: {ticket}"),
        };
        let at = pace.slot().await;
        let (status, v, us) = post_from(s, &path, Some(token), body, at).await?;
        anyhow::ensure!(status == 200, "POST {path} answered {status}: {v}");
        t.actions += 1;
        t.action_us.push(us);
        ticket = v["ticket"].clone();
    }
    t.finished += 1;
    if ticket["result"]["prize_cents"].as_u64().unwrap_or(0) > 0 {
        t.won += 1;
    }
    Ok(())
}

pub fn run(args: LoadtestArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.players >= 1, "--players must be at least 1");
    if let Some(r) = args.rate {
        anyhow::ensure!(r.is_finite() && r > 0.0, "--rate must be a positive number of requests per second");
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(args.threads.max(1)).enable_all().build()?;
    rt.block_on(run_async(args))
}

async fn run_async(args: LoadtestArgs) -> anyhow::Result<()> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(args.players * 2)
        .timeout(Duration::from_secs(30))
        .tcp_nodelay(true)
        .build()?;
    let url = args.url.trim_end_matches('/').to_string();
    let health = client.get(format!("{url}/healthz")).send().await.with_context(|| format!("cannot reach {url}"))?;
    anyhow::ensure!(health.status().is_success(), "{url}/healthz answered {}", health.status());
    let started = Instant::now();
    let shared = Arc::new(Shared {
        client,
        url,
        games_left: AtomicI64::new(i64::try_from(args.games).unwrap_or(i64::MAX)),
        deadline: started + Duration::from_secs(args.max_seconds),
        started: AtomicU64::new(0),
        interval: args.rate.map(|r| Duration::from_secs_f64(args.players as f64 / r)),
    });
    let tasks: Vec<_> = (0..args.players).map(|i| tokio::spawn(player(shared.clone(), i, args.players))).collect();
    let mut total = Tally::default();
    for task in tasks {
        total.merge(task.await?);
    }
    let seconds = started.elapsed().as_secs_f64();
    total.action_us.sort_unstable();
    total.purchase_us.sort_unstable();
    let a = &total.action_us;
    let p = &total.purchase_us;
    let requests = total.actions + total.purchases + total.players;
    let report = json!({
        "url": shared.url,
        "players": args.players,
        "rate": args.rate,
        "games": total.finished,
        "games_won": total.won,
        "actions": total.actions,
        "purchases": total.purchases,
        "registrations": total.players,
        "errors": total.errors,
        "seconds": seconds,
        "actions_per_s": total.actions as f64 / seconds,
        "requests_per_s": requests as f64 / seconds,
        "latency_ms": {
            "p50": percentile_ms(a, 50.0), "p90": percentile_ms(a, 90.0),
            "p99": percentile_ms(a, 99.0), "max": percentile_ms(a, 100.0),
        },
        "purchase_latency_ms": {
            "p50": percentile_ms(p, 50.0), "p90": percentile_ms(p, 90.0),
            "p99": percentile_ms(p, 99.0), "max": percentile_ms(p, 100.0),
        },
    });
    if args.json {
        println!("{report}");
    } else {
        println!(
            "loadtest {}: {} players{}, {} games finished ({} won), {} actions, {} purchases, {} errors in {:.2} s",
            shared.url,
            args.players,
            args.rate.map(|r| format!(" paced at {r} requests/s")).unwrap_or_default(),
            total.finished,
            total.won,
            total.actions,
            total.purchases,
            total.errors,
            seconds
        );
        println!(
            "actions/s: {:.0}   requests/s (actions, purchases, registrations): {:.0}",
            total.actions as f64 / seconds,
            requests as f64 / seconds
        );
        println!(
            "action latency ms: p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}",
            percentile_ms(a, 50.0),
            percentile_ms(a, 90.0),
            percentile_ms(a, 99.0),
            percentile_ms(a, 100.0)
        );
        println!(
            "purchase latency ms: p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}",
            percentile_ms(p, 50.0),
            percentile_ms(p, 90.0),
            percentile_ms(p, 99.0),
            percentile_ms(p, 100.0)
        );
    }
    if let Some(e) = &total.first_error {
        eprintln!("first error: {e}");
    }
    anyhow::ensure!(total.errors == 0, "{} requests failed", total.errors);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::percentile_ms;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u32> = (1..=100).map(|i| i * 1000).collect();
        assert_eq!(percentile_ms(&v, 50.0), 50.0);
        assert_eq!(percentile_ms(&v, 99.0), 99.0);
        assert_eq!(percentile_ms(&v, 100.0), 100.0);
        assert_eq!(percentile_ms(&[], 50.0), 0.0);
    }
}
