//! `as-capone report --table FILE --games N`: the certification report
//! (docs/certification.md), end to end through the binary.
//!
//! The biased-source test is a unit test of the module (it needs a draw
//! source the binary does not offer): `cargo test --release -p
//! as-capone-certify` (crates/certify).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn example_table() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/prize-table.toml")
}

fn report(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .arg("report")
        .arg("--table")
        .arg(example_table())
        .args(args)
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn check<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no check {id}"))
}

/// A p-value as the page prints it (html::fmt_p).
fn fmt_p(p: f64) -> String {
    if p >= 1e-4 { format!("{p:.4}") } else { format!("{p:.2e}") }
}

/// The report on the example table with a million tickets per stream: every
/// check passes, the exact figures are the math crate's (art. 3.1, 3.2), and
/// the observed counts add up.
#[test]
fn a_million_games_on_the_example_table_pass_every_check() {
    let (ok, stdout, stderr) = report(&["--games", "1000000", "--json"]);
    assert!(ok, "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    let failed: Vec<&Value> = r["checks"].as_array().unwrap().iter().filter(|c| c["verdict"] != "PASS").collect();
    assert!(failed.is_empty(), "failed checks: {failed:#?}");
    assert_eq!(r["verdict"], "PASS");
    // One exact check and ten per stream.
    assert_eq!(r["checks"].as_array().unwrap().len(), 21);
    for id in
        ["sim.capone.cards_left", "fair.capone.cards_left", "fair.deck.pairs", "sim.serial", "fair.runs", "fair.rtp"]
    {
        let p = check(&r, id)["p_value"].as_f64().unwrap();
        assert!((0.001..=1.0).contains(&p), "{id}: {p}");
    }
    // The exact figures, as README and `odds --table` give them.
    assert_eq!(r["exact"]["rtp"]["fraction"], "243518266/359298585");
    assert_eq!(r["exact"]["hit_rate"]["fraction"], "313717/887157");
    assert_eq!(r["exact"]["final_outcome"][0]["fraction"], "2485288/7984413");
    assert_eq!(r["exact"]["final_outcome"][4]["fraction"], "573440/887157");
    assert_eq!(r["exact"]["legal_band"]["inside"], true);
    for s in r["streams"].as_array().unwrap() {
        assert_eq!(s["tickets"], 1_000_000);
        let finals: u64 =
            s["final_outcome"]["categories"].as_array().unwrap().iter().map(|c| c["observed"].as_u64().unwrap()).sum();
        assert_eq!(finals, 1_000_000);
        let games: u64 = s["tricks_per_game"]["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["observed"].as_u64().unwrap())
            .sum();
        assert_eq!(games, s["games"].as_u64().unwrap());
        // Each game draws As Capone's card once among 8, ..., 2 cards left (art. 3.2.2).
        for t in s["capone_by_cards_left"]["tests"].as_array().unwrap() {
            assert_eq!(t["draws"], s["games"], "{}", t["label"]);
        }
        assert_eq!(s["rtp"]["points"].as_array().unwrap().len(), 200);
    }
    // The table's digest is the canonical one (as `emit` and the server compute it).
    assert_eq!(r["table"]["digest"].as_str().unwrap().len(), 64);
    assert_eq!(r["table"]["rows"].as_array().unwrap().len(), 5);
}

/// The page: self-contained (no script, nothing fetched), with charts, and
/// saying what the JSON says. The JSON does not depend on the threads.
#[test]
fn the_page_is_self_contained_and_agrees_with_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let page_s = page.to_str().unwrap();
    let (ok, stdout, stderr) = report(&["--games", "20000", "--out", page_s, "--json", "--threads", "1"]);
    assert!(ok, "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.matches("<svg").count() >= 10, "charts: {}", html.matches("<svg").count());
    for bad in ["http://", "https://", "<script", "<link", "<img", "@import", "url("] {
        assert!(!html.contains(bad), "the page holds {bad:?}");
    }
    // Every check of the JSON is a line of the page with its p-value and verdict.
    for c in r["checks"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        let start = html.find(&format!("<tr id=\"check-{id}\">")).unwrap_or_else(|| panic!("no line for {id}"));
        let line = &html[start..start + html[start..].find("</tr>").unwrap()];
        let verdict = c["verdict"].as_str().unwrap();
        assert!(line.contains(&format!(">{verdict}</span>")), "{id}: {line}");
        if let Some(p) = c["p_value"].as_f64() {
            assert!(line.contains(&format!(">{}</td>", fmt_p(p))), "{id}: p {p} not in {line}");
        }
    }
    assert!(
        html.contains(&format!("Overall verdict: <span class=\"{}\">", r["verdict"].as_str().unwrap().to_lowercase()))
    );
    assert!(html.contains(r["table"]["digest"].as_str().unwrap()));
    assert!(html.contains(r["exact"]["rtp"]["fraction"].as_str().unwrap()));
    assert!(html.contains(r["subject"]["binary_sha256"].as_str().unwrap()));
    assert!(html.contains("dieharder -a -g 200"), "the appendix names the command");

    // The same run on two threads, four chunks: identical figures.
    let run = |threads: &str| {
        let (ok, stdout, stderr) = report(&["--games", "200000", "--json", "--threads", threads, "--seed", "9"]);
        assert!(ok, "{stderr}");
        let mut v: Value = serde_json::from_str(&stdout).unwrap();
        v.as_object_mut().unwrap().remove("run");
        v["subject"]["command"] = Value::Null;
        v
    };
    let (one, two) = (run("1"), run("2"));
    assert_eq!(one, two, "the figures depend on the number of threads");
    assert_eq!(one["streams"][0]["tickets"], 200_000);
    let (_, stdout, _) = report(&["--games", "200000", "--json", "--seed", "10"]);
    let ten: Value = serde_json::from_str(&stdout).unwrap();
    assert_ne!(ten["streams"], one["streams"], "another seed, other draws");
}

/// `--out X.json` writes the JSON; `--dieharder` fills the appendix.
#[test]
fn json_file_and_dieharder_appendix() {
    let dir = tempfile::tempdir().unwrap();
    let dh = dir.path().join("fair.dieharder.txt");
    std::fs::write(
        &dh,
        "#   dieharder version 3.31.1 Copyright 2003 Robert G. Brown   #\n\
            test_name   |ntup| tsamples |psamples|  p-value |Assessment\n\
            diehard_birthdays|   0|       100|     100|0.80552831|  PASSED  \n\
            sts_serial|  16|    100000|     100|0.99712345|   WEAK   \n",
    )
    .unwrap();
    let out = dir.path().join("r.json");
    let (ok, _, stderr) =
        report(&["--games", "5000", "--out", out.to_str().unwrap(), "--dieharder", dh.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let run = &r["dieharder"]["runs"][0];
    assert_eq!((run["name"].as_str(), run["passed"].as_u64(), run["weak"].as_u64()), (Some("fair"), Some(1), Some(1)));
    assert_eq!(run["not_passed"][0]["test"], "sts_serial");
    assert_eq!(check(&r, "dieharder.fair")["verdict"], "PASS", "WEAK is not FAILED");

    // A FAILED line fails the overall verdict.
    std::fs::write(&dh, "      rgb_lagged_sum|  31|   1000000|     100|0.00000012|  FAILED  \n").unwrap();
    let (ok, stdout, stderr) = report(&["--games", "5000", "--json", "--dieharder", dh.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(check(&r, "dieharder.fair")["verdict"], "FAIL");
    assert_eq!(r["verdict"], "FAIL");
}

/// Usage errors: --table and --db together, neither, nothing to write.
#[test]
fn usage_errors_are_clear() {
    let (ok, _, err) = report(&["--db", "sqlite://x.db", "--out", "x.html"]);
    assert!(!ok && err.contains("not both"), "{err}");
    let (ok, _, err) = report(&["--games", "10"]);
    assert!(!ok && err.contains("--out"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_as-capone")).arg("report").env_remove("AS_CAPONE_DB").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--table"), "{err}");
}

/// `--pdf`: Debian's Chromium prints the page. Skipped without Chromium
/// unless AS_CAPONE_REQUIRE_BROWSER=1.
#[test]
fn pdf_with_chromium() {
    let has_chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].iter().any(|p| Path::new(p).exists());
    if !has_chromium {
        assert!(
            std::env::var("AS_CAPONE_REQUIRE_BROWSER").as_deref() != Ok("1"),
            "AS_CAPONE_REQUIRE_BROWSER=1 but Chromium is not installed (Debian package chromium)"
        );
        eprintln!("SKIPPED pdf_with_chromium: Chromium is not installed (apt-get install chromium)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let pdf = dir.path().join("report.pdf");
    let (ok, _, stderr) = report(&["--games", "5000", "--out", page.to_str().unwrap(), "--pdf", pdf.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let bytes = std::fs::read(&pdf).unwrap();
    assert!(bytes.starts_with(b"%PDF"), "not a PDF: {:?}", &bytes[..bytes.len().min(16)]);
    assert!(bytes.len() > 20_000, "a PDF of {} bytes is too small for the report", bytes.len());
}
