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
//! exact rational convolution on small tables, and on the example table
//! with the exact mean and variance and an independent 40-digit computation
//! of the chance that prizes exceed sales ([`block_distribution`] says how
//! the characteristic function is evaluated, and only where it matters).

use crate::fraction::{approx, int, ratio};
use crate::odds::{FinalOutcome, Odds};
use crate::table::{PrizeTable, ScheduleRow};
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
        let expected = Payout::expected_cents(table, odds);
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
            rtp: per_price(table, &expected),
            expected_payout_cents: expected,
            hit_rate,
            variance_cents2: variance,
            largest_prize_cents: largest,
            prize_chances: by_amount.into_iter().collect(),
            expected_winners_per_block: winners,
            block_risk: block_risk(table, odds),
        }
    }

    /// The expected prize of one ticket of the block, in cents: each row's
    /// ([`Payout::row_expected_cents`]) weighted by its share of the block.
    /// It is [`Payout::compute`]'s `expected_payout_cents`.
    pub fn expected_cents(table: &PrizeTable, odds: &Odds) -> BigRational {
        let n = u64::from(table.block_size);
        table.schedules.iter().map(|row| ratio(row.tickets, n) * Payout::row_expected_cents(row, odds)).sum()
    }

    /// The table's exact return to player: the expected prize of a ticket
    /// of the block over the price. It is [`Payout::compute`]'s `rtp`,
    /// without the block's risk (an FFT) that `compute` adds: the one
    /// formula for whoever needs the return to player alone.
    pub fn table_rtp(table: &PrizeTable, odds: &Odds) -> BigRational {
        per_price(table, &Payout::expected_cents(table, odds))
    }

    /// The expected prize of one ticket of schedule `row`, in cents: each
    /// prize times the chance of its final outcome (the schedule does not
    /// change the outcome, art. 3.2.3.3).
    pub fn row_expected_cents(row: &ScheduleRow, odds: &Odds) -> BigRational {
        FinalOutcome::ALL
            .iter()
            .filter_map(|&o| match o {
                FinalOutcome::Tricks(t) => Some(odds.final_chance(o) * int(row.prizes.for_tricks(t))),
                FinalOutcome::Lose => None,
            })
            .sum()
    }

    /// The return to player of a ticket of schedule `row` of `table`: its
    /// expected prize over the price.
    pub fn row_rtp(table: &PrizeTable, row: &ScheduleRow, odds: &Odds) -> BigRational {
        per_price(table, &Payout::row_expected_cents(row, odds))
    }

    /// Standard deviation of one ticket's prize, in cents (for reading).
    pub fn std_dev_cents(&self) -> f64 {
        approx(&self.variance_cents2).sqrt()
    }

    /// The `table` object of `odds --json` (`docs/contract.md`, Command line).
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

/// An expected prize over the ticket's price: a return to player.
fn per_price(table: &PrizeTable, expected_cents: &BigRational) -> BigRational {
    expected_cents / int(table.price_cents)
}

/// Below this, a probability from the FFT is floating-point noise.
pub const FFT_NOISE: f64 = 1e-13;
const MAX_POINTS: usize = 1 << 21;

/// The lattice of a block's total prize (module doc) and each row's
/// ticket distribution on it.
struct Lattice {
    /// Cents per lattice step.
    w: u64,
    /// Lattice points, a power of two.
    points: usize,
    rows: Vec<LatticeRow>,
}

/// A schedule row on the lattice: its ticket count, the chance of losing
/// and the (lattice point, chance) of each of the four prizes.
type LatticeRow = (f64, f64, [(usize, f64); 4]);

impl Lattice {
    fn of(table: &PrizeTable, odds: &Odds) -> Lattice {
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
        let rows = table
            .schedules
            .iter()
            .map(|row| {
                // One ticket of the row on the lattice (prizes rounded up to w).
                let mut lose = 1.0;
                let terms = std::array::from_fn(|i| {
                    let t = 5 + i as u8;
                    let p = finals[i];
                    lose -= p;
                    (row.prizes.for_tricks(t).div_ceil(w) as usize % points, p)
                });
                (f64::from(row.tickets), lose, terms)
            })
            .collect();
        Lattice { w, points, rows }
    }
}

