//! [`Config`]: how the server is set up, from a TOML file, environment
//! variables and flags (the CLI merges them, flags winning over the file).
//!
//! Every field has a default that makes `as-capone serve` playable on a fresh
//! machine: `127.0.0.1:8080`, the SQLite file `as-capone.db` in the working
//! folder, the example prize table, two blocks emitted on first start and a
//! demo player whose token is `demo`.

use serde::Deserialize;
use std::path::PathBuf;

/// The server's configuration. In a TOML file every field is optional:
///
/// ```toml
/// listen = "127.0.0.1:8080"
/// ops_listen = "127.0.0.1:9090"      # absent: no second listener (/metrics and /healthz stay on `listen`)
/// db = "sqlite://as-capone.db"
/// table = "examples/table.toml"     # absent: the example table
/// start_balance_cents = 10000        # play money of a new player
/// demo_token = "demo"                # "" for no demo player
/// initial_blocks = 2                 # blocks emitted on first start
/// group_commit = true                # false: one transaction per request
/// group_commit_max = 256             # requests sharing one commit, at most
/// body_limit_bytes = 16384
/// request_timeout_ms = 10000
/// read_connections = 4               # SQLite: connections of the read pool
/// db_max_connections = 16            # PostgreSQL: connections of this process's pool
/// db_acquire_timeout_ms = 5000       # waiting longer for a connection answers 503
/// db_start_wait_s = 60               # start-up waits this long for the database
/// key_file = "/etc/as-capone/key"    # absent: DB_FILE.key beside a SQLite file
/// # key_dir = "/etc/as-capone/keys"  # instead of key_file: a key ring, ID.key files (docs/keys.md)
/// operator_tokens = ["..."]          # bearer tokens of the operator's desk (/api/admin)
/// allow_non_regulation_table = false # true: tables off art. 2 (tests, demos)
/// retailer_tokens = ["Tabac du Port:..."] # SHOP:TOKEN, the shops of the paper channel
/// retail_pay_any_shop = false        # true: any shop pays any winner, not only its seller
/// claim_days = 30                    # paper prizes are paid until this many days after the closing notice's date
///                                    # (then the next working day: not a Sunday or French public holiday)
/// shop_payout_ceiling_cents = 500000 # a shop pays prizes up to this; larger ones: the operator's payment centre
/// shop_payout_ceilings = { "Tabac du Port" = 100000 } # a shop's own ceiling, in place of the one above
/// trust_forwarded_for = false        # true: behind proxies, the client address is in X-Forwarded-For
/// trusted_proxy_hops = 1             # how many proxies append to it: the client is that entry from the right
/// redeem_failures_per_address = 20   # wrong play codes per client network (IPv4 /24, IPv6 /64) and window, then 429
/// redeem_failures_global = 2000      # wrong play codes from everyone per window past which guessing is slowed
/// redeem_failures_per_address_slowed = 2 # wrong play codes per network and window while guessing is slowed
/// redeem_window_s = 900
/// session_days = 30                  # a login's session lasts this long
/// limit_cooling_off_hours = 72       # a player's raised limit applies after this
/// stake_limit_required = true        # a player chooses a limit on stakes over 7 days before buying (décret 2010-518 art. 16)
/// demo_games = true                 # false: no free demo game (POST /api/demo answers 404)
/// demo_games_per_address = 30        # demo games started per client network and demo_window_s, then 429
/// demo_window_s = 3600
/// demo_games_alive = 520000          # demo games kept at most, from everyone: at most 1/26 of it started an hour, then 503
/// registrations_per_hour = 2000      # new players an hour from everyone, then 503; 0: no ceiling
/// limit_counters_per_hour = 500000   # the limits' counters opened an hour (new networks, new logins), then 503; 0: none
/// logins_per_address = 20            # login attempts per client network and login_window_s, then 429
/// login_window_s = 300
/// password_hashes_in_flight = 0      # argon2 hashes computed at once; 0: one per core
/// password_hash_wait_ms = 1500       # a password waiting longer for its turn answers 503 with Retry-After
/// wallet = "internal"                # "operator": online money lives in the operator's wallet (docs/operator-integration.md)
/// operator_wallet_url = "http://127.0.0.1:9300/" # operator mode: the base URL of the operator's wallet (http://)
/// operator_keys = "k1:64HEX,..."     # operator mode: shared HMAC keys (the first signs, any verifies)
/// public_url = "https://game.example" # operator mode: the base of launch URLs
/// launch_ttl_s = 60                  # a launch code is refused after this
/// wallet_timeout_ms = 5000           # a debit not answered in this time is unknown: it is rolled back
/// signature_window_ms = 30000        # a signed message further than this from our clock is refused
/// log_format = "text"                # "json": one JSON object per line (docs/deployment.md)
/// backup_dir = "/var/lib/as-capone/backups" # absent: /metrics says nothing of backups (docs/backups.md)
/// seen_file = "/var/lib/as-capone/seen.json" # absent: DB_FILE.seen beside a SQLite file, none for PostgreSQL
/// ```
///
/// The server key (32 random bytes, 64 hex digits in the key file, or the
/// `AS_CAPONE_KEY` environment variable) derives every emission's secret:
/// a copy of the database alone reveals no unrevealed server seed and no
/// play code. A missing key file is created on first start; a PostgreSQL
/// database needs `key_file` (the same file for every process) or the
/// variable. Several keys (a rotation) live in a key directory,
/// `key_dir`, one file `ID.key` each (docs/keys.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address to listen on; port 0 picks a free port.
    pub listen: String,
    /// A second address serving only `/metrics` and `/healthz`, with its
    /// own few connections: an operator's scrape or health check never
    /// waits behind players when `listen` is at `max_connections`.
    pub ops_listen: Option<String>,
    /// Database URL: `sqlite://PATH` (or a bare path) for the embedded
    /// database of one process, `postgres://USER@HOST:PORT/DB` for one
    /// shared by several processes.
    pub db: String,
    /// Prize table file (TOML, docs/contract.md); `None` for the example table.
    pub table: Option<PathBuf>,
    /// Play money credited to each new player, in cents.
    pub start_balance_cents: u64,
    /// Token of the demo player created on first start; empty: none.
    pub demo_token: String,
    /// Blocks emitted when the database holds no emission yet.
    pub initial_blocks: u32,
    /// Group commit: many requests share one transaction and one disk sync.
    pub group_commit: bool,
    /// The most requests one commit may carry.
    pub group_commit_max: usize,
    /// Larger request bodies are refused with 413.
    pub body_limit_bytes: usize,
    /// A request that takes longer is answered 503 `timeout`.
    pub request_timeout_ms: u64,
    /// SQLite: connections of the read pool (the writer has its own).
    pub read_connections: u32,
    /// PostgreSQL: most connections this process opens.
    pub db_max_connections: u32,
    /// Waiting longer than this for a free connection answers 503.
    pub db_acquire_timeout_ms: u64,
    /// At start-up, how long to keep retrying a database that does not
    /// answer yet (a PostgreSQL server still starting), in seconds.
    pub db_start_wait_s: u64,
    /// The server key's file (see the type's doc); `None`: `FILE.key`
    /// beside a SQLite database file, and an error for PostgreSQL unless
    /// the key comes from `AS_CAPONE_KEY`.
    pub key_file: Option<PathBuf>,
    /// The server keys' directory, a key ring: one file `ID.key` per key
    /// (`as-capone keys new`); instead of `key_file` (docs/keys.md).
    pub key_dir: Option<PathBuf>,
    /// Where the scheduled backups land (`deploy/as-capone-backup.timer`):
    /// `/metrics` exports the age of the newest one,
    /// `as_capone_backup_age_seconds` (docs/backups.md); `None`: not exported.
    pub backup_dir: Option<PathBuf>,
    /// Where this server records, outside the database, how far it saw the
    /// audit chain of each database it served, so that a database put back
    /// to an earlier point is found at the next start (docs/backups.md,
    /// "After a restore"); `None`: `DB_FILE.seen` beside a SQLite file,
    /// nowhere for PostgreSQL ([`Config::seen_path`]).
    pub seen_file: Option<PathBuf>,
    /// Bearer tokens of the operator's desk (`/api/admin/...`); none: the
    /// desk is closed (401).
    pub operator_tokens: Vec<String>,
    /// Accept a prize table whose price or block size is not art. 2's (300
    /// cents, 300 000 tickets): for tests and demos only.
    pub allow_non_regulation_table: bool,
    /// The shops of the paper channel: `SHOP NAME:TOKEN` each.
    pub retailer_tokens: Vec<String>,
    /// Any shop may pay any paper winner (else only the shop that sold it).
    pub retail_pay_any_shop: bool,
    /// Paper prizes are paid until this many days after the date of the
    /// emission's closing notice, moved to the next working day when that
    /// day is a Sunday or a French public holiday (the instant games'
    /// general rules: 30 days; docs/shops.md "Claims and the payout ceiling").
    pub claim_days: u32,
    /// A shop pays a prize up to this many cents; a larger one is paid by
    /// the operator's payment centre (recorded on the desk).
    pub shop_payout_ceiling_cents: u64,
    /// A shop's own payout ceiling, in place of `shop_payout_ceiling_cents`.
    pub shop_payout_ceilings: std::collections::BTreeMap<String, u64>,
    /// Behind reverse proxies: the client's address is the one the nearest
    /// trusted proxy appended to `X-Forwarded-For`.
    pub trust_forwarded_for: bool,
    /// How many trusted proxies append to `X-Forwarded-For`: the client's
    /// address is that entry from the right (the ones left of it are the
    /// client's own words).
    pub trusted_proxy_hops: u32,
    /// Failed play codes per client network (IPv4 /24, IPv6 /64) and window before 429.
    pub redeem_failures_per_address: u32,
    /// Failed play codes from all clients per window past which guessing is
    /// slowed (each network gets `redeem_failures_per_address_slowed`); 0: never.
    pub redeem_failures_global: u32,
    /// Failed play codes per client network and window while guessing is slowed.
    pub redeem_failures_per_address_slowed: u32,
    /// The window of those limits, in seconds.
    pub redeem_window_s: u64,
    /// Open connections served at once; more wait in the kernel's backlog.
    pub max_connections: usize,
    /// A connection that has not sent a whole request head within this
    /// time (half-sent headers, or idle between requests) is closed.
    pub header_read_timeout_ms: u64,
    /// On SIGTERM, open connections get this long to finish, then are closed.
    pub shutdown_grace_ms: u64,
    /// New players per client address and window (`registration_window_s`); 0: no limit.
    pub registrations_per_address: u32,
    /// The window of that limit, in seconds.
    pub registration_window_s: u64,
    /// How long a session opened with a login and password lasts.
    pub session_days: u32,
    /// A player's raised (or removed) limit applies after this many hours.
    pub limit_cooling_off_hours: u32,
    /// A player of ours chooses a limit on their stakes over seven days
    /// before their first purchase and keeps one (décret 2010-518, art. 16):
    /// a purchase without one is refused with 403 `limit_required`, and the
    /// limit can be raised (after the cooling-off) but not removed. Off
    /// (`false`) only for tests and load tools that buy without limits.
    pub stake_limit_required: bool,
    /// The free demo game ("Essayer gratuitement", `POST /api/demo`): no
    /// money, no account, no ticket of a block; off: 404.
    pub demo_games: bool,
    /// Demo games started per client network and window (`demo_window_s`); 0: no limit.
    pub demo_games_per_address: u32,
    /// The window of that limit, in seconds.
    pub demo_window_s: u64,
    /// The most demo games kept at once, from everyone (docs/limits.md
    /// "Ceilings"): at most a 26th of it are started an hour, so that the
    /// games of the last day and minute are never more; 0: no ceiling.
    pub demo_games_alive: u32,
    /// New players an hour from everyone (0: no ceiling).
    pub registrations_per_hour: u32,
    /// Windows of the limits' counters opened an hour by everyone (the rows
    /// of `limit_counters` that new networks and logins create; 0: no ceiling).
    pub limit_counters_per_hour: u32,
    /// Login attempts per client address and window (`login_window_s`); 0: no limit.
    pub logins_per_address: u32,
    pub login_window_s: u64,
    /// Password hashes (argon2id, 19 MiB and tens of milliseconds of CPU
    /// each) computed at once, for logins, registrations with a password
    /// and credential changes; 0: one per core. More wait their turn.
    pub password_hashes_in_flight: usize,
    /// A password that waited this long for its turn is refused with 503
    /// `unavailable` and `Retry-After`, so that a flood of logins never
    /// holds more than the hashes in flight and a short queue.
    pub password_hash_wait_ms: u64,
    /// Where the money of online purchases and prizes lives.
    pub wallet: WalletMode,
    /// Operator mode: the base URL of the operator's wallet (docs/operator-integration.md).
    pub operator_wallet_url: Option<String>,
    /// Operator mode: the HMAC keys shared with the operator, `ID:HEX,...`
    /// (the first signs; any verifies). Kept out of logs.
    pub operator_keys: Option<String>,
    /// Operator mode: the base of the launch URLs given to the operator; none: `http://LISTEN`.
    pub public_url: Option<String>,
    /// A launch code is refused after this many seconds.
    pub launch_ttl_s: u64,
    /// A debit not answered within this time is unknown: it is rolled back.
    pub wallet_timeout_ms: u64,
    /// A signed message stamped further than this from our clock is refused.
    pub signature_window_ms: u64,
    /// How log lines are written on stderr: text for people, JSON lines for a collector.
    pub log_format: LogFormat,
}

