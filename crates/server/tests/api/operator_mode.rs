//! The operator mode (docs/operator-integration.md), end to end: the game
//! server (`wallet = "operator"`) against the reference operator
//! (`crates/operator`, in process, its own SQLite ledger), each test on
//! SQLite and on PostgreSQL (`both!`). Each test names the rule it proves.

use crate::emissions::play_plan;
use crate::helpers::*;
use operator::{ChaosConfig, DropMode, PlayerSeed};
use serde_json::json;
use std::time::Duration;
use wallet::{Keys, LaunchFlags, LaunchRequest};

const RICH: &str = "op-rich";
const POOR: &str = "op-poor";
const BLOCKED: &str = "op-blocked";
const START_CENTS: i64 = 100_000;

/// The keys both sides share in these tests.
fn keys() -> Keys {
    Keys::parse(&format!("test-k1:{}", "5a".repeat(32))).unwrap()
}

/// The reference operator and a game server in operator mode in front of it.
struct Pair {
    game: TestApp,
    op: operator::Running,
    _ledger: tempfile::TempDir,
}

async fn pair_with(tune: impl FnOnce(&mut server::Config)) -> Option<Pair> {
    let ledger = tempfile::tempdir().unwrap();
    let mut options = operator::Options::new("127.0.0.1:0".parse().unwrap(), ledger.path().join("op.db"), keys());
    options.players = vec![
        PlayerSeed { player: RICH.into(), balance_cents: START_CENTS },
        PlayerSeed { player: POOR.into(), balance_cents: 100 },
        PlayerSeed { player: BLOCKED.into(), balance_cents: START_CENTS },
    ];
    let op = operator::start(options).await.unwrap();
    op.ledger().set_player(BLOCKED, START_CENTS, None, true, operator::now_ms()).await.unwrap();
    let wallet_url = op.url();
    let game = spawn_app_with(|c| {
        c.wallet = server::WalletMode::Operator;
        c.operator_wallet_url = Some(wallet_url);
        c.operator_keys = Some(format!("test-k1:{}", "5a".repeat(32)));
        c.wallet_timeout_ms = 1_000;
        tune(c);
    })
    .await?;
    Some(Pair { game, op, _ledger: ledger })
}

async fn pair() -> Option<Pair> {
    pair_with(|_| {}).await
}

fn launch_request(player: &str) -> LaunchRequest {
    LaunchRequest {
        player: player.into(),
        currency: "EUR".into(),
        language: "fr".into(),
        country: Some("FR".into()),
        flags: LaunchFlags {
            show_rtp: false,
            session_timer: true,
            reality_check_minutes: Some(30),
            session_limit_minutes: None,
        },
        lobby_url: Some("https://casino.example/lobby".into()),
    }
}

impl Pair {
    /// Launches `player` and exchanges the code: the session's token.
    async fn session(&self, player: &str) -> String {
        let answer = operator::launch(&self.game.url, &keys(), &launch_request(player)).await.unwrap();
        assert!(answer.url.ends_with(&format!("/?launch={}", answer.code)), "{}", answer.url);
        let r = self.game.post("/api/launch", None, json!({"code": answer.code})).await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["player"], player);
        r.json["token"].as_str().unwrap().to_string()
    }

    async fn operator_balance(&self, player: &str) -> i64 {
        self.op.ledger().player(player, operator::now_ms()).await.unwrap().unwrap().balance_cents
    }

    /// The operator's transactions of every round so far.
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

    /// Our rounds against the operator's transactions: clean.
    async fn reconciled(&self) -> wallet::Report {
        self.settled().await;
        let now = operator::now_ms();
        let day = 86_400_000;
        let r =
            self.game.admin_get(&format!("/api/admin/wallet/rounds?from_ms={}&to_ms={}", now - day, now + day)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        let ours: Vec<wallet::OurRound> = r.json["rounds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| wallet::OurRound {
                round_id: v["round_id"].as_str().unwrap().into(),
                player: v["player"].as_str().unwrap().into(),
                price_cents: v["price_cents"].as_i64().unwrap(),
                state: match v["state"].as_str().unwrap() {
                    "sold" => wallet::RoundState::Sold,
                    "released" => wallet::RoundState::Released,
                    _ => wallet::RoundState::Unresolved,
                },
                prize_cents: v["prize_cents"].as_i64(),
                credit_acknowledged: v["credit_acknowledged"].as_bool().unwrap(),
            })
            .collect();
        let report = wallet::reconcile(&ours, &self.operator_transactions().await, true);
        assert!(report.clean(), "reconciliation: {:?}", report.mismatches);
        assert!(self.op.ledger().summary().await.unwrap().balanced, "the operator's ledger is balanced");
        let ledger = self.game.app.store().check_ledger().await.unwrap();
        assert_eq!((ledger.sum_cents, ledger.unbalanced_movements, ledger.balance_mismatches), (0, 0, 0), "{ledger:?}");
        report
    }

    async fn stop(self) {
        self.game.shutdown().await;
        self.op.stop().await;
    }
}

