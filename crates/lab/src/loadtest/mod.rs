//! `as-capone loadtest`: our own load generator. Registers players, buys
//! tickets and plays real games to the end over HTTP, then reports actions
//! per second and latency percentiles. It stops by itself: after `--games`
//! games or `--max-seconds`, whichever comes first. Point it only at a
//! server of yours (a loopback address here).
//!
//! It shares the machine with the server it measures, so it is kept cheap:
//! each player holds one HTTP/1.1 keep-alive connection of its own
//! (`hyper`'s connection API: no pool, no URL parsing per request) and
//! reads from each answer only the fields it plays with, borrowed from the
//! answer's bytes (BENCHMARKS.md, "Game server": its CPU per action).
//!
//! Besides the whole run it reports a **steady window**: from the moment
//! every player has registered until the game budget runs out. Before it,
//! players register (not game requests); after it, the players still in a
//! game finish it while the others have stopped, so the load falls. The
//! window's rate is the one the server really carried, and its latencies
//! are those of requests sent at that load (with many paced players the
//! whole run's rate understates it and its percentiles are diluted by the
//! falling tail: BENCHMARKS.md).
//!
//! With `--wallet operator` (`loadtest/operator_mode.rs`) the players' money is a
//! reference operator's, started in this process: each player is launched
//! (a signed launch, then `POST /api/launch`) instead of registered, every
//! wallet call is delayed a fixed time, and the report adds the wallet's
//! own latency, each purchase split around its debit, and the operator's
//! ledger checked against the purchases and prizes the players saw.

mod operator_mode;
mod shadow;

use anyhow::Context;
use bytes::Bytes;
use clap::Args;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::json;
use std::borrow::Cow;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
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
    /// answers. Latency is then measured from each request's scheduled time
    /// (or from its sending, when the timer woke the player before it), so
    /// a server that falls behind is charged for the wait too (no
    /// coordinated omission). Without it, each player sends its next request
    /// as soon as the previous one is answered (saturation).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Send an Idempotency-Key with each purchase, as the browser page does
    /// (web/api.js): the server then also looks for the key's earlier
    /// purchase (and, in operator mode, for its round still in flight)
    /// before it sells. Without it the purchases carry no key.
    #[arg(long)]
    pub idempotency_keys: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Write the actions' latencies in windows of 100 ms of their sending
    /// (or slot, when paced) to this CSV file, to see when in a run the
    /// tail happened: `start_s,actions,p50_ms,p99_ms,max_ms,
    /// sent_late_p99_ms,sent_late_max_ms`, the last two the load
    /// generator's own lateness in sending (after both the slot and the
    /// previous answer).
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<std::path::PathBuf>,
    /// Whose wallet the players' money is in: `internal` (the server's own
    /// ledger: players register) or `operator` (a reference operator
    /// started here, behind a timing proxy on `--operator-listen`: players
    /// are launched by it; the server must run with `--wallet operator
    /// --operator-wallet-url http://OPERATOR_LISTEN` and the same keys).
    #[arg(long, value_enum, default_value_t = WalletKind::Internal)]
    pub wallet: WalletKind,
    /// Operator mode: every wallet call waits this long at the operator.
    #[arg(long, default_value_t = 20)]
    pub wallet_delay_ms: u64,
    /// Operator mode: where the reference operator's wallet answers (the
    /// game server's `operator_wallet_url`).
    #[arg(long, default_value = "127.0.0.1:9300")]
    pub operator_listen: std::net::SocketAddr,
    /// Operator mode: the keys shared with the game server, `ID:HEX,...`
    /// (the server's `operator_keys`).
    #[arg(long, env = "AS_CAPONE_OPERATOR_KEYS", hide_env_values = true)]
    pub operator_keys: Option<String>,
    /// Operator mode: the directory in which the reference operator's
    /// ledger gets its temporary directory [default: the system's]. Its
    /// SQLite ledger syncs each call to disk: on a disk shared with the
    /// game server it competes with the server's own commits, and caps
    /// the wallet's calls per second (`bench/operator-wallet.sh` puts it
    /// in /dev/shm, so that the wallet answers in its delay).
    #[arg(long, value_name = "DIR")]
    pub operator_ledger_dir: Option<std::path::PathBuf>,
    /// Internal mode: start the reference operator as `--wallet operator`
    /// does (`--wallet-delay-ms`, `--operator-listen`, `--operator-keys` or
    /// fresh keys, `--operator-ledger-dir`) and send it, from this process,
    /// the debit each purchase and the credit each prize would have made,
    /// without the players waiting for them: the operator's side of the
    /// wallet then runs beside the load generator in both modes, as a
    /// control for the operator mode's benchmark (`bench/operator-wallet.sh`
    /// with `SHADOW=1`; docs/load-testing.md).
    #[arg(long)]
    pub shadow_wallet: bool,
}

