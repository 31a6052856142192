//! The report as one self-contained HTML page, rendered from [`Report`]
//! alone: inline CSS, inline SVG, no script, nothing fetched.

use crate::analysis::{Distribution, Family, StreamReport, final_labels};
use crate::check::{Verdict, fmt_p};
use crate::report::Report;
use crate::svg::{esc, heatmap, histogram, ratio_chart, rtp_chart};
use format::euros_plain;
use std::fmt::Write as _;

fn verdict(v: Verdict) -> String {
    format!("<span class=\"{}\">{}</span>", v.as_str().to_lowercase(), v.as_str())
}

fn pct(x: f64) -> String {
    if x != 0.0 && x.abs() < 1e-6 { format!("{:.3e} %", 100.0 * x) } else { format!("{:.4} %", 100.0 * x) }
}

const CSS: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;max-width:980px;margin:24px auto;padding:0 16px;color:#1a1a1a;line-height:1.4}
h1{font-size:1.6em;margin-bottom:0}h2{border-bottom:2px solid #1f5fa8;padding-bottom:2px;margin-top:2em}h3{margin-top:1.5em}
table{border-collapse:collapse;margin:8px 0;font-size:.9em}td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef3f9}td.n{text-align:right;font-variant-numeric:tabular-nums}code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em;word-break:break-all}
.pass{color:#fff;background:#2e7d32;padding:1px 6px;border-radius:3px;font-weight:bold}.fail{color:#fff;background:#b3261e;padding:1px 6px;border-radius:3px;font-weight:bold}
.banner{font-size:1.3em;padding:10px 14px;margin:14px 0;border-radius:4px}.banner.ok{background:#e3f1e4;border:2px solid #2e7d32}.banner.bad{background:#fbe4e2;border:2px solid #b3261e}
.note{color:#555;font-size:.9em}svg{max-width:100%;margin:8px 0}
@media print{body{max-width:none;margin:0}h2{break-before:auto}svg,table{break-inside:avoid}}
@page{size:A4;margin:14mm}
";

/// The whole page.
pub fn render(r: &Report) -> String {
    let mut h = String::new();
    let w = &mut h;
    head(w, r);
    subject(w, r);
    verdicts(w, r);
    prize_table(w, r);
    exact_odds(w, r);
    for (i, st) in r.streams.iter().enumerate() {
        stream_section(w, 5 + i, st, r);
    }
    let n = 5 + r.streams.len();
    block_risk(w, r, n);
    method(w, r, n);
    appendix(w, r);
    h.push_str("</body></html>\n");
    h
}

/// The document head, the title and the overall verdict.
fn head(w: &mut String, r: &Report) {
    let _ = write!(
        w,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>As Capone certification report: {}</title><style>{CSS}</style></head><body>",
        esc(&r.table.digest[..16])
    );
    let _ = write!(
        w,
        "<h1>As Capone: certification report</h1><p class=\"note\">{}. Every figure below is also in the JSON \
         report (<code>--json</code>), rendered from the same value.</p>",
        esc(&r.format)
    );
    let ok = r.verdict == Verdict::Pass;
    let failed = r.checks.iter().filter(|c| c.verdict == Verdict::Fail).count();
    let _ = write!(
        w,
        "<div class=\"banner {}\" id=\"overall\">Overall verdict: {} &mdash; {} of {} checks pass</div>",
        if ok { "ok" } else { "bad" },
        verdict(r.verdict),
        r.checks.len() - failed,
        r.checks.len()
    );
}

/// 1. What was tested: the game, its rules, the program and the run.
fn subject(w: &mut String, r: &Report) {
    let s = &r.subject;
    let dirty = match s.git_dirty {
        Some(true) => " (with uncommitted changes to tracked files at build time)",
        Some(false) => " (clean work tree at build time)",
        None => "",
    };
    let _ = write!(
        w,
        "<h2>1. What was tested</h2><table>\
         <tr><th>Game</th><td>{}</td></tr>\
         <tr><th>Rules</th><td>{}</td></tr>\
         <tr><th>Rules files (SHA-256, at build time)</th><td class=\"mono\">{}</td></tr>\
         <tr><th>Program</th><td>as-capone {}</td></tr>\
         <tr><th>Source (git commit at build time)</th><td class=\"mono\">{}{}</td></tr>\
         <tr><th>Executable (SHA-256 of the file that wrote this report)</th><td class=\"mono\">{}</td></tr>\
         <tr><th>Command</th><td class=\"mono\">{}</td></tr>\
         <tr><th>Tickets per stream</th><td>{} (seed {}; checkpoints every {} tickets)</td></tr>\
         <tr><th>Run</th><td>{} threads, {:.1} s (the figures do not depend on the number of threads)</td></tr>\
         </table>",
        esc(&s.game),
        esc(&s.rules),
        if s.rules_files.is_empty() {
            "not found at build time".into()
        } else {
            s.rules_files.iter().map(|x| esc(x)).collect::<Vec<_>>().join("<br>")
        },
        esc(&s.version),
        esc(&s.git_commit),
        dirty,
        esc(&s.binary_sha256),
        esc(&s.command),
        r.parameters.tickets,
        r.parameters.seed,
        r.parameters.checkpoint_step,
        r.run.threads,
        r.run.seconds
    );
}

/// 2. Every check and its verdict.
fn verdicts(w: &mut String, r: &Report) {
    let p = &r.parameters;
    let _ = write!(
        w,
        "<h2>2. Verdicts</h2><p>A statistical check passes when its p-value is at least {}; an exact check when \
         the exact figure holds. {} checks are statistical: with fair draws, the chance that at least one of \
         them fails by bad luck is at most {} &times; {} = {:.3} (Bonferroni). A family of tests inside a check \
         (one per number of cards left, one per draw number) is judged on its smallest p-value multiplied by \
         its size.</p><table id=\"checks\"><tr><th>Check</th><th>Rule</th><th>Statistic</th><th>p-value</th><th>Verdict</th></tr>",
        p.threshold, p.statistical_checks, p.statistical_checks, p.threshold, p.family_wise_false_alarm_bound
    );
    for c in &r.checks {
        let _ = write!(
            w,
            "<tr id=\"check-{}\"><td>{}<br><span class=\"note mono\">{}</span></td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&c.id),
            esc(&c.title),
            esc(&c.id),
            esc(&c.rule),
            esc(&c.statistic),
            c.p_value.map_or("exact".into(), fmt_p),
            verdict(c.verdict)
        );
    }
    w.push_str("</table>");
}

/// 3. The prize table, its digests and its canonical form.
fn prize_table(w: &mut String, r: &Report) {
    let t = &r.table;
    let _ = write!(
        w,
        "<h2>3. The prize table</h2><table><tr><th>File</th><td class=\"mono\">{}</td></tr>\
         <tr><th>SHA-256 of the file</th><td class=\"mono\">{}</td></tr>\
         <tr><th>Table digest (SHA-256 of its canonical form)</th><td class=\"mono\" id=\"table-digest\">{}</td></tr>\
         <tr><th>Game, code</th><td>{} ({})</td></tr><tr><th>Price, block</th><td>{} a ticket, blocks of {} tickets (art. 2)</td></tr>\
         <tr><th>Departures from art. 2</th><td>{}</td></tr></table>\
         <table><tr><th>Row</th><th>Tickets per block</th><th>5 tricks</th><th>6 tricks</th><th>7 tricks</th><th>8 tricks</th></tr>",
        esc(&t.file),
        esc(&t.file_sha256),
        esc(&t.digest),
        esc(&t.game),
        esc(&t.code),
        euros_plain(t.price_cents as i64),
        t.block_size,
        if t.regulation_deviations.is_empty() { "none".into() } else { esc(&t.regulation_deviations.join("; ")) }
    );
    for (i, row) in t.rows.iter().enumerate() {
        let _ = write!(w, "<tr><td>{}</td><td class=\"n\">{}</td>", i + 1, row.tickets);
        for c in row.prizes_cents {
            let _ = write!(w, "<td class=\"n\">{}</td>", euros_plain(c as i64));
        }
        w.push_str("</tr>");
    }
    let _ = write!(
        w,
        "</table><details><summary>Canonical form (what the digest hashes)</summary><pre>{}</pre></details>",
        esc(&t.canonical)
    );
}

/// 4. The exact odds and payout.
fn exact_odds(w: &mut String, r: &Report) {
    let e = &r.exact;
    w.push_str(
        "<h2>4. Exact odds and payout</h2><p class=\"note\">Rational numbers computed by enumeration (As Capone's \
         8! orders, the deck's 16 &times; 15 ordered pairs, geometric series for repeated ties and Extra games); \
         the percentages are rounded for reading.</p><table><tr><th>Tricks in one game</th><th>Exact chance</th><th>&asymp;</th></tr>",
    );
    for (k, f) in e.per_round.iter().enumerate() {
        let _ = write!(
            w,
            "<tr><td>{k}</td><td class=\"mono\">{}</td><td class=\"n\">{}</td></tr>",
            f.fraction,
            pct(f.value)
        );
    }
    let _ = write!(
        w,
        "<tr><td>Extra game (4 tricks, Extra duel won)</td><td class=\"mono\">{}</td><td class=\"n\">{}</td></tr></table>\
         <table><tr><th>Ticket outcome (art. 3.2.5.5)</th><th>Exact chance</th><th>&asymp;</th></tr>",
        e.extra_per_round.fraction,
        pct(e.extra_per_round.value)
    );
    for (label, f) in final_labels().iter().zip(&e.final_outcome) {
        let _ = write!(
            w,
            "<tr><td>{label}</td><td class=\"mono\">{}</td><td class=\"n\">{}</td></tr>",
            f.fraction,
            pct(f.value)
        );
    }
    let _ = write!(
        w,
        "</table><table>\
         <tr><th>Games per ticket, on average</th><td class=\"mono\">{}</td><td class=\"n\">{:.6}</td></tr>\
         <tr><th>A deck draw ties again</th><td class=\"mono\">{}</td><td class=\"n\">{}</td></tr>\
         <tr><th>A deck duel is won</th><td class=\"mono\">{}</td><td class=\"n\">{}</td></tr>\
         <tr><th>Expected prize per ticket (cents)</th><td class=\"mono\">{}</td><td class=\"n\">{:.4}</td></tr>\
         <tr><th>Return to player</th><td class=\"mono\" id=\"exact-rtp\">{}</td><td class=\"n\">{}</td></tr>\
         <tr><th>Hit rate (a prize paid)</th><td class=\"mono\">{}</td><td class=\"n\">{}</td></tr>\
         <tr><th>Variance of the prize (cents&sup2;)</th><td class=\"mono\">{}</td><td class=\"n\">sd {:.2} €</td></tr>\
         <tr><th>Largest prize</th><td colspan=\"2\">{}</td></tr>\
         <tr><th>Legal band</th><td colspan=\"2\">{}: {} ({} to {})</td></tr></table>\
         <table><tr><th>Prize</th><th>Exact chance per ticket</th><th>&asymp;</th></tr>",
        e.expected_games.fraction,
        e.expected_games.value,
        e.deck_tie.fraction,
        pct(e.deck_tie.value),
        e.deck_duel_win.fraction,
        pct(e.deck_duel_win.value),
        e.expected_payout_cents.fraction,
        e.expected_payout_cents.value,
        e.rtp.fraction,
        pct(e.rtp.value),
        e.hit_rate.fraction,
        pct(e.hit_rate.value),
        e.variance_cents2.fraction,
        e.std_dev_cents / 100.0,
        euros_plain(e.largest_prize_cents as i64),
        esc(&e.legal_band.name),
        if e.legal_band.inside { "inside" } else { "OUTSIDE" },
        pct(e.legal_band.low.value),
        pct(e.legal_band.high.value)
    );
    for pc in &e.prize_chances {
        let _ = write!(
            w,
            "<tr><td class=\"n\">{}</td><td class=\"mono\">{}</td><td class=\"n\">{:.3e}</td></tr>",
            euros_plain(pc.prize_cents as i64),
            pc.chance.fraction,
            pc.chance.value
        );
    }
    w.push_str("</table>");
}

/// Section `n`: the distribution of one block's total prizes.
fn block_risk(w: &mut String, r: &Report, n: usize) {
    let b = &r.block_risk;
    let markers = vec![
        (format!("mean {}", euros_plain(b.mean_cents.round() as i64)), b.mean_cents),
        (format!("99th percentile {}", euros_plain(b.p99_cents.round() as i64)), b.p99_cents),
        (format!("99.99th percentile {}", euros_plain(b.p9999_cents.round() as i64)), b.p9999_cents),
        (format!("sales {}", euros_plain(b.sales_cents as i64)), b.sales_cents as f64),
    ];
    let _ = write!(
        w,
        "<h2>{n}. A block's risk</h2><p>The total prizes of one block of {} tickets, whose sales are {}: its \
         distribution ({}), from the math crate (<code>math::payout</code>), as <code>as-capone odds --table</code> \
         prints it.</p><table>\
         <tr><th>Expected prizes of a block</th><td class=\"n\">{}</td></tr>\
         <tr><th>Standard deviation</th><td class=\"n\">{}</td></tr>\
         <tr><th>Chance that a block's prizes exceed its sales</th><td class=\"n\">{:.3e}</td></tr>\
         <tr><th>99th percentile</th><td class=\"n\">{}</td></tr><tr><th>99.99th percentile</th><td class=\"n\">{}</td></tr></table>{}",
        r.table.block_size,
        euros_plain(b.sales_cents as i64),
        esc(&b.method),
        euros_plain(b.mean_cents.round() as i64),
        euros_plain(b.std_dev_cents.round() as i64),
        b.p_prizes_exceed_sales,
        euros_plain(b.p99_cents.round() as i64),
        euros_plain(b.p9999_cents.round() as i64),
        histogram("Distribution of one block's total prizes", &b.histogram, &markers)
    );
}

/// Section `n`: how the figures are computed.
fn method(w: &mut String, r: &Report, n: usize) {
    let _ = write!(
        w,
        "<h2>{}. Method</h2><ul>\
         <li>Tickets are played through the engine's <code>Game::apply</code>, the code the server runs, the player \
         taking their weakest card first (the order cannot change the odds: the tests show it). Each ticket's \
         schedule is drawn from the table with chance tickets / block size. Every draw passes through a recording \
         adapter on its way from the source to the game.</li>\
         <li>Tests of counts against exact chances: categories expected fewer than {} times are pooled with a \
         neighbour; Pearson's chi-square and the G-test, with the chi-square distribution's p-value.</li>\
         <li>Intervals of a count: Poisson quantiles when fewer than 100 are expected, the normal approximation \
         above. The return to player's band is the exact value &plusmn; z &times; sd / &radic;n with the exact \
         standard deviation of one ticket's prize; its check is two-sided at 99.9 %. Prizes are heavy-tailed: a \
         top prize in a short run can leave the band although nothing is wrong, so run enough tickets (a million \
         or more).</li>\
         <li>Draws: As Capone's card is <code>below(m)</code> with m his cards left (uniform over 0..m); a deck draw \
         is <code>below(16)</code> then <code>below(15)</code>. Serial correlation standardizes each draw to mean 0 \
         and variance 1 and tests the lag-1 products' sum (variance = number of pairs); the runs test classes \
         each draw high or low (the middle of an odd m left out) and counts changes, Binomial(n&minus;1, 1/2).</li>\
         <li>All thresholds and their reasons: <code>docs/certification.md</code>.</li></ul>",
        n + 1,
        r.parameters.min_expected
    );
}

/// The dieharder appendix.
fn appendix(w: &mut String, r: &Report) {
    let _ = write!(
        w,
        "<h2>Appendix: dieharder</h2><p>The raw 32-bit streams, tested with dieharder's whole battery: \
         <code>{}</code></p>",
        esc(&r.dieharder.command)
    );
    if r.dieharder.runs.is_empty() {
        w.push_str(
            "<p id=\"dieharder-none\">No dieharder output was given to this report. Produce it with the command \
             above (Debian package <code>dieharder</code>; about 1 GiB of each stream) and pass each file with \
             <code>--dieharder FILE</code>.</p>",
        );
    }
    for d in &r.dieharder.runs {
        let _ = write!(
            w,
            "<h3>Stream {}</h3><p class=\"note mono\">{} &mdash; {}</p><table><tr><th>PASSED</th><th>WEAK</th><th>FAILED</th></tr>\
             <tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr></table>",
            esc(&d.name),
            esc(&d.file),
            esc(&d.header.join("; ")),
            d.passed,
            d.weak,
            d.failed
        );
        if !d.not_passed.is_empty() {
            w.push_str("<table><tr><th>Test</th><th>ntup</th><th>tsamples</th><th>psamples</th><th>p-value</th><th>Assessment</th></tr>");
            for l in &d.not_passed {
                let _ = write!(
                    w,
                    "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.8}</td><td>{}</td></tr>",
                    esc(&l.test),
                    l.ntup,
                    l.tsamples,
                    l.psamples,
                    l.p_value,
                    esc(&l.assessment)
                );
            }
            w.push_str(
                "</table><p class=\"note\">dieharder calls a p-value WEAK outside 0.005..0.995 and FAILED outside \
                        0.000001..0.999999; out of about 114 results a few WEAK are expected by chance: re-run them \
                        with another seed.</p>",
            );
        }
    }
}

fn dist_table(w: &mut String, title: &str, d: &Distribution) {
    let _ = write!(
        w,
        "<table><tr><th>{}</th><th>Exact chance</th><th>Expected</th><th>Observed</th><th>95 % interval</th><th>99 % interval</th></tr>",
        esc(title)
    );
    for c in &d.categories {
        let _ = write!(
            w,
            "<tr><td>{}</td><td class=\"mono\">{}</td><td class=\"n\">{:.2}</td><td class=\"n\">{}</td><td class=\"n\">{:.0} &ndash; {:.0}</td><td class=\"n\">{:.0} &ndash; {:.0}</td></tr>",
            esc(&c.label),
            c.chance.fraction,
            c.expected,
            c.observed,
            c.interval95[0],
            c.interval95[1],
            c.interval99[0],
            c.interval99[1]
        );
    }
    let _ = write!(
        w,
        "</table><p>Pooled as {}: chi-square {:.3} (p = {}), G {:.3} (p = {}), {} degrees of freedom.</p>",
        esc(&d.pooled.join(", ")),
        d.chi_square,
        fmt_p(d.chi_square_p_value),
        d.g,
        fmt_p(d.g_p_value),
        d.degrees_of_freedom
    );
}

fn family_table(w: &mut String, f: &Family) {
    w.push_str("<table><tr><th>Draws</th><th>Count</th><th>Chi-square</th><th>df</th><th>p-value</th></tr>");
    for t in &f.tests {
        let _ = write!(
            w,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.3}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&t.label),
            t.draws,
            t.chi_square,
            t.degrees_of_freedom,
            fmt_p(t.p_value)
        );
    }
    let _ = write!(
        w,
        "</table><p>Smallest p-value &times; {} (Bonferroni): {}.</p>",
        f.tests.len(),
        fmt_p(f.p_value_bonferroni)
    );
}

fn stream_section(w: &mut String, n: usize, s: &StreamReport, r: &Report) {
    let _ = write!(
        w,
        "<h2 id=\"stream-{}\">{n}. {}: {} tickets through the engine</h2><p class=\"note\">{}</p>\
         <p>{} tickets, {} games (Extra games included: {:.5} per ticket).</p>",
        esc(&s.id),
        esc(&s.name),
        s.tickets,
        esc(&s.description),
        s.tickets,
        s.games,
        s.games as f64 / s.tickets.max(1) as f64
    );
    let _ = write!(w, "<h3>{n}.1 Outcomes against the exact odds</h3>");
    w.push_str(&ratio_chart(
        &format!("{}: tricks per game, observed / expected", s.name),
        &s.tricks_per_game.categories,
    ));
    dist_table(w, "Tricks in a game", &s.tricks_per_game);
    w.push_str(&ratio_chart(&format!("{}: ticket outcome, observed / expected", s.name), &s.final_outcome.categories));
    dist_table(w, "Ticket outcome", &s.final_outcome);
    w.push_str(
        "<p class=\"note\">Charts: dark bar, 95 % interval of the count; light bar, 99 %; dot, the observed count \
         (red when outside its 95 % interval, which one category in twenty does by chance).</p>",
    );
    let _ = write!(
        w,
        "<h3>{n}.2 Return to player as tickets accumulate</h3><p>Observed {} against exact {} ({}); prizes paid {}; \
         z = {:.3}, p = {}.</p>",
        pct(s.rtp.observed),
        pct(s.rtp.expected.value),
        s.rtp.expected.fraction,
        euros_plain(i64::try_from(s.rtp.prizes_cents).unwrap_or(i64::MAX)),
        s.rtp.z,
        fmt_p(s.rtp.p_value)
    );
    w.push_str(&rtp_chart(
        &format!("{}: running return to player (checkpoints every {} tickets)", s.name, r.parameters.checkpoint_step),
        &s.rtp,
    ));

    let _ = write!(w, "<h3>{n}.3 The draws</h3><h4>As Capone's card by cards left (art. 3.2.2)</h4>");
    let rows: Vec<String> = s.capone_by_cards_left.tests.iter().map(|t| t.label.clone()).collect();
    let cols: Vec<String> = (0..8).map(|i| i.to_string()).collect();
    let z: Vec<Vec<Option<f64>>> = s
        .capone_by_cards_left
        .tests
        .iter()
        .map(|t| {
            let e = t.draws as f64 / t.counts.len().max(1) as f64;
            (0..8).map(|i| t.counts.get(i).map(|&c| (c as f64 - e) / e.max(1e-300).sqrt())).collect()
        })
        .collect();
    w.push_str(&heatmap(
        &format!("{}: index drawn among As Capone's cards left (0: his lowest) by cards left", s.name),
        &rows,
        &cols,
        &z,
    ));
    family_table(w, &s.capone_by_cards_left);
    w.push_str("<h4>As Capone's card by draw number within the ticket</h4><p class=\"note\">For each draw number, the \
                chi-square statistics of the cells (draw number, cards left) with at least 5 draws expected per index are summed.</p>");
    family_table(w, &s.capone_by_draw_number);
    let _ = write!(w, "<h4>Deck draws (art. 3.2.4.2): {} draws, 240 ordered pairs</h4>", s.deck.draws);
    let e = s.deck.draws as f64 / 240.0;
    let rows: Vec<String> = (0..16).map(|a| format!("first {a}")).collect();
    let cols: Vec<String> = (0..15).map(|b| b.to_string()).collect();
    let z: Vec<Vec<Option<f64>>> = s
        .deck
        .counts
        .iter()
        .map(|row| row.iter().map(|&c| Some((c as f64 - e) / e.max(1e-300).sqrt())).collect())
        .collect();
    w.push_str(&heatmap(
        &format!("{}: deck draws, first card (of 16) by second (of the 15 others)", s.name),
        &rows,
        &cols,
        &z,
    ));
    let _ = write!(
        w,
        "<p>Chi-square {:.3} with {} degrees of freedom, p = {}.</p>\
         <h4>Independence</h4><table><tr><th>Serial correlation, lag 1</th><td>r = {:.6} over {} pairs, z = {:.3}, p = {}</td></tr>\
         <tr><th>Runs of high and low draws</th><td>{} runs in {} draws (expected {:.1}), z = {:.3}, p = {}</td></tr></table>",
        s.deck.chi_square,
        s.deck.degrees_of_freedom,
        fmt_p(s.deck.p_value),
        s.serial.coefficient,
        s.serial.pairs,
        s.serial.z,
        fmt_p(s.serial.p_value),
        s.runs.runs,
        s.runs.draws,
        s.runs.expected_runs,
        s.runs.z,
        fmt_p(s.runs.p_value)
    );
}
