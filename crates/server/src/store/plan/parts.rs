//! The parts of a [`WritePlan`] for an emission's rows, the double-entry
//! movement, the operator mode's rows, a paper ticket's, and a limit's
//! counter.

use super::write::{Val, WritePlan};
use domain::CounterWrite;
use domain::{Movement, RestoreWrite, RetailWrite, RoundState, TicketStatus, WalletWrite};

impl WritePlan {
    /// An emission's rows: its row, a block's row, a chunk of that block's
    /// tickets (one multi-row INSERT), the publication of blocks (each
    /// guarded: published once).
    pub(super) fn emission_rows(&mut self, e: &domain::EmissionRows) {
        if let Some(r) = &e.emission {
            self.insert_row(
                "emission",
                "emissions",
                vec![
                    ("id", r.id.into()),
                    ("code", r.code.as_str().into()),
                    ("channel", r.channel.as_str().into()),
                    ("table_toml", r.table_toml.as_str().into()),
                    ("table_digest", r.table_digest.as_str().into()),
                    ("price_cents", r.price_cents.into()),
                    ("block_size", r.block_size.into()),
                    ("seed_salt", r.seed_salt.as_str().into()),
                    ("key_id", r.key_id.into()),
                    ("notice_ref", r.notice_ref.as_deref().into()),
                    ("created_ms", r.created_ms.into()),
                ],
            );
        }
        if let Some(b) = &e.block {
            self.insert_row(
                "block",
                "blocks",
                vec![
                    ("id", b.id.into()),
                    ("emission_id", b.emission_id.into()),
                    ("number", b.number.into()),
                    ("size", b.size.into()),
                    ("root", b.root.as_str().into()),
                    ("chunk_roots", b.chunk_roots.as_str().into()),
                    ("created_ms", b.created_ms.into()),
                ],
            );
        }
        if !e.tickets.is_empty() {
            let rows = e
                .tickets
                .iter()
                .map(|t| {
                    let [p5, p6, p7, p8] = t.prizes.cents();
                    vec![
                        e.tickets_block.into(),
                        i64::from(t.position).into(),
                        t.serial.as_str().into(),
                        t.play_code_hash.as_str().into(),
                        i64::from(t.row).into(),
                        (p5 as i64).into(),
                        (p6 as i64).into(),
                        (p7 as i64).into(),
                        (p8 as i64).into(),
                        t.commitment.as_str().into(),
                        e.tickets_status.as_str().into(),
                    ]
                })
                .collect();
            self.insert(
                "tickets",
                "tickets",
                &[
                    "block_id",
                    "position",
                    "serial",
                    "play_code_hash",
                    "schedule_row",
                    "prize_5",
                    "prize_6",
                    "prize_7",
                    "prize_8",
                    "commitment",
                    "status",
                ],
                rows,
            );
        }
        for &block in &e.publish {
            let at = self.placeholder(e.published_ms.into());
            let id = self.placeholder(block.into());
            let sql = format!("UPDATE blocks SET published_ms = {at} WHERE id = {id} AND published_ms IS NULL");
            self.push_part("publish", sql, true);
        }
    }

    /// A restore settled (its blocks on sale withdrawn) or its replacement
    /// recorded; each guarded by the restore's row not having it yet, so
    /// that two processes settling together fail one of them.
    pub(super) fn restore(&mut self, w: &RestoreWrite) {
        match w {
            RestoreWrite::Mark { point_ms, marked_ms, source } => {
                let row = vec![
                    ("point_ms", (*point_ms).into()),
                    ("marked_ms", (*marked_ms).into()),
                    ("source", source.as_str().into()),
                ];
                self.insert_row("mark_restore", "restores", row);
            }
            RestoreWrite::Settle { restore, blocks, at_ms, withdrawn_json } => {
                for &block in blocks {
                    let at = self.placeholder((*at_ms).into());
                    let id = self.placeholder(block.into());
                    let sql = format!("UPDATE blocks SET withdrawn_ms = {at} WHERE id = {id} AND withdrawn_ms IS NULL");
                    self.push_part("withdraw", sql, true);
                }
                let at = self.placeholder((*at_ms).into());
                let list = self.placeholder(withdrawn_json.as_str().into());
                let id = self.placeholder((*restore).into());
                let sql = format!(
                    "UPDATE restores SET settled_ms = {at}, withdrawn_json = {list} WHERE id = {id} AND settled_ms IS NULL"
                );
                self.push_part("settle_restore", sql, true);
            }
            RestoreWrite::Replaced { restore, at_ms, replaced_json } => {
                let at = self.placeholder((*at_ms).into());
                let list = self.placeholder(replaced_json.as_str().into());
                let id = self.placeholder((*restore).into());
                let sql = format!(
                    "UPDATE restores SET replaced_ms = {at}, replaced_json = {list} \
                     WHERE id = {id} AND settled_ms IS NOT NULL AND replaced_ms IS NULL"
                );
                self.push_part("restore_replaced", sql, true);
            }
        }
    }

