//! The signed wallet's calls on the ledger: balance, debit and credit,
//! rollback, the transactions of a period.

use super::answer::{Answer, LedgerError, NonceUse};
use super::database::Ledger;
use super::rows::{
    NewTx, balance_of, insert_tx, move_money, ok_answer, player_row, stakes_since, stored, transactions_between,
    unknown_player,
};
use super::rules::{WEEK_MS, check_currency, check_ids, check_player, request_sha256, valid_ref};
use sqlx::Row;
use wallet::{
    BalanceRequest, CURRENCY, MoneyRequest, RollbackRequest, TransactionsAnswer, TransactionsRequest, TxKind,
    WalletAnswer, errors,
};

impl Ledger {
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
}
