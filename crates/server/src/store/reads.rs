//! Every read, written once for both backends ([`on_db!`]): the same SQL
//! text runs on SQLite and PostgreSQL. Reads take no lock; what they show
//! is committed.

use super::db::{Db, on_db};
use crate::keys::Keyring;
use crate::store::error::DbResult;
use domain::api::{ActionRequest, Channel, Me, RetailView, SoldTicket, TicketView};
use domain::error::{AppError, StoreError};
use domain::usecase::PaperKey;
use domain::{Caller, ForSale, LimitsRow, PendingLimits, PlayerId, StoredAnswer, TicketRow, Usage};
use domain::{PaperRow, ShopAnswer};
use emission::{CHUNK_LEAVES, chunk_proof};
use engine::{Game, PrizeSchedule};
use record::{DrawKind, Record, RecordAction, RecordDraw, RecordLeaf};
use sqlx::Row;

/// The ids of the blocks on sale: published, not withdrawn after a restore
/// (`store/restores.rs`), of an emission whose sale has not ended. Every
/// query of "the next ticket for sale" reads the unsold tickets of these
/// blocks alone, through the `tickets_unsold` index (block, position): a
/// withdrawn block's unsold tickets stay in that index and are never walked.
macro_rules! blocks_on_sale {
    () => {
        "SELECT b.id FROM blocks b JOIN emissions e ON e.id = b.emission_id
          WHERE b.published_ms IS NOT NULL AND b.withdrawn_ms IS NULL AND e.sale_end_ms IS NULL"
    };
}
pub(super) use blocks_on_sale;

