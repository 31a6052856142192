//! Payout figures of a prize table, exact: expected prize per ticket, return
//! to player, hit rate, variance, the chance of each prize, expected winners
//! per block; and a block's risk for the operator.
//!
//! A ticket's outcome does not depend on its schedule (the schedule is only
//! read at the end, art. 3.2.3.3), so over a block the prize of a ticket is
//! `schedule row r` (chance `tickets_r / block_size`) and `final outcome k`
//! (chance [`Odds::final_chance`]), independently.
//!
//! ## A block's risk: the approximation, stated
//! A block's total prize `S` is the sum of its tickets' independent prizes:
//! row `r` contributes `n_r` independent copies of one discrete variable.
//! We compute the distribution of `S` on a lattice of `w` cents (`w` is the
//! greatest common divisor of the prizes, so the lattice is exact, unless
//! the support would need more than 2^21 points; then `w` grows and prizes are
//! rounded *up* to it, which can only overstate the risk) by multiplying the
//! rows' characteristic functions raised to their counts and inverting with
//! an FFT. The lattice covers the mean plus 40 standard deviations plus
//! twice the largest prize; what lies beyond would wrap around and is
//! negligible there. Floating-point noise is about 1e-13 in probability:
//! smaller figures are reported as that bound. The tests compare it with an
//! exact rational convolution on small tables.

use crate::fraction::{approx, int, ratio};
use crate::odds::{FinalOutcome, Odds};
use crate::table::PrizeTable;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::Zero;
use rustfft::FftPlanner;
use rustfft::num_complex::Complex64;
use serde_json::{Value, json};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Exact payout figures of a table.
#[derive(Clone, Debug)]
pub struct Payout {
    pub price_cents: u64,
    /// Expected prize of one ticket, in cents.
    pub expected_payout_cents: BigRational,
    /// Return to player: expected prize / price.
    pub rtp: BigRational,
    /// Chance that a ticket pays anything.
    pub hit_rate: BigRational,
    /// Variance of one ticket's prize, in cents squared.
    pub variance_cents2: BigRational,
    /// The largest prize the table can pay.
    pub largest_prize_cents: u64,
    /// Every positive prize amount and the chance a ticket pays exactly it.
    pub prize_chances: Vec<(u64, BigRational)>,
    /// Per schedule row: expected winning tickets per block for 5, 6, 7, 8 tricks.
    pub expected_winners_per_block: Vec<[BigRational; 4]>,
    /// The operator's risk of one block.
    pub block_risk: BlockRisk,
}

/// Distribution figures of one block's total prizes (see the module doc for the method).
#[derive(Clone, Debug, PartialEq)]
pub struct BlockRisk {
    pub method: String,
    pub lattice_cents: u64,
    pub mean_cents: f64,
    pub std_dev_cents: f64,
    /// Chance that a block's prizes exceed its sales (`block_size * price`).
    pub p_prizes_exceed_sales: f64,
    pub p99_cents: f64,
    pub p9999_cents: f64,
}

/// A legal band of return to player.
#[derive(Clone, Debug)]
pub struct LegalBand {
    pub name: &'static str,
    pub low: BigRational,
    pub high: BigRational,
}

impl LegalBand {
    /// The band we apply to As Capone: French instant ("scratch") games
    /// return between 62 % and 75 % of stakes to players.
    pub fn scratch() -> LegalBand {
        LegalBand {
            name: "French instant games (jeux de grattage), 62 % to 75 %",
            low: ratio(62, 100),
            high: ratio(75, 100),
        }
    }

