//! The auditor's and player's commands, through the real binary: `odds`,
//! `simulate` and `play` (docs/contract.md, command line).

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_as-capone"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

fn example_table() -> String {
    format!("{}/../../examples/prize-table.toml", env!("CARGO_MANIFEST_DIR"))
}

fn is_fraction(v: &Value) -> bool {
    let s = v.as_str().unwrap_or("");
    let Some((p, q)) = s.split_once('/') else { return false };
    p.parse::<u128>().is_ok() && q.parse::<u128>().map(|q| q > 0).unwrap_or(false)
}

#[test]
fn odds_json_has_the_contract_shape_and_exact_values() {
    let out = run(&["odds", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let per_round = v["per_round"].as_object().unwrap();
    assert_eq!(per_round.len(), 9);
    for k in 0..=8 {
        assert!(is_fraction(&per_round[&k.to_string()]), "per_round[{k}]");
    }
    assert_eq!(v["per_round"]["8"], "1/10321920");
    assert_eq!(v["per_round"]["0"], "1/10321920");
    assert!(is_fraction(&v["extra_per_round"]));
    let fin = v["final"].as_object().unwrap();
    let keys: Vec<&str> = fin.keys().map(|k| k.as_str()).collect();
    assert_eq!(keys.len(), 5);
    for k in ["5", "6", "7", "8", "lose"] {
        assert!(is_fraction(&fin[k]), "final[{k}]");
    }
    assert_eq!(v["final"]["8"], "1/7984413");
    assert!(v.get("table").is_none(), "no table without --table");
}

#[test]
fn odds_with_a_table_adds_the_table_object() {
    let out = run(&["odds", "--json", "--table", &example_table()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["table"];
    assert_eq!(t["price_cents"], 300);
    for k in ["expected_payout_cents", "rtp", "hit_rate"] {
        assert!(is_fraction(&t[k]), "{k}: {}", t[k]);
    }
    assert_eq!(t["hit_rate"], v_final_win(&v));
    // Human output names the legal band and says where the table stands.
    let out = run(&["odds", "--table", &example_table()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("62 % to 75 %"), "{text}");
    assert!(text.contains("inside the band"), "{text}");
    assert!(text.contains("99.99th percentile"), "{text}");
}

/// The hit rate of the example table is the chance of winning at all (every
/// schedule pays for 5 to 8 tricks): 1 - final.lose.
fn v_final_win(v: &Value) -> String {
    let (p, q) = v["final"]["lose"].as_str().unwrap().split_once('/').unwrap();
    let (p, q): (u128, u128) = (p.parse().unwrap(), q.parse().unwrap());
    format!("{}/{}", q - p, q)
}

#[test]
fn odds_warns_outside_the_legal_band() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("generous.toml");
    std::fs::write(
        &path,
        "game = \"As Capone\"\ncode = \"ASC\"\nprice_cents = 300\nblock_size = 10\n[[schedule]]\ntickets = 10\nprizes_cents = { 5 = 3000, 6 = 3000, 7 = 3000, 8 = 3000 }\n",
    )
    .unwrap();
    let out = run(&["odds", "--table", path.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("WARNING: return to player") && text.contains("ABOVE"), "{text}");
}

#[test]
fn odds_warns_on_stderr_about_a_table_outside_art_2_and_still_works() {
    // The regulation's own figures: no warning.
    let out = run(&["odds", "--json", "--table", &example_table()]);
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("WARNING"), "{}", String::from_utf8_lossy(&out.stderr));

    // A 10-ticket block at 2.50 €: one WARNING line per deviation, citing art. 2.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.toml");
    std::fs::write(
        &path,
        "game = \"As Capone\"\ncode = \"ASC\"\nprice_cents = 250\nblock_size = 10\n[[schedule]]\ntickets = 10\nprizes_cents = { 5 = 300, 6 = 1000, 7 = 10000, 8 = 1000000 }\n",
    )
    .unwrap();
    for json in [true, false] {
        let mut args = vec!["odds", "--table", path.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let out = run(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let err = String::from_utf8(out.stderr).unwrap();
        let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("WARNING: ")).collect();
        assert_eq!(warnings.len(), 2, "{err}");
        assert!(warnings.iter().all(|w| w.contains("demo.toml") && w.contains("art. 2")), "{err}");
        assert!(warnings[0].contains("250 cents, not the 300 cents"), "{err}");
        assert!(warnings[1].contains("10 tickets, not the 300 000"), "{err}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        if json {
            // The warnings stay out of the JSON on stdout.
            let v: Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(v["table"]["price_cents"], 250);
        } else {
            assert!(stdout.contains("10 tickets per block at 2.50 €"), "{stdout}");
        }
    }
}

#[test]
fn a_table_the_regulation_forbids_is_refused_naming_the_row_and_the_article() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("falling.toml");
    std::fs::write(
        &path,
        "game = \"As Capone\"\ncode = \"ASC\"\nprice_cents = 300\nblock_size = 300000\n\n[[schedule]]\ntickets = 300000\nprizes_cents = { 5 = 1000, 6 = 300, 7 = 10000, 8 = 1000000 }\n",
    )
    .unwrap();
    let out = run(&["odds", "--table", path.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("schedule row 1 (line 6)") && err.contains("(art. 3.2.3.3)"), "{err}");
}

#[test]
fn a_broken_table_is_one_clear_line_and_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.toml");
    std::fs::write(
        &path,
        "game = \"As Capone\"\ncode = \"ASC\"\nprice_cents = 300\nblock_size = 10\n[[schedule]]\ntickets = 9\nprizes_cents = { 5 = 300 }\n",
    )
    .unwrap();
    let out = run(&["odds", "--table", path.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.starts_with("as-capone: error:"), "{err}");
    let out = run(&["odds", "--table", "/nonexistent/table.toml"]);
    assert!(!out.status.success());
}

#[test]
fn simulate_json_shape_and_reproducibility_across_threads() {
    let a = run(&["simulate", "--games", "300000", "--seed", "11", "--threads", "1", "--json"]);
    let b = run(&["simulate", "--games", "300000", "--seed", "11", "--threads", "3", "--json"]);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let va: Value = serde_json::from_slice(&a.stdout).unwrap();
    let vb: Value = serde_json::from_slice(&b.stdout).unwrap();
    assert_eq!(va["counts"], vb["counts"], "the same seed gives the same counts whatever the threads");
    assert_eq!(va["games"], 300000);
    let counts = va["counts"].as_object().unwrap();
    let total: u64 = ["5", "6", "7", "8", "lose"].iter().map(|k| counts[*k].as_u64().unwrap()).sum();
    assert_eq!(total, 300000);
    for k in ["seconds", "games_per_s", "chi_square", "p_value"] {
        assert!(va[k].is_number(), "{k}");
    }
    let p = va["p_value"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&p));
    assert!(p > 1e-4, "a fair engine fits its exact odds (seed 11): p = {p}");
}

#[test]
fn simulate_refuses_nonsense() {
    assert!(!run(&["simulate", "--games", "0"]).status.success());
    assert!(!run(&["simulate", "--games", "10", "--threads", "0"]).status.success());
    assert!(!run(&["simulate", "--games", "ten"]).status.success());
}

fn play(seed: &str, input: &str) -> (bool, String, String) {
    let mut child = bin()
        .args(["play", "--seed", seed])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// Plays A K Q ... 7 again and again, pressing Enter for the deck: enough
/// lines for any ticket (refused lines are explained and asked again).
fn script() -> String {
    let mut s = String::new();
    for _ in 0..60 {
        for c in ["A", "K", "Q", "J", "10", "9", "8", "7"] {
            s += c;
            s += "\n\n";
        }
    }
    s
}

#[test]
fn play_a_whole_ticket_in_the_terminal() {
    let (ok, out, err) = play("demo-1", &script());
    assert!(ok, "{err}");
    assert!(out.contains("Commitment (SHA-256 of the server seed)"), "{out}");
    assert!(out.contains("You play A♥"), "{out}");
    assert!(out.contains("Game over with"), "{out}");
    assert!(out.contains("Server seed, revealed:"), "{out}");
    assert!(out.contains("You win") || out.contains("Lost ticket"), "{out}");
    // Same seed, same ticket.
    let (_, again, _) = play("demo-1", &script());
    assert_eq!(out, again);
}

#[test]
fn play_explains_refused_input_and_goes_on() {
    let input = format!("Z\nA\nA\nv\n{}", script());
    let (ok, out, _) = play("demo-2", &input);
    assert!(ok);
    assert!(out.contains("unknown card \"Z\""), "{out}");
    // Unless the Ace tied (a deck draw is then due and the line is the click),
    // playing it again is refused.
    assert!(out.contains("not in your hand") || out.contains("Tie-break"), "{out}");
    assert!(out.contains("You play J♥") || out.contains("Tie-break"), "V is the French name of the Jack: {out}");
}

#[test]
fn play_reaches_ties_and_extra_duels_for_some_seeds() {
    // Over a few seeds the terminal shows the rarer screens too.
    let mut seen_tie = false;
    let mut seen_extra = false;
    for i in 0..40 {
        let (ok, out, _) = play(&format!("s{i}"), &script());
        assert!(ok);
        seen_tie |= out.contains("Tie-break:");
        seen_extra |= out.contains("Extra duel:");
        if seen_tie && seen_extra {
            break;
        }
    }
    assert!(seen_tie && seen_extra);
}

#[test]
fn play_fails_clearly_when_input_ends_early() {
    let (ok, _, err) = play("demo-3", "A\n");
    assert!(!ok);
    assert!(err.contains("input ended before the ticket was finished"), "{err}");
    let (ok, out, _) = play("demo-3", "Q\nquit\n");
    assert!(ok);
    assert!(out.contains("unfinished"));
}
