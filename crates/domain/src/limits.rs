//! The limits on guessing, decided as plain code (docs/limits.md): wrong
//! play codes per client network, logins per network and per account,
//! registrations per network. Their counters live in the database
//! (`limit_counters`), so that every limit holds across server processes
//! and restarts; each is read (and on PostgreSQL locked) in the same unit
//! that counts, so that attempts sent at once take turns.
//!
//! A client's **network** is its IPv4 /24 or its IPv6 /64: one customer of
//! an IPv6 provider holds a whole /64 (2^64 addresses), so counting single
//! addresses would give them unlimited guesses.

use crate::changes::CounterWrite;
use crate::error::AppError;
use std::net::IpAddr;

/// A counter as stored: the count in its window, the window's start and
/// the last admitted attempt (for the login back-off), in unix ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counter {
    pub window_start_ms: i64,
    pub count: i64,
    pub last_ms: i64,
}

impl Counter {
    /// The count in force at `now` for a window of `window_ms` (0 once it is over).
    pub fn count_at(&self, now: i64, window_ms: i64) -> i64 {
        if self.window_start_ms > now - window_ms { self.count } else { 0 }
    }

    /// Seconds until the window ends (at least 1).
    pub fn retry_after_s(&self, now: i64, window_ms: i64) -> u64 {
        seconds_until(self.window_start_ms + window_ms, now)
    }
}

/// Whole seconds from `now` until `at`, at least 1.
pub fn seconds_until(at: i64, now: i64) -> u64 {
    ((at - now).max(1) as u64).div_ceil(1000)
}

impl CounterWrite {
    pub fn add(bucket: &str, add: i64, now: i64, window_ms: i64) -> CounterWrite {
        CounterWrite { bucket: bucket.to_string(), now, window_ms, add, admit: false, reset: false }
    }
}

/// The client network an address belongs to: `203.0.113.0/24`,
/// `2001:db8:1:2::/64` (an IPv4-mapped IPv6 address is its IPv4).
pub fn network(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            format!("{a}.{b}.{c}.0/24")
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => network(IpAddr::V4(v4)),
            None => {
                let s = v6.segments();
                let prefix = std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
                format!("{prefix}/64")
            }
        },
    }
}

/// The limits on wrong play codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedeemLimits {
    /// Wrong codes per network and window.
    pub per_network: u32,
    /// Wrong codes from everyone per window past which guessing is slowed.
    pub global: u32,
    /// Wrong codes per network and window while guessing is slowed.
    pub per_network_slowed: u32,
    pub window_ms: i64,
}

/// The global counter of wrong play codes.
pub const REDEEM_GLOBAL: &str = "redeem:global";

/// A network's counter of wrong play codes.
pub fn redeem_bucket(network: &str) -> String {
    format!("redeem:{network}")
}

/// Whether guessing is slowed at `now`: the wrong codes from everyone
/// reached the global limit in its window.
pub fn redeem_slowed(global: &Counter, limits: &RedeemLimits, now: i64) -> bool {
    limits.global > 0 && global.count_at(now, limits.window_ms) >= i64::from(limits.global)
}

/// Whether a network may try a play code: refused (429) once its wrong
/// codes in the window reach its limit (the lower one while guessing is
/// slowed). Nothing else refuses: a right code from any other network
/// always opens its ticket, whatever the rest of the world sends.
pub fn redeem_admit(net: &Counter, global: &Counter, limits: &RedeemLimits, now: i64) -> Result<(), AppError> {
    let w = limits.window_ms;
    let slowed = redeem_slowed(global, limits, now);
    let limit = if slowed { limits.per_network_slowed } else { limits.per_network };
    if limits.per_network == 0 || net.count_at(now, w) < i64::from(limit) {
        return Ok(());
    }
    // While slowed, a network under the normal limit may go on when the
    // global window (or its own) ends.
    let mut retry_after_s = net.retry_after_s(now, w);
    if slowed && net.count_at(now, w) < i64::from(limits.per_network) {
        retry_after_s = retry_after_s.min(global.retry_after_s(now, w));
    }
    Err(AppError::TooManyAttempts {
        message: format!(
            "too many wrong play codes from your network{}: try again in {retry_after_s} s",
            if slowed { " while guessing is slowed for everyone" } else { "" }
        ),
        retry_after_s,
    })
}

