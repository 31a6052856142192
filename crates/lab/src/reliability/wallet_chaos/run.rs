//! One run of the wallet chaos on a backend: the reference operator and
//! our servers started, the players launched, the kills as the tickets
//! sell, then the settlement, the checks and the figures.

use super::checks::settle_and_check;
use super::client::client;
use super::operator_child::{KEYS, Operator, add_counts, admin, chaos_counters};
use super::player::{Counters, Kind, LIMIT_CENTS, STUCK, Shared, player};
use crate::reconcile::now_ms;
use crate::reliability::args::{Backend, ReliabilityArgs};
use crate::reliability::rng::Rng;
use crate::reliability::testbed::{Database, Server, start_server};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use wallet::Keys;

/// Our server's wait for a wallet answer in these runs (ms): short, so that
/// answers the operator holds (a dropped answer) become unknown quickly.
const WALLET_TIMEOUT_MS: u64 = 2000;

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
    let mut operator = Operator::new(args, &db.dir.path)?;
    operator.start(rng.next_u64())?;
    let op_url = operator.url();
    let who = create_players(args, rt, &c, &op_url)?;
    let mut procs = Processes::start(&db, args, servers, operator, rt, &c)?;
    let shared = Arc::new(Shared {
        urls: procs.ours.iter().map(|s| RwLock::new(s.url.clone())).collect(),
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
    sell_under_kills(args, &shared, &mut procs, &mut rng, &handles, started)?;
    shared.stop.store(true, Ordering::Relaxed);
    for h in handles {
        rt.block_on(h)?;
    }
    let play_secs = started.elapsed().as_secs_f64();

    // Chaos off, then everything settled and checked.
    procs.count_chaos();
    rt.block_on(admin(&c, reqwest::Method::PUT, format!("{op_url}/admin/chaos"), Some(json!({}))))?;
    let urls: Vec<String> = procs.ours.iter().map(|s| s.url.clone()).collect();
    let verdict = rt.block_on(settle_and_check(&c, &shared, &urls, &op_url, &who, run_from_ms))?;
    for p in &procs.ours {
        procs.log_errors.extend(p.errors.lock().unwrap().clone());
    }
    let Processes { ours, operator, mut start_ms, log_errors, our_kills, operator_kills, chaos_total, .. } = procs;
    drop(ours);
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

/// The players, created at the operator: the ones who never run out, then
/// one blocked, one with little money and one with a weekly stake limit.
fn create_players(
    args: &ReliabilityArgs,
    rt: &tokio::runtime::Runtime,
    c: &reqwest::Client,
    op_url: &str,
) -> anyhow::Result<Vec<(String, Kind)>> {
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
            admin(c, reqwest::Method::POST, format!("{op_url}/admin/players"), Some(body)).await?;
        }
        anyhow::Ok(())
    })?;
    Ok(who)
}

/// The processes the kills hit: our servers, in operator mode, and the
/// reference operator; what their kills counted.
struct Processes<'a> {
    db: &'a Database,
    rt: &'a tokio::runtime::Runtime,
    c: &'a reqwest::Client,
    /// Our servers' arguments besides the run's own: operator mode against the reference operator.
    extra: Vec<String>,
    ours: Vec<Server>,
    /// How long each start of ours took until it listened, in ms.
    start_ms: Vec<u128>,
    /// Our servers' error lines, gathered before each kill and at the end.
    log_errors: Vec<String>,
    operator: Operator,
    our_kills: u32,
    operator_kills: u32,
    /// The chaos counts, summed over the operator's lives.
    chaos_total: BTreeMap<String, u64>,
}

impl<'a> Processes<'a> {
    /// Starts our `servers` processes on `db` in operator mode against `operator`.
    fn start(
        db: &'a Database,
        args: &ReliabilityArgs,
        servers: usize,
        operator: Operator,
        rt: &'a tokio::runtime::Runtime,
        c: &'a reqwest::Client,
    ) -> anyhow::Result<Processes<'a>> {
        let blocks = (args.rounds * 2 / 2000 + 3).clamp(3, 20).to_string();
        let timeout = WALLET_TIMEOUT_MS.to_string();
        let op_url = operator.url();
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
        let mut p = Processes {
            db,
            rt,
            c,
            extra: extra.map(String::from).to_vec(),
            ours: Vec::new(),
            start_ms: Vec::new(),
            log_errors: Vec::new(),
            operator,
            our_kills: 0,
            operator_kills: 0,
            chaos_total: BTreeMap::new(),
        };
        for _ in 0..servers {
            let s = p.start_one()?;
            p.ours.push(s);
        }
        Ok(p)
    }

    /// One of our servers started, its time to listen counted.
    fn start_one(&mut self) -> anyhow::Result<Server> {
        let extra: Vec<&str> = self.extra.iter().map(String::as_str).collect();
        let s = start_server(self.db, &extra)?;
        self.start_ms.push(s.start_ms);
        Ok(s)
    }

    /// SIGKILLs our server `i` and starts it again on the same database;
    /// its players find it at its new address.
    fn kill_ours(&mut self, i: usize, shared: &Shared) -> anyhow::Result<()> {
        let _ = self.ours[i].sigkill();
        self.log_errors.extend(self.ours[i].errors.lock().unwrap().clone());
        let s = self.start_one()?;
        *shared.urls[i].write().unwrap() = s.url.clone();
        self.ours[i] = s;
        self.our_kills += 1;
        Ok(())
    }

    /// SIGKILLs the reference operator and starts it again on its ledger,
    /// with a new chaos seed, its chaos counts kept.
    fn kill_operator(&mut self, rng: &mut Rng) -> anyhow::Result<()> {
        self.count_chaos();
        self.operator.kill();
        self.operator.start(rng.next_u64())?;
        self.operator_kills += 1;
        Ok(())
    }

    /// Adds the chaos counts of the operator's current life to the run's,
    /// when it answers.
    fn count_chaos(&mut self) {
        if let Ok(counts) = self.rt.block_on(chaos_counters(self.c, &self.operator.url())) {
            add_counts(&mut self.chaos_total, counts);
        }
    }
}

/// Waits while the players buy and play, SIGKILLing our servers and the
/// operator as planned, each a random moment after its count of tickets
/// sold, until `--rounds` tickets are sold and every kill is done (or
/// nothing sells any more).
fn sell_under_kills(
    args: &ReliabilityArgs,
    shared: &Shared,
    procs: &mut Processes<'_>,
    rng: &mut Rng,
    handles: &[tokio::task::JoinHandle<()>],
    started: Instant,
) -> anyhow::Result<()> {
    let plan = kill_plan(rng, args.rounds, args.wallet_kills, args.operator_kills);
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
                let i = rng.range(0, procs.ours.len() as u64 - 1) as usize;
                procs.kill_ours(i, shared)?;
            } else {
                procs.kill_operator(rng)?;
            }
            next += 1;
            if (procs.our_kills + procs.operator_kills).is_multiple_of(5) {
                println!(
                    "  {} sold, kills {} of ours and {} of the operator's ({:.0} s)",
                    sold,
                    procs.our_kills,
                    procs.operator_kills,
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
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kill_plan_has_every_kill_before_the_last_round() {
        let plan = kill_plan(&mut Rng::new(7), 200, 4, 2);
        assert_eq!(plan.iter().filter(|k| k.1).count(), 4);
        assert_eq!(plan.iter().filter(|k| !k.1).count(), 2);
        assert!(plan.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(plan.iter().all(|k| (1..200).contains(&k.0)), "{plan:?}");
    }
}
