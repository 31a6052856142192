//! `codes`: the parsers of play codes ([`emission::PlayCode::parse`]) and
//! serials ([`emission::Serial::parse`], and the server's
//! [`server::parse_serial`] over it).
//!
//! The first input byte chooses a mode:
//! - even: the rest is text given to every parser. What must hold: nothing
//!   panics; a play code that parses formats back to itself (grouped and
//!   compact) and agrees with an independent reading of Crockford's base32
//!   (case, spaces and dashes ignored, `O` as `0`, `I` and `L` as `1`); a
//!   serial that parses formats back to itself with and without dashes, in
//!   either case, its check digits make the whole number 1 modulo 97
//!   (computed here independently, ISO 7064 MOD 97-10), and the server's
//!   `parse_serial` gives the canonical form exactly when the parser
//!   accepts;
//! - odd: the rest builds a valid serial (a game code, an emission, a block
//!   and a position in range) and a play code, and changes one character
//!   of the printed serial, or swaps two neighbouring ones. The serial's
//!   design (`emission::serial`) says every such typing error is caught:
//!   a serial with a changed character (other than its case) or two
//!   different neighbours swapped never parses, with or without dashes.
//!   Play codes carry no check digit by design (80 random bits: a wrong code
//!   is an unknown code): the changed code must parse to another code, or
//!   to the same one only when the change is a case change or one of
//!   Crockford's look-alikes.

use emission::{GameCode, PlayCode, Serial};

/// Runs the harness; panics when an invariant breaks.
pub(crate) fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode % 2 == 0 {
        let text = String::from_utf8_lossy(rest);
        text_mode(&text);
    } else {
        typo_mode(rest);
    }
}

fn text_mode(s: &str) {
    // Play codes.
    let model = crockford_model(s);
    match PlayCode::parse(s) {
        Ok(c) => {
            assert_eq!(model.as_deref(), Some(c.compact()), "PlayCode::parse({s:?}) and the model disagree");
            assert_eq!(PlayCode::parse(&c.to_string()), Ok(c));
            assert_eq!(PlayCode::parse(c.compact()), Ok(c));
            assert_eq!(PlayCode::parse(&c.compact().to_ascii_lowercase()), Ok(c));
            assert_eq!(PlayCode::from_bits(c.bits()), c);
            assert!(c.bits() < 1 << 80);
            assert_eq!(c.to_string().len(), 19);
            assert!(!format!("{c:?}").contains(c.compact()), "Debug shows the secret");
        }
        Err(e) => {
            assert_eq!(model, None, "PlayCode::parse({s:?}) refuses ({e}) what the model reads");
            assert!(!e.to_string().is_empty());
        }
    }

    // Serials.
    let parsed = Serial::parse(s);
    let server = server::parse_serial(s);
    match &parsed {
        Ok(serial) => {
            let text = serial.to_string();
            assert_eq!(server.as_deref().ok(), Some(text.as_str()), "parse_serial differs from Serial::parse");
            check_serial(serial);
            // The input was the serial in some accepted form.
            let compact: String = s.trim().chars().filter(|&c| c != '-').collect();
            assert_eq!(compact.to_ascii_uppercase(), text.replace('-', ""), "{s:?} parsed as {text}");
        }
        Err(e) => {
            assert!(server.is_err(), "parse_serial accepts {s:?} that Serial::parse refuses ({e})");
            assert!(!e.to_string().is_empty());
        }
    }
    if let Ok(code) = GameCode::parse(s) {
        assert_eq!(code.as_str(), s);
    }
}

/// The properties of a valid serial.
fn check_serial(serial: &Serial) {
    let text = serial.to_string();
    assert_eq!(Serial::parse(&text).as_ref(), Ok(serial), "format then parse");
    assert_eq!(Serial::parse(&text.to_ascii_lowercase()).as_ref(), Ok(serial));
    assert_eq!(Serial::parse(&text.replace('-', "")).as_ref(), Ok(serial));
    assert_eq!(Serial::parse(&format!("  {text}\n")).as_ref(), Ok(serial));
    let json = serde_json::to_string(serial).unwrap();
    assert_eq!(serde_json::from_str::<Serial>(&json).ok().as_ref(), Some(serial));
    let (buf, len) = serial.to_ascii();
    assert_eq!(&buf[..len], text.as_bytes());
    assert!((1..=999).contains(&serial.emission()));
    assert!((1..=99_999).contains(&serial.block()));
    assert!((1..=999_999).contains(&serial.position()));
    // ISO 7064 MOD 97-10, independently: N ‖ check is 1 modulo 97.
    let mut digits = String::new();
    for c in serial.code().as_str().bytes() {
        let v = if c.is_ascii_digit() { c - b'0' } else { c - b'A' + 10 };
        digits += &format!("{v:02}");
    }
    digits += &format!("{:03}{:05}{:06}{:02}", serial.emission(), serial.block(), serial.position(), serial.check());
    let r = digits.bytes().fold(0u32, |r, d| (r * 10 + u32::from(d - b'0')) % 97);
    assert_eq!(r, 1, "check digits of {text}");
    assert!((1..=98).contains(&serial.check()));
    assert!(text.ends_with(&format!("-{:02}", serial.check())));
}