    /// The double-entry movement, written once for every backend: the
    /// movement, its two entries, and the player's balance, guarded by the
    /// balance it was decided on (guarantee 3).
    pub(super) fn movement(&mut self, m: &Movement) {
        self.insert_row(
            "movement",
            "movements",
            vec![
                ("id", m.id.as_str().into()),
                ("reason", m.reason.as_str().into()),
                ("ticket_id", m.ticket_id.into()),
                ("created_ms", m.created_ms.into()),
            ],
        );
        let entries = m
            .entries()
            .iter()
            .map(|&(account, amount)| vec![m.id.as_str().into(), account.into(), amount.into()])
            .collect();
        self.insert("ledger", "ledger_entries", &["movement_id", "account_id", "amount_cents"], entries);
        if let Some(b) = m.player_balance {
            self.update_guarded(
                "balance",
                "accounts",
                vec![("balance_cents", b.after.into())],
                vec![("id", b.account.into()), ("balance_cents", b.before.into())],
            );
        }
    }

    /// A guarded statement of custom SQL: `set` then `filter` columns, and
    /// `extra` conditions without values (`acked_ms IS NULL`).
    fn update_guarded_if(
        &mut self,
        name: &'static str,
        table: &str,
        set: Vec<(&str, Val)>,
        filter: Vec<(&str, Val)>,
        extra: &str,
    ) {
        let set: Vec<String> = set.into_iter().map(|(c, v)| format!("{c} = {}", self.placeholder(v))).collect();
        let filter: Vec<String> = filter.into_iter().map(|(c, v)| format!("{c} = {}", self.placeholder(v))).collect();
        let sql = format!("UPDATE {table} SET {} WHERE {} AND {extra}", set.join(", "), filter.join(" AND "));
        self.push_part(name, sql, true);
    }

