//! Statistics for comparing simulated counts with the exact odds: Pearson's
//! chi-square goodness of fit and its p-value (the chi-square survival
//! function, through the regularized upper incomplete gamma function).
//!
//! Floats are right here: a p-value is a statement about sampling, not an
//! odds figure of the game.

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
pub fn gamma_q(a: f64, x: f64) -> f64 {
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
pub fn ln_gamma(x: f64) -> f64 {
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
}
