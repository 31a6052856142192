//! [`App`]: a running server (listener, storage, writer), started by
//! `as-capone serve` and by the tests' `spawn_app()` on port 0.

use crate::config::Config;
use crate::fairness::ServerSeeds;
use crate::http::{AppState, router};
use crate::keys::Keyring;
use crate::metrics::Metrics;
use crate::store::Store;
use anyhow::Context;
use math::PrizeTable;
use sha2::Digest;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What a server is started with.
#[derive(Clone, Debug)]
pub struct AppOptions {
    pub config: Config,
    /// The prize table of a first start's emission.
    pub table: PrizeTable,
    /// Where ticket seeds come from; only Rust code (tests) can choose
    /// anything but the OS CSPRNG.
    pub seeds: ServerSeeds,
}

impl AppOptions {
    /// The table named by the configuration, or the example table.
    pub fn from_config(config: Config) -> anyhow::Result<AppOptions> {
        let table = match &config.table {
            Some(path) => PrizeTable::load(path).map_err(|e| anyhow::anyhow!("{e}"))?,
            None => PrizeTable::example(),
        };
        Ok(AppOptions { config, table, seeds: ServerSeeds::FromKey })
    }
}

/// A running server.
pub struct App {
    addr: SocketAddr,
    ops_addr: Option<SocketAddr>,
    store: Arc<Store>,
    metrics: Arc<Metrics>,
    stop: watch::Sender<bool>,
    /// The players' listener, then the operations listener if any.
    tasks: Vec<JoinHandle<std::io::Result<()>>>,
}

/// Connections of the operations listener: a scraper and a few probes.
const OPS_MAX_CONNECTIONS: usize = 16;

impl App {
    /// Opens the database (creating and migrating it, making the first
    /// emission and the demo player on first start), binds the listener and
    /// starts serving.
    pub async fn start(options: AppOptions) -> anyhow::Result<App> {
        let AppOptions { config, table, seeds } = options;
        config.check()?;
        if let ServerSeeds::InsecureFixedForTests(_) = seeds {
            tracing::warn!("INSECURE: every ticket gets the same fixed server seed (tests only)");
        }
        crate::http::accepted_table(&table, config.allow_non_regulation_table)
            .map_err(|e| anyhow::anyhow!("prize table: {e}"))?;
        let (keys, origin) = Keyring::load(&config, seeds.fixed())?;
        tracing::info!("{origin}");
        let metrics = Arc::new(Metrics::new());
        if let Some(dir) = &config.backup_dir {
            metrics.watch_backups(dir.clone());
        }
        let store = open_store(&config, &metrics, keys, &origin).await?;
        let emission = store.bootstrap(&config, &table).await?;
        if config.wallet == crate::config::WalletMode::Internal {
            refuse_operator_business(&store).await?;
        }
        let (listener, ops_listener) = bind(&config).await?;
        let addr = listener.local_addr()?;
        let ops_addr = ops_listener.as_ref().map(|l| l.local_addr()).transpose()?;
        let wallet = match config.wallet {
            crate::config::WalletMode::Operator => {
                Some(Arc::new(crate::operator::OperatorWallet::new(&config, store.clone(), metrics.clone())?))
            }
            crate::config::WalletMode::Internal => None,
        };
        let state = app_state(&config, &store, &metrics, wallet.clone())?;
        let (stop, stopped) = watch::channel(false);
        let stop_when = move || {
            let mut stopped = stopped.clone();
            async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            }
        };
        let limits = crate::http::listener::Limits {
            max_connections: config.max_connections,
            header_read_timeout: Duration::from_millis(config.header_read_timeout_ms),
            shutdown_grace: Duration::from_millis(config.shutdown_grace_ms),
        };
        let ops = ops_listener.map(|l| (l, crate::http::ops_router(state.clone())));
        let mut tasks = vec![tokio::spawn(crate::http::listener::serve(listener, router(state), limits, stop_when()))];
        tasks.push(tokio::spawn(expire_counters(store.clone(), longest_limit_window_ms(&config), stop_when())));
        if let Some(path) = config.seen_path() {
            let (seen_store, stop) = (store.clone(), stop_when());
            tasks.push(tokio::spawn(async move {
                crate::store::watch_seen(seen_store, path, stop).await;
                Ok(())
            }));
        }
        if let Some(wallet) = wallet {
            let window = config.signature_window_ms as i64;
            tasks.push(tokio::spawn(crate::operator::worker::run(wallet, metrics.clone(), window, stop_when())));
            tracing::info!(
                "operator mode: the wallet at {}, launches at {}",
                config.operator_wallet_url.as_deref().unwrap_or_default(),
                config.public_base()
            );
        }
        if let Some((ops_listener, ops_app)) = ops {
            let ops_limits = crate::http::listener::Limits { max_connections: OPS_MAX_CONNECTIONS, ..limits };
            tasks.push(tokio::spawn(crate::http::listener::serve(ops_listener, ops_app, ops_limits, stop_when())));
        }
        let demo = if config.demo_token.is_empty() {
            String::new()
        } else {
            format!(", demo player token `{}`", config.demo_token)
        };
        tracing::info!("as-capone listening on http://{addr}, database {}, {emission}{demo}", store.describe());
        if let Some(ops) = ops_addr {
            tracing::info!("operations (/metrics, /healthz) on http://{ops}");
        }
        Ok(App { addr, ops_addr, store, metrics, stop, tasks })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The operations listener's address, when `ops_listen` is set.
    pub fn ops_addr(&self) -> Option<SocketAddr> {
        self.ops_addr
    }

