//! The paper channel in the store: the shops' accounts, their three use
//! cases (sell, validate, pay), redeeming a play code, the ticket's own
//! token, the limit on failed redemptions, and the end of an emission's sale.

use super::{Store, now_ms, on_db, reads};
use crate::core::decide::{self, RetailAnswer};
use crate::core::usecase::PaperKey;
use crate::core::{Changes, Effect, Failures, Op};
use crate::error::AppError;
use sha2::{Digest, Sha256};

/// A ticket token's prefix: `t1.<serial>.<64 hex>`.
const TOKEN_PREFIX: &str = "t1.";

/// A bucket of failed redemptions over its limit: when it opens again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limited {
    pub retry_after_s: u64,
    pub bucket: String,
}

/// The limits on failed redemptions.
#[derive(Debug, Clone, Copy)]
pub struct RedeemLimits {
    pub per_address: u32,
    pub global: u32,
    pub window_ms: i64,
}

/// The play code as typed, checked, and its hash (what the database keeps).
pub fn code_hash(typed: &str) -> Result<String, AppError> {
    let code = emission::PlayCode::parse(typed).map_err(|e| {
        AppError::BadRequest(format!("{e}: a play code is 16 letters and digits, as 7K3M-Q9ZD-XW4P-2HRT"))
    })?;
    Ok(hex::encode(code.sha256()))
}

impl Store {
    /// The ledger accounts of the configured shops, created when missing.
    pub(super) async fn ensure_shops(&self, shops: &[String]) -> anyhow::Result<()> {
        let mut found = std::collections::HashMap::new();
        for shop in shops {
            let name = format!("shop:{shop}");
            let id: i64 = on_db!(&self.db, pool => {
                sqlx::query("INSERT INTO accounts (name, kind) VALUES ($1, 'shop') ON CONFLICT (name) DO NOTHING")
                    .bind(&name)
                    .execute(pool)
                    .await?;
                sqlx::query_scalar("SELECT id FROM accounts WHERE name = $1").bind(&name).fetch_one(pool).await?
            });
            found.insert(shop.clone(), id);
        }
        *self.shops.write().expect("shops") = found;
        Ok(())
    }

    fn shop_account(&self, shop: &str) -> Result<i64, AppError> {
        self.shops
            .read()
            .expect("shops")
            .get(shop)
            .copied()
            .ok_or_else(|| AppError::internal(format!("shop {shop} has no account")))
    }

    /// A ticket's own token: `t1.<serial>.<HMAC-SHA256(server key, "as-capone ticket token v1" || serial)>`.
    /// It never changes, so the same code gives the same token on any device.
    pub fn ticket_token(&self, serial: &str) -> String {
        let mac = hex::encode(self.keys.key().hmac(&[b"as-capone ticket token v1", serial.as_bytes()]));
        format!("{TOKEN_PREFIX}{serial}.{mac}")
    }

    /// The serial a ticket token opens, if it is one of this server's.
    pub fn ticket_of_token(&self, token: &str) -> Option<String> {
        let rest = token.strip_prefix(TOKEN_PREFIX)?;
        let (serial, mac) = rest.rsplit_once('.')?;
        let want = hex::encode(self.keys.key().hmac(&[b"as-capone ticket token v1", serial.as_bytes()]));
        // Compared as hashes: the time taken says nothing of the token.
        (Sha256::digest(want.as_bytes()) == Sha256::digest(mac.as_bytes())).then(|| serial.to_string())
    }

    /// A shop sells a printed paper ticket.
    pub async fn retail_sell(&self, shop: &str, serial: &str) -> Result<String, AppError> {
        let serial = decide::parse_serial(serial)?;
        let op = Op::Sell { shop: shop.to_string(), shop_account: self.shop_account(shop)?, serial };
        Ok(self.write(op).await?.answer)
    }

