//! Signatures both ways: every request checked (key, window, nonce, HMAC),
//! every answer signed and bound to its request.

use crate::helpers::*;
use as_capone_operator::now_ms;
use wallet::{Covered, Keys, TxKind, errors, paths};

const DEBIT: Covered<'static> = Covered::Request { method: "POST", path: paths::DEBIT };

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_signed_and_bound_to_their_request() {
    let op = operator().await;
    op.player("p1", 10_000).await;
    let body = serde_json::to_vec(&money(TxKind::Debit, "S-1", "p1", 300)).unwrap();
    let signed = keys().sign(DEBIT, &body, now_ms());
    let r = op.client.call_raw(paths::DEBIT, body.clone(), &signed).await.unwrap();
    assert_eq!(r.status, 200);
    r.verified.clone().unwrap();
    let answer = r.signed.clone().unwrap();
    assert_eq!(answer.key_id, "test-key");
    assert!((answer.timestamp_ms - now_ms()).abs() < 5_000);
    // Bound to this request's nonce, this status, this path and this body.
    let k = keys();
    let bound = |nonce: &str, status: u16, path: &str, body: &[u8]| {
        k.verify(Covered::Answer { method: "POST", path, status, request_nonce: nonce }, body, &answer, now_ms())
    };
    assert_eq!(bound(&signed.nonce, 200, paths::DEBIT, &r.body), Ok(()));
    assert!(bound(&"0".repeat(32), 200, paths::DEBIT, &r.body).is_err());
    assert!(bound(&signed.nonce, 402, paths::DEBIT, &r.body).is_err());
    assert!(bound(&signed.nonce, 200, paths::CREDIT, &r.body).is_err());
    assert!(bound(&signed.nonce, 200, paths::DEBIT, b"{}").is_err());
    // A client with other keys cannot verify it.
    let stranger = Keys::parse(&format!("test-key:{}", "cd".repeat(32))).unwrap();
    let c = as_capone_operator::WalletClient::new(&op.running.url(), stranger, std::time::Duration::from_secs(5));
    let r = c.call(paths::BALANCE, &serde_json::json!({"player": "p1", "currency": "EUR"})).await.unwrap();
    assert_eq!(r.status, 401);
    assert!(r.verified.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_signatures_are_refused_and_apply_nothing() {
    let op = operator().await;
    op.player("p1", 10_000).await;
    let body = serde_json::to_vec(&money(TxKind::Debit, "S-1", "p1", 300)).unwrap();
    let refused = async |body: Vec<u8>, signed: wallet::Signed, why: &str| {
        let r = op.client.call_raw(paths::DEBIT, body, &signed).await.unwrap();
        assert_eq!((r.status, r.error().as_str()), (401, errors::BAD_SIGNATURE), "{why}");
        r.verified.expect("a 401 is signed");
        assert_eq!(op.balance("p1").await, 10_000, "{why}: nothing applied");
    };
    // Stale, both ways.
    refused(body.clone(), keys().sign(DEBIT, &body, now_ms() - 31_000), "stale").await;
    refused(body.clone(), keys().sign(DEBIT, &body, now_ms() + 31_000), "from the future").await;
    // A key of the same id with another secret; an unknown key id.
    let wrong = Keys::parse(&format!("test-key:{}", "cd".repeat(32))).unwrap();
    refused(body.clone(), wrong.sign(DEBIT, &body, now_ms()), "wrong secret").await;
    let unknown = Keys::parse(&format!("other:{}", "ab".repeat(32))).unwrap();
    refused(body.clone(), unknown.sign(DEBIT, &body, now_ms()), "unknown key").await;
    // The body altered after signing (a bigger amount).
    let altered = serde_json::to_vec(&money(TxKind::Debit, "S-1", "p1", 30_000)).unwrap();
    refused(altered, keys().sign(DEBIT, &body, now_ms()), "altered body").await;
    // Signed for another path.
    let credit = keys().sign(Covered::Request { method: "POST", path: paths::CREDIT }, &body, now_ms());
    refused(body.clone(), credit, "another path").await;
    // Missing headers.
    let r = op.http.post(format!("{}{}", op.running.url(), paths::DEBIT)).body(body.clone()).send().await.unwrap();
    assert_eq!(r.status(), 401);
    // A replayed nonce: the first delivery applies, the replay is refused.
    let signed = keys().sign(DEBIT, &body, now_ms());
    assert_eq!(op.client.call_raw(paths::DEBIT, body.clone(), &signed).await.unwrap().status, 200);
    let replay = op.client.call_raw(paths::DEBIT, body.clone(), &signed).await.unwrap();
    assert_eq!((replay.status, replay.error().as_str()), (401, errors::BAD_SIGNATURE));
    assert_eq!(op.balance("p1").await, 9_700);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_key_still_verifies_and_a_nonce_is_refused_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(&dir);
    // Rotation: the operator signs with "new" and still accepts "test-key".
    options.keys = Keys::parse(&format!("new:{},{}", "ef".repeat(32), key_spec())).unwrap();
    let op = operator_with(options.clone(), dir).await;
    op.player("p1", 10_000).await;
    let body = serde_json::to_vec(&money(TxKind::Debit, "S-1", "p1", 300)).unwrap();
    let signed = keys().sign(DEBIT, &body, now_ms());
    let r = op.client.call_raw(paths::DEBIT, body.clone(), &signed).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.signed.unwrap().key_id, "new");
    let Op { running, dir, .. } = op;
    running.stop().await;
    let op = operator_with(options, dir).await;
    let replay = op.client.call_raw(paths::DEBIT, body, &signed).await.unwrap();
    assert_eq!((replay.status, replay.error().as_str()), (401, errors::BAD_SIGNATURE));
    assert_eq!(op.balance("p1").await, 9_700);
}