    /// `http://ADDR`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Graceful stop: no new connections, in-flight requests finish, the
    /// writes queued are committed, the database is closed.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.stop.send(true);
        for task in self.tasks {
            task.await.context("server task")?.context("server")?;
        }
        self.store.close().await.map_err(|e| anyhow::anyhow!("closing the database: {e}"))?;
        tracing::info!("stopped");
        Ok(())
    }

    /// Serves until SIGINT or SIGTERM, then stops gracefully.
    pub async fn run_until_signal(self) -> anyhow::Result<()> {
        shutdown_signal().await;
        tracing::info!("signal received: finishing in-flight requests");
        self.shutdown().await
    }
}

/// Opens the database; one that is refused leaves no key file behind that
/// this start made.
async fn open_store(
    config: &Config,
    metrics: &Arc<Metrics>,
    keys: Keyring,
    origin: &crate::keys::KeyOrigin,
) -> anyhow::Result<Arc<Store>> {
    match Store::open(config, metrics.clone(), keys).await {
        Ok(store) => Ok(Arc::new(store)),
        Err(e) => {
            if let Some(removed) = e.downcast_ref::<crate::store::SchemaError>().and_then(|_| origin.undo_creation()) {
                tracing::warn!("{removed}");
            }
            Err(e)
        }
    }
}

/// Refuses to start in the internal mode a database that holds operator-mode
/// business not finished: money owed to or held for an operator's wallet is
/// never settled by the internal ledger, so such a database stays in
/// operator mode.
async fn refuse_operator_business(store: &Store) -> anyhow::Result<()> {
    let (owed, _) = store.outbox_stats().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let open = store.unresolved_rounds().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let playing = store.operator_games_in_play().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    anyhow::ensure!(
        owed + open + playing == 0,
        "this database has operator-mode business not finished ({owed} credits or rollbacks owed to the \
         operator's wallet, {open} purchases unsettled, {playing} games in play bought from it): start it \
         with wallet = \"operator\" (docs/operator-integration.md)"
    );
    Ok(())
}

/// The players' listener, and the operations listener when `ops_listen` is set.
async fn bind(config: &Config) -> anyhow::Result<(TcpListener, Option<TcpListener>)> {
    let listener =
        TcpListener::bind(&config.listen).await.with_context(|| format!("cannot listen on {}", config.listen))?;
    let ops_listener = match &config.ops_listen {
        Some(ops) => {
            Some(TcpListener::bind(ops).await.with_context(|| format!("cannot listen on {ops} (ops_listen)"))?)
        }
        None => None,
    };
    Ok((listener, ops_listener))
}

