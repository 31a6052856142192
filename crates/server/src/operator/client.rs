//! [`WalletClient`]: the game server's side of the operator's wallet
//! protocol (docs/operator-integration.md): every request signed, every
//! answer's signature checked before it is read, and each answer checked
//! against the request it answers (`wallet::answers`: every field, no
//! field the protocol does not have) and classified as acknowledged,
//! refused, or unknown. Nothing here retries: a debit's unknown outcome is
//! resolved by its rollback from the outbox, a credit is sent again by the
//! outbox, always with the same transaction id and the same bytes.

use super::transport::{Reply, Transport};
use crate::metrics::Metrics;
use bytes::Bytes;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wallet::{Covered, Signed, Signer, WalletRequest};

/// What an answer of the operator's wallet says: [`Answer::Applied`] (a
/// signed 200 matching the request), [`Answer::Refused`] (a signed refusal
/// the protocol has for the request: not applied), or [`Answer::Unknown`]
/// (a timeout, a lost connection, a 5xx, an answer whose signature or body
/// we cannot trust or that does not match the request: whether it was
/// applied is unknown).
pub use wallet::Verdict as Answer;

/// The client of one operator's wallet.
pub struct WalletClient {
    http: Transport,
    signer: Signer,
    metrics: Arc<Metrics>,
}

impl WalletClient {
    /// A client of the wallet at `base` (`http://`; its paths are
    /// appended), with the keys shared with the operator; each call gives
    /// up after `timeout`.
    pub fn new(
        base: &str,
        keys: wallet::Keys,
        timeout: Duration,
        metrics: Arc<Metrics>,
    ) -> anyhow::Result<WalletClient> {
        Ok(WalletClient { http: Transport::new(base, timeout)?, signer: Signer::new(keys), metrics })
    }

    /// POSTs `body` (its exact bytes are signed and sent) to `path`, one
    /// of the wallet's paths, whose request `body` must be (else nothing is
    /// sent, and the answer is unknown).
    pub async fn call(&self, kind: &'static str, path: &str, body: &[u8]) -> Answer {
        let started = Instant::now();
        let answer = match WalletRequest::parse(path, body) {
            Ok(request) => self.call_inner(&request, body).await,
            Err(why) => Answer::Unknown(why),
        };
        let outcome = match &answer {
            Answer::Applied(_) => "applied",
            Answer::Refused { .. } => "refused",
            Answer::Unknown(_) => "unknown",
        };
        self.metrics.wallet_requests.with_label_values(&[kind, outcome]).inc();
        self.metrics.wallet_seconds.with_label_values(&[kind]).observe(started.elapsed().as_secs_f64());
        if let Answer::Unknown(why) = &answer {
            tracing::warn!(kind, path, why, "the operator's wallet gave no answer we can trust");
        }
        answer
    }

    async fn call_inner(&self, request: &WalletRequest, body: &[u8]) -> Answer {
        let signed_path = self.http.path_of(request.path());
        let covered = Covered::Request { method: "POST", path: &signed_path };
        let signed = self.signer.keys.sign(covered, body, crate::store::now_ms());
        let Reply { status, headers, body: bytes } =
            match self.http.post(&signed_path, &signed.headers(), Bytes::copy_from_slice(body)).await {
                Ok(reply) => reply,
                Err(why) => return Answer::Unknown(why),
            };
        if status >= 500 {
            return Answer::Unknown(format!("answer {status}"));
        }
        let their = match Signed::from_headers(|n| headers.get(n).and_then(|v| v.to_str().ok())) {
            Ok(s) => s,
            Err(e) => return Answer::Unknown(format!("answer {status} not signed: {e}")),
        };
        let answer_covered =
            Covered::Answer { method: "POST", path: &signed_path, status, request_nonce: &signed.nonce };
        if let Err(e) = self.signer.check(answer_covered, &bytes, &their, crate::store::now_ms()) {
            return Answer::Unknown(format!("answer {status} with a bad signature: {e}"));
        }
        request.read(status, &bytes)
    }

    /// The player's balance, in cents.
    pub async fn balance(&self, player: &str) -> Result<i64, String> {
        let body = serde_json::to_vec(&wallet::BalanceRequest {
            player: player.to_string(),
            currency: wallet::CURRENCY.to_string(),
        })
        .expect("a balance request serializes");
        match self.call("balance", wallet::paths::BALANCE, &body).await {
            Answer::Applied(a) => Ok(a.balance_cents),
            Answer::Refused { code, message, .. } => Err(format!("{code}: {message}")),
            Answer::Unknown(why) => Err(why),
        }
    }
}
