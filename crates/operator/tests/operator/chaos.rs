//! The chaos switch: each mode really happens (its counter says so and the
//! client sees it), and the ledger stays exact and balanced through it.

use crate::helpers::*;
use as_capone_operator::{ChaosConfig, CountersView, DropMode, WalletClient};
use std::time::Duration;
use wallet::{TxKind, WalletAnswer, paths};

async fn set_chaos(op: &Op, config: serde_json::Value) -> reqwest::Response {
    op.http.put(format!("{}/admin/chaos", op.running.url())).bearer_auth(ADMIN).json(&config).send().await.unwrap()
}

async fn counters(op: &Op) -> CountersView {
    serde_json::from_value(op.admin_get("/admin/chaos").await["counters"].clone()).unwrap()
}

/// Sends a money call as the game server does: the same transaction id
/// again until a definite answer (not 5xx, not lost); returns it.
async fn until_definite(client: &WalletClient, path: &str, request: &impl serde::Serialize) -> (u16, Vec<u8>) {
    for _ in 0..200 {
        match client.call(path, request).await {
            Ok(r) if r.status < 500 => {
                r.verified.clone().expect("a definite answer is signed");
                return (r.status, r.body);
            }
            _ => tokio::time::sleep(Duration::from_millis(2)).await,
        }
    }
    panic!("no definite answer after 200 tries");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_chaos_mode_happens_and_the_ledger_stays_exact_and_balanced() {
    let op = operator().await;
    let players = 8;
    for p in 0..players {
        op.player(&format!("p{p}"), 100_000).await;
    }
    let r = set_chaos(
        &op,
        serde_json::json!({
            "delay_ms": [1, 4], "delay_rate": 0.3, "error_rate": 0.15, "drop_rate": 0.15,
            "duplicate_rate": 0.25, "skew_ms": 3000, "seed": 42
        }),
    )
    .await;
    assert_eq!(r.status(), 200);
    // Each player plays 30 rounds: a debit; one round in 5 rolled back,
    // one in 3 of the rest wins a prize of 500.
    let client = WalletClient::new(&op.running.url(), keys(), Duration::from_secs(5));
    let mut tasks = tokio::task::JoinSet::new();
    for p in 0..players {
        let client = client.clone();
        tasks.spawn(async move {
            let player = format!("p{p}");
            let mut expected = 100_000i64;
            for n in 0..30 {
                let serial = format!("C-{p}-{n}");
                let (status, _) =
                    until_definite(&client, paths::DEBIT, &money(TxKind::Debit, &serial, &player, 300)).await;
                assert_eq!(status, 200);
                expected -= 300;
                if n % 5 == 0 {
                    let (status, _) = until_definite(&client, paths::ROLLBACK, &rollback(&serial, &player, 300)).await;
                    assert_eq!(status, 200);
                    expected += 300;
                } else if n % 3 == 0 {
                    let (status, body) =
                        until_definite(&client, paths::CREDIT, &money(TxKind::Credit, &serial, &player, 500)).await;
                    assert_eq!(status, 200);
                    expected += 500;
                    let _: WalletAnswer = serde_json::from_slice(&body).unwrap();
                }
            }
            (player, expected)
        });
    }
    let expected = tasks.join_all().await;
    assert_eq!(set_chaos(&op, serde_json::json!({})).await.status(), 200);
    let c = counters(&op).await;
    assert!(c.calls > 400, "{c:?}");
    assert!(c.delayed > 0 && c.errors_500 > 0 && c.errors_503 > 0, "{c:?}");
    assert!(c.dropped > 0 && c.duplicated > 0 && c.skewed > 0, "{c:?}");
    for (player, cents) in expected {
        assert_eq!(op.balance(&player).await, cents, "{player}: every definite answer happened once");
    }
    let s = op.assert_balanced().await;
    // 240 debits, 48 rolled back, 64 credits: once each, whatever chaos did.
    assert_eq!((s.debit.count, s.debits_rolled_back, s.rollback.count, s.credit.count), (240, 48, 48, 64));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_answer_was_applied_and_a_retry_gets_the_stored_answer() {
    let op = operator().await;
    op.player("p1", 10_000).await;
    op.running.chaos().set(ChaosConfig { drop_rate: 1.0, ..ChaosConfig::default() }).unwrap();
    let debit = money(TxKind::Debit, "S-1", "p1", 300);
    let lost = op.client.call(paths::DEBIT, &debit).await;
    assert!(lost.is_err(), "the connection is closed without an answer: {lost:?}");
    assert_eq!(op.balance("p1").await, 9_700, "applied and committed");
    assert_eq!(counters(&op).await.dropped, 1);
    op.running.chaos().set(ChaosConfig::default()).unwrap();
    let r = op.client.call(paths::DEBIT, &debit).await.unwrap();
    assert_eq!((r.status, r.json::<WalletAnswer>().balance_cents), (200, 9_700));
    assert_eq!(op.balance("p1").await, 9_700);

    // Hang: held past the client's timeout, applied all the same.
    op.running
        .chaos()
        .set(ChaosConfig { drop_rate: 1.0, drop_mode: DropMode::Hang, hang_ms: 3_000, ..ChaosConfig::default() })
        .unwrap();
    let impatient = WalletClient::new(&op.running.url(), keys(), Duration::from_millis(300));
    let e = impatient.call(paths::DEBIT, &money(TxKind::Debit, "S-2", "p1", 300)).await.unwrap_err();
    assert!(e.is_timeout(), "{e:?}");
    assert_eq!(op.balance("p1").await, 9_400);
    op.assert_balanced().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_applies_nothing_a_duplicate_applies_once_and_skew_moves_the_clock() {
    let op = operator().await;
    op.player("p1", 10_000).await;
    op.running.chaos().set(ChaosConfig { error_rate: 1.0, seed: Some(3), ..ChaosConfig::default() }).unwrap();
    let mut statuses = std::collections::BTreeSet::new();
    for n in 0..20 {
        let r = op.client.call(paths::DEBIT, &money(TxKind::Debit, &format!("E-{n}"), "p1", 300)).await.unwrap();
        statuses.insert(r.status);
    }
    assert_eq!(statuses, [500, 503].into());
    assert_eq!(op.balance("p1").await, 10_000);

    op.running.chaos().set(ChaosConfig { duplicate_rate: 1.0, ..ChaosConfig::default() }).unwrap();
    for n in 0..10 {
        let r = op.client.call(paths::DEBIT, &money(TxKind::Debit, &format!("D-{n}"), "p1", 300)).await.unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.json::<WalletAnswer>().balance_cents, 10_000 - 300 * (n + 1));
    }
    assert_eq!(op.balance("p1").await, 7_000);
    assert_eq!(counters(&op).await.duplicated, 10);

    // Skew within the window: answers are stamped by the skewed clock.
    op.running.chaos().set(ChaosConfig { skew_ms: 20_000, ..ChaosConfig::default() }).unwrap();
    let r = op.client.call(paths::CREDIT, &money(TxKind::Credit, "D-0", "p1", 100)).await.unwrap();
    assert_eq!(r.status, 200);
    let stamp = r.signed.unwrap().timestamp_ms - as_capone_operator::now_ms();
    assert!((15_000..25_000).contains(&stamp), "{stamp}");
    // Past the window: every request is stale to the operator.
    op.running.chaos().set(ChaosConfig { skew_ms: -40_000, ..ChaosConfig::default() }).unwrap();
    let r = op.client.call(paths::CREDIT, &money(TxKind::Credit, "D-1", "p1", 100)).await.unwrap();
    assert_eq!((r.status, r.error().as_str()), (401, "bad_signature"));
    assert_eq!(op.balance("p1").await, 7_100);
    op.assert_balanced().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_switch_is_behind_the_admin_token_and_checks_its_values() {
    let op = operator().await;
    let url = format!("{}/admin/chaos", op.running.url());
    assert_eq!(op.http.get(&url).send().await.unwrap().status(), 401);
    assert_eq!(op.http.get(&url).bearer_auth("wrong").send().await.unwrap().status(), 401);
    let r = op.http.put(&url).json(&serde_json::json!({"error_rate": 0.5})).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(op.running.chaos().config(), ChaosConfig::default());
    assert_eq!(set_chaos(&op, serde_json::json!({"error_rate": 1.5})).await.status(), 400);
    assert_eq!(set_chaos(&op, serde_json::json!({"delay_ms": [9, 1]})).await.status(), 400);
    assert_eq!(set_chaos(&op, serde_json::json!({"explode": true})).await.status(), 400);
    let r = set_chaos(&op, serde_json::json!({"error_rate": 0.5, "seed": 9})).await;
    assert_eq!(r.status(), 200);
    let view: serde_json::Value = r.json().await.unwrap();
    assert_eq!(view["config"]["error_rate"], 0.5);
    assert_eq!(op.running.chaos().config().seed, Some(9));
}
