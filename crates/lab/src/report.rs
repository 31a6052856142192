//! `as-capone report --db URL [--emission N] [--json]`: the operator's
//! figures of every emission (docs/contract.md, "Operator"), read straight from the
//! database (SQLite read-only, or PostgreSQL): per block, tickets printed,
//! sold, in play, won and lost, prizes won, paid and owed, and the return
//! to player so far beside the table's exact expectation. The same figures
//! as `GET /api/admin/emissions`, computed by the same code.
//!
//! `as-capone report --table FILE --games N --out report.html [--json]
//! [--pdf FILE] [--dieharder FILE]...`: the certification report for a
//! test laboratory instead (`crate::certify`, `docs/certification.md`).
//! Exactly one of `--db` and `--table` is given.

use crate::build_info::build_info;
use crate::prize_table::load_table;
use clap::Args;
use format::{euros_plain, iso8601};
use indicatif::{ProgressBar, ProgressStyle};
use server::{EmissionReport, Figures, report_from};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The database: `sqlite://FILE` (or a path) or `postgres://...`.
    #[arg(long, env = "AS_CAPONE_DB")]
    pub db: Option<String>,
    /// Only this emission (with --db).
    #[arg(long)]
    pub emission: Option<u32>,
    /// One JSON object: with --db `{"emissions": [...]}` as the admin API
    /// answers; with --table the certification report's figures.
    #[arg(long)]
    pub json: bool,
    /// A prize table: write the certification report instead of the operator's figures.
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Tickets played through the engine on each draw stream (with --table).
    #[arg(long, default_value_t = 1_000_000)]
    pub games: u64,
    /// The run's seed (with --table); the same seed gives the same figures.
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Worker threads (with --table); default: one per core. The figures do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Where to write the report (with --table): HTML, or JSON when the name ends in `.json`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also render the HTML report to this PDF file, with Debian's Chromium (headless).
    #[arg(long)]
    pub pdf: Option<PathBuf>,
    /// dieharder output for the appendix (repeatable; the stream's name is the file name up to its first dot).
    #[arg(long)]
    pub dieharder: Vec<PathBuf>,
}

pub fn run(args: ReportArgs) -> anyhow::Result<()> {
    if let Some(table) = &args.table {
        if args.db.is_some() && std::env::var_os("AS_CAPONE_DB").is_none() {
            anyhow::bail!("give either --db (the operator's figures) or --table (the certification report), not both");
        }
        return certification(&args, table.clone());
    }
    let Some(db) = &args.db else {
        anyhow::bail!("give --db URL (the operator's figures) or --table FILE (the certification report)");
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let reports = rt.block_on(report_from(db, args.emission))?;
    if args.json {
        println!("{}", serde_json::json!({ "emissions": reports }));
        return Ok(());
    }
    if reports.is_empty() {
        println!("no emission");
    }
    for r in &reports {
        print!("{}", text(r));
    }
    Ok(())
}

/// `report --table`: builds the certification report and writes it.
fn certification(args: &ReportArgs, table: PathBuf) -> anyhow::Result<()> {
    anyhow::ensure!(args.emission.is_none(), "--emission goes with --db, not with --table");
    anyhow::ensure!(
        args.out.is_some() || args.json,
        "--table writes a report: give --out FILE (HTML, or JSON for a .json name) or --json (JSON on stdout)"
    );
    let threads = match args.threads {
        Some(0) => anyhow::bail!("--threads must be at least 1"),
        Some(t) => t,
        None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    };
    let command =
        std::env::args().map(|a| if a.contains(' ') { format!("{a:?}") } else { a }).collect::<Vec<_>>().join(" ");
    let bytes = std::fs::read(&table).map_err(|e| anyhow::anyhow!("reading {}: {e}", table.display()))?;
    let parsed = load_table(&table)?;
    let dieharder = args.dieharder.iter().map(|f| certify::read_dieharder(f)).collect::<anyhow::Result<Vec<_>>>()?;
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(2 * args.games);
        bar.set_style(
            ProgressStyle::with_template("{msg:24} {bar:40} {percent:>3}% {human_pos}/{human_len} tickets, eta {eta}")
                .expect("a valid template"),
        );
        bar
    });
    let report = certify::build(
        &certify::Options {
            table: parsed,
            table_name: table.display().to_string(),
            table_bytes: bytes,
            tickets: args.games,
            seed: args.seed,
            threads,
            dieharder,
            command,
            build: build_info(),
        },
        &Bar(bar.as_ref()),
    );
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let report = report?;
    let json = serde_json::to_string_pretty(&report)?;
    let html = certify::render_html(&report);
    let is_json = |p: &std::path::Path| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if let Some(out) = &args.out {
        std::fs::write(out, if is_json(out) { json.as_bytes() } else { html.as_bytes() })
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", out.display()))?;
    }
    if let Some(pdf) = &args.pdf {
        // The PDF is the HTML page printed: from --out when it is the page, else from a temporary copy.
        match args.out.as_ref().filter(|o| !is_json(o)) {
            Some(page) => certify::pdf(page, pdf)?,
            None => {
                let tmp = std::env::temp_dir().join(format!("as-capone-report-{}.html", std::process::id()));
                std::fs::write(&tmp, &html)?;
                let r = certify::pdf(&tmp, pdf);
                let _ = std::fs::remove_file(&tmp);
                r?;
            }
        }
    }
    if args.json {
        println!("{json}");
    }
    let failed: Vec<&str> =
        report.checks.iter().filter(|c| c.verdict == certify::Verdict::Fail).map(|c| c.id.as_str()).collect();
    eprintln!(
        "report: {} tickets per stream in {:.1} s, {} checks, overall {}{}{}",
        report.parameters.tickets,
        report.run.seconds,
        report.checks.len(),
        report.verdict.as_str(),
        if failed.is_empty() { String::new() } else { format!(" (failed: {})", failed.join(", ")) },
        args.out.as_ref().map_or(String::new(), |o| format!("; written to {}", o.display()))
    );
    Ok(())
}