    /// `Less` below the band, `Greater` above, `Equal` inside (bounds included).
    pub fn check(&self, rtp: &BigRational) -> Ordering {
        if rtp < &self.low {
            Ordering::Less
        } else if rtp > &self.high {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }
}

impl Payout {
    /// The figures of `table` under `odds`.
    pub fn compute(table: &PrizeTable, odds: &Odds) -> Payout {
        let n = u64::from(table.block_size);
        let finals = odds.final_chances();
        let mut expected = BigRational::zero();
        let mut second_moment = BigRational::zero();
        let mut by_amount: BTreeMap<u64, BigRational> = BTreeMap::new();
        let mut winners = Vec::new();
        for row in &table.schedules {
            let w_row = ratio(row.tickets, n);
            let mut per_row: [BigRational; 4] = std::array::from_fn(|_| BigRational::zero());
            for o in FinalOutcome::ALL {
                let FinalOutcome::Tricks(t) = o else { continue };
                let prize = row.prizes.for_tricks(t);
                let p = &w_row * &finals[o.index()];
                per_row[(t - 5) as usize] = int(row.tickets) * &finals[o.index()];
                if prize > 0 {
                    expected += &p * int(prize);
                    second_moment += &p * int(prize) * int(prize);
                    *by_amount.entry(prize).or_insert_with(BigRational::zero) += p;
                }
            }
            winners.push(per_row);
        }
        let hit_rate: BigRational = by_amount.values().sum();
        let variance = &second_moment - &expected * &expected;
        let largest = table.schedules.iter().map(|r| r.prizes.largest()).max().unwrap_or(0);
        Payout {
            price_cents: table.price_cents,
            rtp: &expected / int(table.price_cents),
            expected_payout_cents: expected,
            hit_rate,
            variance_cents2: variance,
            largest_prize_cents: largest,
            prize_chances: by_amount.into_iter().collect(),
            expected_winners_per_block: winners,
            block_risk: block_risk(table, odds),
        }
    }

    /// Standard deviation of one ticket's prize, in cents (for reading).
    pub fn std_dev_cents(&self) -> f64 {
        approx(&self.variance_cents2).sqrt()
    }

