//! [`Metrics`]: the Prometheus registry behind `GET /metrics`.
//!
//! Game counters move only after the commit that makes their event durable,
//! so they never count a sale or a prize that a crash could undo. They count
//! this process's writes (Prometheus sums the processes); the gauges of
//! active games, unsealed audit entries and the operator mode's outbox and
//! rounds in flight are read from the database at each scrape, the same
//! for all (the outbox's as the desk's health reads it,
//! `operator::WalletFigures`); the newest backup's age from the backup
//! folder, when the server is given one (`backup_dir`).

use prometheus::{
    Encoder, Gauge, GaugeVec, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts,
    Registry, TextEncoder,
};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub struct Metrics {
    registry: Registry,
    pub requests: IntCounterVec,
    pub latency: HistogramVec,
    pub tickets_sold: IntCounter,
    /// Redemptions refused with 429 (too many wrong play codes).
    pub redeem_refused: IntCounter,
    /// Times a client (or everyone) reached the limit of wrong play codes.
    pub redeem_limited: IntCounter,
    pub games_finished: IntCounter,
    pub prizes_paid_cents: IntCounter,
    pub active_games: IntGauge,
    /// Audit entries committed and not chained yet (read at each scrape).
    pub audit_unsealed: IntGauge,
    /// The age of the oldest of them, in seconds (0: none).
    pub audit_unsealed_oldest_age_seconds: IntGauge,
    pub players_created: IntCounter,
    /// Free demo games started (`POST /api/demo`).
    pub demo_games: IntCounter,
    /// Requests refused by a global ceiling, by ceiling (docs/limits.md "Ceilings").
    pub ceiling_refused: IntCounterVec,
    /// The share of each ceiling used in its window (read once a minute).
    pub ceiling_use: GaugeVec,
    pub commit_batch_size: Histogram,
    pub commit_seconds: Histogram,
    /// SQLite: the background connection's checkpoints.
    pub checkpoint_seconds: Histogram,
    /// SQLite: the writer's part of a checkpoint, between two batches.
    pub writer_checkpoint_seconds: Histogram,
    /// SQLite: frames in the WAL at the last checkpoint.
    pub wal_frames: IntGauge,
    /// Operator mode: credits and rollbacks not acknowledged yet.
    pub outbox_depth: IntGauge,
    /// Operator mode: the age of the oldest of them, in seconds.
    pub outbox_oldest_age_seconds: IntGauge,
    /// Operator mode: rounds whose debit is not settled or whose rollback is not acknowledged.
    pub wallet_unresolved_rounds: IntGauge,
    /// Operator mode: calls to the operator's wallet by kind and outcome.
    pub wallet_requests: IntCounterVec,
    /// Operator mode: their latency.
    pub wallet_seconds: HistogramVec,
    /// The age of the newest backup in the backup folder, in seconds
    /// (`+Inf`: none), exported once [`Metrics::watch_backups`] named it.
    pub backup_age_seconds: Gauge,
    /// The backup folder (`backup_dir`), read at each scrape.
    backup_dir: std::sync::OnceLock<PathBuf>,
    /// When this process started counting (the desk's uptime and rates).
    pub started: std::time::Instant,
}

