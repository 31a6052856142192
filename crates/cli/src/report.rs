//! `as-capone report --db URL [--emission N] [--json]`: the operator's
//! figures of every emission (CONTRACT.md Operator), read straight from the
//! database (SQLite read-only, or PostgreSQL): per block, tickets printed,
//! sold, in play, won and lost, prizes won, paid and owed, and the return
//! to player so far beside the table's exact expectation. The same figures
//! as `GET /api/admin/emissions`, computed by the same code.

use crate::money;
use clap::Args;
use server::store::{EmissionReport, Figures, iso8601, report_from};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The database: `sqlite://FILE` (or a path) or `postgres://...`.
    #[arg(long, env = "AS_CAPONE_DB")]
    pub db: String,
    /// Only this emission.
    #[arg(long)]
    pub emission: Option<u32>,
    /// One JSON object: `{"emissions": [...]}`, as the admin API answers.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ReportArgs) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let reports = rt.block_on(report_from(&args.db, args.emission))?;
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

fn row(label: &str, f: &Figures) -> String {
    let euros = |c: i64| money(c.max(0) as u64);
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
        money(r.price_cents.max(0) as u64),
        r.block_size
    );
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
