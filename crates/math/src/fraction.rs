//! Exact fractions as `docs/contract.md` writes them: reduced `"p/q"` strings
//! (`"1/1"` for a certainty, `"0/1"` for zero).
//!
//! **Public as a namespace**, unlike the crate's other modules: its
//! functions are named to be read under its name (`fraction::to_string`,
//! `fraction::parse`, `fraction::ratio(1, 3)`, `fraction::approx`), which a
//! flat `math::to_string` or `math::parse` would no longer say.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};

/// A reduced fraction as `"p/q"`, always with its denominator.
pub fn to_string(r: &BigRational) -> String {
    // BigRational keeps itself reduced with a positive denominator.
    format!("{}/{}", r.numer(), r.denom())
}

/// Parses `"p/q"` or `"p"` back into a fraction.
pub fn parse(s: &str) -> Option<BigRational> {
    let (p, q) = s.split_once('/').unwrap_or((s, "1"));
    let p: BigInt = p.trim().parse().ok()?;
    let q: BigInt = q.trim().parse().ok()?;
    (!q.is_zero()).then(|| BigRational::new(p, q))
}

/// A fraction from integers.
pub fn ratio(p: impl Into<BigInt>, q: impl Into<BigInt>) -> BigRational {
    BigRational::new(p.into(), q.into())
}

/// An integer as a fraction.
pub fn int(p: impl Into<BigInt>) -> BigRational {
    BigRational::from_integer(p.into())
}

/// A floating approximation, for display only: every decision is made on
/// the exact value.
pub fn approx(r: &BigRational) -> f64 {
    r.to_f64().unwrap_or(f64::NAN)
}

/// `1 - r`.
pub fn complement(r: &BigRational) -> BigRational {
    BigRational::one() - r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_print_reduced_with_a_denominator() {
        assert_eq!(to_string(&ratio(2, 4)), "1/2");
        assert_eq!(to_string(&ratio(3, 3)), "1/1");
        assert_eq!(to_string(&ratio(0, 7)), "0/1");
        assert_eq!(to_string(&ratio(-6, 4)), "-3/2");
        assert_eq!(parse("10/4"), Some(ratio(5, 2)));
        assert_eq!(parse("3"), Some(int(3)));
        assert_eq!(parse("1/0"), None);
        assert_eq!(parse("x/2"), None);
    }
}
