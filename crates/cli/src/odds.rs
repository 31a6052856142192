//! `as-capone odds [--table FILE] [--json]`: the exact odds, and with a
//! table its payout figures (docs/contract.md).

use clap::Args;
use format::euros_plain;
use math::fraction::{approx, to_string as frac};
use math::{FinalOutcome, LegalBand, Odds, Payout, PrizeTable};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct OddsArgs {
    /// A prize table (TOML): adds the payout figures.
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Print docs/contract.md's JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: OddsArgs) -> anyhow::Result<()> {
    let odds = Odds::exact();
    let table = args.table.as_deref().map(lab::load_table).transpose()?;
    if let (Some(path), Some(t)) = (&args.table, &table) {
        warn_if_not_regulation(path, t);
    }
    let payout = table.as_ref().map(|t| Payout::compute(t, &odds));
    if args.json {
        let mut v = odds.to_json();
        if let Some(p) = &payout {
            v["table"] = p.to_json();
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", human(&odds, table.as_ref().zip(payout.as_ref())));
    }
    Ok(())
}

/// One `WARNING:` line on stderr per way the table read from `path` departs
/// from art. 2 (a ticket at 300 cents, blocks of 300 000 tickets). The
/// command still runs: such tables serve tests and demos, and only `serve`
/// and the admin API refuse them (unless configured to allow them).
pub fn warn_if_not_regulation(path: &Path, table: &PrizeTable) {
    for d in table.regulation_deviations() {
        eprintln!("WARNING: prize table {} is not a regulation table: {d}", path.display());
    }
}

fn pct(r: &num_rational::BigRational) -> String {
    let x = approx(r) * 100.0;
    if x == 0.0 {
        "0 %".into()
    } else if x < 0.001 {
        format!("{x:.2e} %")
    } else {
        format!("{x:.4} %")
    }
}

/// The odds as a person reads them: exact fraction and a percentage.
pub fn human(odds: &Odds, table: Option<(&PrizeTable, &Payout)>) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "As Capone: exact odds (art. 3.2; rational numbers, percentages rounded for reading)\n");
    let _ = writeln!(w, "One game of eight tricks, ties settled at the deck:");
    let _ = writeln!(w, "  {:<8} {:<28} {:>14}", "tricks", "chance", "");
    for (k, p) in odds.per_round.iter().enumerate() {
        let _ = writeln!(w, "  {:<8} {:<28} {:>14}", k, frac(p), pct(p));
    }
    let _ = writeln!(
        w,
        "  Extra game (4 tricks, then the Extra duel won): {} = {}\n",
        frac(&odds.extra_per_round),
        pct(&odds.extra_per_round)
    );
    let _ = writeln!(w, "The ticket, Extra games included (only the deciding game counts, art. 3.2.5.5):");
    for o in FinalOutcome::ALL {
        let p = odds.final_chance(o);
        let label = match o {
            FinalOutcome::Tricks(t) => format!("{t} tricks"),
            FinalOutcome::Lose => "lost".into(),
        };
        let _ = writeln!(w, "  {:<8} {:<28} {:>14}", label, frac(p), pct(p));
    }
    let win = math::fraction::complement(&odds.lose);
    let _ = writeln!(w, "  {:<8} {:<28} {:>14}", "won", frac(&win), pct(&win));
    let _ = writeln!(
        w,
        "\nDeck duel: a tie again on one draw {} ; won once settled {}. Tied tricks per game on average: {}. Games per ticket on average: {} = {:.6}.",
        frac(&odds.deck_tie),
        frac(&odds.deck_duel_win),
        frac(&odds.expected_ties_per_round),
        frac(&odds.expected_games),
        approx(&odds.expected_games)
    );
    if let Some((t, p)) = table {
        let _ = write!(w, "\n{}", payout_human(t, p));
    }
    s
}

fn payout_human(t: &PrizeTable, p: &Payout) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(
        w,
        "Prize table \"{}\" ({}): {} tickets per block at {}, {} schedules, digest {}",
        t.game,
        t.code,
        t.block_size,
        euros_plain(t.price_cents as i64),
        t.schedules.len(),
        &t.digest()[..16]
    );
    let _ = writeln!(
        w,
        "  expected prize per ticket  {} cents = {}",
        frac(&p.expected_payout_cents),
        format::euros_plain_approx(approx(&p.expected_payout_cents))
    );
    let _ = writeln!(w, "  return to player           {} = {}", frac(&p.rtp), pct(&p.rtp));
    let _ = writeln!(
        w,
        "  hit rate (a prize paid)    {} = {} (1 ticket in {:.2})",
        frac(&p.hit_rate),
        pct(&p.hit_rate),
        1.0 / approx(&p.hit_rate)
    );
    let _ = writeln!(
        w,
        "  standard deviation of the prize per ticket: {} (exact variance {} cents^2)",
        format::euros_plain_approx(p.std_dev_cents()),
        frac(&p.variance_cents2)
    );
    let _ = writeln!(w, "  largest possible prize: {}", euros_plain(p.largest_prize_cents as i64));
    let band = LegalBand::scratch();
    let _ = writeln!(
        w,
        "  legal band applied: {} ({} to {} of stakes returned)",
        band.name,
        pct(&band.low),
        pct(&band.high)
    );
    match band.check(&p.rtp) {
        std::cmp::Ordering::Equal => {
            let _ = writeln!(w, "  return to player is inside the band: OK");
        }
        std::cmp::Ordering::Less => {
            let _ = writeln!(w, "  WARNING: return to player {} is BELOW the legal band", pct(&p.rtp));
        }
        std::cmp::Ordering::Greater => {
            let _ = writeln!(w, "  WARNING: return to player {} is ABOVE the legal band", pct(&p.rtp));
        }
    }
    let _ = writeln!(w, "\n  Chance of each prize (per ticket sold, over a block):");
    for (cents, chance) in &p.prize_chances {
        let _ = writeln!(w, "    {:>14}  {:<26} {}", euros_plain(*cents as i64), frac(chance), pct(chance));
    }
    let _ = writeln!(w, "\n  Expected prizes per block, by schedule row and tricks:");
    let _ = writeln!(w, "    {:<4} {:>8}  {:>12} {:>12} {:>12} {:>12}", "row", "tickets", "5", "6", "7", "8");
    for (i, row) in p.expected_winners_per_block.iter().enumerate() {
        let _ = writeln!(
            w,
            "    {:<4} {:>8}  {:>12.2} {:>12.2} {:>12.2} {:>12.4}",
            i + 1,
            t.schedules[i].tickets,
            approx(&row[0]),
            approx(&row[1]),
            approx(&row[2]),
            approx(&row[3])
        );
    }
    let r = &p.block_risk;
    let _ = writeln!(
        w,
        "\n  A block's risk ({} tickets, {} of sales; {}):",
        t.block_size,
        euros_plain((t.price_cents * u64::from(t.block_size)) as i64),
        r.method
    );
    let _ = writeln!(w, "    expected prizes of a block   {}", format::euros_plain_approx(r.mean_cents));
    let _ = writeln!(w, "    standard deviation           {}", format::euros_plain_approx(r.std_dev_cents));
    let _ = writeln!(w, "    chance prizes exceed sales   {:.3e}", r.p_prizes_exceed_sales);
    let _ = writeln!(w, "    99th percentile of prizes    {}", format::euros_plain_approx(r.p99_cents));
    let _ = writeln!(w, "    99.99th percentile of prizes {}", format::euros_plain_approx(r.p9999_cents));
    s
}
