//! The durable ledger: players, double-entry movements and every wallet
//! transaction with the answer it was given, in SQLite.
//!
//! Every wallet call is one `BEGIN IMMEDIATE` transaction (the write lock is
//! taken first, so two calls never interleave): the request's nonce is
//! recorded, the transaction id looked up, the money moved and the answer
//! stored, then committed before the answer leaves. A retry with the same
//! id and payload gets the stored answer, byte for byte; another payload
//! under the same id is refused (409 `transaction_conflict`) and nothing is
//! applied (docs/operator-integration.md, the wallet's rules).

use anyhow::Context;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqliteConnection};
use std::path::Path;
use std::time::Duration;
use wallet::messages::errors;
use wallet::{
    BalanceRequest, CURRENCY, ErrorBody, MoneyRequest, OperatorTransaction, RollbackRequest, TransactionsAnswer,
    TransactionsRequest, TxKind, WalletAnswer,
};

/// Seven days: the operator's weekly stake limit is over a rolling week.
pub const WEEK_MS: i64 = 7 * 24 * 3600 * 1000;

/// An answer ready to be signed and sent: its status and its exact body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body, exactly as sent (and stored, for a transaction).
    pub body: Vec<u8>,
}

impl Answer {
    fn json(status: u16, value: &impl Serialize) -> Answer {
        Answer { status, body: serde_json::to_vec(value).expect("serializable") }
    }

    /// An [`ErrorBody`] answer.
    pub fn error(status: u16, error: &str, message: impl Into<String>) -> Answer {
        Answer::json(status, &ErrorBody { error: error.to_string(), message: message.into() })
    }
}

/// The request's nonce, recorded in the call's own transaction.
#[derive(Debug, Clone)]
pub struct NonceUse {
    /// The key id that signed.
    pub key_id: String,
    /// The request's nonce.
    pub nonce: String,
    /// Nonces seen before this instant (ms) are forgotten (twice the window back).
    pub forget_before_ms: i64,
}

/// What a wallet call can fail with besides an answer.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The nonce was seen before: the request is a replay (401).
    #[error("this nonce was already used")]
    Replayed,
    /// The database failed; nothing was committed.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
}

/// A player as the operator's staff sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlayerView {
    /// The operator's reference.
    pub player: String,
    /// The balance, in cents.
    pub balance_cents: i64,
    /// Stakes allowed over a rolling week, in cents; none: no limit.
    pub weekly_limit_cents: Option<i64>,
    /// Blocked players cannot stake (their prizes are still credited).
    pub blocked: bool,
    /// Stakes (applied debits not rolled back) over the last 7 days.
    pub stakes_this_week_cents: i64,
}

/// Counts and sums of one kind of transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KindTotals {
    /// Transactions applied (status 200).
    pub count: i64,
    /// Cents they moved.
    pub moved_cents: i64,
}

/// The whole ledger at a glance, with its consistency checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Players known.
    pub players: i64,
    /// Sum of the players' balances, in cents.
    pub balances_cents: i64,
    /// The house's account (stakes taken minus prizes paid and deposits made), in cents.
    pub house_cents: i64,
    /// Sum of all entries: 0 in a balanced ledger.
    pub entries_sum_cents: i64,
    /// Every player's balance equals the sum of its entries.
    pub balances_match_entries: bool,
    /// `entries_sum_cents == 0 && balances_match_entries`.
    pub balanced: bool,
    /// Applied debits.
    pub debit: KindTotals,
    /// Applied credits.
    pub credit: KindTotals,
    /// Rollbacks answered 200 (including no-ops and tombstones).
    pub rollback: KindTotals,
    /// Debits later rolled back.
    pub debits_rolled_back: i64,
    /// Rollbacks of a debit never seen.
    pub tombstones: i64,
    /// Debits refused (402) and stored.
    pub debits_refused: i64,
}

