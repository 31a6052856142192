//! The wallet's document (docs/operator-wallet.openapi.json) and the
//! reference operator agree where Schemathesis alone would not say why:
//! the signature headers are taken in the one spelling the document gives
//! (a nonce in upper case or a timestamp with a leading zero, however well
//! signed, is refused as malformed), and a method other than POST on a
//! wallet path is answered 405, signed like every answer.

use crate::helpers::*;
use as_capone_operator::now_ms;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use wallet::{Covered, Signed, TxKind, errors, paths};

/// A debit of `body` signed over the header values exactly as they are
/// sent (docs/operator-integration.md, "Signatures"); its status, body and
/// the operator's answer headers.
async fn debit_spelled(op: &Op, body: &[u8], timestamp: &str, nonce: &str) -> (u16, serde_json::Value) {
    let mut text = format!("POST\n{}\n{timestamp}\n{nonce}\n", paths::DEBIT).into_bytes();
    text.extend_from_slice(body);
    let mut mac = Hmac::<Sha256>::new_from_slice(&[0xab; 32]).unwrap();
    mac.update(&text);
    let signature = hex::encode(mac.finalize().into_bytes());
    let r = op
        .http
        .post(format!("{}{}", op.running.url(), paths::DEBIT))
        .header("content-type", "application/json")
        .header("x-signature-key-id", "test-key")
        .header("x-signature-timestamp", timestamp)
        .header("x-signature-nonce", nonce)
        .header("x-signature", signature)
        .body(body.to_vec())
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signature_header_spelled_otherwise_than_the_document_says_is_refused_as_malformed() {
    let op = operator().await;
    op.player("p1", 10_000).await;
    let body = serde_json::to_vec(&money(TxKind::Debit, "S-1", "p1", 300)).unwrap();
    let now = now_ms().to_string();
    let nonce = "0123456789abcdef0123456789abcdef";
    for (timestamp, nonce, header) in [
        (now.clone(), nonce.to_uppercase(), "x-signature-nonce"),
        (now.clone(), "0123456789ABCdef0123456789abcdef".to_string(), "x-signature-nonce"),
        (format!("0{now}"), nonce.to_string(), "x-signature-timestamp"),
        (format!("+{now}"), nonce.to_string(), "x-signature-timestamp"),
    ] {
        let (status, answer) = debit_spelled(&op, &body, &timestamp, &nonce).await;
        assert_eq!((status, answer["error"].as_str()), (401, Some(errors::BAD_SIGNATURE)), "{timestamp} {nonce}");
        assert_eq!(
            answer["message"],
            format!("the signature header {header} is missing or malformed"),
            "{timestamp} {nonce}: refused for its spelling, not as a wrong signature"
        );
        assert_eq!(op.balance("p1").await, 10_000, "nothing applied");
    }
    // The same debit in the document's spelling is applied.
    let (status, answer) = debit_spelled(&op, &body, &now, nonce).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(op.balance("p1").await, 9_700);
    op.running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_method_on_a_wallet_path_is_a_signed_405() {
    let op = operator().await;
    op.player("p1", 10_000).await;
    let k = keys();
    for (method, path) in [
        (reqwest::Method::GET, paths::DEBIT),
        (reqwest::Method::PUT, paths::CREDIT),
        (reqwest::Method::DELETE, paths::BALANCE),
    ] {
        // Unsigned, and signed: the answer is bound to the request's nonce, if any.
        let signed = k.sign(Covered::Request { method: method.as_str(), path }, b"", now_ms());
        for signed in [None, Some(signed)] {
            let mut request = op.http.request(method.clone(), format!("{}{path}", op.running.url()));
            for (name, value) in signed.iter().flat_map(Signed::headers) {
                request = request.header(name, value);
            }
            let r = request.send().await.unwrap();
            assert_eq!(r.status(), 405, "{method} {path}");
            assert_eq!(r.headers()["allow"], "POST");
            let headers = r.headers().clone();
            let body = r.bytes().await.unwrap();
            let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(answer["error"], "method_not_allowed", "{answer}");
            let answer_signed = Signed::from_headers(|name| headers.get(name).and_then(|v| v.to_str().ok()))
                .unwrap_or_else(|e| panic!("{method} {path}: the 405 is not signed: {e}"));
            let request_nonce = signed.as_ref().map_or("", |s| s.nonce.as_str());
            let covered = Covered::Answer { method: method.as_str(), path, status: 405, request_nonce };
            assert_eq!(k.verify(covered, &body, &answer_signed, now_ms()), Ok(()), "{method} {path}");
        }
    }
    assert_eq!(op.balance("p1").await, 10_000, "nothing applied");
    op.running.stop().await;
}
