//! The arguments of `as-capone loadtest`.

use clap::Args;

#[derive(Args, Debug, Clone)]
pub struct LoadtestArgs {
    /// The server's base URL.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// Concurrent players, each playing one game after another.
    #[arg(long, default_value_t = 64)]
    pub players: usize,
    /// Games to play in all (each: a purchase and its actions to the end).
    #[arg(long, default_value_t = 2000)]
    pub games: u64,
    /// Stop starting new games after this many seconds.
    #[arg(long, default_value_t = 300)]
    pub max_seconds: u64,
    /// Worker threads of the client's runtime.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Pace the players so that together they send this many game requests
    /// (purchases and actions) per second, instead of as fast as the server
    /// answers. Latency is then measured from each request's scheduled time
    /// (or from its sending, when the timer woke the player before it), so
    /// a server that falls behind is charged for the wait too (no
    /// coordinated omission). Without it, each player sends its next request
    /// as soon as the previous one is answered (saturation).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Send an Idempotency-Key with each purchase, as the browser page does
    /// (web/api.js): the server then also looks for the key's earlier
    /// purchase (and, in operator mode, for its round still in flight)
    /// before it sells. Without it the purchases carry no key.
    #[arg(long)]
    pub idempotency_keys: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Write the actions' latencies in windows of 100 ms of their sending
    /// (or slot, when paced) to this CSV file, to see when in a run the
    /// tail happened: `start_s,actions,p50_ms,p99_ms,max_ms,
    /// sent_late_p99_ms,sent_late_max_ms`, the last two the load
    /// generator's own lateness in sending (after both the slot and the
    /// previous answer).
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<std::path::PathBuf>,
    /// Whose wallet the players' money is in: `internal` (the server's own
    /// ledger: players register) or `operator` (a reference operator
    /// started here, behind a timing proxy on `--operator-listen`: players
    /// are launched by it; the server must run with `--wallet operator
    /// --operator-wallet-url http://OPERATOR_LISTEN` and the same keys).
    #[arg(long, value_enum, default_value_t = WalletKind::Internal)]
    pub wallet: WalletKind,
    /// Operator mode: every wallet call waits this long at the operator.
    #[arg(long, default_value_t = 20)]
    pub wallet_delay_ms: u64,
    /// Operator mode: where the reference operator's wallet answers (the
    /// game server's `operator_wallet_url`).
    #[arg(long, default_value = "127.0.0.1:9300")]
    pub operator_listen: std::net::SocketAddr,
    /// Operator mode: the keys shared with the game server, `ID:HEX,...`
    /// (the server's `operator_keys`).
    #[arg(long, env = "AS_CAPONE_OPERATOR_KEYS", hide_env_values = true)]
    pub operator_keys: Option<String>,
    /// Operator mode: the directory in which the reference operator's
    /// ledger gets its temporary directory [default: the system's]. Its
    /// SQLite ledger syncs each call to disk: on a disk shared with the
    /// game server it competes with the server's own commits, and caps
    /// the wallet's calls per second (`bench/operator-wallet.sh` puts it
    /// in /dev/shm, so that the wallet answers in its delay).
    #[arg(long, value_name = "DIR")]
    pub operator_ledger_dir: Option<std::path::PathBuf>,
    /// Internal mode: start the reference operator as `--wallet operator`
    /// does (`--wallet-delay-ms`, `--operator-listen`, `--operator-keys` or
    /// fresh keys, `--operator-ledger-dir`) and send it, from this process,
    /// the debit each purchase and the credit each prize would have made,
    /// without the players waiting for them: the operator's side of the
    /// wallet then runs beside the load generator in both modes, as a
    /// control for the operator mode's benchmark (`bench/operator-wallet.sh`
    /// with `SHADOW=1`; docs/load-testing.md).
    #[arg(long)]
    pub shadow_wallet: bool,
}

/// Where the players' money is (`--wallet`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalletKind {
    /// The server's own ledger: players register with `POST /api/players`.
    Internal,
    /// A reference operator's wallet: players are launched by it.
    Operator,
}
