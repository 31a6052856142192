//! The short form of `as-capone reliability wallet-chaos` (RELIABILITY.md,
//! "wallet chaos"): 200 tickets sold and played through the reference
//! operator with its chaos switch on (delays, 5xx, dropped answers,
//! duplicate deliveries, a skewed clock), our server SIGKILLed 4 times and
//! the operator twice, on SQLite, and on PostgreSQL with two server
//! processes (skipped with a message where PostgreSQL is unreachable,
//! unless AS_CAPONE_REQUIRE_POSTGRES is set). Afterwards everything must
//! settle and reconcile: no double debit, no debit without a ticket, no
//! ticket without a debit, every prize credited exactly once, the
//! operator's ledger balanced.
//!
//! The reference operator runs as `as-capone reference-operator` (hidden:
//! the crate's library in a process of its own, so that it can be
//! SIGKILLed).

use serde_json::Value;
use std::process::Command;

#[test]
fn wallet_chaos_quick() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("wallet-chaos.json");
    let out = Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .args(["reliability", "wallet-chaos", "--quick", "--db", "both", "--players", "6", "--json-out"])
        .arg(&json_path)
        .env("TMPDIR", dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    let summary: Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap_or_default())
        .unwrap_or_else(|e| panic!("no summary ({e}); stdout:\n{stdout}\nstderr:\n{stderr}"));
    let runs = summary["wallet_chaos"].as_array().expect("the wallet chaos part ran");
    assert_eq!(runs.len(), 2, "SQLite and PostgreSQL");
    for r in runs {
        let backend = r["backend"].as_str().unwrap();
        if r["skipped"] == true {
            eprintln!("wallet chaos on {backend}: skipped (PostgreSQL unreachable)");
            continue;
        }
        assert_eq!(r["server_processes"], if backend == "postgres" { 2 } else { 1 }, "{backend}");
        assert!(r["tickets_sold"].as_u64().unwrap() >= 200, "{backend}: {}", r["tickets_sold"]);
        assert_eq!((r["our_kills"].as_u64(), r["operator_kills"].as_u64()), (Some(4), Some(2)), "{backend}");
        // Chaos really happened: answers dropped after applying, errors, duplicates.
        let chaos = &r["chaos"];
        for what in ["dropped", "duplicated", "delayed", "skewed"] {
            assert!(chaos[what].as_u64().unwrap_or(0) > 0, "{backend}: chaos {what}: {chaos}");
        }
        assert!(chaos["errors_500"].as_u64().unwrap_or(0) + chaos["errors_503"].as_u64().unwrap_or(0) > 0, "{chaos}");
        // The operator's refusals reached the players, each with its reason.
        for code in ["player_blocked", "insufficient_funds", "limit_reached"] {
            assert!(r["refusals"][code].as_u64().unwrap_or(0) >= 3, "{backend}: {code}: {}", r["refusals"]);
        }
        let checks = r["checks"].as_array().unwrap();
        assert_eq!(checks.len(), 7, "{backend}: {checks:#?}");
        for c in checks {
            assert_eq!(c["ok"], true, "{backend}: {}: {}", c["check"], c["seen"]);
        }
        assert_eq!(r["reconciliation"]["mismatches"].as_array().map(Vec::len), Some(0), "{backend}");
        assert!(r["reconciliation"]["sold"].as_u64().unwrap() >= 200, "{backend}");
        for field in ["server_errors_5xx", "unexpected_4xx"] {
            assert_eq!(r[field], 0, "{backend}: {field}; failures: {:#}", r["failures"]);
        }
        assert_eq!(r["ok"], true, "{backend}: {:#}", r["failures"]);
    }
    assert!(out.status.success(), "as-capone reliability wallet-chaos failed:\n{stdout}");
}
