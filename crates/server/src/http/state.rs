//! [`AppState`]: what every handler can reach (the store, the metrics, the
//! configuration's rules), and the types it is made of that no handler owns
//! alone: the per-network limits, the operator mode's wallet and launcher,
//! the certification report's flag.

use super::passwords::PasswordHashes;
use crate::metrics::Metrics;
use crate::store::Store;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub store: Arc<Store>,
    pub metrics: Arc<Metrics>,
    pub body_limit: usize,
    pub request_timeout: Duration,
    /// SHA-256 of each operator token.
    pub operator_tokens: Arc<Vec<[u8; 32]>>,
    /// Tables off art. 2 are accepted (tests, demos).
    pub allow_non_regulation_table: bool,
    /// SHA-256 of each retailer token, and its shop.
    pub retailers: Arc<Vec<([u8; 32], String)>>,
    pub retail_pay_any_shop: bool,
    pub claim_days: u32,
    /// Each shop's payout ceiling: larger prizes are the operator's to pay.
    pub payout_ceilings: Arc<domain::retail::PayoutCeilings>,
    pub trust_forwarded_for: bool,
    /// How many trusted proxies append to `X-Forwarded-For`.
    pub trusted_proxy_hops: u32,
    pub redeem_limits: crate::store::RedeemLimits,
    /// New players per client network (play money).
    pub registrations: PerNetwork,
    /// Login attempts per client network.
    pub logins: PerNetwork,
    /// The free demo game is offered (`POST /api/demo`).
    pub demo_games: bool,
    /// Demo games started per client network.
    pub demos: PerNetwork,
    /// How long a session lasts.
    pub session_ms: i64,
    /// The bound on password hashes computed at once.
    pub password_hashes: Arc<PasswordHashes>,
    /// The rules on players' limits: how long before a raised limit
    /// applies, and whether a limit on stakes is chosen before buying.
    pub limit_rules: domain::account::LimitRules,
    /// `GET /api/odds` answers, by table digest.
    pub odds: Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
    /// Operator mode: the operator's wallet (`None`: the internal ledger).
    pub wallet: Wallet,
    /// Operator mode: the signed launch's keys and URLs.
    pub launcher: Option<Arc<Launcher>>,
    /// Set while a certification report is being written (one at a time).
    pub certifying: Certifying,
}

/// A limit of attempts per client network and window (0: no limit), and
/// the global ceiling over everyone's (none: no ceiling), counted in the
/// database (core::limits).
#[derive(Debug, Clone, Copy)]
pub struct PerNetwork {
    pub limit: u32,
    pub window_ms: i64,
    pub ceiling: Option<domain::limits::Ceiling>,
}

impl PerNetwork {
    /// This limit for the network of `ip`, named `kind` (`login`, `register`).
    pub fn admission(
        &self,
        kind: &str,
        ip: std::net::IpAddr,
        what: &'static str,
    ) -> Option<domain::usecase::Admission> {
        (self.limit > 0 || self.ceiling.is_some()).then(|| domain::usecase::Admission::Network {
            bucket: format!("{kind}:{}", domain::limits::network(ip)),
            limit: self.limit,
            window_ms: self.window_ms,
            what,
            ceiling: self.ceiling,
        })
    }
}

/// The operator's wallet, when the server is in operator mode.
pub type Wallet = Option<Arc<crate::operator::OperatorWallet>>;

/// What the launch needs, in operator mode.
pub struct Launcher {
    pub keys: wallet::Keys,
    /// The base of launch URLs.
    pub public_base: String,
    pub ttl_ms: i64,
}

/// Set while this process writes a certification report
/// ([`AppState::certifying`], `http::certification`).
pub type Certifying = Arc<AtomicBool>;
