//! Play codes: the secret printed under a paper ticket's scratch zone, typed
//! (or scanned from the QR code) to play the duel online (`docs/contract.md`,
//! Retail tickets).
//!
//! A code is 80 random bits written as 16 characters of Crockford's base32
//! alphabet `0123456789ABCDEFGHJKMNPQRSTVWXYZ` (no `I`, `L`, `O` or `U`, so
//! nothing reads as another character), most significant 5 bits first, in
//! four groups: `7K3M-Q9ZD-XW4P-2HRT`.
//!
//! [`PlayCode::parse`] ignores case, spaces and dashes and, as Crockford
//! decoding does, reads `O` as `0` and `I` or `L` as `1`.
//!
//! The bits come from the block's [`Purpose::PlayCodes`](crate::seed::Purpose)
//! ChaCha20 stream, independent of the shuffle's: for the tickets in sale
//! order, three `u32` words `a, b, c` each, and the code is
//! `a << 48 | b << 16 | c >> 16`.

use std::fmt;

/// Crockford's base32 alphabet: value `v` is `ALPHABET[v]`.
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Characters of a code.
const CODE_CHARS: usize = 16;

/// A ticket's secret play code (80 bits).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlayCode {
    /// The 16 characters, uppercase, without dashes.
    chars: [u8; CODE_CHARS],
}

/// A string that is not a play code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayCodeError {
    #[error("a play code has 16 characters (like 7K3M-Q9ZD-XW4P-2HRT), found {0}")]
    Length(usize),
    #[error("{0:?} cannot appear in a play code (letters and digits except U)")]
    Char(char),
}

impl PlayCode {
    /// The code of an 80-bit value (higher bits are ignored).
    pub fn from_bits(value: u128) -> PlayCode {
        let mut chars = [0u8; CODE_CHARS];
        for (i, c) in chars.iter_mut().enumerate() {
            let shift = 5 * (CODE_CHARS - 1 - i);
            *c = ALPHABET[((value >> shift) & 31) as usize];
        }
        PlayCode { chars }
    }

    /// The code of the three stream words of one ticket (`play_code.rs`'s module doc).
    pub fn from_words(a: u32, b: u32, c: u32) -> PlayCode {
        PlayCode::from_bits(u128::from(a) << 48 | u128::from(b) << 16 | u128::from(c >> 16))
    }

    /// The 80-bit value.
    pub fn bits(&self) -> u128 {
        self.chars.iter().fold(0u128, |acc, &c| acc << 5 | u128::from(value_of(c).expect("valid by construction")))
    }

    /// Parses a typed or scanned code: any case, spaces and dashes anywhere.
    pub fn parse(s: &str) -> Result<PlayCode, PlayCodeError> {
        let mut chars = [0u8; CODE_CHARS];
        let mut n = 0;
        for ch in s.chars().filter(|c| !c.is_whitespace() && *c != '-') {
            let c = match ch.to_ascii_uppercase() {
                'O' => '0',
                'I' | 'L' => '1',
                c => c,
            };
            if !c.is_ascii() || value_of(c as u8).is_none() {
                return Err(PlayCodeError::Char(ch));
            }
            if n < CODE_CHARS {
                chars[n] = c as u8;
            }
            n += 1;
        }
        if n != CODE_CHARS {
            return Err(PlayCodeError::Length(n));
        }
        Ok(PlayCode { chars })
    }

    /// The 16 characters without dashes: what the Merkle leaf hashes.
    pub fn compact(&self) -> &str {
        std::str::from_utf8(&self.chars).expect("ASCII by construction")
    }

    /// [`PlayCode::compact`]'s bytes.
    pub(crate) fn as_bytes(&self) -> &[u8; CODE_CHARS] {
        &self.chars
    }

    /// `SHA-256` of [`PlayCode::compact`]: what the Merkle leaf commits to,
    /// and what a server can store instead of the code itself.
    pub fn sha256(&self) -> [u8; 32] {
        use sha2::Digest;
        sha2::Sha256::digest(self.chars).into()
    }