/// Where the players' money is (`--wallet`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalletKind {
    /// The server's own ledger: players register with `POST /api/players`.
    Internal,
    /// A reference operator's wallet: players are launched by it.
    Operator,
}

/// The width of a `--timeline` window.
const TIMELINE_WINDOW: Duration = Duration::from_millis(100);

/// When a player sends its requests: as soon as it can, or on a fixed schedule.
struct Pace {
    interval: Option<Duration>,
    next: Instant,
}

/// tokio's timer works in whole milliseconds and fires after its deadline:
/// `crates/cli/examples/timer_lateness.rs` measured `sleep_until` waking 0.2 to 2.1
/// ms late (median 1.1 to 1.2 ms), so a sleep until the slot itself sent
/// every paced request that much late and charged it to the server. A
/// player wakes this much before its slot.
const TIMER_SLACK: Duration = Duration::from_millis(2);

impl Pace {
    /// Waits for the next slot and returns the instant latency counts from:
    /// the slot, or the moment the request goes out if that is earlier. A
    /// player still waiting for its previous answer when its slot comes
    /// sends at once, and the wait counts (no coordinated omission); one
    /// that is early sleeps until [`TIMER_SLACK`] before the slot and sends
    /// when it wakes, so that the timer's lateness is not counted.
    /// Latency is never measured from later than the request was sent.
    async fn slot(&mut self) -> Instant {
        let Some(interval) = self.interval else { return Instant::now() };
        let at = self.next;
        self.next += interval;
        if let Some(wake) = at.checked_sub(TIMER_SLACK) {
            tokio::time::sleep_until(wake.into()).await;
        }
        at.min(Instant::now())
    }
}

#[derive(Default)]
struct Tally {
    action_us: Vec<u32>,
    /// Latencies of the actions sent inside the steady window.
    steady_action_us: Vec<u32>,
    purchase_us: Vec<u32>,
    /// Operator mode: each purchase's serial, start and latency.
    purchases_seen: Vec<operator_mode::Purchase>,
    /// The prizes won, in cents, and a ticket's price as answered.
    won_cents: i64,
    price_cents: Option<i64>,
    /// With `--timeline`: each action's window (from the run's start),
    /// latency, and the load generator's own lateness in sending it.
    timeline: Vec<(u32, u32, u32)>,
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
        self.steady_action_us.extend(o.steady_action_us);
        self.purchase_us.extend(o.purchase_us);
        self.purchases_seen.extend(o.purchases_seen);
        self.won_cents += o.won_cents;
        self.price_cents = self.price_cents.or(o.price_cents);
        self.timeline.extend(o.timeline);
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
    /// `host:port` of the server.
    addr: String,
    url: String,
    games_left: AtomicI64,
    deadline: Instant,
    started: AtomicU64,
    /// Time between two requests of one player, when paced.
    interval: Option<Duration>,
    /// The run's start, when a timeline is kept.
    timeline_from: Option<Instant>,
    /// Every player waits here once registered.
    ready: tokio::sync::Barrier,
    /// Game requests (purchases and actions) answered so far, and actions.
    answered: AtomicU64,
    answered_actions: AtomicU64,
    /// The steady window's start: every player registered.
    all_registered: OnceLock<Instant>,
    /// Its end: the first player to find no game left (or the deadline),
    /// with `answered` and `answered_actions` at that moment.
    budget_spent: OnceLock<(Instant, u64, u64)>,
    /// Operator mode: the keys that sign the players' launches.
    launch_keys: Option<wallet::Keys>,
    /// `--idempotency-keys`: the run's prefix of its purchases' keys (its
    /// process and start, so that two runs on one database never share a
    /// key: a player launched again by a later run is the same player).
    purchase_keys: Option<String>,
    /// Purchases sent so far (each key's number).
    purchases_sent: AtomicU64,
    /// `--shadow-wallet`: the operator mode's wallet calls, sent beside the run.
    shadow: Option<shadow::Shadow>,
}

