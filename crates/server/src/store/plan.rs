//! [`WritePlan`]: the SQL statements that write one [`Changes`], built from named
//! columns (`("seq", value)`) rather than long lists of positional binds,
//! and the same for both backends. Placeholders are numbered `$1, $2, ...`
//! over the whole plan, which PostgreSQL reads in one statement
//! ([`WritePlan::postgres_statement`]); the SQLite writer runs the statements
//! one by one on its own connection, each prepared once
//! ([`WritePlan::sqlite_statements`]).
//!
//! Writes that depend on what was loaded are **guarded**: the ticket is
//! sold only while `unsold`, the game moves on only from the `seq` it was
//! decided on, a balance changes only from the amount it was decided on.
//! A guarded statement that changes no row means the row changed under the
//! decision, and the whole unit is undone
//! ([`domain::error::StoreError::Stale`]): on PostgreSQL each guarded part
//! returns its name and a missing name is the failure; on SQLite the
//! writer reads each guarded statement's count of changed rows.

use domain::changes::CounterWrite;
use domain::error::StoreError;
use domain::{Changes, Movement, PlayerWrite, RetailWrite};
use domain::{RoundState, WalletWrite};
use std::fmt::Write as _;

/// A bound value; NULLs keep their SQL type (PostgreSQL wants one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    Int(Option<i64>),
    Text(Option<String>),
}

impl From<i64> for Val {
    fn from(v: i64) -> Val {
        Val::Int(Some(v))
    }
}
impl From<Option<i64>> for Val {
    fn from(v: Option<i64>) -> Val {
        Val::Int(v)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Val {
        Val::Text(Some(v.to_string()))
    }
}
impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::Text(Some(v))
    }
}
impl From<Option<&str>> for Val {
    fn from(v: Option<&str>) -> Val {
        Val::Text(v.map(str::to_string))
    }
}

/// One statement of a plan.
#[derive(Debug, Clone)]
struct Part {
    name: &'static str,
    /// The SQL with its placeholders already numbered.
    sql: String,
    guarded: bool,
    /// Its values in the plan's list (a part's placeholders are made in
    /// its text's order, one after the other).
    values: std::ops::Range<usize>,
}

/// The statements of one [`Changes`], with their values in order.
#[derive(Debug, Clone, Default)]
pub struct WritePlan {
    parts: Vec<Part>,
    values: Vec<Val>,
}

/// A sealed audit entry's chain columns (see `store::audit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seal {
    pub chain_pos: i64,
    pub prev_hash: String,
    pub hash: String,
}

impl WritePlan {
    /// Adds a statement whose placeholders are the values made since the
    /// previous one.
    fn push_part(&mut self, name: &'static str, sql: String, guarded: bool) {
        let start = self.parts.last().map_or(0, |p| p.values.end);
        let values = start..self.values.len();
        debug_assert_eq!(sql.matches('$').count(), values.len(), "{name}: one placeholder per value");
        self.parts.push(Part { name, sql, guarded, values });
    }

    fn placeholder(&mut self, v: Val) -> String {
        self.values.push(v);
        format!("${}", self.values.len())
    }

    /// `INSERT INTO table (a, b) VALUES ($1, $2), ($3, $4)`
    fn insert(&mut self, name: &'static str, table: &str, columns: &[&str], rows: Vec<Vec<Val>>) {
        let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        for (i, row) in rows.into_iter().enumerate() {
            assert_eq!(row.len(), columns.len(), "{name}: one value per column");
            let marks: Vec<String> = row.into_iter().map(|v| self.placeholder(v)).collect();
            let _ = write!(sql, "{}({})", if i == 0 { "" } else { ", " }, marks.join(", "));
        }
        self.push_part(name, sql, false);
    }

    /// `INSERT` of one row given as `(column, value)` pairs.
    fn insert_row(&mut self, name: &'static str, table: &str, row: Vec<(&str, Val)>) {
        let (columns, values): (Vec<&str>, Vec<Val>) = row.into_iter().unzip();
        self.insert(name, table, &columns, vec![values]);
    }

    /// `UPDATE table SET a = $1 WHERE k = $2 AND g = $3`, guarded: it must
    /// change exactly one row.
    fn update_guarded(&mut self, name: &'static str, table: &str, set: Vec<(&str, Val)>, filter: Vec<(&str, Val)>) {
        let set: Vec<String> = set.into_iter().map(|(c, v)| format!("{c} = {}", self.placeholder(v))).collect();
        let filter: Vec<String> = filter.into_iter().map(|(c, v)| format!("{c} = {}", self.placeholder(v))).collect();
        let sql = format!("UPDATE {table} SET {} WHERE {}", set.join(", "), filter.join(" AND "));
        self.push_part(name, sql, true);
    }

