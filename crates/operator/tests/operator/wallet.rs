//! The wallet's rules (docs/operator-integration.md): exactly once, conflicts,
//! rollbacks before their debit, every refusal, the export.

use crate::helpers::*;
use wallet::{BalanceRequest, CURRENCY, TransactionsAnswer, TransactionsRequest, TxKind, WalletAnswer, errors, paths};

/// Sends `request` to `path` 20 times at once, each a separately signed
/// delivery; returns the statuses and bodies.
async fn twenty_at_once(
    op: &Op,
    path: &'static str,
    request: impl serde::Serialize + Clone + Send + Sync + 'static,
) -> Vec<(u16, Vec<u8>)> {
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let (client, request) = (op.client.clone(), request.clone());
        tasks.spawn(async move {
            let r = client.call(path, &request).await.unwrap();
            r.verified.clone().expect("every answer is signed");
            (r.status, r.body)
        });
    }
    tasks.join_all().await
}

async fn export(op: &Op) -> TransactionsAnswer {
    let r = op.client.call(paths::TRANSACTIONS, &TransactionsRequest { from_ms: 0, to_ms: i64::MAX }).await.unwrap();
    assert_eq!(r.status, 200);
    r.verified.clone().unwrap();
    r.json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_same_debit_credit_and_rollback_sent_20_times_at_once_move_money_once() {
    let op = operator().await;
    op.player("p1", 10_000).await;

    let answers = twenty_at_once(&op, paths::DEBIT, money(TxKind::Debit, "S-1", "p1", 300)).await;
    assert!(answers.iter().all(|a| a == &answers[0]), "the same answer byte for byte: {answers:?}");
    assert_eq!(answers[0].0, 200);
    let a: WalletAnswer = serde_json::from_slice(&answers[0].1).unwrap();
    assert_eq!((a.balance_cents, a.transaction_id.as_deref()), (9_700, Some("S-1.1:debit")));
    assert_eq!(op.balance("p1").await, 9_700);

    let answers = twenty_at_once(&op, paths::CREDIT, money(TxKind::Credit, "S-1", "p1", 5_000)).await;
    assert!(answers.iter().all(|a| a == &answers[0]));
    assert_eq!(answers[0].0, 200);
    assert_eq!(op.balance("p1").await, 14_700);

    // Another round's debit, rolled back 20 times at once: refunded once.
    assert_eq!(op.client.call(paths::DEBIT, &money(TxKind::Debit, "S-2", "p1", 300)).await.unwrap().status, 200);
    assert_eq!(op.balance("p1").await, 14_400);
    let answers = twenty_at_once(&op, paths::ROLLBACK, rollback("S-2", "p1", 300)).await;
    assert!(answers.iter().all(|a| a == &answers[0]));
    assert_eq!(answers[0].0, 200);
    assert_eq!(op.balance("p1").await, 14_700);

    let list = export(&op).await.transactions;
    let kinds: Vec<(&str, TxKind, bool)> =
        list.iter().map(|t| (t.transaction_id.as_str(), t.kind, t.rolled_back)).collect();
    assert_eq!(
        kinds,
        [
            ("S-1.1:debit", TxKind::Debit, false),
            ("S-1.1:credit", TxKind::Credit, false),
            ("S-2.1:debit", TxKind::Debit, true),
            ("S-2.1:rollback", TxKind::Rollback, false),
        ]
    );
    let s = op.assert_balanced().await;
    assert_eq!((s.debit.count, s.credit.count, s.rollback.count, s.debits_rolled_back), (2, 1, 1, 1));
    assert_eq!(s.house_cents, -s.balances_cents);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_id_with_another_payload_is_refused_and_nothing_is_applied() {
    let op = operator().await;
    op.player("p1", 10_000).await;
    op.player("p2", 10_000).await;
    let debit = money(TxKind::Debit, "S-1", "p1", 300);
    let first = op.client.call(paths::DEBIT, &debit).await.unwrap();
    assert_eq!(first.status, 200);

    let mut other_amount = debit.clone();
    other_amount.amount_cents = 400;
    let mut other_round = debit.clone();
    other_round.round_id = "S-9.1".into();
    let mut other_player = debit.clone();
    other_player.player = "p2".into();
    let mut other_game = debit.clone();
    other_game.game = "XYZ".into();
    for (path, request) in [
        (paths::DEBIT, &other_amount),
        (paths::DEBIT, &other_round),
        (paths::DEBIT, &other_player),
        (paths::DEBIT, &other_game),
        // The same id and body as a credit: another kind.
        (paths::CREDIT, &debit),
    ] {
        let r = op.client.call(path, request).await.unwrap();
        assert_eq!((r.status, r.error().as_str()), (409, errors::TRANSACTION_CONFLICT), "{path} {request:?}");
        r.verified.unwrap();
    }
    // The other way: a credit's id reused by a debit.
    let credit = money(TxKind::Credit, "S-1", "p1", 1_000);
    assert_eq!(op.client.call(paths::CREDIT, &credit).await.unwrap().status, 200);
    let r = op.client.call(paths::DEBIT, &credit).await.unwrap();
    assert_eq!((r.status, r.error().as_str()), (409, errors::TRANSACTION_CONFLICT));
    // A rollback that does not match its debit (amount, player).
    let mut wrong = rollback("S-1", "p1", 999);
    let r = op.client.call(paths::ROLLBACK, &wrong).await.unwrap();
    assert_eq!((r.status, r.error().as_str()), (409, errors::TRANSACTION_CONFLICT));
    wrong = rollback("S-1", "p2", 300);
    assert_eq!(op.client.call(paths::ROLLBACK, &wrong).await.unwrap().status, 409);

    assert_eq!(op.balance("p1").await, 10_700);
    assert_eq!(op.balance("p2").await, 10_000);
    // The original still gets its stored answer, byte for byte.
    let again = op.client.call(paths::DEBIT, &debit).await.unwrap();
    assert_eq!((again.status, &again.body), (first.status, &first.body));
    assert_eq!(export(&op).await.transactions.len(), 2);
    op.assert_balanced().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_before_its_debit_leaves_a_tombstone_and_the_late_debit_is_never_applied() {
    let op = operator().await;
    op.player("p1", 10_000).await;
    let r = op.client.call(paths::ROLLBACK, &rollback("S-1", "p1", 300)).await.unwrap();
    assert_eq!(r.status, 200);
    r.verified.clone().unwrap();
    assert_eq!(r.json::<WalletAnswer>().balance_cents, 10_000);
    let again = op.client.call(paths::ROLLBACK, &rollback("S-1", "p1", 300)).await.unwrap();
    assert_eq!((again.status, &again.body), (200, &r.body));

    let late = op.client.call(paths::DEBIT, &money(TxKind::Debit, "S-1", "p1", 300)).await.unwrap();
    assert_eq!((late.status, late.error().as_str()), (409, errors::ROLLED_BACK));
    late.verified.unwrap();
    let credit = op.client.call(paths::CREDIT, &money(TxKind::Credit, "S-1", "p1", 500)).await.unwrap();
    assert_eq!((credit.status, credit.error().as_str()), (409, errors::ROLLED_BACK));
    assert_eq!(op.balance("p1").await, 10_000);

    let list = export(&op).await.transactions;
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].kind, list[0].transaction_id.as_str()), (TxKind::Rollback, "S-1.1:rollback"));
    let s = op.assert_balanced().await;
    assert_eq!((s.tombstones, s.debit.count), (1, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_is_given_stored_and_moves_nothing() {
    let op = operator().await;
    op.player("poor", 200).await;
    op.running.ledger().set_player("limited", 10_000, Some(500), false, as_capone_operator::now_ms()).await.unwrap();
    op.running.ledger().set_player("blocked", 10_000, None, true, as_capone_operator::now_ms()).await.unwrap();

    let refused = |r: &as_capone_operator::WalletReply, status: u16, error: &str| {
        assert_eq!((r.status, r.error().as_str()), (status, error), "{}", String::from_utf8_lossy(&r.body));
        r.verified.clone().expect("a refusal is signed too");
    };
    let poor = money(TxKind::Debit, "S-1", "poor", 300);
    let r = op.client.call(paths::DEBIT, &poor).await.unwrap();
    refused(&r, 402, errors::INSUFFICIENT_FUNDS);
    // The refusal is the transaction's outcome: a retry gets it again, even after a deposit.
    op.player("poor", 1_000).await;
    let again = op.client.call(paths::DEBIT, &poor).await.unwrap();
    assert_eq!((again.status, &again.body), (402, &r.body));
    assert_eq!(op.balance("poor").await, 1_000);
    // Its rollback is a no-op success.
    let rb = op.client.call(paths::ROLLBACK, &rollback("S-1", "poor", 300)).await.unwrap();
    assert_eq!((rb.status, rb.json::<WalletAnswer>().balance_cents), (200, 1_000));

    // The weekly limit: 300 + 300 > 500; a rollback gives the stake back to the limit.
    assert_eq!(op.client.call(paths::DEBIT, &money(TxKind::Debit, "L-1", "limited", 300)).await.unwrap().status, 200);
    let r = op.client.call(paths::DEBIT, &money(TxKind::Debit, "L-2", "limited", 300)).await.unwrap();
    refused(&r, 402, errors::LIMIT_REACHED);
    assert_eq!(op.client.call(paths::ROLLBACK, &rollback("L-1", "limited", 300)).await.unwrap().status, 200);
    assert_eq!(op.client.call(paths::DEBIT, &money(TxKind::Debit, "L-3", "limited", 300)).await.unwrap().status, 200);
    let view = op.admin_get("/admin/players/limited").await;
    assert_eq!((view["stakes_this_week_cents"].as_i64(), view["balance_cents"].as_i64()), (Some(300), Some(9_700)));

    // A blocked player may not stake, but its prize is owed.
    let r = op.client.call(paths::DEBIT, &money(TxKind::Debit, "B-1", "blocked", 300)).await.unwrap();
    refused(&r, 402, errors::PLAYER_BLOCKED);
    let r = op.client.call(paths::CREDIT, &money(TxKind::Credit, "B-0", "blocked", 700)).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(op.balance("blocked").await, 10_700);

    // Unknown players.
    for (path, kind) in [(paths::DEBIT, TxKind::Debit), (paths::CREDIT, TxKind::Credit)] {
        let r = op.client.call(path, &money(kind, "U-1", "nobody", 300)).await.unwrap();
        refused(&r, 404, errors::UNKNOWN_PLAYER);
    }
    let r = op.client.call(paths::ROLLBACK, &rollback("U-1", "nobody", 300)).await.unwrap();
    refused(&r, 404, errors::UNKNOWN_PLAYER);
    let r = op
        .client
        .call(paths::BALANCE, &BalanceRequest { player: "nobody".into(), currency: CURRENCY.into() })
        .await
        .unwrap();
    refused(&r, 404, errors::UNKNOWN_PLAYER);

    // Malformed requests.
    let mut usd = money(TxKind::Debit, "M-1", "limited", 100);
    usd.currency = "USD".into();
    refused(&op.client.call(paths::DEBIT, &usd).await.unwrap(), 400, errors::BAD_REQUEST);
    let zero = money(TxKind::Credit, "M-2", "limited", 0);
    refused(&op.client.call(paths::CREDIT, &zero).await.unwrap(), 400, errors::BAD_REQUEST);
    let junk = serde_json::json!({"transaction_id": "x", "amount_cents": "3"});
    refused(&op.client.call(paths::DEBIT, &junk).await.unwrap(), 400, errors::BAD_REQUEST);
    let huge = money(TxKind::Credit, "M-3", "limited", 1_000_000_001);
    refused(&op.client.call(paths::CREDIT, &huge).await.unwrap(), 400, errors::BAD_REQUEST);
    let long = money(TxKind::Credit, "M-4", &"é".repeat(65), 100);
    refused(&op.client.call(paths::CREDIT, &long).await.unwrap(), 400, errors::BAD_REQUEST);
    // 64 characters of two bytes each are a valid reference (of nobody here).
    let wide = money(TxKind::Credit, "M-6", &"é".repeat(64), 100);
    refused(&op.client.call(paths::CREDIT, &wide).await.unwrap(), 404, errors::UNKNOWN_PLAYER);
    let control = money(TxKind::Credit, "M-5", "a\u{7}b", 100);
    refused(&op.client.call(paths::CREDIT, &control).await.unwrap(), 400, errors::BAD_REQUEST);

    let b = op
        .client
        .call(paths::BALANCE, &BalanceRequest { player: "poor".into(), currency: CURRENCY.into() })
        .await
        .unwrap();
    assert_eq!(b.status, 200);
    assert_eq!(
        b.json::<WalletAnswer>(),
        WalletAnswer {
            transaction_id: None,
            balance_cents: 1_000,
            currency: "EUR".into(),
            operator_transaction_id: None
        }
    );

    let s = op.assert_balanced().await;
    assert_eq!(s.debits_refused, 3);
    // Refused debits are not in the export; applied ones are.
    let ids: Vec<String> = export(&op).await.transactions.into_iter().map(|t| t.transaction_id).collect();
    assert!(!ids.contains(&"S-1.1:debit".to_string()) && !ids.contains(&"L-2.1:debit".to_string()));
    assert!(ids.contains(&"L-3.1:debit".to_string()) && ids.contains(&"S-1.1:rollback".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_export_is_the_period_asked() {
    let op = operator().await;
    op.player("p1", 10_000).await;
    let before = as_capone_operator::now_ms();
    assert_eq!(op.client.call(paths::DEBIT, &money(TxKind::Debit, "S-1", "p1", 300)).await.unwrap().status, 200);
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let middle = as_capone_operator::now_ms();
    assert_eq!(op.client.call(paths::CREDIT, &money(TxKind::Credit, "S-1", "p1", 900)).await.unwrap().status, 200);
    let after = as_capone_operator::now_ms() + 1;
    let period = |from_ms, to_ms| {
        let client = op.client.clone();
        async move {
            let r = client.call(paths::TRANSACTIONS, &TransactionsRequest { from_ms, to_ms }).await.unwrap();
            r.json::<TransactionsAnswer>().transactions.into_iter().map(|t| t.kind).collect::<Vec<_>>()
        }
    };
    assert_eq!(period(before, after).await, [TxKind::Debit, TxKind::Credit]);
    assert_eq!(period(before, middle).await, [TxKind::Debit]);
    assert_eq!(period(middle, after).await, [TxKind::Credit]);
    assert_eq!(period(after, after + 1000).await, []);
    // A period that ends before it begins is empty.
    assert_eq!(period(after, before).await, []);
    let list = op.running.ledger().transactions_in(before, after).await.unwrap();
    assert_eq!((list[0].amount_cents, list[1].amount_cents, list[0].player.as_str()), (300, 900, "p1"));
}
