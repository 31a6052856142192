//! The paper channel in the store: the shops' accounts, their three use
//! cases (sell, validate, pay), redeeming a play code, the ticket's own
//! token and the limit on failed redemptions (the end of an emission's sale
//! and the claims above a shop's ceiling: [`super::claims`]).

use super::clock::now_ms;
use super::db::on_db;
use super::reads;
use super::shell::Store;
use crate::store::error::DbResult;
use domain::error::AppError;
use domain::limits::RedeemLimits;
use domain::retail::{CountAmount, RetailAnswer, ShopPayment, ShopReport, parse_serial, retail_answer};
use domain::usecase;
use domain::{Changes, Effect, Op};
use format::calendar::{Day, paris_day_bounds};
use sha2::{Digest, Sha256};
use usecase::PaperKey;

/// A ticket token's prefix: `t1.<serial>.<64 hex>`.
const TOKEN_PREFIX: &str = "t1.";

/// What a play code did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redeemed {
    /// The ticket's answer (`{ticket, token}`).
    Opened(String),
    /// No ticket has this code: counted against the client's network;
    /// `filled`: that network's limit is now reached.
    WrongCode { filled: bool },
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

    /// A ticket's own token: `t1.<serial>.<HMAC-SHA256(server key, "as-capone ticket token v1" || serial)>`,
    /// with the key of the ticket's emission (`key_id`), so that a token stays
    /// valid across key rotations. It never changes, so the same code gives
    /// the same token on any device.
    pub fn ticket_token(&self, serial: &str, key_id: i64) -> Result<String, AppError> {
        let key = self.keys.key(key_id).map_err(AppError::Unavailable)?;
        let mac = hex::encode(key.hmac(&[b"as-capone ticket token v1", serial.as_bytes()]));
        Ok(format!("{TOKEN_PREFIX}{serial}.{mac}"))
    }

    /// The serial a ticket token opens, if it is one of this server's:
    /// checked with the key of the serial's emission.
    pub async fn ticket_of_token(&self, token: &str) -> Result<Option<String>, AppError> {
        let Some((serial, _)) = token.strip_prefix(TOKEN_PREFIX).and_then(|rest| rest.rsplit_once('.')) else {
            return Ok(None);
        };
        let Ok(parsed) = emission::Serial::parse(serial) else {
            return Ok(None);
        };
        let Some(key_id) = self.emission_key(parsed.emission()).await? else {
            return Ok(None);
        };
        let Ok(want) = self.ticket_token(serial, key_id) else {
            return Ok(None);
        };
        // Compared as hashes: the time taken says nothing of the token.
        Ok((Sha256::digest(want.as_bytes()) == Sha256::digest(token.as_bytes())).then(|| serial.to_string()))
    }

    /// The key id of emission `emission` (`None`: no such emission),
    /// remembered once read.
    async fn emission_key(&self, emission: u32) -> Result<Option<i64>, AppError> {
        if let Some(id) = self.emission_keys.read().expect("emission keys").get(&emission) {
            return Ok(Some(*id));
        }
        let id: Option<i64> = on_db!(&self.db, pool => sqlx::query_scalar("SELECT key_id FROM emissions WHERE id = $1")
            .bind(i64::from(emission))
            .fetch_optional(pool)
            .await.db()?);
        if let Some(id) = id {
            self.emission_keys.write().expect("emission keys").insert(emission, id);
        }
        Ok(id)
    }

    /// A shop sells a printed paper ticket.
    /// The answer, and whether it is the stored answer of the shop's
    /// earlier sale (a retry: nothing written).
    pub async fn retail_sell(&self, shop: &str, ceiling: i64, serial: &str) -> Result<(String, bool), AppError> {
        let serial = parse_serial(serial)?;
        let op =
            Op::Sell(usecase::Sell { shop: shop.to_string(), shop_account: self.shop_account(shop)?, ceiling, serial });
        let done = self.write(op).await?;
        Ok((done.answer, done.effect.is_none()))
    }

    /// A shop pays a won paper ticket, once.
    /// The answer, and whether it is the stored answer of the shop's
    /// earlier payment (a retry: nothing paid).
    pub async fn retail_pay(
        &self,
        shop: &str,
        ceiling: i64,
        serial: &str,
        any_shop: bool,
    ) -> Result<(String, bool), AppError> {
        let serial = parse_serial(serial)?;
        let op = Op::Pay(usecase::Pay {
            shop: shop.to_string(),
            shop_account: self.shop_account(shop)?,
            any_shop,
            ceiling,
            serial,
        });
        let done = self.write(op).await?;
        Ok((done.answer, done.effect.is_none()))
    }

    /// What a shop's screen says of a ticket; changes nothing.
    pub async fn retail_validate(&self, ceiling: i64, serial: &str) -> Result<RetailAnswer, AppError> {
        let serial = parse_serial(serial)?;
        let row = reads::paper(&self.db, &self.keys, &PaperKey::Serial(serial)).await?;
        let row = row.ok_or_else(|| AppError::NotFound("no ticket has this serial".into()))?;
        if row.channel != domain::api::Channel::Paper {
            return Err(AppError::Conflict(format!("ticket {} is sold online, not in shops", row.serial)));
        }
        Ok(retail_answer(&row, now_ms(), ceiling))
    }

    /// Shop `shop`'s figures for Paris calendar day `day`: the paper
    /// tickets it sold (at their emission's price) and the prizes it paid,
    /// from its own ticket rows only (`tickets.shop`, `tickets.paid_shop`),
    /// each read through its index of migration 8 (shop, time).
    pub async fn retail_report(&self, shop: &str, day: Day) -> Result<ShopReport, AppError> {
        let (from, to) = paris_day_bounds(day);
        // SUM of BIGINT is NUMERIC on PostgreSQL: cast back to cents.
        let (count, amount): (i64, i64) = on_db!(&self.db, pool => sqlx::query_as(
            "SELECT COUNT(*), CAST(COALESCE(SUM(e.price_cents), 0) AS BIGINT) FROM tickets t
             JOIN blocks b ON b.id = t.block_id JOIN emissions e ON e.id = b.emission_id
             WHERE t.shop = $1 AND t.sold_ms >= $2 AND t.sold_ms < $3",
        )
        .bind(shop)
        .bind(from)
        .bind(to)
        .fetch_one(pool)
        .await.db()?);
        let paid: Vec<(String, Option<i64>, i64)> = on_db!(&self.db, pool => sqlx::query_as(
            "SELECT t.serial, g.prize_cents, t.paid_ms FROM tickets t JOIN ticket_games g ON g.ticket_id = t.id
             WHERE t.paid_shop = $1 AND t.paid_ms >= $2 AND t.paid_ms < $3 ORDER BY t.paid_ms, t.id",
        )
        .bind(shop)
        .bind(from)
        .bind(to)
        .fetch_all(pool)
        .await.db()?);
        let payments = paid
            .into_iter()
            .map(|(serial, prize, paid_ms)| match prize {
                Some(prize_cents) => Ok(ShopPayment { serial, prize_cents, paid_ms }),
                None => Err(AppError::internal(format!("ticket {serial} is paid and its game has no prize"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ShopReport::new(shop, day, CountAmount { count, amount_cents: amount }, payments))
    }

    /// Opens the paper ticket of a play code (its hash), or counts a wrong
    /// code against the client's network, in one unit (core::limits).
    pub async fn redeem(
        &self,
        code_hash: String,
        player: Option<i64>,
        network: String,
        limits: RedeemLimits,
    ) -> Result<Redeemed, AppError> {
        let found: Option<(String, i64)> = on_db!(&self.db, pool => sqlx::query_as(
            "SELECT t.serial, e.key_id FROM tickets t JOIN blocks b ON b.id = t.block_id
             JOIN emissions e ON e.id = b.emission_id WHERE t.play_code_hash = $1",
        )
        .bind(&code_hash)
        .fetch_optional(pool)
        .await.db()?);
        let token = match found {
            Some((serial, key_id)) => self.ticket_token(&serial, key_id)?,
            None => String::new(),
        };
        let rows = self.ceilings().limit_counters;
        let done = self
            .write(Op::Redeem(usecase::Redeem { code_hash, player, token, network, limits, rows }))
            .await
            .inspect_err(|e| self.ceiling_refused(e))?;
        Ok(match done.effect {
            Some(Effect::WrongCode { filled }) => Redeemed::WrongCode { filled },
            _ => Redeemed::Opened(done.answer),
        })
    }

    /// Forgets an account's login attempts (its owner logged in).
    pub async fn count(&self, counters: Vec<domain::CounterWrite>) -> Result<(), AppError> {
        let changes = Changes { counters, ..Changes::none(Effect::Counted) };
        self.write(Op::Apply(Box::new(changes))).await.map(|_| ())
    }

    /// Deletes the counters whose window began before `before` (unix ms),
    /// then sets the gauges of the ceilings' use.
    pub async fn expire_counters(&self, before: i64) -> Result<(), AppError> {
        let changes = Changes { expire_counters_before: Some(before), ..Changes::none(Effect::Counted) };
        self.write(Op::Apply(Box::new(changes))).await?;
        self.ceilings_gauges().await
    }

    /// A limit's counter as it stands (tests, the reliability suite).
    pub async fn counter(&self, bucket: &str) -> Result<domain::limits::Counter, AppError> {
        reads::counter(&self.db, bucket).await
    }
}
