//! The load generator's operator mode (`loadtest --wallet operator`): the
//! reference operator (`crates/operator`) runs in this process, on a
//! runtime of its own, with its own ledger in a temporary directory, every
//! simulated player created there with a large balance, and its chaos
//! switch set to delay every wallet call by `--wallet-delay-ms` (and do
//! nothing else). The game server under test is started by the caller in
//! operator mode, its wallet URL `http://{--operator-listen}` and its keys
//! those of `--operator-keys` (docs/operator-integration.md, "Configuration").
//!
//! In front of the operator, on `--operator-listen`, a small HTTP/1.1 proxy
//! times each wallet call from its request's arrival to the operator's
//! whole answer: the wallet's own latency as the game server waits for it,
//! per kind of call. Each debit's round (`SERIAL.N`) is kept with its start
//! and end, so that each purchase can be split into the time before its
//! debit left (the reservation), the debit, and the time after its answer
//! (the settlement and the purchase's answer): where a purchase waits.
//!
//! After the run it reads the operator's ledger and checks the money: one
//! standing debit of the ticket's price per purchase answered, each round
//! debited once, one credit per game won of the prize's amount, and the
//! players' balances moved by exactly that (BENCHMARKS.md "The operator mode":
//! actions never wait on the wallet).

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use operator::{ChaosConfig, PlayerSeed};
use serde_json::json;
use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wallet::{Keys, LaunchFlags, LaunchRequest, TxKind};

/// Each simulated player's balance at the operator: 10 million euros, more
/// than any run spends (money is integer cents).
pub(super) const START_BALANCE_CENTS: i64 = 1_000_000_000;

/// The operator's reference of simulated player `index`.
pub(super) fn player_ref(index: usize) -> String {
    format!("loadtest-{index}")
}

/// One wallet call as the proxy saw it.
struct WalletCall {
    /// `debit`, `credit`, `rollback`, `balance` or `transactions`.
    kind: &'static str,
    /// A debit's ticket serial (its round id without the attempt).
    serial: Option<String>,
    started: Instant,
    ended: Instant,
}

/// The reference operator behind its timing proxy, on a runtime of its own.
pub(super) struct OperatorSide {
    runtime: tokio::runtime::Runtime,
    running: Option<operator::Running>,
    calls: Arc<Mutex<Vec<WalletCall>>>,
    /// The keys shared with the game server.
    pub(super) keys: Keys,
    players: usize,
    /// Every wallet call's delay at the operator, in ms.
    pub(super) delay_ms: u64,
    _ledger_dir: tempfile::TempDir,
}

/// A purchase as the load generator saw it: the ticket's serial, when it
/// was sent (or its slot) and its latency.
pub(super) struct Purchase {
    pub(super) serial: String,
    pub(super) at: Instant,
    pub(super) us: u32,
}

fn kind_of(path: &str) -> &'static str {
    match path {
        wallet::paths::DEBIT => "debit",
        wallet::paths::CREDIT => "credit",
        wallet::paths::ROLLBACK => "rollback",
        wallet::paths::BALANCE => "balance",
        wallet::paths::TRANSACTIONS => "transactions",
        _ => "other",
    }
}