    /// A row of the operator mode (`core::operator`), each change of an
    /// existing row guarded by the state it was decided on.
    pub(super) fn wallet(&mut self, w: &WalletWrite) {
        match w {
            WalletWrite::Nonce { nonce, seen_ms } => self.insert_row(
                "nonce",
                "signed_nonces",
                vec![("nonce", nonce.as_str().into()), ("seen_ms", (*seen_ms).into())],
            ),
            WalletWrite::OperatorPlayer { player, reference } => self.update_guarded_if(
                "operator_player",
                "players",
                vec![("operator_ref", reference.as_str().into())],
                vec![("id", (*player).into())],
                "operator_ref IS NULL",
            ),
            WalletWrite::Launch(l) => self.insert_row(
                "launch",
                "launches",
                vec![
                    ("code_hash", l.code_hash.as_str().into()),
                    ("player_id", l.player.into()),
                    ("language", l.language.as_str().into()),
                    ("country", l.country.as_deref().into()),
                    ("flags_json", l.flags_json.as_str().into()),
                    ("lobby_url", l.lobby_url.as_deref().into()),
                    ("created_ms", l.created_ms.into()),
                    ("expires_ms", l.expires_ms.into()),
                ],
            ),
            WalletWrite::LaunchUsed { code_hash, used_ms, session_hash } => self.update_guarded_if(
                "launch_used",
                "launches",
                vec![("used_ms", (*used_ms).into()), ("session_hash", session_hash.as_str().into())],
                vec![("code_hash", code_hash.as_str().into())],
                "used_ms IS NULL",
            ),
            WalletWrite::NewRound { round, ticket_id, attempt, player, price_cents, key, created_ms, .. } => self
                .insert_row(
                    "round",
                    "wallet_rounds",
                    vec![
                        ("round_id", round.as_str().into()),
                        ("ticket_id", (*ticket_id).into()),
                        ("attempt", i64::from(*attempt).into()),
                        ("player_id", (*player).into()),
                        ("price_cents", (*price_cents).into()),
                        ("state", RoundState::Debiting.as_str().into()),
                        ("idempotency_key", key.as_deref().into()),
                        ("created_ms", (*created_ms).into()),
                    ],
                ),
            WalletWrite::Round { round, from, to, refusal, settled_ms } => self.update_guarded(
                "round_state",
                "wallet_rounds",
                vec![
                    ("state", to.as_str().into()),
                    ("refusal", refusal.as_deref().into()),
                    ("settled_ms", (*settled_ms).into()),
                ],
                vec![("round_id", round.as_str().into()), ("state", from.as_str().into())],
            ),
            WalletWrite::Release { ticket_id, owner } => self.update_guarded(
                "release",
                "tickets",
                vec![
                    ("status", TicketStatus::Unsold.as_str().into()),
                    ("owner_id", None::<i64>.into()),
                    ("sold_ms", None::<i64>.into()),
                ],
                vec![
                    ("id", (*ticket_id).into()),
                    ("status", TicketStatus::Sold.as_str().into()),
                    ("owner_id", (*owner).into()),
                ],
            ),
            WalletWrite::Outbox(o) => self.insert_row(
                "outbox",
                "wallet_outbox",
                vec![
                    ("transaction_id", o.transaction_id.as_str().into()),
                    ("round_id", o.round.as_str().into()),
                    ("kind", o.kind.as_str().into()),
                    ("amount_cents", o.amount_cents.into()),
                    ("body_json", o.body_json.as_str().into()),
                    ("created_ms", o.created_ms.into()),
                    ("next_ms", o.created_ms.into()),
                ],
            ),
            WalletWrite::Acked { transaction_id, acked_ms } => self.update_guarded_if(
                "outbox_acked",
                "wallet_outbox",
                vec![("acked_ms", (*acked_ms).into())],
                vec![("transaction_id", transaction_id.as_str().into())],
                "acked_ms IS NULL",
            ),
            WalletWrite::Attempt { transaction_id, attempts, next_ms, error } => self.update_guarded_if(
                "outbox_attempt",
                "wallet_outbox",
                vec![
                    ("attempts", (*attempts + 1).into()),
                    ("next_ms", (*next_ms).into()),
                    ("last_error", error.as_deref().into()),
                ],
                vec![("transaction_id", transaction_id.as_str().into()), ("attempts", (*attempts).into())],
                "acked_ms IS NULL",
            ),
            WalletWrite::Failed { transaction_id, error } => {
                let error = self.placeholder(error.as_str().into());
                let id = self.placeholder(transaction_id.as_str().into());
                let sql = format!("UPDATE wallet_outbox SET last_error = {error} WHERE transaction_id = {id}");
                self.push_part("outbox_failed", sql, false);
            }
        }
    }

