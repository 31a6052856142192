//! Payout figures of the example table, against an independent computation
//! written out here, and a block's risk against an exact rational
//! convolution on small tables.

use as_capone_math as math;
use math::fraction::{approx, int, ratio};
use math::{
    FFT_NOISE, LegalBand, Odds, Payout, PrizeTable, block_distribution, block_distribution_fft,
    block_distribution_unpruned,
};
use num_rational::BigRational;
use num_traits::{One, Zero};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Distribution of tricks in one game, computed a second way: the player
/// plays 7, 8, ..., A in order and As Capone's card is uniform over the set
/// he still holds (art. 3.2.2), a recursion over that set; a tie is won with
/// chance 112 / (112 + 112) = 1/2 (deck pairs higher / lower, art. 3.2.4.2).
fn per_round_by_recursion() -> Vec<BigRational> {
    fn rec(player: usize, capone_left: u8, memo: &mut BTreeMap<(usize, u8), Vec<BigRational>>) -> Vec<BigRational> {
        if player == 8 {
            let mut d = vec![BigRational::zero(); 9];
            d[0] = BigRational::one();
            return d;
        }
        if let Some(d) = memo.get(&(player, capone_left)) {
            return d.clone();
        }
        let m = capone_left.count_ones();
        let mut d = vec![BigRational::zero(); 9];
        for c in (0..8).filter(|c| capone_left & (1 << c) != 0) {
            let rest = rec(player + 1, capone_left & !(1 << c), memo);
            let p_win = match player.cmp(&c) {
                Ordering::Greater => BigRational::one(),
                Ordering::Less => BigRational::zero(),
                Ordering::Equal => ratio(1, 2),
            };
            for k in 0..9 {
                let lose = (BigRational::one() - &p_win) * &rest[k] / int(m);
                d[k] += lose;
                if k < 8 {
                    d[k + 1] += &p_win * &rest[k] / int(m);
                }
            }
        }
        memo.insert((player, capone_left), d.clone());
        d
    }
    rec(0, 0xFF, &mut BTreeMap::new())
}

#[test]
fn per_round_distribution_agrees_with_a_recursion() {
    let odds = Odds::exact();
    assert_eq!(per_round_by_recursion(), odds.per_round.to_vec());
}

#[test]
fn example_table_figures_against_an_independent_computation() {
    let table = PrizeTable::example();
    let odds = Odds::exact();
    let p = Payout::compute(&table, &odds);
    // Independently: final chance of k tricks = per_round[k] / (1 - per_round[4] / 2).
    let per_round = per_round_by_recursion();
    let restart = BigRational::one() - &per_round[4] * ratio(1, 2);
    let fin = |k: usize| &per_round[k] / &restart;
    let rows: [(u64, [u64; 4]); 5] = [
        (228_000, [300, 1_000, 10_000, 1_000_000]),
        (57_000, [600, 2_000, 20_000, 2_500_000]),
        (13_000, [1_000, 5_000, 50_000, 5_000_000]),
        (1_800, [3_000, 15_000, 200_000, 10_000_000]),
        (200, [10_000, 100_000, 1_000_000, 25_000_000]),
    ];
    let mut expected = BigRational::zero();
    let mut second = BigRational::zero();
    for (n, prizes) in rows {
        for (i, c) in prizes.iter().enumerate() {
            let w = ratio(n, 300_000u64) * fin(5 + i);
            expected += &w * int(*c);
            second += &w * int(*c) * int(*c);
        }
    }
    assert_eq!(p.expected_payout_cents, expected);
    assert_eq!(p.rtp, &expected / int(300));
    let hit: BigRational = (5..=8).map(fin).sum();
    assert_eq!(p.hit_rate, hit, "every schedule pays for 5 to 8 tricks");
    assert_eq!(p.variance_cents2, &second - &expected * &expected);
    assert_eq!(p.largest_prize_cents, 25_000_000);
    assert_eq!(p.price_cents, 300);
    // Expected winners of the top row's jackpot per block.
    assert_eq!(p.expected_winners_per_block[4][3], int(200) * fin(8));
    // The distinct prize amounts: chances add up to the hit rate.
    let sum: BigRational = p.prize_chances.iter().map(|(_, c)| c.clone()).sum();
    assert_eq!(sum, p.hit_rate);
    assert_eq!(
        p.prize_chances.len(),
        17,
        "300 600 1000 2000 3000 5000 10000 15000 20000 50000 100000 200000 1M 2.5M 5M 10M 25M"
    );
    let json = p.to_json();
    assert_eq!(json["price_cents"], 300);
    assert_eq!(json["rtp"], math::fraction::to_string(&p.rtp));
}

