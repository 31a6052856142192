//! The signed wallet: `POST /wallet/{balance,debit,credit,rollback,transactions}`
//! (docs/operator-integration.md; `docs/operator-wallet.openapi.json`).
//!
//! Each call: the chaos switch's delay and 5xx first (a 5xx applies
//! nothing, and is not signed: it stands for a gateway in front of the
//! wallet), then the request's signature (its headers in the document's
//! form, key id, window, HMAC; 401 `bad_signature` otherwise), then the
//! ledger in one transaction that also records the nonce (a replay is 401),
//! then the answer, signed with `Covered::Answer` bound to the request's
//! nonce, or lost when the switch drops it. Any other method on a wallet
//! path is answered 405 `method_not_allowed` with `Allow: POST`, signed too.

use crate::app::App;
use crate::chaos::{DropMode, Plan};
use crate::clock::now_ms;
use crate::ledger::{Answer, LedgerError, NonceUse};
use crate::serve::DropAnswer;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use std::sync::Arc;
use wallet::{
    BalanceRequest, Covered, MoneyRequest, NONCE_HEADER, RollbackRequest, SIGNATURE_HEADER, SignError, Signed,
    TIMESTAMP_HEADER, TransactionsRequest, TxKind, errors, paths,
};

/// The code of a 405 (the document's `ErrorBody`).
const METHOD_NOT_ALLOWED: &str = "method_not_allowed";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Balance,
    Debit,
    Credit,
    Rollback,
    Transactions,
}

impl Call {
    fn path(self) -> &'static str {
        match self {
            Call::Balance => paths::BALANCE,
            Call::Debit => paths::DEBIT,
            Call::Credit => paths::CREDIT,
            Call::Rollback => paths::ROLLBACK,
            Call::Transactions => paths::TRANSACTIONS,
        }
    }
}

pub(crate) fn routes() -> Router<Arc<App>> {
    let route = |call: Call| {
        post(move |State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes| wallet_call(app, call, headers, body))
            .fallback(move |State(app): State<Arc<App>>, method: Method, headers: HeaderMap| async move {
                not_allowed(&app, call, &method, &headers)
            })
    };
    Router::new()
        .route(paths::BALANCE, route(Call::Balance))
        .route(paths::DEBIT, route(Call::Debit))
        .route(paths::CREDIT, route(Call::Credit))
        .route(paths::ROLLBACK, route(Call::Rollback))
        .route(paths::TRANSACTIONS, route(Call::Transactions))
}

/// A signed answer to `method` on the call's path.
fn respond(app: &App, method: &str, call: Call, answer: &Answer, request_nonce: &str, now_ms: i64) -> Response {
    let covered = Covered::Answer { method, path: call.path(), status: answer.status, request_nonce };
    let signed = app.keys.sign(covered, &answer.body, now_ms);
    let status = StatusCode::from_u16(answer.status).expect("a valid status");
    let mut response = (status, answer.body.clone()).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for (name, value) in signed.headers() {
        h.insert(name, HeaderValue::from_str(&value).expect("hex and digits"));
    }
    response
}

