//! The short version of `as-capone reliability all` (RELIABILITY.md): the
//! real binary, SIGKILLed 5 times under load on SQLite and 5 times on
//! PostgreSQL (skipped with a message where PostgreSQL is unreachable,
//! unless AS_CAPONE_REQUIRE_POSTGRES is set), a 20-second soak sampled every
//! 2 seconds, the whole hostile corpus, the attacks on the limits on
//! guessing on both backends, shops whose answers are lost (retried:
//! the same answer, nothing applied twice), and floods of demo games and
//! registrations from many networks stopped by the global ceilings.
//! Nothing answered may be lost, changed or re-rolled, no 5xx, and every
//! hostile request is refused in the error shape without changing anything.

use serde_json::Value;
use std::process::Command;

#[test]
fn reliability_quick() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("reliability.json");
    let out = Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .args(["reliability", "all", "--quick", "--db", "both", "--stall-cap-secs", "40", "--json-out"])
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

    let kills = summary["kills"].as_array().expect("the kills part ran");
    for k in kills {
        let backend = k["backend"].as_str().unwrap();
        if k["skipped"] == true {
            eprintln!("kills on {backend}: skipped (PostgreSQL unreachable)");
            continue;
        }
        assert_eq!(k["kills_survived"], k["kills"], "{backend}: every kill survived");
        assert!(k["actions_answered"].as_u64().unwrap() > 0, "{backend}: actions were answered");
        assert!(k["actions_replayed"].as_u64().unwrap() > 0, "{backend}: actions were replayed");
        for field in ["lost", "changed", "rerolls", "server_errors_5xx", "unexpected_4xx"] {
            assert_eq!(k[field], 0, "{backend}: {field}; failures: {:#}", k["failures"]);
        }
        assert_eq!(k["ok"], true, "{backend}: {:#}", k["failures"]);
    }

    let shops = summary["shops"].as_array().expect("the shops part ran");
    for s in shops {
        let backend = s["backend"].as_str().unwrap();
        if s["skipped"] == true {
            eprintln!("shops on {backend}: skipped (PostgreSQL unreachable)");
            continue;
        }
        assert!(s["replayed"].as_u64().unwrap() > 0, "{backend}: lost answers were answered again");
        assert!(s["paid"].as_u64().unwrap() > 0, "{backend}: winners were paid");
        assert_eq!(s["ok"], true, "{backend}: {:#}", s["failures"]);
    }

    let soak = &summary["soak"];
    assert!(soak["samples"].as_array().is_some_and(|s| s.len() >= 5), "soak samples: {soak:#}");
    assert_eq!(soak["server_errors_5xx"], 0, "soak: no 5xx");
    assert_eq!(soak["errors"], 0, "soak: no error; first: {}", soak["first_error"]);

    let guessing = summary["guessing"].as_array().expect("the guessing part ran");
    for g in guessing {
        let backend = g["backend"].as_str().unwrap();
        if g["skipped"] == true {
            eprintln!("guessing on {backend}: skipped (PostgreSQL unreachable)");
            continue;
        }
        let checks = g["checks"].as_array().unwrap();
        assert!(checks.len() >= 5, "{backend}: the guessing checks ran: {checks:#?}");
        for c in checks {
            assert_eq!(c["ok"], true, "{backend}: {}: {}", c["check"], c["seen"]);
        }
    }

    let hostile = &summary["hostile"];
    assert!(hostile["cases"].as_u64().unwrap() >= 500, "at least 500 hostile cases");
    assert_eq!(hostile["server_errors_5xx"], 0, "hostile: no 5xx");
    let mut failing = Vec::new();
    for (cat, c) in hostile["categories"].as_object().unwrap() {
        for f in c["failures"].as_array().unwrap() {
            failing.push(format!("[{cat}] {}: {} -> {}", f["case"], f["answer"], f["problem"]));
        }
    }
    assert!(failing.is_empty(), "hostile cases failing:\n{}", failing.join("\n"));
    assert_eq!(hostile["changed_state"], 0, "hostile requests changed nothing");
    let accounts = &summary["accounts"];
    let flood = &accounts["login_flood"];
    assert!(flood["checked"].as_u64().unwrap() > 0, "passwords are checked during a flood: {flood:#}");
    assert_eq!(flood["refused_503"], flood["refused_503_with_retry_after"], "every refusal says when to retry");
    assert!(flood["peak_rss_mib"].as_u64().unwrap() < flood["ceiling_mib"].as_u64().unwrap(), "{flood:#}");
    for r in accounts["revocation"].as_array().unwrap() {
        assert!(r["ok"] == true || r["skipped"] == true, "revocation: {r:#}");
    }
    assert_eq!(accounts["ok"], true, "accounts: {accounts:#}");
    // Logins racing a password change, a recovery, a closure (a finding of the second outside audit).
    let races = &summary["races"];
    for r in races["backends"].as_array().expect("the races part ran") {
        if r["skipped"] == true {
            continue;
        }
        assert_eq!(r["races"], 15, "5 rounds of three races: {r:#}");
        assert_eq!(r["survivors"], 0, "no session of an old password survives: {r:#}");
        assert_eq!(r["closed_account_purchases"], 0, "{r:#}");
        assert!(r["sessions_opened"].as_u64().unwrap() > 0, "the races opened sessions to end: {r:#}");
    }
    assert_eq!(races["ok"], true, "races: {races:#}");
    // Floods of demo games and registrations from many networks stop at the
    // global ceilings while honest players buy and play (a finding of the second outside audit).
    let floods = &summary["floods"];
    for f in floods["backends"].as_array().expect("the floods part ran") {
        if f["skipped"] == true {
            continue;
        }
        let ceiling = |k: &str| f[k].as_i64().unwrap();
        assert!(f["demo_games_stored"].as_i64().unwrap() <= ceiling("ceiling_demo_games_an_hour"), "{f:#}");
        assert!(f["players_stored"].as_i64().unwrap() <= ceiling("ceiling_players_an_hour"), "{f:#}");
        assert!(f["refused_by_ceiling"].as_u64().unwrap() > 0, "the flood reached the ceilings: {f:#}");
        assert!(f["honest_purchases_during"].as_u64().unwrap() > 0, "honest players bought during the flood: {f:#}");
        assert_eq!(f["failures"], serde_json::json!([]), "{f:#}");
    }
    assert_eq!(floods["ok"], true, "floods: {floods:#}");
    assert!(out.status.success(), "as-capone reliability failed:\n{stdout}");
}