/// How log lines are written on stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One line of text per event, for people (colours on a terminal).
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `message`
    /// and the event's fields, for a log collector.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<LogFormat, String> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("log format is \"text\" or \"json\", not {other:?}")),
        }
    }
}

/// Where the money of online purchases and prizes lives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WalletMode {
    /// This server's own ledger, with play money (demos, tests, the paper channel).
    #[default]
    Internal,
    /// The operator's HTTP wallet: it owns the players and their money.
    Operator,
}

impl std::str::FromStr for WalletMode {
    type Err = String;
    fn from_str(s: &str) -> Result<WalletMode, String> {
        match s {
            "internal" => Ok(WalletMode::Internal),
            "operator" => Ok(WalletMode::Operator),
            other => Err(format!("wallet is \"internal\" or \"operator\", not {other:?}")),
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            listen: "127.0.0.1:8080".into(),
            ops_listen: None,
            db: "sqlite://as-capone.db".into(),
            table: None,
            start_balance_cents: 10_000,
            demo_token: "demo".into(),
            initial_blocks: 2,
            group_commit: true,
            group_commit_max: 256,
            body_limit_bytes: 16 * 1024,
            request_timeout_ms: 10_000,
            read_connections: 4,
            db_max_connections: 16,
            db_acquire_timeout_ms: 5_000,
            db_start_wait_s: 60,
            key_file: None,
            backup_dir: None,
            seen_file: None,
            key_dir: None,
            operator_tokens: Vec::new(),
            allow_non_regulation_table: false,
            retailer_tokens: Vec::new(),
            retail_pay_any_shop: false,
            claim_days: 30,
            shop_payout_ceiling_cents: 500_000,
            shop_payout_ceilings: std::collections::BTreeMap::new(),
            trust_forwarded_for: false,
            trusted_proxy_hops: 1,
            redeem_failures_per_address: 20,
            redeem_failures_global: 2000,
            redeem_failures_per_address_slowed: 2,
            redeem_window_s: 900,
            max_connections: 1024,
            header_read_timeout_ms: 10_000,
            shutdown_grace_ms: 10_000,
            registrations_per_address: 100,
            registration_window_s: 60,
            demo_games: true,
            demo_games_per_address: 30,
            demo_window_s: 3600,
            demo_games_alive: 520_000,
            registrations_per_hour: 2_000,
            limit_counters_per_hour: 500_000,
            session_days: 30,
            limit_cooling_off_hours: 72,
            stake_limit_required: true,
            logins_per_address: 20,
            login_window_s: 300,
            password_hashes_in_flight: 0,
            password_hash_wait_ms: 1_500,
            wallet: WalletMode::Internal,
            operator_wallet_url: None,
            operator_keys: None,
            public_url: None,
            launch_ttl_s: 60,
            wallet_timeout_ms: 5_000,
            signature_window_ms: 30_000,
            log_format: LogFormat::Text,
        }
    }
}