async fn wallet_call(app: Arc<App>, call: Call, headers: HeaderMap, body: Bytes) -> Response {
    let plan = if call == Call::Transactions {
        // The export is spared (reconciliation reads the truth), but not the skew.
        Plan { skew_ms: app.chaos.config().skew_ms, ..Plan::default() }
    } else {
        app.chaos.plan()
    };
    if let Some(ms) = plan.delay_ms {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
    if let Some(status) = plan.error {
        let body = serde_json::json!({
            "error": if status == 500 { "internal_error" } else { "unavailable" },
            "message": "the chaos switch failed this call: nothing was applied",
        });
        return (StatusCode::from_u16(status).expect("5xx"), axum::Json(body)).into_response();
    }
    let now = now_ms() + plan.skew_ms;
    let request_nonce = request_nonce(&headers);
    let covered = Covered::Request { method: "POST", path: call.path() };
    let signed = match documented_form(&headers)
        .and_then(|()| Signed::from_headers(|name| headers.get(name).and_then(|v| v.to_str().ok())))
        .and_then(|s| app.keys.verify(covered, &body, &s, now).map(|()| s))
    {
        Ok(s) => s,
        Err(e) => {
            let answer = Answer::error(401, errors::BAD_SIGNATURE, e.to_string());
            return respond(&app, "POST", call, &answer, &request_nonce, now);
        }
    };
    // The ledger keeps the true time (applied_ms); only signatures see the skew.
    let now = now_ms();
    let nonce = NonceUse {
        key_id: signed.key_id.clone(),
        nonce: signed.nonce.clone(),
        forget_before_ms: now - 2 * app.keys.window_ms(),
    };
    let result = if plan.duplicate {
        // The copy runs at the same time on its own task; both go through
        // the ledger's idempotency. The caller gets the first's answer.
        let copy = tokio::spawn({
            let (app, body) = (app.clone(), body.clone());
            async move { process(&app, call, &body, None, now).await }
        });
        let first = process(&app, call, &body, Some(&nonce), now).await;
        if copy.await.is_ok() {
            app.chaos.count_duplicate();
        }
        first
    } else {
        process(&app, call, &body, Some(&nonce), now).await
    };
    let answer = match result {
        Ok(a) => a,
        Err(LedgerError::Replayed) => Answer::error(401, errors::BAD_SIGNATURE, "this nonce was already used"),
        Err(LedgerError::Database(e)) => {
            tracing::error!(path = call.path(), error = %e, "the ledger failed; nothing was applied");
            Answer::error(500, "internal_error", "the ledger failed: nothing was applied")
        }
    };
    if let Some(mode) = plan.drop
        && answer.status < 500
    {
        app.chaos.count_drop();
        if mode == DropMode::Hang {
            let hang = app.chaos.config().hang_ms;
            tokio::time::sleep(std::time::Duration::from_millis(hang)).await;
        }
        let mut response = StatusCode::INTERNAL_SERVER_ERROR.into_response();
        response.extensions_mut().insert(DropAnswer);
        return response;
    }
    respond(&app, "POST", call, &answer, &signed.nonce, now_ms() + plan.skew_ms)
}

/// The request's nonce as sent (empty when missing or not text): what an
/// answer to a refused request is bound to.
fn request_nonce(headers: &HeaderMap) -> String {
    headers.get(NONCE_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("").to_string()
}

/// The header values that could spell one value several ways are taken
/// only in the document's form (docs/operator-wallet.openapi.json): the
/// nonce and the signature in lower-case hex, the timestamp in decimal
/// without a sign or a leading zero. The signature covers the nonce's and
/// the timestamp's text as sent, so another spelling is another text: it is
/// refused as malformed, never checked against a text the sender did not
/// sign. (Lengths and presence are [`Signed::from_headers`]'s.)
fn documented_form(headers: &HeaderMap) -> Result<(), SignError> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("");
    let lower_hex = |value: &str| value.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    for name in [NONCE_HEADER, SIGNATURE_HEADER] {
        if !lower_hex(text(name)) {
            return Err(SignError::Missing(name));
        }
    }
    let timestamp = text(TIMESTAMP_HEADER);
    let canonical = (1..=15).contains(&timestamp.len())
        && !timestamp.starts_with('0')
        && timestamp.bytes().all(|b| b.is_ascii_digit());
    if !canonical {
        return Err(SignError::Missing(TIMESTAMP_HEADER));
    }
    Ok(())
}

/// Another method than POST on a wallet path: 405, signed like every
/// answer of the wallet (bound to the request's nonce, if it gave one),
/// with `Allow: POST`. Nothing is read or applied.
fn not_allowed(app: &App, call: Call, method: &Method, headers: &HeaderMap) -> Response {
    let answer = Answer::error(
        405,
        METHOD_NOT_ALLOWED,
        format!("{method} is not allowed on {}: every wallet call is a POST", call.path()),
    );
    let mut response = respond(app, method.as_str(), call, &answer, &request_nonce(headers), now_ms());
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

fn bad_body(e: serde_json::Error) -> Answer {
    Answer::error(400, errors::BAD_REQUEST, format!("the body is not the documented JSON: {e}"))
}

/// Parses the body and runs the call on the ledger (the nonce is recorded
/// in the same transaction, or alone when the body is refused).
async fn process(
    app: &App,
    call: Call,
    body: &[u8],
    nonce: Option<&NonceUse>,
    now: i64,
) -> Result<Answer, LedgerError> {
    let ledger = &app.ledger;
    macro_rules! parse {
        ($t:ty) => {
            match serde_json::from_slice::<$t>(body) {
                Ok(r) => r,
                Err(e) => {
                    ledger.nonce_only(nonce, now).await?;
                    return Ok(bad_body(e));
                }
            }
        };
    }
    match call {
        Call::Balance => ledger.balance(&parse!(BalanceRequest), nonce, now).await,
        Call::Debit => ledger.money(TxKind::Debit, &parse!(MoneyRequest), nonce, now).await,
        Call::Credit => ledger.money(TxKind::Credit, &parse!(MoneyRequest), nonce, now).await,
        Call::Rollback => ledger.rollback(&parse!(RollbackRequest), nonce, now).await,
        Call::Transactions => ledger.transactions(&parse!(TransactionsRequest), nonce, now).await,
    }
}
