//! Print files: one SVG page per paper ticket (`as-capone emit --print K`).
//!
//! A page shows, in French as the tickets are sold in France: the game's
//! name and price, the serial (visible, for the retailer), and a "zone à
//! gratter" holding what the scratch coating hides: the prize schedule
//! (art. 3.1), the play code, and a QR code that opens
//! `BASE_URL/play?code=PLAYCODE` (`docs/contract.md`, Retail tickets). The QR code
//! is drawn by the `qrcode` crate's SVG renderer. Under the zone, outside the
//! coating (the shop scans it before the sale), a Code 128 barcode of the
//! serial ([`crate::code128`], the serial without its dashes, which the
//! shops' endpoints accept as typed) for the counter's 1D scanner.

use crate::block::TicketRecord;
use format::euros_short_unsigned;
use math::PrizeTable;
use qrcode::render::svg;
use qrcode::{EcLevel, QrCode};
use std::fmt::Write;

/// The page size in SVG user units (the page is 80 mm × 150 mm).
const W: u32 = 320;
const H: u32 = 600;
/// Side of the QR code's square, quiet zone included.
const QR_SIDE: u32 = 150;
/// The serial's barcode: its top, its height, and the widest module (user
/// units: 4 to the millimetre, so at most 0.3 mm, and 6 mm high).
const BAR_Y: u32 = 558;
const BAR_H: u32 = 24;
const BAR_MODULE_MAX: f64 = 1.2;

/// What the serial's barcode encodes: the serial without its dashes.
fn barcode_text(ticket: &TicketRecord) -> String {
    ticket.serial.to_string().replace('-', "")
}

/// The address a ticket's QR code opens.
pub fn play_url(base_url: &str, ticket: &TicketRecord) -> String {
    format!("{}/play?code={}", base_url.trim_end_matches('/'), ticket.play_code)
}

/// Escapes text for SVG content and attributes.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// The SVG page of one ticket.
pub fn ticket_svg(table: &PrizeTable, ticket: &TicketRecord, base_url: &str) -> String {
    let url = play_url(base_url, ticket);
    let qr = QrCode::with_error_correction_level(url.as_bytes(), EcLevel::M).expect("a short URL fits in a QR code");
    let modules = qr.width() as u32 + 8; // with the 4-module quiet zone on each side
    let qr_svg = qr.render::<svg::Color>().quiet_zone(true).module_dimensions(1, 1).build();
    // Drop the XML declaration: the QR code becomes an element of our page.
    let qr_svg = qr_svg.split_once("?>").map_or(qr_svg.as_str(), |(_, rest)| rest);
    let scale = f64::from(QR_SIDE) / f64::from(modules);
    // The serial's barcode, centred, with its quiet zones inside the page's 8-unit margins.
    let text = barcode_text(ticket);
    let total =
        crate::code128::widths(&text).expect("a serial is printable ASCII").iter().map(|w| u32::from(*w)).sum::<u32>()
            + 2 * crate::code128::QUIET_ZONE;
    let module = BAR_MODULE_MAX.min(f64::from(W - 16) / f64::from(total));
    let x0 = (f64::from(W) - f64::from(total) * module) / 2.0 + f64::from(crate::code128::QUIET_ZONE) * module;
    let (bars, _) = crate::code128::svg_bars(&text, x0, f64::from(BAR_Y), module, f64::from(BAR_H))
        .expect("a serial is printable ASCII");

    let mut s = String::new();
    let _ = write!(
        s,
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="80mm" height="150mm" viewBox="0 0 {W} {H}" font-family="DejaVu Sans, Arial, sans-serif">
<rect width="{W}" height="{H}" fill="#fdf6e3" stroke="#222" stroke-width="2"/>
<rect x="0" y="0" width="{W}" height="70" fill="#1d1d1b"/>
<text x="{cx}" y="38" font-size="28" font-weight="bold" fill="#f2c14e" text-anchor="middle">{game}</text>
<text x="{cx}" y="60" font-size="14" fill="#fff" text-anchor="middle">Illiko Live · prix du ticket {price}</text>
<text x="{cx}" y="92" font-size="12" fill="#222" text-anchor="middle" font-family="DejaVu Sans Mono, monospace">N° {serial}</text>
<rect x="16" y="104" width="{zw}" height="450" rx="10" fill="#c9c9c9" stroke="#777" stroke-width="2" stroke-dasharray="6 4"/>
<text x="{cx}" y="124" font-size="12" fill="#444" text-anchor="middle">ZONE À GRATTER</text>
<text x="{cx}" y="150" font-size="13" fill="#222" text-anchor="middle">Votre lot selon les plis gagnés</text>
"##,
        cx = W / 2,
        game = esc(&table.game),
        price = euros_short_unsigned(table.price_cents),
        serial = ticket.serial,
        zw = W - 32,
    );
    for (i, tricks) in (5..=8u8).enumerate() {
        let y = 180 + 26 * i as u32;
        let prize = ticket.prizes.for_tricks(tricks);
        let amount = if prize == 0 { "—".to_string() } else { euros_short_unsigned(prize) };
        let _ = writeln!(
            s,
            r##"<text x="60" y="{y}" font-size="17" fill="#222">{tricks} plis</text><text x="260" y="{y}" font-size="17" font-weight="bold" fill="#222" text-anchor="end">{amount}</text>"##
        );
    }
    let _ = write!(
        s,
        r##"<line x1="40" y1="278" x2="{x2}" y2="278" stroke="#777"/>
<text x="{cx}" y="302" font-size="12" fill="#444" text-anchor="middle">Code de jeu</text>
<text x="{cx}" y="328" font-size="20" font-weight="bold" fill="#000" text-anchor="middle" font-family="DejaVu Sans Mono, monospace">{code}</text>
<g transform="translate({qx} 346) scale({scale:.6})">{qr_svg}</g>
<text x="{cx}" y="516" font-size="11" fill="#222" text-anchor="middle">Scannez ou tapez le code pour jouer le duel</text>
<text x="{cx}" y="534" font-size="10" fill="#222" text-anchor="middle">{url}</text>
<g id="serial-barcode" shape-rendering="crispEdges" data-module="{module:.6}"><rect x="{qzx:.3}" y="{BAR_Y}" width="{qzw:.3}" height="{BAR_H}" fill="#fff"/>{bars}</g>
<text x="{cx}" y="593" font-size="9" fill="#555" text-anchor="middle">Un seul lot par partie (art. 3.1). Jeu interdit aux mineurs.</text>
</svg>
"##,
        cx = W / 2,
        x2 = W - 40,
        code = ticket.play_code,
        qx = (W - QR_SIDE) / 2,
        url = esc(&url),
        qzx = (f64::from(W) - f64::from(total) * module) / 2.0,
        qzw = f64::from(total) * module,
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A printed ticket's amounts (the format crate's short style).
    #[test]
    fn euros_in_french_style() {
        let euros = euros_short_unsigned;
        assert_eq!(euros(300), "3\u{a0}€");
        assert_eq!(euros(250), "2,50\u{a0}€");
        assert_eq!(euros(5), "0,05\u{a0}€");
        assert_eq!(euros(1_000_000), "10\u{a0}000\u{a0}€");
        assert_eq!(euros(25_000_000), "250\u{a0}000\u{a0}€");
        assert_eq!(euros(12_345_678_900), "123\u{a0}456\u{a0}789\u{a0}€");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc(r#"<a & "b">"#), "&lt;a &amp; &quot;b&quot;&gt;");
    }
}