impl Metrics {
    pub fn new() -> Metrics {
        let metrics = Metrics {
            registry: Registry::new(),
            requests: counter_vec(
                "as_capone_http_requests_total",
                "HTTP requests by route and status",
                &["route", "method", "status"],
            ),
            latency: HistogramVec::new(
                HistogramOpts::new("as_capone_http_request_duration_seconds", "HTTP request latency by route")
                    .buckets(vec![0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0]),
                &["route", "method"],
            )
            .expect("metric"),
            tickets_sold: counter("as_capone_tickets_sold_total", "Tickets sold online"),
            redeem_refused: counter(
                "as_capone_redeem_refused_total",
                "Play code redemptions refused with 429: too many wrong codes",
            ),
            redeem_limited: counter(
                "as_capone_redeem_limit_reached_total",
                "Times an address, or all clients, reached the limit of wrong play codes",
            ),
            games_finished: counter("as_capone_games_finished_total", "Tickets whose game is finished"),
            prizes_paid_cents: counter("as_capone_prizes_paid_cents_total", "Prizes credited, in cents"),
            active_games: gauge("as_capone_active_games", "Sold tickets whose game is not finished"),
            audit_unsealed: gauge(
                "as_capone_audit_unsealed_entries",
                "Audit entries committed and not chained yet, in the whole database",
            ),
            audit_unsealed_oldest_age_seconds: gauge(
                "as_capone_audit_unsealed_oldest_age_seconds",
                "Age of the oldest audit entry not chained yet (0: none)",
            ),
            players_created: counter("as_capone_players_created_total", "Players registered"),
            demo_games: counter("as_capone_demo_games_total", "Free demo games started (no money)"),
            ceiling_refused: counter_vec(
                "as_capone_ceiling_refused_total",
                "Requests refused with 503 by a global ceiling on what anonymous clients make the server keep",
                &["ceiling"],
            ),
            ceiling_use: GaugeVec::new(
                Opts::new(
                    "as_capone_ceiling_use_ratio",
                    "Share of each global ceiling used in its current hour (0 to 1)",
                ),
                &["ceiling"],
            )
            .expect("metric"),
            commit_batch_size: Histogram::with_opts(
                HistogramOpts::new("as_capone_commit_batch_size", "Requests sharing one commit (group commit)")
                    .buckets(vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0]),
            )
            .expect("metric"),
            commit_seconds: storage_seconds(
                "as_capone_commit_seconds",
                "Time of one write transaction, BEGIN to durable COMMIT",
            ),
            checkpoint_seconds: storage_seconds(
                "as_capone_checkpoint_seconds",
                "SQLite: time of one WAL checkpoint on the background connection",
            ),
            writer_checkpoint_seconds: storage_seconds(
                "as_capone_writer_checkpoint_seconds",
                "SQLite: time of the writer's part of a WAL checkpoint, between two batches",
            ),
            wal_frames: gauge("as_capone_wal_frames", "SQLite: frames in the WAL at the last checkpoint"),
            outbox_depth: gauge(
                "as_capone_wallet_outbox_depth",
                "Operator mode: credits and rollbacks owed to the operator's wallet, not acknowledged yet",
            ),
            outbox_oldest_age_seconds: gauge(
                "as_capone_wallet_outbox_oldest_age_seconds",
                "Operator mode: age of the oldest credit or rollback not acknowledged yet (0: none)",
            ),
            wallet_unresolved_rounds: gauge(
                "as_capone_wallet_unresolved_rounds",
                "Operator mode: rounds whose debit is not settled or whose rollback is not acknowledged",
            ),
            wallet_requests: counter_vec(
                "as_capone_wallet_requests_total",
                "Operator mode: calls to the operator's wallet",
                &["kind", "outcome"],
            ),
            wallet_seconds: HistogramVec::new(
                HistogramOpts::new("as_capone_wallet_request_seconds", "Operator mode: latency of the wallet's calls")
                    .buckets(vec![0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]),
                &["kind"],
            )
            .expect("metric"),
            backup_age_seconds: Gauge::new(
                "as_capone_backup_age_seconds",
                "Age of the newest backup in backup_dir, from its modification time (+Inf: none)",
            )
            .expect("metric"),
            backup_dir: std::sync::OnceLock::new(),
            started: std::time::Instant::now(),
        };
        // Every ceiling is exported from the start (0), for the alert rules.
        for name in domain::limits::CEILINGS {
            metrics.ceiling_refused.with_label_values(&[name]);
            metrics.ceiling_use.with_label_values(&[name]);
        }
        metrics.register();
        metrics
    }

    /// Registers every metric in the registry that `render` reads.
    fn register(&self) {
        for c in [
            Box::new(self.requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(self.outbox_depth.clone()),
            Box::new(self.outbox_oldest_age_seconds.clone()),
            Box::new(self.wallet_unresolved_rounds.clone()),
            Box::new(self.wallet_requests.clone()),
            Box::new(self.wallet_seconds.clone()),
            Box::new(self.latency.clone()),
            Box::new(self.tickets_sold.clone()),
            Box::new(self.redeem_refused.clone()),
            Box::new(self.redeem_limited.clone()),
            Box::new(self.games_finished.clone()),
            Box::new(self.prizes_paid_cents.clone()),
            Box::new(self.active_games.clone()),
            Box::new(self.audit_unsealed.clone()),
            Box::new(self.audit_unsealed_oldest_age_seconds.clone()),
            Box::new(self.players_created.clone()),
            Box::new(self.demo_games.clone()),
            Box::new(self.ceiling_refused.clone()),
            Box::new(self.ceiling_use.clone()),
            Box::new(self.commit_batch_size.clone()),
            Box::new(self.commit_seconds.clone()),
            Box::new(self.checkpoint_seconds.clone()),
            Box::new(self.writer_checkpoint_seconds.clone()),
            Box::new(self.wal_frames.clone()),
        ] {
            self.registry.register(c).expect("unique metric names");
        }
    }

    /// This process's HTTP requests since it started, and the requests on
    /// `route` with `method` answered with `status` (the desk's figures).
    pub fn requests_served(&self, route: &str, method: &str, status: &str) -> (u64, u64) {
        let (mut all, mut these) = (0, 0);
        for family in prometheus::core::Collector::collect(&self.requests) {
            for m in family.get_metric() {
                let n = m.get_counter().get_value() as u64;
                all += n;
                let label = |name| label_of(m, name);
                if label("route") == Some(route) && label("method") == Some(method) && label("status") == Some(status) {
                    these += n;
                }
            }
        }
        (all, these)
    }

    /// An upper bound of the `q` quantile (0 < q <= 1) of the latency of
    /// `route` with `method` since this process started: the upper bound
    /// of the first histogram bucket holding that share of the requests, in
    /// seconds (`None`: no request yet, or past the last bucket).
    pub fn latency_bound(&self, route: &str, method: &str, q: f64) -> Option<f64> {
        for family in prometheus::core::Collector::collect(&self.latency) {
            for m in family.get_metric() {
                let label = |name| label_of(m, name);
                if label("route") != Some(route) || label("method") != Some(method) {
                    continue;
                }
                let h = m.get_histogram();
                let count = h.get_sample_count();
                if count == 0 {
                    return None;
                }
                let want = (q * count as f64).ceil() as u64;
                return h.get_bucket().iter().find(|b| b.cumulative_count() >= want).map(|b| b.upper_bound());
            }
        }
        None
    }

    /// Exports `as_capone_backup_age_seconds`, the age of the newest backup
    /// in `dir` (`backup_dir`, where `deploy/as-capone-backup.timer` writes).
    pub fn watch_backups(&self, dir: PathBuf) {
        if self.backup_dir.set(dir).is_ok() {
            self.registry.register(Box::new(self.backup_age_seconds.clone())).expect("unique metric names");
        }
    }

    /// Reads the backup folder again (at each scrape), if one is watched.
    pub fn read_backups(&self) {
        let Some(dir) = self.backup_dir.get() else { return };
        let age = match newest_backup(dir) {
            Ok(Some(modified)) => SystemTime::now().duration_since(modified).unwrap_or_default().as_secs_f64(),
            Ok(None) => f64::INFINITY,
            Err(e) => {
                tracing::warn!(error = %e, dir = %dir.display(), "reading the backup folder");
                f64::INFINITY
            }
        };
        self.backup_age_seconds.set(age);
    }

    /// Counts what a committed write did (never before its COMMIT).
    pub fn count(&self, effect: domain::Effect) {
        use domain::Effect;
        match effect {
            Effect::PlayerCreated => self.players_created.inc(),
            Effect::Sold => self.tickets_sold.inc(),
            Effect::Played { finished_prize: Some(prize) } => {
                self.games_finished.inc();
                self.prizes_paid_cents.inc_by(prize);
            }
            Effect::Played { finished_prize: None }
            | Effect::Emission
            | Effect::Retail
            | Effect::Player
            | Effect::WrongCode { .. }
            | Effect::Counted
            | Effect::Wallet => {}
        }
    }

    /// The Prometheus text exposition format.
    pub fn render(&self) -> String {
        let mut buf = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut buf).expect("text encoding");
        String::from_utf8(buf).expect("prometheus text is UTF-8")
    }
}

