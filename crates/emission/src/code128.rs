//! Code 128 (ISO/IEC 15417), code set B: the serial printed as a barcode
//! beside the ticket's QR code, so that a shop's ordinary 1D scanner (a
//! keyboard wedge) types the serial into the counter's field
//! (docs/emissions.md, "Print files"). Code set B holds every printable
//! ASCII character, so a serial (capitals, digits and dashes) is encoded
//! as printed, dashes included, which the counter accepts.
//!
//! `encode` gives the symbol values (start, data, check symbol, stop),
//! [`widths`] the element widths in modules (bar first), `svg_bars` the
//! bars as SVG rectangles; [`decode`] reads widths back, the way a scanner
//! does, and is what the tests check the encoding with.
//!
//! **Public as a namespace**, unlike the crate's other modules: its
//! functions carry the symbology's own verbs (`code128::widths`,
//! `code128::decode`), which say what they do only under its name. The
//! tests that read a printed barcode back (this crate's and the shop's
//! browser test) use them.

use std::fmt::Write;

/// The element widths of symbols 0 to 106 (bar, space, bar, space, bar,
/// space; the stop, 106, has a seventh element, its final bar). Every
/// symbol is 11 modules wide (the stop 13), its bars an even number of
/// modules and its spaces an odd one: the unit test checks all three.
const PATTERNS: [&str; 107] = [
    "212222", "222122", "222221", "121223", "121322", "131222", "122213", "122312", "132212", "221213", // 0-9
    "221312", "231212", "112232", "122132", "122231", "113222", "123122", "123221", "223211", "221132", // 10-19
    "221231", "213212", "223112", "312131", "311222", "321122", "321221", "312212", "322112", "322211", // 20-29
    "212123", "212321", "232121", "111323", "131123", "131321", "112313", "132113", "132311", "211313", // 30-39
    "231113", "231311", "112133", "112331", "132131", "113123", "113321", "133121", "313121", "211331", // 40-49
    "231131", "213113", "213311", "213131", "311123", "311321", "331121", "312113", "312311", "332111", // 50-59
    "314111", "221411", "431111", "111224", "111422", "121124", "121421", "141122", "141221", "112214", // 60-69
    "112412", "122114", "122411", "142112", "142211", "241211", "221114", "413111", "241112", "134111", // 70-79
    "111242", "121142", "121241", "114212", "124112", "124211", "411212", "421112", "421211", "212141", // 80-89
    "214121", "412121", "111143", "111341", "131141", "114113", "114311", "411113", "411311", "113141", // 90-99
    "114131", "311141", "411131", "211412", "211214", "211232", "2331112", // 100-106
];

/// Start code B.
const START_B: u8 = 104;
/// Stop.
const STOP: u8 = 106;
/// The quiet zone a scanner needs on each side: 10 modules.
pub(crate) const QUIET_ZONE: u32 = 10;

/// Why a text cannot be encoded, or widths cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Code128Error {
    #[error("code set B holds printable ASCII only, not {0:?}")]
    NotPrintable(char),
    #[error("nothing to encode")]
    Empty,
    #[error("not a Code 128 symbol at element {0}")]
    BadSymbol(usize),
    #[error("the check symbol does not match")]
    BadCheck,
    #[error("no start B or no stop")]
    Frame,
}

/// The symbol values of `text` in code set B: start B, one value per
/// character (its ASCII code - 32), the check symbol (start value plus
/// each value times its position, mod 103), stop.
fn encode(text: &str) -> Result<Vec<u8>, Code128Error> {
    if text.is_empty() {
        return Err(Code128Error::Empty);
    }
    let mut values = vec![START_B];
    for c in text.chars() {
        if !(' '..='~').contains(&c) {
            return Err(Code128Error::NotPrintable(c));
        }
        values.push(c as u8 - 32);
    }
    let check = values.iter().enumerate().map(|(i, v)| u32::from(*v) * (i.max(1) as u32)).sum::<u32>() % 103;
    values.push(check as u8);
    values.push(STOP);
    Ok(values)
}

/// The element widths of `text`'s barcode in modules, bar first, without
/// the quiet zones.
pub fn widths(text: &str) -> Result<Vec<u8>, Code128Error> {
    Ok(encode(text)?.iter().flat_map(|v| PATTERNS[usize::from(*v)].bytes().map(|b| b - b'0')).collect())
}

/// The barcode as SVG `<rect>`s, one per bar, `module` user units wide per
/// module and `height` high, from `x` (the quiet zone is left to the
/// caller), and the barcode's width in modules.
pub(crate) fn svg_bars(text: &str, x: f64, y: f64, module: f64, height: f64) -> Result<(String, u32), Code128Error> {
    let mut s = String::new();
    let mut at = 0u32;
    for (i, w) in widths(text)?.into_iter().enumerate() {
        if i % 2 == 0 {
            let _ = write!(
                s,
                r##"<rect x="{:.3}" y="{y}" width="{:.3}" height="{height}" fill="#000"/>"##,
                x + f64::from(at) * module,
                f64::from(w) * module
            );
        }
        at += u32::from(w);
    }
    Ok((s, at))
}

