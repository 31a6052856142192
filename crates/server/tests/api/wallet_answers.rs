//! What the game believes of the operator's wallet (three findings of the second outside audit;
//! docs/operator-integration.md): a signed answer that does not match
//! the request it answers (another transaction, another currency, a
//! negative balance, a field the protocol does not have) is unknown, never
//! believed; the wallet's gauges on `/metrics` and the desk's health agree
//! at any moment; the operator's players have no limits of ours. Each test
//! on SQLite and on PostgreSQL.
//!
//! The wrong answers come from a proxy between the game and the reference
//! operator: the operator applies each call as usual, and the proxy, told
//! to, rewrites a 200's body and signs it again with the shared key, as a
//! faulty operator would (its signature checks, its content is wrong).

use crate::emissions::play_plan;
use crate::helpers::*;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use operator::{ChaosConfig, PlayerSeed};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wallet::{Covered, Keys, LaunchFlags, LaunchRequest, TxKind, paths};

const RICH: &str = "op-rich";
const START_CENTS: i64 = 100_000;
const KEYS: &str = "test-k1:5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";

fn keys() -> Keys {
    Keys::parse(KEYS).unwrap()
}

/// How the proxy spoils a 200's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tamper {
    /// It names another transaction (a money answer: the round's other
    /// step; a balance's: a transaction at all).
    OtherTransaction,
    OtherCurrency,
    NegativeBalance,
    /// A field the protocol does not have.
    ExtraField,
}

impl Tamper {
    const ALL: [Tamper; 4] =
        [Tamper::OtherTransaction, Tamper::OtherCurrency, Tamper::NegativeBalance, Tamper::ExtraField];

    fn apply(self, answer: &mut Value) {
        match self {
            Tamper::OtherTransaction => {
                let other = match answer["transaction_id"].as_str().and_then(|t| t.rsplit_once(':')) {
                    Some((round, "debit")) => format!("{round}:credit"),
                    Some((round, _)) => format!("{round}:debit"),
                    None => "ACP-001-00001-000001-00.1:debit".to_string(),
                };
                answer["transaction_id"] = other.into();
            }
            Tamper::OtherCurrency => answer["currency"] = "USD".into(),
            Tamper::NegativeBalance => answer["balance_cents"] = (-300).into(),
            Tamper::ExtraField => answer["bonus_cents"] = 1_000.into(),
        }
    }
}

/// The proxy's shared state: what to spoil by path, and how many answers
/// it spoiled by path.
#[derive(Clone)]
struct Proxy {
    operator: String,
    http: reqwest::Client,
    tamper: Arc<Mutex<HashMap<String, Tamper>>>,
    spoiled: Arc<Mutex<HashMap<String, usize>>>,
}

impl Proxy {
    fn set(&self, path: &str, tamper: Option<Tamper>) {
        let mut t = self.tamper.lock().unwrap();
        match tamper {
            Some(how) => t.insert(path.to_string(), how),
            None => t.remove(path),
        };
    }

