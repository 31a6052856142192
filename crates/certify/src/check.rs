//! The report's checks: one verdict line each, the p-value a check must
//! reach to pass, the overall verdict, and how a p-value is printed.

use serde::{Deserialize, Serialize};

/// A check passes when its p-value is at least this.
pub const THRESHOLD: f64 = 0.001;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Pass,
    Fail,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
        }
    }
}

/// One verdict line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Check {
    pub id: String,
    /// The draw stream it is about, if any.
    pub stream: Option<String>,
    pub title: String,
    /// The article of the regulation the property comes from.
    pub rule: String,
    pub statistic: String,
    /// None for an exact check (no sampling).
    pub p_value: Option<f64>,
    pub verdict: Verdict,
}

/// PASS when every check passes.
pub fn overall(checks: &[Check]) -> Verdict {
    if checks.iter().all(|c| c.verdict == Verdict::Pass) { Verdict::Pass } else { Verdict::Fail }
}

/// A p-value as the page prints it: four decimals, or two significant
/// digits in scientific notation below 0.0001.
pub fn fmt_p(p: f64) -> String {
    if p >= 1e-4 { format!("{p:.4}") } else { format!("{p:.2e}") }
}
