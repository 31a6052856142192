//! From the counts of a run ([`Acc`]) to the report's figures and checks.
//! Floats only for statistics of observed counts; every exact figure is a
//! fraction computed by the math crate.

use crate::check::{Check, THRESHOLD, Verdict, fmt_p};
use crate::frac::Frac;
use crate::run::{Acc, DRAW_BUCKETS};
use math::fraction::approx;
use math::{
    FinalOutcome, Odds, Payout, bonferroni, chi_square, chi_square_p_value, count_interval, g_test, normal_quantile,
    normal_two_sided_p, pool_small_categories,
};
use serde::{Deserialize, Serialize};

/// Categories with an expected count under this are pooled with a neighbour.
pub const MIN_EXPECTED: f64 = 5.0;

/// Observed counts of one distribution against its exact chances.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Distribution {
    pub trials: u64,
    pub categories: Vec<Category>,
    /// The categories as pooled for the tests (labels joined by "+").
    pub pooled: Vec<String>,
    pub degrees_of_freedom: u32,
    pub chi_square: f64,
    pub chi_square_p_value: f64,
    pub g: f64,
    pub g_p_value: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Category {
    pub label: String,
    pub chance: Frac,
    pub expected: f64,
    pub observed: u64,
    /// Central intervals of the count under the exact chance (`math::count_interval`).
    pub interval95: [f64; 2],
    pub interval99: [f64; 2],
}

/// `pool_order`: the order in which neighbours are pooled (a rare category
/// joins the next one in this order; a rare tail joins the last group).
fn distribution(labels: &[String], chances: &[Frac], observed: &[u64], pool_order: &[usize]) -> Distribution {
    let trials: u64 = observed.iter().sum();
    let probs: Vec<f64> = chances.iter().map(|c| c.value).collect();
    let categories = labels
        .iter()
        .zip(chances)
        .zip(observed)
        .map(|((label, chance), &o)| {
            let (a, b) = count_interval(trials, chance.value, 0.95);
            let (c, d) = count_interval(trials, chance.value, 0.99);
            Category {
                label: label.clone(),
                chance: chance.clone(),
                expected: trials as f64 * chance.value,
                observed: o,
                interval95: [a, b],
                interval99: [c, d],
            }
        })
        .collect();
    let ordered: Vec<u64> = pool_order.iter().map(|&i| observed[i]).collect();
    let ordered_probs: Vec<f64> = pool_order.iter().map(|&i| probs[i]).collect();
    let (counts, pooled_probs, groups) = pool_small_categories(&ordered, &ordered_probs, MIN_EXPECTED);
    let groups: Vec<Vec<usize>> = groups.iter().map(|g| g.iter().map(|&k| pool_order[k]).collect()).collect();
    let (x, df) = chi_square(&counts, &pooled_probs);
    let (g, _) = g_test(&counts, &pooled_probs);
    Distribution {
        trials,
        categories,
        pooled: groups.iter().map(|g| g.iter().map(|&i| labels[i].as_str()).collect::<Vec<_>>().join("+")).collect(),
        degrees_of_freedom: df,
        chi_square: x,
        chi_square_p_value: chi_square_p_value(x, df),
        g,
        g_p_value: chi_square_p_value(g, df),
    }
}

/// The running return to player against its band.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RtpReport {
    pub expected: Frac,
    /// Standard deviation of one ticket's prize over its price (exact variance, as a float).
    pub std_dev_per_ticket: f64,
    /// `(tickets so far, observed return to player)` at each checkpoint.
    pub points: Vec<[f64; 2]>,
    pub prizes_cents: u128,
    pub observed: f64,
    pub z: f64,
    pub p_value: f64,
}