/// The distribution of a block's total prize on a lattice (module doc):
/// `(w, pmf)`, `pmf[k]` the chance that the block pays `k w` cents.
///
/// The characteristic function of the sum is evaluated only where it can
/// matter: at a frequency where the largest row's factor alone,
/// `|phi_r|^n_r`, is below `e^-800`, the product is below the smallest
/// `f64` (every factor has modulus at most 1), so [`block_distribution_fft`]
/// gets exactly 0 there too. A cheap first pass (each prize's phase
/// advanced by one complex product per frequency, recomputed exactly every
/// 64 frequencies, with a margin of 1e-9 on `|phi|^2`) finds the others;
/// each row's factor is evaluated exactly at those (one `sin_cos` per
/// prize, and `ln |phi|` from `phi - 1` computed directly, so that
/// `n ln |phi|` keeps every digit for `n` in the hundreds of thousands),
/// and the real inverse transform is one complex FFT of half the length.
/// Pointwise it is [`block_distribution_fft`]'s distribution within about
/// 1e-15 (the tests compare both), and more accurate: that method took
/// `|phi|` near 1 from a sum rounded near 1, which put the example table's
/// chance that prizes exceed sales 4.4e-12 too high (5.0269e-8 for
/// 5.0226e-8, checked at 40 digits). When more than a 32nd of the
/// frequencies remain (small blocks), it is that function's method.
pub fn block_distribution(table: &PrizeTable, odds: &Odds) -> (u64, Vec<f64>) {
    let lattice = Lattice::of(table, odds);
    match sparse_spectrum(&lattice, true) {
        Some(spectrum) => (lattice.w, real_inverse(lattice.points, &spectrum)),
        None => (lattice.w, fft_all_rows(&lattice)),
    }
}

/// [`block_distribution`] without its pruning: every frequency evaluated
/// exactly, then the same real inverse. For the tests.
#[doc(hidden)]
pub fn block_distribution_unpruned(table: &PrizeTable, odds: &Odds) -> (u64, Vec<f64>) {
    let lattice = Lattice::of(table, odds);
    let spectrum = sparse_spectrum(&lattice, false).expect("no limit without pruning");
    (lattice.w, real_inverse(lattice.points, &spectrum))
}

/// The first method, kept as the reference: each row's distribution
/// through a complex FFT of all the lattice's points, the characteristic
/// functions raised to the counts in polar form at every frequency, and a
/// complex inverse FFT.
pub fn block_distribution_fft(table: &PrizeTable, odds: &Odds) -> (u64, Vec<f64>) {
    let lattice = Lattice::of(table, odds);
    (lattice.w, fft_all_rows(&lattice))
}

fn fft_all_rows(l: &Lattice) -> Vec<f64> {
    let points = l.points;
    // Characteristic function of the sum: product over rows of phi_r^n_r.
    let mut planner = FftPlanner::<f64>::new();
    let mut log_mag = vec![0.0f64; points];
    let mut phase = vec![0.0f64; points];
    for (n, lose, terms) in &l.rows {
        let mut pmf = vec![Complex64::new(0.0, 0.0); points];
        for &(k, p) in terms {
            pmf[k].re += p;
        }
        pmf[0].re += lose;
        planner.plan_fft_forward(points).process(&mut pmf);
        for (i, z) in pmf.iter().enumerate() {
            log_mag[i] += n * z.norm().max(1e-300).ln();
            phase[i] += n * z.arg();
        }
    }
    let mut spectrum: Vec<Complex64> =
        log_mag.iter().zip(&phase).map(|(l, a)| Complex64::from_polar(l.exp(), *a)).collect();
    planner.plan_fft_inverse(points).process(&mut spectrum);
    let scale = 1.0 / points as f64;
    spectrum.iter().map(|z| (z.re * scale).max(0.0)).collect()
}

/// `e^(-2 pi i m / points)`, `m` taken modulo `points`.
fn twiddle(m: u64, points: usize) -> Complex64 {
    let m = m % points as u64;
    let (sin, cos) = (-2.0 * std::f64::consts::PI * m as f64 / points as f64).sin_cos();
    Complex64::new(cos, sin)
}

/// `ln(1e-300)`: the floor of `ln |phi|` (`fft_all_rows` clamps `|phi|` there).
const LN_FLOOR: f64 = -690.7755278982137;

/// Below `e^-PRUNE` the product of the rows' factors is 0 in `f64`.
const PRUNE: f64 = 800.0;

