//! `as-capone serve`: the game server (crate `server`). Settings come from
//! flags, then environment variables (`AS_CAPONE_*`), then the `--config`
//! TOML file, then the defaults of `server::Config`.

use clap::Args;
use server::{App, AppOptions, Config};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, env = "AS_CAPONE_LISTEN")]
    pub listen: Option<String>,
    /// A second address serving only /metrics and /healthz, never queued
    /// behind players at the connection cap [default: none].
    #[arg(long, env = "AS_CAPONE_OPS_LISTEN")]
    pub ops_listen: Option<String>,
    /// Database URL: a SQLite file (`sqlite://as-capone.db`, the default) or
    /// `postgres://USER@HOST:PORT/DB`, which several processes can share.
    #[arg(long, env = "AS_CAPONE_DB")]
    pub db: Option<String>,
    /// Prize table (TOML) of the emission created on first start [default: the example table].
    #[arg(long, env = "AS_CAPONE_TABLE")]
    pub table: Option<PathBuf>,
    /// Configuration file (TOML); see `server::Config` for its keys.
    #[arg(long, env = "AS_CAPONE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Play money of each new player, in cents [default: 10000].
    #[arg(long, env = "AS_CAPONE_START_BALANCE_CENTS")]
    pub start_balance_cents: Option<u64>,
    /// Token of the demo player created on first start ("" for none) [default: demo].
    #[arg(long, env = "AS_CAPONE_DEMO_TOKEN")]
    pub demo_token: Option<String>,
    /// Blocks emitted on first start [default: 2].
    #[arg(long, env = "AS_CAPONE_INITIAL_BLOCKS")]
    pub initial_blocks: Option<u32>,
    /// One transaction (and one disk sync) per request instead of group commit.
    #[arg(long, env = "AS_CAPONE_NO_GROUP_COMMIT")]
    pub no_group_commit: bool,
    /// Most requests sharing one commit [default: 256].
    #[arg(long, env = "AS_CAPONE_GROUP_COMMIT_MAX")]
    pub group_commit_max: Option<usize>,
    /// Request time limit in milliseconds [default: 10000].
    #[arg(long, env = "AS_CAPONE_REQUEST_TIMEOUT_MS")]
    pub request_timeout_ms: Option<u64>,
    /// PostgreSQL: most connections of this process's pool [default: 16].
    #[arg(long, env = "AS_CAPONE_DB_MAX_CONNECTIONS")]
    pub db_max_connections: Option<u32>,
    /// Waiting longer for a database connection answers 503, in milliseconds [default: 5000].
    #[arg(long, env = "AS_CAPONE_DB_ACQUIRE_TIMEOUT_MS")]
    pub db_acquire_timeout_ms: Option<u64>,
    /// At start-up, keep retrying an unreachable database this many seconds [default: 60].
    #[arg(long, env = "AS_CAPONE_DB_START_WAIT_S")]
    pub db_start_wait_s: Option<u64>,
    /// The server key's file (64 hex digits; created when missing) [default: DB_FILE.key beside a SQLite file].
    #[arg(long, env = "AS_CAPONE_KEY_FILE")]
    pub key_file: Option<PathBuf>,
    /// The server keys' directory, a key ring of `ID.key` files (`as-capone keys new`), instead of --key-file.
    #[arg(long, env = "AS_CAPONE_KEY_DIR")]
    pub key_dir: Option<PathBuf>,
    /// Where the scheduled backups land: /metrics exports the newest one's age (as_capone_backup_age_seconds).
    #[arg(long, env = "AS_CAPONE_BACKUP_DIR")]
    pub backup_dir: Option<PathBuf>,
    /// Where this server records how far it saw each database's audit chain, outside the database
    /// [default: DB_FILE.seen beside a SQLite file; none for PostgreSQL].
    #[arg(long, env = "AS_CAPONE_SEEN_FILE")]
    pub seen_file: Option<PathBuf>,
    /// Bearer tokens of the operator's desk (/api/admin), comma-separated.
    #[arg(long, env = "AS_CAPONE_OPERATOR_TOKENS", value_delimiter = ',')]
    pub operator_tokens: Vec<String>,
    /// Where online money lives: internal (play money of ours) or operator (the operator's wallet) [default: internal].
    #[arg(long, env = "AS_CAPONE_WALLET")]
    pub wallet: Option<server::WalletMode>,
    /// Operator mode: the base URL of the operator's wallet.
    #[arg(long, env = "AS_CAPONE_OPERATOR_WALLET_URL")]
    pub operator_wallet_url: Option<String>,
    /// Operator mode: the HMAC keys shared with the operator, ID:HEX,... (the first signs).
    #[arg(long, env = "AS_CAPONE_OPERATOR_KEYS", hide_env_values = true)]
    pub operator_keys: Option<String>,
    /// Operator mode: the base of launch URLs [default: http://LISTEN].
    #[arg(long, env = "AS_CAPONE_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Operator mode: a debit unanswered within this many milliseconds is rolled back [default: 5000].
    #[arg(long, env = "AS_CAPONE_WALLET_TIMEOUT_MS")]
    pub wallet_timeout_ms: Option<u64>,
    /// Accept a prize table whose price or block size differ from art. 2's (tests, demos).
    #[arg(long, env = "AS_CAPONE_ALLOW_NON_REGULATION_TABLE")]
    pub allow_non_regulation_table: bool,
    /// Shops of the paper channel and their tokens: SHOP:TOKEN,... (each token at least 16 characters).
    #[arg(long, env = "AS_CAPONE_RETAILER_TOKENS", value_delimiter = ',')]
    pub retailer_tokens: Vec<String>,
    /// Any shop may pay any paper winner, not only the shop that sold it.
    #[arg(long, env = "AS_CAPONE_RETAIL_PAY_ANY_SHOP")]
    pub retail_pay_any_shop: bool,
    /// Paper prizes are paid until this many days after the closing notice's date, then the next working day [default: 30].
    #[arg(long, env = "AS_CAPONE_CLAIM_DAYS")]
    pub claim_days: Option<u32>,
    /// A shop pays prizes up to this many cents; larger ones are the operator's payment centre's [default: 500000].
    #[arg(long, env = "AS_CAPONE_SHOP_PAYOUT_CEILING_CENTS")]
    pub shop_payout_ceiling_cents: Option<u64>,
    /// Behind reverse proxies: the client's address is the one the nearest proxy appended to X-Forwarded-For.
    #[arg(long, env = "AS_CAPONE_TRUST_FORWARDED_FOR")]
    pub trust_forwarded_for: bool,
    /// How many trusted proxies append to X-Forwarded-For: the client is that entry from the right [default: 1].
    #[arg(long, env = "AS_CAPONE_TRUSTED_PROXY_HOPS")]
    pub trusted_proxy_hops: Option<u32>,
    /// Open connections served at once; more wait in the backlog [default: 1024].
    #[arg(long, env = "AS_CAPONE_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Close a connection whose request head is not complete within this many milliseconds [default: 10000].
    #[arg(long, env = "AS_CAPONE_HEADER_READ_TIMEOUT_MS")]
    pub header_read_timeout_ms: Option<u64>,
    /// On SIGTERM, close connections still open after this many milliseconds [default: 10000].
    #[arg(long, env = "AS_CAPONE_SHUTDOWN_GRACE_MS")]
    pub shutdown_grace_ms: Option<u64>,
    /// New players per client network (IPv4 /24, IPv6 /64) per minute; 0: no limit (load tests) [default: 100].
    #[arg(long, env = "AS_CAPONE_REGISTRATIONS_PER_ADDRESS")]
    pub registrations_per_address: Option<u32>,
    /// Days a session opened with a login and password lasts [default: 30].
    #[arg(long, env = "AS_CAPONE_SESSION_DAYS")]
    pub session_days: Option<u32>,
    /// Hours before a player's raised limit applies [default: 72].
    #[arg(long, env = "AS_CAPONE_LIMIT_COOLING_OFF_HOURS")]
    pub limit_cooling_off_hours: Option<u32>,
    /// A player chooses a limit on stakes over seven days before buying and keeps one (décret 2010-518, art. 16);
    /// false only for tests and load tools [default: true].
    #[arg(long, env = "AS_CAPONE_STAKE_LIMIT_REQUIRED", value_name = "BOOL")]
    pub stake_limit_required: Option<bool>,
    /// The free demo game without money or account (POST /api/demo); false: 404 [default: true].
    #[arg(long, env = "AS_CAPONE_DEMO_GAMES", value_name = "BOOL")]
    pub demo_games: Option<bool>,
    /// Demo games started per client network (IPv4 /24, IPv6 /64) per hour; 0: no limit [default: 30].
    #[arg(long, env = "AS_CAPONE_DEMO_GAMES_PER_ADDRESS")]
    pub demo_games_per_address: Option<u32>,
    /// Login attempts per client network (IPv4 /24, IPv6 /64) per 5 minutes; 0: no limit [default: 20].
    #[arg(long, env = "AS_CAPONE_LOGINS_PER_ADDRESS")]
    pub logins_per_address: Option<u32>,
    /// Password hashes (19 MiB each) computed at once; 0: one per core [default: 0].
    #[arg(long, env = "AS_CAPONE_PASSWORD_HASHES_IN_FLIGHT")]
    pub password_hashes_in_flight: Option<usize>,
    /// A password waiting longer for its turn answers 503 with Retry-After [default: 1500].
    #[arg(long, env = "AS_CAPONE_PASSWORD_HASH_WAIT_MS")]
    pub password_hash_wait_ms: Option<u64>,
    /// Log lines on stderr: text, or json (one JSON object per line) [default: text].
    #[arg(long, env = "AS_CAPONE_LOG_FORMAT")]
    pub log_format: Option<server::LogFormat>,
    /// Worker threads of the server's runtime [default: one per core].
    #[arg(long, env = "AS_CAPONE_WORKER_THREADS")]
    pub worker_threads: Option<usize>,
}