/// Crockford decoding as the module documents it, written independently:
/// the 16 characters, or `None`.
fn crockford_model(s: &str) -> Option<String> {
    let mut out = String::new();
    for ch in s.chars() {
        if ch.is_whitespace() || ch == '-' {
            continue;
        }
        let c = match ch {
            'o' | 'O' => '0',
            'i' | 'I' | 'l' | 'L' => '1',
            c if c.is_ascii_alphanumeric() => c.to_ascii_uppercase(),
            _ => return None,
        };
        if c == 'U' {
            return None;
        }
        out.push(c);
    }
    (out.len() == 16).then_some(out)
}

/// A reader of the rest of the input, giving zeros when it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }
}

const CODE_CHARS: &[u8; 36] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

fn typo_mode(rest: &[u8]) {
    let mut b = Bytes(rest);
    // A valid game code: a letter, then 1 to 5 letters or digits.
    let len = 2 + usize::from(b.byte() % 5);
    let mut code = String::new();
    code.push(char::from(CODE_CHARS[usize::from(b.byte() % 26)]));
    while code.len() < len {
        code.push(char::from(CODE_CHARS[usize::from(b.byte() % 36)]));
    }
    let game = GameCode::parse(&code).expect("a valid game code");
    let serial = Serial::new(game, 1 + b.u32() % 999, 1 + b.u32() % 99_999, 1 + b.u32() % 999_999).expect("in range");
    check_serial(&serial);
    let dashed = serial.to_string();
    let compact = dashed.replace('-', "");

    let what = b.byte();
    let at = usize::from(b.byte());
    let to = b.byte();
    for text in [&dashed, &compact] {
        let bytes = text.as_bytes();
        let i = at % bytes.len();
        let mut typo = bytes.to_vec();
        if what % 2 == 0 {
            // One character changed: to another letter, digit or sign.
            let new = *b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-abcz ./".get(usize::from(to) % 44).unwrap();
            if new.eq_ignore_ascii_case(&bytes[i]) {
                continue;
            }
            // A space at either end is trimmed: that is no typo.
            if new == b' ' && (i == 0 || i == bytes.len() - 1) {
                continue;
            }
            typo[i] = new;
        } else {
            // Two neighbours swapped.
            if i + 1 >= bytes.len() || bytes[i].eq_ignore_ascii_case(&bytes[i + 1]) {
                continue;
            }
            typo.swap(i, i + 1);
        }
        let typo = String::from_utf8(typo).expect("ASCII");
        let parsed = Serial::parse(&typo);
        assert!(parsed.is_err(), "the typo {typo:?} of {text} is accepted as {:?}", parsed.unwrap());
        assert!(server::parse_serial(&typo).is_err());
    }

    // Play codes: no check digit, by design.
    let bits = (u128::from(b.u32()) << 48 | u128::from(b.u32()) << 16 | u128::from(b.u32())) & ((1 << 80) - 1);
    let pc = PlayCode::from_bits(bits);
    let grouped = pc.to_string();
    let i = at % grouped.len();
    let new = to;
    if new.is_ascii() && new != grouped.as_bytes()[i] {
        let mut typo = grouped.as_bytes().to_vec();
        typo[i] = new;
        let typo = String::from_utf8(typo).expect("ASCII");
        if let Ok(other) = PlayCode::parse(&typo) {
            let old = grouped.as_bytes()[i];
            let neutral = old == b'-' && char::from(new).is_whitespace() || (old != b'-' && crockford_same(old, new));
            assert_eq!(other == pc, neutral, "{typo:?} against {grouped}");
        }
    }
}

/// Whether typed `new` reads as the code character `old`.
fn crockford_same(old: u8, new: u8) -> bool {
    let norm = |c: u8| match c.to_ascii_uppercase() {
        b'O' => b'0',
        b'I' | b'L' => b'1',
        c => c,
    };
    norm(new) == old
}