/// The return to player alone (for the server's emission reports and
/// odds page) is `compute`'s, for the table and for each row, against the
/// independent computation above.
#[test]
fn the_return_to_player_alone_is_computes() {
    let table = PrizeTable::example();
    let odds = Odds::exact();
    let p = Payout::compute(&table, &odds);
    assert_eq!(Payout::table_rtp(&table, &odds), p.rtp);
    assert_eq!(Payout::expected_cents(&table, &odds), p.expected_payout_cents);
    let per_round = per_round_by_recursion();
    let restart = BigRational::one() - &per_round[4] * ratio(1, 2);
    let mut weighted = BigRational::zero();
    for row in &table.schedules {
        let by_hand: BigRational =
            (5..=8u8).map(|t| &per_round[usize::from(t)] / &restart * int(row.prizes.for_tricks(t))).sum();
        assert_eq!(Payout::row_expected_cents(row, &odds), by_hand);
        assert_eq!(Payout::row_rtp(&table, row, &odds), &by_hand / int(300));
        weighted += ratio(row.tickets, table.block_size) * Payout::row_rtp(&table, row, &odds);
    }
    assert_eq!(weighted, p.rtp);
}

#[test]
fn legal_band_check() {
    let band = LegalBand::scratch();
    assert_eq!(band.check(&ratio(62, 100)), Ordering::Equal);
    assert_eq!(band.check(&ratio(75, 100)), Ordering::Equal);
    assert_eq!(band.check(&ratio(61, 100)), Ordering::Less);
    assert_eq!(band.check(&ratio(76, 100)), Ordering::Greater);
}

/// Exact distribution of a block's total by rational convolution, ticket by ticket.
fn exact_block(table: &PrizeTable, odds: &Odds) -> BTreeMap<u64, BigRational> {
    let fin = odds.final_chances();
    let mut dist: BTreeMap<u64, BigRational> = [(0u64, BigRational::one())].into();
    for row in &table.schedules {
        let mut one: BTreeMap<u64, BigRational> = BTreeMap::new();
        for t in 5..=8u8 {
            *one.entry(row.prizes.for_tricks(t)).or_insert_with(BigRational::zero) += &fin[(t - 5) as usize];
        }
        *one.entry(0).or_insert_with(BigRational::zero) += &fin[4];
        for _ in 0..row.tickets {
            let mut next: BTreeMap<u64, BigRational> = BTreeMap::new();
            for (s, p) in &dist {
                for (c, q) in &one {
                    *next.entry(s + c).or_insert_with(BigRational::zero) += p * q;
                }
            }
            dist = next;
        }
    }
    dist
}

fn small_table(block: u32, rows: &[(u32, [u64; 4])], price: u64) -> PrizeTable {
    let mut s = format!("game = \"As Capone\"\ncode = \"ASC\"\nprice_cents = {price}\nblock_size = {block}\n");
    for (n, p) in rows {
        s += &format!(
            "[[schedule]]\ntickets = {n}\nprizes_cents = {{ 5 = {}, 6 = {}, 7 = {}, 8 = {} }}\n",
            p[0], p[1], p[2], p[3]
        );
    }
    PrizeTable::parse_toml(&s).unwrap()
}