/// The first ticket for sale's price.
const FIRST_ON_SALE_PRICE: &str = concat!(
    "SELECT e.price_cents FROM tickets t JOIN blocks b ON b.id = t.block_id JOIN emissions e ON e.id = b.emission_id
      WHERE t.status = 'unsold' AND t.block_id IN (",
    blocks_on_sale!(),
    ") ORDER BY t.block_id, t.position LIMIT 1"
);

/// The first ticket for sale's prize table: `(digest, toml)`.
const FIRST_ON_SALE_TABLE: &str = concat!(
    "SELECT e.table_digest, e.table_toml FROM tickets t JOIN blocks b ON b.id = t.block_id
       JOIN emissions e ON e.id = b.emission_id
      WHERE t.status = 'unsold' AND t.block_id IN (",
    blocks_on_sale!(),
    ") ORDER BY t.block_id, t.position LIMIT 1"
);

/// The columns [`ticket_row`] reads, from [`TICKET_FROM`].
pub(super) const TICKET_COLUMNS: &str = "t.id, t.owner_id, t.serial, t.client_seed, t.commitment, t.position, \
     b.number AS block_number, e.id AS emission_id, e.seed_salt, e.key_id, e.channel, e.price_cents, g.state_json, \
     t.shop, t.paid_ms, t.paid_shop, e.claim_end_ms, t.sold_ms";
/// A sold ticket and its game, for more joins or a `WHERE` to follow.
pub(super) const TICKET_FROM: &str = " FROM tickets t
 JOIN ticket_games g ON g.ticket_id = t.id
 JOIN blocks b ON b.id = t.block_id
 JOIN emissions e ON e.id = b.emission_id ";

/// A row read by column name, whichever driver gave it: sqlx's rows (the
/// read pools, PostgreSQL's units) and rusqlite's (the SQLite writer), so
/// that each row reader below is written once. Errors name the column.
pub(super) trait Cols {
    /// An integer column; NULL is `None`.
    fn int(&self, c: &str) -> Result<Option<i64>, String>;
    /// A text column; NULL is `None`.
    fn text(&self, c: &str) -> Result<Option<String>, String>;
    /// An integer column that must not be NULL.
    fn req_int(&self, c: &str) -> Result<i64, String> {
        self.int(c)?.ok_or_else(|| format!("{c} is NULL"))
    }
    /// A text column that must not be NULL.
    fn req_text(&self, c: &str) -> Result<String, String> {
        self.text(c)?.ok_or_else(|| format!("{c} is NULL"))
    }
}

macro_rules! sqlx_cols {
    ($($row:ty),*) => {$(
        impl Cols for $row {
            fn int(&self, c: &str) -> Result<Option<i64>, String> {
                Row::try_get(self, c).map_err(|e| format!("{c}: {e}"))
            }
            fn text(&self, c: &str) -> Result<Option<String>, String> {
                Row::try_get(self, c).map_err(|e| format!("{c}: {e}"))
            }
        }
    )*};
}
sqlx_cols!(sqlx::sqlite::SqliteRow, sqlx::postgres::PgRow);

impl Cols for rusqlite::Row<'_> {
    fn int(&self, c: &str) -> Result<Option<i64>, String> {
        self.get(c).map_err(|e| format!("{c}: {e}"))
    }
    fn text(&self, c: &str) -> Result<Option<String>, String> {
        self.get(c).map_err(|e| format!("{c}: {e}"))
    }
}

/// Where a ticket's server seed comes from: its emission's key and salt
/// and its place, read from its row.
pub(super) fn seed_of(row: &impl Cols, keys: &Keyring) -> Result<[u8; 32], StoreError> {
    let corrupt = |what: String| StoreError::Corrupt(format!("ticket row: {what}"));
    let get_u = |c: &str| {
        row.req_int(c)
            .map_err(corrupt)
            .and_then(|v| u32::try_from(v).map_err(|_| corrupt(format!("{c} {v} is out of range"))))
    };
    let salt = row.req_text("seed_salt").map_err(corrupt)?;
    let salt = crate::keys::parse_salt(&salt).ok_or_else(|| corrupt("an emission's salt is not 32 bytes".into()))?;
    let key_id = row.req_int("key_id").map_err(corrupt)?;
    keys.server_seed(key_id, &salt, get_u("emission_id")?, get_u("block_number")?, get_u("position")?)
        .map_err(StoreError::Corrupt)
}

/// A sold ticket from a row of [`TICKET_COLUMNS`], on either backend; its
/// server seed derived again from the key (it is never stored).
pub(super) fn ticket_row(row: &impl Cols, keys: &Keyring) -> Result<TicketRow, StoreError> {
    let corrupt = |what: String| StoreError::Corrupt(format!("ticket row: {what}"));
    let get_i = |c: &str| row.req_int(c).map_err(corrupt);
    let get_s = |c: &str| row.req_text(c).map_err(corrupt);
    let serial = get_s("serial")?;
    let game: Game = serde_json::from_str(&get_s("state_json")?)
        .map_err(|e| corrupt(format!("ticket {serial}: stored game refused: {e}")))?;
    let channel = Channel::parse(&get_s("channel")?).ok_or_else(|| corrupt("unknown channel".into()))?;
    let client_seed = row.text("client_seed").map_err(corrupt)?;
    if client_seed.is_none() != (game.seq() == 0) {
        return Err(corrupt(format!("ticket {serial}: a client seed must be recorded exactly once played")));
    }
    let owner = row.int("owner_id").map_err(corrupt)?;
    let retail = (channel == Channel::Paper).then(|| retail_of(row)).transpose()?;
    Ok(TicketRow {
        id: get_i("id")?,
        owner,
        ticket: SoldTicket {
            serial,
            price_cents: get_i("price_cents")?,
            client_seed,
            server_seed: seed_of(row, keys)?,
            commitment: get_s("commitment")?,
            channel,
            retail,
            sold_ms: row.int("sold_ms").map_err(corrupt)?,
            game,
        },
    })
}

/// A paper ticket's shop side, from `t.shop, t.paid_ms, t.paid_shop, e.claim_end_ms`.
fn retail_of(row: &impl Cols) -> Result<RetailView, StoreError> {
    let corrupt = |e: String| StoreError::Corrupt(format!("ticket row: {e}"));
    Ok(RetailView {
        sold_by: row.text("shop").map_err(corrupt)?,
        paid_ms: row.int("paid_ms").map_err(corrupt)?,
        paid_by: row.text("paid_shop").map_err(corrupt)?,
        claim_until_ms: row.int("claim_end_ms").map_err(corrupt)?,
    })
}

/// A ticket whatever its status, for the shops and the play codes: by
/// serial (`t.serial = $1`) or play code hash, for a `WHERE` to follow.
pub(super) const PAPER_SELECT: &str = "SELECT t.id, t.serial, e.channel, t.status, t.owner_id, e.price_cents, \
     t.prize_5, t.prize_6, t.prize_7, t.prize_8, t.commitment, t.position, b.number AS block_number, \
     e.id AS emission_id, e.seed_salt, e.key_id, t.client_seed, t.shop, t.paid_ms, t.paid_shop, e.sale_end_ms, e.claim_end_ms, \
     g.state_json, t.sold_ms, rs.shop AS sell_shop, rs.answer_json AS sell_answer, rp.shop AS pay_shop, \
     rp.answer_json AS pay_answer, cp.reference AS claim_reference, cp.answer_json AS claim_answer
 FROM tickets t JOIN blocks b ON b.id = t.block_id JOIN emissions e ON e.id = b.emission_id
 LEFT JOIN ticket_games g ON g.ticket_id = t.id
 LEFT JOIN retail_answers rs ON rs.ticket_id = t.id AND rs.operation = 'sell'
 LEFT JOIN retail_answers rp ON rp.ticket_id = t.id AND rp.operation = 'pay'
 LEFT JOIN claim_payments cp ON cp.ticket_id = t.id
 WHERE b.published_ms IS NOT NULL AND ";

/// The `WHERE` condition of [`PAPER_SELECT`] for a key.
pub(super) fn paper_where(key: &PaperKey) -> (&'static str, String) {
    match key {
        PaperKey::Serial(s) => ("t.serial = $1", s.clone()),
        PaperKey::CodeHash(h) => ("t.play_code_hash = $1", h.clone()),
    }
}

/// A row of [`PAPER_SELECT`].
pub(super) fn paper_row(row: &impl Cols, keys: &Keyring) -> Result<PaperRow, StoreError> {
    let corrupt = |e: String| StoreError::Corrupt(format!("ticket row: {e}"));
    let get_i = |c: &str| row.req_int(c).map_err(corrupt);
    let get_s = |c: &str| row.req_text(c).map_err(corrupt);
    let serial = get_s("serial")?;
    let game = row
        .text("state_json")
        .map_err(corrupt)?
        .map(|s| serde_json::from_str::<Game>(&s))
        .transpose()
        .map_err(|e| corrupt(format!("{serial}: stored game refused: {e}")))?;
    let prizes = [get_i("prize_5")?, get_i("prize_6")?, get_i("prize_7")?, get_i("prize_8")?];
    Ok(PaperRow {
        id: get_i("id")?,
        channel: Channel::parse(&get_s("channel")?).ok_or_else(|| corrupt("channel: unknown".into()))?,
        status: domain::TicketStatus::parse(&get_s("status")?).ok_or_else(|| corrupt("status: unknown".into()))?,
        owner: row.int("owner_id").map_err(corrupt)?,
        price_cents: get_i("price_cents")?,
        prizes: PrizeSchedule::new(prizes.map(|p| p as u64)),
        commitment: get_s("commitment")?,
        server_seed: seed_of(row, keys)?,
        client_seed: row.text("client_seed").map_err(corrupt)?,
        retail: retail_of(row)?,
        game,
        sale_end_ms: row.int("sale_end_ms").map_err(corrupt)?,
        sold_ms: row.int("sold_ms").map_err(corrupt)?,
        sell_answer: shop_answer(row, "sell_shop", "sell_answer")?,
        pay_answer: shop_answer(row, "pay_shop", "pay_answer")?,
        claim: shop_answer(row, "claim_reference", "claim_answer")?
            .map(|a| domain::ClaimPayment { reference: a.shop, answer_json: a.answer_json }),
        serial,
    })
}

/// A shop's stored answer, from its shop and answer columns (both or neither).
fn shop_answer(row: &impl Cols, shop: &str, answer: &str) -> Result<Option<ShopAnswer>, StoreError> {
    let corrupt = |e: String| StoreError::Corrupt(format!("ticket row: {e}"));
    Ok(match (row.text(shop).map_err(corrupt)?, row.text(answer).map_err(corrupt)?) {
        (Some(shop), Some(answer_json)) => Some(ShopAnswer { shop, answer_json }),
        _ => None,
    })
}

/// A ticket for the shop's screen, unlocked.
pub(super) async fn paper(db: &Db, keys: &Keyring, key: &PaperKey) -> Result<Option<PaperRow>, AppError> {
    let (cond, value) = paper_where(key);
    let sql = format!("{PAPER_SELECT}{cond}");
    Ok(on_db!(db, pool => {
        match sqlx::query(sqlx::AssertSqlSafe(sql)).bind(value).fetch_optional(pool).await.db()? {
            Some(r) => Some(paper_row(&r, keys)?),
            None => None,
        }
    }))
}

/// A limit's counter: window start, count, last admitted attempt.
pub(super) const COUNTER_SELECT: &str = "SELECT window_start_ms, count, last_ms FROM limit_counters WHERE bucket = $1";

/// A limit's counter, read outside any unit (zero when it has none).
pub async fn counter(db: &Db, bucket: &str) -> Result<domain::limits::Counter, AppError> {
    let row: Option<(i64, i64, i64)> =
        on_db!(db, pool => sqlx::query_as(COUNTER_SELECT).bind(bucket).fetch_optional(pool).await.db()?);
    Ok(row.map_or_else(Default::default, |(window_start_ms, count, last_ms)| domain::limits::Counter {
        window_start_ms,
        count,
        last_ms,
    }))
}

/// A player's account, for a write (PostgreSQL adds its lock).
pub(super) const ACCOUNT_OF_PLAYER: &str =
    "SELECT a.id, a.balance_cents FROM players p JOIN accounts a ON a.id = p.account_id WHERE p.id = $1";
/// An Idempotency-Key's stored request and answer.
pub(super) const IDEMPOTENCY_SELECT: &str =
    "SELECT request_json, answer_json FROM idempotency_keys WHERE player_id = $1 AND key = $2";
/// An applied action's stored request and answer.
pub(super) const ACTION_SELECT: &str =
    "SELECT request_json, answer_json FROM actions WHERE ticket_id = $1 AND seq = $2";
/// The next tickets for sale on SQLite, in sale order: the unsold tickets
/// of published blocks of emissions still on sale, by block, then by
/// position in the block. The writer is SQLite's only seller, so it reads
/// 1 024 at a time and keeps them; SQLite plans this without statistics as
/// a walk of the `tickets_unsold` index. With each ticket, the attempt of
/// its last round through an operator's wallet (0: none; a ticket whose
/// debit was refused or rolled back came back to the pool), so that a
/// purchase in operator mode does not read it again: nothing but this
/// writer's own reservation, which takes the ticket out of the queue, can
/// add a round to a ticket in it.
pub const NEXT_FOR_SALE_SQLITE: &str = concat!(
    "SELECT t.id, t.serial, t.prize_5, t.prize_6, t.prize_7, t.prize_8, t.commitment, t.position,
        b.number AS block_number, e.id AS emission_id, e.seed_salt, e.key_id, e.price_cents,
        (SELECT COALESCE(MAX(w.attempt), 0) FROM wallet_rounds w WHERE w.ticket_id = t.id) AS last_attempt
 FROM tickets t JOIN blocks b ON b.id = t.block_id JOIN emissions e ON e.id = b.emission_id
 WHERE t.status = 'unsold' AND t.block_id IN (",
    blocks_on_sale!(),
    ")
 ORDER BY t.block_id, t.position LIMIT 1024"
);

/// The next ticket for sale on PostgreSQL, locked: the same order as
/// [`NEXT_FOR_SALE_SQLITE`] (block, then position), one ticket, skipping
/// the ones other purchases hold (`FOR UPDATE SKIP LOCKED`).
///
/// Its plan does not depend on the planner's statistics. Written as one
/// join ordered by block and position, it was planned from estimates: on a
/// table nobody had analyzed yet (right after an emission, autovacuum off
/// or behind) PostgreSQL guessed a few unsold rows and sorted the whole
/// block's 300 000 on every purchase. Here the blocks on sale are chosen
/// first (`ARRAY(...)`: a small query of its own, run once), then the
/// tickets are read from the `tickets_unsold` index (block, position),
/// which gives them in sale order: a query of one table, ordered as its
/// index, `LIMIT 1`, is planned as that index's scan whatever the
/// estimates, and it stops at the first ticket it can lock. The block and
/// emission columns are joined to that one ticket afterwards
/// (`MATERIALIZED`: the locking scan runs once).
pub const NEXT_FOR_SALE_POSTGRES: &str = concat!(
    "WITH next AS MATERIALIZED (
    SELECT t.id, t.block_id, t.serial, t.prize_5, t.prize_6, t.prize_7, t.prize_8, t.commitment, t.position
      FROM tickets t
     WHERE t.status = 'unsold' AND t.block_id = ANY (ARRAY(",
    blocks_on_sale!(),
    "))
     ORDER BY t.block_id, t.position
     LIMIT 1 FOR UPDATE OF t SKIP LOCKED)
 SELECT n.id, n.serial, n.prize_5, n.prize_6, n.prize_7, n.prize_8, n.commitment, n.position,
        b.number AS block_number, e.id AS emission_id, e.seed_salt, e.key_id, e.price_cents
   FROM next n JOIN blocks b ON b.id = n.block_id JOIN emissions e ON e.id = b.emission_id"
);

/// A row of [`NEXT_FOR_SALE_SQLITE`] or [`NEXT_FOR_SALE_POSTGRES`], with its server seed.
pub(super) fn for_sale(row: &impl Cols, keys: &Keyring) -> Result<ForSale, StoreError> {
    let corrupt = |e: String| StoreError::Corrupt(format!("ticket for sale: {e}"));
    let get_i = |c: &str| row.req_int(c).map_err(corrupt);
    let get_s = |c: &str| row.req_text(c).map_err(corrupt);
    let prizes = [get_i("prize_5")?, get_i("prize_6")?, get_i("prize_7")?, get_i("prize_8")?];
    Ok(ForSale {
        ticket_id: get_i("id")?,
        serial: get_s("serial")?,
        prizes: PrizeSchedule::new(prizes.map(|p| p as u64)),
        price_cents: get_i("price_cents")?,
        commitment: get_s("commitment")?,
        server_seed: seed_of(row, keys)?,
        // Only SQLite's queue reads it (a column of its query).
        last_attempt: row.int("last_attempt").ok().flatten().and_then(|n| u32::try_from(n).ok()),
    })
}

/// A stored request and its answer: `(request_json, answer_json)`.
pub(super) fn stored_answer(row: Option<(String, String)>) -> Option<StoredAnswer> {
    row.map(|(request_json, answer_json)| StoredAnswer { request_json, answer_json })
}

pub(super) async fn health(db: &Db) -> Result<(), AppError> {
    let one: i64 = on_db!(db, pool => sqlx::query_scalar("SELECT CAST(1 AS BIGINT)").fetch_one(pool).await.db()?);
    if one == 1 { Ok(()) } else { Err(AppError::Unavailable("the database gave a wrong answer".into())) }
}

/// The player of a bearer token: a player's own token (`None` for its
/// expiry: it never expires), or a session's, with its expiry.
pub(super) async fn player_by_token_hash(
    db: &Db,
    token_hash: &str,
) -> Result<Option<(PlayerId, Option<i64>)>, AppError> {
    Ok(on_db!(db, pool => sqlx::query_as(
        "SELECT id, CAST(NULL AS BIGINT) FROM players WHERE token_hash = $1
         UNION ALL SELECT player_id, expires_ms FROM sessions WHERE token_hash = $1",
    )
    .bind(token_hash)
    .fetch_optional(pool)
    .await.db()?))
}

/// A player's limits, as stored.
pub(super) const LIMITS_SELECT: &str = "SELECT tickets_per_day, spend_per_week_cents, pending_tickets_per_day, \
     pending_spend_per_week_cents, pending_from_ms, excluded_until_ms FROM player_limits WHERE player_id = $1";
/// A row of [`LIMITS_SELECT`].
pub(super) type LimitsTuple = (Option<i64>, Option<i64>, Option<i64>, Option<i64>, Option<i64>, Option<i64>);

pub(super) fn limits_row(t: LimitsTuple) -> LimitsRow {
    let (tickets_per_day, spend_per_week_cents, pt, ps, from, excluded_until_ms) = t;
    LimitsRow {
        tickets_per_day,
        spend_per_week_cents,
        pending: from.map(|from_ms| PendingLimits { tickets_per_day: pt, spend_per_week_cents: ps, from_ms }),
        excluded_until_ms,
    }
}

/// A player's online purchases: tickets since `$2` (a day ago), cents spent
/// since `$3` (a week ago). The week's tickets are counted per block first,
/// and only those counts joined to their block and emission, rather than
/// each of the week's tickets (about a hundred a player in the benchmarks,
/// two index lookups each; no change in the benchmark's rate was
/// measurable, docs/bench-log/2026-12-06-postgres-action-batches.md). The
/// placeholders appear in the order `$2, $1, $3`, as before (SQLite numbers
/// `$N` names by first appearance; the shells bind in that order).
pub(super) const USAGE_SELECT: &str = "SELECT \
     CAST(COALESCE(SUM(u.today), 0) AS BIGINT), CAST(COALESCE(SUM(u.bought * e.price_cents), 0) AS BIGINT) \
     FROM (SELECT t.block_id, SUM(CASE WHEN t.sold_ms >= $2 THEN 1 ELSE 0 END) AS today, COUNT(*) AS bought \
           FROM tickets t WHERE t.owner_id = $1 AND t.sold_ms >= $3 GROUP BY t.block_id) u \
     JOIN blocks b ON b.id = u.block_id JOIN emissions e ON e.id = b.emission_id \
     WHERE e.channel = 'online'";
/// The player holding a login.
pub(super) const LOGIN_OWNER_SELECT: &str = "SELECT id FROM players WHERE login = $1";
/// A player's password hash (`NULL`: no login yet).
pub(super) const PASSWORD_HASH_SELECT: &str = "SELECT password_hash FROM players WHERE id = $1";
/// How many of a player's tickets have a game not finished (an account is not closed while one is: docs/player-api.md "Closing an account").
pub(super) const IN_PLAY_SELECT: &str = "SELECT COUNT(*) FROM tickets t JOIN ticket_games g ON g.ticket_id = t.id \
     WHERE t.owner_id = $1 AND g.phase <> 'finished'";

/// The player's limits and usage, as the API shows them.
pub(super) async fn limits(
    db: &Db,
    player: PlayerId,
    rules: domain::account::LimitRules,
    now: i64,
) -> Result<domain::api::LimitsView, AppError> {
    let (day, week) = domain::account::windows(now);
    let (row, usage): (Option<LimitsTuple>, (i64, i64)) = on_db!(db, pool => {
        let row = sqlx::query_as(LIMITS_SELECT).bind(player).fetch_optional(pool).await.db()?;
        let usage = sqlx::query_as(USAGE_SELECT).bind(player).bind(day).bind(week).fetch_one(pool).await.db()?;
        (row, usage)
    });
    let usage = Usage { tickets_today: usage.0, spent_week_cents: usage.1 };
    let rules = priced(db, rules).await?;
    Ok(domain::account::view(&row.map(limits_row).unwrap_or_default(), &usage, rules, now))
}

/// `rules` with the price a purchase would count now against the limit on
/// stakes: the next ticket for sale's (the purchase's order: block, then
/// position), else the regulation's (`domain::account::checked_price`).
pub(super) async fn priced(
    db: &Db,
    rules: domain::account::LimitRules,
) -> Result<domain::account::LimitRules, AppError> {
    let on_sale: Option<i64> = on_db!(db, pool => sqlx::query_scalar(
        FIRST_ON_SALE_PRICE,
    )
    .fetch_optional(pool)
    .await.db()?);
    Ok(domain::account::LimitRules { price_cents: domain::account::checked_price(on_sale), ..rules })
}

/// A player's stakes and prizes since `$2` (their statement), through their
/// account's ledger entries (index `ledger_entries_account`).
pub(super) const PLAY_MOVEMENTS_SELECT: &str = "SELECT m.reason, m.created_ms, le.amount_cents \
     FROM players p JOIN ledger_entries le ON le.account_id = p.account_id \
     JOIN movements m ON m.id = le.movement_id \
     WHERE p.id = $1 AND m.created_ms >= $2 AND m.reason IN ('ticket_sale', 'prize')";

/// The player's statement ("bilan de jeu") at `now`, with the period since `since`.
pub(super) async fn statement(
    db: &Db,
    player: PlayerId,
    since: Option<i64>,
    now: i64,
) -> Result<domain::api::StatementView, AppError> {
    let from = domain::account::statement_from(now).min(since.unwrap_or(i64::MAX));
    let rows: Vec<(String, i64, i64)> =
        on_db!(db, pool => sqlx::query_as(PLAY_MOVEMENTS_SELECT).bind(player).bind(from).fetch_all(pool).await.db()?);
    let movements: Vec<domain::account::PlayMovement> = rows
        .into_iter()
        .map(|(reason, ms, amount_cents)| domain::account::PlayMovement {
            stake: reason == "ticket_sale",
            amount_cents,
            ms,
        })
        .collect();
    Ok(domain::account::statement(&movements, since, now))
}

/// The prize table on sale online: `(digest, toml)`.
pub(super) async fn online_table(db: &Db) -> Result<Option<(String, String)>, AppError> {
    let next: Option<(String, String)> = on_db!(db, pool => sqlx::query_as(
        FIRST_ON_SALE_TABLE,
    )
    .fetch_optional(pool)
    .await.db()?);
    if next.is_some() {
        return Ok(next);
    }
    Ok(on_db!(db, pool => sqlx::query_as(
        "SELECT table_digest, table_toml FROM emissions WHERE channel = 'online' ORDER BY id DESC LIMIT 1",
    )
    .fetch_optional(pool)
    .await.db()?))
}

/// The player and password hash of a login.
pub(super) async fn login(db: &Db, login: &str) -> Result<Option<(PlayerId, Option<String>)>, AppError> {
    Ok(on_db!(db, pool => sqlx::query_as("SELECT id, password_hash FROM players WHERE login = $1")
        .bind(login)
        .fetch_optional(pool)
        .await.db()?))
}

/// The player and recovery code's hash of a login (docs/player-api.md "Recovery without e-mail").
pub(super) async fn recovery(db: &Db, login: &str) -> Result<Option<(PlayerId, Option<String>)>, AppError> {
    Ok(on_db!(db, pool => sqlx::query_as("SELECT id, recovery_hash FROM players WHERE login = $1")
        .bind(login)
        .fetch_optional(pool)
        .await.db()?))
}

/// A player's password hash, if they have a login.
pub(super) async fn password_hash(db: &Db, player: PlayerId) -> Result<Option<String>, AppError> {
    let hash: Option<Option<String>> = on_db!(db, pool => sqlx::query_scalar(PASSWORD_HASH_SELECT)
        .bind(player)
        .fetch_optional(pool)
        .await.db()?);
    Ok(hash.flatten())
}

pub(super) async fn me(db: &Db, player: PlayerId) -> Result<Me, AppError> {
    let row: Option<(i64, Option<String>, Option<String>)> = on_db!(db, pool => sqlx::query_as(
        "SELECT a.balance_cents, p.name, p.login FROM players p JOIN accounts a ON a.id = p.account_id WHERE p.id = $1",
    )
    .bind(player)
    .fetch_optional(pool)
    .await.db()?);
    let (balance, name, login) = row.ok_or_else(|| AppError::Unauthorized("unknown player".into()))?;
    Ok(Me { player_id: player, balance_cents: balance, name, login, mode: "internal".into() })
}

/// The player's tickets, newest first: all of them, or a page of at most
/// `limit` bought before the ticket `before` (its serial).
pub(super) async fn tickets(
    db: &Db,
    keys: &Keyring,
    player: PlayerId,
    limit: Option<u32>,
    before: Option<&str>,
) -> Result<Vec<TicketView>, AppError> {
    let after = if before.is_some() { "AND t.id < (SELECT id FROM tickets WHERE serial = $2) " } else { "" };
    let page = match limit {
        Some(n) => format!("LIMIT {n}"),
        None => String::new(),
    };
    let sql = format!("SELECT {TICKET_COLUMNS}{TICKET_FROM}WHERE t.owner_id = $1 {after}ORDER BY t.id DESC {page}");
    on_db!(db, pool => {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(player);
        if let Some(b) = before {
            q = q.bind(b);
        }
        let rows = q.fetch_all(pool).await.db()?;
        rows.iter().map(|r| Ok(ticket_row(r, keys)?.ticket.view())).collect()
    })
}

/// A sold ticket of `player` by its serial; 404 for another player's
/// ticket, exactly as for a ticket that does not exist.
pub(super) async fn owned_ticket(
    db: &Db,
    keys: &Keyring,
    caller: &Caller,
    serial: &str,
) -> Result<TicketRow, AppError> {
    let sql = format!("SELECT {TICKET_COLUMNS}{TICKET_FROM}WHERE t.serial = $1");
    let row = on_db!(db, pool => {
        match sqlx::query(sqlx::AssertSqlSafe(sql)).bind(serial).fetch_optional(pool).await.db()? {
            Some(r) => Some(ticket_row(&r, keys)?),
            None => None,
        }
    });
    row.filter(|t| caller.may_play(t)).ok_or_else(AppError::ticket_not_found)
}

/// A stored action with its draw.
#[derive(sqlx::FromRow)]
struct ActionRow {
    seq: i64,
    request_json: String,
    draw_kind: String,
    draw_player: Option<String>,
    draw_capone: String,
}

/// The public record of a ticket. The actions read are those before the
/// ticket's `seq` as loaded: rows written once and never changed. Each
/// holds the one draw it took, number `seq` of the ticket's stream.
pub(super) async fn record(db: &Db, keys: &Keyring, caller: &Caller, serial: &str) -> Result<Record, AppError> {
    let row = owned_ticket(db, keys, caller, serial).await?;
    let game = &row.ticket.game;
    let rows: Vec<ActionRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT seq, request_json, draw_kind, draw_player, draw_capone FROM actions
          WHERE ticket_id = $1 AND seq < $2 ORDER BY seq",
    )
    .bind(row.id)
    .bind(game.seq() as i64)
    .fetch_all(pool)
    .await.db()?);
    let corrupt = |what: String| AppError::Storage(StoreError::Corrupt(what));
    if rows.len() as u64 != game.seq() || game.draws() != game.seq() {
        return Err(corrupt(format!(
            "ticket {serial}: {} actions stored, its game is at seq {} after {} draws",
            rows.len(),
            game.seq(),
            game.draws()
        )));
    }
    let (actions, draws) = rows
        .into_iter()
        .map(|a| {
            let bad = || corrupt(format!("ticket {serial}: action {} or its draw is malformed", a.seq));
            let req: ActionRequest = serde_json::from_str(&a.request_json).map_err(|_| bad())?;
            let seq = a.seq as u64;
            let draw = RecordDraw {
                n: seq,
                kind: DrawKind::parse(&a.draw_kind).ok_or_else(bad)?,
                player: a.draw_player.map(|p| p.parse()).transpose().map_err(|_| bad())?,
                capone: a.draw_capone.parse().map_err(|_| bad())?,
            };
            Ok((RecordAction { seq, action: req.action }, draw))
        })
        .collect::<Result<(Vec<_>, Vec<_>), AppError>>()?;
    let view = row.ticket.view();
    let inclusion = inclusion(db, row.id).await?;
    Ok(Record {
        serial: row.ticket.serial.clone(),
        client_seed: row.ticket.client_seed.clone(),
        commitment: view.commitment,
        server_seed: view.server_seed,
        prizes_cents: game.prizes(),
        actions,
        draws,
        result: game.result(),
        emission: inclusion.emission,
        block: inclusion.block,
        position: inclusion.leaf.position,
        leaf: inclusion.leaf,
        proof: inclusion.proof,
        root: inclusion.root,
    })
}

/// A ticket's leaf, as stored: `(serial, position, schedule_row, prize_5,
/// prize_6, prize_7, prize_8, play_code_hash, commitment)`.
pub(super) type LeafRow = (String, i64, i64, i64, i64, i64, i64, String, String);
const LEAF_COLUMNS: &str =
    "serial, position, schedule_row, prize_5, prize_6, prize_7, prize_8, play_code_hash, commitment";

/// The leaf rows of block `block_id` from position `first`, `count` of them at most.
pub(super) async fn leaf_rows(db: &Db, block_id: i64, first: i64, count: i64) -> Result<Vec<LeafRow>, AppError> {
    Ok(on_db!(db, pool => sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {LEAF_COLUMNS} FROM tickets WHERE block_id = $1 AND position BETWEEN $2 AND $3 ORDER BY position"
    )))
    .bind(block_id)
    .bind(first)
    .bind(first + count - 1)
    .fetch_all(pool)
    .await.db()?))
}