    /// A paper ticket's row, guarded by the status it was decided on; a
    /// sale or a payment keeps its `answer` for the shop's retry.
    pub(super) fn retail(&mut self, r: &RetailWrite, answer: &str) {
        match r {
            RetailWrite::Sell { ticket_id, shop, sold_ms } => {
                self.update_guarded(
                    "retail_sell",
                    "tickets",
                    vec![
                        ("status", TicketStatus::Sold.as_str().into()),
                        ("shop", shop.as_str().into()),
                        ("sold_ms", (*sold_ms).into()),
                    ],
                    vec![("id", (*ticket_id).into()), ("status", TicketStatus::Printed.as_str().into())],
                );
                self.shop_answer("sell_answer", *ticket_id, "sell", shop, answer, *sold_ms);
            }
            RetailWrite::Pay { ticket_id, shop, paid_ms } => {
                self.update_guarded(
                    "retail_pay",
                    "tickets",
                    vec![
                        ("status", TicketStatus::Paid.as_str().into()),
                        ("paid_ms", (*paid_ms).into()),
                        ("paid_shop", shop.as_str().into()),
                    ],
                    vec![("id", (*ticket_id).into()), ("status", TicketStatus::Sold.as_str().into())],
                );
                self.shop_answer("pay_answer", *ticket_id, "pay", shop, answer, *paid_ms);
            }
            RetailWrite::OperatorPay { ticket_id, reference, prize_cents, paid_ms } => {
                self.update_guarded(
                    "claim_pay",
                    "tickets",
                    vec![("status", TicketStatus::Paid.as_str().into()), ("paid_ms", (*paid_ms).into())],
                    vec![("id", (*ticket_id).into()), ("status", TicketStatus::Sold.as_str().into())],
                );
                self.insert_row(
                    "claim_payment",
                    "claim_payments",
                    vec![
                        ("ticket_id", (*ticket_id).into()),
                        ("reference", reference.as_str().into()),
                        ("prize_cents", (*prize_cents).into()),
                        ("answer_json", answer.into()),
                        ("paid_ms", (*paid_ms).into()),
                    ],
                );
            }
            RetailWrite::Owner { ticket_id, owner, .. } => {
                let owner = self.placeholder((*owner).into());
                let id = self.placeholder((*ticket_id).into());
                let sql = format!("UPDATE tickets SET owner_id = {owner} WHERE id = {id} AND owner_id IS NULL");
                self.push_part("retail_owner", sql, true);
            }
        }
    }

    /// The answer of a shop's sale or payment, kept for its retry.
    fn shop_answer(&mut self, name: &'static str, ticket: i64, operation: &str, shop: &str, answer: &str, at: i64) {
        self.insert_row(
            name,
            "retail_answers",
            vec![
                ("ticket_id", ticket.into()),
                ("operation", operation.into()),
                ("shop", shop.into()),
                ("answer_json", answer.into()),
                ("created_ms", at.into()),
            ],
        );
    }

    /// A limit's counter: `add` in its window (a window that began at or
    /// before `now - window` starts again at `now`; `reset` starts it
    /// again whatever its age), the last admitted attempt set to `now`
    /// when `admit`. One SQL text whatever the values, so that it is
    /// prepared once.
    pub(super) fn counter(&mut self, c: &CounterWrite) {
        let cutoff = if c.reset { i64::MAX } else { c.now - c.window_ms };
        let first_last = if c.admit { c.now } else { 0 };
        let b = self.placeholder(c.bucket.as_str().into());
        let now = self.placeholder(c.now.into());
        let first = self.placeholder(c.add.into());
        let last = self.placeholder(first_last.into());
        let c1 = self.placeholder(cutoff.into());
        let restart = self.placeholder(c.add.into());
        let add = self.placeholder(c.add.into());
        let c2 = self.placeholder(cutoff.into());
        let now2 = self.placeholder(c.now.into());
        let admit = self.placeholder(i64::from(c.admit).into());
        let now3 = self.placeholder(c.now.into());
        let sql = format!(
            "INSERT INTO limit_counters (bucket, window_start_ms, count, last_ms) VALUES ({b}, {now}, {first}, {last})
             ON CONFLICT (bucket) DO UPDATE SET
               count = CASE WHEN limit_counters.window_start_ms <= {c1} THEN {restart}
                            ELSE limit_counters.count + {add} END,
               window_start_ms = CASE WHEN limit_counters.window_start_ms <= {c2} THEN {now2}
                                      ELSE limit_counters.window_start_ms END,
               last_ms = CASE WHEN {admit} = 1 THEN {now3} ELSE limit_counters.last_ms END"
        );
        self.push_part("counter", sql, false);
    }
}