/// The counts a wrong play code adds: one to its network, one to everyone's.
pub fn redeem_wrong(network_bucket: &str, limits: &RedeemLimits, now: i64) -> Vec<CounterWrite> {
    vec![
        CounterWrite::add(network_bucket, 1, now, limits.window_ms),
        CounterWrite::add(REDEEM_GLOBAL, 1, now, limits.window_ms),
    ]
}

/// Whether this wrong code fills its network's bucket (the next is refused).
pub fn redeem_fills(net: &Counter, global: &Counter, limits: &RedeemLimits, now: i64) -> bool {
    let limit = if redeem_slowed(global, limits, now) { limits.per_network_slowed } else { limits.per_network };
    limits.per_network > 0 && net.count_at(now, limits.window_ms) + 1 == i64::from(limit)
}

/// A fixed window of attempts per client network (logins, registrations):
/// the attempt is counted, or refused past `limit` (0: no limit).
pub fn attempt(
    bucket: &str,
    counter: &Counter,
    limit: u32,
    window_ms: i64,
    what: &str,
    now: i64,
) -> Result<Option<CounterWrite>, AppError> {
    if limit == 0 {
        return Ok(None);
    }
    if counter.count_at(now, window_ms) >= i64::from(limit) {
        let retry_after_s = counter.retry_after_s(now, window_ms);
        return Err(AppError::TooManyAttempts {
            message: format!("too many {what} from your network: try again in {retry_after_s} s"),
            retry_after_s,
        });
    }
    Ok(Some(CounterWrite::add(bucket, 1, now, window_ms)))
}

/// A global ceiling on what anonymous clients can make the server store
/// (docs/limits.md "Ceilings"): at most `limit` per window from everyone,
/// whatever the number of networks, then 503 `unavailable` with
/// `Retry-After` until the window ends. Counted in the database like the
/// per-network limits, so that it holds across processes and restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ceiling {
    /// Its name: the refusal's `params.ceiling` and the metrics' label.
    pub name: &'static str,
    pub limit: u32,
    pub window_ms: i64,
}

/// The window of every ceiling.
pub const CEILING_WINDOW_MS: i64 = 3_600_000;

/// The ceilings' names, in their lock order (a unit locks a client's own
/// counters first, then these, in this order).
pub const CEILINGS: [&str; 3] = [DEMO_GAMES, REGISTRATIONS, LIMIT_COUNTERS];
/// Demo games started by everyone per hour.
pub const DEMO_GAMES: &str = "demo_games";
/// Players registered by everyone per hour.
pub const REGISTRATIONS: &str = "registrations";
/// Windows of the limits' counters opened per hour: the rows of
/// `limit_counters` that new networks and new logins create.
pub const LIMIT_COUNTERS: &str = "limit_counters";

/// A demo game is kept a day and removed by the minutely purge: the games
/// stored at any instant began within a day and a minute (less than a day
/// and an hour, whatever the purge's delays), a span that meets at most
/// 24 + 2 windows of an hour, each beginning an hour or more after the
/// last. At most `alive / 26` a window keeps at most `alive` stored.
pub const DEMO_WINDOWS_ALIVE: u32 = 26;

impl Ceiling {
    /// `limit` per hour (0: no ceiling).
    pub fn hourly(name: &'static str, limit: u32) -> Option<Ceiling> {
        (limit > 0).then_some(Ceiling { name, limit, window_ms: CEILING_WINDOW_MS })
    }

    /// Its counter's bucket.
    pub fn bucket(&self) -> String {
        format!("ceiling:{}", self.name)
    }

    /// Whether `add` more fit in the window at `now`: their count, or 503
    /// `unavailable` with `Retry-After` (the window's end) and
    /// `params.ceiling`. Nothing is counted when nothing is added.
    pub fn admit(&self, counter: &Counter, add: i64, now: i64) -> Result<Option<CounterWrite>, AppError> {
        if add == 0 {
            return Ok(None);
        }
        if counter.count_at(now, self.window_ms) + add > i64::from(self.limit) {
            let retry_after_s = counter.retry_after_s(now, self.window_ms);
            return Err(AppError::Busy {
                message: format!(
                    "the server takes no more {} for now (at most {} an hour from everyone): try again in {retry_after_s} s",
                    self.name.replace('_', " "),
                    self.limit
                ),
                retry_after_s,
            }
            .with(crate::params! { "ceiling": self.name }));
        }
        Ok(Some(CounterWrite::add(&self.bucket(), add, now, self.window_ms)))
    }

