//! Ticket serials: which ticket of which block of which emission, with check
//! digits that catch typing errors.
//!
//! Format: `ASC-001-00001-000042-81`:
//!
//! | part | width | meaning |
//! |---|---|---|
//! | `ASC` | 2 to 6 | the game code ("code jeu", art. 1): uppercase letters and digits, a letter first |
//! | `001` | 3 digits | the emission, 1 to 999 |
//! | `00001` | 5 digits | the block, 1 to 99 999 |
//! | `000042` | 6 digits | the position in the block in sale order, 1 to 999 999 |
//! | `81` | 2 digits | check digits, ISO 7064 MOD 97-10 |
//!
//! The check digits are those of ISO 7064 MOD 97-10 (the scheme of IBANs)
//! over the number `N` written by the digits of: each character of the code
//! as two digits (`0`-`9` as `00`-`09`, `A`-`Z` as `10`-`35`), then the
//! emission, block and position digits. They are `98 - (N × 100 mod 97)`,
//! so that `N‖check` is 1 modulo 97. Why it catches what we claim:
//!
//! - one wrong digit changes the number by `d × 10^k` with `0 < |d| < 10`;
//! - two neighbouring digits swapped change it by `9 × (a - b) × 10^k`;
//! - one wrong code character changes it by `(x - y) × 100^k`, and two
//!   neighbouring code characters swapped by `99 × (x - y) × 100^k`, with
//!   `0 < |x - y| <= 35`;
//!
//! and 97 is a prime that divides none of these. Swapping a character with
//! a dash breaks the shape and is refused by [`Serial::parse`]; without
//! dashes ([`Serial::parse`] accepts `ASC0010000100004281` too), a swap
//! across two parts is one of the swaps above or puts a letter among the
//! digits. The tests check all of it exhaustively on one serial.

use math::valid_game_code;
use std::fmt;

/// The game code of an emission: 2 to 6 characters `A-Z 0-9`, a letter
/// first (the table's rule 3). Stored inline: a serial allocates nothing.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GameCode {
    bytes: [u8; 6],
    len: u8,
}

impl GameCode {
    pub fn parse(s: &str) -> Result<GameCode, SerialError> {
        if !valid_game_code(s) {
            return Err(SerialError::Code(s.to_string()));
        }
        let mut bytes = [0u8; 6];
        bytes[..s.len()].copy_from_slice(s.as_bytes());
        Ok(GameCode { bytes, len: s.len() as u8 })
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len as usize]).expect("ASCII by construction")
    }
}

impl fmt::Display for GameCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for GameCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GameCode({})", self.as_str())
    }
}

/// Largest emission number (3 digits).
pub(crate) const MAX_EMISSION: u32 = 999;
/// Largest block number (5 digits).
pub const MAX_BLOCK: u32 = 99_999;
/// Largest position in a block (6 digits): blocks hold at most this many tickets.
pub(crate) const MAX_POSITION: u32 = 999_999;
/// Longest serial: 6 + 1 + 3 + 1 + 5 + 1 + 6 + 1 + 2 characters.
pub(crate) const MAX_SERIAL_LEN: usize = 26;

/// A ticket's serial; its check digits are computed, never stored, so a
/// `Serial` is always consistent.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Serial {
    code: GameCode,
    emission: u32,
    block: u32,
    position: u32,
}

/// Why a serial was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SerialError {
    #[error("game code {0:?} must be 2 to 6 uppercase letters or digits starting with a letter")]
    Code(String),
    #[error("{what} {value} is out of range 1..={max}")]
    Range { what: &'static str, value: u64, max: u32 },
    #[error("{0:?} is not a serial like ASC-001-00001-000042-81")]
    Shape(String),
    #[error("serial {0:?} has wrong check digits (a digit mistyped or two swapped?)")]
    Check(String),
}

impl Serial {
    /// The serial of `position` in `block` of `emission`, all counted from 1.
    pub fn new(code: GameCode, emission: u32, block: u32, position: u32) -> Result<Serial, SerialError> {
        for (what, value, max) in
            [("emission", emission, MAX_EMISSION), ("block", block, MAX_BLOCK), ("position", position, MAX_POSITION)]
        {
            if !(1..=max).contains(&value) {
                return Err(SerialError::Range { what, value: value.into(), max });
            }
        }
        Ok(Serial { code, emission, block, position })
    }