#[test]
fn block_distribution_matches_an_exact_convolution() {
    let odds = Odds::exact();
    let table = small_table(12, &[(9, [300, 1000, 10_000, 1_000_000]), (3, [600, 2000, 20_000, 2_500_000])], 300);
    let exact = exact_block(&table, &odds);
    let (w, pmf) = block_distribution(&table, &odds);
    assert_eq!(w, 100, "the gcd of the prizes: an exact lattice");
    let mut beyond = BigRational::zero();
    for (s, p) in &exact {
        match pmf.get((*s / w) as usize) {
            Some(got) => assert!((got - approx(p)).abs() < 1e-12, "P(S = {s}) = {} vs {got}", approx(p)),
            None => beyond += p,
        }
    }
    // What the lattice leaves out (and wraps around) is negligible, as the module doc says.
    assert!(approx(&beyond) < 1e-15, "mass beyond the lattice: {}", approx(&beyond));
    let risk = Payout::compute(&table, &odds).block_risk;
    // P(S > sales) exactly.
    let sales = 12 * 300;
    let exceed: BigRational = exact.iter().filter(|(s, _)| **s > sales).map(|(_, p)| p.clone()).sum();
    assert!((risk.p_prizes_exceed_sales - approx(&exceed)).abs() < 1e-12);
    // Percentiles exactly.
    let quantile = |q: f64| {
        let mut acc = 0.0;
        for (s, p) in &exact {
            acc += approx(p);
            if acc >= q {
                return *s as f64;
            }
        }
        unreachable!()
    };
    assert_eq!(risk.p99_cents, quantile(0.99));
    assert_eq!(risk.p9999_cents, quantile(0.9999));
    let mean: f64 = exact.iter().map(|(s, p)| *s as f64 * approx(p)).sum();
    assert!((risk.mean_cents - mean).abs() < 1e-6 * mean);
}

#[test]
fn example_block_risk_is_sane() {
    let table = PrizeTable::example();
    let odds = Odds::exact();
    let p = Payout::compute(&table, &odds);
    let r = &p.block_risk;
    let mean = approx(&p.expected_payout_cents) * 300_000.0;
    assert!((r.mean_cents - mean).abs() < 1e-6 * mean, "{} vs {mean}", r.mean_cents);
    assert!(r.p99_cents > r.mean_cents && r.p9999_cents >= r.p99_cents);
    assert!(r.p_prizes_exceed_sales >= 0.0 && r.p_prizes_exceed_sales < 1e-3);
}