both! {
#[tokio::test]
async fn launch_gives_a_session_of_the_operators_player_with_its_balance_and_flags_and_no_account_of_ours() {
    let Some(p) = pair().await else { return };
    let token = p.session(RICH).await;
    let me = p.game.get("/api/me", Some(&token)).await;
    assert_eq!(me.status, 200, "{}", me.json);
    assert_eq!((me.json["mode"].as_str(), me.json["balance_cents"].as_i64()), (Some("operator"), Some(START_CENTS)));
    let session = p.game.get("/api/session", Some(&token)).await;
    assert_eq!(session.json["mode"], "operator");
    assert_eq!(session.json["flags"]["reality_check_minutes"], 30);
    assert_eq!(session.json["flags"]["show_rtp"], false);
    assert_eq!(session.json["lobby_url"], "https://casino.example/lobby");
    // The operator owns the players: no registration, login or limits of ours.
    assert_error(&p.game.post("/api/players", None, json!({})).await, 403, "operator_mode");
    assert_error(
        &p.game.post("/api/sessions", None, json!({"login": "x", "password": "y"})).await,
        403,
        "operator_mode",
    );
    let limits = p.game.client.put(format!("{}/api/me/limits", p.game.url)).bearer_auth(&token).json(&json!({}));
    assert_error(&p.game.send(limits).await, 403, "operator_mode");
    p.stop().await;
}
}

both! {
#[tokio::test]
async fn a_launch_code_is_used_once_even_when_sent_twenty_times_at_once() {
    let Some(p) = pair().await else { return };
    let answer = operator::launch(&p.game.url, &keys(), &launch_request(RICH)).await.unwrap();
    let sends = (0..20).map(|_| p.game.post("/api/launch", None, json!({"code": answer.code})));
    let answers = futures_join(sends).await;
    let ok = answers.iter().filter(|r| r.status == 200).count();
    assert_eq!(ok, 1, "one session from one code");
    for r in answers.iter().filter(|r| r.status != 200) {
        assert_error(r, 401, "launch_invalid");
        assert!(r.json["message"].as_str().unwrap().contains("already used"), "{}", r.json);
    }
    assert_error(&p.game.post("/api/launch", None, json!({"code": "0".repeat(40)})).await, 401, "launch_invalid");
    p.stop().await;
}
}

