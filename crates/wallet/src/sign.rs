//! Signatures both ways: every request and every answer of the protocol
//! carries four headers, and its receiver checks them before reading the
//! body.
//!
//! | header | value |
//! |---|---|
//! | `X-Signature-Key-Id` | the id of the key used (keys rotate: the receiver may know several) |
//! | `X-Signature-Timestamp` | unix milliseconds when it was signed |
//! | `X-Signature-Nonce` | 32 hex digits, never used twice by the sender |
//! | `X-Signature` | hex HMAC-SHA256 of the canonical text with the key |
//!
//! The canonical text of a **request** is
//! `METHOD "\n" PATH "\n" TIMESTAMP "\n" NONCE "\n" BODY`; of an
//! **answer**, `"RESPONSE\n" METHOD " " PATH "\n" STATUS "\n"
//! REQUEST_NONCE "\n" TIMESTAMP "\n" NONCE "\n" BODY`, so that an answer
//! is bound to the request it answers. PATH is the request's path without
//! its query; BODY the exact bytes sent (empty for none).
//!
//! The receiver refuses an unknown key id, a timestamp more than the window
//! away from its clock (either way), a nonce it has seen within the window,
//! and a signature that does not match (compared in constant time).

use hmac::{Hmac, Mac};
use rand_core::{OsRng, TryRngCore};
use sha2::Sha256;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// The HTTP header of a signed message's key id.
const KEY_ID_HEADER: &str = "x-signature-key-id";
/// The HTTP header of a signed message's time (unix milliseconds).
pub const TIMESTAMP_HEADER: &str = "x-signature-timestamp";
/// The HTTP header of a signed message's nonce.
pub const NONCE_HEADER: &str = "x-signature-nonce";
/// The HTTP header of a signed message's signature (hex HMAC-SHA256).
pub const SIGNATURE_HEADER: &str = "x-signature";

/// The default window: a signed message older or newer than this (ms) is refused.
const DEFAULT_WINDOW_MS: i64 = 30_000;

type HmacSha256 = Hmac<Sha256>;

/// Why a signed message was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignError {
    #[error("the signature header {0} is missing or malformed")]
    Missing(&'static str),
    #[error("the key id {0:?} is not known")]
    UnknownKey(String),
    #[error("the timestamp is {0} ms away from this clock, more than the window of {1} ms")]
    Stale(i64, i64),
    #[error("this nonce was already used")]
    Replayed,
    #[error("the signature does not match")]
    Mismatch,
}

/// The four header values of a signed message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    pub key_id: String,
    pub timestamp_ms: i64,
    pub nonce: String,
    pub signature: String,
}

