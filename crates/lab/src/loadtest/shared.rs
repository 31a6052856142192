//! What the players of a run share: the game budget and the deadline,
//! the pace, the steady window's bounds, the operator mode's keys.

use super::shadow::Shadow;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub(super) struct Shared {
    /// `host:port` of the server.
    pub(super) addr: String,
    pub(super) url: String,
    pub(super) games_left: AtomicI64,
    pub(super) deadline: Instant,
    pub(super) started: AtomicU64,
    /// Time between two requests of one player, when paced.
    pub(super) interval: Option<Duration>,
    /// The run's start, when a timeline is kept.
    pub(super) timeline_from: Option<Instant>,
    /// Every player waits here once registered.
    pub(super) ready: tokio::sync::Barrier,
    /// Game requests (purchases and actions) answered so far, and actions.
    pub(super) answered: AtomicU64,
    pub(super) answered_actions: AtomicU64,
    /// The steady window's start: every player registered.
    pub(super) all_registered: OnceLock<Instant>,
    /// Its end: the first player to find no game left (or the deadline),
    /// with `answered` and `answered_actions` at that moment.
    pub(super) budget_spent: OnceLock<(Instant, u64, u64)>,
    /// Operator mode: the keys that sign the players' launches.
    pub(super) launch_keys: Option<wallet::Keys>,
    /// `--idempotency-keys`: the run's prefix of its purchases' keys (its
    /// process and start, so that two runs on one database never share a
    /// key: a player launched again by a later run is the same player).
    pub(super) purchase_keys: Option<String>,
    /// Purchases sent so far (each key's number).
    pub(super) purchases_sent: AtomicU64,
    /// `--shadow-wallet`: the operator mode's wallet calls, sent beside the run.
    pub(super) shadow: Option<Shadow>,
}

impl Shared {
    /// A run of `players` with `games` to play before `deadline`, paced
    /// every `interval` per player when given.
    pub(super) fn new(
        addr: String,
        url: String,
        games: i64,
        deadline: Instant,
        interval: Option<Duration>,
        players: usize,
    ) -> Shared {
        Shared {
            addr,
            url,
            games_left: AtomicI64::new(games),
            deadline,
            started: AtomicU64::new(0),
            interval,
            timeline_from: None,
            ready: tokio::sync::Barrier::new(players),
            answered: AtomicU64::new(0),
            answered_actions: AtomicU64::new(0),
            all_registered: OnceLock::new(),
            budget_spent: OnceLock::new(),
            launch_keys: None,
            purchase_keys: None,
            purchases_sent: AtomicU64::new(0),
            shadow: None,
        }
    }

    /// A game request answered, counted for the steady window.
    pub(super) fn answered(&self, action: bool) {
        self.answered.fetch_add(1, Ordering::Relaxed);
        if action {
            self.answered_actions.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The steady window ends (the first call counts).
    pub(super) fn budget_spent(&self) {
        self.budget_spent.get_or_init(|| {
            (Instant::now(), self.answered.load(Ordering::Relaxed), self.answered_actions.load(Ordering::Relaxed))
        });
    }

    /// Whether a request sent now falls inside the steady window.
    pub(super) fn steady(&self) -> bool {
        self.budget_spent.get().is_none()
    }
}