impl Shared {
    /// A run of `players` with `games` to play before `deadline`, paced
    /// every `interval` per player when given.
    fn new(
        addr: String,
        url: String,
        games: i64,
        deadline: Instant,
        interval: Option<Duration>,
        players: usize,
    ) -> Shared {
        Shared {
            addr,
            url,
            games_left: AtomicI64::new(games),
            deadline,
            started: AtomicU64::new(0),
            interval,
            timeline_from: None,
            ready: tokio::sync::Barrier::new(players),
            answered: AtomicU64::new(0),
            answered_actions: AtomicU64::new(0),
            all_registered: OnceLock::new(),
            budget_spent: OnceLock::new(),
            launch_keys: None,
            purchase_keys: None,
            purchases_sent: AtomicU64::new(0),
            shadow: None,
        }
    }

    /// A game request answered, counted for the steady window.
    fn answered(&self, action: bool) {
        self.answered.fetch_add(1, Ordering::Relaxed);
        if action {
            self.answered_actions.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The steady window ends (the first call counts).
    fn budget_spent(&self) {
        self.budget_spent.get_or_init(|| {
            (Instant::now(), self.answered.load(Ordering::Relaxed), self.answered_actions.load(Ordering::Relaxed))
        });
    }

    /// Whether a request sent now falls inside the steady window.
    fn steady(&self) -> bool {
        self.budget_spent.get().is_none()
    }
}

/// One player's HTTP/1.1 connection, kept alive from request to request,
/// opened again after an error.
struct Conn {
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Conn {
    async fn open(addr: &str) -> anyhow::Result<SendRequest<Full<Bytes>>> {
        let stream = tokio::net::TcpStream::connect(addr).await.with_context(|| format!("cannot connect to {addr}"))?;
        stream.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            // Ends when the sender is dropped or the server closes.
            let _ = conn.await;
        });
        Ok(sender)
    }

    /// Sends a request (a POST when `body` is given): the status and the
    /// answer's bytes, with latency counted from `t0`.
    async fn send(
        &mut self,
        s: &Shared,
        path: &str,
        token: Option<&str>,
        key: Option<&str>,
        body: Option<String>,
        t0: Instant,
    ) -> anyhow::Result<(u16, Bytes, u32)> {
        let result = self.try_send(s, path, token, key, body).await;
        if result.is_err() {
            // A broken connection is not reused.
            self.sender = None;
        }
        let (status, bytes) = result.with_context(|| path.to_string())?;
        let us = t0.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
        Ok((status, bytes, us))
    }

    async fn try_send(
        &mut self,
        s: &Shared,
        path: &str,
        token: Option<&str>,
        key: Option<&str>,
        body: Option<String>,
    ) -> anyhow::Result<(u16, Bytes)> {
        let sender = match &mut self.sender {
            Some(sender) => sender,
            None => self.sender.insert(Conn::open(&s.addr).await?),
        };
        sender.ready().await?;
        let mut req = hyper::Request::builder().uri(path).header(HOST, s.addr.as_str());
        if let Some(t) = token {
            req = req.header(AUTHORIZATION, format!("Bearer {t}"));
        }
        if let Some(k) = key {
            req = req.header("idempotency-key", k);
        }
        let req = match body {
            Some(b) => req.method("POST").header(CONTENT_TYPE, "application/json").body(Full::new(Bytes::from(b)))?,
            None => req.method("GET").body(Full::new(Bytes::new()))?,
        };
        let resp = sender.send_request(req).await?;
        let status = resp.status().as_u16();
        let bytes = resp.into_body().collect().await?.to_bytes();
        Ok((status, bytes))
    }
}

/// What the load generator reads of an answer: its ticket.
#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    ticket: TicketState<'a>,
}