impl Signed {
    /// The headers, as (name, value) pairs.
    pub fn headers(&self) -> [(&'static str, String); 4] {
        [
            (KEY_ID_HEADER, self.key_id.clone()),
            (TIMESTAMP_HEADER, self.timestamp_ms.to_string()),
            (NONCE_HEADER, self.nonce.clone()),
            (SIGNATURE_HEADER, self.signature.clone()),
        ]
    }

    /// Reads the four headers through `get` (a header map's lookup).
    pub fn from_headers<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Signed, SignError> {
        let key_id =
            get(KEY_ID_HEADER).filter(|k| !k.is_empty() && k.len() <= 64).ok_or(SignError::Missing(KEY_ID_HEADER))?;
        let timestamp_ms =
            get(TIMESTAMP_HEADER).and_then(|t| t.parse::<i64>().ok()).ok_or(SignError::Missing(TIMESTAMP_HEADER))?;
        let nonce = get(NONCE_HEADER)
            .filter(|n| (16..=64).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or(SignError::Missing(NONCE_HEADER))?;
        let signature = get(SIGNATURE_HEADER)
            .filter(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or(SignError::Missing(SIGNATURE_HEADER))?;
        Ok(Signed {
            key_id: key_id.to_string(),
            timestamp_ms,
            nonce: nonce.to_ascii_lowercase(),
            signature: signature.to_ascii_lowercase(),
        })
    }
}

/// What a signature covers (the canonical text's parts).
#[derive(Debug, Clone, Copy)]
pub enum Covered<'a> {
    Request { method: &'a str, path: &'a str },
    Answer { method: &'a str, path: &'a str, status: u16, request_nonce: &'a str },
}

impl Covered<'_> {
    fn canonical(&self, timestamp_ms: i64, nonce: &str, body: &[u8]) -> Vec<u8> {
        let head = match self {
            Covered::Request { method, path } => format!("{method}\n{path}\n{timestamp_ms}\n{nonce}\n"),
            Covered::Answer { method, path, status, request_nonce } => {
                format!("RESPONSE\n{method} {path}\n{status}\n{request_nonce}\n{timestamp_ms}\n{nonce}\n")
            }
        };
        let mut text = head.into_bytes();
        text.extend_from_slice(body);
        text
    }
}

/// A set of shared keys by id, and the one this side signs with.
#[derive(Clone)]
pub struct Keys {
    keys: BTreeMap<String, Vec<u8>>,
    current: String,
    window_ms: i64,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets.
        f.debug_struct("Keys").field("ids", &self.keys.keys()).field("current", &self.current).finish()
    }
}

impl Keys {
    /// Keys from `ID:HEX,ID:HEX,...`; the first signs. Each secret is at least 32 bytes.
    pub fn parse(spec: &str) -> Result<Keys, String> {
        let mut keys = BTreeMap::new();
        let mut current = None;
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (id, hex_secret) = part
                .split_once(':')
                .ok_or_else(|| format!("a key is ID:HEX (at least 64 hex digits), not {part:?}"))?;
            if id.is_empty() || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)) {
                return Err(format!("a key id is 1 to 64 letters, digits, '-', '_' or '.', not {id:?}"));
            }
            let secret = hex::decode(hex_secret).map_err(|_| format!("key {id}: the secret is not hex"))?;
            if secret.len() < 32 {
                return Err(format!("key {id}: the secret must be at least 32 bytes (64 hex digits)"));
            }
            if keys.insert(id.to_string(), secret).is_some() {
                return Err(format!("key {id} is given twice"));
            }
            current.get_or_insert_with(|| id.to_string());
        }
        let current = current.ok_or("no key given")?;
        Ok(Keys { keys, current, window_ms: DEFAULT_WINDOW_MS })
    }

    /// One key.
    pub fn single(id: &str, secret: &[u8]) -> Keys {
        Keys::parse(&format!("{id}:{}", hex::encode(secret))).expect("a valid key")
    }

    pub fn with_window_ms(mut self, window_ms: i64) -> Keys {
        self.window_ms = window_ms;
        self
    }

    pub fn window_ms(&self) -> i64 {
        self.window_ms
    }

    /// The id of the key this side signs with.
    pub fn current(&self) -> &str {
        &self.current
    }

    fn mac(&self, key_id: &str) -> Option<HmacSha256> {
        self.keys.get(key_id).map(|k| HmacSha256::new_from_slice(k).expect("HMAC takes any key length"))
    }

    /// Signs a message at `now_ms` with a fresh random nonce.
    pub fn sign(&self, covered: Covered<'_>, body: &[u8], now_ms: i64) -> Signed {
        let mut nonce = [0u8; 16];
        OsRng.try_fill_bytes(&mut nonce).expect("the operating system's random source failed");
        self.sign_with_nonce(covered, body, now_ms, &hex::encode(nonce))
    }

    /// Signs with a given nonce (tests, golden vectors).
    pub fn sign_with_nonce(&self, covered: Covered<'_>, body: &[u8], now_ms: i64, nonce: &str) -> Signed {
        let mut mac = self.mac(&self.current).expect("the current key is in the set");
        mac.update(&covered.canonical(now_ms, nonce, body));
        Signed {
            key_id: self.current.clone(),
            timestamp_ms: now_ms,
            nonce: nonce.to_string(),
            signature: hex::encode(mac.finalize().into_bytes()),
        }
    }

    /// Checks key id, window and signature (not the nonce: see [`Nonces`]).
    pub fn verify(&self, covered: Covered<'_>, body: &[u8], signed: &Signed, now_ms: i64) -> Result<(), SignError> {
        let mut mac = self.mac(&signed.key_id).ok_or_else(|| SignError::UnknownKey(signed.key_id.clone()))?;
        let skew = (now_ms - signed.timestamp_ms).abs();
        if skew > self.window_ms {
            return Err(SignError::Stale(now_ms - signed.timestamp_ms, self.window_ms));
        }
        mac.update(&covered.canonical(signed.timestamp_ms, &signed.nonce, body));
        let expected = hex::decode(&signed.signature).map_err(|_| SignError::Missing(SIGNATURE_HEADER))?;
        mac.verify_slice(&expected).map_err(|_| SignError::Mismatch)
    }
}

