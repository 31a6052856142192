//! The operator's clients: the launch of a game on the game server (signed,
//! its answer verified), and a signed wallet client for tests and tools
//! that speak to a wallet as the game server does.

use crate::clock::now_ms;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::time::Duration;
use wallet::{Covered, ErrorBody, Keys, LaunchAnswer, LaunchRequest, SignError, Signed, paths};

/// Why a launch failed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The game server could not be reached or did not answer.
    #[error("the game server did not answer: {0}")]
    Transport(String),
    /// The game server refused the launch (its status and error body).
    #[error("the game server refused the launch ({status}): {} ({})", .body.message, .body.error)]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The error body.
        body: ErrorBody,
    },
    /// The answer's signature is missing or wrong: it is not trusted.
    #[error("the game server's answer is not signed right: {0}")]
    BadSignature(SignError),
    /// The answer is not the documented JSON.
    #[error("the game server's answer is not understood: {0}")]
    BadAnswer(String),
}

fn http_client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder().timeout(timeout).build().expect("an HTTP client")
}

/// Signs and sends `POST {game_url}/api/operator/launch`, checks the
/// answer's signature (bound to this request's nonce) and returns the
/// launch URL and its one-time code. A refusal (any status but 200) is
/// reported with its body whether or not its signature verifies: it is
/// never acted upon as a launch.
pub async fn launch(game_url: &str, keys: &Keys, request: &LaunchRequest) -> Result<LaunchAnswer, LaunchError> {
    let body = serde_json::to_vec(request).expect("serializable");
    let signed = keys.sign(Covered::Request { method: "POST", path: paths::LAUNCH }, &body, now_ms());
    let url = format!("{}{}", game_url.trim_end_matches('/'), paths::LAUNCH);
    let mut builder = http_client(Duration::from_secs(10)).post(url).header("content-type", "application/json");
    for (name, value) in signed.headers() {
        builder = builder.header(name, value);
    }
    let response = builder.body(body).send().await.map_err(|e| LaunchError::Transport(e.to_string()))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let answer = response.bytes().await.map_err(|e| LaunchError::Transport(e.to_string()))?;
    let verified = Signed::from_headers(|name| headers.get(name).and_then(|v| v.to_str().ok())).and_then(|s| {
        let covered = Covered::Answer { method: "POST", path: paths::LAUNCH, status, request_nonce: &signed.nonce };
        keys.verify(covered, &answer, &s, now_ms())
    });
    if status != 200 {
        let body = serde_json::from_slice::<ErrorBody>(&answer).unwrap_or_else(|_| ErrorBody {
            error: "unreadable".into(),
            message: String::from_utf8_lossy(&answer).chars().take(200).collect(),
        });
        return Err(LaunchError::Refused { status, body });
    }
    verified.map_err(LaunchError::BadSignature)?;
    serde_json::from_slice(&answer).map_err(|e| LaunchError::BadAnswer(e.to_string()))
}

/// A wallet's answer as a signed client received it.
#[derive(Debug, Clone)]
pub struct WalletReply {
    /// The HTTP status.
    pub status: u16,
    /// The exact body.
    pub body: Vec<u8>,
    /// The answer's signature checked against this request (key, window, HMAC).
    pub verified: Result<(), SignError>,
    /// The answer's signature headers, when readable.
    pub signed: Option<Signed>,
}

impl WalletReply {
    /// The body as `T` (panics when it is not: for tests and tools).
    pub fn json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not the expected JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The `error` code of an error body ("" when none).
    pub fn error(&self) -> String {
        serde_json::from_slice::<ErrorBody>(&self.body).map(|b| b.error).unwrap_or_default()
    }
}

/// A client of an operator's wallet that signs as the game server does.
#[derive(Debug, Clone)]
pub struct WalletClient {
    base: String,
    keys: Keys,
    http: reqwest::Client,
}

impl WalletClient {
    /// A client of the wallet at `base` (e.g. `http://127.0.0.1:9300`).
    pub fn new(base: &str, keys: Keys, timeout: Duration) -> WalletClient {
        WalletClient { base: base.trim_end_matches('/').to_string(), keys, http: http_client(timeout) }
    }

    /// The keys it signs with.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Signs `request` now and posts it to `path`.
    pub async fn call(&self, path: &str, request: &impl Serialize) -> Result<WalletReply, reqwest::Error> {
        let body = serde_json::to_vec(request).expect("serializable");
        let signed = self.keys.sign(Covered::Request { method: "POST", path }, &body, now_ms());
        self.call_raw(path, body, &signed).await
    }

    /// Posts `body` with the signature headers `signed` as given (tests
    /// alter either), and checks the answer's signature against them.
    pub async fn call_raw(&self, path: &str, body: Vec<u8>, signed: &Signed) -> Result<WalletReply, reqwest::Error> {
        let mut builder = self.http.post(format!("{}{path}", self.base)).header("content-type", "application/json");
        for (name, value) in signed.headers() {
            builder = builder.header(name, value);
        }
        let response = builder.body(body).send().await?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.bytes().await?.to_vec();
        let answer_signed = Signed::from_headers(|name| headers.get(name).and_then(|v| v.to_str().ok()));
        let verified = answer_signed.clone().and_then(|s| {
            let covered = Covered::Answer { method: "POST", path, status, request_nonce: &signed.nonce };
            self.keys.verify(covered, &body, &s, now_ms())
        });
        Ok(WalletReply { status, body, verified, signed: answer_signed.ok() })
    }
}