/// The fields of a ticket that the player plays with.
#[derive(Deserialize)]
struct TicketState<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow, default)]
    serial: Cow<'a, str>,
    #[serde(default)]
    price_cents: Option<i64>,
    seq: u64,
    #[serde(borrow)]
    phase: Cow<'a, str>,
    #[serde(borrow, default)]
    hand: Vec<Cow<'a, str>>,
    result: Option<Prize>,
}

#[derive(Deserialize)]
struct Prize {
    prize_cents: i64,
}

/// The answer's text, for an error message.
fn text(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(&bytes[..bytes.len().min(500)])
}

/// Percentile `p` (0..=100) of sorted microseconds, in milliseconds.
fn percentile_ms(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    f64::from(sorted[rank.clamp(1, sorted.len()) - 1]) / 1000.0
}

/// p50, p90, p99 and max of a set of latencies, in milliseconds.
struct Latencies([f64; 4]);

/// Sorts `us` and takes its percentiles.
fn latencies(us: &mut [u32]) -> Latencies {
    us.sort_unstable();
    Latencies([50.0, 90.0, 99.0, 100.0].map(|p| percentile_ms(us, p)))
}

impl Latencies {
    fn json(&self) -> serde_json::Value {
        let [p50, p90, p99, max] = self.0;
        json!({"p50": p50, "p90": p90, "p99": p99, "max": max})
    }
}

impl std::fmt::Display for Latencies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [p50, p90, p99, max] = self.0;
        write!(f, "p50 {p50:.2}  p90 {p90:.2}  p99 {p99:.2}  max {max:.2}")
    }
}

/// The `--timeline` CSV: one line per window that had actions.
fn timeline_csv(timeline: &mut [(u32, u32, u32)]) -> String {
    timeline.sort_unstable();
    let mut csv = String::from("start_s,actions,p50_ms,p99_ms,max_ms,sent_late_p99_ms,sent_late_max_ms\n");
    for window in timeline.chunk_by_mut(|a, b| a.0 == b.0) {
        let start = f64::from(window[0].0) * TIMELINE_WINDOW.as_secs_f64();
        let mut us: Vec<u32> = window.iter().map(|&(_, us, _)| us).collect();
        let mut late: Vec<u32> = window.iter().map(|&(_, _, late)| late).collect();
        let Latencies([p50, _, p99, max]) = latencies(&mut us);
        let Latencies([_, _, late99, late_max]) = latencies(&mut late);
        csv.push_str(&format!("{start:.1},{},{p50:.2},{p99:.2},{max:.2},{late99:.2},{late_max:.2}\n", us.len()));
    }
    csv
}

/// A player's session: registered, or, in operator mode, launched by the
/// operator (a signed launch, then the page's exchange of its one-time
/// code) as player `index`.
async fn session(s: &Shared, c: &mut Conn, t: &mut Tally, index: usize) -> anyhow::Result<String> {
    let Some(keys) = &s.launch_keys else { return register(s, c, t).await };
    let launch = operator::launch(&s.url, keys, &operator_mode::OperatorSide::launch_request(index))
        .await
        .context("the operator's launch")?;
    let body = json!({"code": launch.code}).to_string();
    let (status, bytes, _) = c.send(s, "/api/launch", None, None, Some(body), Instant::now()).await?;
    anyhow::ensure!(status == 200, "POST /api/launch answered {status}: {}", text(&bytes));
    t.players += 1;
    #[derive(Deserialize)]
    struct Launched {
        token: String,
    }
    Ok(serde_json::from_slice::<Launched>(&bytes).context("no token")?.token)
}

async fn register(s: &Shared, c: &mut Conn, t: &mut Tally) -> anyhow::Result<String> {
    let body = json!({"name": "loadtest"}).to_string();
    let (status, bytes, _) = c.send(s, "/api/players", None, None, Some(body), Instant::now()).await?;
    anyhow::ensure!(status == 201, "POST /api/players answered {status}: {}", text(&bytes));
    t.players += 1;
    #[derive(Deserialize)]
    struct Created {
        token: String,
    }
    Ok(serde_json::from_slice::<Created>(&bytes).context("no token")?.token)
}

