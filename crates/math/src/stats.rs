//! Statistics for comparing simulated counts with the exact odds: Pearson's
//! chi-square goodness of fit and its p-value (the chi-square survival
//! function, through the regularized upper incomplete gamma function).
//!
//! Floats are right here: a p-value is a statement about sampling, not an
//! odds figure of the game.
//!
//! Also, for the certification report (`as-capone report --table`): the
//! G-test (likelihood ratio), pooling of categories too rare for the
//! chi-square approximation, the normal distribution's two-sided p-value,
//! intervals for a count, and Bonferroni's correction.

/// Pearson's statistic `sum (observed - expected)^2 / expected`, where
/// `expected = total * probability`, and its degrees of freedom (number of
/// categories with a positive probability, minus one).
pub fn chi_square(observed: &[u64], probabilities: &[f64]) -> (f64, u32) {
    assert_eq!(observed.len(), probabilities.len());
    let total: u64 = observed.iter().sum();
    let mut stat = 0.0;
    let mut categories = 0;
    for (&o, &p) in observed.iter().zip(probabilities) {
        if p <= 0.0 {
            assert_eq!(o, 0, "an impossible outcome was observed");
            continue;
        }
        categories += 1;
        let e = total as f64 * p;
        let d = o as f64 - e;
        stat += d * d / e;
    }
    (stat, categories.max(1) - 1)
}

/// `P(X >= x)` for a chi-square variable with `df` degrees of freedom.
pub fn chi_square_p_value(x: f64, df: u32) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    gamma_q(f64::from(df) / 2.0, x / 2.0)
}

/// Regularized upper incomplete gamma `Q(a, x) = Γ(a, x) / Γ(a)`: a series
/// below `x < a + 1`, Lentz's continued fraction above.
fn gamma_q(a: f64, x: f64) -> f64 {
    assert!(a > 0.0 && x >= 0.0);
    if x == 0.0 {
        return 1.0;
    }
    let log_prefactor = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        // P(a, x) = e^-x x^a / Γ(a+1) * sum x^n / ((a+1)...(a+n))
        let mut term = 1.0 / a;
        let mut sum = term;
        let mut ap = a;
        for _ in 0..10_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        1.0 - sum * log_prefactor.exp()
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        log_prefactor.exp() * h
    }
}

/// `ln Γ(x)` for `x > 0` (Lanczos approximation, g = 7, n = 9).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(πx)
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut s = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        s += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

/// The G-test (likelihood-ratio test) statistic `2 sum O ln(O / E)` with
/// `E = total * probability`, and its degrees of freedom (as
/// [`chi_square`]). It follows the same chi-square distribution under the
/// hypothesis; a category observed zero times adds nothing.
pub fn g_test(observed: &[u64], probabilities: &[f64]) -> (f64, u32) {
    assert_eq!(observed.len(), probabilities.len());
    let total: u64 = observed.iter().sum();
    let mut stat = 0.0;
    let mut categories = 0;
    for (&o, &p) in observed.iter().zip(probabilities) {
        if p <= 0.0 {
            assert_eq!(o, 0, "an impossible outcome was observed");
            continue;
        }
        categories += 1;
        if o > 0 {
            let e = total as f64 * p;
            stat += o as f64 * (o as f64 / e).ln();
        }
    }
    ((2.0 * stat).max(0.0), categories.max(1) - 1)
}

/// Categories pooled so that each expected count `total * p` is at least
/// `min_expected` (5 by the usual rule for the chi-square approximation):
/// neighbours are merged in order, a rare category joining the group after
/// it, and what is left at the end joining the last group. Returns the
/// pooled counts, the pooled probabilities and, for each group, the indexes
/// of the categories it holds.
pub fn pool_small_categories(
    observed: &[u64],
    probabilities: &[f64],
    min_expected: f64,
) -> (Vec<u64>, Vec<f64>, Vec<Vec<usize>>) {
    assert_eq!(observed.len(), probabilities.len());
    let total: u64 = observed.iter().sum();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut p_current = 0.0;
    for (i, &p) in probabilities.iter().enumerate() {
        current.push(i);
        p_current += p;
        if total as f64 * p_current >= min_expected {
            groups.push(std::mem::take(&mut current));
            p_current = 0.0;
        }
    }
    if !current.is_empty() {
        match groups.last_mut() {
            Some(last) => last.extend(current),
            None => groups.push(current),
        }
    }
    let counts = groups.iter().map(|g| g.iter().map(|&i| observed[i]).sum()).collect();
    let probs = groups.iter().map(|g| g.iter().map(|&i| probabilities[i]).sum()).collect();
    (counts, probs, groups)
}