    /// The statements of `changes`, in an order that satisfies the foreign
    /// keys statement by statement (SQLite checks them so). `seal` chains
    /// the audit entry at once (the SQLite writer); without it the entry is
    /// left for the sealer (PostgreSQL).
    pub fn of(changes: &Changes, seal: Option<&Seal>) -> WritePlan {
        let mut p = WritePlan::default();
        if let Some(s) = &changes.sale {
            p.update_guarded(
                "sale",
                "tickets",
                vec![("status", "sold".into()), ("owner_id", s.owner.into()), ("sold_ms", s.sold_ms.into())],
                vec![("id", s.ticket_id.into()), ("status", "unsold".into())],
            );
        }
        if let Some(c) = &changes.client_seed {
            // Written once: guarded by the seed still being unset.
            let seed = p.placeholder(c.client_seed.as_str().into());
            let id = p.placeholder(c.ticket_id.into());
            let sql = format!("UPDATE tickets SET client_seed = {seed} WHERE id = {id} AND client_seed IS NULL");
            p.push_part("client_seed", sql, true);
        }
        if let Some(e) = &changes.emission {
            p.emission_rows(e);
        }
        if let Some(r) = &changes.retail {
            p.retail(r, &changes.answer);
        }
        for c in &changes.counters {
            p.counter(c);
        }
        if let Some(before) = changes.expire_counters_before {
            let before = p.placeholder(before.into());
            p.push_part(
                "expire_counters",
                format!("DELETE FROM limit_counters WHERE window_start_ms < {before}"),
                false,
            );
        }
        if let Some(before) = changes.expire_nonces_before {
            let before = p.placeholder(before.into());
            p.push_part("expire_nonces", format!("DELETE FROM signed_nonces WHERE seen_ms < {before}"), false);
        }
        if let Some(c) = &changes.close {
            let at = p.placeholder(c.sale_end_ms.into());
            let claim = p.placeholder(c.claim_end_ms.into());
            let date = p.placeholder(c.notice_date.as_str().into());
            let reference = p.placeholder(c.notice_ref.as_deref().into());
            let id = p.placeholder(c.emission.into());
            let sql = format!(
                "UPDATE emissions SET sale_end_ms = {at}, claim_end_ms = {claim}, closing_notice_date = {date}, \
                 closing_notice_ref = {reference} WHERE id = {id} AND sale_end_ms IS NULL"
            );
            p.push_part("close", sql, true);
        }
        if let Some(w) = &changes.player {
            p.player(w);
        }
        if let Some(g) = &changes.game {
            let game = &g.row.ticket.game;
            let result = game.result();
            let state = serde_json::to_string(game).expect("a game serializes");
            let mut columns = vec![("seq", (game.seq() as i64).into()), ("state_json", state.into())];
            // An action that neither changes the phase nor finishes the game
            // leaves those columns as they are: not naming them, its UPDATE
            // does not make PostgreSQL consider (and parse the WHEN of) the
            // figures' triggers `UPDATE OF phase, prize_cents, finished_ms`.
            if g.from_seq.is_none() || g.phase_changed || result.is_some() || g.finished_ms.is_some() {
                columns.extend([
                    ("phase", game.phase().name().into()),
                    ("result_tricks", result.map(|r| i64::from(r.tricks)).into()),
                    ("prize_cents", result.map(|r| r.prize_cents as i64).into()),
                    ("finished_ms", g.finished_ms.into()),
                ]);
            }
            match g.from_seq {
                None => {
                    let mut row = vec![("ticket_id", g.row.id.into())];
                    row.extend(columns);
                    p.insert_row("game", "ticket_games", row);
                }
                Some(from) => p.update_guarded(
                    "game",
                    "ticket_games",
                    columns,
                    vec![("ticket_id", g.row.id.into()), ("seq", (from as i64).into())],
                ),
            }
        }
        if let Some(a) = &changes.action {
            p.insert_row(
                "action",
                "actions",
                vec![
                    ("ticket_id", a.ticket_id.into()),
                    ("seq", (a.seq as i64).into()),
                    ("request_json", a.request_json.as_str().into()),
                    ("answer_json", changes.answer.as_str().into()),
                    ("created_ms", a.created_ms.into()),
                    ("draw_kind", a.draw.kind.as_str().into()),
                    ("draw_player", a.draw.player.map(|r| r.as_str()).into()),
                    ("draw_capone", a.draw.capone.as_str().into()),
                ],
            );
        }
        if let Some(m) = &changes.movement {
            p.movement(m);
        }
        if let Some(k) = &changes.idempotency {
            p.insert_row(
                "idempotency",
                "idempotency_keys",
                vec![
                    ("player_id", k.player.into()),
                    ("key", k.key.as_str().into()),
                    ("request_json", k.request_json.as_str().into()),
                    ("answer_json", changes.answer.as_str().into()),
                    ("ticket_id", k.ticket_id.into()),
                    ("created_ms", k.created_ms.into()),
                ],
            );
        }
        for w in &changes.wallet {
            p.wallet(w);
        }
        if let Some(a) = &changes.audit {
            let mut row = vec![
                ("created_ms", a.created_ms.into()),
                ("kind", a.kind.into()),
                ("data_json", a.data_json.as_str().into()),
            ];
            if let Some(s) = seal {
                row.push(("chain_pos", s.chain_pos.into()));
                row.push(("prev_hash", s.prev_hash.as_str().into()));
                row.push(("hash", s.hash.as_str().into()));
            }
            p.insert_row("audit", "audit_log", row);
        }
        p
    }