/// The ledger's database.
#[derive(Debug, Clone)]
pub struct Ledger {
    pool: SqlitePool,
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The canonical text of a transaction request: its kind and its fields in
/// the protocol's order, as JSON.
fn request_sha256(kind: TxKind, request: &impl Serialize) -> String {
    #[derive(Serialize)]
    struct Canonical<'a, T> {
        kind: &'a str,
        request: &'a T,
    }
    sha256_hex(&serde_json::to_vec(&Canonical { kind: kind.as_str(), request }).expect("serializable"))
}

/// The largest amount of one transaction, in cents (ten million euros):
/// sums of amounts then stay far within SQLite's 64-bit integers.
pub const MAX_AMOUNT_CENTS: i64 = 1_000_000_000;

/// The largest balance the staff can set, in cents.
pub const MAX_BALANCE_CENTS: i64 = 1_000_000_000_000_000;

/// 1 to `max` characters (not bytes: as JSON Schema's maxLength counts), none a control character.
fn valid_ref(s: &str, max: usize) -> bool {
    !s.is_empty() && s.chars().count() <= max && s.chars().all(|c| !c.is_control())
}

/// The rules a request's shape must follow (400 otherwise).
fn check_currency(currency: &str) -> Result<(), Answer> {
    if currency == CURRENCY {
        Ok(())
    } else {
        Err(Answer::error(400, errors::BAD_REQUEST, format!("the currency must be {CURRENCY}, not {currency:?}")))
    }
}

fn check_player(player: &str) -> Result<(), Answer> {
    if valid_ref(player, 64) {
        Ok(())
    } else {
        Err(Answer::error(400, errors::BAD_REQUEST, "a player reference is 1 to 64 printable characters"))
    }
}

fn check_ids(transaction_id: &str, round_id: &str, amount_cents: i64) -> Result<(), Answer> {
    if !valid_ref(transaction_id, 128) || !valid_ref(round_id, 128) {
        return Err(Answer::error(
            400,
            errors::BAD_REQUEST,
            "transaction and round ids are 1 to 128 printable characters",
        ));
    }
    if !(1..=MAX_AMOUNT_CENTS).contains(&amount_cents) {
        return Err(Answer::error(
            400,
            errors::BAD_REQUEST,
            format!("amount_cents is a whole number from 1 to {MAX_AMOUNT_CENTS}"),
        ));
    }
    Ok(())
}