both! {
#[tokio::test]
async fn a_launch_expires_and_a_signed_launch_replayed_or_altered_or_from_an_unknown_key_is_refused() {
    let Some(p) = pair_with(|c| c.launch_ttl_s = 5).await else { return };
    // The same signed request, sent 20 times at once: one launch.
    let body = serde_json::to_vec(&launch_request(RICH)).unwrap();
    let path = wallet::paths::LAUNCH;
    let signed = keys().sign(wallet::Covered::Request { method: "POST", path }, &body, operator::now_ms());
    let send = |body: Vec<u8>, signed: wallet::Signed| {
        let mut req =
            p.game.client.post(format!("{}{path}", p.game.url)).body(body).header("content-type", "application/json");
        for (n, v) in signed.headers() {
            req = req.header(n, v);
        }
        p.game.send(req)
    };
    let answers = futures_join((0..20).map(|_| send(body.clone(), signed.clone()))).await;
    assert_eq!(answers.iter().filter(|r| r.status == 200).count(), 1, "a nonce is accepted once");
    for r in answers.iter().filter(|r| r.status != 200) {
        assert_error(r, 401, "bad_signature");
    }
    // Altered body, stale timestamp, unknown key: refused, nothing launched.
    let fresh = keys().sign(wallet::Covered::Request { method: "POST", path }, &body, operator::now_ms());
    let mut altered = body.clone();
    altered[10] ^= 1;
    assert_error(&send(altered, fresh).await, 401, "bad_signature");
    let stale =
        keys().sign(wallet::Covered::Request { method: "POST", path }, &body, operator::now_ms() - 60_000);
    assert_error(&send(body.clone(), stale).await, 401, "bad_signature");
    let stranger = Keys::parse(&format!("other:{}", "77".repeat(32))).unwrap();
    let foreign = stranger.sign(wallet::Covered::Request { method: "POST", path }, &body, operator::now_ms());
    assert_error(&send(body.clone(), foreign).await, 401, "bad_signature");
    // A launch in another currency is refused.
    let mut dollars = launch_request(RICH);
    dollars.currency = "USD".into();
    match operator::launch(&p.game.url, &keys(), &dollars).await {
        Err(operator::LaunchError::Refused { status: 400, .. }) => {}
        other => panic!("{other:?}"),
    }
    // An expired code is refused.
    let answer = operator::launch(&p.game.url, &keys(), &launch_request(RICH)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5_100)).await;
    let r = p.game.post("/api/launch", None, json!({"code": answer.code})).await;
    assert_error(&r, 401, "launch_invalid");
    assert!(r.json["message"].as_str().unwrap().contains("expired"), "{}", r.json);
    p.stop().await;
}
}

both! {
#[tokio::test]
async fn guarantee_9_a_purchase_debits_the_operator_once_and_a_prize_is_credited_once() {
    let Some(p) = pair().await else { return };
    let token = p.session(RICH).await;
    let (t, plan) = find_ticket(&p.game, &token, 20, |f| f.game.result().unwrap().prize_cents > 0).await;
    let bought = p.game.get("/api/tickets", Some(&token)).await.json["tickets"].as_array().unwrap().len() as i64;
    assert_eq!(p.operator_balance(RICH).await, START_CENTS - 300 * bought);
    play_plan(&p.game, &token, &t, &plan).await;
    let prize = plan.game.result().unwrap().prize_cents as i64;
    p.settled().await;
    assert_eq!(p.operator_balance(RICH).await, START_CENTS - 300 * bought + prize);
    let txs = p.operator_transactions().await;
    assert_eq!(txs.iter().filter(|t| t.kind == wallet::TxKind::Debit).count() as i64, bought);
    let credits: Vec<_> = txs.iter().filter(|t| t.kind == wallet::TxKind::Credit).collect();
    assert_eq!(credits.len(), 1);
    assert_eq!(credits[0].amount_cents, prize);
    assert_eq!(credits[0].round_id, format!("{}.1", t["serial"].as_str().unwrap()));
    let report = p.reconciled().await;
    assert_eq!((report.sold as i64, report.prizes), (bought, 1));
    p.stop().await;
}
}

