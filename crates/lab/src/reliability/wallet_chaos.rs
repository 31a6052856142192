//! `as-capone reliability wallet-chaos`: the operator mode under chaos
//! (issue 28, "What must hold"; docs/operator-integration.md).
//!
//! The reference operator (crate `as-capone-operator`, its own SQLite
//! ledger) runs as a child process (this executable's hidden
//! `reference-operator` subcommand, or `--operator-bin`) with its chaos
//! switch on: delays, 5xx answered
//! without applying, answers dropped after the call was applied and
//! committed, duplicate deliveries, a skewed clock. Our server runs in
//! operator mode against it (`--wallet operator`): one process on SQLite,
//! two processes on one PostgreSQL database. Players are created at the
//! operator, launched the way an operator launches them (a signed
//! `POST /api/operator/launch`, its signed answer checked, then the page's
//! `POST /api/launch` with the one-time code), and buy and play tickets to
//! the end, several at once. Besides the players who never run out, three
//! players meet the operator's refusals: one blocked, one with little
//! money, one with a weekly stake limit.
//!
//! While they play, our server processes are SIGKILLed `--wallet-kills`
//! times and the operator `--operator-kills` times, each at a random moment
//! (a random count of tickets sold, then a random delay), and restarted on
//! the same databases. A request our server died under is sent again,
//! identical (the same `Idempotency-Key`, the same action); a purchase
//! answered 503 `wallet_unavailable` (outcome unknown: rolled back, not
//! sold) or refused (402) is tried again as a new purchase; one answered
//! 409 because the debit of its first attempt is still being settled is
//! sent again, the same, a moment later.
//!
//! After `--rounds` tickets are sold and played, chaos is switched off and
//! the run waits until no round of ours is unresolved and every server's
//! prize outbox is empty (`as_capone_wallet_outbox_depth` on `/metrics`).
//! Then:
//! - the reconciliation (`as-capone reconcile`'s code, `strict`) of the
//!   whole run must be clean;
//! - no double debit: at most one standing debit per ticket, whatever its
//!   rounds;
//! - no debit without a ticket: every standing debit is a ticket a player
//!   was answered 201 for, of that player and of the ticket's price;
//! - no ticket without a debit: every ticket a player holds has exactly
//!   one standing debit;
//! - every prize credited exactly once: each finished ticket's prize, as
//!   its player saw it, is one credit of that amount, and nothing else is
//!   credited;
//! - the operator's ledger is balanced (`GET /admin/summary`), and every
//!   player's balance there is its start minus its standing debits plus its
//!   credits, and what our `/api/me` shows.
//!
//! Figures: rounds sold and released, kills, chaos counts (summed over the
//! operator's lives), refusals by code, purchases answered
//! `wallet_unavailable`, rollbacks, the wait for settlement, time.

use super::{Backend, Database, OPERATOR_TOKEN, ReliabilityArgs, Rng, next_action, start_server};
use crate::reconcile::{fetch_rounds, fetch_transactions, now_ms, reconcile_period};
use anyhow::Context;
use math::table::REGULATION_PRICE_CENTS;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use wallet::reconcile::{OurRound, RoundState};
use wallet::sign::Covered;
use wallet::{Keys, LaunchAnswer, LaunchRequest, OperatorTransaction, RoundId, Signed, TxKind, paths};

/// The keys shared by our server and the reference operator in these runs.
pub const KEYS: &str = "chaos:7d3c5a0e9b1f4e2d8c6a4b2e0f1d3c5a7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f";
/// The reference operator's admin token in these runs.
pub const ADMIN_TOKEN: &str = "chaos-operator-admin-token-0123456789";
/// The balance of the players who never run out, in cents.
pub const RICH_CENTS: i64 = 1_000_000_000;
/// The balance of the player who runs out: three tickets.
pub const POOR_CENTS: i64 = 3 * REGULATION_PRICE_CENTS as i64;
/// The weekly stake limit of the limited player: five tickets.
pub const LIMIT_CENTS: i64 = 5 * REGULATION_PRICE_CENTS as i64;
/// Our server's wait for a wallet answer in these runs (ms): short, so that
/// answers the operator holds (a dropped answer) become unknown quickly.
const WALLET_TIMEOUT_MS: u64 = 2000;
/// A player that cannot reach its server for this long fails the run.
const STUCK: Duration = Duration::from_secs(180);
/// The longest wait for every round to settle once the play ends.
const SETTLE: Duration = Duration::from_secs(240);

/// Who a client player is, at the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Never runs out: every purchase is sold, or unknown (503), never refused.
    Rich,
    /// Blocked at the operator: every purchase refused `player_blocked`.
    Blocked,
    /// Three tickets' worth: refused `insufficient_funds` once spent.
    Poor,
    /// A weekly stake limit of five tickets: refused `limit_reached`.
    Limited,
}

impl Kind {
    fn refusal(self) -> Option<&'static str> {
        match self {
            Kind::Rich => None,
            Kind::Blocked => Some(wallet::errors::PLAYER_BLOCKED),
            Kind::Poor => Some(wallet::errors::INSUFFICIENT_FUNDS),
            Kind::Limited => Some(wallet::errors::LIMIT_REACHED),
        }
    }

    fn start_cents(self) -> i64 {
        match self {
            Kind::Rich | Kind::Blocked | Kind::Limited => RICH_CENTS,
            Kind::Poor => POOR_CENTS,
        }
    }
}

/// A ticket a player was answered 201 for, and its prize once finished.
#[derive(Debug, Clone)]
struct Held {
    player: String,
    serial: String,
    price_cents: i64,
    /// `Some` once the ticket is finished (0: no prize).
    prize_cents: Option<i64>,
}

#[derive(Default)]
struct Counters {
    launches: AtomicU64,
    relaunches: AtomicU64,
    purchases_sold: AtomicU64,
    purchases_unknown_503: AtomicU64,
    purchases_pending_409: AtomicU64,
    actions: AtomicU64,
    connection_errors: AtomicU64,
    resent: AtomicU64,
    server_errors: AtomicU64,
    unexpected: AtomicU64,
}

struct Shared {
    /// The current URL of each of our server processes.
    urls: Vec<RwLock<String>>,
    keys: Keys,
    stop: AtomicBool,
    counters: Counters,
    refusals: Mutex<BTreeMap<String, u64>>,
    held: Mutex<Vec<Held>>,
    failures: Mutex<Vec<String>>,
}

