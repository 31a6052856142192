//! Starting the reference operator: its options, the players created at
//! start, and the running operator.

use crate::app::App;
use crate::chaos::{Chaos, ChaosConfig};
use crate::clock::now_ms;
use crate::ledger::Ledger;
use crate::{admin, serve, wallet_api};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use wallet::Keys;

/// A player created at start when the ledger does not have it yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerSeed {
    /// The operator's reference.
    pub player: String,
    /// Its first balance, in cents.
    pub balance_cents: i64,
}

/// How to run the reference operator.
#[derive(Clone)]
pub struct Options {
    /// Where to listen (port 0: any free port; see [`Running::addr`]).
    pub listen: SocketAddr,
    /// The SQLite ledger's file (created if missing).
    pub database: PathBuf,
    /// The keys shared with the game server: the first signs, any verifies.
    pub keys: Keys,
    /// The bearer token of `/admin/*` and of the demo page; none: those are refused.
    pub admin_token: Option<String>,
    /// The game server's base URL, for launches from the demo page.
    pub game_url: Option<String>,
    /// The chaos switch at start.
    pub chaos: ChaosConfig,
    /// Players created at start when missing (an existing one is left as it is).
    pub players: Vec<PlayerSeed>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets: the keys print their ids only, the token not at all.
        f.debug_struct("Options")
            .field("listen", &self.listen)
            .field("database", &self.database)
            .field("keys", &self.keys)
            .field("admin_token", &self.admin_token.as_ref().map(|_| "(set)"))
            .field("game_url", &self.game_url)
            .field("chaos", &self.chaos)
            .field("players", &self.players)
            .finish()
    }
}

impl Options {
    /// Options with no chaos, no admin token, no game server and no players.
    pub fn new(listen: SocketAddr, database: PathBuf, keys: Keys) -> Options {
        Options {
            listen,
            database,
            keys,
            admin_token: None,
            game_url: None,
            chaos: ChaosConfig::default(),
            players: Vec::new(),
        }
    }
}

/// A running reference operator.
pub struct Running {
    /// The address it listens on.
    pub addr: SocketAddr,
    app: Arc<App>,
    shutdown: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The ledger (tests read it directly).
    pub fn ledger(&self) -> &Ledger {
        &self.app.ledger
    }

    /// The chaos switch (tests change it directly or through `PUT /admin/chaos`).
    pub fn chaos(&self) -> &Chaos {
        &self.app.chaos
    }

    /// Stops listening, cuts the open connections and closes the ledger.
    pub async fn stop(self) {
        let _ = self.shutdown.send(true);
        let _ = self.task.await;
        self.app.ledger.close().await;
    }

    /// Runs until Ctrl-C or SIGTERM, then stops.
    pub async fn run_until_signal(self) {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
            tokio::select! {
                _ = ctrl_c => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        let _ = ctrl_c.await;
        self.stop().await;
    }
}

/// Opens the ledger, creates the missing seed players and starts serving.
pub async fn start(options: Options) -> anyhow::Result<Running> {
    options.chaos.validate().map_err(anyhow::Error::msg)?;
    let ledger = Ledger::open(&options.database).await?;
    let now = now_ms();
    for seed in &options.players {
        if ledger.player(&seed.player, now).await?.is_none() {
            ledger.set_player(&seed.player, seed.balance_cents, None, false, now).await?;
        }
    }
    let app = Arc::new(App {
        ledger,
        keys: options.keys,
        chaos: Chaos::new(options.chaos),
        admin_token: options.admin_token.filter(|t| !t.is_empty()),
        game_url: options.game_url.map(|u| u.trim_end_matches('/').to_string()),
    });
    let router = wallet_api::routes().merge(admin::routes()).with_state(app.clone());
    let listener = tokio::net::TcpListener::bind(options.listen).await?;
    let addr = listener.local_addr()?;
    let (shutdown, watch) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(serve::serve(listener, router, watch));
    Ok(Running { addr, app, shutdown, task })
}
