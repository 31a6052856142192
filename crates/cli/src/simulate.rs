//! `as-capone simulate --games N [--seed S] [--threads T] [--table FILE] [--json]`:
//! Monte Carlo tickets through the real engine, checked against the exact
//! odds with a chi-square goodness-of-fit test.

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use math::fraction::approx;
use math::{FinalOutcome, Odds, Payout, SimConfig, chi_square, chi_square_p_value, simulate};
use serde_json::json;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// Tickets to simulate.
    #[arg(long)]
    pub games: u64,
    /// Seed (an unsigned 64-bit integer); random when absent, and printed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads; default: one per core. The counts do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// A prize table: adds the simulated payout and return to player.
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Print docs/contract.md's JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: SimulateArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.games > 0, "--games must be at least 1");
    let threads = match args.threads {
        Some(0) => anyhow::bail!("--threads must be at least 1"),
        Some(t) => t,
        None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    };
    let seed = args.seed.unwrap_or_else(|| {
        use rand_core::{OsRng, TryRngCore};
        OsRng.try_next_u64().expect("the OS random generator answers")
    });
    let table = args.table.as_deref().map(lab::load_table).transpose()?;
    let odds = Odds::exact();

    let bar = (!args.json && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(args.games);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:40} {percent:>3}% {human_pos}/{human_len} tickets, {per_sec}, eta {eta}",
            )
            .expect("a valid template"),
        );
        bar
    });
    let progress = |done: u64| {
        if let Some(b) = &bar {
            b.set_position(done);
        }
    };
    let (counts, elapsed) = simulate(&SimConfig { games: args.games, seed, threads }, &progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let seconds = elapsed.as_secs_f64();
    let probs: Vec<f64> = odds.final_chances().iter().map(approx).collect();
    let (chi2, df) = chi_square(&counts.outcomes, &probs);
    let p_value = chi_square_p_value(chi2, df);
    let games_per_s = args.games as f64 / seconds.max(1e-9);

    let payout = table.as_ref().map(|t| {
        let exact = Payout::compute(t, &odds);
        // The mean prize of an outcome over the block's schedules.
        let total: f64 = FinalOutcome::ALL
            .iter()
            .filter_map(|o| match o {
                FinalOutcome::Tricks(k) => Some((*k, counts.count(*o))),
                FinalOutcome::Lose => None,
            })
            .map(|(k, n)| {
                let mean_prize: f64 =
                    t.schedules.iter().map(|r| f64::from(r.tickets) * r.prizes.for_tricks(k) as f64).sum::<f64>()
                        / f64::from(t.block_size);
                n as f64 * mean_prize
            })
            .sum();
        let mean = total / args.games as f64;
        (mean, mean / t.price_cents as f64, approx(&exact.rtp))
    });

    if args.json {
        let mut v = json!({
            "games": args.games,
            "seconds": seconds,
            "games_per_s": games_per_s,
            "counts": FinalOutcome::ALL.iter().map(|o| (o.key(), json!(counts.count(*o)))).collect::<serde_json::Map<_, _>>(),
            "chi_square": chi2,
            "p_value": p_value,
            "seed": seed,
            "threads": threads,
            "degrees_of_freedom": df,
            "games_played_per_ticket": counts.rounds as f64 / args.games as f64,
        });
        if let Some((mean, rtp, exact_rtp)) = payout {
            v["table"] = json!({"mean_payout_cents": mean, "rtp": rtp, "exact_rtp": exact_rtp});
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "Simulated {} tickets in {:.2} s ({:.1} million tickets/s, {} threads, seed {})",
        args.games,
        seconds,
        games_per_s / 1e6,
        threads,
        seed
    );
    println!("  {:<8} {:>14} {:>12} {:>12}", "outcome", "count", "observed", "exact");
    for (o, p) in FinalOutcome::ALL.iter().zip(&probs) {
        let n = counts.count(*o);
        let label = match o {
            FinalOutcome::Tricks(t) => format!("{t} tricks"),
            FinalOutcome::Lose => "lost".into(),
        };
        println!("  {:<8} {:>14} {:>11.5}% {:>11.5}%", label, n, 100.0 * n as f64 / args.games as f64, 100.0 * p);
    }
    println!(
        "  games per ticket (Extra games included): {:.5}, exact {:.5}",
        counts.rounds as f64 / args.games as f64,
        approx(&odds.expected_games)
    );
    let verdict = if p_value < 0.001 {
        "WARNING: the counts do not fit the exact odds"
    } else {
        "consistent with the exact odds"
    };
    println!("  chi-square {chi2:.3} with {df} degrees of freedom, p-value {p_value:.4}: {verdict}");
    if let Some((mean, rtp, exact_rtp)) = payout {
        println!(
            "  payout per ticket {:.2} cents, return to player {:.4} % (exact {:.4} %)",
            mean,
            rtp * 100.0,
            exact_rtp * 100.0
        );
    }
    Ok(())
}