impl Shared {
    fn fail(&self, what: String) {
        let mut f = self.failures.lock().unwrap();
        if f.len() < 40 {
            eprintln!("  FAIL {what}");
            f.push(what);
        }
    }

    fn url(&self, server: usize) -> String {
        self.urls[server].read().unwrap().clone()
    }
}

fn client() -> reqwest::Client {
    // Longer than our server's wallet timeout and its retries of a purchase.
    reqwest::Client::builder().timeout(Duration::from_secs(30)).build().expect("http client")
}

/// What went wrong with a request to our server.
enum Trouble {
    /// No answer (the process is down or died under it): try again.
    Down,
    /// The session is gone or the launch code is spent: launch again.
    Relaunch(String),
    /// Anything else: a failure of the run.
    Failed(String),
}

async fn send(
    c: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: Option<&str>,
    body: Option<Vec<u8>>,
    idem: Option<&str>,
) -> Result<(u16, Vec<u8>), Trouble> {
    super::kills::send(c, method, url, token, body, idem).await.map_err(|_| Trouble::Down)
}

fn short(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(300)]).into_owned()
}

/// Launches `player` as the operator does, then exchanges the one-time
/// code as the page does; the session's bearer token.
async fn launch(c: &reqwest::Client, url: &str, keys: &Keys, player: &str) -> Result<String, Trouble> {
    let request = LaunchRequest {
        player: player.to_string(),
        currency: wallet::CURRENCY.into(),
        language: "fr".into(),
        country: Some("FR".into()),
        flags: Default::default(),
        lobby_url: None,
    };
    let body = serde_json::to_vec(&request).map_err(|e| Trouble::Failed(e.to_string()))?;
    let signed = keys.sign(Covered::Request { method: "POST", path: paths::LAUNCH }, &body, now_ms());
    let mut r = c.post(format!("{url}{}", paths::LAUNCH)).header("content-type", "application/json").body(body);
    for (name, value) in signed.headers() {
        r = r.header(name, value);
    }
    let resp = r.send().await.map_err(|_| Trouble::Down)?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp.bytes().await.map_err(|_| Trouble::Down)?;
    if status >= 500 {
        return Err(Trouble::Failed(format!("launch: {status} {}", short(&bytes))));
    }
    Signed::from_headers(|n| headers.get(n).and_then(|v| v.to_str().ok()))
        .and_then(|s| {
            let covered = Covered::Answer { method: "POST", path: paths::LAUNCH, status, request_nonce: &signed.nonce };
            keys.verify(covered, &bytes, &s, now_ms())
        })
        .map_err(|e| Trouble::Failed(format!("launch: {status}, the answer's signature: {e}")))?;
    if status != 200 {
        return Err(Trouble::Failed(format!("launch: {status} {}", short(&bytes))));
    }
    let launched: LaunchAnswer =
        serde_json::from_slice(&bytes).map_err(|e| Trouble::Failed(format!("launch answer: {e}")))?;
    let exchange = serde_json::to_vec(&json!({ "code": launched.code })).unwrap_or_default();
    match send(c, reqwest::Method::POST, format!("{url}/api/launch"), None, Some(exchange), None).await? {
        (200, b) => {
            let v: Value = serde_json::from_slice(&b).unwrap_or_default();
            if v["player"] != player {
                return Err(Trouble::Failed(format!("launch of {player}: the session is {}'s", v["player"])));
            }
            v["token"].as_str().map(str::to_string).ok_or_else(|| Trouble::Failed(format!("launch: {}", short(&b))))
        }
        // The code was spent by an exchange whose answer was lost (our server died).
        (401, b) => Err(Trouble::Relaunch(short(&b))),
        (s, b) => Err(Trouble::Failed(format!("POST /api/launch: {s} {}", short(&b)))),
    }
}

