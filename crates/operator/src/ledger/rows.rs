//! The rows behind the calls: a player's, a transaction's stored answer,
//! the two entries of a movement, a new transaction, a period's
//! transactions.

use super::answer::Answer;
use sqlx::SqliteConnection;
use wallet::{CURRENCY, OperatorTransaction, TxKind, WalletAnswer, errors};

pub(super) struct PlayerRow {
    pub(super) balance_cents: i64,
    pub(super) weekly_limit_cents: Option<i64>,
    pub(super) blocked: bool,
}

pub(super) async fn player_row(conn: &mut SqliteConnection, player: &str) -> Result<Option<PlayerRow>, sqlx::Error> {
    let row: Option<(i64, Option<i64>, bool)> =
        sqlx::query_as("SELECT balance_cents, weekly_limit_cents, blocked FROM players WHERE player = ?")
            .bind(player)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(row.map(|(balance_cents, weekly_limit_cents, blocked)| PlayerRow { balance_cents, weekly_limit_cents, blocked }))
}

pub(super) async fn balance_of(conn: &mut SqliteConnection, player: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT balance_cents FROM players WHERE player = ?")
        .bind(player)
        .fetch_optional(&mut *conn)
        .await
}

pub(super) async fn stakes_since(conn: &mut SqliteConnection, player: &str, since_ms: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COALESCE(sum(amount_cents), 0) FROM transactions
         WHERE player = ? AND kind = 'debit' AND applied_ms >= ? AND status = 200 AND rolled_back = 0",
    )
    .bind(player)
    .bind(since_ms)
    .fetch_one(&mut *conn)
    .await
}

pub(super) fn unknown_player(player: &str) -> Answer {
    Answer::error(404, errors::UNKNOWN_PLAYER, format!("no player {player:?} at this operator"))
}

pub(super) fn ok_answer(transaction_id: &str, balance_cents: i64, op_seq: i64) -> Answer {
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
pub(super) async fn stored(
    conn: &mut SqliteConnection,
    transaction_id: &str,
    sha: &str,
) -> Result<Option<Answer>, sqlx::Error> {
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
pub(super) async fn move_money(
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

pub(super) struct NewTx<'a> {
    pub(super) transaction_id: &'a str,
    pub(super) kind: TxKind,
    pub(super) round_id: &'a str,
    pub(super) player: &'a str,
    pub(super) amount_cents: i64,
    pub(super) debit_transaction_id: Option<&'a str>,
    pub(super) sha: &'a str,
    pub(super) moved_cents: i64,
    pub(super) tombstone: bool,
}

/// Stores a transaction with the answer `answer(op_seq)` and returns that answer.
pub(super) async fn insert_tx(
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

pub(super) async fn transactions_between(
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