/// What the handlers reach, from the configuration: the tokens' hashes, the
/// limits, the rules, and in operator mode the wallet and the launch's keys.
fn app_state(
    config: &Config,
    store: &Arc<Store>,
    metrics: &Arc<Metrics>,
    wallet: crate::http::Wallet,
) -> anyhow::Result<AppState> {
    let launcher = match &wallet {
        Some(_) => Some(Arc::new(crate::http::Launcher {
            keys: config.wallet_keys()?,
            public_base: config.public_base(),
            ttl_ms: config.launch_ttl_s as i64 * 1000,
        })),
        None => None,
    };
    Ok(AppState {
        wallet,
        launcher,
        certifying: Default::default(),
        store: store.clone(),
        metrics: metrics.clone(),
        body_limit: config.body_limit_bytes,
        operator_tokens: Arc::new(
            config.operator_tokens.iter().map(|t| sha2::Sha256::digest(t.as_bytes()).into()).collect(),
        ),
        allow_non_regulation_table: config.allow_non_regulation_table,
        retailers: Arc::new(
            config.retailers().into_iter().map(|(shop, t)| (sha2::Sha256::digest(t.as_bytes()).into(), shop)).collect(),
        ),
        retail_pay_any_shop: config.retail_pay_any_shop,
        claim_days: config.claim_days,
        payout_ceilings: std::sync::Arc::new(config.payout_ceilings()),
        trust_forwarded_for: config.trust_forwarded_for,
        trusted_proxy_hops: config.trusted_proxy_hops,
        redeem_limits: crate::store::RedeemLimits {
            per_network: config.redeem_failures_per_address,
            global: config.redeem_failures_global,
            per_network_slowed: config.redeem_failures_per_address_slowed,
            window_ms: config.redeem_window_s as i64 * 1000,
        },
        request_timeout: Duration::from_millis(config.request_timeout_ms),
        registrations: crate::http::PerNetwork {
            limit: config.registrations_per_address,
            window_ms: config.registration_window_s as i64 * 1000,
            ceiling: store.ceilings().registrations,
        },
        demo_games: config.demo_games,
        demos: crate::http::PerNetwork {
            limit: config.demo_games_per_address,
            window_ms: config.demo_window_s as i64 * 1000,
            ceiling: store.ceilings().demo_games,
        },
        logins: crate::http::PerNetwork {
            limit: config.logins_per_address,
            window_ms: config.login_window_s as i64 * 1000,
            ceiling: None,
        },
        session_ms: i64::from(config.session_days) * domain::account::DAY_MS,
        password_hashes: Arc::new(crate::http::PasswordHashes::new(
            config.password_hashes(),
            Duration::from_millis(config.password_hash_wait_ms),
        )),
        limit_rules: domain::account::LimitRules {
            cooling_off_ms: i64::from(config.limit_cooling_off_hours) * 3_600_000,
            stake_limit_required: config.stake_limit_required,
            // The store prices each request on the limits with the ticket on sale.
            price_cents: domain::account::checked_price(None),
        },
        odds: Arc::new(std::sync::Mutex::new(std::collections::HashMap::new())),
    })
}

/// The longest window of any limit on guessing: a counter older than it
/// counts for nothing.
fn longest_limit_window_ms(config: &Config) -> i64 {
    let configured =
        config.redeem_window_s.max(config.login_window_s).max(config.registration_window_s).max(config.demo_window_s);
    (configured as i64 * 1000).max(domain::limits::LOGIN_ATTEMPT_WINDOW_MS)
}

/// Once a minute, deletes the limits' counters whose window is over, so
/// that guesses from ever new networks do not grow the table without end,
/// and the demo games older than a day (docs/player-api.md "Demo games").
async fn expire_counters(
    store: Arc<Store>,
    window_ms: i64,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => return Ok(()),
            _ = tick.tick() => {
                if let Err(e) = store.expire_counters(crate::store::now_ms() - window_ms).await {
                    tracing::warn!(error = %e, "deleting the limits' expired counters");
                }
                let old = crate::store::now_ms() - domain::demo::DEMO_LIFETIME_MS;
                if let Err(e) = store.purge_demos(old).await {
                    tracing::warn!(error = %e, "deleting the demo games older than a day");
                }
            }
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