    /// Parses a serial, either case, with its dashes (`ASC-001-00001-000042-81`)
    /// or without (`asc0010000100004281`), and checks its check digits.
    pub fn parse(s: &str) -> Result<Serial, SerialError> {
        let up = s.trim().to_ascii_uppercase();
        let shape = || SerialError::Shape(s.trim().to_string());
        let (code, digits): (&str, String) = if up.contains('-') {
            let parts: Vec<&str> = up.split('-').collect();
            let widths = [3, 5, 6, 2];
            if parts.len() != 5 || parts[1..].iter().zip(widths).any(|(p, w)| p.len() != w) {
                return Err(shape());
            }
            (parts[0], parts[1..].concat())
        } else {
            if up.len() < 2 + 16 || !up.is_ascii() {
                return Err(shape());
            }
            let (c, d) = up.split_at(up.len() - 16);
            (c, d.to_string())
        };
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(shape());
        }
        let code = GameCode::parse(code).map_err(|_| shape())?;
        let num = |r: std::ops::Range<usize>| digits[r].parse::<u32>().expect("checked digits");
        let serial = Serial::new(code, num(0..3), num(3..8), num(8..14))?;
        if serial.check() != num(14..16) {
            return Err(SerialError::Check(s.trim().to_string()));
        }
        Ok(serial)
    }

    pub fn code(&self) -> GameCode {
        self.code
    }
    pub fn emission(&self) -> u32 {
        self.emission
    }
    pub fn block(&self) -> u32 {
        self.block
    }
    pub fn position(&self) -> u32 {
        self.position
    }

    /// The two check digits, 1 to 98 (ISO 7064 MOD 97-10, see `serial.rs`'s module doc).
    pub fn check(&self) -> u32 {
        let r = self.prefix_remainder();
        let r = digits_mod97(r, self.position, 6);
        98 - (r * 100) % 97
    }

    /// `N mod 97` for the code, emission and block digits: the part that
    /// is the same for every ticket of a block.
    fn prefix_remainder(&self) -> u32 {
        let mut r = 0u32;
        for &c in self.code.as_str().as_bytes() {
            let v = if c.is_ascii_digit() { c - b'0' } else { c - b'A' + 10 };
            r = (r * 100 + u32::from(v)) % 97;
        }
        let r = digits_mod97(r, self.emission, 3);
        digits_mod97(r, self.block, 5)
    }

    /// The serial as ASCII bytes in a fixed buffer, and its length: the
    /// allocation-free form used for CSV files and Merkle leaves.
    pub fn to_ascii(&self) -> ([u8; MAX_SERIAL_LEN], usize) {
        let mut buf = [0u8; MAX_SERIAL_LEN];
        let code = self.code.as_str().as_bytes();
        buf[..code.len()].copy_from_slice(code);
        let mut at = code.len();
        for (value, width) in [(self.emission, 3), (self.block, 5), (self.position, 6), (self.check(), 2)] {
            buf[at] = b'-';
            at += 1;
            put_digits(&mut buf[at..at + width], value);
            at += width;
        }
        (buf, at)
    }
}

/// The serials of one block: what they share (the code, emission and
/// block, and their remainder modulo 97) written once, so that each
/// ticket's serial costs its six position digits and two check digits.
/// [`BlockSerials::write`] gives [`Serial::to_ascii`]'s bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockSerials {
    /// `ASC-001-00001-`.
    prefix: [u8; MAX_SERIAL_LEN],
    prefix_len: usize,
    /// `N mod 97` of the code, emission and block digits.
    remainder: u32,
}

impl BlockSerials {
    /// The serials of the block of `serial`.
    pub(crate) fn of(serial: &Serial) -> BlockSerials {
        let (ascii, len) = serial.to_ascii();
        let prefix_len = len - 6 - 1 - 2;
        let mut prefix = [0u8; MAX_SERIAL_LEN];
        prefix[..prefix_len].copy_from_slice(&ascii[..prefix_len]);
        BlockSerials { prefix, prefix_len, remainder: serial.prefix_remainder() }
    }

    /// Writes the serial of `position` (1 to [`MAX_POSITION`]) at the
    /// start of `out` and returns its length.
    pub(crate) fn write(&self, position: u32, out: &mut [u8]) -> usize {
        let at = self.prefix_len;
        out[..at].copy_from_slice(&self.prefix[..at]);
        put_digits(&mut out[at..at + 6], position);
        out[at + 6] = b'-';
        let check = 98 - (digits_mod97(self.remainder, position, 6) * 100) % 97;
        put_digits(&mut out[at + 7..at + 9], check);
        at + 9
    }
}

/// `r` followed by the `width` decimal digits of `value`, modulo 97.
fn digits_mod97(r: u32, value: u32, width: u32) -> u32 {
    // Appending `width` digits is multiplying by 10^width and adding them.
    let scale = 10u64.pow(width);
    ((u64::from(r) * scale + u64::from(value) % scale) % 97) as u32
}

/// Writes `value` with leading zeros over all of `out`.
fn put_digits(out: &mut [u8], mut value: u32) {
    for b in out.iter_mut().rev() {
        *b = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

impl fmt::Display for Serial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (buf, len) = self.to_ascii();
        f.write_str(std::str::from_utf8(&buf[..len]).expect("ASCII"))
    }
}

impl fmt::Debug for Serial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Serial({self})")
    }
}