/// One player: games one after another until none is left.
async fn player(s: Arc<Shared>, index: usize, players: usize) -> Tally {
    let mut t = Tally::default();
    let mut conn = Conn { sender: None };
    let registered = session(&s, &mut conn, &mut t, index).await;
    // Every player connects and registers first, then all start together
    // (one that failed too, so that no one waits for it): a paced player's
    // first slots must not be charged the time the others took to connect
    // and register. Paced players start spread over one interval.
    s.ready.wait().await;
    s.all_registered.get_or_init(Instant::now);
    let offset = s.interval.map(|i| i.mul_f64(index as f64 / players as f64)).unwrap_or_default();
    let mut pace = Pace { interval: s.interval, next: Instant::now() + offset };
    let mut token = match registered {
        Ok(tok) => tok,
        Err(e) => {
            t.error(format!("{e:#}"));
            return t;
        }
    };
    while Instant::now() < s.deadline && s.games_left.fetch_sub(1, Ordering::Relaxed) > 0 {
        s.started.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = game(&s, &mut conn, &mut t, &mut token, &mut pace, index).await {
            t.error(format!("{e:#}"));
        }
    }
    s.budget_spent();
    t
}

async fn game(
    s: &Shared,
    c: &mut Conn,
    t: &mut Tally,
    token: &mut String,
    pace: &mut Pace,
    index: usize,
) -> anyhow::Result<()> {
    let at = pace.slot().await;
    let key = |s: &Shared| {
        let n = s.purchases_sent.fetch_add(1, Ordering::Relaxed);
        s.purchase_keys.as_ref().map(|prefix| format!("{prefix}-{n}"))
    };
    let (mut status, mut bytes, mut us) =
        c.send(s, "/api/tickets", Some(token), key(s).as_deref(), Some("{}".into()), at).await?;
    if status == 402 && s.launch_keys.is_none() {
        // Out of play money: a new player takes over.
        *token = register(s, c, t).await?;
        (status, bytes, us) =
            c.send(s, "/api/tickets", Some(token), key(s).as_deref(), Some("{}".into()), Instant::now()).await?;
    }
    anyhow::ensure!(status == 201, "POST /api/tickets answered {status}: {}", text(&bytes));
    s.answered(false);
    t.purchases += 1;
    t.purchase_us.push(us);
    let bought = serde_json::from_slice::<Answer>(&bytes).context("a purchase's answer")?.ticket;
    let id = bought.id.into_owned();
    t.price_cents = t.price_cents.or(bought.price_cents);
    let serial = bought.serial.into_owned();
    if let (Some(shadow), Some(price)) = (&s.shadow, bought.price_cents) {
        shadow.send(wallet::TxKind::Debit, &serial, operator_mode::player_ref(index), price);
    }
    if s.launch_keys.is_some() {
        t.purchases_seen.push(operator_mode::Purchase { serial: serial.clone(), at, us });
    }
    let path = format!("/api/tickets/{id}/actions");
    let mut answered = Instant::now();
    loop {
        let answer: Answer = serde_json::from_slice(&bytes).with_context(|| format!("an answer: {}", text(&bytes)))?;
        let ticket = answer.ticket;
        let seq = ticket.seq;
        let body = match &*ticket.phase {
            "finished" => {
                t.finished += 1;
                if let Some(prize) = ticket.result.filter(|r| r.prize_cents > 0) {
                    t.won += 1;
                    t.won_cents += prize.prize_cents;
                    if let Some(shadow) = &s.shadow {
                        shadow.send(
                            wallet::TxKind::Credit,
                            &serial,
                            operator_mode::player_ref(index),
                            prize.prize_cents,
                        );
                    }
                }
                return Ok(());
            }
            "play" => {
                // Any order gives the same odds (docs/rules.md); play the highest card.
                let card = ticket.hand.last().context("hand")?;
                json!({"seq": seq, "action": "play", "card": card}).to_string()
            }
            _ => json!({"seq": seq, "action": "draw"}).to_string(),
        };
        let at = pace.slot().await;
        let steady = s.steady();
        // Late through the load generator's own fault: after both the slot
        // and the previous answer (its timer or its threads waited).
        let late = Instant::now().saturating_duration_since(at.max(answered));
        let (status, next, us) = c.send(s, &path, Some(token), None, Some(body), at).await?;
        answered = Instant::now();
        anyhow::ensure!(status == 200, "POST {path} answered {status}: {}", text(&next));
        s.answered(true);
        t.actions += 1;
        t.action_us.push(us);
        if steady {
            t.steady_action_us.push(us);
        }
        if let Some(from) = s.timeline_from {
            let window = at.saturating_duration_since(from).as_nanos() / TIMELINE_WINDOW.as_nanos();
            let late = late.as_micros().min(u128::from(u32::MAX)) as u32;
            t.timeline.push((u32::try_from(window).unwrap_or(u32::MAX), us, late));
        }
        bytes = next;
    }
}