    /// CONTRACT.md's `table` object.
    pub fn to_json(&self) -> Value {
        use crate::fraction::to_string as f;
        json!({
            "price_cents": self.price_cents,
            "expected_payout_cents": f(&self.expected_payout_cents),
            "rtp": f(&self.rtp),
            "hit_rate": f(&self.hit_rate),
            "variance_cents2": f(&self.variance_cents2),
            "largest_prize_cents": self.largest_prize_cents,
            "prize_chances": self.prize_chances.iter().map(|(c, p)| json!({"prize_cents": c, "chance": f(p)})).collect::<Vec<_>>(),
            "block_risk": {
                "method": self.block_risk.method,
                "lattice_cents": self.block_risk.lattice_cents,
                "mean_cents": self.block_risk.mean_cents,
                "std_dev_cents": self.block_risk.std_dev_cents,
                "p_prizes_exceed_sales": self.block_risk.p_prizes_exceed_sales,
                "p99_cents": self.block_risk.p99_cents,
                "p9999_cents": self.block_risk.p9999_cents,
            },
        })
    }
}

/// Below this, a probability from the FFT is floating-point noise.
pub const FFT_NOISE: f64 = 1e-13;
const MAX_POINTS: usize = 1 << 21;

/// The distribution of a block's total prize on a lattice (module doc).
pub fn block_distribution(table: &PrizeTable, odds: &Odds) -> (u64, Vec<f64>) {
    let finals: Vec<f64> = odds.final_chances().iter().map(approx).collect();
    let prizes: Vec<u64> = table.schedules.iter().flat_map(|r| r.prizes.cents()).filter(|&c| c > 0).collect();
    let gcd = prizes.iter().fold(0u64, |g, &c| g.gcd(&c)).max(1);
    // Mean and variance of the block, exactly, to size the lattice.
    let (mut mean, mut var) = (0.0f64, 0.0f64);
    for row in &table.schedules {
        let (mut m1, mut m2) = (0.0, 0.0);
        for t in 5..=8u8 {
            let c = row.prizes.for_tricks(t) as f64;
            m1 += finals[(t - 5) as usize] * c;
            m2 += finals[(t - 5) as usize] * c * c;
        }
        mean += f64::from(row.tickets) * m1;
        var += f64::from(row.tickets) * (m2 - m1 * m1);
    }
    let largest = prizes.iter().copied().max().unwrap_or(0) as f64;
    let sales = (table.price_cents * u64::from(table.block_size)) as f64;
    let upper = (mean + 40.0 * var.sqrt() + 2.0 * largest).max(sales * 1.5).max(1.0);
    let mut w = gcd;
    while upper / w as f64 > MAX_POINTS as f64 {
        w = w.saturating_mul(2);
    }
    let points = ((upper / w as f64).ceil() as usize + 1).next_power_of_two().min(MAX_POINTS);
    // Characteristic function of the sum: product over rows of phi_r^n_r.
    let mut planner = FftPlanner::<f64>::new();
    let mut log_mag = vec![0.0f64; points];
    let mut phase = vec![0.0f64; points];
    for row in &table.schedules {
        // One ticket of the row on the lattice (prizes rounded up to w).
        let mut pmf = vec![Complex64::new(0.0, 0.0); points];
        let mut lose = 1.0;
        for t in 5..=8u8 {
            let p = finals[(t - 5) as usize];
            let k = row.prizes.for_tricks(t).div_ceil(w) as usize % points;
            pmf[k].re += p;
            lose -= p;
        }
        pmf[0].re += lose;
        planner.plan_fft_forward(points).process(&mut pmf);
        let n = f64::from(row.tickets);
        for (i, z) in pmf.iter().enumerate() {
            log_mag[i] += n * z.norm().max(1e-300).ln();
            phase[i] += n * z.arg();
        }
    }
    let mut spectrum: Vec<Complex64> =
        log_mag.iter().zip(&phase).map(|(l, a)| Complex64::from_polar(l.exp(), *a)).collect();
    planner.plan_fft_inverse(points).process(&mut spectrum);
    let scale = 1.0 / points as f64;
    let pmf = spectrum.iter().map(|z| (z.re * scale).max(0.0)).collect();
    (w, pmf)
}

fn block_risk(table: &PrizeTable, odds: &Odds) -> BlockRisk {
    let (w, pmf) = block_distribution(table, odds);
    let mean: f64 = pmf.iter().enumerate().map(|(k, p)| k as f64 * w as f64 * p).sum();
    let var: f64 = pmf.iter().enumerate().map(|(k, p)| (k as f64 * w as f64 - mean).powi(2) * p).sum();
    let sales = table.price_cents * u64::from(table.block_size);
    // P(S > sales): lattice points strictly above.
    let exceed: f64 = pmf.iter().enumerate().filter(|(k, _)| *k as u64 * w > sales).map(|(_, p)| p).sum();
    let quantile = |q: f64| {
        let mut acc = 0.0;
        for (k, p) in pmf.iter().enumerate() {
            acc += p;
            if acc >= q {
                return k as f64 * w as f64;
            }
        }
        (pmf.len() - 1) as f64 * w as f64
    };
    BlockRisk {
        method: format!(
            "FFT on a lattice of {w} cents with {} points{}",
            pmf.len(),
            if prize_gcd(table) == w { ", exact lattice" } else { ", prizes rounded up" }
        ),
        lattice_cents: w,
        mean_cents: mean,
        std_dev_cents: var.sqrt(),
        p_prizes_exceed_sales: if exceed < FFT_NOISE { 0.0 } else { exceed },
        p99_cents: quantile(0.99),
        p9999_cents: quantile(0.9999),
    }
}

fn prize_gcd(table: &PrizeTable) -> u64 {
    table.schedules.iter().flat_map(|r| r.prizes.cents()).filter(|&c| c > 0).fold(0u64, |g, c| g.gcd(&c)).max(1)
}