/// The nonces seen within the window, in memory (one process). A nonce is
/// kept as long as a message carrying it could still pass the window check,
/// then forgotten. Sides with several processes keep theirs in a database.
#[derive(Debug, Default)]
pub struct Nonces {
    seen: HashMap<String, i64>,
    order: VecDeque<(i64, String)>,
}

impl Nonces {
    /// Records `nonce` (of a message stamped `timestamp_ms`); false when it
    /// was seen before within the window.
    pub fn first_time(&mut self, key_id: &str, nonce: &str, timestamp_ms: i64, now_ms: i64, window_ms: i64) -> bool {
        while let Some((t, _)) = self.order.front() {
            if *t >= now_ms - 2 * window_ms {
                break;
            }
            let (_, n) = self.order.pop_front().expect("front exists");
            self.seen.remove(&n);
        }
        let full = format!("{key_id}/{nonce}");
        if self.seen.contains_key(&full) {
            return false;
        }
        self.seen.insert(full.clone(), timestamp_ms);
        self.order.push_back((now_ms, full));
        true
    }
}

/// A side's signer: its keys and the nonces it has seen.
#[derive(Debug)]
pub struct Signer {
    pub keys: Keys,
    pub nonces: std::sync::Mutex<Nonces>,
}

impl Signer {
    pub fn new(keys: Keys) -> Signer {
        Signer { keys, nonces: std::sync::Mutex::new(Nonces::default()) }
    }