    fn spoiled(&self, path: &str) -> usize {
        self.spoiled.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

/// Forwards a call to the operator and its answer back, the answer's body
/// spoiled and signed again when the path is to be spoiled.
async fn forward(State(p): State<Proxy>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let path = uri.path().to_string();
    let mut call = p.http.post(format!("{}{path}", p.operator)).body(body.to_vec());
    for (name, value) in &headers {
        if name.as_str().starts_with("x-signature") || name.as_str() == "content-type" {
            call = call.header(name.as_str(), value.to_str().unwrap());
        }
    }
    let Ok(answer) = call.send().await else { return (axum::http::StatusCode::BAD_GATEWAY, "").into_response() };
    let status = answer.status().as_u16();
    let their: Vec<(String, String)> = answer
        .headers()
        .iter()
        .filter(|(n, _)| n.as_str().starts_with("x-signature"))
        .map(|(n, v)| (n.as_str().to_string(), v.to_str().unwrap().to_string()))
        .collect();
    let bytes = answer.bytes().await.unwrap().to_vec();
    let tamper = p.tamper.lock().unwrap().get(&path).copied();
    let (body, signature) = match tamper {
        Some(how) if status == 200 => {
            let mut v: Value = serde_json::from_slice(&bytes).unwrap();
            how.apply(&mut v);
            let body = serde_json::to_vec(&v).unwrap();
            let nonce = headers.get("x-signature-nonce").unwrap().to_str().unwrap();
            let covered = Covered::Answer { method: "POST", path: &path, status, request_nonce: nonce };
            let signed = keys().sign(covered, &body, operator::now_ms());
            *p.spoiled.lock().unwrap().entry(path.clone()).or_default() += 1;
            (body, signed.headers().into_iter().map(|(n, v)| (n.to_string(), v)).collect())
        }
        _ => (bytes, their),
    };
    let mut response = Response::builder().status(status).header("content-type", "application/json");
    for (n, v) in signature {
        response = response.header(n, v);
    }
    response.body(Body::from(body)).unwrap()
}

/// The reference operator, the proxy in front of it, and a game server in
/// operator mode whose wallet is the proxy.
struct Rig {
    game: TestApp,
    op: operator::Running,
    proxy: Proxy,
    serving: tokio::task::JoinHandle<()>,
    _ledger: tempfile::TempDir,
}

async fn rig() -> Option<Rig> {
    let ledger = tempfile::tempdir().unwrap();
    let mut options = operator::Options::new("127.0.0.1:0".parse().unwrap(), ledger.path().join("op.db"), keys());
    options.players = vec![PlayerSeed { player: RICH.into(), balance_cents: START_CENTS }];
    let op = operator::start(options).await.unwrap();
    let proxy = Proxy {
        operator: op.url().trim_end_matches('/').to_string(),
        http: reqwest::Client::new(),
        tamper: Arc::default(),
        spoiled: Arc::default(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().fallback(forward).with_state(proxy.clone());
    let serving = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let game = spawn_app_with(|c| {
        c.wallet = server::WalletMode::Operator;
        c.operator_wallet_url = Some(proxy_url);
        c.operator_keys = Some(KEYS.into());
        c.wallet_timeout_ms = 1_000;
    })
    .await?;
    Some(Rig { game, op, proxy, serving, _ledger: ledger })
}

impl Rig {
    /// Launches `player` and exchanges the code: the session's token.
    async fn session(&self, player: &str) -> String {
        let launch = LaunchRequest {
            player: player.into(),
            currency: "EUR".into(),
            language: "fr".into(),
            country: Some("FR".into()),
            flags: LaunchFlags::default(),
            lobby_url: None,
        };
        let answer = operator::launch(&self.game.url, &keys(), &launch).await.unwrap();
        let r = self.game.post("/api/launch", None, json!({"code": answer.code})).await;
        assert_eq!(r.status, 200, "{}", r.json);
        r.json["token"].as_str().unwrap().to_string()
    }

    async fn operator_balance(&self) -> i64 {
        self.op.ledger().player(RICH, operator::now_ms()).await.unwrap().unwrap().balance_cents
    }

    async fn operator_transactions(&self) -> Vec<wallet::OperatorTransaction> {
        self.op.ledger().transactions_in(0, i64::MAX).await.unwrap()
    }

    /// Waits until the outbox is empty and no round is unresolved.
    async fn settled(&self) {
        for _ in 0..300 {
            let open = self
                .game
                .query_i64(
                    "SELECT (SELECT COUNT(*) FROM wallet_outbox WHERE acked_ms IS NULL) + \
                     (SELECT COUNT(*) FROM wallet_rounds WHERE state IN ('debiting', 'rolling_back'))",
                )
                .await;
            if open == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the outbox did not drain in 30 s");
    }

    /// Waits until the outbox's entry of `kind` records a failure saying
    /// `why` (the worker read its answer and did not believe it).
    async fn owed_because(&self, kind: TxKind, why: &str) {
        let sql = format!("SELECT COALESCE(MAX(last_error), '') FROM wallet_outbox WHERE kind = '{kind}'");
        let mut error = String::new();
        for _ in 0..200 {
            error = self.game.query_text(&sql).await;
            if error.contains(why) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(error.contains(why), "the {kind} is not recorded as owed because {why:?}: last error {error:?}");
        let open =
            format!("SELECT COUNT(*) FROM wallet_outbox WHERE kind = '{kind}' AND acked_ms IS NULL AND attempts >= 1");
        assert_eq!(self.game.query_i64(&open).await, 1, "the {kind} is still owed");
    }

    /// Our rounds against the operator's transactions, once settled: clean.
    async fn reconciled(&self) -> wallet::Report {
        use wallet::{OurRound, RoundState};
        self.settled().await;
        let r = self.game.admin_get(&format!("/api/admin/wallet/rounds?from_ms=0&to_ms={}", i64::MAX / 2)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        let ours: Vec<OurRound> = r.json["rounds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| OurRound {
                round_id: v["round_id"].as_str().unwrap().into(),
                player: v["player"].as_str().unwrap().into(),
                price_cents: v["price_cents"].as_i64().unwrap(),
                state: match v["state"].as_str().unwrap() {
                    "sold" => RoundState::Sold,
                    "released" => RoundState::Released,
                    _ => RoundState::Unresolved,
                },
                prize_cents: v["prize_cents"].as_i64(),
                credit_acknowledged: v["credit_acknowledged"].as_bool().unwrap(),
            })
            .collect();
        let report = wallet::reconcile(&ours, &self.operator_transactions().await, true);
        assert!(report.clean(), "reconciliation: {:?}", report.mismatches);
        assert!(self.op.ledger().summary().await.unwrap().balanced, "the operator's ledger is balanced");
        report
    }

    /// The wallet's figures as the desk's health gives them: (outbox depth,
    /// oldest age in seconds, unresolved rounds).
    async fn health_figures(&self) -> [i64; 3] {
        let h = self.game.admin_get("/api/admin/health").await;
        assert_eq!(h.status, 200, "{}", h.json);
        let w = &h.json["wallet"];
        ["outbox_depth", "outbox_oldest_age_s", "unresolved_rounds"]
            .map(|k| w[k].as_i64().unwrap_or_else(|| panic!("the health has no wallet.{k}: {w}")))
    }

    /// The same figures as `/metrics` gives them.
    async fn metric_figures(&self) -> [i64; 3] {
        let text = String::from_utf8_lossy(&self.game.get("/metrics", None).await.bytes).to_string();
        [
            "as_capone_wallet_outbox_depth",
            "as_capone_wallet_outbox_oldest_age_seconds",
            "as_capone_wallet_unresolved_rounds",
        ]
        .map(|name| gauge(&text, name))
    }

    async fn stop(self) {
        self.game.shutdown().await;
        self.serving.abort();
        self.op.stop().await;
    }
}

/// A sample of `/metrics`' text (no labels).
fn gauge(text: &str, name: &str) -> i64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
        .trim()
        .parse()
        .unwrap()
}

both! {
#[tokio::test]
async fn a_signed_debit_answer_that_does_not_match_the_debit_is_unknown_and_its_debit_rolled_back() {
    let Some(r) = rig().await else { return };
    let token = r.session(RICH).await;
    for tamper in Tamper::ALL {
        r.proxy.set(paths::DEBIT, Some(tamper));
        let b = r.game.post("/api/tickets", Some(&token), json!({})).await;
        assert_error(&b, 503, "wallet_unavailable");
        assert_eq!(r.game.get("/api/tickets", Some(&token)).await.json["tickets"], json!([]), "{tamper:?}: nothing shown");
        r.proxy.set(paths::DEBIT, None);
        r.settled().await;
        assert_eq!(r.operator_balance().await, START_CENTS, "{tamper:?}: the debit the operator applied was rolled back");
    }
    assert_eq!(r.proxy.spoiled(paths::DEBIT), 4);
    // The four rounds were the same ticket, back in the pool each time; the fifth sells it.
    let t = r.game.buy(&token).await;
    let serial = t["serial"].as_str().unwrap();
    let state = format!("SELECT state FROM wallet_rounds WHERE round_id = '{serial}.5'");
    assert_eq!(r.game.query_text(&state).await, "sold");
    let debits: Vec<_> = r.operator_transactions().await.into_iter().filter(|t| t.kind == TxKind::Debit).collect();
    assert_eq!((debits.len(), debits.iter().filter(|d| d.rolled_back).count()), (5, 4), "{debits:?}");
    let text = String::from_utf8_lossy(&r.game.get("/metrics", None).await.bytes).to_string();
    assert!(text.contains("as_capone_wallet_requests_total{kind=\"debit\",outcome=\"unknown\"} 4"), "{text}");
    let report = r.reconciled().await;
    assert_eq!((report.sold, report.released), (1, 4));
    r.stop().await;
}
}

both! {
#[tokio::test]
async fn a_credit_answered_for_another_transaction_or_with_a_negative_balance_stays_owed_and_is_credited_once() {
    let Some(r) = rig().await else { return };
    let token = r.session(RICH).await;
    let (t, plan) = find_ticket(&r.game, &token, 20, |f| f.game.result().unwrap().prize_cents > 0).await;
    let bought = r.game.get("/api/tickets", Some(&token)).await.json["tickets"].as_array().unwrap().len() as i64;
    // The operator applies the credit; its answer names the round's debit.
    r.proxy.set(paths::CREDIT, Some(Tamper::OtherTransaction));
    play_plan(&r.game, &token, &t, &plan).await;
    r.owed_because(TxKind::Credit, "answers transaction").await;
    // Sent again (the same transaction): the answer now says a negative balance.
    r.proxy.set(paths::CREDIT, Some(Tamper::NegativeBalance));
    r.owed_because(TxKind::Credit, "negative").await;
    assert!(r.proxy.spoiled(paths::CREDIT) >= 2);
    // A true answer at last: acknowledged, and the operator applied it once.
    r.proxy.set(paths::CREDIT, None);
    r.settled().await;
    let prize = plan.game.result().unwrap().prize_cents as i64;
    assert_eq!(r.operator_balance().await, START_CENTS - 300 * bought + prize);
    let credits = r.operator_transactions().await.into_iter().filter(|t| t.kind == TxKind::Credit).count();
    assert_eq!(credits, 1);
    let report = r.reconciled().await;
    assert_eq!(report.prizes, 1);
    r.stop().await;
}
}

both! {
#[tokio::test]
async fn a_rollback_answered_in_another_currency_or_with_another_field_stays_owed_until_a_true_answer() {
    let Some(r) = rig().await else { return };
    let token = r.session(RICH).await;
    r.proxy.set(paths::DEBIT, Some(Tamper::OtherTransaction));
    r.proxy.set(paths::ROLLBACK, Some(Tamper::OtherCurrency));
    assert_error(&r.game.post("/api/tickets", Some(&token), json!({})).await, 503, "wallet_unavailable");
    r.proxy.set(paths::DEBIT, None);
    r.owed_because(TxKind::Rollback, "currency").await;
    r.proxy.set(paths::ROLLBACK, Some(Tamper::ExtraField));
    r.owed_because(TxKind::Rollback, "bonus_cents").await;
    // The round is not released while its rollback is not acknowledged.
    assert_eq!(r.game.query_text("SELECT state FROM wallet_rounds").await, "rolling_back");
    r.proxy.set(paths::ROLLBACK, None);
    r.settled().await;
    assert_eq!(r.game.query_text("SELECT state FROM wallet_rounds").await, "released");
    assert_eq!(r.operator_balance().await, START_CENTS);
    let report = r.reconciled().await;
    assert_eq!(report.released, 1);
    r.stop().await;
}
}

both! {
#[tokio::test]
async fn a_balance_answered_in_another_currency_negative_for_a_transaction_or_with_another_field_is_not_shown() {
    let Some(r) = rig().await else { return };
    let token = r.session(RICH).await;
    for tamper in Tamper::ALL {
        r.proxy.set(paths::BALANCE, Some(tamper));
        assert_error(&r.game.get("/api/me", Some(&token)).await, 503, "wallet_unavailable");
    }
    assert_eq!(r.proxy.spoiled(paths::BALANCE), 4);
    r.proxy.set(paths::BALANCE, None);
    let me = r.game.get("/api/me", Some(&token)).await;
    assert_eq!((me.status.as_u16(), me.json["balance_cents"].as_i64()), (200, Some(START_CENTS)), "{}", me.json);
    r.stop().await;
}
}

both! {
#[tokio::test]
async fn metrics_and_the_desks_health_agree_at_once_while_a_rollback_is_owed_and_once_it_is_acknowledged() {
    let Some(r) = rig().await else { return };
    let token = r.session(RICH).await;
    assert_eq!((r.health_figures().await, r.metric_figures().await), ([0, 0, 0], [0, 0, 0]));
    // Every call fails: the debit is unknown, its rollback owed (and stays
    // owed while the operator fails).
    r.op.chaos().set(ChaosConfig { error_rate: 1.0, seed: Some(3), ..ChaosConfig::default() }).unwrap();
    assert_error(&r.game.post("/api/tickets", Some(&token), json!({})).await, 503, "wallet_unavailable");
    let health = r.health_figures().await;
    let metrics = r.metric_figures().await;
    assert_eq!((health[0], health[2]), (1, 1), "the health: a rollback owed, its round unresolved");
    assert_eq!((metrics[0], metrics[2]), (1, 1), "/metrics just after the health: {metrics:?}");
    assert!((metrics[1] - health[1]).abs() <= 1, "the oldest's age: {metrics:?} {health:?}");
    // The operator answers again: the moment the health says nothing is
    // owed, /metrics says so too.
    r.op.chaos().set(ChaosConfig::default()).unwrap();
    let mut health = health;
    for _ in 0..500 {
        health = r.health_figures().await;
        if health == [0, 0, 0] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(health, [0, 0, 0], "the rollback was acknowledged");
    assert_eq!(r.metric_figures().await, [0, 0, 0], "/metrics just after the health");
    assert_eq!(r.operator_balance().await, START_CENTS);
    r.stop().await;
}
}

both! {
#[tokio::test]
async fn the_limits_of_a_player_launched_by_the_operator_are_the_operators() {
    let Some(r) = rig().await else { return };
    let token = r.session(RICH).await;
    assert_error(&r.game.get("/api/me/limits", Some(&token)).await, 403, "operator_mode");
    r.stop().await;
}
}