/// The modification time of the newest backup in `dir`: its regular files,
/// but for hidden ones and the `.tmp` files of a backup being written
/// (`as-capone backup` renames its file into place once it is checked).
fn newest_backup(dir: &Path) -> std::io::Result<Option<SystemTime>> {
    let mut newest = None;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let meta = entry.metadata()?;
        if !meta.is_file() || name.starts_with('.') || name.ends_with(".tmp") {
            continue;
        }
        let modified = meta.modified()?;
        newest = newest.max(Some(modified));
    }
    Ok(newest)
}

/// A counter.
fn counter(name: &str, help: &str) -> IntCounter {
    IntCounter::new(name, help).expect("metric")
}

/// A counter by the values of `labels`.
fn counter_vec(name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    IntCounterVec::new(Opts::new(name, help), labels).expect("metric")
}

/// A gauge.
fn gauge(name: &str, help: &str) -> IntGauge {
    IntGauge::new(name, help).expect("metric")
}

/// A histogram of a storage operation's seconds (commits, checkpoints).
fn storage_seconds(name: &str, help: &str) -> Histogram {
    Histogram::with_opts(
        HistogramOpts::new(name, help).buckets(vec![0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5]),
    )
    .expect("metric")
}

/// The value of label `name` of a collected metric.
fn label_of<'a>(m: &'a prometheus::proto::Metric, name: &str) -> Option<&'a str> {
    m.get_label().iter().find(|l| l.name() == name).map(|l| l.value())
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}
