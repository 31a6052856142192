//! Device tokens (docs/limits.md, "Logins"): what a browser keeps once its
//! owner logged in, so that strangers guessing the account's password from
//! anywhere cannot keep the owner out of it.
//!
//! A device token grants nothing by itself: it is not a session, it opens
//! no account. It only says, at the next login with the right password,
//! "this device logged in to this account before", and that login's
//! password check is then counted in the device's own back-off
//! ([`domain::limits::device_bucket`]) instead of the account's, which
//! every stranger shares. It is stateless: `d1.KEY.NONCE.MAC`, the MAC an
//! HMAC-SHA256 under the server key `KEY` of the player, the random nonce
//! and the account's current password hash. So a change of password (new
//! credentials, a recovery) or a closure ends every device token of the
//! account, and nothing is stored per device but its counter, written only
//! when that device logs in.

use crate::keys::Keyring;
use domain::PlayerId;

/// The domain of the MAC: nothing else the server key signs looks like it.
const DOMAIN: &[u8] = b"as-capone device token v1";

/// The MAC of a device token, truncated to 128 bits (hex).
fn mac(keys: &Keyring, key_id: i64, player: PlayerId, nonce: &str, password_hash: &str) -> Option<String> {
    let key = keys.key(key_id).ok()?;
    let full = key.hmac(&[DOMAIN, &player.to_be_bytes(), nonce.as_bytes(), password_hash.as_bytes()]);
    Some(hex::encode(&full[..16]))
}

/// A new device token of `player` whose password hash is `password_hash`,
/// under the ring's newest key.
pub fn issue(keys: &Keyring, player: PlayerId, password_hash: &str) -> String {
    let key_id = keys.keys().map(|(id, _)| i64::from(id)).max().unwrap_or(1);
    let nonce = hex::encode(crate::fairness::random_bytes::<16>());
    let mac = mac(keys, key_id, player, &nonce, password_hash).expect("the newest key is in the ring");
    format!("d1.{key_id}.{nonce}.{mac}")
}

/// The device's id (its nonce) when `token` is a device token of `player`
/// issued while the password hash was `password_hash`; `None` otherwise
/// (malformed, another account's, another password's, a forged MAC).
pub fn check(keys: &Keyring, token: &str, player: PlayerId, password_hash: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (Some("d1"), Some(key_id), Some(nonce), Some(given), None) =
        (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let key_id: i64 = key_id.parse().ok()?;
    if nonce.len() != 32 || !nonce.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
        return None;
    }
    let want = mac(keys, key_id, player, nonce, password_hash)?;
    // Compared in constant time: the MAC is the secret part.
    let same = want.len() == given.len() && want.bytes().zip(given.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
    same.then(|| nonce.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::ServerKey;

    fn ring() -> Keyring {
        Keyring::new(ServerKey::from_bytes([9; 32]), None)
    }

    #[test]
    fn a_device_token_is_its_account_and_password_s_only() {
        let keys = ring();
        let token = issue(&keys, 7, "$argon2id$hash-a");
        let id = check(&keys, &token, 7, "$argon2id$hash-a").expect("its own account and password");
        assert_eq!(id.len(), 32);
        assert!(token.starts_with("d1.1."), "{token}");
        // Another player, another password (changed, recovered, closed): nothing.
        assert_eq!(check(&keys, &token, 8, "$argon2id$hash-a"), None);
        assert_eq!(check(&keys, &token, 7, "$argon2id$hash-b"), None);
        // Another key, a changed MAC or nonce, malformed: nothing.
        let other = Keyring::new(ServerKey::from_bytes([10; 32]), None);
        assert_eq!(check(&other, &token, 7, "$argon2id$hash-a"), None);
        let mut forged = token.clone();
        let last = forged.pop().unwrap();
        forged.push(if last == '0' { '1' } else { '0' });
        assert_eq!(check(&keys, &forged, 7, "$argon2id$hash-a"), None);
        for bad in ["", "d1", "d1.1.x.y", &format!("{token}.x"), &token.replace("d1.", "d2."), &token.to_uppercase()] {
            assert_eq!(check(&keys, bad, 7, "$argon2id$hash-a"), None, "{bad}");
        }
        // Two tokens of one device's account differ (their nonces do).
        assert_ne!(issue(&keys, 7, "$argon2id$hash-a"), token);
    }
}
