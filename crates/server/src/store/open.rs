//! Opening a [`Store`]: [`Store::open`] connects to the backend the
//! configuration names, and [`Store::bootstrap`] makes the start-up's own
//! writes (the key ring's check, the first emission, the shops, the demo
//! player).

use super::backend;
use super::ceilings::CeilingState;
use super::emissions;
use super::keyring;
use super::shell::Store;
use super::tokens::AuthCache;
use crate::config::Config;
use crate::keys::Keyring;
use crate::metrics::Metrics;
use domain::account::{LimitRules, LimitsRequest};
use math::PrizeTable;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// The demo player's limit on stakes over seven days (100 €).
pub const DEMO_STAKE_LIMIT_CENTS: i64 = 10_000;

impl Store {
    /// Connects (waiting for a database that is still starting), migrates,
    /// and starts the backend's background tasks. On PostgreSQL the
    /// process then holds the start-up lock until [`Store::bootstrap`]:
    /// processes starting together migrate and bootstrap one at a time.
    pub async fn open(config: &Config, metrics: Arc<Metrics>, keys: Keyring) -> anyhow::Result<Store> {
        let start_balance = i64::try_from(config.start_balance_cents)?;
        let keys = Arc::new(keys);
        let backend::Opened { db, writer, description, startup } =
            backend::open(config, metrics.clone(), keys.clone()).await?;
        Ok(Store {
            db,
            writer,
            auth_cache: RwLock::new(AuthCache::default()),
            start_balance,
            description,
            startup: tokio::sync::Mutex::new(startup),
            keys,
            emitting: tokio::sync::Mutex::new(()),
            shops: RwLock::new(HashMap::new()),
            emission_keys: RwLock::new(HashMap::new()),
            operator_wallet: config.wallet == crate::config::WalletMode::Operator,
            ceilings: CeilingState::new(config.ceilings(), metrics),
        })
    }

    /// Application start-up's own writes: the key ring's check, the first
    /// emission when the database has none, and the demo player; then other
    /// processes may start. Returns a line for the start log.
    pub async fn bootstrap(&self, config: &Config, table: &PrizeTable) -> anyhow::Result<String> {
        let ring = keyring::check_ring(&self.db, &self.keys).await?;
        tracing::info!("{ring}");
        // Before anything is sold: a database gone back in time is found,
        // and a restored database's blocks on sale are withdrawn.
        let seen = config.seen_path();
        if let Some(path) = &seen {
            self.find_going_back(path).await?;
        }
        if self.settle_restores().await?.is_some()
            && let Some(path) = &seen
        {
            self.record_seen(path, true).await?;
        }
        let emission = emissions::ensure_first(self, table, config.initial_blocks).await?;
        self.ensure_shops(&config.retailer_shops()).await?;
        if !config.demo_token.is_empty()
            && config.wallet == crate::config::WalletMode::Internal
            && self.authenticate(&config.demo_token).await?.is_none()
        {
            let created = self.create_player_with_token(&config.demo_token, Some("demo".into()), None, None).await?;
            if config.stake_limit_required {
                // The demo player is ready to buy: its limit on stakes chosen
                // (100 € over seven days), as a new player chooses one.
                let rules = LimitRules {
                    cooling_off_ms: 0,
                    stake_limit_required: true,
                    price_cents: domain::account::checked_price(None),
                };
                let request =
                    LimitsRequest { tickets_per_day: None, spend_per_week_cents: Some(DEMO_STAKE_LIMIT_CENTS) };
                self.set_limits(created.player_id, request, rules).await?;
            }
            tracing::info!("created the demo player");
        }
        if let Some(lock) = self.startup.lock().await.take() {
            backend::release_startup_lock(lock).await;
        }
        Ok(emission)
    }

    /// A SQLite store on a new file `t.db` in `dir`, its server key fixed (tests).
    #[cfg(test)]
    pub(crate) async fn sqlite_for_tests(dir: &std::path::Path) -> Store {
        let config = Config { db: format!("sqlite://{}", dir.join("t.db").display()), ..Config::default() };
        let keys = Keyring::new(crate::keys::ServerKey::from_bytes([1; 32]), None);
        Store::open(&config, Arc::new(Metrics::new()), keys).await.unwrap()
    }
}