/// `P(|Z| >= |z|)` for a standard normal `Z`: `erfc(|z| / sqrt 2)`, which
/// is `Q(1/2, z^2 / 2)`.
pub fn normal_two_sided_p(z: f64) -> f64 {
    if !z.is_finite() {
        return 0.0;
    }
    if z == 0.0 {
        return 1.0;
    }
    gamma_q(0.5, z * z / 2.0).min(1.0)
}

/// The two-sided normal quantiles of the levels the report uses.
pub fn normal_quantile(level: f64) -> f64 {
    match level {
        l if (l - 0.95).abs() < 1e-12 => 1.959_963_984_540_054,
        l if (l - 0.99).abs() < 1e-12 => 2.575_829_303_548_901,
        l if (l - 0.999).abs() < 1e-12 => 3.290_526_731_491_926,
        _ => panic!("no tabulated normal quantile for level {level}"),
    }
}

/// A central interval holding at least `level` of the chance for the count
/// of an outcome of chance `p` in `n` independent trials. With an expected
/// count under 100 it is the Poisson distribution's (the binomial's limit for
/// a rare outcome; exact enough for the report's purpose): the smallest
/// `lo` with `P(X < lo) <= (1 - level) / 2` exceeded and the smallest `hi`
/// with `P(X <= hi) >= 1 - (1 - level) / 2`. Above, the normal
/// approximation `np +- z sqrt(np(1-p))`, not below 0.
pub fn count_interval(n: u64, p: f64, level: f64) -> (f64, f64) {
    let mean = n as f64 * p;
    let tail = (1.0 - level) / 2.0;
    if mean < 100.0 {
        let mut pmf = (-mean).exp();
        let mut cdf = 0.0;
        let mut lo = None;
        let mut k = 0u64;
        loop {
            cdf += pmf;
            if lo.is_none() && cdf > tail {
                lo = Some(k);
            }
            if cdf >= 1.0 - tail || k > 10_000 {
                return (lo.unwrap_or(k) as f64, k as f64);
            }
            k += 1;
            pmf *= mean / k as f64;
        }
    }
    let half = normal_quantile(level) * (mean * (1.0 - p)).sqrt();
    ((mean - half).max(0.0), mean + half)
}

