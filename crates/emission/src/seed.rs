//! The emission seed and the keys derived from it.
//!
//! One secret of 32 bytes makes a whole emission. Each block gets three
//! independent ChaCha20 keys, one for the shuffle, one for the play codes
//! and one for the tickets' server seeds, derived with a domain-separated
//! HMAC-SHA256 (guarantee 5):
//!
//! ```text
//! key(purpose, emission, block) = HMAC-SHA256(
//!     key     = the 32 bytes of the emission seed,
//!     message = "as-capone emission v1 " || purpose || 0x00
//!               || emission as u32 big-endian || block as u32 big-endian)
//! ```
//!
//! with `purpose` the ASCII text `shuffle`, `play-codes` or `server-seeds`.
//! HMAC is a PRF: knowing a block's shuffle (or the serials and schedules of
//! sold tickets, or the revealed seeds of finished ones) reveals nothing
//! about its play codes or unrevealed seeds, nor about any other block.
//!
//! **Server seeds** (`docs/contract.md` Fairness, 1): the ticket at position `p`
//! (counted from 1) of a block gets the 32 bytes `32 (p - 1) .. 32 p` of the
//! ChaCha20 keystream of the block's `server-seeds` key (the same stream
//! layout as the shuffle's, see [`crate::shuffle`]): words `8 (p - 1)` to
//! `8 p - 1`, each written little-endian. They are fixed when the block is
//! emitted, before any ticket is sold, and the block's Merkle root commits
//! to the `SHA-256` of each ([`EmissionSeed::server_seed`] reads one without
//! making the block).

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;

pub(crate) type HmacSha256 = Hmac<Sha256>;

/// What a derived key is for; its name is part of the HMAC message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The Fisher-Yates shuffle of a block's schedules.
    Shuffle,
    /// The secret play codes of a block's tickets.
    PlayCodes,
    /// The secret server seeds of a block's tickets.
    ServerSeeds,
}

impl Purpose {
    /// The ASCII name in the HMAC message.
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Shuffle => "shuffle",
            Purpose::PlayCodes => "play-codes",
            Purpose::ServerSeeds => "server-seeds",
        }
    }
}

/// The secret of an emission: 32 bytes, written as 64 hex digits.
///
/// `Debug` never shows it; [`EmissionSeed::to_hex`] does, for the secret
/// file only.
#[derive(Clone, PartialEq, Eq)]
pub struct EmissionSeed([u8; 32]);

/// A seed that is not 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an emission seed is 64 hex digits (32 bytes), found {found}")]
pub struct SeedError {
    found: String,
}

impl EmissionSeed {
    pub fn from_bytes(bytes: [u8; 32]) -> EmissionSeed {
        EmissionSeed(bytes)
    }

    /// Parses 64 hex digits (either case, surrounding spaces ignored).
    pub fn parse(s: &str) -> Result<EmissionSeed, SeedError> {
        let s = s.trim();
        let mut bytes = [0u8; 32];
        match hex::decode_to_slice(s, &mut bytes) {
            Ok(()) => Ok(EmissionSeed(bytes)),
            Err(_) => Err(SeedError {
                found: if s.len() == 64 {
                    "64 characters that are not all hex digits".into()
                } else {
                    format!("{} characters", s.chars().count())
                },
            }),
        }
    }

    /// A fresh seed from the operating system's CSPRNG.
    pub fn from_os_rng() -> Result<EmissionSeed, rand_core::OsError> {
        use rand_core::TryRngCore;
        let mut bytes = [0u8; 32];
        rand_core::OsRng.try_fill_bytes(&mut bytes)?;
        Ok(EmissionSeed(bytes))
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The 64 lowercase hex digits: a secret.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// The server seed of the ticket at `position` (from 1) of `block` of
    /// emission `emission` (see `seed.rs`'s module doc), read straight from its
    /// place in the block's keystream.
    pub fn server_seed(&self, emission: u32, block: u32, position: u32) -> [u8; 32] {
        let key = derive_key(&self.mac(), Purpose::ServerSeeds, emission, block);
        server_seed_at(key, position)
    }

    /// The keyed HMAC, its key schedule computed once and cloned per block.
    pub(crate) fn mac(&self) -> HmacSha256 {
        HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length")
    }
}

impl fmt::Debug for EmissionSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EmissionSeed(<secret>)")
    }
}

/// The key for `purpose` of block `block` of emission `emission`, from the
/// seed's keyed HMAC (see the module doc).
pub(crate) fn derive_key(mac: &HmacSha256, purpose: Purpose, emission: u32, block: u32) -> [u8; 32] {
    let mut mac = mac.clone();
    mac.update(b"as-capone emission v1 ");
    mac.update(purpose.name().as_bytes());
    mac.update(&[0]);
    mac.update(&emission.to_be_bytes());
    mac.update(&block.to_be_bytes());
    mac.finalize().into_bytes().into()
}

/// Bytes `32 (position - 1) ..` of the keystream of `key`.
pub(crate) fn server_seed_at(key: [u8; 32], position: u32) -> [u8; 32] {
    use rand_core::{RngCore, SeedableRng};
    let mut rng = rand_chacha::ChaCha20Rng::from_seed(key);
    rng.set_word_pos(8 * u128::from(position.saturating_sub(1)));
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    seed
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    #[test]
    fn parse_accepts_64_hex_digits_only() {
        let s = EmissionSeed::parse(&"aB".repeat(32)).unwrap();
        assert_eq!(s.as_bytes(), &[0xab; 32]);
        assert_eq!(s.to_hex(), "ab".repeat(32));
        assert!(EmissionSeed::parse(&"ab".repeat(31)).unwrap_err().to_string().contains("found 62 characters"));
        assert!(EmissionSeed::parse(&"zz".repeat(32)).is_err());
        assert!(!format!("{s:?}").contains("ab"), "Debug never shows the seed");
    }

    #[test]
    fn os_seeds_differ() {
        assert_ne!(EmissionSeed::from_os_rng().unwrap(), EmissionSeed::from_os_rng().unwrap());
    }

    #[test]
    fn derived_keys_match_hmac_written_from_its_definition() {
        // RFC 2104 with plain SHA-256, so the derivation does not just agree with itself.
        let seed = EmissionSeed::from_bytes(std::array::from_fn(|i| i as u8));
        let mut ipad = [0x36u8; 64];
        let mut opad = [0x5cu8; 64];
        for i in 0..32 {
            ipad[i] ^= seed.as_bytes()[i];
            opad[i] ^= seed.as_bytes()[i];
        }
        let msg = b"as-capone emission v1 play-codes\x00\x00\x00\x00\x07\x00\x00\x01\x02";
        let inner = Sha256::new().chain_update(ipad).chain_update(msg).finalize();
        let outer: [u8; 32] = Sha256::new().chain_update(opad).chain_update(inner).finalize().into();
        assert_eq!(derive_key(&seed.mac(), Purpose::PlayCodes, 7, 258), outer);
        assert_ne!(derive_key(&seed.mac(), Purpose::Shuffle, 7, 258), outer, "purposes are separated");
    }
}