/// The largest difference between two distributions on the same lattice.
fn max_diff(a: &(u64, Vec<f64>), b: &(u64, Vec<f64>)) -> f64 {
    assert_eq!(a.0, b.0, "the same lattice step");
    assert_eq!(a.1.len(), b.1.len(), "the same number of points");
    a.1.iter().zip(&b.1).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn the_real_inverse_without_pruning_matches_an_exact_convolution() {
    // The same check as above, on the sparse method's own path (which a
    // block this small would not take: every frequency matters there).
    let odds = Odds::exact();
    let table = small_table(12, &[(9, [300, 1000, 10_000, 1_000_000]), (3, [600, 2000, 20_000, 2_500_000])], 300);
    let exact = exact_block(&table, &odds);
    let (w, pmf) = block_distribution_unpruned(&table, &odds);
    assert_eq!(w, 100);
    for (s, p) in &exact {
        if let Some(got) = pmf.get((*s / w) as usize) {
            assert!((got - approx(p)).abs() < 1e-12, "P(S = {s}) = {} vs {got}", approx(p));
        }
    }
    assert!(max_diff(&(w, pmf), &block_distribution_fft(&table, &odds)) < 1e-15);
}

#[test]
fn the_pruned_distribution_is_the_full_ffts_up_to_rounding() {
    let odds = Odds::exact();
    let example = PrizeTable::example();
    // The example table, and smaller blocks of the same shape, where fewer
    // frequencies are pruned (the smallest falls back to the full FFT).
    let mut tables = vec![example.clone()];
    for divisor in [10, 100, 1000] {
        let rows: Vec<(u32, [u64; 4])> = example
            .schedules
            .iter()
            .map(|r| (r.tickets.div_ceil(divisor), std::array::from_fn(|i| r.prizes.for_tricks(5 + i as u8))))
            .collect();
        let n = rows.iter().map(|r| r.0).sum();
        tables.push(small_table(n, &rows, 300));
    }
    for table in &tables {
        let new = block_distribution(table, &odds);
        let old = block_distribution_fft(table, &odds);
        let d = max_diff(&new, &old);
        assert!(d < 1e-14, "block of {}: largest difference {d}", table.block_size);
        let (sum_new, sum_old) = (new.1.iter().sum::<f64>(), old.1.iter().sum::<f64>());
        // (Summed naively over two million points: 1 within the sum's own rounding.)
        assert!((sum_new - 1.0).abs() < 1e-10 && (sum_old - 1.0).abs() < 1e-10, "total chance {sum_new}, {sum_old}");
    }
}

#[test]
fn the_example_block_risk_figures_are_pinned() {
    // `odds --table examples/prize-table.toml`: the percentiles are lattice
    // points and stay exactly what the full complex FFT gave before the
    // pruned spectrum
    // (docs/bench-log/2026-12-02-to-03-emission-and-odds.md); the other
    // figures are checked against exact or independent values.
    let p = Payout::compute(&PrizeTable::example(), &Odds::exact());
    let r = &p.block_risk;
    assert_eq!(r.method, "FFT on a lattice of 100 cents with 2097152 points, exact lattice");
    assert_eq!(r.lattice_cents, 100);
    assert_eq!(r.p99_cents, 63247900.0);
    assert_eq!(r.p9999_cents, 71188000.0);
    // The exact mean and variance of a block: its tickets are independent.
    let exact_mean = approx(&p.expected_payout_cents) * 300_000.0;
    let fin = Odds::exact().final_chances();
    let mut exact_var = BigRational::zero();
    for row in &PrizeTable::example().schedules {
        let (mut m1, mut m2) = (BigRational::zero(), BigRational::zero());
        for t in 5..=8u8 {
            let c = int(row.prizes.for_tricks(t));
            m1 += &fin[(t - 5) as usize] * &c;
            m2 += &fin[(t - 5) as usize] * &c * &c;
        }
        exact_var += int(row.tickets) * (m2 - &m1 * &m1);
    }
    let exact_sd = approx(&exact_var).sqrt();
    // P(prizes > sales) on the same lattice, computed independently at 40
    // digits (mpmath: the characteristic function at the 3 052 frequencies
    // that matter, the tail summed in closed form from them; BENCHMARKS.md).
    let independent_exceed = 5.02255231071131e-8;
    assert!((r.mean_cents - exact_mean).abs() < 1e-11 * exact_mean, "mean {}, exactly {exact_mean}", r.mean_cents);
    assert!((r.std_dev_cents - exact_sd).abs() < 1e-9 * exact_sd, "sd {}, exactly {exact_sd}", r.std_dev_cents);
    assert!(
        (r.p_prizes_exceed_sales - independent_exceed).abs() < FFT_NOISE,
        "P(prizes > sales) {}, independently {independent_exceed}",
        r.p_prizes_exceed_sales
    );
    // The full complex FFT's figures (`block_distribution_fft`) are further off:
    // mean 60998414.29091205 (5.5e-3 cents, 9e-11, from the exact mean),
    // standard deviation 753597.8996977087 (4e-7 too high), and P(prizes >
    // sales) 5.0269097795603045e-8, 4.4e-12 too high: each row's |phi|^n was
    // taken from 1 - |phi| with only its first digits (see
    // `block_distribution`).
    let old_exceed = 5.0269097795603045e-8;
    assert!((old_exceed - independent_exceed).abs() > 4e-12);
}
