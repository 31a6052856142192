//! `as-capone reconcile` end to end, against a stand-in for both sides: the
//! game server's desk (`GET /api/admin/wallet/rounds`, bearer token) and
//! the operator's wallet (`POST /wallet/transactions`, signed both ways
//! with `wallet::sign`). The exit status is 0 for a clean period, 1 on any
//! mismatch, 2 when either side cannot be read or its answer's signature
//! is refused, and 2 on a command line clap refuses. Then against the
//! real ones: `as-capone serve` in operator mode and the reference
//! operator (crate `as-capone-operator`), tickets bought and played, a
//! clean period, and a debit slipped in at the operator for a round the
//! game never sold.

use crate::common;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::process::{Command, Output};
use std::sync::Arc;
use wallet::{
    Covered, Keys, LaunchRequest, MoneyRequest, OperatorTransaction, OurRound, RoundState, Signed, Signer,
    TransactionsAnswer, TransactionsRequest, TxKind, paths,
};

const KEYS: &str = "k1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const OTHER_KEYS: &str = "k1:ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const TOKEN: &str = "desk-token-0123456789abcdef";
/// The period reconciled: 2026-12-05 06:00 to 07:00 UTC.
const FROM: i64 = 1_796_450_400_000;
const TO: i64 = 1_796_454_000_000;

struct Fake {
    /// Our rounds, each with the moment it began.
    rounds: Vec<(i64, OurRound)>,
    transactions: Vec<OperatorTransaction>,
    /// Checks the requests' signatures (and nonces).
    signer: Signer,
    /// Signs the answers.
    answer_keys: Keys,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

async fn rounds(State(f): State<Arc<Fake>>, headers: HeaderMap, Query(q): Query<HashMap<String, i64>>) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(&format!("Bearer {TOKEN}")) {
        return (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "unauthorized", "message": "no"})))
            .into_response();
    }
    let (from, to) = (q["from_ms"], q["to_ms"]);
    let list: Vec<&OurRound> = f.rounds.iter().filter(|(at, _)| (from..to).contains(at)).map(|(_, r)| r).collect();
    axum::Json(json!({ "rounds": list })).into_response()
}

async fn transactions(State(f): State<Arc<Fake>>, headers: HeaderMap, body: Bytes) -> Response {
    let path = paths::TRANSACTIONS;
    let signed = Signed::from_headers(|n| headers.get(n).and_then(|v| v.to_str().ok())).expect("a signed request");
    let (status, answer) = match f.signer.check(Covered::Request { method: "POST", path }, &body, &signed, now_ms()) {
        Ok(()) => {
            let q: TransactionsRequest = serde_json::from_slice(&body).expect("a transactions request");
            let list =
                f.transactions.iter().filter(|t| (q.from_ms..q.to_ms).contains(&t.applied_ms)).cloned().collect();
            (200, serde_json::to_vec(&TransactionsAnswer { transactions: list }).unwrap())
        }
        Err(e) => (401, serde_json::to_vec(&json!({"error": "bad_signature", "message": e.to_string()})).unwrap()),
    };
    let covered = Covered::Answer { method: "POST", path, status, request_nonce: &signed.nonce };
    let mut headers = HeaderMap::new();
    for (name, value) in f.answer_keys.sign(covered, &answer, now_ms()).headers() {
        headers.insert(name, value.parse().unwrap());
    }
    headers.insert("content-type", "application/json".parse().unwrap());
    (StatusCode::from_u16(status).unwrap(), headers, answer).into_response()
}

/// Serves both sides on one address, on a thread of its own, for the
/// test's life.
fn serve(fake: Fake) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let app = Router::new()
                .route("/api/admin/wallet/rounds", get(rounds))
                .route(paths::TRANSACTIONS, post(transactions))
                .with_state(Arc::new(fake));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    format!("http://{}", rx.recv().unwrap())
}

fn round(id: &str, state: RoundState, prize: Option<i64>) -> OurRound {
    OurRound {
        round_id: id.into(),
        player: "alice".into(),
        price_cents: 300,
        state,
        prize_cents: prize,
        credit_acknowledged: prize.is_some(),
    }
}

fn tx(round: &str, kind: TxKind, amount: i64, applied_ms: i64, rolled_back: bool) -> OperatorTransaction {
    OperatorTransaction {
        transaction_id: format!("{round}:{kind}"),
        kind,
        round_id: round.into(),
        player: "alice".into(),
        amount_cents: amount,
        applied_ms,
        rolled_back,
    }
}