/// One client player: launched, then buying and playing tickets until the
/// run has sold enough (or, for the refused players, until refused three
/// times), resending what our server died under.
async fn player(shared: Arc<Shared>, server: usize, name: String, kind: Kind, seed: u64) {
    let c = client();
    let mut rng = Rng::new(seed);
    let ctr = &shared.counters;
    let mut token: Option<String> = None;
    let mut ticket: Option<Value> = None;
    let mut buying: Option<String> = None;
    let mut acting: Option<(String, u64, Vec<u8>)> = None;
    let mut refused = 0u32;
    let mut bought = 0u32;
    let mut down_since: Option<Instant> = None;
    let mut settling_since: Option<Instant> = None;
    loop {
        // The refused players play on until refused three times (the poor
        // one may win its money back for a while), at most 300 tickets.
        let done = match kind {
            Kind::Rich => shared.stop.load(Ordering::Relaxed),
            _ => refused >= 3 || bought >= 300,
        };
        if ticket.is_none() && buying.is_none() && done {
            return;
        }
        let url = shared.url(server);
        let step: Result<(), Trouble> = async {
            let Some(tok) = token.clone() else {
                let t = launch(&c, &url, &shared.keys, &name).await?;
                ctr.launches.fetch_add(1, Ordering::Relaxed);
                token = Some(t);
                return Ok(());
            };
            if ticket.is_none() {
                let key = buying.get_or_insert_with(|| rng.hex(16)).clone();
                let (s, b) =
                    send(&c, reqwest::Method::POST, format!("{url}/api/tickets"), Some(&tok), None, Some(&key)).await?;
                let v: Value = serde_json::from_slice(&b).unwrap_or_default();
                let error = v["error"].as_str().unwrap_or_default().to_string();
                if s != 409 {
                    settling_since = None;
                }
                match s {
                    201 => {
                        let t = v["ticket"].clone();
                        let serial = t["serial"].as_str().unwrap_or_default().to_string();
                        if serial.is_empty() {
                            return Err(Trouble::Failed(format!("a ticket without a serial: {}", short(&b))));
                        }
                        ctr.purchases_sold.fetch_add(1, Ordering::Relaxed);
                        bought += 1;
                        let price = t["price_cents"].as_i64().unwrap_or(REGULATION_PRICE_CENTS as i64);
                        shared.held.lock().unwrap().push(Held {
                            player: name.clone(),
                            serial,
                            price_cents: price,
                            prize_cents: None,
                        });
                        ticket = Some(t);
                        buying = None;
                    }
                    402 => {
                        *shared.refusals.lock().unwrap().entry(error.clone()).or_default() += 1;
                        buying = None;
                        refused += 1;
                        if kind.refusal() != Some(error.as_str()) {
                            ctr.unexpected.fetch_add(1, Ordering::Relaxed);
                            return Err(Trouble::Failed(format!("{name} ({kind:?}) refused: {}", short(&b))));
                        }
                    }
                    503 if error == "wallet_unavailable" => {
                        // Unknown outcome: rolled back, the ticket not sold; a new purchase.
                        ctr.purchases_unknown_503.fetch_add(1, Ordering::Relaxed);
                        buying = None;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    // A purchase of this key whose debit is still being
                    // settled (the first attempt died with our server):
                    // the same key again in a moment.
                    409 if error == "conflict"
                        && v["message"].as_str().is_some_and(|m| m.contains("retry in a moment")) =>
                    {
                        ctr.purchases_pending_409.fetch_add(1, Ordering::Relaxed);
                        let since = *settling_since.get_or_insert_with(Instant::now);
                        if since.elapsed() > STUCK {
                            buying = None;
                            settling_since = None;
                            return Err(Trouble::Failed(format!(
                                "{name}: a purchase still settling after {} s",
                                STUCK.as_secs()
                            )));
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    401 => return Err(Trouble::Relaunch(short(&b))),
                    s => {
                        if s >= 500 {
                            ctr.server_errors.fetch_add(1, Ordering::Relaxed);
                        } else {
                            ctr.unexpected.fetch_add(1, Ordering::Relaxed);
                        }
                        buying = None;
                        return Err(Trouble::Failed(format!("{name}: POST /api/tickets: {s} {}", short(&b))));
                    }
                }
                return Ok(());
            }
            let t = ticket.clone().unwrap_or_default();
            let id = t["id"].as_str().unwrap_or_default().to_string();
            if t["phase"] == "finished" {
                let prize = t["result"]["prize_cents"].as_i64().unwrap_or(0);
                let serial = t["serial"].as_str().unwrap_or_default();
                let mut held = shared.held.lock().unwrap();
                if let Some(h) = held.iter_mut().rev().find(|h| h.serial == serial) {
                    h.prize_cents = Some(prize);
                }
                ticket = None;
                return Ok(());
            }
            let (seq, body) = match &acting {
                Some((pid, seq, body)) if *pid == id => {
                    ctr.resent.fetch_add(1, Ordering::Relaxed);
                    (*seq, body.clone())
                }
                _ => {
                    let a = next_action(&t);
                    let body = serde_json::to_vec(&a).unwrap_or_default();
                    let seq = a["seq"].as_u64().unwrap_or(0);
                    acting = Some((id.clone(), seq, body.clone()));
                    (seq, body)
                }
            };
            let path = format!("{url}/api/tickets/{id}/actions");
            match send(&c, reqwest::Method::POST, path, Some(&tok), Some(body), None).await? {
                (200, b) => {
                    let v: Value = serde_json::from_slice(&b).unwrap_or_default();
                    ctr.actions.fetch_add(1, Ordering::Relaxed);
                    ticket = Some(v["ticket"].clone());
                    acting = None;
                    Ok(())
                }
                (401, b) => Err(Trouble::Relaunch(short(&b))),
                (s, b) => {
                    if s >= 500 {
                        ctr.server_errors.fetch_add(1, Ordering::Relaxed);
                    } else {
                        ctr.unexpected.fetch_add(1, Ordering::Relaxed);
                    }
                    acting = None;
                    // Resynchronise on the ticket as stored.
                    if let Ok((200, b)) =
                        send(&c, reqwest::Method::GET, format!("{url}/api/tickets/{id}"), Some(&tok), None, None).await
                    {
                        let v: Value = serde_json::from_slice(&b).unwrap_or_default();
                        ticket = Some(v["ticket"].clone());
                    }
                    Err(Trouble::Failed(format!("{name}: ticket {id} seq {seq}: {s} {}", short(&b))))
                }
            }
        }
        .await;
        match step {
            Ok(()) => down_since = None,
            Err(Trouble::Down) => {
                ctr.connection_errors.fetch_add(1, Ordering::Relaxed);
                let since = *down_since.get_or_insert_with(Instant::now);
                if since.elapsed() > STUCK {
                    shared.fail(format!("{name}: no answer from server {server} for {} s", STUCK.as_secs()));
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(Trouble::Relaunch(why)) => {
                ctr.relaunches.fetch_add(1, Ordering::Relaxed);
                if token.is_some() {
                    // A session of ours lost: sessions are durable, this is a failure.
                    shared.fail(format!("{name}: the session was refused: {why}"));
                }
                token = None;
            }
            Err(Trouble::Failed(what)) => {
                shared.fail(what);
                if shared.failures.lock().unwrap().len() >= 40 {
                    return; // the run has failed: no endless loop on a failure that repeats
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// The reference operator as a child process on a fixed address, so that
/// our servers find it again after each restart.
struct Operator {
    child: Option<Child>,
    program: (PathBuf, Vec<String>),
    listen: String,
    database: PathBuf,
    log: PathBuf,
    chaos: Vec<String>,
    /// How many times it was started.
    lives: u32,
}

impl Operator {
    fn url(&self) -> String {
        format!("http://{}", self.listen)
    }

    /// Starts it (the same database, the same address, a new chaos seed) and
    /// waits until it prints its address.
    fn start(&mut self, seed: u64) -> anyhow::Result<()> {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log)?;
        let mut last = String::new();
        for attempt in 0..20 {
            let mut child = Command::new(&self.program.0)
                .args(&self.program.1)
                .args(["--listen", &self.listen, "--keys", KEYS, "--admin-token", ADMIN_TOKEN, "--database"])
                .arg(&self.database)
                .args(&self.chaos)
                .args(["--chaos-seed", &seed.wrapping_add(attempt).to_string()])
                .env("RUST_LOG", "warn")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(log.try_clone()?)
                .spawn()
                .with_context(|| format!("starting the reference operator {}", self.program.0.display()))?;
            let stdout = child.stdout.take().context("the operator's stdout")?;
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let mut lines = BufReader::new(stdout).lines();
                let _ = tx.send(lines.next().and_then(Result::ok).unwrap_or_default());
                for _ in lines {} // keep draining
            });
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(line) if line.contains("listening on") => {
                    self.child = Some(child);
                    self.lives += 1;
                    return Ok(());
                }
                other => {
                    // The address not free yet (the killed process's socket), or a slow start.
                    last = format!("{other:?}");
                    let _ = child.kill();
                    let _ = child.wait();
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
        anyhow::bail!("the reference operator did not start ({last}); its log: {}", self.log.display())
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The reference operator's program and the arguments before its own:
/// `--operator-bin`, else this executable's hidden `reference-operator`
/// subcommand ([`OperatorChildArgs`]: the `as-capone-operator` crate's
/// library, the same flags as its binary).
fn operator_program(args: &ReliabilityArgs) -> anyhow::Result<(PathBuf, Vec<String>)> {
    match &args.operator_bin {
        Some(p) => Ok((p.clone(), Vec::new())),
        None => Ok((std::env::current_exe()?, vec!["reference-operator".into()])),
    }
}

/// `as-capone reference-operator` (hidden): the reference operator
/// (crate `as-capone-operator`) in a process of its own, as the wallet
/// chaos starts and SIGKILLs it. The flags are the `as-capone-operator`
/// binary's, so that `--operator-bin` can name either; it prints
/// `listening on http://ADDR` on its first line of standard output.
#[derive(clap::Args, Debug, Clone)]
pub struct OperatorChildArgs {
    /// Where to listen.
    #[arg(long)]
    pub listen: std::net::SocketAddr,
    /// The SQLite ledger (created if missing).
    #[arg(long)]
    pub database: PathBuf,
    /// The keys shared with the game server, `ID:HEX,...`.
    #[arg(long)]
    pub keys: String,
    /// The bearer token of /admin/*.
    #[arg(long)]
    pub admin_token: String,
    /// Chaos: the delay's range in ms, `MIN-MAX`.
    #[arg(long, default_value = "0-0")]
    pub chaos_delay_ms: String,
    /// Chaos: probability of a delay.
    #[arg(long, default_value_t = 0.0)]
    pub chaos_delay_rate: f64,
    /// Chaos: probability of a 500/503 answer without applying.
    #[arg(long, default_value_t = 0.0)]
    pub chaos_error_rate: f64,
    /// Chaos: probability of an applied call whose answer is lost.
    #[arg(long, default_value_t = 0.0)]
    pub chaos_drop_rate: f64,
    /// Chaos: probability of a call processed twice at once.
    #[arg(long, default_value_t = 0.0)]
    pub chaos_duplicate_rate: f64,
    /// Chaos: offset of the operator's clock, in ms.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    pub chaos_skew_ms: i64,
    /// Chaos: the seed of the random stream.
    #[arg(long)]
    pub chaos_seed: Option<u64>,
}

/// Runs the reference operator until SIGTERM, Ctrl-C or SIGKILL.
pub fn reference_operator(a: OperatorChildArgs) -> anyhow::Result<()> {
    let (lo, hi) = a.chaos_delay_ms.split_once('-').unwrap_or((&a.chaos_delay_ms, &a.chaos_delay_ms));
    let range = |s: &str| s.trim().parse::<u64>().map_err(|_| anyhow::anyhow!("--chaos-delay-ms is MIN-MAX in ms"));
    let chaos = operator::ChaosConfig {
        delay_ms: [range(lo)?, range(hi)?],
        delay_rate: a.chaos_delay_rate,
        error_rate: a.chaos_error_rate,
        drop_rate: a.chaos_drop_rate,
        duplicate_rate: a.chaos_duplicate_rate,
        skew_ms: a.chaos_skew_ms,
        seed: a.chaos_seed,
        ..Default::default()
    };
    let keys = Keys::parse(&a.keys).map_err(anyhow::Error::msg)?;
    let mut options = operator::Options::new(a.listen, a.database, keys);
    options.admin_token = Some(a.admin_token);
    options.chaos = chaos;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(async {
        let running = operator::start(options).await?;
        println!("listening on {}", running.url());
        running.run_until_signal().await;
        anyhow::Ok(())
    })
}

/// A free port on 127.0.0.1 (bound, then released for the operator).
fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// An admin call to the reference operator (bearer admin token).
async fn admin(
    c: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Option<Value>,
) -> anyhow::Result<Value> {
    let mut r = c.request(method, &url).bearer_auth(ADMIN_TOKEN);
    if let Some(b) = body {
        r = r.json(&b);
    }
    let resp = r.send().await.with_context(|| url.clone())?;
    let status = resp.status();
    let bytes = resp.bytes().await?;
    anyhow::ensure!(status.is_success(), "{url}: {status} {}", short(&bytes));
    Ok(serde_json::from_slice(&bytes)?)
}

/// The sum of a metric's samples on a Prometheus text page.
fn metric(page: &str, name: &str) -> Option<f64> {
    let mut found = None;
    for line in page.lines().filter(|l| !l.starts_with('#')) {
        let Some(rest) = line.strip_prefix(name) else { continue };
        if !(rest.starts_with(' ') || rest.starts_with('{')) {
            continue;
        }
        if let Some(v) = rest.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()) {
            *found.get_or_insert(0.0) += v;
        }
    }
    found
}

/// Chaos counters of the operator's current life (`GET /admin/chaos`).
async fn chaos_counters(c: &reqwest::Client, op_url: &str) -> anyhow::Result<BTreeMap<String, u64>> {
    let v = admin(c, reqwest::Method::GET, format!("{op_url}/admin/chaos"), None).await?;
    Ok(v["counters"].as_object().into_iter().flatten().filter_map(|(k, x)| Some((k.clone(), x.as_u64()?))).collect())
}

fn add_counts(total: &mut BTreeMap<String, u64>, more: BTreeMap<String, u64>) {
    for (k, v) in more {
        *total.entry(k).or_default() += v;
    }
}

/// The figures the checks after the play found.
#[derive(Default)]
struct Verdict {
    settle_ms: u128,
    reconciliation: Value,
    checks: Vec<Value>,
    rounds_sold: usize,
    rounds_released: usize,
    operator_summary: Value,
}

/// The kills of a run: the counts of tickets sold at which our servers
/// (`true`) and the operator (`false`) are SIGKILLed, in order.
fn kill_plan(rng: &mut Rng, rounds: u64, ours: u32, theirs: u32) -> Vec<(u64, bool)> {
    let hi = rounds.saturating_sub(1).max(1);
    let mut plan: Vec<(u64, bool)> = Vec::new();
    for k in 0..ours + theirs {
        plan.push((rng.range(1, hi), k < ours));
    }
    plan.sort_unstable();
    plan
}

/// One run on `backend`: its figures and verdict as JSON.
pub fn run(args: &ReliabilityArgs, backend: Backend, seed: u64, rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    let servers = if backend == Backend::Postgres { 2 } else { 1 };
    println!(
        "\n== wallet chaos on {}: {} rounds, {} SIGKILLs of our {} process{}, {} of the operator ==",
        backend.name(),
        args.rounds,
        args.wallet_kills,
        servers,
        if servers == 1 { "" } else { "es" },
        args.operator_kills
    );
    let Some(db) = Database::create(args, backend, "wallet-chaos")? else {
        return Ok(json!({"backend": backend.name(), "skipped": true, "ok": !args.require_postgres}));
    };
    let started = Instant::now();
    let run_from_ms = now_ms() - 1000;
    let mut rng = Rng::new(seed);
    let c = client();
    let port = free_port()?;
    let chaos = vec![
        "--chaos-delay-ms".to_string(),
        args.chaos_delay_ms.clone(),
        "--chaos-delay-rate".into(),
        args.chaos_delay_rate.to_string(),
        "--chaos-error-rate".into(),
        args.chaos_error_rate.to_string(),
        "--chaos-drop-rate".into(),
        args.chaos_drop_rate.to_string(),
        "--chaos-duplicate-rate".into(),
        args.chaos_duplicate_rate.to_string(),
        format!("--chaos-skew-ms={}", args.chaos_skew_ms),
    ];
    let mut operator = Operator {
        child: None,
        program: operator_program(args)?,
        listen: format!("127.0.0.1:{port}"),
        database: db.dir.path.join("operator.db"),
        log: db.dir.path.join("operator.log"),
        chaos,
        lives: 0,
    };
    operator.start(rng.next_u64())?;
    let op_url = operator.url();

    // The players, at the operator.
    let mut who: Vec<(String, Kind)> = (0..args.players).map(|i| (format!("chaos-{i}"), Kind::Rich)).collect();
    who.push(("chaos-blocked".into(), Kind::Blocked));
    who.push(("chaos-poor".into(), Kind::Poor));
    who.push(("chaos-limited".into(), Kind::Limited));
    rt.block_on(async {
        for (name, kind) in &who {
            let mut body =
                json!({"player": name, "balance_cents": kind.start_cents(), "blocked": *kind == Kind::Blocked});
            if *kind == Kind::Limited {
                body["weekly_limit_cents"] = json!(LIMIT_CENTS);
            }
            admin(&c, reqwest::Method::POST, format!("{op_url}/admin/players"), Some(body)).await?;
        }
        anyhow::Ok(())
    })?;

    // Our servers, in operator mode.
    let blocks = (args.rounds * 2 / 2000 + 3).clamp(3, 20).to_string();
    let timeout = WALLET_TIMEOUT_MS.to_string();
    let extra = [
        "--initial-blocks",
        blocks.as_str(),
        "--wallet",
        "operator",
        "--operator-wallet-url",
        op_url.as_str(),
        "--operator-keys",
        KEYS,
        "--public-url",
        "http://127.0.0.1:9",
        "--wallet-timeout-ms",
        timeout.as_str(),
    ];
    let mut procs = Vec::new();
    let mut start_ms = Vec::new();
    for _ in 0..servers {
        let s = start_server(&db, &extra)?;
        start_ms.push(s.start_ms);
        procs.push(s);
    }
    let shared = Arc::new(Shared {
        urls: procs.iter().map(|s| RwLock::new(s.url.clone())).collect(),
        keys: Keys::parse(KEYS).map_err(anyhow::Error::msg)?,
        stop: AtomicBool::new(false),
        counters: Counters::default(),
        refusals: Mutex::default(),
        held: Mutex::default(),
        failures: Mutex::default(),
    });
    let handles: Vec<_> = who
        .iter()
        .enumerate()
        .map(|(i, (name, kind))| rt.spawn(player(shared.clone(), i % servers, name.clone(), *kind, rng.next_u64())))
        .collect();

    // The kills, as the tickets sell.
    let plan = kill_plan(&mut rng, args.rounds, args.wallet_kills, args.operator_kills);
    let (mut our_kills, mut operator_kills) = (0u32, 0u32);
    let mut chaos_total = BTreeMap::new();
    let mut log_errors: Vec<String> = Vec::new();
    let mut next = 0;
    let mut last_progress = (0u64, Instant::now());
    loop {
        let sold = shared.counters.purchases_sold.load(Ordering::Relaxed);
        if sold != last_progress.0 {
            last_progress = (sold, Instant::now());
        } else if last_progress.1.elapsed() > STUCK {
            shared.fail(format!("no ticket sold for {} s (at {sold})", STUCK.as_secs()));
            break;
        }
        if next < plan.len() && plan[next].0 <= sold {
            std::thread::sleep(Duration::from_millis(rng.range(0, 300)));
            if plan[next].1 {
                let i = rng.range(0, servers as u64 - 1) as usize;
                let _ = procs[i].sigkill();
                log_errors.extend(procs[i].errors.lock().unwrap().clone());
                let s = start_server(&db, &extra)?;
                start_ms.push(s.start_ms);
                *shared.urls[i].write().unwrap() = s.url.clone();
                procs[i] = s;
                our_kills += 1;
            } else {
                if let Ok(counts) = rt.block_on(chaos_counters(&c, &op_url)) {
                    add_counts(&mut chaos_total, counts);
                }
                operator.kill();
                operator.start(rng.next_u64())?;
                operator_kills += 1;
            }
            next += 1;
            if (our_kills + operator_kills).is_multiple_of(5) {
                println!(
                    "  {} sold, kills {} of ours and {} of the operator's ({:.0} s)",
                    sold,
                    our_kills,
                    operator_kills,
                    started.elapsed().as_secs_f64()
                );
            }
            continue;
        }
        if sold >= args.rounds && next >= plan.len() {
            break;
        }
        if handles.iter().all(|h| h.is_finished()) {
            shared.fail(format!("every player stopped at {sold} tickets sold"));
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    shared.stop.store(true, Ordering::Relaxed);
    for h in handles {
        rt.block_on(h)?;
    }
    let play_secs = started.elapsed().as_secs_f64();

    // Chaos off, then everything settled and checked.
    if let Ok(counts) = rt.block_on(chaos_counters(&c, &op_url)) {
        add_counts(&mut chaos_total, counts);
    }
    rt.block_on(admin(&c, reqwest::Method::PUT, format!("{op_url}/admin/chaos"), Some(json!({}))))?;
    let urls: Vec<String> = procs.iter().map(|s| s.url.clone()).collect();
    let verdict = rt.block_on(settle_and_check(&c, &shared, &urls, &op_url, &who, run_from_ms))?;
    for p in &procs {
        log_errors.extend(p.errors.lock().unwrap().clone());
    }
    drop(procs);
    let operator_lives = operator.lives;
    drop(operator);

    let ctr = &shared.counters;
    let failures = shared.failures.lock().unwrap().clone();
    let panics: Vec<&String> = log_errors.iter().filter(|l| l.contains("panicked")).collect();
    let checks_ok = verdict.checks.iter().all(|c| c["ok"] == true);
    let sold = ctr.purchases_sold.load(Ordering::Relaxed);
    let ok = failures.is_empty()
        && panics.is_empty()
        && checks_ok
        && our_kills == args.wallet_kills
        && operator_kills == args.operator_kills
        && sold >= args.rounds
        && ctr.server_errors.load(Ordering::Relaxed) == 0
        && ctr.unexpected.load(Ordering::Relaxed) == 0;
    start_ms.sort_unstable();
    let summary = json!({
        "backend": backend.name(),
        "skipped": false,
        "server_processes": servers,
        "players": who.len(),
        "rounds_wanted": args.rounds,
        "tickets_sold": sold,
        "rounds_sold": verdict.rounds_sold,
        "rounds_released": verdict.rounds_released,
        "actions": ctr.actions.load(Ordering::Relaxed),
        "our_kills": our_kills,
        "operator_kills": operator_kills,
        "operator_lives": operator_lives,
        "chaos": chaos_total,
        "refusals": *shared.refusals.lock().unwrap(),
        "purchases_wallet_unavailable": ctr.purchases_unknown_503.load(Ordering::Relaxed),
        "purchases_retried_while_settling": ctr.purchases_pending_409.load(Ordering::Relaxed),
        "launches": ctr.launches.load(Ordering::Relaxed),
        "relaunches": ctr.relaunches.load(Ordering::Relaxed),
        "connection_errors": ctr.connection_errors.load(Ordering::Relaxed),
        "requests_resent": ctr.resent.load(Ordering::Relaxed),
        "server_errors_5xx": ctr.server_errors.load(Ordering::Relaxed),
        "unexpected_4xx": ctr.unexpected.load(Ordering::Relaxed),
        "server_error_log_lines": log_errors.len(),
        "server_panics": panics,
        "restart_ms_median": start_ms.get(start_ms.len() / 2).copied().unwrap_or(0),
        "settle_ms": verdict.settle_ms,
        "operator_summary": verdict.operator_summary,
        "reconciliation": verdict.reconciliation,
        "checks": verdict.checks,
        "play_seconds": play_secs,
        "seconds": started.elapsed().as_secs_f64(),
        "failures": failures,
        "ok": ok,
    });
    print_summary(&summary);
    Ok(summary)
}

fn print_summary(s: &Value) {
    println!(
        "wallet chaos on {} ({} server process(es)): {} tickets sold in {:.0} s ({} rounds sold, {} released), {} actions; \
         kills: {} of ours, {} of the operator; chaos: {}; refusals: {}; purchases answered wallet_unavailable: {}, retried while settling: {}; \
         rollbacks at the operator: {}; launches {} (again {}); settled in {} ms",
        s["backend"].as_str().unwrap_or_default(),
        s["server_processes"],
        s["tickets_sold"],
        s["play_seconds"].as_f64().unwrap_or(0.0),
        s["rounds_sold"],
        s["rounds_released"],
        s["actions"],
        s["our_kills"],
        s["operator_kills"],
        s["chaos"],
        s["refusals"],
        s["purchases_wallet_unavailable"],
        s["purchases_retried_while_settling"],
        s["operator_summary"]["rollback"]["count"],
        s["launches"],
        s["relaunches"],
        s["settle_ms"],
    );
    for c in s["checks"].as_array().into_iter().flatten() {
        println!(
            "  {} {}: {}",
            if c["ok"] == true { "ok  " } else { "FAIL" },
            c["check"].as_str().unwrap_or(""),
            c["seen"]
        );
    }
    println!(
        "wallet chaos on {}: {}",
        s["backend"].as_str().unwrap_or_default(),
        if s["ok"] == true { "PASS" } else { "FAIL" }
    );
}

/// Waits until every round is settled and every outbox empty, then runs
/// the reconciliation and the checks of the module's documentation.
async fn settle_and_check(
    c: &reqwest::Client,
    shared: &Shared,
    urls: &[String],
    op_url: &str,
    who: &[(String, Kind)],
    from_ms: i64,
) -> anyhow::Result<Verdict> {
    let mut v = Verdict::default();
    let began = Instant::now();
    let mut ours: Vec<OurRound>;
    loop {
        let mut depth = 0.0;
        for url in urls {
            let page = c.get(format!("{url}/metrics")).send().await?.text().await?;
            depth += metric(&page, "as_capone_wallet_outbox_depth")
                .context("the server's /metrics has no as_capone_wallet_outbox_depth")?;
        }
        ours = fetch_rounds(c, &urls[0], OPERATOR_TOKEN, from_ms, now_ms() + 60_000).await?;
        let unresolved = ours.iter().filter(|r| r.state == RoundState::Unresolved).count();
        let pending = ours.iter().filter(|r| r.prize_cents.unwrap_or(0) > 0 && !r.credit_acknowledged).count();
        if depth == 0.0 && unresolved == 0 && pending == 0 {
            break;
        }
        if began.elapsed() > SETTLE {
            shared.fail(format!(
                "not settled after {} s: outbox depth {depth}, {unresolved} unresolved rounds, {pending} prizes unacknowledged",
                SETTLE.as_secs()
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    v.settle_ms = began.elapsed().as_millis();
    let to_ms = now_ms() + 60_000;
    let keys = &shared.keys;
    let r = reconcile_period(c, &urls[0], OPERATOR_TOKEN, op_url, keys, (from_ms, to_ms), true).await?;
    v.rounds_sold = r.report.sold;
    v.rounds_released = r.report.released;
    let mismatches: Vec<String> =
        r.report.mismatches.iter().take(20).map(|m| format!("{} {}: {}", m.round_id, m.kind, m.detail)).collect();
    v.checks.push(check(
        "reconciliation clean (strict)",
        r.clean,
        json!({
            "rounds": r.report.rounds, "sold": r.report.sold, "released": r.report.released, "prizes": r.report.prizes,
            "operator_transactions": r.report.operator_transactions, "debited_cents": r.report.debited_cents,
            "credited_cents": r.report.credited_cents, "mismatches": r.report.mismatches.len(), "first": mismatches,
        }),
    ));
    v.reconciliation = serde_json::to_value(&r.report)?;
    let theirs = fetch_transactions(c, op_url, keys, from_ms - 60_000, to_ms).await?;
    let held = shared.held.lock().unwrap().clone();
    v.checks.extend(ledger_checks(&ours, &theirs, &held));
    // The operator's own books.
    let summary = admin(c, reqwest::Method::GET, format!("{op_url}/admin/summary"), None).await?;
    v.checks.push(check("operator's ledger balanced", summary["balanced"] == true, json!({
        "entries_sum_cents": summary["entries_sum_cents"], "balances_match_entries": summary["balances_match_entries"],
    })));
    v.operator_summary = summary;
    // Every player's balance: at the operator, from the transactions, and on our /api/me.
    let mut wrong = Vec::new();
    for (name, kind) in who {
        let p = admin(c, reqwest::Method::GET, format!("{op_url}/admin/players/{name}"), None).await?;
        let moved: i64 = theirs
            .iter()
            .filter(|t| &t.player == name)
            .map(|t| match t.kind {
                TxKind::Debit if !t.rolled_back => -t.amount_cents,
                TxKind::Credit => t.amount_cents,
                _ => 0,
            })
            .sum();
        let want = kind.start_cents() + moved;
        if p["balance_cents"].as_i64() != Some(want) {
            wrong.push(format!("{name}: the operator holds {}, start + transactions = {want}", p["balance_cents"]));
        }
        let token = launch(c, &urls[0], keys, name).await.map_err(|e| match e {
            Trouble::Down => anyhow::anyhow!("launch of {name}: no answer"),
            Trouble::Relaunch(w) | Trouble::Failed(w) => anyhow::anyhow!("launch of {name}: {w}"),
        })?;
        let me = c.get(format!("{}/api/me", urls[0])).bearer_auth(&token).send().await?.json::<Value>().await?;
        if me["balance_cents"].as_i64() != Some(want) || me["mode"] != "operator" {
            wrong.push(format!("{name}: /api/me shows {} ({}), the operator {want}", me["balance_cents"], me["mode"]));
        }
    }
    v.checks.push(check(
        "every balance = start - standing debits + credits, at the operator and on /api/me",
        wrong.is_empty(),
        json!(wrong),
    ));
    Ok(v)
}

fn check(name: &str, ok: bool, seen: Value) -> Value {
    json!({"check": name, "ok": ok, "seen": seen})
}

/// The checks of our rounds, the operator's transactions and what the
/// players were answered, against each other.
fn ledger_checks(ours: &[OurRound], theirs: &[OperatorTransaction], held: &[Held]) -> Vec<Value> {
    let serial_of = |round: &str| RoundId::parse(round).map(|r| r.serial).unwrap_or_else(|| round.to_string());
    let standing: Vec<&OperatorTransaction> =
        theirs.iter().filter(|t| t.kind == TxKind::Debit && !t.rolled_back).collect();
    let mut by_serial: HashMap<String, Vec<&OperatorTransaction>> = HashMap::new();
    for d in &standing {
        by_serial.entry(serial_of(&d.round_id)).or_default().push(d);
    }
    let held_by_serial: HashMap<&str, &Held> = held.iter().map(|h| (h.serial.as_str(), h)).collect();
    let mut out = Vec::new();

    let doubles: Vec<String> = by_serial
        .iter()
        .filter(|(_, d)| d.len() > 1)
        .map(|(s, d)| format!("{s}: {}", d.iter().map(|t| t.transaction_id.as_str()).collect::<Vec<_>>().join(", ")))
        .collect();
    let double_held = held.len() - held_by_serial.len();
    out.push(check(
        "no double debit (one standing debit per ticket; no ticket answered twice)",
        doubles.is_empty() && double_held == 0,
        json!({"tickets_with_several_debits": doubles.iter().take(20).collect::<Vec<_>>(), "tickets_answered_twice": double_held}),
    ));

    let orphans: Vec<String> = standing
        .iter()
        .filter(|d| match held_by_serial.get(serial_of(&d.round_id).as_str()) {
            Some(h) => h.player != d.player || h.price_cents != d.amount_cents,
            None => true,
        })
        .map(|d| format!("{} ({}, {} cents)", d.transaction_id, d.player, d.amount_cents))
        .collect();
    out.push(check(
        "no debit without a ticket (every standing debit: a ticket its player was sold, at its price)",
        orphans.is_empty(),
        json!({"standing_debits": standing.len(), "orphans": orphans.iter().take(20).collect::<Vec<_>>()}),
    ));

    let sold_rounds: HashMap<String, &OurRound> =
        ours.iter().filter(|r| r.state == RoundState::Sold).map(|r| (serial_of(&r.round_id), r)).collect();
    let undebited: Vec<String> = held
        .iter()
        .filter(|h| {
            by_serial.get(&h.serial).map_or(0, Vec::len) != 1
                || sold_rounds.get(&h.serial).is_none_or(|r| r.player != h.player)
        })
        .map(|h| format!("{} ({})", h.serial, h.player))
        .collect();
    out.push(check(
        "no ticket without a debit (every ticket sold: one standing debit, a sold round of its player)",
        undebited.is_empty() && sold_rounds.len() == held.len(),
        json!({"tickets": held.len(), "sold_rounds": sold_rounds.len(), "without": undebited.iter().take(20).collect::<Vec<_>>()}),
    ));

    let mut credits: HashMap<String, Vec<&OperatorTransaction>> = HashMap::new();
    for t in theirs.iter().filter(|t| t.kind == TxKind::Credit) {
        credits.entry(serial_of(&t.round_id)).or_default().push(t);
    }
    let unfinished = held.iter().filter(|h| h.prize_cents.is_none()).count();
    let mut wrong: Vec<String> = Vec::new();
    let mut prizes = (0usize, 0i64);
    for h in held {
        let prize = h.prize_cents.unwrap_or(0);
        let got: Vec<i64> =
            credits.get(&h.serial).map(|v| v.iter().map(|t| t.amount_cents).collect()).unwrap_or_default();
        let right = if prize > 0 { got == [prize] } else { got.is_empty() };
        if prize > 0 {
            prizes.0 += 1;
            prizes.1 += prize;
        }
        if !right {
            wrong.push(format!("{}: prize {prize}, credits {got:?}", h.serial));
        }
    }
    let stray: Vec<&String> = credits.keys().filter(|s| !held_by_serial.contains_key(s.as_str())).collect();
    out.push(check(
        "every prize credited exactly once (and nothing else credited)",
        wrong.is_empty() && stray.is_empty() && unfinished == 0,
        json!({"prizes": prizes.0, "prizes_cents": prizes.1, "credits": credits.values().map(Vec::len).sum::<usize>(),
               "wrong": wrong.iter().take(20).collect::<Vec<_>>(), "credits_of_unknown_tickets": stray.iter().take(20).collect::<Vec<_>>(),
               "tickets_not_finished": unfinished}),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(id: &str, player: &str, state: RoundState, prize: Option<i64>) -> OurRound {
        OurRound {
            round_id: id.into(),
            player: player.into(),
            price_cents: 300,
            state,
            prize_cents: prize,
            credit_acknowledged: prize.is_some(),
        }
    }

    fn tx(round: &str, player: &str, kind: TxKind, amount: i64, rolled_back: bool) -> OperatorTransaction {
        OperatorTransaction {
            transaction_id: format!("{round}:{kind}"),
            kind,
            round_id: round.into(),
            player: player.into(),
            amount_cents: amount,
            applied_ms: 1,
            rolled_back,
        }
    }

    fn held(serial: &str, player: &str, prize: Option<i64>) -> Held {
        Held { player: player.into(), serial: serial.into(), price_cents: 300, prize_cents: prize }
    }

    fn failing(checks: &[Value]) -> Vec<String> {
        checks.iter().filter(|c| c["ok"] != true).map(|c| c["check"].as_str().unwrap().to_string()).collect()
    }

    #[test]
    fn a_sound_run_passes_every_check() {
        let ours = [
            round("A.1", "p", RoundState::Released, None),
            round("A.2", "p", RoundState::Sold, Some(1000)),
            round("B.1", "q", RoundState::Sold, Some(0)),
        ];
        let theirs = [
            tx("A.1", "p", TxKind::Debit, 300, true),
            tx("A.1", "p", TxKind::Rollback, 300, false),
            tx("A.2", "p", TxKind::Debit, 300, false),
            tx("A.2", "p", TxKind::Credit, 1000, false),
            tx("B.1", "q", TxKind::Debit, 300, false),
        ];
        let held = [held("A", "p", Some(1000)), held("B", "q", Some(0))];
        let checks = ledger_checks(&ours, &theirs, &held);
        assert_eq!(checks.len(), 4);
        assert!(failing(&checks).is_empty(), "{checks:#?}");
    }

    #[test]
    fn each_departure_fails_its_check() {
        let ours = [round("A.1", "p", RoundState::Sold, Some(1000)), round("B.1", "q", RoundState::Sold, None)];
        let base = [
            tx("A.1", "p", TxKind::Debit, 300, false),
            tx("A.1", "p", TxKind::Credit, 1000, false),
            tx("B.1", "q", TxKind::Debit, 300, false),
        ];
        let held_ok = [held("A", "p", Some(1000)), held("B", "q", Some(0))];
        assert!(failing(&ledger_checks(&ours, &base, &held_ok)).is_empty());

        // The ticket's second round debited too: a double debit, and a ticket with two debits.
        let mut theirs = base.to_vec();
        theirs.push(tx("A.2", "p", TxKind::Debit, 300, false));
        let f = failing(&ledger_checks(&ours, &theirs, &held_ok));
        assert!(f[0].starts_with("no double debit"), "{f:?}");
        assert!(f.iter().any(|c| c.starts_with("no ticket without a debit")), "{f:?}");

        // A standing debit for a ticket nobody was sold.
        let mut theirs = base.to_vec();
        theirs.push(tx("C.1", "q", TxKind::Debit, 300, false));
        assert_eq!(
            failing(&ledger_checks(&ours, &theirs, &held_ok)),
            ["no debit without a ticket (every standing debit: a ticket its player was sold, at its price)"]
        );

        // A ticket sold whose debit was rolled back.
        let theirs = [
            tx("A.1", "p", TxKind::Debit, 300, false),
            tx("A.1", "p", TxKind::Credit, 1000, false),
            tx("B.1", "q", TxKind::Debit, 300, true),
        ];
        assert_eq!(
            failing(&ledger_checks(&ours, &theirs, &held_ok)),
            ["no ticket without a debit (every ticket sold: one standing debit, a sold round of its player)"]
        );

        // A prize credited twice (as two rounds of the ticket), or not at all, or of another amount.
        for credits in [vec![1000, 1000], vec![], vec![999]] {
            let mut theirs = vec![base[0].clone(), base[2].clone()];
            for (i, amount) in credits.iter().enumerate() {
                theirs.push(tx(&format!("A.{}", i + 1), "p", TxKind::Credit, *amount, false));
            }
            let f = failing(&ledger_checks(&ours, &theirs, &held_ok));
            assert_eq!(f, ["every prize credited exactly once (and nothing else credited)"], "{credits:?}");
        }
        // A ticket left unfinished.
        let held_open = [held("A", "p", Some(1000)), held("B", "q", None)];
        assert_eq!(
            failing(&ledger_checks(&ours, &base, &held_open)),
            ["every prize credited exactly once (and nothing else credited)"]
        );
    }

    #[test]
    fn metrics_are_summed_over_their_labels() {
        let page = "# HELP as_capone_wallet_outbox_depth x\nas_capone_wallet_outbox_depth 3\n\
                    as_capone_wallet_outbox_depth_other 9\nas_capone_wallet_outbox_depth{kind=\"credit\"} 2\n";
        assert_eq!(metric(page, "as_capone_wallet_outbox_depth"), Some(5.0));
        assert_eq!(metric(page, "as_capone_missing"), None);
    }

    #[test]
    fn the_kill_plan_has_every_kill_before_the_last_round() {
        let plan = kill_plan(&mut Rng::new(7), 200, 4, 2);
        assert_eq!(plan.iter().filter(|k| k.1).count(), 4);
        assert_eq!(plan.iter().filter(|k| !k.1).count(), 2);
        assert!(plan.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(plan.iter().all(|k| (1..200).contains(&k.0)), "{plan:?}");
    }
}