    /// The share of the ceiling used in the window at `now` (the gauge).
    pub fn use_ratio(&self, counter: &Counter, now: i64) -> f64 {
        counter.count_at(now, self.window_ms) as f64 / f64::from(self.limit)
    }
}

/// The ceiling a refusal came from, if it is a ceiling's.
pub fn ceiling_of(e: &AppError) -> Option<&'static str> {
    let AppError::Detailed { params, .. } = e else { return None };
    let name = params.get("ceiling")?.as_str()?;
    matches!(e.inner(), AppError::Busy { .. }).then(|| CEILINGS.into_iter().find(|c| *c == name)).flatten()
}

/// The ceilings of a server (the server's configuration): demo games kept,
/// registrations per hour, the limits' counters opened per hour.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ceilings {
    pub demo_games: Option<Ceiling>,
    pub registrations: Option<Ceiling>,
    pub limit_counters: Option<Ceiling>,
}

impl Ceilings {
    /// The ceilings of a server keeping at most `demo_games_alive` demo
    /// games and opening at most `registrations_per_hour` accounts and
    /// `limit_counters_per_hour` counters an hour (0: no ceiling).
    pub fn new(demo_games_alive: u32, registrations_per_hour: u32, limit_counters_per_hour: u32) -> Ceilings {
        Ceilings {
            demo_games: Ceiling::hourly(DEMO_GAMES, demo_games_alive / DEMO_WINDOWS_ALIVE),
            registrations: Ceiling::hourly(REGISTRATIONS, registrations_per_hour),
            limit_counters: Ceiling::hourly(LIMIT_COUNTERS, limit_counters_per_hour),
        }
    }

    /// Every ceiling set.
    pub fn all(&self) -> impl Iterator<Item = Ceiling> {
        [self.demo_games, self.registrations, self.limit_counters].into_iter().flatten()
    }
}

/// Password checks of one account that cost nothing.
pub const LOGIN_FREE_ATTEMPTS: i64 = 5;
/// The longest wait between two password checks of one account.
pub const LOGIN_BACKOFF_MAX_MS: i64 = 300_000;
/// An account's attempts are forgotten an hour after the first, or at its
/// owner's next successful login.
pub const LOGIN_ATTEMPT_WINDOW_MS: i64 = 3_600_000;

/// An account's counter of password checks.
pub fn account_bucket(login: &str) -> String {
    format!("login:account:{login}")
}

/// The wait after `attempts` password checks without a success: none for
/// the first [`LOGIN_FREE_ATTEMPTS`], then 1 s, doubling, at most 5 minutes.
pub fn login_backoff_ms(attempts: i64) -> i64 {
    if attempts < LOGIN_FREE_ATTEMPTS {
        return 0;
    }
    let doublings = (attempts - LOGIN_FREE_ATTEMPTS).min(20) as u32;
    (1000i64 << doublings).min(LOGIN_BACKOFF_MAX_MS)
}

/// A known device's own counter of password checks for its account (see
/// [`login_admit`]): `device` is the device token's random id, or the hash
/// of a valid token of the account's player that the request carried.
pub fn device_bucket(device: &str) -> String {
    format!("login:device:{device}")
}

/// Whether one more password may be checked in `bucket`: an account's
/// (every stranger shares it, from anywhere) or a known device's
/// ([`device_bucket`]: a device token of the account, or a valid token of
/// its player, which only the owner's devices hold). Every check is
/// counted when it is admitted (before the slow hash), so that checks sent
/// at once take turns; past the free ones, one is admitted per back-off
/// after the last. Strangers who fill the account's back-off never touch a
/// device's, so guessing cannot lock the owner out of a device where they
/// logged in before; and a stolen device token guesses no faster than the
/// account's own back-off allows.
pub fn login_admit(bucket: &str, counter: &Counter, now: i64) -> Result<Option<CounterWrite>, AppError> {
    let attempts = counter.count_at(now, LOGIN_ATTEMPT_WINDOW_MS);
    let next = counter.last_ms + login_backoff_ms(attempts);
    if attempts >= LOGIN_FREE_ATTEMPTS && now < next {
        let retry_after_s = seconds_until(next, now);
        return Err(AppError::TooManyAttempts {
            message: format!(
                "too many wrong passwords for this login: try again in {retry_after_s} s, or from a device where you logged in before"
            ),
            retry_after_s,
        });
    }
    Ok(Some(CounterWrite { admit: true, ..CounterWrite::add(bucket, 1, now, LOGIN_ATTEMPT_WINDOW_MS) }))
}