/// A clean hour: a sold ticket whose debit was applied just after the
/// period ended (found through the margin) and whose prize was credited;
/// a ticket released after its debit was rolled back; and a round of the
/// hour before whose debit fell in this hour (not this period's to judge).
/// `ghost` adds a debit standing at the operator for a round the game
/// never sold.
fn fake(ghost: bool, answer_keys: &str) -> Fake {
    let mut transactions = vec![
        tx("S-1.1", TxKind::Debit, 300, TO + 20, false),
        tx("S-1.1", TxKind::Credit, 150_000, TO + 90_000, false),
        tx("S-2.1", TxKind::Debit, 300, FROM + 1_000, true),
        tx("S-2.1", TxKind::Rollback, 300, FROM + 9_000, false),
        tx("S-0.1", TxKind::Debit, 300, FROM + 2, false),
    ];
    if ghost {
        transactions.push(tx("S-9.1", TxKind::Debit, 300, FROM + 60_000, false));
    }
    Fake {
        rounds: vec![
            (TO - 1, round("S-1.1", RoundState::Sold, Some(150_000))),
            (FROM + 900, round("S-2.1", RoundState::Released, None)),
            (FROM - 1, round("S-0.1", RoundState::Sold, None)),
        ],
        transactions,
        signer: Signer::new(Keys::parse(KEYS).unwrap()),
        answer_keys: Keys::parse(answer_keys).unwrap(),
    }
}