/// The certification run's progress on a terminal (none when stderr is not one).
struct Bar<'a>(Option<&'a ProgressBar>);

impl certify::Progress for Bar<'_> {
    fn stage(&self, name: &'static str) {
        if let Some(b) = self.0 {
            b.set_message(name);
        }
    }
    fn tickets(&self, n: u64) {
        if let Some(b) = self.0 {
            b.inc(n);
        }
    }
}

fn row(label: &str, f: &Figures) -> String {
    let euros = |c: i64| euros_plain(c.max(0));
    format!(
        "{label:>7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>14} {:>14} {:>12}\n",
        f.printed,
        f.sold,
        f.in_play,
        f.won,
        f.lost,
        euros(f.prizes_won_cents),
        euros(f.prizes_paid_cents),
        euros(f.prizes_owed_cents)
    )
}

/// One emission as a table.
pub fn text(r: &EmissionReport) -> String {
    let mut out = format!(
        "emission {} ({}, {}), table {}, {} a ticket, blocks of {}\n",
        r.emission,
        r.code,
        r.channel.as_str(),
        r.table_digest,
        euros_plain(r.price_cents.max(0)),
        r.block_size
    );
    if let Some(notice) = &r.notice_ref {
        out += &format!("  official notice (art. 1): {notice}\n");
    }
    if let (Some(end), Some(date)) = (r.sale_end_ms, &r.closing_notice_date) {
        let reference = r.closing_notice_ref.as_deref().map(|x| format!(" ({x})")).unwrap_or_default();
        let until = r.claim_end_ms.map(iso8601).unwrap_or_else(|| "-".into());
        out += &format!(
            "  sale ended {}, closing notice of {date}{reference}, paper prizes paid until {until}\n",
            iso8601(end)
        );
    }
    out += &format!(
        "{:>7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>14} {:>14} {:>12}\n",
        "block", "printed", "sold", "in play", "won", "lost", "prizes won", "prizes paid", "owed"
    );
    for b in &r.blocks {
        out += &row(&b.block.to_string(), &b.figures);
    }
    out += &row("total", &r.totals);
    for b in &r.blocks {
        let published = b.published_ms.map_or("not published".to_string(), |ms| format!("published {}", iso8601(ms)));
        out += &format!("  block {} root {} ({published})\n", b.block, b.root);
    }
    out += &format!(
        "  return to player so far {} ({}), exact expectation {} ({})\n\n",
        r.rtp.so_far_decimal.as_deref().unwrap_or("-"),
        r.rtp.so_far.as_deref().unwrap_or("no finished ticket"),
        r.rtp.expected_decimal,
        r.rtp.expected
    );
    out
}