impl Ledger {
    /// Opens (creating it if needed) the ledger at `path` and applies the migrations.
    pub async fn open(path: &Path) -> anyhow::Result<Ledger> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // FULL with WAL: a commit is on disk (fsync of the WAL) before
            // its answer leaves, so that an answer given is never lost, even
            // to a power failure (NORMAL would survive a crash of this
            // process but not of the machine).
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .with_context(|| format!("opening the ledger {}", path.display()))?;
        sqlx::migrate!("./migrations").run(&pool).await.context("the ledger's migrations")?;
        Ok(Ledger { pool })
    }

    /// Closes the database (waits for the calls in progress).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn record_nonce(
        conn: &mut SqliteConnection,
        nonce: Option<&NonceUse>,
        now_ms: i64,
    ) -> Result<(), LedgerError> {
        let Some(n) = nonce else { return Ok(()) };
        sqlx::query("DELETE FROM nonces WHERE seen_ms < ?").bind(n.forget_before_ms).execute(&mut *conn).await?;
        let inserted =
            sqlx::query("INSERT INTO nonces (key_id, nonce, seen_ms) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
                .bind(&n.key_id)
                .bind(&n.nonce)
                .bind(now_ms)
                .execute(&mut *conn)
                .await?
                .rows_affected();
        if inserted == 0 { Err(LedgerError::Replayed) } else { Ok(()) }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction after recording the
    /// nonce; commits whatever answer it gives (a refusal moved nothing).
    async fn call<F>(&self, nonce: Option<&NonceUse>, now_ms: i64, body: F) -> Result<Answer, LedgerError>
    where
        F: for<'c> AsyncFnOnce(&'c mut SqliteConnection) -> Result<Answer, sqlx::Error>,
    {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        Self::record_nonce(&mut tx, nonce, now_ms).await?;
        let answer = body(&mut *tx).await?;
        tx.commit().await?;
        Ok(answer)
    }

    /// Records the nonce alone (a request refused before the ledger, e.g. a bad body).
    pub async fn nonce_only(&self, nonce: Option<&NonceUse>, now_ms: i64) -> Result<(), LedgerError> {
        self.call(nonce, now_ms, async |_| Ok(Answer { status: 0, body: Vec::new() })).await.map(|_| ())
    }

    /// `POST /wallet/balance`.
    pub async fn balance(
        &self,
        req: &BalanceRequest,
        nonce: Option<&NonceUse>,
        now_ms: i64,
    ) -> Result<Answer, LedgerError> {
        if let Err(a) = check_currency(&req.currency).and_then(|()| check_player(&req.player)) {
            self.nonce_only(nonce, now_ms).await?;
            return Ok(a);
        }
        self.call(nonce, now_ms, async |conn| {
            Ok(match balance_of(conn, &req.player).await? {
                None => unknown_player(&req.player),
                Some(balance_cents) => Answer::json(
                    200,
                    &WalletAnswer {
                        transaction_id: None,
                        balance_cents,
                        currency: CURRENCY.into(),
                        operator_transaction_id: None,
                    },
                ),
            })
        })
        .await
    }

    /// `POST /wallet/debit` (`kind` Debit) or `/wallet/credit` (`kind` Credit).
    pub async fn money(
        &self,
        kind: TxKind,
        req: &MoneyRequest,
        nonce: Option<&NonceUse>,
        now_ms: i64,
    ) -> Result<Answer, LedgerError> {
        assert!(kind != TxKind::Rollback, "a rollback is Ledger::rollback");
        if let Err(a) = check_currency(&req.currency)
            .and_then(|()| check_player(&req.player))
            .and_then(|()| check_ids(&req.transaction_id, &req.round_id, req.amount_cents))
            .and_then(|()| {
                if valid_ref(&req.game, 64) {
                    Ok(())
                } else {
                    Err(Answer::error(400, errors::BAD_REQUEST, "game is 1 to 64 printable characters"))
                }
            })
        {
            self.nonce_only(nonce, now_ms).await?;
            return Ok(a);
        }
        let sha = request_sha256(kind, req);
        self.call(nonce, now_ms, async |conn| {
            if let Some(a) = stored(conn, &req.transaction_id, &sha).await? {
                return Ok(a);
            }
            if kind == TxKind::Debit {
                let tomb: Option<i64> = sqlx::query_scalar(
                    "SELECT 1 FROM transactions WHERE kind = 'rollback' AND debit_transaction_id = ?",
                )
                .bind(&req.transaction_id)
                .fetch_optional(&mut *conn)
                .await?;
                if tomb.is_some() {
                    return Ok(Answer::error(
                        409,
                        errors::ROLLED_BACK,
                        "this debit was rolled back before it arrived: it is never applied",
                    ));
                }
            } else {
                let rolled: Option<i64> =
                    sqlx::query_scalar("SELECT 1 FROM transactions WHERE kind = 'rollback' AND round_id = ? LIMIT 1")
                        .bind(&req.round_id)
                        .fetch_optional(&mut *conn)
                        .await?;
                if rolled.is_some() {
                    return Ok(Answer::error(
                        409,
                        errors::ROLLED_BACK,
                        "this round's debit was rolled back: the round has no prize to credit",
                    ));
                }
            }
            let Some(player) = player_row(conn, &req.player).await? else {
                return Ok(unknown_player(&req.player));
            };
            if kind == TxKind::Debit {
                let refusal = if player.blocked {
                    Some((errors::PLAYER_BLOCKED, "the player may not play".to_string()))
                } else if let Some(limit) = player.weekly_limit_cents
                    && stakes_since(conn, &req.player, now_ms - WEEK_MS).await? + req.amount_cents > limit
                {
                    Some((errors::LIMIT_REACHED, format!("this stake would pass the weekly limit of {limit} cents")))
                } else if player.balance_cents < req.amount_cents {
                    Some((errors::INSUFFICIENT_FUNDS, "the balance does not cover the stake".to_string()))
                } else {
                    None
                };
                if let Some((error, message)) = refusal {
                    let answer = Answer::error(402, error, message);
                    let row = NewTx {
                        transaction_id: &req.transaction_id,
                        kind,
                        round_id: &req.round_id,
                        player: &req.player,
                        amount_cents: req.amount_cents,
                        debit_transaction_id: None,
                        sha: &sha,
                        moved_cents: 0,
                        tombstone: false,
                    };
                    insert_tx(conn, &row, now_ms, |_| answer.clone()).await?;
                    return Ok(answer);
                }
            }
            let delta = if kind == TxKind::Debit { -req.amount_cents } else { req.amount_cents };
            let balance = move_money(conn, &req.player, delta, &format!("tx:{}", req.transaction_id), now_ms).await?;
            let row = NewTx {
                transaction_id: &req.transaction_id,
                kind,
                round_id: &req.round_id,
                player: &req.player,
                amount_cents: req.amount_cents,
                debit_transaction_id: None,
                sha: &sha,
                moved_cents: req.amount_cents,
                tombstone: false,
            };
            insert_tx(conn, &row, now_ms, |op| ok_answer(&req.transaction_id, balance, op)).await
        })
        .await
    }

    /// `POST /wallet/rollback`.
    pub async fn rollback(
        &self,
        req: &RollbackRequest,
        nonce: Option<&NonceUse>,
        now_ms: i64,
    ) -> Result<Answer, LedgerError> {
        if let Err(a) = check_currency(&req.currency)
            .and_then(|()| check_player(&req.player))
            .and_then(|()| check_ids(&req.transaction_id, &req.round_id, req.amount_cents))
            .and_then(|()| {
                if valid_ref(&req.debit_transaction_id, 128) {
                    Ok(())
                } else {
                    Err(Answer::error(
                        400,
                        errors::BAD_REQUEST,
                        "debit_transaction_id is 1 to 128 printable characters",
                    ))
                }
            })
        {
            self.nonce_only(nonce, now_ms).await?;
            return Ok(a);
        }
        let sha = request_sha256(TxKind::Rollback, req);
        self.call(nonce, now_ms, async |conn| {
            if let Some(a) = stored(conn, &req.transaction_id, &sha).await? {
                return Ok(a);
            }
            let Some(player) = player_row(conn, &req.player).await? else {
                return Ok(unknown_player(&req.player));
            };
            let debit = sqlx::query(
                "SELECT kind, round_id, player, amount_cents, status, rolled_back FROM transactions WHERE transaction_id = ?",
            )
            .bind(&req.debit_transaction_id)
            .fetch_optional(&mut *conn)
            .await?;
            let mut moved = 0;
            let mut tombstone = false;
            match debit {
                None => tombstone = true,
                Some(d) => {
                    let (kind, round, owner, amount, status, rolled_back): (String, String, String, i64, i64, bool) =
                        (d.get(0), d.get(1), d.get(2), d.get(3), d.get(4), d.get(5));
                    if kind != "debit" || round != req.round_id || owner != req.player || amount != req.amount_cents {
                        return Ok(Answer::error(
                            409,
                            errors::TRANSACTION_CONFLICT,
                            "the rollback does not match its debit (kind, round, player or amount)",
                        ));
                    }
                    if status == 200 && !rolled_back {
                        moved = amount;
                        sqlx::query("UPDATE transactions SET rolled_back = 1 WHERE transaction_id = ?")
                            .bind(&req.debit_transaction_id)
                            .execute(&mut *conn)
                            .await?;
                    }
                }
            }
            let balance = if moved > 0 {
                move_money(conn, &req.player, moved, &format!("tx:{}", req.transaction_id), now_ms).await?
            } else {
                player.balance_cents
            };
            let row = NewTx {
                transaction_id: &req.transaction_id,
                kind: TxKind::Rollback,
                round_id: &req.round_id,
                player: &req.player,
                amount_cents: req.amount_cents,
                debit_transaction_id: Some(&req.debit_transaction_id),
                sha: &sha,
                moved_cents: moved,
                tombstone,
            };
            insert_tx(conn, &row, now_ms, |op| ok_answer(&req.transaction_id, balance, op)).await
        })
        .await
    }

    /// `POST /wallet/transactions`: the transactions applied in `[from_ms, to_ms)`
    /// (empty when `to_ms <= from_ms`).
    pub async fn transactions(
        &self,
        req: &TransactionsRequest,
        nonce: Option<&NonceUse>,
        now_ms: i64,
    ) -> Result<Answer, LedgerError> {
        self.call(nonce, now_ms, async |conn| {
            let list = transactions_between(conn, req.from_ms, req.to_ms).await?;
            Ok(Answer::json(200, &TransactionsAnswer { transactions: list }))
        })
        .await
    }

    /// The transactions applied in `[from_ms, to_ms)` (no nonce, no signature: the admin's and the tests' view).
    pub async fn transactions_in(&self, from_ms: i64, to_ms: i64) -> anyhow::Result<Vec<OperatorTransaction>> {
        let mut conn = self.pool.acquire().await?;
        Ok(transactions_between(&mut conn, from_ms, to_ms).await?)
    }

    /// Creates or updates a player (the balance is set through a deposit or
    /// withdrawal entry against the house, so the ledger stays balanced).
    pub async fn set_player(
        &self,
        player: &str,
        balance_cents: i64,
        weekly_limit_cents: Option<i64>,
        blocked: bool,
        now_ms: i64,
    ) -> anyhow::Result<PlayerView> {
        anyhow::ensure!(valid_ref(player, 64), "a player reference is 1 to 64 printable characters");
        anyhow::ensure!(
            (0..=MAX_BALANCE_CENTS).contains(&balance_cents),
            "balance_cents is from 0 to {MAX_BALANCE_CENTS}"
        );
        anyhow::ensure!(weekly_limit_cents.is_none_or(|l| l >= 0), "weekly_limit_cents must not be negative");
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query(
            "INSERT INTO players (player, balance_cents, weekly_limit_cents, blocked, created_ms, updated_ms)
             VALUES (?, 0, ?, ?, ?, ?)
             ON CONFLICT (player) DO UPDATE SET weekly_limit_cents = excluded.weekly_limit_cents,
                 blocked = excluded.blocked, updated_ms = excluded.updated_ms",
        )
        .bind(player)
        .bind(weekly_limit_cents)
        .bind(blocked)
        .bind(now_ms)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        let old = balance_of(&mut tx, player).await?.unwrap_or(0);
        let delta = balance_cents - old;
        if delta != 0 {
            let id = sqlx::query("INSERT INTO adjustments (player, delta_cents, at_ms) VALUES (?, ?, ?)")
                .bind(player)
                .bind(delta)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?
                .last_insert_rowid();
            move_money(&mut tx, player, delta, &format!("adj:{id}"), now_ms).await?;
        }
        tx.commit().await?;
        self.player(player, now_ms).await?.context("the player just written")
    }

    /// A player, with its stakes of the last 7 days.
    pub async fn player(&self, player: &str, now_ms: i64) -> anyhow::Result<Option<PlayerView>> {
        let mut conn = self.pool.acquire().await?;
        let Some(row) = player_row(&mut conn, player).await? else { return Ok(None) };
        let stakes = stakes_since(&mut conn, player, now_ms - WEEK_MS).await?;
        Ok(Some(PlayerView {
            player: player.to_string(),
            balance_cents: row.balance_cents,
            weekly_limit_cents: row.weekly_limit_cents,
            blocked: row.blocked,
            stakes_this_week_cents: stakes,
        }))
    }

    /// Every player's reference and balance, by reference.
    pub async fn players(&self) -> anyhow::Result<Vec<(String, i64, bool)>> {
        Ok(sqlx::query_as("SELECT player, balance_cents, blocked FROM players ORDER BY player")
            .fetch_all(&self.pool)
            .await?)
    }

    /// The ledger's totals and its consistency checks.
    pub async fn summary(&self) -> anyhow::Result<Summary> {
        let mut conn = self.pool.acquire().await?;
        let (players, balances_cents): (i64, i64) =
            sqlx::query_as("SELECT count(*), COALESCE(sum(balance_cents), 0) FROM players")
                .fetch_one(&mut *conn)
                .await?;
        let house_cents: i64 =
            sqlx::query_scalar("SELECT COALESCE(sum(amount_cents), 0) FROM entries WHERE account = 'house'")
                .fetch_one(&mut *conn)
                .await?;
        let entries_sum_cents: i64 =
            sqlx::query_scalar("SELECT COALESCE(sum(amount_cents), 0) FROM entries").fetch_one(&mut *conn).await?;
        let mismatched: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM players p WHERE p.balance_cents !=
                 (SELECT COALESCE(sum(e.amount_cents), 0) FROM entries e WHERE e.account = 'player:' || p.player)",
        )
        .fetch_one(&mut *conn)
        .await?;
        let mut s = Summary {
            players,
            balances_cents,
            house_cents,
            entries_sum_cents,
            balances_match_entries: mismatched == 0,
            balanced: mismatched == 0 && entries_sum_cents == 0,
            ..Summary::default()
        };
        let rows: Vec<(String, i64, i64)> = sqlx::query_as(
            "SELECT kind, count(*), COALESCE(sum(moved_cents), 0) FROM transactions WHERE status = 200 GROUP BY kind",
        )
        .fetch_all(&mut *conn)
        .await?;
        for (kind, count, moved_cents) in rows {
            let totals = KindTotals { count, moved_cents };
            match kind.as_str() {
                "debit" => s.debit = totals,
                "credit" => s.credit = totals,
                _ => s.rollback = totals,
            }
        }
        (s.debits_rolled_back, s.tombstones, s.debits_refused) = sqlx::query_as(
            "SELECT COALESCE(sum(rolled_back), 0), COALESCE(sum(tombstone), 0),
                    COALESCE(sum(CASE WHEN status = 402 THEN 1 ELSE 0 END), 0) FROM transactions",
        )
        .fetch_one(&mut *conn)
        .await?;
        Ok(s)
    }
}