fn reconcile(game: &str, wallet: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .args(["reconcile", "--game", game, "--operator-token", TOKEN, "--wallet-url", wallet])
        .args(["--operator-keys", KEYS, "--from", "2026-12-05T06:00:00Z", "--to", &TO.to_string()])
        .args(extra)
        .env_remove("AS_CAPONE_OPERATOR_TOKEN")
        .env_remove("AS_CAPONE_OPERATOR_KEYS")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_clean_period_exits_0_with_its_figures() {
    let url = serve(fake(false, KEYS));
    let out = reconcile(&url, &url, &["--strict"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("reconciliation of 2026-12-05T06:00:00.000Z to 2026-12-05T07:00:00.000Z (strict)"),
        "{stdout}"
    );
    assert!(stdout.contains("our rounds: 2 (1 sold, 1 released, 1 with a prize)"), "{stdout}");
    // S-1's two and S-2's two; S-0's debit belongs to the hour before.
    assert!(stdout.contains("operator's transactions compared: 4 (of 5 fetched"), "{stdout}");
    assert!(stdout.contains("debited for sold tickets: 3,00\u{a0}€"), "{stdout}");
    assert!(stdout.contains("credited for prizes: 1\u{a0}500,00\u{a0}€"), "{stdout}");
    assert!(stdout.contains("clean:"), "{stdout}");
}

#[test]
fn a_mismatch_exits_1_and_names_its_round_and_code() {
    let url = serve(fake(true, KEYS));
    let out = reconcile(&url, &url, &[]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("1 mismatch:\n"), "{stdout}");
    assert!(stdout.contains("S-9.1  debit_without_ticket"), "{stdout}");
    assert!(!stdout.contains("clean:"), "{stdout}");

    let out = reconcile(&url, &url, &["--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["clean"], false);
    assert_eq!((v["from_ms"].as_i64(), v["to_ms"].as_i64()), (Some(FROM), Some(TO)));
    assert_eq!(v["report"]["sold"], 1);
    assert_eq!(v["report"]["credited_cents"], 150_000);
    assert_eq!(
        v["report"]["mismatches"],
        json!([{"round_id": "S-9.1", "kind": "debit_without_ticket",
        "detail": "the operator holds a debit for a round the game did not sell"}])
    );
}

#[test]
fn a_side_that_cannot_be_read_or_trusted_exits_2() {
    let url = serve(fake(false, KEYS));
    // The desk refuses the token.
    let out = Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .args(["reconcile", "--game", &url, "--operator-token", "wrong-token", "--wallet-url", &url])
        .args(["--operator-keys", KEYS, "--from", &FROM.to_string(), "--to", &TO.to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("401"), "{}", text(&out.stderr));
    // The operator's answer is signed with a key we do not share.
    let forged = serve(fake(false, OTHER_KEYS));
    let out = reconcile(&url, &forged, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("signature is refused"), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "no report from an answer we cannot trust");
    // Our request is signed with a key the operator does not share: its 401.
    let out = Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .args(["reconcile", "--game", &url, "--operator-token", TOKEN, "--wallet-url", &forged])
        .args(["--operator-keys", OTHER_KEYS, "--from", &FROM.to_string(), "--to", &TO.to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("401"), "{}", text(&out.stderr));
    // Nobody listens at the wallet's address.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let out = reconcile(&url, &format!("http://{closed}"), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/wallet/transactions"), "{}", text(&out.stderr));
}

#[test]
fn the_command_line_is_checked_before_anything_is_read() {
    let run =
        |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_as-capone")).arg("reconcile").args(args).output().unwrap();
    let base = ["--game", "http://127.0.0.1:9", "--operator-token", TOKEN, "--wallet-url", "http://127.0.0.1:9"];
    let out = run(&[&base[..], &["--operator-keys", KEYS, "--from", "yesterday", "--to", "2026-12-05"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("\"yesterday\" is neither unix milliseconds nor an ISO 8601 date"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&[&base[..], &["--operator-keys", "k1:00", "--from", "0", "--to", "1"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--operator-keys"), "{}", text(&out.stderr));
    let out = run(&[&base[..], &["--operator-keys", KEYS, "--from", "0"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--to"), "{}", text(&out.stderr));
    // An empty period is refused (exit 2), not reconciled as clean.
    let out = run(&[&base[..], &["--operator-keys", KEYS, "--from", "2026-12-05", "--to", "2026-12-05"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("the period is empty"), "{}", text(&out.stderr));
}

/// Buys a ticket for the session `token` and plays it to the end; its serial.
async fn buy_and_play(c: &reqwest::Client, url: &str, token: &str) -> String {
    let r = c.post(format!("{url}/api/tickets")).bearer_auth(token).json(&serde_json::json!({})).send().await.unwrap();
    assert_eq!(r.status(), 201);
    let mut t = r.json::<Value>().await.unwrap()["ticket"].clone();
    let serial = t["serial"].as_str().unwrap().to_string();
    while t["phase"] != "finished" {
        let id = t["id"].as_str().unwrap().to_string();
        let r = c.post(format!("{url}/api/tickets/{id}/actions")).bearer_auth(token).json(&common::next_action(&t));
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), 200);
        t = r.json::<Value>().await.unwrap()["ticket"].clone();
    }
    serial
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_server_and_the_reference_operator_reconcile() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    let keys = Keys::parse(KEYS).unwrap();
    let mut options =
        operator::Options::new("127.0.0.1:0".parse().unwrap(), dir.path().join("operator.db"), keys.clone());
    options.players = vec![operator::PlayerSeed { player: "alice".into(), balance_cents: 100_000 }];
    let op = operator::start(options).await.unwrap();
    let wallet = op.url();
    let from =
        (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() - 1000).to_string();
    let server = common::start_server(
        dir.path(),
        "game.db",
        &[
            "--wallet",
            "operator",
            "--operator-wallet-url",
            &wallet,
            "--operator-keys",
            KEYS,
            "--operator-tokens",
            TOKEN,
        ],
    );
    let url = server.url.clone();
    let c = reqwest::Client::new();
    let launch = LaunchRequest {
        player: "alice".into(),
        currency: "EUR".into(),
        language: "en".into(),
        country: None,
        flags: Default::default(),
        lobby_url: None,
    };
    let code = operator::launch(&url, &keys, &launch).await.unwrap().code;
    let session: Value =
        c.post(format!("{url}/api/launch")).json(&json!({"code": code})).send().await.unwrap().json().await.unwrap();
    let token = session["token"].as_str().unwrap().to_string();
    let mut serials = Vec::new();
    for _ in 0..3 {
        serials.push(buy_and_play(&c, &url, &token).await);
    }
    // Every prize's credit acknowledged before the period is read (the
    // outbox's gauge is only refreshed by the worker's passes: the rounds
    // say it at once).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let rounds: Value = c
            .get(format!(
                "{url}/api/admin/wallet/rounds?from_ms={from}&to_ms={}",
                from.parse::<i64>().unwrap() + 3_600_000
            ))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let list = rounds["rounds"].as_array().unwrap();
        assert_eq!(list.len(), 3, "{rounds:#}");
        if list.iter().all(|r| r["prize_cents"].as_i64().unwrap_or(0) == 0 || r["credit_acknowledged"] == true) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the prizes were not credited: {rounds:#}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // An hour ahead: the margin's ten minutes either side are asked for too.
    let to = (from.parse::<i64>().unwrap() + 3_600_000).to_string();
    let run = |extra: Vec<String>| {
        let (url, wallet, from, to) = (url.clone(), wallet.clone(), from.clone(), to.clone());
        tokio::task::spawn_blocking(move || {
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            Command::new(env!("CARGO_BIN_EXE_as-capone"))
                .args(["reconcile", "--game", &url, "--operator-token", TOKEN, "--wallet-url", &wallet])
                .args(["--operator-keys", KEYS, "--from", &from, "--to", &to, "--strict"])
                .args(extra)
                .output()
                .unwrap()
        })
    };
    let out = run(vec![]).await.unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("our rounds: 3 (3 sold, 0 released"), "{stdout}");
    assert!(stdout.contains("debited for sold tickets: 9,00\u{a0}€"), "{stdout}");
    let out = run(vec!["--json".into()]).await.unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["clean"].as_bool(), v["report"]["sold"].as_u64()), (Some(true), Some(3)));
    let rounds: Vec<String> = serials.iter().map(|s| format!("{s}.1")).collect();
    assert_eq!(
        v["report"]["operator_transactions"].as_u64(),
        Some(3 + v["report"]["prizes"].as_u64().unwrap()),
        "{v:#}"
    );

    // A debit at the operator for a round the game never sold.
    let ghost = MoneyRequest {
        transaction_id: "GHOST-1.1:debit".into(),
        round_id: "GHOST-1.1".into(),
        player: "alice".into(),
        amount_cents: 300,
        currency: "EUR".into(),
        game: "TST".into(),
    };
    let client = operator::WalletClient::new(&wallet, keys.clone(), std::time::Duration::from_secs(10));
    let reply = client.call(paths::DEBIT, &ghost).await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.error());
    let out = run(vec![]).await.unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("1 mismatch:\n  GHOST-1.1  debit_without_ticket"), "{stdout}");
    for r in &rounds {
        assert!(!stdout.contains(r.as_str()), "{r} is clean: {stdout}");
    }
    drop(server);
    op.stop().await;
}
