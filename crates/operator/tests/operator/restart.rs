//! Durability: the program killed (SIGKILL) right after answering, started
//! again on the same ledger, answers the same transaction the same, byte
//! for byte, and has moved the money once.

use crate::helpers::*;
use as_capone_operator::WalletClient;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use wallet::{BalanceRequest, CURRENCY, TxKind, WalletAnswer, paths};

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

/// The load's target and progress.
#[derive(Default)]
struct Load {
    url: std::sync::Mutex<String>,
    answered: AtomicUsize,
    retries: AtomicUsize,
}

/// Sends until a definite answer (the program may be down or restarting):
/// the game server's retry of the same transaction id.
async fn definite(load: &Load, path: &str, request: &impl serde::Serialize) -> (u16, Vec<u8>) {
    let url = &load.url;
    for _ in 0..2_000 {
        let base = url.lock().unwrap().clone();
        let client = WalletClient::new(&base, keys(), Duration::from_secs(2));
        if let Ok(r) = client.call(path, request).await
            && r.status < 500
        {
            r.verified.clone().expect("signed");
            load.answered.fetch_add(1, Ordering::SeqCst);
            return (r.status, r.body);
        }
        load.retries.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no definite answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_under_load_and_restarted_every_transaction_happened_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("operator.db");
    let (child, url) = spawn(&db);
    let load = std::sync::Arc::new(Load { url: std::sync::Mutex::new(url), ..Load::default() });
    // 4 players' games, each 25 debits and some credits, while the program is killed twice.
    let mut tasks = tokio::task::JoinSet::new();
    for p in 0..4 {
        let load = load.clone();
        tasks.spawn(async move {
            let mut answers = Vec::new();
            for n in 0..25 {
                // p1 exists (the seed player); all play on it, on distinct rounds.
                let serial = format!("L-{p}-{n}");
                let d = money(TxKind::Debit, &serial, "p1", 100);
                answers.push((paths::DEBIT, d.clone(), definite(&load, paths::DEBIT, &d).await));
                if n % 4 == 0 {
                    let c = money(TxKind::Credit, &serial, "p1", 150);
                    answers.push((paths::CREDIT, c.clone(), definite(&load, paths::CREDIT, &c).await));
                }
            }
            answers
        });
    }
    let mut child = child;
    // Killed after 20 answers, then after 70: in the middle of the load.
    for at in [20, 70] {
        while load.answered.load(Ordering::SeqCst) < at {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let (c, u) = spawn(&db);
        child = c;
        *load.url.lock().unwrap() = u;
    }
    let answers: Vec<_> = tasks.join_all().await.into_iter().flatten().collect();
    assert!(load.retries.load(Ordering::SeqCst) > 0, "the kills cut calls in flight");
    assert_eq!(answers.len(), 4 * (25 + 7));
    let base = load.url.lock().unwrap().clone();
    let client = WalletClient::new(&base, keys(), Duration::from_secs(5));
    for (path, request, (status, body)) in &answers {
        assert_eq!(*status, 200);
        let again = client.call(path, request).await.unwrap();
        assert_eq!((again.status, &again.body), (*status, body), "the stored answer of {}", request.transaction_id);
    }
    // 100 debits of 100 and 28 credits of 150, once each.
    let (start, debits, credits) = (10_000, 100 * 100, 28 * 150);
    assert_eq!(balance(&client).await, start - debits + credits);
    let summary: serde_json::Value = reqwest::Client::new()
        .get(format!("{base}/admin/summary"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(summary["balanced"], true, "{summary}");
    assert_eq!((summary["debit"]["count"].as_i64(), summary["credit"]["count"].as_i64()), (Some(100), Some(28)));
    child.kill().unwrap();
    child.wait().unwrap();
}