impl std::str::FromStr for Serial {
    type Err = SerialError;
    fn from_str(s: &str) -> Result<Serial, SerialError> {
        Serial::parse(s)
    }
}

impl serde::Serialize for Serial {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Serial {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Serial, D::Error> {
        let s = String::deserialize(d)?;
        Serial::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asc() -> GameCode {
        GameCode::parse("ASC").unwrap()
    }

    #[test]
    fn block_serials_are_the_serials_bytes() {
        for (code, emission, block) in [("ASC", 1, 1), ("AB", 999, 99_999), ("Z9Z9Z9", 17, 4242), ("A1", 500, 10)] {
            let code = GameCode::parse(code).unwrap();
            let serials = BlockSerials::of(&Serial::new(code, emission, block, 77).unwrap());
            for position in (1..=3000).chain([9_999, 10_000, 123_456, 300_000, 999_998, MAX_POSITION]) {
                let serial = Serial::new(code, emission, block, position).unwrap();
                let (expect, len) = serial.to_ascii();
                let mut out = [0u8; MAX_SERIAL_LEN];
                assert_eq!(serials.write(position, &mut out), len);
                assert_eq!(out, expect, "{serial}");
            }
        }
    }

    #[test]
    fn format_and_iso_7064_check_digits() {
        let s = Serial::new(asc(), 1, 1, 42).unwrap();
        // N = 10 28 12 | 001 | 00001 | 000042 -> independently:
        // python3 -c "n=int('102812'+'001'+'00001'+'000042'); print(98 - n*100 % 97)"
        assert_eq!(s.to_string(), "ASC-001-00001-000042-81");
        let n: u128 = "10281200100001000042".parse().unwrap();
        assert_eq!(u128::from(s.check()), 98 - (n * 100) % 97);
        assert_eq!((n * 100 + u128::from(s.check())) % 97, 1, "ISO 7064: N‖check = 1 mod 97");
        assert_eq!(Serial::parse("ASC-001-00001-000042-81").unwrap(), s);
    }

    #[test]
    fn parse_normalises_case_and_accepts_the_compact_form() {
        let s = Serial::new(asc(), 12, 345, 678_901).unwrap();
        let text = s.to_string();
        assert_eq!(Serial::parse(&text.to_lowercase()).unwrap(), s);
        assert_eq!(Serial::parse(&format!("  {}\n", text.replace('-', ""))).unwrap(), s);
        assert_eq!(text.parse::<Serial>().unwrap(), s);
    }

    #[test]
    fn parse_refuses_shapes_ranges_and_codes() {
        for bad in [
            "",
            "ASC-001-00001-000042",
            "ASC-01-00001-000042-41",
            "ASC-001-00001-000042-811",
            "A-001-00001-000042-41",
            "1SC-001-00001-000042-41",
            "ASC-001-0000X-000042-41",
            "ASC--001-00001-000042-41",
            "ÀSC-001-00001-000042-41",
        ] {
            assert!(Serial::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(matches!(Serial::new(asc(), 0, 1, 1), Err(SerialError::Range { what: "emission", .. })));
        assert!(matches!(Serial::new(asc(), 1, 100_000, 1), Err(SerialError::Range { what: "block", .. })));
        assert!(matches!(Serial::new(asc(), 1, 1, 0), Err(SerialError::Range { what: "position", .. })));
        assert!(Serial::new(asc(), 999, 99_999, 999_999).is_ok());
    }

    /// Every single wrong character and every swap of two neighbouring
    /// characters of a serial is refused, in both written forms, for codes
    /// of letters and of letters and digits.
    #[test]
    fn check_digits_catch_every_single_error_and_every_adjacent_swap() {
        let alphabet: Vec<char> = ('0'..='9').chain('A'..='Z').chain(['-']).collect();
        for code in ["ASC", "B1X2", "ZZ"] {
            let s = Serial::new(GameCode::parse(code).unwrap(), 907, 31_415, 92_653).unwrap();
            for text in [s.to_string(), s.to_string().replace('-', "")] {
                assert_eq!(Serial::parse(&text).unwrap(), s);
                let chars: Vec<char> = text.chars().collect();
                let mut tried = 0;
                for i in 0..chars.len() {
                    for &c in &alphabet {
                        if c == chars[i] {
                            continue;
                        }
                        let mut t = chars.clone();
                        t[i] = c;
                        let t: String = t.into_iter().collect();
                        assert!(Serial::parse(&t).is_err(), "{t} (one character of {text} changed) accepted");
                        tried += 1;
                    }
                    if i + 1 < chars.len() && chars[i] != chars[i + 1] {
                        let mut t = chars.clone();
                        t.swap(i, i + 1);
                        let t: String = t.into_iter().collect();
                        assert!(Serial::parse(&t).is_err(), "{t} (two neighbours of {text} swapped) accepted");
                        tried += 1;
                    }
                }
                assert!(tried > 36 * chars.len(), "the test tried {tried} errors");
            }
        }
    }
}