impl Config {
    /// Reads a TOML configuration file; absent fields keep their defaults.
    pub fn from_toml_file(path: &std::path::Path) -> anyhow::Result<Config> {
        let config = Config::read_toml_file(path)?;
        config.check().map_err(|e| anyhow::anyhow!("configuration {}: {e}", path.display()))?;
        Ok(config)
    }

    /// Reads a TOML configuration file, not checked yet: a part of it may
    /// stand on what the command line and the environment still give
    /// (`shop_payout_ceilings` in the file, the shops in
    /// `--retailer-tokens`), so [`Config::check`] is the caller's, once the
    /// configuration is whole (`as-capone serve`).
    pub fn read_toml_file(path: &std::path::Path) -> anyhow::Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read configuration {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("configuration {}: {e}", path.display()))
    }

    pub fn from_toml_str(text: &str) -> anyhow::Result<Config> {
        let config: Config = toml::from_str(text)?;
        config.check()?;
        Ok(config)
    }

    /// Refuses settings that cannot work.
    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.group_commit_max >= 1, "group_commit_max must be at least 1");
        anyhow::ensure!(self.body_limit_bytes >= 64, "body_limit_bytes must be at least 64");
        anyhow::ensure!(self.request_timeout_ms >= 1, "request_timeout_ms must be at least 1");
        anyhow::ensure!(self.read_connections >= 1, "read_connections must be at least 1");
        anyhow::ensure!(self.db_max_connections >= 2, "db_max_connections must be at least 2");
        anyhow::ensure!(self.db_acquire_timeout_ms >= 1, "db_acquire_timeout_ms must be at least 1");
        anyhow::ensure!(self.start_balance_cents <= i64::MAX as u64 / 4, "start_balance_cents is too large");
        for entry in &self.retailer_tokens {
            let Some((shop, token)) = entry.rsplit_once(':') else {
                anyhow::bail!("a retailer token is SHOP:TOKEN, found one without ':'");
            };
            anyhow::ensure!(!shop.trim().is_empty(), "a retailer token names its shop: SHOP:TOKEN");
            anyhow::ensure!(
                token.len() >= 16 && token.bytes().all(|b| b.is_ascii_graphic()),
                "the token of shop {shop} must be at least 16 printable characters without spaces"
            );
        }
        anyhow::ensure!((1..=3650).contains(&self.claim_days), "claim_days must be 1 to 3650");
        let shops = self.retailer_shops();
        for (shop, ceiling) in std::iter::once(("shop_payout_ceiling_cents", &self.shop_payout_ceiling_cents))
            .chain(self.shop_payout_ceilings.iter().map(|(s, c)| (s.as_str(), c)))
        {
            anyhow::ensure!(
                *ceiling <= 100_000_000_000,
                "the payout ceiling of {shop} must be at most 100000000000 cents"
            );
        }
        for shop in self.shop_payout_ceilings.keys() {
            anyhow::ensure!(
                shops.iter().any(|s| s == shop),
                "shop_payout_ceilings names {shop}, which no retailer token names"
            );
        }
        anyhow::ensure!(self.redeem_window_s >= 1, "redeem_window_s must be at least 1");
        anyhow::ensure!(
            self.redeem_failures_per_address_slowed <= self.redeem_failures_per_address,
            "redeem_failures_per_address_slowed must be at most redeem_failures_per_address"
        );
        anyhow::ensure!(
            (1..=16).contains(&self.trusted_proxy_hops),
            "trusted_proxy_hops must be 1 to 16 (the proxies in front of the server)"
        );
        anyhow::ensure!(self.registration_window_s >= 1, "registration_window_s must be at least 1");
        anyhow::ensure!(self.demo_window_s >= 1, "demo_window_s must be at least 1");
        anyhow::ensure!(
            self.demo_games_alive == 0 || self.demo_games_alive >= domain::limits::DEMO_WINDOWS_ALIVE,
            "demo_games_alive must be 0 (no ceiling) or at least 26 (a 26th of it may start an hour)"
        );
        anyhow::ensure!((1..=3650).contains(&self.session_days), "session_days must be 1 to 3650");
        anyhow::ensure!(self.limit_cooling_off_hours <= 8760, "limit_cooling_off_hours must be at most 8760");
        anyhow::ensure!(self.login_window_s >= 1, "login_window_s must be at least 1");
        anyhow::ensure!(self.password_hashes_in_flight <= 1024, "password_hashes_in_flight must be at most 1024");
        anyhow::ensure!(self.password_hash_wait_ms <= 60_000, "password_hash_wait_ms must be at most 60000");
        if self.wallet == WalletMode::Operator {
            let url = self.operator_wallet_url.as_deref().unwrap_or("");
            anyhow::ensure!(
                url.starts_with("http://") || url.starts_with("https://"),
                "wallet = \"operator\" needs operator_wallet_url, an http:// URL of the operator's wallet"
            );
            // Refused here rather than at each call: every purchase would fail.
            anyhow::ensure!(
                url.starts_with("http://"),
                "operator_wallet_url {url:?}: TLS to the operator's wallet is terminated by a proxy beside the server \
                 (docs/operator-integration.md, \"TLS to the wallet\"): give the proxy's http:// URL"
            );
            self.wallet_keys()?;
        }
        anyhow::ensure!((5..=3600).contains(&self.launch_ttl_s), "launch_ttl_s must be 5 to 3600");
        anyhow::ensure!((100..=60_000).contains(&self.wallet_timeout_ms), "wallet_timeout_ms must be 100 to 60000");
        anyhow::ensure!(
            (1_000..=600_000).contains(&self.signature_window_ms),
            "signature_window_ms must be 1000 to 600000"
        );
        for t in &self.operator_tokens {
            anyhow::ensure!(
                t.len() >= 16 && t.bytes().all(|b| b.is_ascii_graphic()),
                "an operator token must be at least 16 printable characters without spaces"
            );
        }
        Ok(())
    }

    /// The keys shared with the operator (operator mode).
    pub fn wallet_keys(&self) -> anyhow::Result<wallet::Keys> {
        let spec = self.operator_keys.as_deref().ok_or_else(|| {
            anyhow::anyhow!(
                "wallet = \"operator\" needs operator_keys = \"ID:HEX,...\" (keys shared with the operator)"
            )
        })?;
        Ok(wallet::Keys::parse(spec)
            .map_err(|e| anyhow::anyhow!("operator_keys: {e}"))?
            .with_window_ms(self.signature_window_ms as i64))
    }

    /// The base of launch URLs.
    pub fn public_base(&self) -> String {
        self.public_url.clone().unwrap_or_else(|| format!("http://{}", self.listen)).trim_end_matches('/').to_string()
    }

    /// `(shop, token)` of each retailer token.
    pub fn retailers(&self) -> Vec<(String, String)> {
        self.retailer_tokens
            .iter()
            .filter_map(|e| e.rsplit_once(':'))
            .map(|(shop, token)| (shop.trim().to_string(), token.to_string()))
            .collect()
    }

    /// The shops' names.
    pub fn retailer_shops(&self) -> Vec<String> {
        self.retailers().into_iter().map(|(shop, _)| shop).collect()
    }

    /// The payout ceiling of each shop, in cents (its own, or the default).
    pub fn payout_ceilings(&self) -> domain::retail::PayoutCeilings {
        use domain::retail::PayoutCeilings;
        PayoutCeilings {
            default_cents: self.shop_payout_ceiling_cents as i64,
            shops: self.shop_payout_ceilings.iter().map(|(s, c)| (s.clone(), *c as i64)).collect(),
        }
    }

    /// Password hashes computed at once: the setting, or one per core.
    pub fn password_hashes(&self) -> usize {
        match self.password_hashes_in_flight {
            0 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2),
            n => n,
        }
    }

    /// The global ceilings: demo games kept, registrations and the limits'
    /// counters opened an hour.
    pub fn ceilings(&self) -> domain::limits::Ceilings {
        domain::limits::Ceilings::new(self.demo_games_alive, self.registrations_per_hour, self.limit_counters_per_hour)
    }

    /// The most requests a commit carries: 1 without group commit.
    pub fn batch_cap(&self) -> usize {
        if self.group_commit { self.group_commit_max } else { 1 }
    }
}