pub fn run(args: LoadtestArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.players >= 1, "--players must be at least 1");
    if let Some(r) = args.rate {
        anyhow::ensure!(r.is_finite() && r > 0.0, "--rate must be a positive number of requests per second");
    }
    anyhow::ensure!(
        !(args.shadow_wallet && args.wallet == WalletKind::Operator),
        "--shadow-wallet is for the internal mode: in the operator mode the server makes the wallet's calls"
    );
    let keys = match (args.wallet, args.shadow_wallet) {
        (WalletKind::Internal, false) => None,
        (WalletKind::Internal, true) => match args.operator_keys.clone() {
            Some(keys) => Some(keys),
            None => {
                // No server checks these: fresh keys for the shadow's calls alone.
                let mut key = [0u8; 32];
                std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut key)?;
                Some(format!("shadow:{}", hex::encode(key)))
            }
        },
        (WalletKind::Operator, _) => Some(args.operator_keys.clone().context(
            "--wallet operator needs --operator-keys (or AS_CAPONE_OPERATOR_KEYS), the keys the server was given",
        )?),
    };
    let side = match keys {
        None => None,
        Some(keys) => Some(operator_mode::OperatorSide::start(
            args.operator_listen,
            &keys,
            args.wallet_delay_ms,
            args.players,
            args.operator_ledger_dir.as_deref(),
        )?),
    };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(args.threads.max(1)).enable_all().build()?;
    let result = rt.block_on(run_async(args, side.as_ref()));
    // The runtime first (its players' connections), then the operator.
    drop(rt);
    drop(side);
    result
}

/// Operator mode: the wallet's side of the run, added to the report.
struct WalletReport {
    json: serde_json::Value,
    lines: Vec<String>,
    problem: Option<String>,
}

/// The wallet's latencies, each purchase split around its debit, and the
/// operator's ledger checked against what the players saw.
async fn wallet_report(side: &operator_mode::OperatorSide, total: &Tally, purchase_p99: f64) -> WalletReport {
    // Prizes reach the operator from the server's outbox, after the game:
    // waited for as long as they keep coming.
    let (money, problem) =
        side.check_money(total.purchases, total.price_cents, total.won, total.won_cents, Duration::from_secs(10)).await;
    let mut by_kind = serde_json::Map::new();
    let mut lines = Vec::new();
    let mut debit_p99 = None;
    for (kind, mut us) in side.wallet_us() {
        let l = latencies(&mut us);
        if kind == "debit" {
            debit_p99 = Some(l.0[2]);
        }
        lines.push(format!("wallet {kind} latency ms ({} calls, at the operator): {l}", us.len()));
        by_kind.insert(kind.to_string(), json!({"calls": us.len(), "latency_ms": l.json()}));
    }
    let (mut before, mut after) = side.purchase_split(&total.purchases_seen);
    let mut outside: Vec<u32> = before.iter().zip(&after).map(|(b, a)| b + a).collect();
    let (b, a, o) = (latencies(&mut before), latencies(&mut after), latencies(&mut outside));
    lines.push(format!("purchase before its debit left ms (reservation): {b}"));
    lines.push(format!("purchase after its debit's answer ms (settlement, answer): {a}"));
    lines.push(format!("purchase outside the wallet ms (both): {o}"));
    let bound = debit_p99.map(|p| p + 10.0);
    let within = bound.map(|b| purchase_p99 <= b);
    if let (Some(bound), Some(within)) = (bound, within) {
        lines.push(format!(
            "purchase p99 {purchase_p99:.2} ms {} the wallet's debit p99 + 10 ms = {bound:.2} ms",
            if within { "<=" } else { "> (not met)" }
        ));
    }
    let cpu = operator_mode::operator_cpu_seconds();
    if let Some(cpu) = cpu {
        lines.push(format!(
            "the operator's side (reference operator, its ledger, the proxy) used {cpu:.2} s of CPU in this process"
        ));
    }
    lines.push(format!("operator's ledger: {money}"));
    WalletReport {
        json: json!({
            "delay_ms": side.delay_ms,
            "calls": by_kind,
            "purchase_split_ms": {"before_debit": b.json(), "after_debit": a.json(), "outside_wallet": o.json(), "purchases": outside.len()},
            "purchase_p99_bound_ms": bound,
            "purchase_p99_within_bound": within,
            "ledger": money,
            "operator_cpu_s": cpu,
        }),
        lines,
        problem,
    }
}