    /// An emission's rows: its row, a block's row, a chunk of that block's
    /// tickets (one multi-row INSERT), the publication of blocks (each
    /// guarded: published once).
    fn emission_rows(&mut self, e: &domain::EmissionRows) {
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
                        e.tickets_status.into(),
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

    /// The double-entry movement, written once for every backend: the
    /// movement, its two entries, and the player's balance, guarded by the
    /// balance it was decided on (guarantee 3).
    fn movement(&mut self, m: &Movement) {
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
    fn wallet(&mut self, w: &WalletWrite) {
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
                vec![("status", "unsold".into()), ("owner_id", None::<i64>.into()), ("sold_ms", None::<i64>.into())],
                vec![("id", (*ticket_id).into()), ("status", "sold".into()), ("owner_id", (*owner).into())],
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
    fn retail(&mut self, r: &RetailWrite, answer: &str) {
        match r {
            RetailWrite::Sell { ticket_id, shop, sold_ms } => {
                self.update_guarded(
                    "retail_sell",
                    "tickets",
                    vec![("status", "sold".into()), ("shop", shop.as_str().into()), ("sold_ms", (*sold_ms).into())],
                    vec![("id", (*ticket_id).into()), ("status", "printed".into())],
                );
                self.shop_answer("sell_answer", *ticket_id, "sell", shop, answer, *sold_ms);
            }
            RetailWrite::Pay { ticket_id, shop, paid_ms } => {
                self.update_guarded(
                    "retail_pay",
                    "tickets",
                    vec![
                        ("status", "paid".into()),
                        ("paid_ms", (*paid_ms).into()),
                        ("paid_shop", shop.as_str().into()),
                    ],
                    vec![("id", (*ticket_id).into()), ("status", "sold".into())],
                );
                self.shop_answer("pay_answer", *ticket_id, "pay", shop, answer, *paid_ms);
            }
            RetailWrite::OperatorPay { ticket_id, reference, prize_cents, paid_ms } => {
                self.update_guarded(
                    "claim_pay",
                    "tickets",
                    vec![("status", "paid".into()), ("paid_ms", (*paid_ms).into())],
                    vec![("id", (*ticket_id).into()), ("status", "sold".into())],
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

    /// A player's limits (one row per player, replaced), login, or session.
    fn player(&mut self, w: &PlayerWrite) {
        match w {
            PlayerWrite::Limits { player, row, updated_ms } => {
                let pending = row.pending;
                let columns = [
                    ("player_id", Val::from(*player)),
                    ("tickets_per_day", row.tickets_per_day.into()),
                    ("spend_per_week_cents", row.spend_per_week_cents.into()),
                    ("pending_tickets_per_day", pending.and_then(|p| p.tickets_per_day).into()),
                    ("pending_spend_per_week_cents", pending.and_then(|p| p.spend_per_week_cents).into()),
                    ("pending_from_ms", pending.map(|p| p.from_ms).into()),
                    ("excluded_until_ms", row.excluded_until_ms.into()),
                    ("updated_ms", (*updated_ms).into()),
                ];
                let names: Vec<&str> = columns.iter().map(|(c, _)| *c).collect();
                let marks: Vec<String> = columns.into_iter().map(|(_, v)| self.placeholder(v)).collect();
                let set: Vec<String> = names[1..].iter().map(|c| format!("{c} = excluded.{c}")).collect();
                let sql = format!(
                    "INSERT INTO player_limits ({}) VALUES ({}) ON CONFLICT (player_id) DO UPDATE SET {}",
                    names.join(", "),
                    marks.join(", "),
                    set.join(", ")
                );
                self.push_part("limits", sql, false);
            }
            PlayerWrite::Credentials {
                player,
                login,
                password_hash,
                was,
                keep_session,
                revoke_own_token,
                recovery_hash,
            } => {
                let login = self.placeholder(login.as_str().into());
                let hash = self.placeholder(password_hash.as_str().into());
                let recovery = match recovery_hash {
                    Some(r) => format!(", recovery_hash = {}", self.placeholder(r.as_str().into())),
                    None => String::new(),
                };
                let own = if *revoke_own_token {
                    let revoked = self.placeholder(domain::account::revoked_token_hash(*player).as_str().into());
                    format!(", token_hash = {revoked}")
                } else {
                    String::new()
                };
                let id = self.placeholder((*player).into());
                let was = self.placeholder(was.as_deref().into());
                let sql = format!(
                    "UPDATE players SET login = {login}, password_hash = {hash}{recovery}{own} \
                     WHERE id = {id} AND password_hash IS NOT DISTINCT FROM {was}"
                );
                self.push_part("credentials", sql, true);
                // Every other session ends with the old password.
                let p = self.placeholder((*player).into());
                let sql = match keep_session {
                    Some(keep) => {
                        let keep = self.placeholder(keep.as_str().into());
                        format!("DELETE FROM sessions WHERE player_id = {p} AND token_hash <> {keep}")
                    }
                    None => format!("DELETE FROM sessions WHERE player_id = {p}"),
                };
                self.push_part("other_sessions", sql, false);
            }
            PlayerWrite::OpenSession { token_hash, player, created_ms, expires_ms } => {
                // The player's expired sessions go as a new one comes: the
                // table holds at most the sessions still alive, and one.
                let p = self.placeholder((*player).into());
                let now = self.placeholder((*created_ms).into());
                let sql = format!("DELETE FROM sessions WHERE player_id = {p} AND expires_ms <= {now}");
                self.push_part("expired_sessions", sql, false);
                self.insert_row(
                    "session",
                    "sessions",
                    vec![
                        ("token_hash", token_hash.as_str().into()),
                        ("player_id", (*player).into()),
                        ("created_ms", (*created_ms).into()),
                        ("expires_ms", (*expires_ms).into()),
                    ],
                )
            }
            PlayerWrite::CloseSession { token_hash } => {
                let th = self.placeholder(token_hash.as_str().into());
                let sql = format!("DELETE FROM sessions WHERE token_hash = {th}");
                self.push_part("logout", sql, false);
            }
            PlayerWrite::RevokeOwnToken { player } => {
                let revoked = self.placeholder(domain::account::revoked_token_hash(*player).as_str().into());
                let id = self.placeholder((*player).into());
                let sql = format!("UPDATE players SET token_hash = {revoked} WHERE id = {id}");
                self.push_part("revoke_own_token", sql, true);
            }
            PlayerWrite::Recover {
                player,
                password_hash,
                recovery_hash,
                was_recovery,
                session_token_hash,
                created_ms,
                expires_ms,
            } => {
                // The code works once: the row changes only if its hash is still the one checked.
                let hash = self.placeholder(password_hash.as_str().into());
                let recovery = self.placeholder(recovery_hash.as_str().into());
                let revoked = self.placeholder(domain::account::revoked_token_hash(*player).as_str().into());
                let id = self.placeholder((*player).into());
                let was = self.placeholder(was_recovery.as_str().into());
                let sql = format!(
                    "UPDATE players SET password_hash = {hash}, recovery_hash = {recovery}, token_hash = {revoked} \
                     WHERE id = {id} AND recovery_hash = {was} AND closed_ms IS NULL"
                );
                self.push_part("recover", sql, true);
                let p = self.placeholder((*player).into());
                self.push_part("recover_sessions", format!("DELETE FROM sessions WHERE player_id = {p}"), false);
                self.insert_row(
                    "recover_session",
                    "sessions",
                    vec![
                        ("token_hash", session_token_hash.as_str().into()),
                        ("player_id", (*player).into()),
                        ("created_ms", (*created_ms).into()),
                        ("expires_ms", (*expires_ms).into()),
                    ],
                )
            }
            PlayerWrite::SetRecovery { player, recovery_hash, password_was } => {
                let recovery = self.placeholder(recovery_hash.as_str().into());
                let id = self.placeholder((*player).into());
                let was = self.placeholder(password_was.as_str().into());
                let sql = format!(
                    "UPDATE players SET recovery_hash = {recovery} \
                     WHERE id = {id} AND password_hash = {was} AND closed_ms IS NULL"
                );
                self.push_part("recovery_code", sql, true);
            }
            PlayerWrite::Close { player, closed_ms, password_was } => {
                let revoked = self.placeholder(domain::account::revoked_token_hash(*player).as_str().into());
                let at = self.placeholder((*closed_ms).into());
                let id = self.placeholder((*player).into());
                let was = self.placeholder(password_was.as_deref().into());
                let sql = format!(
                    "UPDATE players SET login = NULL, password_hash = NULL, recovery_hash = NULL, \
                     token_hash = {revoked}, closed_ms = {at} \
                     WHERE id = {id} AND closed_ms IS NULL AND password_hash IS NOT DISTINCT FROM {was}"
                );
                self.push_part("close", sql, true);
                let p = self.placeholder((*player).into());
                self.push_part("close_sessions", format!("DELETE FROM sessions WHERE player_id = {p}"), false);
            }
        }
    }

    /// A limit's counter: `add` in its window (a window that began at or
    /// before `now - window` starts again at `now`; `reset` starts it
    /// again whatever its age), the last admitted attempt set to `now`
    /// when `admit`. One SQL text whatever the values, so that it is
    /// prepared once.
    fn counter(&mut self, c: &CounterWrite) {
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

    /// The values, in placeholder order.
    pub fn values(&self) -> &[Val] {
        &self.values
    }

    /// How many guarded statements must each return their row.
    pub fn guards(&self) -> usize {
        self.parts.iter().filter(|p| p.guarded).count()
    }

    /// SQLite: the statements one by one, each with its own values and
    /// whether it is guarded (the writer checks that it changed exactly one
    /// row, [`Statement::guarded`]). The SQLite writer runs them on its own
    /// connection, prepared once and cached by their text.
    ///
    /// Placeholders are written `?` here, bound in order: SQLite keeps the
    /// names of `$N` and `?N` parameters in a list that it walks for every
    /// parameter bound by name, and numbered ones would make the text of a
    /// statement depend on where it stands in the plan (no reuse of the
    /// prepared statement); anonymous ones have neither cost.
    pub fn sqlite_statements(&self) -> impl Iterator<Item = Statement<'_>> {
        self.parts.iter().map(|part| Statement {
            name: part.name,
            sql: sqlite_placeholders(&part.sql, part.values.start),
            values: &self.values[part.values.clone()],
            guarded: part.guarded,
        })
    }

    /// PostgreSQL: ONE statement (one round trip), the writes as
    /// data-modifying `WITH` parts, the guarded ones' names selected at the
    /// end. The parts touch different rows, as PostgreSQL requires.
    pub fn postgres_statement(&self) -> String {
        let mut sql = String::from("WITH ");
        let mut selects = Vec::new();
        for (i, part) in self.parts.iter().enumerate() {
            let _ = write!(sql, "{}p{i} AS ({}", if i == 0 { "" } else { ",\n" }, part.sql);
            if part.guarded {
                let _ = write!(sql, " RETURNING '{}'::text AS part", part.name);
                selects.push(format!("SELECT part FROM p{i}"));
            }
            sql.push(')');
        }
        if selects.is_empty() {
            selects.push("SELECT 'none'::text AS part WHERE false".into());
        }
        let _ = write!(sql, "\n{}", selects.join(" UNION ALL "));
        sql
    }

    /// PostgreSQL, for a statement that commits itself (an optimistic
    /// unit, `store::postgres`): [`WritePlan::postgres_statement`], which
    /// raises a serialization failure (`as_capone_stale`, migration 16)
    /// when a guarded part changed no row, so that nothing of it stays.
    /// Without that, its other parts would be committed beside the write
    /// that did not happen.
    pub fn postgres_statement_all_or_nothing(&self) -> String {
        let guards = self.guards();
        if guards == 0 {
            return self.postgres_statement();
        }
        let mut sql = String::from("WITH ");
        let mut selects = Vec::new();
        for (i, part) in self.parts.iter().enumerate() {
            let _ = write!(sql, "p{i} AS ({}", part.sql);
            if part.guarded {
                let _ = write!(sql, " RETURNING '{}'::text AS part", part.name);
                selects.push(format!("SELECT part FROM p{i}"));
            }
            sql.push_str("),\n");
        }
        // The check's argument depends on the rows, so PostgreSQL calls it
        // only when the count is wrong (never while planning).
        let _ = write!(
            sql,
            "guarded AS ({})\nSELECT part FROM guarded UNION ALL \
             SELECT as_capone_stale(CAST(COUNT(*) AS INTEGER), {guards}) FROM guarded HAVING COUNT(*) <> {guards}",
            selects.join(" UNION ALL ")
        );
        sql
    }

    /// Checks the names the guarded statements returned.
    pub fn check_guards(&self, returned: &[String]) -> Result<(), StoreError> {
        let missing: Vec<&str> =
            self.parts.iter().filter(|p| p.guarded && !returned.iter().any(|r| r == p.name)).map(|p| p.name).collect();
        if missing.is_empty() && returned.len() == self.guards() {
            Ok(())
        } else {
            Err(StoreError::Stale(format!("guarded writes changed no row: {}", missing.join(", "))))
        }
    }
}

/// One array bound to a batch statement ([`postgres_batch`]): a column of
/// values, one per row of the batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    Int(Vec<Option<i64>>),
    Text(Vec<Option<String>>),
}

impl Column {
    fn of(v: &Val) -> Column {
        match v {
            Val::Int(_) => Column::Int(Vec::new()),
            Val::Text(_) => Column::Text(Vec::new()),
        }
    }

    /// Appends `v`; false if it is not of the column's type.
    fn push(&mut self, v: &Val) -> bool {
        match (self, v) {
            (Column::Int(c), Val::Int(v)) => c.push(*v),
            (Column::Text(c), Val::Text(v)) => c.push(v.clone()),
            _ => return false,
        }
        true
    }

    fn sql_type(&self) -> &'static str {
        match self {
            Column::Int(_) => "bigint[]",
            Column::Text(_) => "text[]",
        }
    }
}

/// The plans of several requests written by ONE PostgreSQL statement
/// ([`postgres_batch`]): its text, then its values (one array per column
/// of each part, and last the number of guarded rows it must change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub sql: String,
    pub columns: Vec<Column>,
    pub guarded_rows: i32,
}

/// The parts of the same kind across a batch's plans: one `unnest` of
/// their values.
struct Group {
    /// `INSERT INTO t (a, b)` or an `UPDATE` whose placeholders are `u.cK`.
    head: String,
    insert: bool,
    guarded: bool,
    columns: Vec<Column>,
    rows: usize,
}

/// An `UPDATE`'s text with its `$N` placeholders renamed `u.c0, u.c1, ...`
/// in order, and how many there were.
fn update_template(sql: &str) -> (String, usize) {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    let mut n = 0;
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            let _ = write!(out, "u.c{n}");
            n += 1;
        } else {
            out.push(c);
        }
    }
    (out, n)
}

/// Whether `s` is only `($1, $2), ($3, $4)`: a multi-row `VALUES` list of
/// placeholders, nothing else.
fn only_placeholder_rows(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_digit() || matches!(c, '$' | '(' | ')' | ',' | ' '))
}

/// PostgreSQL: the plans of several requests as ONE statement that commits
/// itself, all or nothing (the batch of game actions, `store::postgres`).
/// The parts of the same kind across the plans (every game's `UPDATE`,
/// every action's `INSERT`) become one part over arrays (`unnest`), so the
/// statement's text depends on which kinds of parts the batch holds, not
/// on how many requests: PostgreSQL prepares it once per connection and
/// builds each part's executor once per batch instead of once per request.
/// Every guarded row must still change: the statement raises a
/// serialization failure (`as_capone_stale`) when fewer did, and nothing
/// of any plan stays. `None` when a plan holds a part of another shape
/// (an upsert, a delete): such a request is written on its own.
///
/// The plans must touch different rows (different tickets, different
/// balances): the caller sees to it. Two rows of one `UPDATE` on the same
/// row would change it once, and the count of guarded rows would find it.
pub fn postgres_batch(plans: &[&WritePlan]) -> Option<Batch> {
    let mut groups: std::collections::BTreeMap<String, Group> = std::collections::BTreeMap::new();
    for plan in plans {
        for part in &plan.parts {
            let values = &plan.values[part.values.clone()];
            let (key, head, insert, width) = if part.sql.starts_with("INSERT INTO ") && !part.guarded {
                let (head, rows) = part.sql.split_once(" VALUES ")?;
                if !only_placeholder_rows(rows) {
                    return None;
                }
                let width = head.rsplit_once('(')?.1.split(',').count();
                (format!("I {} {head}", part.name), head.to_string(), true, width)
            } else if part.sql.starts_with("UPDATE ") && part.sql.contains(" WHERE ") {
                let (template, n) = update_template(&part.sql);
                if n != values.len() {
                    return None;
                }
                (format!("U {} {} {template}", part.name, part.guarded), template, false, n)
            } else {
                return None;
            };
            if width == 0 || values.len() % width != 0 {
                return None;
            }
            let group = groups.entry(key).or_insert_with(|| Group {
                head,
                insert,
                guarded: part.guarded,
                columns: values[..width].iter().map(Column::of).collect(),
                rows: 0,
            });
            for row in values.chunks(width) {
                for (column, v) in group.columns.iter_mut().zip(row) {
                    if !column.push(v) {
                        return None;
                    }
                }
                group.rows += 1;
            }
        }
    }
    let mut sql = String::from("WITH ");
    let mut columns = Vec::new();
    let mut guarded = Vec::new();
    let mut guarded_rows = 0;
    for (i, group) in groups.into_values().enumerate() {
        let arrays: Vec<String> = group
            .columns
            .iter()
            .enumerate()
            .map(|(k, c)| format!("CAST(${} AS {})", columns.len() + k + 1, c.sql_type()))
            .collect();
        let names: Vec<String> = (0..group.columns.len()).map(|k| format!("c{k}")).collect();
        let unnest = format!("unnest({}) AS u({})", arrays.join(", "), names.join(", "));
        let body = if group.insert {
            format!("{} SELECT * FROM {unnest}", group.head)
        } else {
            let (set, filter) = group.head.split_once(" WHERE ")?;
            format!("{set} FROM {unnest} WHERE {filter}")
        };
        let _ = write!(sql, "p{i} AS ({body}");
        if group.guarded {
            sql.push_str(" RETURNING 1 AS one");
            guarded.push(format!("SELECT one FROM p{i}"));
            guarded_rows += group.rows;
        }
        sql.push_str("),\n");
        columns.extend(group.columns);
    }
    if guarded.is_empty() {
        guarded.push("SELECT 1 AS one WHERE false".into());
    }
    let expected = columns.len() + 1;
    let _ = write!(
        sql,
        "guarded AS ({})\nSELECT as_capone_stale(CAST(COUNT(*) AS INTEGER), CAST(${expected} AS INTEGER)) \
         FROM guarded HAVING COUNT(*) <> CAST(${expected} AS INTEGER)",
        guarded.join(" UNION ALL ")
    );
    Some(Batch { sql, columns, guarded_rows: i32::try_from(guarded_rows).ok()? })
}

/// One statement of a plan, for SQLite ([`WritePlan::sqlite_statements`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement<'a> {
    pub name: &'static str,
    pub sql: String,
    /// The values of its `?`s, in order.
    pub values: &'a [Val],
    /// It must change exactly one row, or the unit is stale.
    pub guarded: bool,
}