both! {
#[tokio::test]
async fn guarantee_9_a_refused_debit_tells_the_player_why_and_returns_the_ticket_to_the_pool() {
    let Some(p) = pair().await else { return };
    let poor = p.session(POOR).await;
    let r = p.game.post("/api/tickets", Some(&poor), json!({})).await;
    assert_error(&r, 402, "insufficient_funds");
    assert!(r.json["message"].as_str().unwrap().contains("no money was taken"), "{}", r.json);
    let blocked = p.session(BLOCKED).await;
    assert_error(&p.game.post("/api/tickets", Some(&blocked), json!({})).await, 402, "player_blocked");
    // Nothing in their lists; the refused ticket is the next one sold, as a new round.
    assert_eq!(p.game.get("/api/tickets", Some(&poor)).await.json["tickets"], json!([]));
    let rich = p.session(RICH).await;
    let t = p.game.buy(&rich).await;
    let serial = t["serial"].as_str().unwrap();
    let rounds = p
        .game
        .query_i64(&format!(
            "SELECT COUNT(*) FROM wallet_rounds WHERE round_id LIKE '{serial}.%' AND state = 'refused'"
        ))
        .await;
    assert_eq!(rounds, 2, "the ticket refused twice, then sold");
    assert_eq!(
        p.game.query_text(&format!("SELECT state FROM wallet_rounds WHERE round_id = '{serial}.3'")).await,
        "sold"
    );
    assert_eq!(p.operator_balance(POOR).await, 100);
    p.reconciled().await;
    p.stop().await;
}
}

both! {
#[tokio::test]
async fn guarantee_9_an_unanswered_debit_is_never_assumed_it_is_rolled_back_and_its_ticket_sold_again() {
    let Some(p) = pair().await else { return };
    let token = p.session(RICH).await;
    for (error_rate, drop_rate) in [(1.0, 0.0), (0.0, 1.0)] {
        // 5xx without applying, then applied with the answer lost.
        p.op.chaos()
            .set(ChaosConfig {
                error_rate,
                drop_rate,
                drop_mode: DropMode::Close,
                seed: Some(1),
                ..ChaosConfig::default()
            })
            .unwrap();
        let r = p.game.post("/api/tickets", Some(&token), json!({})).await;
        assert_error(&r, 503, "wallet_unavailable");
        assert_eq!(p.game.get("/api/tickets", Some(&token)).await.json["tickets"], json!([]), "nothing shown");
        p.op.chaos().set(ChaosConfig::default()).unwrap();
        p.settled().await;
        assert_eq!(p.operator_balance(RICH).await, START_CENTS, "the debit, if any, was rolled back");
    }
    let txs = p.operator_transactions().await;
    let debits: Vec<_> = txs.iter().filter(|t| t.kind == wallet::TxKind::Debit).collect();
    assert_eq!(debits.len(), 1, "the dropped answer's debit was applied: {txs:?}");
    assert!(debits[0].rolled_back);
    // Both rounds were the same ticket; its third round sells it.
    let t = p.game.buy(&token).await;
    let serial = t["serial"].as_str().unwrap();
    assert_eq!(
        p.game.query_text(&format!("SELECT state FROM wallet_rounds WHERE round_id = '{serial}.3'")).await,
        "sold"
    );
    p.reconciled().await;
    p.stop().await;
}
}

both! {
#[tokio::test]
async fn a_purchase_retried_twenty_times_at_once_with_one_key_debits_once() {
    let Some(p) = pair().await else { return };
    let token = p.session(RICH).await;
    let buy = || {
        let req = p
            .game
            .client
            .post(format!("{}/api/tickets", p.game.url))
            .bearer_auth(&token)
            .header("idempotency-key", "k-20");
        p.game.send(req.json(&json!({})))
    };
    let answers = futures_join((0..20).map(|_| buy())).await;
    let sold: Vec<_> = answers.iter().filter(|r| r.status == 201).collect();
    assert!(!sold.is_empty());
    for r in &sold {
        assert_eq!(r.bytes, sold[0].bytes, "every 201 is the same answer");
    }
    for r in answers.iter().filter(|r| r.status != 201) {
        assert_error(r, 409, "conflict");
    }
    // Once settled, the key replays.
    assert_eq!(buy().await.bytes, sold[0].bytes);
    assert_eq!(p.operator_balance(RICH).await, START_CENTS - 300);
    let debits = p.operator_transactions().await.iter().filter(|t| t.kind == wallet::TxKind::Debit).count();
    assert_eq!(debits, 1);
    p.reconciled().await;
    p.stop().await;
}
}