/// Bonferroni's correction of the smallest of `p_values` for their number:
/// `min(1, k * min p)`. A family of `k` tests whose corrected p-value is
/// below `alpha` rejects with a chance of at most `alpha` under the hypothesis.
pub fn bonferroni(p_values: &[f64]) -> f64 {
    let min = p_values.iter().copied().fold(1.0f64, f64::min);
    (min * p_values.len().max(1) as f64).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    #[test]
    fn even_degrees_of_freedom_match_the_closed_form() {
        // For df = 2k: Q = e^(-x/2) * sum_{i<k} (x/2)^i / i!
        for &x in &[0.1, 1.0, 3.3, 9.49, 20.0, 60.0] {
            let h: f64 = x / 2.0;
            assert!(close(chi_square_p_value(x, 2), (-h).exp(), 1e-12), "df 2, x {x}");
            assert!(close(chi_square_p_value(x, 4), (-h).exp() * (1.0 + h), 1e-12), "df 4, x {x}");
            let six = (-h).exp() * (1.0 + h + h * h / 2.0);
            assert!(close(chi_square_p_value(x, 6), six, 1e-12), "df 6, x {x}");
        }
    }

    #[test]
    fn known_critical_values() {
        // Tabulated 5 % and 1 % critical values.
        assert!(close(chi_square_p_value(3.841_458_820_694_124, 1), 0.05, 1e-9));
        assert!(close(chi_square_p_value(9.487_729_036_781_154, 4), 0.05, 1e-9));
        assert!(close(chi_square_p_value(13.276_704_135_987_622, 4), 0.01, 1e-9));
        assert!(close(chi_square_p_value(18.307_038_053_275_146, 10), 0.05, 1e-9));
        assert_eq!(chi_square_p_value(0.0, 4), 1.0);
    }

    #[test]
    fn ln_gamma_of_integers_is_log_factorial() {
        let mut factorial = 1.0f64; // n!
        for n in 0..20u32 {
            if n > 0 {
                factorial *= f64::from(n);
            }
            assert!((ln_gamma(f64::from(n) + 1.0) - factorial.ln()).abs() < 1e-10, "ln {n}!");
        }
        assert!(close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-12));
    }

    #[test]
    fn chi_square_statistic() {
        let (x, df) = chi_square(&[50, 50], &[0.5, 0.5]);
        assert_eq!((x, df), (0.0, 1));
        let (x, df) = chi_square(&[60, 40], &[0.5, 0.5]);
        assert!(close(x, 4.0, 1e-12));
        assert_eq!(df, 1);
    }

    #[test]
    fn g_test_is_near_chi_square_for_small_deviations_and_zero_for_a_perfect_fit() {
        let (g, df) = g_test(&[50, 50], &[0.5, 0.5]);
        assert_eq!((g, df), (0.0, 1));
        // 2 * (60 ln 1.2 + 40 ln 0.8) = 4.0271...
        let (g, _) = g_test(&[60, 40], &[0.5, 0.5]);
        assert!(close(g, 2.0 * (60.0 * 1.2f64.ln() + 40.0 * 0.8f64.ln()), 1e-12));
        let (x, _) = chi_square(&[5010, 4990], &[0.5, 0.5]);
        let (g, _) = g_test(&[5010, 4990], &[0.5, 0.5]);
        assert!(close(g, x, 1e-3), "{g} vs {x}");
        // A category never observed adds nothing, an impossible one is not counted.
        assert_eq!(g_test(&[0, 10, 0], &[0.5, 0.5, 0.0]).1, 1);
    }

    #[test]
    fn rare_categories_are_pooled_with_their_neighbours() {
        // Expected counts 1, 50, 40, 8, 1 out of 100.
        let (c, p, g) = pool_small_categories(&[2, 49, 41, 7, 1], &[0.01, 0.5, 0.4, 0.08, 0.01], 5.0);
        assert_eq!(g, vec![vec![0, 1], vec![2], vec![3, 4]]);
        assert_eq!(c, vec![51, 41, 8]);
        assert!(close(p[0], 0.51, 1e-12) && close(p[2], 0.09, 1e-12));
        // Nothing reaches the minimum: one group.
        let (c, _, g) = pool_small_categories(&[1, 1], &[0.5, 0.5], 5.0);
        assert_eq!((c, g), (vec![2], vec![vec![0, 1]]));
    }

    #[test]
    fn normal_two_sided_p_values() {
        assert!(close(normal_two_sided_p(1.959_963_984_540_054), 0.05, 1e-9));
        assert!(close(normal_two_sided_p(-2.575_829_303_548_901), 0.01, 1e-9));
        assert!(close(normal_two_sided_p(3.290_526_731_491_926), 0.001, 1e-8));
        assert_eq!(normal_two_sided_p(0.0), 1.0);
        assert!(normal_two_sided_p(40.0) < 1e-300);
    }

    #[test]
    fn count_intervals() {
        // Poisson(0.125): P(X = 0) = 0.8825, P(X <= 1) = 0.9928.
        assert_eq!(count_interval(1_000_000, 0.125e-6, 0.95), (0.0, 1.0));
        assert_eq!(count_interval(1_000_000, 0.125e-6, 0.99), (0.0, 2.0));
        // Poisson(10): P(X <= 3) = 0.0103, P(X <= 4) = 0.0293; P(X <= 16) = 0.9730, P(X <= 17) = 0.9857.
        assert_eq!(count_interval(1_000_000, 1e-5, 0.95), (4.0, 17.0));
        // Normal: 10 000 trials at 1/2, 5000 +- 1.96 * 50.
        let (lo, hi) = count_interval(10_000, 0.5, 0.95);
        assert!(close(lo, 5000.0 - 97.998, 1e-5) && close(hi, 5000.0 + 97.998, 1e-5));
    }

    #[test]
    fn bonferroni_multiplies_the_smallest_p_value() {
        assert!(close(bonferroni(&[0.5, 0.001, 0.2]), 0.003, 1e-12));
        assert_eq!(bonferroni(&[0.5, 0.9]), 1.0);
    }
}
