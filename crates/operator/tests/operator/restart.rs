//! Durability: the program killed (SIGKILL) right after answering, started
//! again on the same ledger, answers the same transaction the same, byte
//! for byte, and has moved the money once.

use crate::helpers::*;
use as_capone_operator::WalletClient;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use wallet::messages::paths;
use wallet::{BalanceRequest, CURRENCY, TxKind, WalletAnswer};

/// Starts the program on `db`; returns it and its URL (read from its first line).
fn spawn(db: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_as-capone-operator"))
        .args(["--listen", "127.0.0.1:0", "--database"])
        .arg(db)
        .args(["--player", "p1:10000", "--admin-token", ADMIN])
        .env("AS_CAPONE_OPERATOR_KEYS", key_spec())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the operator's program starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("first line: {line:?}")).to_string();
    (child, url)
}

async fn balance(client: &WalletClient) -> i64 {
    let r =
        client.call(paths::BALANCE, &BalanceRequest { player: "p1".into(), currency: CURRENCY.into() }).await.unwrap();
    assert_eq!(r.status, 200);
    r.json::<WalletAnswer>().balance_cents
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_operator_answers_the_same_transaction_the_same_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("operator.db");
    let debit = money(TxKind::Debit, "K-1", "p1", 300);
    let credit = money(TxKind::Credit, "K-1", "p1", 1_200);
    let mut answers = Vec::new();
    for round in 0..3 {
        let (mut child, url) = spawn(&db);
        let client = WalletClient::new(&url, keys(), Duration::from_secs(10));
        // The seed player is created once; a restart leaves its balance as it is.
        let expected = if round == 0 { 10_000 } else { 10_900 };
        assert_eq!(balance(&client).await, expected, "restart {round}");
        let d = client.call(paths::DEBIT, &debit).await.unwrap();
        let c = client.call(paths::CREDIT, &credit).await.unwrap();
        assert_eq!((d.status, c.status), (200, 200));
        d.verified.clone().unwrap();
        answers.push((d.body, c.body));
        // Killed at once after its answers: no chance to flush anything more.
        child.kill().unwrap();
        child.wait().unwrap();
    }
    assert!(answers.iter().all(|a| a == &answers[0]), "the stored answers, byte for byte");
    let (mut child, url) = spawn(&db);
    let client = WalletClient::new(&url, keys(), Duration::from_secs(10));
    assert_eq!(balance(&client).await, 10_900);
    let summary: serde_json::Value = reqwest::Client::new()
        .get(format!("{url}/admin/summary"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(summary["balanced"], true, "{summary}");
    assert_eq!((summary["debit"]["count"].as_i64(), summary["credit"]["count"].as_i64()), (Some(1), Some(1)));
    child.kill().unwrap();
    child.wait().unwrap();
}