/// The characteristic function of the block's sum at the frequencies `0
/// ..= points / 2` where it is not 0 (see [`block_distribution`]), or
/// `None` when pruning leaves more than a 32nd of them.
fn sparse_spectrum(l: &Lattice, prune: bool) -> Option<Vec<(usize, Complex64)>> {
    let (points, half) = (l.points, l.points / 2);
    let mut keep: Vec<usize> = Vec::new();
    let largest = l.rows.iter().max_by(|a, b| a.0.total_cmp(&b.0));
    match largest {
        Some(&(n, lose, terms)) if prune && n > 0.0 => {
            // |phi|^n < e^-PRUNE  <=>  |phi|^2 < e^(-2 PRUNE / n).
            let limit = (-2.0 * PRUNE / n).exp() - 1e-9;
            let steps = terms.map(|(k, _)| twiddle(k as u64, points));
            const RESYNC: usize = 64;
            for start in (0..=half).step_by(RESYNC) {
                let mut u = terms.map(|(k, _)| twiddle(k as u64 * start as u64, points));
                for j in start..(start + RESYNC).min(half + 1) {
                    let mut z = Complex64::new(lose, 0.0);
                    for i in 0..4 {
                        z += u[i] * terms[i].1;
                        u[i] *= steps[i];
                    }
                    if z.norm_sqr() >= limit {
                        keep.push(j);
                    }
                }
                if keep.len() > half / 32 {
                    return None;
                }
            }
        }
        _ if prune => return None,
        _ => keep.extend(0..=half),
    }
    let spectrum = keep
        .into_iter()
        .map(|j| {
            let (mut log_mag, mut phase) = (0.0f64, 0.0f64);
            for &(n, _, terms) in &l.rows {
                // phi - 1 = sum of p (e^(-i x) - 1), x = 2 pi k j / points,
                // with e^(-i x) - 1 = -2 sin^2(x/2) - 2i sin(x/2) cos(x/2):
                // accurate to the last bit however close phi is to 1 (near
                // the frequencies that matter), where 1 - phi computed as
                // lose + sum p e^(-i x) would keep only its first digits.
                let (mut a, mut b) = (0.0f64, 0.0f64);
                for (k, p) in terms {
                    let m = (k as u64 * j as u64) % points as u64;
                    let (sin, cos) = (std::f64::consts::PI * m as f64 / points as f64).sin_cos();
                    a -= 2.0 * p * sin * sin;
                    b -= 2.0 * p * sin * cos;
                }
                // ln |phi| = ln((1 + a)^2 + b^2) / 2, and ln(1e-300) as the floor.
                log_mag += n * (0.5 * (2.0 * a + a * a + b * b).ln_1p()).max(LN_FLOOR);
                phase += n * b.atan2(1.0 + a);
            }
            (j, Complex64::from_polar(log_mag.exp(), phase))
        })
        .filter(|(_, z)| *z != Complex64::new(0.0, 0.0))
        .collect();
    Some(spectrum)
}

/// The real sequence of length `points` whose transform is the Hermitian
/// spectrum given at `0 ..= points / 2` (zero where absent), as
/// `fft_all_rows` computes it (the real part of the complex inverse, over
/// `points`, negatives clamped to 0); through one complex inverse FFT of
/// `points / 2` (even and odd samples as the real and imaginary parts).
fn real_inverse(points: usize, spectrum: &[(usize, Complex64)]) -> Vec<f64> {
    if points < 2 {
        let x0 = spectrum.iter().find(|(j, _)| *j == 0).map_or(0.0, |(_, z)| z.re);
        return vec![x0.max(0.0); points];
    }
    let half = points / 2;
    let mut x = vec![Complex64::new(0.0, 0.0); half + 1];
    for &(j, z) in spectrum {
        x[j] = z;
    }
    // The imaginary parts at 0 and points / 2 cancel in a real inverse.
    x[0].im = 0.0;
    x[half].im = 0.0;
    let zero = Complex64::new(0.0, 0.0);
    let mut z = vec![zero; half];
    for (k, zk) in z.iter_mut().enumerate() {
        let (a, b) = (x[k], x[half - k].conj());
        if a == zero && b == zero {
            continue;
        }
        let even = (a + b) * 0.5;
        // e^(+2 pi i k / points)
        let odd = (a - b) * 0.5 * twiddle((points - k) as u64, points);
        *zk = even + Complex64::new(0.0, 1.0) * odd;
    }
    FftPlanner::<f64>::new().plan_fft_inverse(half).process(&mut z);
    let scale = 1.0 / half as f64;
    let mut pmf = vec![0.0f64; points];
    for (pair, v) in pmf.chunks_exact_mut(2).zip(&z) {
        pair[0] = (v.re * scale).max(0.0);
        pair[1] = (v.im * scale).max(0.0);
    }
    pmf
}

fn block_risk(table: &PrizeTable, odds: &Odds) -> BlockRisk {
    let (w, pmf) = block_distribution(table, odds);
    risk_of_distribution(table, w, &pmf)
}

/// The risk figures of a block whose total prizes have the distribution
/// `pmf` on a lattice of `w` cents ([`block_distribution`]'s): for a caller
/// that has the distribution already (the desk's chart).
pub fn risk_of_distribution(table: &PrizeTable, w: u64, pmf: &[f64]) -> BlockRisk {
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