pub(super) fn record_leaf(r: LeafRow) -> Result<RecordLeaf, StoreError> {
    let (serial, position, row, p5, p6, p7, p8, play_code_sha256, commitment) = r;
    let bad = |what: &str| StoreError::Corrupt(format!("ticket {serial}: {what} out of range"));
    Ok(RecordLeaf {
        position: u32::try_from(position).map_err(|_| bad("position"))?,
        row: u32::try_from(row).map_err(|_| bad("schedule row"))?,
        prizes_cents: PrizeSchedule::new([p5, p6, p7, p8].map(|p| p as u64)),
        play_code_sha256,
        commitment,
        serial,
    })
}

/// Where a ticket sits in its published block.
struct Inclusion {
    emission: u32,
    block: u32,
    leaf: RecordLeaf,
    proof: Vec<String>,
    root: String,
}

/// The ticket's leaf and its inclusion proof, rebuilt from its chunk's rows
/// and the block's chunk roots (`emission::chunk_roots`), and checked against the
/// block's root before it is shown.
async fn inclusion(db: &Db, ticket: i64) -> Result<Inclusion, AppError> {
    let sql = format!(
        "SELECT t.block_id, e.id, b.number, b.root, b.chunk_roots, {}
         FROM tickets t JOIN blocks b ON b.id = t.block_id JOIN emissions e ON e.id = b.emission_id WHERE t.id = $1",
        LEAF_COLUMNS.split(", ").map(|c| format!("t.{c}")).collect::<Vec<_>>().join(", ")
    );
    let corrupt = |what: String| AppError::Storage(StoreError::Corrupt(what));
    let (block_id, emission, block, root, chunk_roots, leaf) = on_db!(db, pool => {
        let r = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(ticket).fetch_one(pool).await.db()?;
        let get_i = |i: usize| r.try_get::<i64, _>(i).map_err(|e| corrupt(format!("ticket {ticket}: {e}")));
        let get_s = |i: usize| r.try_get::<String, _>(i).map_err(|e| corrupt(format!("ticket {ticket}: {e}")));
        let leaf: LeafRow = (get_s(5)?, get_i(6)?, get_i(7)?, get_i(8)?, get_i(9)?, get_i(10)?, get_i(11)?, get_s(12)?, get_s(13)?);
        (get_i(0)?, get_i(1)?, get_i(2)?, get_s(3)?, get_s(4)?, leaf)
    });
    let leaf = record_leaf(leaf)?;
    let chunk = CHUNK_LEAVES as i64;
    let index = i64::from(leaf.position) - 1;
    let first = index / chunk * chunk + 1;
    let leaves = leaf_rows(db, block_id, first, chunk)
        .await?
        .into_iter()
        .map(|r| {
            let l = record_leaf(r)?;
            l.leaf().map(|l| l.hash()).map_err(|e| StoreError::Corrupt(format!("ticket {}: {e}", l.serial)))
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    let roots = domain::supply::parse_chunk_roots(&chunk_roots)
        .ok_or_else(|| corrupt(format!("block {block_id}: its chunk roots are malformed")))?;
    let proof = chunk_proof(leaves, &roots, CHUNK_LEAVES, index as usize).ok_or_else(|| {
        corrupt(format!("block {block_id}: the rows of ticket {} do not match its chunk root", leaf.serial))
    })?;
    let own = leaf.leaf().map_err(|e| corrupt(format!("ticket {}: {e}", leaf.serial)))?;
    let mut top = [0u8; 32];
    if hex::decode_to_slice(&root, &mut top).is_err() || !proof.verify(&own.hash(), &top) {
        return Err(corrupt(format!("block {block_id}: ticket {} does not climb to the block's root", leaf.serial)));
    }
    let number = |v: i64| u32::try_from(v).map_err(|_| corrupt(format!("block {block_id}: number {v} out of range")));
    Ok(Inclusion {
        emission: number(emission)?,
        block: number(block)?,
        proof: record::proof_strings(&proof),
        root,
        leaf,
    })
}

/// Sold tickets whose game is not finished.
pub(super) async fn active_games(db: &Db) -> Result<i64, AppError> {
    Ok(on_db!(db, pool => sqlx::query_scalar("SELECT COUNT(*) FROM ticket_games WHERE phase <> 'finished'")
        .fetch_one(pool)
        .await.db()?))
}

/// Audit entries committed and not chained yet, and the creation time (ms)
/// of the oldest of them (read through the partial index `audit_log_unsealed`).
pub(super) async fn unsealed_audit(db: &Db) -> Result<(i64, Option<i64>), AppError> {
    Ok(on_db!(db, pool => sqlx::query_as("SELECT COUNT(*), MIN(created_ms) FROM audit_log WHERE chain_pos IS NULL")
        .fetch_one(pool)
        .await.db()?))
}