impl OperatorSide {
    /// Starts the reference operator (its ledger in a temporary directory,
    /// `players` players of [`START_BALANCE_CENTS`], every call delayed
    /// `delay_ms`) and the timing proxy listening on `listen`. The ledger's
    /// temporary directory is made in `ledger_in` when given.
    pub(super) fn start(
        listen: SocketAddr,
        keys: &str,
        delay_ms: u64,
        players: usize,
        ledger_in: Option<&std::path::Path>,
    ) -> anyhow::Result<Self> {
        let keys = Keys::parse(keys).map_err(|e| anyhow::anyhow!("--operator-keys: {e}"))?;
        let ledger_dir = match ledger_in {
            Some(dir) => {
                tempfile::tempdir_in(dir).with_context(|| format!("--operator-ledger-dir {}", dir.display()))?
            }
            None => tempfile::tempdir()?,
        };
        // Two threads of its own: the operator's work is not queued behind
        // the load generator's players (both still share the machine).
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("operator")
            .enable_all()
            .build()?;
        let mut options = operator::Options::new(
            "127.0.0.1:0".parse().expect("an address"),
            ledger_dir.path().join("operator.db"),
            keys.clone(),
        );
        options.players =
            (0..players).map(|i| PlayerSeed { player: player_ref(i), balance_cents: START_BALANCE_CENTS }).collect();
        options.chaos = ChaosConfig {
            delay_ms: [delay_ms, delay_ms],
            delay_rate: if delay_ms > 0 { 1.0 } else { 0.0 },
            seed: Some(1),
            ..ChaosConfig::default()
        };
        let running = runtime.block_on(operator::start(options)).context("the reference operator did not start")?;
        let calls: Arc<Mutex<Vec<WalletCall>>> = Arc::default();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(listen))
            .with_context(|| format!("cannot listen on --operator-listen {listen}"))?;
        runtime.spawn(proxy(listener, running.addr, calls.clone()));
        Ok(OperatorSide { runtime, running: Some(running), calls, keys, players, delay_ms, _ledger_dir: ledger_dir })
    }

    /// The launch of a player of this run, as the operator's platform makes it.
    pub(super) fn launch_request(index: usize) -> LaunchRequest {
        LaunchRequest {
            player: player_ref(index),
            currency: wallet::CURRENCY.into(),
            language: "fr".into(),
            country: Some("FR".into()),
            flags: LaunchFlags::default(),
            lobby_url: None,
        }
    }

    fn ledger(&self) -> &operator::Ledger {
        self.running.as_ref().expect("running until dropped").ledger()
    }

    /// Waits until the operator holds `credits` credits (prizes are
    /// credited from the game server's outbox, after the game's answer),
    /// or until none came for `patience`. Then checks the money against
    /// what the players saw: `purchases` purchases of `price_cents`,
    /// `won_cents` won in `credits` games. The figures as JSON (with the
    /// time the last credit took to arrive after the run), and the first
    /// discrepancy.
    pub(super) async fn check_money(
        &self,
        purchases: u64,
        price_cents: Option<i64>,
        credits: u64,
        won_cents: i64,
        patience: Duration,
    ) -> (serde_json::Value, Option<String>) {
        let waited_from = Instant::now();
        let handle = self.runtime.handle().clone();
        let ledger = self.ledger().clone();
        let read = move || {
            let ledger = ledger.clone();
            let handle = handle.clone();
            async move { handle.spawn(async move { ledger.transactions_in(0, i64::MAX).await }).await }
        };
        let (mut seen, mut progress) = (u64::MAX, Instant::now());
        let txs = loop {
            let txs = match read().await {
                Ok(Ok(t)) => t,
                Ok(Err(e)) => return (json!(null), Some(format!("the operator's ledger: {e:#}"))),
                Err(e) => return (json!(null), Some(format!("the operator's ledger: {e}"))),
            };
            let standing_credits = txs.iter().filter(|t| t.kind == TxKind::Credit).count() as u64;
            if standing_credits != seen {
                (seen, progress) = (standing_credits, Instant::now());
            }
            if standing_credits >= credits || progress.elapsed() >= patience {
                break txs;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let credits_drained_s = progress.saturating_duration_since(waited_from).as_secs_f64();
        let debits: Vec<_> = txs.iter().filter(|t| t.kind == TxKind::Debit && !t.rolled_back).collect();
        let rounds: BTreeSet<&str> = debits.iter().map(|t| t.round_id.as_str()).collect();
        let debited_cents: i64 = debits.iter().map(|t| t.amount_cents).sum();
        let credit_txs: Vec<_> = txs.iter().filter(|t| t.kind == TxKind::Credit).collect();
        let credited_cents: i64 = credit_txs.iter().map(|t| t.amount_cents).sum();
        let rollbacks = txs.iter().filter(|t| t.kind == TxKind::Rollback).count();
        let ledger = self.ledger().clone();
        let players = self.players;
        let balances = self
            .runtime
            .handle()
            .spawn(async move {
                let mut sum = 0i64;
                for (player, balance, _) in ledger.players().await? {
                    if player.starts_with("loadtest-") {
                        sum += balance;
                    }
                }
                anyhow::Ok(sum)
            })
            .await;
        let moved_cents = match balances {
            Ok(Ok(sum)) => START_BALANCE_CENTS * players as i64 - sum,
            Ok(Err(e)) => return (json!(null), Some(format!("the operator's balances: {e:#}"))),
            Err(e) => return (json!(null), Some(format!("the operator's balances: {e}"))),
        };
        let figures = json!({
            "debits": debits.len(),
            "rounds_debited": rounds.len(),
            "debited_cents": debited_cents,
            "rollbacks": rollbacks,
            "credits": credit_txs.len(),
            "credited_cents": credited_cents,
            "players_net_cents": moved_cents,
            "credits_drained_after_s": credits_drained_s,
        });
        let mut problem = None;
        let mut fail = |p: String| {
            problem.get_or_insert(p);
        };
        if debits.len() as u64 != purchases {
            fail(format!("{} standing debits at the operator for {purchases} purchases answered", debits.len()));
        }
        if rounds.len() != debits.len() {
            fail(format!("{} standing debits for {} rounds: a round debited twice", debits.len(), rounds.len()));
        }
        if let Some(price) = price_cents
            && debited_cents != price * purchases as i64
        {
            fail(format!("{debited_cents} cents debited for {purchases} purchases of {price} cents"));
        }
        if credit_txs.len() as u64 != credits || credited_cents != won_cents {
            fail(format!(
                "{} credits of {credited_cents} cents at the operator for {credits} games won of {won_cents} cents",
                credit_txs.len()
            ));
        }
        if moved_cents != debited_cents - credited_cents {
            fail(format!(
                "the players' balances moved by {moved_cents} cents, not the debits less the credits ({})",
                debited_cents - credited_cents
            ));
        }
        (figures, problem)
    }

    /// The wallet's latencies per kind of call (microseconds, unsorted).
    pub(super) fn wallet_us(&self) -> Vec<(&'static str, Vec<u32>)> {
        let calls = self.calls.lock().expect("calls");
        let mut by_kind: Vec<(&'static str, Vec<u32>)> = Vec::new();
        for c in calls.iter() {
            let us = c.ended.saturating_duration_since(c.started).as_micros().min(u128::from(u32::MAX)) as u32;
            match by_kind.iter_mut().find(|(k, _)| *k == c.kind) {
                Some((_, v)) => v.push(us),
                None => by_kind.push((c.kind, vec![us])),
            }
        }
        by_kind
    }

    /// Each purchase split around its debit: the time before the debit
    /// left (`before`), and after its answer came back (`after`), in
    /// microseconds; purchases whose debit the proxy did not see are left
    /// out (there are none unless a call failed).
    pub(super) fn purchase_split(&self, purchases: &[Purchase]) -> (Vec<u32>, Vec<u32>) {
        let calls = self.calls.lock().expect("calls");
        let debits: HashMap<&str, &WalletCall> =
            calls.iter().filter_map(|c| c.serial.as_deref().map(|s| (s, c))).collect();
        let us = |d: Duration| d.as_micros().min(u128::from(u32::MAX)) as u32;
        let mut before = Vec::with_capacity(purchases.len());
        let mut after = Vec::with_capacity(purchases.len());
        for p in purchases {
            if let Some(d) = debits.get(p.serial.as_str()) {
                let end = p.at + Duration::from_micros(u64::from(p.us));
                before.push(us(d.started.saturating_duration_since(p.at)));
                after.push(us(end.saturating_duration_since(d.ended)));
            }
        }
        (before, after)
    }
}

/// The CPU time this process's operator side used so far, in seconds: its
/// runtime's threads (the reference operator's HTTP, signatures and the
/// timing proxy) and its ledger's SQLite threads (the only SQLite of this
/// process), read from `/proc/self/task` (Linux; none elsewhere). On this
/// machine the operator shares the game server's cores, where a real one
/// would not: this is what it took from them.
pub(super) fn operator_cpu_seconds() -> Option<f64> {
    let mut ticks = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        let Ok(comm) = std::fs::read_to_string(path.join("comm")) else { continue };
        if !(comm.starts_with("operator") || comm.starts_with("sqlx-sqlite")) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(path.join("stat")) else { continue };
        // Fields after the command's closing parenthesis: state is the 3rd
        // field of the line, utime and stime the 14th and 15th.
        let rest = stat.rsplit_once(')').map(|(_, r)| r)?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let (utime, stime) = (fields.get(11)?.parse::<u64>().ok()?, fields.get(12)?.parse::<u64>().ok()?);
        ticks += utime + stime;
    }
    // /proc counts in USER_HZ, 100 a second on Linux.
    Some(ticks as f64 / 100.0)
}

impl Drop for OperatorSide {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            self.runtime.block_on(running.stop());
        }
    }
}