impl ServeArgs {
    /// The configuration: defaults, then the file, then flags and
    /// environment, checked once whole (a setting of the file may name what
    /// a flag gives: `shop_payout_ceilings` the shops of `--retailer-tokens`).
    pub fn config(&self) -> anyhow::Result<Config> {
        let mut c = match &self.config {
            Some(path) => Config::read_toml_file(path)?,
            None => Config::default(),
        };
        if let Some(v) = &self.listen {
            c.listen = v.clone();
        }
        if let Some(v) = &self.ops_listen {
            c.ops_listen = Some(v.clone());
        }
        if let Some(v) = &self.db {
            c.db = v.clone();
        }
        if let Some(v) = &self.table {
            c.table = Some(v.clone());
        }
        if let Some(v) = self.start_balance_cents {
            c.start_balance_cents = v;
        }
        if let Some(v) = &self.demo_token {
            c.demo_token = v.clone();
        }
        if let Some(v) = self.initial_blocks {
            c.initial_blocks = v;
        }
        if self.no_group_commit {
            c.group_commit = false;
        }
        if let Some(v) = self.group_commit_max {
            c.group_commit_max = v;
        }
        if let Some(v) = self.request_timeout_ms {
            c.request_timeout_ms = v;
        }
        if let Some(v) = self.db_max_connections {
            c.db_max_connections = v;
        }
        if let Some(v) = self.db_acquire_timeout_ms {
            c.db_acquire_timeout_ms = v;
        }
        if let Some(v) = self.db_start_wait_s {
            c.db_start_wait_s = v;
        }
        if let Some(v) = &self.key_file {
            c.key_file = Some(v.clone());
        }
        if let Some(v) = &self.key_dir {
            c.key_dir = Some(v.clone());
        }
        if let Some(v) = &self.backup_dir {
            c.backup_dir = Some(v.clone());
        }
        if let Some(v) = &self.seen_file {
            c.seen_file = Some(v.clone());
        }
        if !self.operator_tokens.is_empty() {
            c.operator_tokens = self.operator_tokens.clone();
        }
        if self.allow_non_regulation_table {
            c.allow_non_regulation_table = true;
        }
        if let Some(v) = self.wallet {
            c.wallet = v;
        }
        if let Some(v) = &self.operator_wallet_url {
            c.operator_wallet_url = Some(v.clone());
        }
        if let Some(v) = &self.operator_keys {
            c.operator_keys = Some(v.clone());
        }
        if let Some(v) = &self.public_url {
            c.public_url = Some(v.clone());
        }
        if let Some(v) = self.wallet_timeout_ms {
            c.wallet_timeout_ms = v;
        }
        if !self.retailer_tokens.is_empty() {
            c.retailer_tokens = self.retailer_tokens.clone();
        }
        if self.retail_pay_any_shop {
            c.retail_pay_any_shop = true;
        }
        if let Some(v) = self.claim_days {
            c.claim_days = v;
        }
        if let Some(v) = self.shop_payout_ceiling_cents {
            c.shop_payout_ceiling_cents = v;
        }
        if self.trust_forwarded_for {
            c.trust_forwarded_for = true;
        }
        if let Some(v) = self.trusted_proxy_hops {
            c.trusted_proxy_hops = v;
        }
        if let Some(v) = self.max_connections {
            c.max_connections = v;
        }
        if let Some(v) = self.header_read_timeout_ms {
            c.header_read_timeout_ms = v;
        }
        if let Some(v) = self.shutdown_grace_ms {
            c.shutdown_grace_ms = v;
        }
        if let Some(v) = self.registrations_per_address {
            c.registrations_per_address = v;
        }
        if let Some(v) = self.session_days {
            c.session_days = v;
        }
        if let Some(v) = self.limit_cooling_off_hours {
            c.limit_cooling_off_hours = v;
        }
        if let Some(v) = self.stake_limit_required {
            c.stake_limit_required = v;
        }
        if let Some(v) = self.demo_games {
            c.demo_games = v;
        }
        if let Some(v) = self.demo_games_per_address {
            c.demo_games_per_address = v;
        }
        if let Some(v) = self.logins_per_address {
            c.logins_per_address = v;
        }
        if let Some(v) = self.password_hashes_in_flight {
            c.password_hashes_in_flight = v;
        }
        if let Some(v) = self.password_hash_wait_ms {
            c.password_hash_wait_ms = v;
        }
        if let Some(v) = self.log_format {
            c.log_format = v;
        }
        match &self.config {
            Some(path) => c.check().map_err(|e| {
                anyhow::anyhow!("configuration {} with the command line and environment: {e}", path.display())
            })?,
            None => c.check()?,
        }
        Ok(c)
    }
}

pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let mut config = args.config()?;
    server::init_logging_as(config.log_format);
    fit_connections_to_file_limit(&mut config);
    let options = AppOptions::from_config(config)?;
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    rt.enable_all();
    if let Some(n) = args.worker_threads {
        rt.worker_threads(n.max(1));
    }
    rt.build()?.block_on(async move {
        let app = App::start(options).await?;
        app.run_until_signal().await
    })
}

/// Raises the soft limit of open files to the hard one, and keeps the
/// connection cap below it (with room for the database's files and
/// connections, and the operations listener's 16 connections), so that the
/// cap, not `accept` failing, is what holds.
fn fit_connections_to_file_limit(config: &mut server::Config) {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit write and read the one struct given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
    }
    let room = (lim.rlim_cur as usize).saturating_sub(128).max(16);
    if config.max_connections > room {
        tracing::warn!(
            max_connections = config.max_connections,
            open_files = lim.rlim_cur,
            "the open-file limit is low: serving at most {room} connections at once"
        );
        config.max_connections = room;
    }
}