/// Reads element widths (bar first, quiet zones removed) back to the
/// text, checking the start, the check symbol and the stop, as a scanner
/// does.
pub fn decode(widths: &[u8]) -> Result<String, Code128Error> {
    if widths.len() < 6 * 3 + 7 || !(widths.len() - 7).is_multiple_of(6) {
        return Err(Code128Error::Frame);
    }
    let (body, stop) = widths.split_at(widths.len() - 7);
    if stop.iter().map(|w| (b'0' + w) as char).collect::<String>() != PATTERNS[usize::from(STOP)] {
        return Err(Code128Error::Frame);
    }
    let mut values = Vec::new();
    for (k, chunk) in body.chunks(6).enumerate() {
        let pattern: String = chunk.iter().map(|w| (b'0' + w) as char).collect();
        let v = PATTERNS[..106].iter().position(|p| *p == pattern).ok_or(Code128Error::BadSymbol(k * 6))?;
        values.push(v as u8);
    }
    if values[0] != START_B {
        return Err(Code128Error::Frame);
    }
    let (data, check) = values.split_at(values.len() - 1);
    let sum = data.iter().enumerate().map(|(i, v)| u32::from(*v) * (i.max(1) as u32)).sum::<u32>() % 103;
    if sum != u32::from(check[0]) {
        return Err(Code128Error::BadCheck);
    }
    data[1..].iter().map(|v| if *v < 95 { Ok((v + 32) as char) } else { Err(Code128Error::BadSymbol(0)) }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_symbol_is_eleven_modules_with_even_bars_and_odd_spaces() {
        let mut seen = std::collections::HashSet::new();
        for (v, p) in PATTERNS.iter().enumerate() {
            let w: Vec<u32> = p.bytes().map(|b| u32::from(b - b'0')).collect();
            let total: u32 = w.iter().sum();
            assert_eq!(total, if v == 106 { 13 } else { 11 }, "symbol {v}");
            let bars: u32 = w.iter().step_by(2).take(3).sum();
            let spaces: u32 = w.iter().skip(1).step_by(2).take(3).sum();
            assert!(bars.is_multiple_of(2) && !spaces.is_multiple_of(2), "symbol {v}: bars {bars}, spaces {spaces}");
            assert!(seen.insert(&p[..6]), "symbol {v} is unique");
        }
    }

    /// The check symbol worked by hand for "PJJ123C"
    /// (start B 104; P 48, J 42, J 42, 1 17, 2 18, 3 19, C 35):
    /// 104 + 48·1 + 42·2 + 42·3 + 17·4 + 18·5 + 19·6 + 35·7 = 879 = 8·103 + 55.
    #[test]
    fn the_check_symbol_is_the_weighted_sum_mod_103() {
        assert_eq!(encode("PJJ123C").unwrap(), vec![104, 48, 42, 42, 17, 18, 19, 35, 55, 106]);
        assert_eq!(widths("A").unwrap()[..6], [2, 1, 1, 2, 1, 4], "start B");
        assert_eq!(encode(""), Err(Code128Error::Empty));
        assert_eq!(encode("é"), Err(Code128Error::NotPrintable('é')));
    }

    #[test]
    fn what_is_encoded_decodes_and_any_other_symbol_is_caught() {
        for text in ["ASC0010000100004281", "ASC-001-00001-000042-81", "PAPER6-999-99999-999999-07", "a ~"] {
            let w = widths(text).unwrap();
            assert_eq!(w.len(), 6 * (text.len() + 2) + 7);
            assert_eq!(decode(&w).unwrap(), text);
            // Any one data symbol read as another: the check symbol catches it
            // (weights below 103, a prime: a change of one value never sums to 0 mod 103).
            for k in 1..=text.len() {
                for other in [0usize, 33, 94] {
                    let mut bad = w.clone();
                    let was: String = bad[6 * k..6 * k + 6].iter().map(|d| (b'0' + d) as char).collect();
                    if was == PATTERNS[other] {
                        continue;
                    }
                    for (i, d) in PATTERNS[other].bytes().enumerate() {
                        bad[6 * k + i] = d - b'0';
                    }
                    assert_eq!(decode(&bad), Err(Code128Error::BadCheck), "{text}, symbol {k} read as {other}");
                }
            }
            // A bar one module wider is no symbol at all.
            let mut bad = w.clone();
            bad[6] += 1;
            assert!(decode(&bad).is_err());
        }
    }

    #[test]
    fn the_svg_bars_read_back_to_the_text() {
        let (svg, modules) = svg_bars("ASC0010000100004281", 5.0, 0.0, 1.5, 20.0).unwrap();
        assert_eq!(modules, 11 * 21 + 13);
        let bars: Vec<(f64, f64)> = svg
            .split("<rect ")
            .skip(1)
            .map(|r| {
                let attr = |name: &str| -> f64 {
                    let at = r.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                    r[at..at + r[at..].find('"').unwrap()].parse().unwrap()
                };
                (attr("x"), attr("width"))
            })
            .collect();
        assert_eq!(decode(&read_bars(&bars, 1.5)).unwrap(), "ASC0010000100004281");
    }

    /// Element widths in modules from bars `(x, width)` left to right.
    fn read_bars(bars: &[(f64, f64)], module: f64) -> Vec<u8> {
        let m = |v: f64| (v / module).round() as u8;
        let mut out = Vec::new();
        for (i, (x, w)) in bars.iter().enumerate() {
            if i > 0 {
                let (px, pw) = bars[i - 1];
                out.push(m(x - px - pw));
            }
            out.push(m(*w));
        }
        out
    }
}
