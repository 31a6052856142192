//! The report's charts, drawn by hand as inline SVG (no script, no font or
//! file to fetch): observed against expected with intervals, the running
//! return to player in its band, heat maps of draw counts, a block's prizes.
//! Inline SVG in HTML needs no namespace attribute, so the page holds no URL at all.

use crate::analysis::{Category, RtpReport};
use crate::report::Histogram;
use math::normal_quantile;
use std::fmt::Write as _;

const W: f64 = 720.0;
const BLUE: &str = "#1f5fa8";
const LIGHT: &str = "#cfe0f3";
const MID: &str = "#8fb5e0";
const RED: &str = "#b3261e";

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn open(h: f64, label: &str) -> String {
    format!(
        "<svg viewBox=\"0 0 {W} {h}\" width=\"100%\" role=\"img\" \
         aria-label=\"{}\" font-family=\"sans-serif\" font-size=\"11\">",
        esc(label)
    )
}

/// Observed / expected for each category, with the 95 % (dark) and 99 %
/// (light) intervals of the count under the exact odds, on a scale of 0 to 2
/// (an interval or a point beyond 2 is drawn at the edge, with an arrow).
pub fn ratio_chart(title: &str, cats: &[Category]) -> String {
    let h = 260.0;
    let (left, right, top, bottom) = (50.0, 10.0, 24.0, 40.0);
    let plot_h = h - top - bottom;
    let y = |r: f64| top + plot_h * (1.0 - (r / 2.0).clamp(0.0, 1.0));
    let slot = (W - left - right) / cats.len().max(1) as f64;
    let mut s = open(h, title);
    let _ = write!(s, "<text x=\"{left}\" y=\"14\" font-weight=\"bold\">{}</text>", esc(title));
    for r in [0.0, 0.5, 1.0, 1.5, 2.0] {
        let _ = write!(
            s,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{}\" stroke-width=\"{}\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{r:.1}</text>",
            W - right,
            if r == 1.0 { "#444" } else { "#ddd" },
            if r == 1.0 { 1.2 } else { 0.6 },
            left - 4.0,
            y(r) + 4.0,
            y = y(r)
        );
    }
    let _ = write!(
        s,
        "<text transform=\"translate(12 {:.1}) rotate(-90)\" text-anchor=\"middle\">observed / expected</text>",
        top + plot_h / 2.0
    );
    for (i, c) in cats.iter().enumerate() {
        let cx = left + slot * (i as f64 + 0.5);
        let e = c.expected.max(1e-300);
        let bw = (slot * 0.5).min(40.0);
        for (iv, color) in [(c.interval99, LIGHT), (c.interval95, MID)] {
            let (a, b) = (y(iv[1] / e), y(iv[0] / e));
            let _ = write!(
                s,
                "<rect x=\"{:.1}\" y=\"{a:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" fill=\"{color}\"/>",
                cx - bw / 2.0,
                (b - a).max(1.0)
            );
            if iv[1] / e > 2.0 {
                let _ = write!(s, "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">&#8593;</text>", top - 2.0);
            }
        }
        let r = c.observed as f64 / e;
        let inside95 = (c.observed as f64) >= c.interval95[0] && (c.observed as f64) <= c.interval95[1];
        let _ = write!(
            s,
            "<circle cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{}\"><title>{}: observed {}, expected {:.2}</title></circle>",
            y(r),
            if inside95 { BLUE } else { RED },
            esc(&c.label),
            c.observed,
            c.expected
        );
        let _ = write!(
            s,
            "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
             <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">E {}</text>",
            h - bottom + 14.0,
            esc(&c.label),
            h - bottom + 28.0,
            short(c.expected)
        );
    }
    s + "</svg>"
}

fn short(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else if x >= 10.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// The running return to player at each checkpoint, the exact value, and
/// its 95 % and 99 % bands (exact value +- z sd / sqrt(n)), tickets on a
/// logarithmic scale (the band narrows as 1 / sqrt(n)).
pub fn rtp_chart(title: &str, rtp: &RtpReport) -> String {
    let h = 300.0;
    let (left, right, top, bottom) = (60.0, 24.0, 24.0, 36.0);
    let pts = &rtp.points;
    let n_max = pts.last().map_or(1.0, |p| p[0]).max(1.0);
    let n_min = pts.first().map_or(1.0, |p| p[0]).max(1.0);
    let e = rtp.expected.value;
    let half = |n: f64, level: f64| normal_quantile(level) * rtp.std_dev_per_ticket / n.sqrt();
    let span = (1.3 * half(n_min, 0.99)).max(1e-6);
    let (lo, hi) = (e - span, e + span);
    let (l0, l1) = (n_min.log10(), n_max.log10().max(n_min.log10() + 1e-9));
    let x = |n: f64| left + (W - left - right) * (n.max(n_min).log10() - l0) / (l1 - l0);
    let y = |r: f64| top + (h - top - bottom) * (1.0 - ((r - lo) / (hi - lo)).clamp(0.0, 1.0));
    let mut s = open(h, title);
    let _ = write!(s, "<text x=\"{left}\" y=\"14\" font-weight=\"bold\">{}</text>", esc(title));
    for (level, color) in [(0.99, LIGHT), (0.95, MID)] {
        let mut upper = String::new();
        let mut lower = Vec::new();
        for p in pts {
            let _ = write!(upper, "{:.1},{:.1} ", x(p[0]), y(e + half(p[0], level)));
            lower.push(format!("{:.1},{:.1}", x(p[0]), y(e - half(p[0], level))));
        }
        lower.reverse();
        let _ = write!(s, "<polygon points=\"{upper}{}\" fill=\"{color}\" stroke=\"none\"/>", lower.join(" "));
    }
    let _ = write!(
        s,
        "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#444\" stroke-dasharray=\"4 3\"/>",
        W - right,
        y = y(e)
    );
    let line: Vec<String> = pts.iter().map(|p| format!("{:.1},{:.1}", x(p[0]), y(p[1]))).collect();
    let _ = write!(s, "<polyline points=\"{}\" fill=\"none\" stroke=\"{RED}\" stroke-width=\"1.6\"/>", line.join(" "));
    for k in 0..=4 {
        let r = lo + (hi - lo) * f64::from(k) / 4.0;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{:.2} %</text>",
            left - 4.0,
            y(r) + 4.0,
            100.0 * r
        );
    }
    // Ticks: the first and last checkpoints and the powers of ten between.
    let mut ticks = vec![n_min];
    let mut p = 10f64.powf(l0.floor() + 1.0);
    while p < n_max * 0.999 {
        if x(p) - x(n_min) > 40.0 && x(n_max) - x(p) > 40.0 {
            ticks.push(p);
        }
        p *= 10.0;
    }
    ticks.push(n_max);
    for (i, n) in ticks.iter().enumerate() {
        let anchor = if i == 0 {
            "start"
        } else if i == ticks.len() - 1 {
            "end"
        } else {
            "middle"
        };
        let _ = write!(
            s,
            "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{}\" y2=\"{}\" stroke=\"#999\"/>\
             <text x=\"{xx:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
            h - bottom,
            h - bottom + 4.0,
            h - bottom + 14.0,
            short(*n),
            xx = x(*n)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">tickets played (logarithmic scale)</text>\
         <rect x=\"{}\" y=\"30\" width=\"12\" height=\"8\" fill=\"{MID}\"/><text x=\"{}\" y=\"38\">95 % band</text>\
         <rect x=\"{}\" y=\"44\" width=\"12\" height=\"8\" fill=\"{LIGHT}\"/><text x=\"{}\" y=\"52\">99 % band</text>\
         <line x1=\"{}\" x2=\"{}\" y1=\"62\" y2=\"62\" stroke=\"{RED}\" stroke-width=\"1.6\"/><text x=\"{}\" y=\"66\">observed</text>",
        left + (W - left - right) / 2.0,
        h - 6.0,
        W - 130.0,
        W - 114.0,
        W - 130.0,
        W - 114.0,
        W - 130.0,
        W - 118.0,
        W - 114.0
    );
    s + "</svg>"
}

/// A grid of cells coloured by a standardized deviation `z` (blue below,
/// red above expectation, saturated at |z| = 4), with the value written in.
pub fn heatmap(title: &str, rows: &[String], cols: &[String], z: &[Vec<Option<f64>>]) -> String {
    let cell_w = ((W - 90.0) / cols.len().max(1) as f64).min(48.0);
    let cell_h = 20.0;
    let (left, top) = (90.0, 40.0);
    let h = top + cell_h * rows.len() as f64 + 30.0;
    let mut s = open(h, title);
    let _ = write!(s, "<text x=\"0\" y=\"14\" font-weight=\"bold\">{}</text>", esc(title));
    for (j, c) in cols.iter().enumerate() {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            left + cell_w * (j as f64 + 0.5),
            top - 6.0,
            esc(c)
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let yy = top + cell_h * i as f64;
        let _ = write!(s, "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>", left - 6.0, yy + 14.0, esc(r));
        for (j, v) in z[i].iter().enumerate() {
            let xx = left + cell_w * j as f64;
            let Some(v) = v else { continue };
            let t = (v.abs() / 4.0).min(1.0);
            let (r0, g0, b0) = if *v >= 0.0 { (179.0, 38.0, 30.0) } else { (31.0, 95.0, 168.0) };
            let mix = |c: f64| (255.0 + (c - 255.0) * t).round() as u8;
            let _ = write!(
                s,
                "<rect x=\"{xx:.1}\" y=\"{yy:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"rgb({},{},{})\" stroke=\"#fff\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"9\">{v:+.1}</text>",
                cell_w,
                cell_h,
                mix(r0),
                mix(g0),
                mix(b0),
                xx + cell_w / 2.0,
                yy + 13.0
            );
        }
    }
    let _ = write!(
        s,
        "<text x=\"{left}\" y=\"{:.1}\" fill=\"#555\">cell: (observed - expected) / sqrt(expected); \
         blue below, red above; saturated at 4</text>",
        h - 8.0
    );
    s + "</svg>"
}

/// A block's total prizes: the probability of each bin, with vertical markers.
pub fn histogram(title: &str, hist: &Histogram, markers: &[(String, f64)]) -> String {
    let h = 280.0;
    let (left, right, top, bottom) = (50.0, 10.0, 24.0, 40.0);
    let n = hist.probabilities.len().max(1);
    let max = hist.probabilities.iter().copied().fold(0.0, f64::max).max(1e-300);
    let end = hist.start_cents + hist.bin_cents * n as f64;
    let x = |c: f64| left + (W - left - right) * ((c - hist.start_cents) / (end - hist.start_cents)).clamp(0.0, 1.0);
    let bar_w = (W - left - right) / n as f64;
    let plot_h = h - top - bottom;
    let mut s = open(h, title);
    let _ = write!(s, "<text x=\"{left}\" y=\"14\" font-weight=\"bold\">{}</text>", esc(title));
    for (i, p) in hist.probabilities.iter().enumerate() {
        let bh = plot_h * p / max;
        let _ = write!(
            s,
            "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"{BLUE}\"/>",
            left + bar_w * i as f64,
            top + plot_h - bh,
            bar_w.max(0.5),
            bh
        );
    }
    for (k, (label, c)) in markers.iter().enumerate() {
        let off = c > &end;
        let xx = x(*c);
        if !off {
            let _ = write!(
                s,
                "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{top}\" y2=\"{:.1}\" stroke=\"{RED}\" stroke-dasharray=\"3 2\"/>",
                top + plot_h
            );
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"{RED}\">{}{}</text>",
            xx - 3.0,
            top + 12.0 + 13.0 * k as f64,
            esc(label),
            if off { " (off the chart, right) &#8594;" } else { "" }
        );
    }
    for k in 0..=4 {
        let c = hist.start_cents + (end - hist.start_cents) * f64::from(k) / 4.0;
        let anchor = match k {
            0 => "start",
            4 => "end",
            _ => "middle",
        };
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{:.0} k€</text>",
            x(c),
            h - bottom + 14.0,
            c / 100.0 / 1000.0
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">prizes of one block (bins of {:.0} €)</text>",
        left + (W - left - right) / 2.0,
        h - 6.0,
        hist.bin_cents / 100.0
    );
    s + "</svg>"
}
