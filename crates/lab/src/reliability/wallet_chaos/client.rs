//! How a client player speaks to our server: its HTTP client, what can go
//! wrong with a request, and the operator's launch of a session.

use crate::reconcile::now_ms;
use crate::reliability::kills;
use serde_json::{Value, json};
use std::time::Duration;
use wallet::{Covered, Keys, LaunchAnswer, LaunchRequest, Signed, paths};

pub(super) fn client() -> reqwest::Client {
    // Longer than our server's wallet timeout and its retries of a purchase.
    reqwest::Client::builder().timeout(Duration::from_secs(30)).build().expect("http client")
}

/// What went wrong with a request to our server.
pub(super) enum Trouble {
    /// No answer (the process is down or died under it): try again.
    Down,
    /// The session is gone or the launch code is spent: launch again.
    Relaunch(String),
    /// Anything else: a failure of the run.
    Failed(String),
}

pub(super) async fn send(
    c: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: Option<&str>,
    body: Option<Vec<u8>>,
    idem: Option<&str>,
) -> Result<(u16, Vec<u8>), Trouble> {
    kills::send(c, method, url, token, body, idem).await.map_err(|_| Trouble::Down)
}

pub(super) fn short(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(300)]).into_owned()
}

/// Launches `player` as the operator does, then exchanges the one-time
/// code as the page does; the session's bearer token.
pub(super) async fn launch(c: &reqwest::Client, url: &str, keys: &Keys, player: &str) -> Result<String, Trouble> {
    let request = LaunchRequest {
        player: player.to_string(),
        currency: wallet::CURRENCY.into(),
        language: "fr".into(),
        country: Some("FR".into()),
        flags: Default::default(),
        lobby_url: None,
    };
    let body = serde_json::to_vec(&request).map_err(|e| Trouble::Failed(e.to_string()))?;
    let signed = keys.sign(Covered::Request { method: "POST", path: paths::LAUNCH }, &body, now_ms());
    let mut r = c.post(format!("{url}{}", paths::LAUNCH)).header("content-type", "application/json").body(body);
    for (name, value) in signed.headers() {
        r = r.header(name, value);
    }
    let resp = r.send().await.map_err(|_| Trouble::Down)?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp.bytes().await.map_err(|_| Trouble::Down)?;
    if status >= 500 {
        return Err(Trouble::Failed(format!("launch: {status} {}", short(&bytes))));
    }
    Signed::from_headers(|n| headers.get(n).and_then(|v| v.to_str().ok()))
        .and_then(|s| {
            let covered = Covered::Answer { method: "POST", path: paths::LAUNCH, status, request_nonce: &signed.nonce };
            keys.verify(covered, &bytes, &s, now_ms())
        })
        .map_err(|e| Trouble::Failed(format!("launch: {status}, the answer's signature: {e}")))?;
    if status != 200 {
        return Err(Trouble::Failed(format!("launch: {status} {}", short(&bytes))));
    }
    let launched: LaunchAnswer =
        serde_json::from_slice(&bytes).map_err(|e| Trouble::Failed(format!("launch answer: {e}")))?;
    let exchange = serde_json::to_vec(&json!({ "code": launched.code })).unwrap_or_default();
    match send(c, reqwest::Method::POST, format!("{url}/api/launch"), None, Some(exchange), None).await? {
        (200, b) => {
            let v: Value = serde_json::from_slice(&b).unwrap_or_default();
            if v["player"] != player {
                return Err(Trouble::Failed(format!("launch of {player}: the session is {}'s", v["player"])));
            }
            v["token"].as_str().map(str::to_string).ok_or_else(|| Trouble::Failed(format!("launch: {}", short(&b))))
        }
        // The code was spent by an exchange whose answer was lost (our server died).
        (401, b) => Err(Trouble::Relaunch(short(&b))),
        (s, b) => Err(Trouble::Failed(format!("POST /api/launch: {s} {}", short(&b)))),
    }
}