both! {
#[tokio::test]
async fn guarantee_9_a_prize_waits_in_the_outbox_across_a_restart_and_is_credited_once() {
    let Some(p) = pair().await else { return };
    let token = p.session(RICH).await;
    let (t, plan) = find_ticket(&p.game, &token, 20, |f| f.game.result().unwrap().prize_cents > 0).await;
    let before = p.operator_balance(RICH).await;
    // The operator fails every call: the credit stays in the outbox.
    p.op.chaos().set(ChaosConfig { error_rate: 1.0, seed: Some(2), ..ChaosConfig::default() }).unwrap();
    play_plan(&p.game, &token, &t, &plan).await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(p.game.query_i64("SELECT COUNT(*) FROM wallet_outbox WHERE acked_ms IS NULL").await, 1);
    assert!(p.game.query_i64("SELECT attempts FROM wallet_outbox").await >= 1, "it was tried");
    // The gauges are refreshed every two seconds.
    let mut text = String::new();
    for _ in 0..50 {
        text = String::from_utf8_lossy(&p.game.get("/metrics", None).await.bytes).to_string();
        if text.contains("as_capone_wallet_outbox_depth 1") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(text.contains("as_capone_wallet_outbox_depth 1"), "{text}");
    // Our server restarts (its session long gone for the credit's sake); the operator recovers.
    let Pair { game, op, _ledger } = p;
    let db = game.stop().await;
    op.chaos().set(ChaosConfig::default()).unwrap();
    let wallet_url = op.url();
    let game = spawn_app_on(db, |c| {
        c.wallet = server::WalletMode::Operator;
        c.operator_wallet_url = Some(wallet_url);
        c.operator_keys = Some(format!("test-k1:{}", "5a".repeat(32)));
    })
    .await;
    let p = Pair { game, op, _ledger };
    p.settled().await;
    let prize = plan.game.result().unwrap().prize_cents as i64;
    assert_eq!(p.operator_balance(RICH).await, before + prize);
    let credits = p.operator_transactions().await.iter().filter(|t| t.kind == wallet::TxKind::Credit).count();
    assert_eq!(credits, 1);
    p.reconciled().await;
    p.stop().await;
}
}

both! {
#[tokio::test]
async fn guarantee_9_a_finite_block_sells_each_ticket_exactly_once_whatever_the_wallet_refuses_or_loses() {
    let Some(p) = pair().await else { return };
    let token = p.session(RICH).await;
    // Refusals (5xx without applying), lost answers after applying, and
    // every call delivered twice: tickets go back to the pool and are sold again.
    let chaos = ChaosConfig {
        error_rate: 0.2,
        drop_rate: 0.1,
        drop_mode: DropMode::Close,
        duplicate_rate: 0.3,
        seed: Some(9),
        ..ChaosConfig::default()
    };
    p.op.chaos().set(chaos.clone()).unwrap();
    let (mut sold, mut unknown) = (0, 0);
    loop {
        let r = p.game.post("/api/tickets", Some(&token), json!({})).await;
        match (r.status.as_u16(), r.json["error"].as_str()) {
            (201, _) => sold += 1,
            (503, Some("wallet_unavailable")) => unknown += 1,
            (503, Some("sold_out")) => {
                // Tickets whose rollback is still on its way come back to the
                // pool (the wallet answers again for that; a rollback failing
                // many times in a row would back off past the wait).
                p.op.chaos().set(ChaosConfig::default()).unwrap();
                p.settled().await;
                p.op.chaos().set(chaos.clone()).unwrap();
                let again = p.game.post("/api/tickets", Some(&token), json!({})).await;
                match again.status.as_u16() {
                    201 => sold += 1,
                    503 if again.json["error"] == "sold_out" => break,
                    503 if again.json["error"] == "wallet_unavailable" => unknown += 1,
                    _ => panic!("{}", again.json),
                }
            }
            _ => panic!("{}", r.json),
        }
        assert!(sold + unknown < 2_000, "the loop ends");
    }
    p.op.chaos().set(ChaosConfig::default()).unwrap();
    // The two blocks of 100: each ticket sold once, to one round.
    assert_eq!(sold, 200);
    assert!(unknown > 0, "the chaos lost some answers");
    assert_eq!(p.game.query_i64("SELECT COUNT(*) FROM tickets WHERE status = 'sold'").await, 200);
    assert_eq!(p.game.query_i64("SELECT COUNT(DISTINCT ticket_id) FROM wallet_rounds WHERE state = 'sold'").await, 200);
    assert_eq!(p.game.query_i64("SELECT COUNT(*) FROM wallet_rounds WHERE state = 'sold'").await, 200);
    assert!(p.game.query_i64("SELECT COUNT(*) FROM wallet_rounds WHERE attempt > 1 AND state = 'sold'").await > 0);
    assert_eq!(p.operator_balance(RICH).await, START_CENTS - 200 * 300);
    let report = p.reconciled().await;
    assert_eq!(report.sold, 200);
    p.stop().await;
}
}

both! {
#[tokio::test]
async fn a_database_with_operator_business_unfinished_refuses_to_start_in_internal_mode() {
    let Some(p) = pair().await else { return };
    let token = p.session(RICH).await;
    p.game.buy(&token).await;
    let Pair { game, op, _ledger } = p;
    let db = game.stop().await;
    // Its prize would be credited to play money of ours: refused, with the reason.
    let (db, e) = match try_spawn_app_on(db, server::ServerSeeds::InsecureFixedForTests(SEED), TABLE, |_| {}).await {
        Err(refused) => refused,
        Ok(_) => panic!("an internal-mode server started on a database with a game in play bought from the operator"),
    };
    assert!(e.to_string().contains("1 games in play bought from it"), "{e}");
    assert!(e.to_string().contains("wallet = \"operator\""), "{e}");
    db.remove().await;
    op.stop().await;
}
}

both! {
/// The game's OpenAPI document holds in operator mode too: Schemathesis as
/// a launched player over the whole API (accounts answer 403
/// `operator_mode`, purchases debit the reference operator).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_nothing_in_operator_mode() {
    if !schemathesis_installed() {
        return;
    }
    let Some(p) = pair().await else { return };
    let token = p.session(RICH).await;
    p.game.buy(&token).await;
    let examples: u32 =
        std::env::var("AS_CAPONE_SCHEMATHESIS_EXAMPLES").ok().and_then(|e| e.parse().ok()).unwrap_or(12);
    run_schemathesis(
        &p.game.url,
        &token,
        &["--exclude-tag", "operator", "--exclude-tag", "retail"],
        examples.div_ceil(2),
    )
    .await;
    p.reconciled().await;
    p.stop().await;
}
}

/// Runs the futures at once and gives their outputs in order.
async fn futures_join<F: std::future::Future<Output = Resp>>(futures: impl Iterator<Item = F>) -> Vec<Resp> {
    let mut set = Vec::new();
    for f in futures {
        set.push(f);
    }
    join_all(set).await
}

async fn join_all<F: std::future::Future<Output = Resp>>(futures: Vec<F>) -> Vec<Resp> {
    let mut pinned: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<Resp>> = (0..pinned.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in pinned.iter_mut().enumerate() {
            if out[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => out[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending { std::task::Poll::Pending } else { std::task::Poll::Ready(()) }
    })
    .await;
    out.into_iter().map(|r| r.expect("every future finished")).collect()
}
