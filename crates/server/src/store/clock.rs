//! The clock, read by the shell once per request: the core is given `now`
//! (docs/style.md, "`now` is passed in").

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}