/// The timing proxy: accepts the game server's connections and forwards
/// each request to the operator over a connection of its own.
async fn proxy(listener: tokio::net::TcpListener, upstream: SocketAddr, calls: Arc<Mutex<Vec<WalletCall>>>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let _ = stream.set_nodelay(true);
        let calls = calls.clone();
        tokio::spawn(async move {
            let up: Arc<tokio::sync::Mutex<Option<SendRequest<Full<Bytes>>>>> = Arc::default();
            let service = hyper::service::service_fn(move |req| {
                let (up, calls) = (up.clone(), calls.clone());
                async move { forward(req, &up, upstream, &calls).await }
            });
            // Ends when the game server closes the connection.
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

async fn forward(
    req: hyper::Request<Incoming>,
    up: &tokio::sync::Mutex<Option<SendRequest<Full<Bytes>>>>,
    upstream: SocketAddr,
    calls: &Mutex<Vec<WalletCall>>,
) -> anyhow::Result<hyper::Response<Full<Bytes>>> {
    let started = Instant::now();
    let (parts, body) = req.into_parts();
    let body = body.collect().await?.to_bytes();
    let kind = kind_of(parts.uri.path());
    let serial = (kind == "debit")
        .then(|| serde_json::from_slice::<wallet::MoneyRequest>(&body).ok())
        .flatten()
        .and_then(|d| d.round_id.rsplit_once('.').map(|(serial, _)| serial.to_string()));
    let mut guard = up.lock().await;
    let sender = match guard.as_mut() {
        Some(s) if !s.is_closed() => s,
        _ => {
            let stream = tokio::net::TcpStream::connect(upstream).await?;
            stream.set_nodelay(true)?;
            let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            guard.insert(sender)
        }
    };
    sender.ready().await?;
    let request = hyper::Request::from_parts(parts, Full::new(body));
    let answer = match sender.send_request(request).await {
        Ok(a) => a,
        Err(e) => {
            *guard = None;
            return Err(e.into());
        }
    };
    let (parts, body) = answer.into_parts();
    let body = body.collect().await?.to_bytes();
    let ended = Instant::now();
    calls.lock().expect("calls").push(WalletCall { kind, serial, started, ended });
    Ok(hyper::Response::from_parts(parts, Full::new(body)))
}