struct PlayerRow {
    balance_cents: i64,
    weekly_limit_cents: Option<i64>,
    blocked: bool,
}

async fn player_row(conn: &mut SqliteConnection, player: &str) -> Result<Option<PlayerRow>, sqlx::Error> {
    let row: Option<(i64, Option<i64>, bool)> =
        sqlx::query_as("SELECT balance_cents, weekly_limit_cents, blocked FROM players WHERE player = ?")
            .bind(player)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(row.map(|(balance_cents, weekly_limit_cents, blocked)| PlayerRow { balance_cents, weekly_limit_cents, blocked }))
}

async fn balance_of(conn: &mut SqliteConnection, player: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT balance_cents FROM players WHERE player = ?")
        .bind(player)
        .fetch_optional(&mut *conn)
        .await
}

async fn stakes_since(conn: &mut SqliteConnection, player: &str, since_ms: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COALESCE(sum(amount_cents), 0) FROM transactions
         WHERE player = ? AND kind = 'debit' AND applied_ms >= ? AND status = 200 AND rolled_back = 0",
    )
    .bind(player)
    .bind(since_ms)
    .fetch_one(&mut *conn)
    .await
}

fn unknown_player(player: &str) -> Answer {
    Answer::error(404, errors::UNKNOWN_PLAYER, format!("no player {player:?} at this operator"))
}