/// The right password: the account's attempts are forgotten.
pub fn login_succeeded(bucket: &str, now: i64) -> CounterWrite {
    CounterWrite { reset: true, ..CounterWrite::add(bucket, 0, now, LOGIN_ATTEMPT_WINDOW_MS) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn networks_are_ipv4_slash_24_and_ipv6_slash_64() {
        assert_eq!(network(ip("203.0.113.77")), "203.0.113.0/24");
        assert_eq!(network(ip("203.0.113.1")), network(ip("203.0.113.254")));
        assert_ne!(network(ip("203.0.113.1")), network(ip("203.0.114.1")));
        assert_eq!(network(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd")), "2001:db8:1:2::/64");
        assert_eq!(network(ip("2001:db8:1:2::1")), network(ip("2001:db8:1:2:ffff:ffff:ffff:ffff")));
        assert_ne!(network(ip("2001:db8:1:2::1")), network(ip("2001:db8:1:3::1")));
        assert_eq!(network(ip("::ffff:198.51.100.9")), "198.51.100.0/24");
    }

    const LIMITS: RedeemLimits =
        RedeemLimits { per_network: 20, global: 2000, per_network_slowed: 2, window_ms: 900_000 };

    fn counter(count: i64, start: i64) -> Counter {
        Counter { window_start_ms: start, count, last_ms: 0 }
    }

    #[test]
    fn a_network_is_refused_at_its_limit_until_its_window_ends() {
        let now = 1_000_000;
        let quiet = Counter::default();
        assert!(redeem_admit(&counter(19, now - 10), &quiet, &LIMITS, now).is_ok());
        let refused = redeem_admit(&counter(20, now - 100_000), &quiet, &LIMITS, now).unwrap_err();
        assert_eq!(refused.code(), "too_many_attempts");
        assert!(matches!(refused, AppError::TooManyAttempts { retry_after_s: 800, .. }), "{refused:?}");
        // An old window no longer counts.
        assert!(redeem_admit(&counter(20, now - 900_000), &quiet, &LIMITS, now).is_ok());
    }

    #[test]
    fn past_the_global_limit_guessing_is_slowed_and_nobody_is_refused_for_others() {
        let now = 5_000_000;
        let busy = counter(2000, now - 300_000);
        // A network without wrong codes is never refused, whatever everyone sent.
        assert!(redeem_admit(&Counter::default(), &busy, &LIMITS, now).is_ok());
        assert!(redeem_admit(&counter(1, now), &busy, &LIMITS, now).is_ok());
        // Its own wrong codes count against the slowed limit; it may go on
        // when the global window ends (600 s) rather than its own (900 s).
        let e = redeem_admit(&counter(2, now), &busy, &LIMITS, now).unwrap_err();
        assert!(matches!(e, AppError::TooManyAttempts { retry_after_s: 600, .. }), "{e:?}");
        assert!(redeem_fills(&counter(1, now), &busy, &LIMITS, now));
        assert!(!redeem_fills(&counter(1, now), &Counter::default(), &LIMITS, now));
    }

    #[test]
    fn the_login_back_off_doubles_to_five_minutes() {
        assert_eq!((0..5).map(login_backoff_ms).collect::<Vec<_>>(), [0; 5]);
        assert_eq!(login_backoff_ms(5), 1000);
        assert_eq!(login_backoff_ms(6), 2000);
        assert_eq!(login_backoff_ms(13), 256_000);
        assert_eq!(login_backoff_ms(14), 300_000);
        assert_eq!(login_backoff_ms(1_000_000), 300_000);
    }

    #[test]
    fn an_account_takes_one_attempt_per_back_off_and_its_owner_any() {
        let now = 10_000_000;
        let b = account_bucket("ana");
        // The first five are admitted at once, each counted.
        let fresh = Counter { window_start_ms: now - 60_000, count: 4, last_ms: now };
        let w = login_admit(&b, &fresh, now).unwrap().unwrap();
        assert!(w.admit && w.add == 1 && !w.reset);
        let c = Counter { window_start_ms: now - 60_000, count: 6, last_ms: now - 500 };
        // 6 attempts: 2 s from the last admitted one.
        let e = login_admit(&b, &c, now).unwrap_err();
        assert!(matches!(e, AppError::TooManyAttempts { retry_after_s: 2, .. }), "{e:?}");
        // The owner's device counts on its own bucket, which strangers never fill.
        let device = device_bucket("0123abcd");
        assert!(login_admit(&device, &Counter::default(), now).unwrap().unwrap().admit);
        assert!(login_admit(&device, &c, now).is_err(), "a device's own guesses back off like the account's");
        // After the back-off one attempt is admitted, and marks its time.
        assert!(login_admit(&b, &c, now + 1500).unwrap().unwrap().admit);
        // An hour after the first attempt they are forgotten.
        let later = now - 60_000 + LOGIN_ATTEMPT_WINDOW_MS;
        assert_eq!(login_admit(&b, &c, later).unwrap().unwrap().add, 1);
        assert!(login_succeeded(&b, now).reset);
    }

    #[test]
    fn a_ceiling_refuses_everyone_past_its_limit_until_its_window_ends() {
        let now = 10_000_000;
        let c = Ceiling::hourly(DEMO_GAMES, 3).unwrap();
        assert_eq!(Ceiling::hourly(DEMO_GAMES, 0), None, "0: no ceiling");
        let w = c.admit(&counter(2, now - 1_000), 1, now).unwrap().unwrap();
        assert_eq!((w.bucket.as_str(), w.add, w.window_ms), ("ceiling:demo_games", 1, CEILING_WINDOW_MS));
        let e = c.admit(&counter(3, now - 600_000), 1, now).unwrap_err();
        assert_eq!((e.status(), e.code(), ceiling_of(&e)), (503, "unavailable", Some(DEMO_GAMES)));
        assert_eq!(e.retry_after_s(), Some(3000), "until the window's end");
        // Two rows opened at once need room for two.
        assert!(c.admit(&counter(2, now), 2, now).is_err());
        assert_eq!(c.admit(&counter(3, now), 0, now).unwrap(), None, "nothing added: nothing counted");
        // A window that is over counts for nothing.
        assert!(c.admit(&counter(3, now - CEILING_WINDOW_MS), 1, now).is_ok());
        assert_eq!(ceiling_of(&AppError::Busy { message: "x".into(), retry_after_s: 1 }), None);
        assert!((c.use_ratio(&counter(2, now), now) - 2.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn the_demo_ceiling_keeps_at_most_the_games_alive_configured() {
        let hourly = Ceilings::new(520_000, 0, 0).demo_games.unwrap().limit;
        assert_eq!(hourly, 20_000);
        // A game is kept a day and purged within a minute: the games stored
        // at an instant began within 24 h + 1 min, which meet at most 26
        // windows of an hour (each starting at least an hour after the last).
        let span_ms = crate::demo::DEMO_LIFETIME_MS + 60_000;
        let windows = span_ms / CEILING_WINDOW_MS + 2;
        assert_eq!(windows, i64::from(DEMO_WINDOWS_ALIVE));
        assert!(i64::from(hourly) * windows <= 520_000);
    }

    #[test]
    fn attempts_past_their_limit_are_refused_and_zero_is_no_limit() {
        let now = 1_000_000;
        assert_eq!(attempt("b", &counter(100, now), 0, 60_000, "x", now).unwrap(), None);
        assert!(attempt("b", &counter(2, now), 3, 60_000, "x", now).unwrap().is_some());
        let e = attempt("b", &counter(3, now - 20_000), 3, 60_000, "logins", now).unwrap_err();
        assert!(matches!(e, AppError::TooManyAttempts { retry_after_s: 40, .. }), "{e:?}");
    }
}