    /// A shop pays a won paper ticket, once.
    pub async fn retail_pay(&self, shop: &str, serial: &str, any_shop: bool) -> Result<String, AppError> {
        let serial = decide::parse_serial(serial)?;
        let op = Op::Pay { shop: shop.to_string(), shop_account: self.shop_account(shop)?, any_shop, serial };
        Ok(self.write(op).await?.answer)
    }

    /// What a shop's screen says of a ticket; changes nothing.
    pub async fn retail_validate(&self, serial: &str) -> Result<RetailAnswer, AppError> {
        let serial = decide::parse_serial(serial)?;
        let row = reads::paper(&self.db, &self.keys, &PaperKey::Serial(serial)).await?;
        let row = row.ok_or_else(|| AppError::NotFound("no ticket has this serial".into()))?;
        if row.channel != crate::api::Channel::Paper {
            return Err(AppError::Conflict(format!("ticket {} is sold online, not in shops", row.serial)));
        }
        Ok(decide::retail_answer(&row, now_ms()))
    }

    /// Opens the paper ticket of a play code (its hash); the answer's JSON.
    pub async fn redeem(&self, code_hash: String, player: Option<i64>) -> Result<String, AppError> {
        let serial: Option<String> = on_db!(&self.db, pool => sqlx::query_scalar("SELECT serial FROM tickets WHERE play_code_hash = $1")
            .bind(&code_hash)
            .fetch_optional(pool)
            .await?);
        let token = serial.map(|s| self.ticket_token(&s)).unwrap_or_default();
        Ok(self.write(Op::Redeem { code_hash, player, token }).await?.answer)
    }

    /// The first bucket at its limit (`counted`: past it, once this
    /// attempt is counted), if any.
    pub async fn redeem_limited(
        &self,
        address: &str,
        limits: RedeemLimits,
        counted: bool,
    ) -> Result<Option<Limited>, AppError> {
        let buckets = [format!("addr:{address}"), "global".to_string()];
        let now = now_ms();
        for (bucket, start, failures) in reads::failures(&self.db, &buckets).await? {
            let limit = if bucket == "global" { limits.global } else { limits.per_address };
            let ends = start + limits.window_ms;
            let over = if counted { failures > i64::from(limit) } else { failures >= i64::from(limit) };
            if ends > now && over {
                return Ok(Some(Limited { retry_after_s: ((ends - now + 999) / 1000) as u64, bucket }));
            }
        }
        Ok(None)
    }

    /// Counts one redemption attempt from `address` (and in the global
    /// bucket), before the code is looked up (`delta` 1), or takes it back
    /// once the code was right (`delta` -1): so concurrent attempts can never
    /// look up more codes than the limit allows.
    pub async fn redeem_attempt(&self, address: &str, limits: RedeemLimits, delta: i64) -> Result<(), AppError> {
        let failures = Failures {
            buckets: vec![format!("addr:{address}"), "global".to_string()],
            now: now_ms(),
            window_ms: limits.window_ms,
            delta,
        };
        self.write(Op::Apply(Box::new(Changes { failures: Some(failures), ..Changes::none(Effect::Retail) }))).await?;
        Ok(())
    }

    /// Ends the sale of an emission now; its paper prizes are paid until
    /// `claim_days` days later.
    pub async fn close_emission(&self, emission: u32, claim_days: u32) -> Result<(), AppError> {
        let now = now_ms();
        let claim_end = now + i64::from(claim_days) * 86_400_000;
        let changes = Changes {
            close: Some((i64::from(emission), now, claim_end)),
            audit: Some(crate::core::AuditRecord {
                created_ms: now,
                kind: "sale_ended",
                data_json: serde_json::json!({"emission": emission, "sale_end_ms": now, "claim_end_ms": claim_end})
                    .to_string(),
            }),
            ..Changes::none(Effect::Emission)
        };
        match self.write(Op::Apply(Box::new(changes))).await {
            Err(AppError::Storage(crate::error::StoreError::Stale(_))) => {
                Err(AppError::Conflict(format!("emission {emission} is unknown or its sale already ended")))
            }
            other => other.map(|_| ()),
        }
    }
}