fn ok_answer(transaction_id: &str, balance_cents: i64, op_seq: i64) -> Answer {
    Answer::json(
        200,
        &WalletAnswer {
            transaction_id: Some(transaction_id.to_string()),
            balance_cents,
            currency: CURRENCY.into(),
            operator_transaction_id: Some(format!("op-{op_seq}")),
        },
    )
}

/// The stored answer of `transaction_id` when the payload is the same; a
/// conflict when it is not; None when the id is new.
async fn stored(conn: &mut SqliteConnection, transaction_id: &str, sha: &str) -> Result<Option<Answer>, sqlx::Error> {
    let row: Option<(String, i64, String)> =
        sqlx::query_as("SELECT request_sha256, status, answer_json FROM transactions WHERE transaction_id = ?")
            .bind(transaction_id)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(row.map(|(stored_sha, status, answer)| {
        if stored_sha == sha {
            Answer { status: status as u16, body: answer.into_bytes() }
        } else {
            Answer::error(
                409,
                errors::TRANSACTION_CONFLICT,
                "this transaction id was already used with another kind, round, player or amount: nothing was applied",
            )
        }
    }))
}

/// Moves `delta` cents into the player's account (out of it when negative),
/// the opposite into the house's; returns the player's new balance.
async fn move_money(
    conn: &mut SqliteConnection,
    player: &str,
    delta: i64,
    source: &str,
    now_ms: i64,
) -> Result<i64, sqlx::Error> {
    let balance: i64 = sqlx::query_scalar(
        "UPDATE players SET balance_cents = balance_cents + ?, updated_ms = ? WHERE player = ? RETURNING balance_cents",
    )
    .bind(delta)
    .bind(now_ms)
    .bind(player)
    .fetch_one(&mut *conn)
    .await?;
    sqlx::query("INSERT INTO entries (source, account, amount_cents, at_ms) VALUES (?, ?, ?, ?), (?, 'house', ?, ?)")
        .bind(source)
        .bind(format!("player:{player}"))
        .bind(delta)
        .bind(now_ms)
        .bind(source)
        .bind(-delta)
        .bind(now_ms)
        .execute(&mut *conn)
        .await?;
    Ok(balance)
}

