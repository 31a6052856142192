//! `as-capone report --db URL`: the operator's figures read from the
//! database by the binary are the admin API's (docs/contract.md Operator), and
//! follow what was sold and played.

use crate::common;

use serde_json::{Value, json};
use std::process::Command;

const OPERATOR: &str = "operator-token-for-the-report-test";

fn report(db: &str, extra: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_as-capone")).args(["report", "--db", db]).args(extra).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn report_gives_the_admin_apis_figures_from_the_database() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    let mut server = common::start_server(
        dir.path(),
        "report.db",
        &["--initial-blocks", "1", "--demo-token", "", "--operator-tokens", OPERATOR],
    );
    let url = server.url.clone();
    let db = format!("sqlite://{}", dir.path().join("report.db").display());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let admin: Value = rt.block_on(async {
        let c = reqwest::Client::new();
        let player: Value =
            c.post(format!("{url}/api/players")).json(&json!({})).send().await.unwrap().json().await.unwrap();
        let token = player["token"].as_str().unwrap();
        // Three tickets: one played to its first trick, two not played.
        let mut serials = Vec::new();
        for _ in 0..3 {
            let t = c.post(format!("{url}/api/tickets")).bearer_auth(token).json(&json!({})).send().await.unwrap();
            let t: Value = t.json().await.unwrap();
            serials.push(t["ticket"]["serial"].as_str().unwrap().to_string());
        }
        let r = c
            .post(format!("{url}/api/tickets/{}/actions", serials[0]))
            .bearer_auth(token)
            .json(&json!({"seq": 0, "action": "play", "card": "A", "client_seed": "report"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        // A paper emission too.
        let table = common::BLOCKS_OF_2000;
        let r = c
            .post(format!("{url}/api/admin/emissions"))
            .bearer_auth(OPERATOR)
            .json(&json!({"table": table, "blocks": 1, "channel": "paper"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        c.get(format!("{url}/api/admin/emissions")).bearer_auth(OPERATOR).send().await.unwrap().json().await.unwrap()
    });
    // While the server runs: the file is read beside it.
    let (ok, text) = report(&db, &["--json"]);
    assert!(ok, "{text}");
    let from_db: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(from_db, admin, "the binary's figures are the admin API's");
    let e1 = &from_db["emissions"][0];
    assert_eq!(e1["totals"]["printed"], 2000);
    assert_eq!(e1["totals"]["sold"], 3);
    assert_eq!(e1["totals"]["in_play"], 3);
    assert_eq!(e1["totals"]["sales_cents"], 900);
    assert_eq!(e1["rtp"]["so_far"], Value::Null, "no ticket finished");
    assert_eq!(from_db["emissions"][1]["channel"], "paper");
    assert_eq!(from_db["emissions"][1]["totals"]["sold"], 0);

    let (ok, text) = report(&db, &["--emission", "2"]);
    assert!(ok, "{text}");
    assert!(text.contains("emission 2 (TST, paper)") && text.contains("return to player so far -"), "{text}");
    assert!(!text.contains("emission 1 "), "{text}");
    let (ok, text) = report(&db, &["--emission", "9"]);
    assert!(!ok && text.contains("no emission 9"), "{text}");
    let (ok, text) = report(&format!("sqlite://{}", dir.path().join("missing.db").display()), &[]);
    assert!(!ok && text.contains("no database file"), "{text}");
    server.sigkill().unwrap();
}
