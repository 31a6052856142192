//! An exact fraction as the report writes it.

use math::fraction::{approx, to_string as frac};
use num_rational::BigRational;
use serde::{Deserialize, Serialize};

/// An exact fraction `"p/q"` and its floating approximation (for reading and plotting).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Frac {
    pub fraction: String,
    pub value: f64,
}

impl Frac {
    pub fn of(r: &BigRational) -> Frac {
        Frac { fraction: frac(r), value: approx(r) }
    }
}