/// `$k+1, $k+2, ...` (`k` = `skip`, the values of the statements before)
/// as `?` when they come in that order in the text (each `?` takes the
/// next value), as `?N` (`N` = the value's place in this statement)
/// otherwise.
fn sqlite_placeholders(sql: &str, skip: usize) -> String {
    let mut anonymous = String::with_capacity(sql.len());
    let mut numbered = String::with_capacity(sql.len() + 8);
    let mut next = 1usize;
    let mut in_order = true;
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        anonymous.push_str(&rest[..at]);
        numbered.push_str(&rest[..at]);
        let digits = rest[at + 1..].bytes().take_while(u8::is_ascii_digit).count();
        let n = rest[at + 1..at + 1 + digits].parse::<usize>().unwrap_or(0).saturating_sub(skip);
        in_order &= n == next;
        next += 1;
        anonymous.push('?');
        let _ = write!(numbered, "?{n}");
        rest = &rest[at + 1 + digits..];
    }
    anonymous.push_str(rest);
    numbered.push_str(rest);
    if in_order { anonymous } else { numbered }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{BalanceChange, Effect, Reason};

    #[test]
    fn sqlite_placeholders_are_anonymous_when_in_order() {
        assert_eq!(sqlite_placeholders("A ($1, $2); B $3 $4", 0), "A (?, ?); B ? ?");
        assert_eq!(sqlite_placeholders("A ($2, $1)", 0), "A (?2, ?1)");
        assert_eq!(sqlite_placeholders("A $1 $1", 0), "A ?1 ?1");
        assert_eq!(sqlite_placeholders("none", 0), "none");
        // A statement after others: its own values count from 1.
        assert_eq!(sqlite_placeholders("A ($3, $4)", 2), "A (?, ?)");
        assert_eq!(sqlite_placeholders("A ($4, $3)", 2), "A (?2, ?1)");
    }

    fn movement_changes() -> Changes {
        Changes {
            movement: Some(Movement {
                id: "start:1".into(),
                reason: Reason::StartBalance,
                ticket_id: None,
                from: 1,
                to: 10,
                amount_cents: 500,
                player_balance: Some(BalanceChange { player: 1, account: 10, before: 0, after: 500 }),
                created_ms: 5,
            }),
            ..Changes::none(Effect::PlayerCreated)
        }
    }

    #[test]
    fn a_movement_is_three_named_statements_with_numbered_placeholders() {
        let p = WritePlan::of(&movement_changes(), None);
        let statements: Vec<Statement> = p.sqlite_statements().collect();
        let texts: Vec<(&str, &str, usize, bool)> =
            statements.iter().map(|s| (s.name, s.sql.as_str(), s.values.len(), s.guarded)).collect();
        assert_eq!(
            texts,
            [
                ("movement", "INSERT INTO movements (id, reason, ticket_id, created_ms) VALUES (?, ?, ?, ?)", 4, false),
                (
                    "ledger",
                    "INSERT INTO ledger_entries (movement_id, account_id, amount_cents) VALUES (?, ?, ?), (?, ?, ?)",
                    6,
                    false
                ),
                ("balance", "UPDATE accounts SET balance_cents = ? WHERE id = ? AND balance_cents = ?", 3, true),
            ]
        );
        assert_eq!(statements[2].values, &p.values()[10..13]);
        assert_eq!(p.values().len(), 13);
        assert_eq!(p.values()[6], Val::Int(Some(-500)));
        assert_eq!(p.values()[9], Val::Int(Some(500)));
        assert_eq!(p.values()[2], Val::Int(None));
        assert_eq!(p.guards(), 1);
        let pg = p.postgres_statement();
        assert!(pg.starts_with("WITH p0 AS (INSERT INTO movements"), "{pg}");
        assert!(pg.ends_with("SELECT part FROM p2"), "{pg}");
        // Committing itself, the statement raises when the guard held no row.
        let whole = p.postgres_statement_all_or_nothing();
        assert!(whole.starts_with("WITH p0 AS (INSERT INTO movements"), "{whole}");
        assert!(whole.contains("guarded AS (SELECT part FROM p2)"), "{whole}");
        assert!(
            whole.ends_with("SELECT as_capone_stale(CAST(COUNT(*) AS INTEGER), 1) FROM guarded HAVING COUNT(*) <> 1"),
            "{whole}"
        );
        // Without a guard there is nothing to check.
        let unguarded = WritePlan::of(&Changes { movement: None, ..movement_changes() }, None);
        assert_eq!(unguarded.postgres_statement_all_or_nothing(), unguarded.postgres_statement());
    }

    fn movement_of(n: i64) -> Changes {
        let mut c = movement_changes();
        let m = c.movement.as_mut().expect("a movement");
        m.id = format!("start:{n}");
        m.to = 10 + n;
        m.player_balance = Some(BalanceChange { player: n, account: 10 + n, before: 0, after: 500 });
        c
    }

    #[test]
    fn a_batch_writes_each_kind_of_part_once_over_arrays() {
        let (a, b) = (WritePlan::of(&movement_of(1), None), WritePlan::of(&movement_of(2), None));
        let batch = postgres_batch(&[&a, &b]).expect("inserts and guarded updates batch");
        // One part a kind, its rows from arrays; the text does not depend on
        // how many plans the batch holds, so it is prepared once.
        let one = postgres_batch(&[&a]).expect("one plan");
        assert_eq!(batch.sql, one.sql);
        assert_eq!(
            batch.sql,
            "WITH p0 AS (INSERT INTO ledger_entries (movement_id, account_id, amount_cents) SELECT * FROM \
             unnest(CAST($1 AS text[]), CAST($2 AS bigint[]), CAST($3 AS bigint[])) AS u(c0, c1, c2)),\n\
             p1 AS (INSERT INTO movements (id, reason, ticket_id, created_ms) SELECT * FROM \
             unnest(CAST($4 AS text[]), CAST($5 AS text[]), CAST($6 AS bigint[]), CAST($7 AS bigint[])) AS u(c0, c1, c2, c3)),\n\
             p2 AS (UPDATE accounts SET balance_cents = u.c0 FROM \
             unnest(CAST($8 AS bigint[]), CAST($9 AS bigint[]), CAST($10 AS bigint[])) AS u(c0, c1, c2) \
             WHERE id = u.c1 AND balance_cents = u.c2 RETURNING 1 AS one),\n\
             guarded AS (SELECT one FROM p2)\n\
             SELECT as_capone_stale(CAST(COUNT(*) AS INTEGER), CAST($11 AS INTEGER)) \
             FROM guarded HAVING COUNT(*) <> CAST($11 AS INTEGER)"
        );
        // The ledger's two rows a movement, in the plans' order.
        assert_eq!(
            batch.columns[0],
            Column::Text(["start:1", "start:1", "start:2", "start:2"].map(|s| Some(s.into())).to_vec())
        );
        assert_eq!(batch.columns[1], Column::Int(vec![Some(1), Some(11), Some(1), Some(12)]));
        assert_eq!(batch.columns[2], Column::Int(vec![Some(-500), Some(500), Some(-500), Some(500)]));
        assert_eq!(batch.columns[5], Column::Int(vec![None, None]));
        assert_eq!(batch.columns[8], Column::Int(vec![Some(11), Some(12)]));
        assert_eq!(batch.columns.len(), 10);
        // Every plan's guarded rows must change.
        assert_eq!((batch.guarded_rows, one.guarded_rows), (2, 1));
    }

    #[test]
    fn a_batch_refuses_a_part_it_cannot_write_over_arrays() {
        let movement = WritePlan::of(&movement_of(1), None);
        let expire =
            WritePlan::of(&Changes { expire_counters_before: Some(5), ..Changes::none(Effect::PlayerCreated) }, None);
        assert!(postgres_batch(&[&movement, &expire]).is_none(), "a DELETE is not batched");
        assert_eq!(
            update_template("UPDATE t SET a = $12 WHERE b = $13 AND c IS NULL"),
            ("UPDATE t SET a = u.c0 WHERE b = u.c1 AND c IS NULL".to_string(), 2)
        );
        assert!(only_placeholder_rows("($1, $2), ($3, $4)"));
        assert!(!only_placeholder_rows("($1, $2) ON CONFLICT (k) DO NOTHING"));
    }

    #[test]
    fn a_missing_guard_row_is_a_stale_write() {
        let p = WritePlan::of(&movement_changes(), None);
        assert!(p.check_guards(&["balance".to_string()]).is_ok());
        assert!(matches!(p.check_guards(&[]), Err(StoreError::Stale(m)) if m.contains("balance")));
        assert!(p.check_guards(&["balance".to_string(), "balance".to_string()]).is_err());
    }
}