struct NewTx<'a> {
    transaction_id: &'a str,
    kind: TxKind,
    round_id: &'a str,
    player: &'a str,
    amount_cents: i64,
    debit_transaction_id: Option<&'a str>,
    sha: &'a str,
    moved_cents: i64,
    tombstone: bool,
}

/// Stores a transaction with the answer `answer(op_seq)` and returns that answer.
async fn insert_tx(
    conn: &mut SqliteConnection,
    t: &NewTx<'_>,
    now_ms: i64,
    answer: impl FnOnce(i64) -> Answer,
) -> Result<Answer, sqlx::Error> {
    // Under BEGIN IMMEDIATE no other writer runs: max + 1 is unique.
    let op_seq: i64 =
        sqlx::query_scalar("SELECT COALESCE(max(op_seq), 0) + 1 FROM transactions").fetch_one(&mut *conn).await?;
    let a = answer(op_seq);
    sqlx::query(
        "INSERT INTO transactions (transaction_id, op_seq, kind, round_id, player, amount_cents, debit_transaction_id,
             request_sha256, status, answer_json, applied_ms, moved_cents, tombstone)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(t.transaction_id)
    .bind(op_seq)
    .bind(t.kind.as_str())
    .bind(t.round_id)
    .bind(t.player)
    .bind(t.amount_cents)
    .bind(t.debit_transaction_id)
    .bind(t.sha)
    .bind(a.status as i64)
    .bind(std::str::from_utf8(&a.body).expect("JSON is UTF-8"))
    .bind(now_ms)
    .bind(t.moved_cents)
    .bind(t.tombstone)
    .execute(&mut *conn)
    .await?;
    Ok(a)
}

async fn transactions_between(
    conn: &mut SqliteConnection,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<OperatorTransaction>, sqlx::Error> {
    let rows: Vec<(String, String, String, String, i64, i64, bool)> = sqlx::query_as(
        "SELECT transaction_id, kind, round_id, player, amount_cents, applied_ms, rolled_back FROM transactions
         WHERE status = 200 AND applied_ms >= ? AND applied_ms < ? ORDER BY op_seq",
    )
    .bind(from_ms)
    .bind(to_ms)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(transaction_id, kind, round_id, player, amount_cents, applied_ms, rolled_back)| OperatorTransaction {
            transaction_id,
            kind: TxKind::parse(&kind).expect("the table's CHECK keeps kinds known"),
            round_id,
            player,
            amount_cents,
            applied_ms,
            rolled_back,
        })
        .collect())
}