    /// Verifies a message and records its nonce (refusing one seen before).
    pub fn check(&self, covered: Covered<'_>, body: &[u8], signed: &Signed, now_ms: i64) -> Result<(), SignError> {
        self.keys.verify(covered, body, signed, now_ms)?;
        let window = self.keys.window_ms;
        if !self.nonces.lock().expect("nonces").first_time(
            &signed.key_id,
            &signed.nonce,
            signed.timestamp_ms,
            now_ms,
            window,
        ) {
            return Err(SignError::Replayed);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn keys() -> Keys {
        Keys::parse(&format!("k2:{},k1:{}", "22".repeat(32), "11".repeat(32))).unwrap()
    }

    const REQ: Covered<'static> = Covered::Request { method: "POST", path: "/wallet/debit" };

    /// Golden vector: the canonical text and its HMAC are pinned, so that an
    /// operator's implementation can be checked against it
    /// (docs/operator-integration.md quotes it).
    #[test]
    fn a_signature_is_pinned_by_a_golden_vector() {
        let s = keys().sign_with_nonce(REQ, br#"{"a":1}"#, NOW, "00112233445566778899aabbccddeeff");
        assert_eq!(s.key_id, "k2");
        assert_eq!(s.signature, GOLDEN);
        let text = REQ.canonical(NOW, "00112233445566778899aabbccddeeff", br#"{"a":1}"#);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "POST\n/wallet/debit\n1800000000000\n00112233445566778899aabbccddeeff\n{\"a\":1}"
        );
    }
    const GOLDEN: &str = "e2d54495e995698cabf30499682a5aeabe26b08605bab3c45fc7456d9ffaf7c5";

    #[test]
    fn every_alteration_is_refused() {
        let k = keys();
        let s = k.sign(REQ, b"{}", NOW);
        assert_eq!(k.verify(REQ, b"{}", &s, NOW + 1000), Ok(()));
        assert_eq!(k.verify(REQ, b"{ }", &s, NOW), Err(SignError::Mismatch));
        let other_path = Covered::Request { method: "POST", path: "/wallet/credit" };
        assert_eq!(k.verify(other_path, b"{}", &s, NOW), Err(SignError::Mismatch));
        let other_method = Covered::Request { method: "GET", path: "/wallet/debit" };
        assert_eq!(k.verify(other_method, b"{}", &s, NOW), Err(SignError::Mismatch));
        let mut t = s.clone();
        t.timestamp_ms += 1;
        assert_eq!(k.verify(REQ, b"{}", &t, NOW), Err(SignError::Mismatch));
        let mut n = s.clone();
        n.nonce = "ff".repeat(16);
        assert_eq!(k.verify(REQ, b"{}", &n, NOW), Err(SignError::Mismatch));
        let mut u = s.clone();
        u.key_id = "k9".into();
        assert_eq!(k.verify(REQ, b"{}", &u, NOW), Err(SignError::UnknownKey("k9".into())));
        assert!(matches!(k.verify(REQ, b"{}", &s, NOW + 30_001), Err(SignError::Stale(..))));
        assert!(matches!(k.verify(REQ, b"{}", &s, NOW - 30_001), Err(SignError::Stale(..))));
    }

    #[test]
    fn an_answer_is_bound_to_its_request_and_status() {
        let k = keys();
        let a = Covered::Answer { method: "POST", path: "/wallet/debit", status: 200, request_nonce: "ab" };
        let s = k.sign(a, b"{}", NOW);
        assert_eq!(k.verify(a, b"{}", &s, NOW), Ok(()));
        let other_status = Covered::Answer { method: "POST", path: "/wallet/debit", status: 500, request_nonce: "ab" };
        assert_eq!(k.verify(other_status, b"{}", &s, NOW), Err(SignError::Mismatch));
        let other_request = Covered::Answer { method: "POST", path: "/wallet/debit", status: 200, request_nonce: "cd" };
        assert_eq!(k.verify(other_request, b"{}", &s, NOW), Err(SignError::Mismatch));
        assert_eq!(k.verify(REQ, b"{}", &s, NOW), Err(SignError::Mismatch));
    }

    #[test]
    fn rotation_an_older_key_still_verifies_and_the_first_signs() {
        let old = Keys::parse(&format!("k1:{}", "11".repeat(32))).unwrap();
        let s = old.sign(REQ, b"x", NOW);
        assert_eq!(keys().verify(REQ, b"x", &s, NOW), Ok(()));
        assert_eq!(keys().sign(REQ, b"x", NOW).key_id, "k2");
        assert!(matches!(old.verify(REQ, b"x", &keys().sign(REQ, b"x", NOW), NOW), Err(SignError::UnknownKey(_))));
    }

    #[test]
    fn a_nonce_seen_twice_is_refused_then_forgotten_after_the_window() {
        let signer = Signer::new(keys());
        let s = signer.keys.sign(REQ, b"{}", NOW);
        assert_eq!(signer.check(REQ, b"{}", &s, NOW), Ok(()));
        assert_eq!(signer.check(REQ, b"{}", &s, NOW + 10), Err(SignError::Replayed));
        // Past the window the message is stale anyway; its nonce is forgotten.
        let mut n = Nonces::default();
        assert!(n.first_time("k", "a", NOW, NOW, 1000));
        assert!(!n.first_time("k", "a", NOW, NOW + 1999, 1000));
        assert!(n.first_time("k", "b", NOW, NOW + 2001, 1000));
        assert!(n.first_time("k", "a", NOW, NOW + 2001, 1000));
    }

    #[test]
    fn malformed_keys_and_headers_are_refused() {
        assert!(Keys::parse("").is_err());
        assert!(Keys::parse("k1:abcd").is_err());
        assert!(Keys::parse(&format!("k 1:{}", "11".repeat(32))).is_err());
        assert!(Keys::parse(&format!("k1:{0},k1:{0}", "11".repeat(32))).is_err());
        let h = |k: &str| -> Option<&'static str> {
            match k {
                KEY_ID_HEADER => Some("k1"),
                TIMESTAMP_HEADER => Some("12"),
                NONCE_HEADER => Some("zz"),
                _ => Some("00"),
            }
        };
        assert_eq!(Signed::from_headers(h), Err(SignError::Missing(NONCE_HEADER)));
        assert!(format!("{:?}", keys()).contains("k1") && !format!("{:?}", keys()).contains("1111"));
    }
}