/// A family of chi-square tests of uniformity, judged on its smallest
/// p-value corrected for the family's size (Bonferroni).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Family {
    pub tests: Vec<SubTest>,
    pub p_value_bonferroni: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SubTest {
    pub label: String,
    pub draws: u64,
    /// Counts of each index drawn (for the tests by cards left).
    pub counts: Vec<u64>,
    pub chi_square: f64,
    pub degrees_of_freedom: u32,
    pub p_value: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DeckReport {
    pub draws: u64,
    /// `counts[a][b]`: first card `a` of 16, second `b` of the 15 others (raw index).
    pub counts: Vec<Vec<u64>>,
    pub chi_square: f64,
    pub degrees_of_freedom: u32,
    pub p_value: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SerialReport {
    pub pairs: u64,
    /// Lag-1 correlation of consecutive standardized draws.
    pub coefficient: f64,
    pub z: f64,
    pub p_value: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunsReport {
    pub draws: u64,
    pub runs: u64,
    pub expected_runs: f64,
    pub z: f64,
    pub p_value: f64,
}

/// Everything about one draw stream's run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StreamReport {
    pub id: String,
    pub name: String,
    pub description: String,
    pub tickets: u64,
    pub games: u64,
    pub tricks_per_game: Distribution,
    pub final_outcome: Distribution,
    pub rtp: RtpReport,
    pub capone_by_cards_left: Family,
    pub capone_by_draw_number: Family,
    pub deck: DeckReport,
    pub serial: SerialReport,
    pub runs: RunsReport,
}

fn uniformity(label: String, counts: &[u64]) -> SubTest {
    let m = counts.len();
    let probs = vec![1.0 / m as f64; m];
    let (x, df) = chi_square(counts, &probs);
    SubTest {
        label,
        draws: counts.iter().sum(),
        counts: counts.to_vec(),
        chi_square: x,
        degrees_of_freedom: df,
        p_value: chi_square_p_value(x, df),
    }
}

pub fn final_labels() -> Vec<String> {
    FinalOutcome::ALL
        .iter()
        .map(|o| match o {
            FinalOutcome::Tricks(t) => format!("{t} tricks"),
            FinalOutcome::Lose => "lost".into(),
        })
        .collect()
}

/// The figures of a stream's run.
pub fn stream_report(
    id: &str,
    name: &str,
    description: &str,
    acc: &Acc,
    odds: &Odds,
    payout: &Payout,
    step: u64,
) -> StreamReport {
    let round_labels: Vec<String> = (0..9).map(|k| k.to_string()).collect();
    let round_chances: Vec<Frac> = odds.per_round.iter().map(Frac::of).collect();
    let final_chances: Vec<Frac> = odds.final_chances().iter().map(Frac::of).collect();

    // The return to player as tickets accumulate.
    let price = payout.price_cents as f64;
    let expected = approx(&payout.rtp);
    let sd = approx(&payout.variance_cents2).sqrt() / price;
    let mut points = Vec::new();
    let mut sum = 0u128;
    for (s, seg) in acc.segments.iter().enumerate() {
        sum += seg;
        let n = ((s as u64 + 1) * step).min(acc.tickets);
        points.push([n as f64, sum as f64 / (n as f64 * price)]);
    }
    let observed = acc.prize_cents as f64 / (acc.tickets as f64 * price);
    let z = (observed - expected) / (sd / (acc.tickets as f64).sqrt());

    // art. 3.2.2: As Capone's card, uniform among the m cards he has left.
    let by_cards_left: Vec<SubTest> =
        (2..=8).rev().map(|m| uniformity(format!("{m} cards left"), &acc.capone[m][..m])).collect();
    // The same by draw number n within the ticket: the cells (n, m) with at
    // least MIN_EXPECTED draws expected per index, their statistics summed.
    let mut by_draw = Vec::new();
    for (b, cells) in acc.capone_by_draw.iter().enumerate() {
        let (mut x, mut df, mut draws) = (0.0, 0u32, 0u64);
        for (m, cell) in cells.iter().enumerate().skip(2) {
            let total: u64 = cell[..m].iter().sum();
            if (total as f64) < MIN_EXPECTED * m as f64 {
                continue;
            }
            let t = uniformity(String::new(), &cell[..m]);
            x += t.chi_square;
            df += t.degrees_of_freedom;
            draws += total;
        }
        if df == 0 {
            continue;
        }
        let label = if b == DRAW_BUCKETS - 1 { format!("draw {b}+") } else { format!("draw {b}") };
        by_draw.push(SubTest {
            label,
            draws,
            counts: Vec::new(),
            chi_square: x,
            degrees_of_freedom: df,
            p_value: chi_square_p_value(x, df),
        });
    }

    // art. 3.2.4.2: a deck draw is two different cards of the 16, every
    // ordered pair equally likely: the first of 16, the second of 15.
    let flat: Vec<u64> = acc.deck.iter().flatten().copied().collect();
    let deck = uniformity("deck".into(), &flat);

    // Serial correlation at lag 1: z = a / sqrt((m^2 - 1) / 3) standardizes a
    // draw of m outcomes; under independence sum z_i z_(i+1) has mean 0 and
    // variance equal to the number of pairs.
    let var = |m: usize| ((m * m - 1) as f64 / 3.0).sqrt();
    let mut s = 0.0;
    for (pm, row) in acc.serial.iter().enumerate() {
        for (nm, &v) in row.iter().enumerate() {
            if v != 0 {
                s += v as f64 / (var(pm) * var(nm));
            }
        }
    }
    let pairs = acc.serial_pairs.max(1) as f64;
    let serial_z = s / pairs.sqrt();

    // Runs of high and low draws: each classed draw is high or low with
    // chance 1/2 whatever came before, so the changes between consecutive
    // classed draws are Binomial(n - 1, 1/2).
    let n = acc.runs_draws;
    let flips = n.saturating_sub(1) as f64;
    let runs_z = (acc.runs_changes as f64 - flips / 2.0) / (flips / 4.0).max(1e-300).sqrt();

    StreamReport {
        id: id.into(),
        name: name.into(),
        description: description.into(),
        tickets: acc.tickets,
        games: acc.games,
        tricks_per_game: distribution(&round_labels, &round_chances, &acc.per_round, &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
        // Pooled in the order lost, 5, 6, 7, 8 tricks: a rare 8 joins 7, its neighbour.
        final_outcome: distribution(&final_labels(), &final_chances, &acc.finals, &[4, 0, 1, 2, 3]),
        rtp: RtpReport {
            expected: Frac::of(&payout.rtp),
            std_dev_per_ticket: sd,
            points,
            prizes_cents: acc.prize_cents,
            observed,
            z,
            p_value: normal_two_sided_p(z),
        },
        capone_by_cards_left: Family {
            p_value_bonferroni: bonferroni(&p_values(&by_cards_left)),
            tests: by_cards_left,
        },
        capone_by_draw_number: Family { p_value_bonferroni: bonferroni(&p_values(&by_draw)), tests: by_draw },
        deck: DeckReport {
            draws: deck.draws,
            counts: acc.deck.iter().map(|r| r.to_vec()).collect(),
            chi_square: deck.chi_square,
            degrees_of_freedom: deck.degrees_of_freedom,
            p_value: deck.p_value,
        },
        serial: SerialReport {
            pairs: acc.serial_pairs,
            coefficient: s / pairs,
            z: serial_z,
            p_value: normal_two_sided_p(serial_z),
        },
        runs: RunsReport {
            draws: n,
            runs: if n == 0 { 0 } else { acc.runs_changes + 1 },
            expected_runs: 1.0 + flips / 2.0,
            z: runs_z,
            p_value: normal_two_sided_p(runs_z),
        },
    }
}

fn p_values(tests: &[SubTest]) -> Vec<f64> {
    tests.iter().map(|t| t.p_value).collect()
}

fn verdict(p: f64) -> Verdict {
    if p >= THRESHOLD { Verdict::Pass } else { Verdict::Fail }
}

fn check(s: &StreamReport, id: &str, title: &str, rule: &str, statistic: String, p: f64) -> Check {
    Check {
        id: format!("{}.{id}", s.id),
        stream: Some(s.id.clone()),
        title: format!("{}: {title}", s.name),
        rule: rule.into(),
        statistic,
        p_value: Some(p),
        verdict: verdict(p),
    }
}

/// The checks of one stream, each with its p-value and verdict.
pub fn stream_checks(s: &StreamReport) -> Vec<Check> {
    let d = &s.tricks_per_game;
    let f = &s.final_outcome;
    let q999 = normal_quantile(0.999);
    vec![
        check(
            s,
            "tricks_per_game.chi_square",
            "tricks per game (0 to 8) against the exact odds, chi-square",
            "art. 3.2.2 to 3.2.4",
            format!("chi-square {:.3}, {} degrees of freedom, {} games", d.chi_square, d.degrees_of_freedom, d.trials),
            d.chi_square_p_value,
        ),
        check(
            s,
            "tricks_per_game.g_test",
            "tricks per game (0 to 8) against the exact odds, G-test",
            "art. 3.2.2 to 3.2.4",
            format!("G {:.3}, {} degrees of freedom", d.g, d.degrees_of_freedom),
            d.g_p_value,
        ),
        check(
            s,
            "final_outcome.chi_square",
            "ticket outcome {5, 6, 7, 8 tricks, lost} against the exact odds, chi-square",
            "art. 3.2.3.3 to 3.2.5.5",
            format!(
                "chi-square {:.3}, {} degrees of freedom, {} tickets",
                f.chi_square, f.degrees_of_freedom, f.trials
            ),
            f.chi_square_p_value,
        ),
        check(
            s,
            "final_outcome.g_test",
            "ticket outcome {5, 6, 7, 8 tricks, lost} against the exact odds, G-test",
            "art. 3.2.3.3 to 3.2.5.5",
            format!("G {:.3}, {} degrees of freedom", f.g, f.degrees_of_freedom),
            f.g_p_value,
        ),
        check(
            s,
            "rtp",
            "return to player inside its 99.9 % band",
            "art. 3.1",
            format!(
                "observed {:.4} %, exact {:.4} %, band +-{:.4} %, z = {:.3}",
                100.0 * s.rtp.observed,
                100.0 * s.rtp.expected.value,
                100.0 * q999 * s.rtp.std_dev_per_ticket / (s.tickets as f64).sqrt(),
                s.rtp.z
            ),
            s.rtp.p_value,
        ),
        check(
            s,
            "capone.cards_left",
            "As Capone's card uniform among the cards he has left (8 to 2), per number left",
            "art. 3.2.2",
            format!(
                "{} chi-square tests, smallest p-value {}, Bonferroni-corrected",
                s.capone_by_cards_left.tests.len(),
                fmt_p(min_p(&s.capone_by_cards_left.tests))
            ),
            s.capone_by_cards_left.p_value_bonferroni,
        ),
        check(
            s,
            "capone.draw_number",
            "As Capone's card uniform at each draw number of the ticket",
            "art. 3.2.2",
            format!(
                "{} chi-square tests (one per draw number), smallest p-value {}, Bonferroni-corrected",
                s.capone_by_draw_number.tests.len(),
                fmt_p(min_p(&s.capone_by_draw_number.tests))
            ),
            s.capone_by_draw_number.p_value_bonferroni,
        ),
        check(
            s,
            "deck.pairs",
            "deck draws: the 240 ordered pairs of two different cards of 16 equally likely",
            "art. 3.2.4.2, 3.2.5.2",
            format!(
                "chi-square {:.3}, {} degrees of freedom, {} deck draws",
                s.deck.chi_square, s.deck.degrees_of_freedom, s.deck.draws
            ),
            s.deck.p_value,
        ),
        check(
            s,
            "serial",
            "no serial correlation between consecutive draws (lag 1)",
            "art. 3.2.2, 3.2.4.2 (independent draws)",
            format!("r = {:.6} over {} pairs, z = {:.3}", s.serial.coefficient, s.serial.pairs, s.serial.z),
            s.serial.p_value,
        ),
        check(
            s,
            "runs",
            "runs of high and low draws",
            "art. 3.2.2, 3.2.4.2 (independent draws)",
            format!(
                "{} runs in {} draws, expected {:.1}, z = {:.3}",
                s.runs.runs, s.runs.draws, s.runs.expected_runs, s.runs.z
            ),
            s.runs.p_value,
        ),
    ]
}

fn min_p(tests: &[SubTest]) -> f64 {
    tests.iter().map(|t| t.p_value).fold(1.0, f64::min)
}