    /// The printed form in four groups: `7K3M-Q9ZD-XW4P-2HRT`.
    pub fn grouped(&self) -> [u8; 19] {
        let mut out = [b'-'; 19];
        for (g, chunk) in self.chars.chunks(4).enumerate() {
            out[g * 5..g * 5 + 4].copy_from_slice(chunk);
        }
        out
    }
}

/// The value of an uppercase alphabet character.
fn value_of(c: u8) -> Option<u8> {
    ALPHABET.iter().position(|&a| a == c).map(|v| v as u8)
}

/// The grouped form, `7K3M-Q9ZD-XW4P-2HRT`.
impl fmt::Display for PlayCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(std::str::from_utf8(&self.grouped()).expect("ASCII"))
    }
}

/// Never shows the code: it is a secret until the ticket is scratched.
impl fmt::Debug for PlayCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PlayCode(<secret>)")
    }
}

impl std::str::FromStr for PlayCode {
    type Err = PlayCodeError;
    fn from_str(s: &str) -> Result<PlayCode, PlayCodeError> {
        PlayCode::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alphabet_has_no_ambiguous_letters() {
        assert_eq!(ALPHABET.len(), 32);
        for c in [b'I', b'L', b'O', b'U'] {
            assert!(!ALPHABET.contains(&c));
        }
        let mut sorted = *ALPHABET;
        sorted.sort();
        assert_eq!(&sorted, ALPHABET, "distinct and in order");
    }

    #[test]
    fn bits_round_trip_most_significant_first() {
        assert_eq!(PlayCode::from_bits(0).to_string(), "0000-0000-0000-0000");
        assert_eq!(PlayCode::from_bits((1 << 80) - 1).to_string(), "ZZZZ-ZZZZ-ZZZZ-ZZZZ");
        assert_eq!(PlayCode::from_bits(1).compact(), "0000000000000001");
        assert_eq!(PlayCode::from_bits(31 << 75).compact(), "Z000000000000000");
        let v = 0x1234_5678_9abc_def0_1234u128;
        assert_eq!(PlayCode::from_bits(v).bits(), v);
        assert_eq!(PlayCode::from_words(0xffff_ffff, 0, 0xffff_0000).bits(), (0xffff_ffffu128 << 48) | 0xffff);
    }

    #[test]
    fn parse_normalises_case_spaces_and_dashes() {
        let code = PlayCode::parse("7K3M-Q9ZD-XW4P-2HRT").unwrap();
        assert_eq!(code.to_string(), "7K3M-Q9ZD-XW4P-2HRT");
        assert_eq!(code.compact(), "7K3MQ9ZDXW4P2HRT");
        for typed in ["7k3mq9zdxw4p2hrt", " 7K3M Q9ZD XW4P 2HRT ", "7K-3MQ9-ZDXW4P2-HRT", "7k3m-q9zd-xw4p-2hrt\n"] {
            assert_eq!(PlayCode::parse(typed).unwrap(), code, "{typed:?}");
        }
        // Crockford's reading of look-alikes.
        assert_eq!(PlayCode::parse("O0IL-oil1-0000-0000").unwrap().compact(), "0011011100000000");
    }

    #[test]
    fn parse_refuses_wrong_lengths_and_characters() {
        assert_eq!(PlayCode::parse("7K3M-Q9ZD-XW4P-2HR"), Err(PlayCodeError::Length(15)));
        assert_eq!(PlayCode::parse("7K3M-Q9ZD-XW4P-2HRTT"), Err(PlayCodeError::Length(17)));
        assert_eq!(PlayCode::parse(""), Err(PlayCodeError::Length(0)));
        assert_eq!(PlayCode::parse("7K3M-Q9ZD-XW4P-2HRU"), Err(PlayCodeError::Char('U')));
        assert_eq!(PlayCode::parse("7K3M_Q9ZD-XW4P-2HRT"), Err(PlayCodeError::Char('_')));
        assert_eq!(PlayCode::parse("7K3M-Q9ZD-XW4P-2HRÉ"), Err(PlayCodeError::Char('É')));
        assert!(PlayCode::parse("7K3M-Q9ZD-XW4P-2HRT").unwrap().to_string().len() == 19);
        assert!(!format!("{:?}", PlayCode::from_bits(5)).contains("0005"), "Debug hides the secret");
    }
}
