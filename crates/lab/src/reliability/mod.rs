//! `as-capone reliability <kills|soak|hostile|accounts|floods|all>`: the fault and load
//! evidence, run against the real `as-capone serve` binary (this
//! very executable, started as a child process on a fresh temporary
//! database), so that it exercises the code players hit.
//!
//! - [`kills`]: the server SIGKILLed at random moments under load, restarted
//!   on the same database each time; a client-side journal of every answered
//!   action is checked after each restart (present, byte-identical on
//!   replay, draws unchanged, ledger and audit chain sound).
//! - [`soak`]: a steady paced load for minutes, sampling throughput, p99
//!   latency and the server's resident memory; a verdict on memory growth.
//! - [`hostile`]: a programmatic corpus of hostile requests, written on raw
//!   TCP sockets; each must be refused with a 4xx in the error shape and
//!   change nothing.
//! - [`guessing`]: the attacks on the limits on guessing (docs/limits.md)
//!   on each backend: a forged `X-Forwarded-For`, right play codes whose
//!   clients hang up, a lockout attempt from many networks, one login
//!   guessed from many networks, two processes on one database.
//! - [`shops`]: the answers of paper tickets' sales and payments lost
//!   (connection dropped, server SIGKILLed, requests sent at once), the
//!   shop's retry answered with the first answer, nothing applied twice.
//! - [`wallet_chaos`]: the operator mode through the reference operator
//!   with its chaos switch on, our servers and the operator SIGKILLed at
//!   random moments; afterwards the reconciliation is clean, no debit is
//!   doubled or orphaned, every prize is credited once and the operator's
//!   ledger is balanced (`as-capone reliability wallet-chaos`).
//! - [`accounts`]: a flood of logins keeps the server's memory bounded
//!   (503 with `Retry-After` beyond the password hashes in flight), and a
//!   password change or a logout ends the tokens it must, on each backend.
//! - [`races`]: logins with the old password sent at the same moment as a
//!   password change, a recovery or a closure, on one process (SQLite) and
//!   two (PostgreSQL): no session of the old password survives, and a
//!   closed account never buys.
//!
//! - [`floods`]: demo games and registrations flooded from ever new
//!   networks stop at the global ceilings (the rows stored, the disk's
//!   growth), while honest players buy and play: their purchases' p50 and
//!   p99 before and during the flood.
//!
//! What the parts share: their arguments (`args.rs`), a database with the
//! real server started on it and the checks of its ledger (`testbed.rs`),
//! the runs' random numbers (`rng.rs`), latency quantiles (`latency.rs`).
//!
//! Every part prints a text summary; `--json-out FILE` writes one JSON
//! object with every figure (what `tests/reliability.rs` asserts). The exit
//! status is non-zero when any check failed.

mod accounts;
mod args;
mod floods;
mod guessing;
mod hostile;
mod kills;
mod latency;
mod races;
mod rng;
mod shops;
mod soak;
mod testbed;
mod wallet_chaos;

pub use args::ReliabilityArgs;
pub use wallet_chaos::{OperatorChildArgs, reference_operator};

use anyhow::Context;
use args::{Backend, DbChoice, Part};
use serde_json::{Value, json};
use std::time::Instant;