/// The file of a SQLite database URL (`sqlite://PATH`, `sqlite:PATH` or a
/// bare path); `None` for PostgreSQL.
impl Config {
    /// The file of [`Config::seen_file`], or its default.
    pub fn seen_path(&self) -> Option<PathBuf> {
        self.seen_file
            .clone()
            .or_else(|| sqlite_path(&self.db).map(|db| PathBuf::from(format!("{}.seen", db.display()))))
    }
}

pub fn sqlite_path(url: &str) -> Option<PathBuf> {
    if is_postgres_url(url) {
        return None;
    }
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url);
    let path = rest.split('?').next().unwrap_or(rest);
    Some(PathBuf::from(path))
}

/// The database URL names PostgreSQL.
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres:") || url.starts_with("postgresql:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_overrides_defaults_and_refuses_unknown_fields() {
        let c = Config::from_toml_str("listen = \"0.0.0.0:9000\"\nstart_balance_cents = 5\n").unwrap();
        assert_eq!(c.listen, "0.0.0.0:9000");
        assert_eq!(c.start_balance_cents, 5);
        assert_eq!(c.db, Config::default().db);
        assert!(Config::from_toml_str("listn = \"x\"").is_err());
        assert!(Config::from_toml_str("group_commit_max = 0").is_err());
        assert_eq!(Config { group_commit: false, ..Config::default() }.batch_cap(), 1);
        assert_eq!(Config::default().log_format, LogFormat::Text);
        assert_eq!(Config::from_toml_str("log_format = \"json\"").unwrap().log_format, LogFormat::Json);
        assert!(Config::from_toml_str("log_format = \"xml\"").is_err());
        assert_eq!("json".parse::<LogFormat>(), Ok(LogFormat::Json));
        assert!("JSON lines".parse::<LogFormat>().is_err());
    }

    #[test]
    fn each_shop_has_its_payout_ceiling_and_a_ceiling_names_a_known_shop() {
        let shops = "retailer_tokens = [\"Tabac du Port:tabac-du-port-token-1\", \"Bar:bar-token-000000001\"]\n";
        let c = Config::from_toml_str(&format!("{shops}shop_payout_ceilings = {{ \"Bar\" = 100000 }}\n")).unwrap();
        let ceilings = c.payout_ceilings();
        assert_eq!((ceilings.of("Bar"), ceilings.of("Tabac du Port"), ceilings.lowest()), (100_000, 500_000, 100_000));
        let unknown = Config::from_toml_str(&format!("{shops}shop_payout_ceilings = {{ \"Baz\" = 1 }}\n"));
        assert!(unknown.unwrap_err().to_string().contains("Baz"));
        assert!(Config::from_toml_str("claim_days = 0\n").is_err());
        assert_eq!(Config::default().claim_days, 30);
    }

    #[test]
    fn the_operator_demo_configuration_is_the_operator_mode_and_its_keys_parse() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/operator-demo.toml");
        let c = Config::from_toml_file(&path).unwrap();
        assert_eq!(c.wallet, WalletMode::Operator);
        assert_eq!(c.wallet_keys().unwrap().current(), "demo");
        assert_eq!(c.public_base(), "http://127.0.0.1:8080");
        // Operator mode without a wallet or with short keys is refused.
        assert!(Config::from_toml_str("wallet = \"operator\"").is_err());
        let short = "wallet = \"operator\"\noperator_wallet_url = \"http://x\"\noperator_keys = \"k:abcd\"";
        assert!(Config::from_toml_str(short).is_err());
        // TLS to the wallet is a proxy's (docs/operator-integration.md): an
        // https:// URL is refused at start, not at every purchase.
        let keys = format!("operator_keys = \"k:{}\"", "ab".repeat(32));
        let tls = format!("wallet = \"operator\"\noperator_wallet_url = \"https://wallet.example/\"\n{keys}");
        assert!(Config::from_toml_str(&tls).unwrap_err().to_string().contains("TLS"));
        let plain = format!("wallet = \"operator\"\noperator_wallet_url = \"http://127.0.0.1:9300/\"\n{keys}");
        assert!(Config::from_toml_str(&plain).is_ok());
    }
}
