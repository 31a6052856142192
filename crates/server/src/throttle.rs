//! A per-address limit on new play-money players: one client cannot fill
//! the database with accounts (a hostile test registered 1 124 players a
//! second from one address). A fixed window per address, kept in this
//! process's memory: behind several server processes the limit is per
//! process (the README says so). The table of addresses is bounded: when it
//! holds [`MAX_ADDRESSES`], the expired windows are dropped, and if all are
//! live the new address shares one overflow bucket.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most addresses tracked one by one.
pub const MAX_ADDRESSES: usize = 100_000;
const OVERFLOW: &str = "(overflow)";

pub struct Throttle {
    per_window: u32,
    window: Duration,
    seen: Mutex<HashMap<String, (Instant, u32)>>,
}

impl Throttle {
    /// `per_window` requests per address and `window`; 0: no limit.
    pub fn new(per_window: u32, window: Duration) -> Throttle {
        Throttle { per_window, window, seen: Mutex::new(HashMap::new()) }
    }

    /// Counts one request from `address`: `Err(seconds to wait)` past the limit.
    pub fn check(&self, address: &str, now: Instant) -> Result<(), u64> {
        if self.per_window == 0 {
            return Ok(());
        }
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if !seen.contains_key(address) && seen.len() >= MAX_ADDRESSES {
            let window = self.window;
            seen.retain(|_, (start, _)| now.duration_since(*start) < window);
        }
        let key = if seen.contains_key(address) || seen.len() < MAX_ADDRESSES { address } else { OVERFLOW };
        let entry = seen.entry(key.to_string()).or_insert((now, 0));
        if now.duration_since(entry.0) >= self.window {
            *entry = (now, 0);
        }
        if entry.1 >= self.per_window {
            let left = self.window.saturating_sub(now.duration_since(entry.0));
            return Err(left.as_secs().max(1));
        }
        entry.1 += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_refused_past_its_limit_until_the_window_ends() {
        let t = Throttle::new(3, Duration::from_secs(60));
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(t.check("10.0.0.1", t0), Ok(()));
        }
        assert_eq!(t.check("10.0.0.1", t0 + Duration::from_secs(20)), Err(40));
        // Another address has its own count.
        assert_eq!(t.check("10.0.0.2", t0), Ok(()));
        // A new window.
        assert_eq!(t.check("10.0.0.1", t0 + Duration::from_secs(60)), Ok(()));
    }

    #[test]
    fn zero_is_no_limit() {
        let t = Throttle::new(0, Duration::from_secs(60));
        let t0 = Instant::now();
        for _ in 0..10_000 {
            assert_eq!(t.check("10.0.0.1", t0), Ok(()));
        }
        assert!(t.seen.lock().unwrap().is_empty());
    }

    #[test]
    fn the_table_of_addresses_stays_bounded() {
        let t = Throttle::new(1, Duration::from_secs(60));
        let t0 = Instant::now();
        for i in 0..MAX_ADDRESSES + 10 {
            let _ = t.check(&format!("a{i}"), t0);
        }
        assert_eq!(t.seen.lock().unwrap().len(), MAX_ADDRESSES + 1, "one overflow bucket beyond the bound");
        // Past the window the old entries are dropped for new ones.
        assert_eq!(t.check("late", t0 + Duration::from_secs(61)), Ok(()));
        assert!(t.seen.lock().unwrap().len() < 10);
    }
}