/// Runs the parts `args` names, prints their summaries and writes every
/// figure to `--json-out`; an error when any check failed.
pub fn run(mut args: ReliabilityArgs) -> anyhow::Result<()> {
    if args.quick {
        args.kills = args.kills.min(5);
        args.minutes = args.minutes.min(20.0 / 60.0);
        args.sample_secs = args.sample_secs.min(2);
        args.kill_window_ms = args.kill_window_ms.min(1200);
        args.rounds = args.rounds.min(200);
        args.wallet_kills = args.wallet_kills.min(4);
        args.operator_kills = args.operator_kills.min(2);
        args.race_rounds = args.race_rounds.min(5);
        args.flood_secs = args.flood_secs.min(2.0);
        args.flood_requests = args.flood_requests.min(5000);
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    let started = Instant::now();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut summary = json!({
        "seed": seed,
        "quick": args.quick,
        "version": env!("CARGO_PKG_VERSION"),
        "date_unix": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
    });
    let mut ok = true;
    let backends: Vec<Backend> = match args.db {
        DbChoice::Sqlite => vec![Backend::Sqlite],
        DbChoice::Postgres => vec![Backend::Postgres],
        DbChoice::Both => vec![Backend::Sqlite, Backend::Postgres],
    };
    if matches!(args.part, Part::Kills | Part::All) {
        let mut parts = Vec::new();
        for (i, &b) in backends.iter().enumerate() {
            let r = kills::run(&args, b, seed.wrapping_add(i as u64), &rt)?;
            ok &= r.get("ok").and_then(Value::as_bool).unwrap_or(false);
            parts.push(r);
        }
        summary["kills"] = Value::Array(parts);
    }
    if matches!(args.part, Part::Hostile | Part::All) {
        let r = hostile::run(&args, seed)?;
        ok &= r["ok"].as_bool().unwrap_or(false);
        summary["hostile"] = r;
    }
    if matches!(args.part, Part::Guessing | Part::All) {
        let mut parts = Vec::new();
        for &b in &backends {
            let r = guessing::run(&args, b, &rt)?;
            ok &= r.get("ok").and_then(Value::as_bool).unwrap_or(false);
            parts.push(r);
        }
        summary["guessing"] = Value::Array(parts);
    }
    if matches!(args.part, Part::Shops | Part::All) {
        let mut parts = Vec::new();
        for (i, &b) in backends.iter().enumerate() {
            let r = shops::run(&args, b, seed.wrapping_add(100 + i as u64), &rt)?;
            ok &= r.get("ok").and_then(Value::as_bool).unwrap_or(false);
            parts.push(r);
        }
        summary["shops"] = Value::Array(parts);
    }
    if matches!(args.part, Part::Accounts | Part::All) {
        let r = accounts::run(&args, &backends, &rt)?;
        ok &= r["ok"].as_bool().unwrap_or(false);
        summary["accounts"] = r;
    }
    if matches!(args.part, Part::Races | Part::All) {
        let r = races::run(&args, &backends, &rt)?;
        ok &= r["ok"].as_bool().unwrap_or(false);
        summary["races"] = r;
    }
    if matches!(args.part, Part::Floods | Part::All) {
        let r = floods::run(&args, &backends, &rt)?;
        ok &= r["ok"].as_bool().unwrap_or(false);
        summary["floods"] = r;
    }
    if args.part == Part::WalletChaos {
        let mut parts = Vec::new();
        for (i, &b) in backends.iter().enumerate() {
            let r = wallet_chaos::run(&args, b, seed.wrapping_add(200 + i as u64), &rt)?;
            ok &= r.get("ok").and_then(Value::as_bool).unwrap_or(false);
            parts.push(r);
        }
        summary["wallet_chaos"] = Value::Array(parts);
    }
    if matches!(args.part, Part::Soak | Part::All) {
        let r = soak::run(&args, args.soak_db, &rt)?;
        ok &= r.get("ok").and_then(Value::as_bool).unwrap_or(false);
        summary["soak"] = r;
    }
    summary["ok"] = json!(ok);
    summary["seconds"] = json!(started.elapsed().as_secs_f64());
    if let Some(path) = &args.json_out {
        std::fs::write(path, serde_json::to_vec_pretty(&summary)?).with_context(|| format!("{}", path.display()))?;
    }
    println!(
        "\nreliability: {} in {:.0} s (seed {seed})",
        if ok { "PASS" } else { "FAIL" },
        started.elapsed().as_secs_f64()
    );
    anyhow::ensure!(ok, "some reliability checks failed (see above)");
    Ok(())
}