async fn run_async(args: LoadtestArgs, side: Option<&operator_mode::OperatorSide>) -> anyhow::Result<()> {
    let url = args.url.trim_end_matches('/').to_string();
    let uri: hyper::Uri = url.parse().with_context(|| format!("bad URL {url}"))?;
    anyhow::ensure!(
        uri.scheme_str() == Some("http") && uri.path() == "/",
        "the load generator speaks plain HTTP/1.1 to a server's root: http://HOST:PORT, not {url}"
    );
    let host = uri.host().context("a URL with a host")?;
    let addr = format!("{host}:{}", uri.port_u16().unwrap_or(80));
    let probe = Shared::new(addr.clone(), url.clone(), 0, Instant::now(), None, 1);
    let (status, _, _) = Conn { sender: None }
        .send(&probe, "/healthz", None, None, None, Instant::now())
        .await
        .with_context(|| format!("cannot reach {url}"))?;
    anyhow::ensure!((200..300).contains(&status), "{url}/healthz answered {status}");
    let started = Instant::now();
    let mut shared = Shared::new(
        addr,
        url,
        i64::try_from(args.games).unwrap_or(i64::MAX),
        started + Duration::from_secs(args.max_seconds),
        args.rate.map(|r| Duration::from_secs_f64(args.players as f64 / r)),
        args.players,
    );
    shared.timeline_from = args.timeline.as_ref().map(|_| started);
    if args.wallet == WalletKind::Operator {
        shared.launch_keys = side.map(|o| o.keys.clone());
    }
    if let (true, Some(side)) = (args.shadow_wallet, side) {
        shared.shadow = Some(shadow::Shadow::new(&format!("http://{}", args.operator_listen), side.keys.clone())?);
    }
    shared.purchase_keys = args.idempotency_keys.then(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        format!("loadtest-{}-{}", std::process::id(), now.as_nanos())
    });
    let shared = Arc::new(shared);
    let tasks: Vec<_> = (0..args.players).map(|i| tokio::spawn(player(shared.clone(), i, args.players))).collect();
    let mut total = Tally::default();
    for task in tasks {
        total.merge(task.await?);
    }
    let seconds = started.elapsed().as_secs_f64();
    shared.budget_spent();
    let (end, steady_requests, steady_actions) = *shared.budget_spent.get().expect("set just above");
    let steady_seconds = shared.all_registered.get().map_or(0.0, |t0| end.saturating_duration_since(*t0).as_secs_f64());
    let per_s = |n: u64| if steady_seconds > 0.0 { n as f64 / steady_seconds } else { 0.0 };
    let requests = total.actions + total.purchases + total.players;
    let (a, sa, p) =
        (latencies(&mut total.action_us), latencies(&mut total.steady_action_us), latencies(&mut total.purchase_us));
    if let Some(path) = &args.timeline {
        std::fs::write(path, timeline_csv(&mut total.timeline))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let wallet = match side {
        Some(side) if args.wallet == WalletKind::Operator => Some(wallet_report(side, &total, p.0[2]).await),
        _ => None,
    };
    let shadow = match &shared.shadow {
        Some(sh) => Some(sh.finish().await),
        None => None,
    };
    let mut report = json!({
        "url": shared.url,
        "players": args.players,
        "rate": args.rate,
        "idempotency_keys": args.idempotency_keys,
        "games": total.finished,
        "games_won": total.won,
        "actions": total.actions,
        "purchases": total.purchases,
        "registrations": total.players,
        "errors": total.errors,
        "seconds": seconds,
        "actions_per_s": total.actions as f64 / seconds,
        "requests_per_s": requests as f64 / seconds,
        "latency_ms": a.json(),
        "steady": {
            "seconds": steady_seconds,
            "requests_per_s": per_s(steady_requests),
            "actions_per_s": per_s(steady_actions),
            "latency_ms": sa.json(),
        },
        "purchase_latency_ms": p.json(),
        "wallet_mode": match args.wallet { WalletKind::Internal => "internal", WalletKind::Operator => "operator" },
    });
    if let Some(w) = &wallet {
        report["wallet"] = w.json.clone();
    }
    if let Some((json, _)) = &shadow {
        report["shadow_wallet"] = json.clone();
    }
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
        println!("action latency ms: {a}");
        println!(
            "steady window ({steady_seconds:.2} s, every player registered until the games ran out): {:.0} game \
             requests/s, {:.0} actions/s, action latency ms: {sa}",
            per_s(steady_requests),
            per_s(steady_actions),
        );
        println!("purchase latency ms: {p}");
        for line in wallet.iter().flat_map(|w| &w.lines) {
            println!("{line}");
        }
        if let Some((json, _)) = &shadow {
            println!("shadow wallet calls (the operator mode's, sent beside the run): {json}");
        }
    }
    if let Some(e) = &total.first_error {
        eprintln!("first error: {e}");
    }
    anyhow::ensure!(total.errors == 0, "{} requests failed", total.errors);
    if let Some(problem) = wallet.and_then(|w| w.problem) {
        anyhow::bail!("the operator's ledger does not match the run: {problem}");
    }
    if let Some(problem) = shadow.and_then(|(_, p)| p) {
        anyhow::bail!("{problem}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Pace, TIMER_SLACK, percentile_ms};
    use std::time::{Duration, Instant};

    /// A paced request is measured from its slot, or from when it went out
    /// if that is earlier: a late player is charged from the slot (no
    /// coordinated omission), an early one is not charged the timer's tick.
    #[tokio::test]
    async fn a_paced_request_counts_from_its_slot_or_its_earlier_sending() {
        let interval = Duration::from_millis(5);
        let first = Instant::now() + Duration::from_millis(3);
        let mut pace = Pace { interval: Some(interval), next: first };
        let mut before_the_slot = 0;
        for k in 0..20u32 {
            let at = first + interval * k;
            let start = pace.slot().await;
            let sent = Instant::now();
            assert!(start <= at && start <= sent, "slot {k}: counted from later than the slot or the sending");
            assert!(start + TIMER_SLACK >= at, "slot {k}: sent earlier than the timer's slack before its slot");
            before_the_slot += usize::from(start < at);
        }
        // The timer fires after its deadline: sleeping until the slot itself
        // would never send before it.
        assert!(before_the_slot > 0, "no request went out before its slot");
        // Behind schedule (the previous answer came late): counted from the slot.
        let late = Instant::now() - Duration::from_millis(40);
        let mut pace = Pace { interval: Some(interval), next: late };
        assert_eq!(pace.slot().await, late);
        assert_eq!(pace.slot().await, late + interval);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u32> = (1..=100).map(|i| i * 1000).collect();
        assert_eq!(percentile_ms(&v, 50.0), 50.0);
        assert_eq!(percentile_ms(&v, 99.0), 99.0);
        assert_eq!(percentile_ms(&v, 100.0), 100.0);
        assert_eq!(percentile_ms(&[], 50.0), 0.0);
    }
}
