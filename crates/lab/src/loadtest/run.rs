//! `as-capone loadtest` from its arguments to its report.

use super::args::{LoadtestArgs, WalletKind};
use super::conn::Conn;
use super::latency::{latencies, timeline_csv};
use super::operator_mode::OperatorSide;
use super::player::player;
use super::shadow::Shadow;
use super::shared::Shared;
use super::tally::Tally;
use super::wallet_report::wallet_report;
use anyhow::Context;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
        Some(keys) => Some(OperatorSide::start(
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

async fn run_async(args: LoadtestArgs, side: Option<&OperatorSide>) -> anyhow::Result<()> {
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
        shared.shadow = Some(Shadow::new(&format!("http://{}", args.operator_listen), side.keys.clone())?);
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
