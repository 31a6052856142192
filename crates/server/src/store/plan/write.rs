//! [`WritePlan`] itself: its values and statements, the parts every
//! [`Changes`] may hold (a sale, a client seed, a game, an action, an
//! idempotency key, an audit entry), and the plan as each backend runs it.

use domain::error::StoreError;
use domain::{Changes, TicketStatus};
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
pub(super) struct Part {
    pub(super) name: &'static str,
    /// The SQL with its placeholders already numbered.
    pub(super) sql: String,
    pub(super) guarded: bool,
    /// Its values in the plan's list (a part's placeholders are made in
    /// its text's order, one after the other).
    pub(super) values: std::ops::Range<usize>,
}

/// The statements of one [`Changes`], with their values in order.
#[derive(Debug, Clone, Default)]
pub struct WritePlan {
    pub(super) parts: Vec<Part>,
    pub(super) values: Vec<Val>,
}

/// A new audit entry's keyed columns (see `store::audit_mac`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryMac {
    pub key_id: i64,
    pub mac: String,
    pub movement_id: Option<String>,
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
    pub(super) fn push_part(&mut self, name: &'static str, sql: String, guarded: bool) {
        let start = self.parts.last().map_or(0, |p| p.values.end);
        let values = start..self.values.len();
        debug_assert_eq!(sql.matches('$').count(), values.len(), "{name}: one placeholder per value");
        self.parts.push(Part { name, sql, guarded, values });
    }

    pub(super) fn placeholder(&mut self, v: Val) -> String {
        self.values.push(v);
        format!("${}", self.values.len())
    }

    /// `INSERT INTO table (a, b) VALUES ($1, $2), ($3, $4)`
    pub(super) fn insert(&mut self, name: &'static str, table: &str, columns: &[&str], rows: Vec<Vec<Val>>) {
        let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        for (i, row) in rows.into_iter().enumerate() {
            assert_eq!(row.len(), columns.len(), "{name}: one value per column");
            let marks: Vec<String> = row.into_iter().map(|v| self.placeholder(v)).collect();
            let _ = write!(sql, "{}({})", if i == 0 { "" } else { ", " }, marks.join(", "));
        }
        self.push_part(name, sql, false);
    }

    /// `INSERT` of one row given as `(column, value)` pairs.
    pub(super) fn insert_row(&mut self, name: &'static str, table: &str, row: Vec<(&str, Val)>) {
        let (columns, values): (Vec<&str>, Vec<Val>) = row.into_iter().unzip();
        self.insert(name, table, &columns, vec![values]);
    }

    /// `UPDATE table SET a = $1 WHERE k = $2 AND g = $3`, guarded: it must
    /// change exactly one row.
    pub(super) fn update_guarded(
        &mut self,
        name: &'static str,
        table: &str,
        set: Vec<(&str, Val)>,
        filter: Vec<(&str, Val)>,
    ) {
        let set: Vec<String> = set.into_iter().map(|(c, v)| format!("{c} = {}", self.placeholder(v))).collect();
        let filter: Vec<String> = filter.into_iter().map(|(c, v)| format!("{c} = {}", self.placeholder(v))).collect();
        let sql = format!("UPDATE {table} SET {} WHERE {}", set.join(", "), filter.join(" AND "));
        self.push_part(name, sql, true);
    }

    /// The statements of `changes`, in an order that satisfies the foreign
    /// keys statement by statement (SQLite checks them so). `seal` chains
    /// the audit entry at once (the SQLite writer); without it the entry is
    /// left for the sealer (PostgreSQL).
    pub fn of(changes: &Changes, seal: Option<&Seal>, mac: Option<&EntryMac>) -> WritePlan {
        let mut p = WritePlan::default();
        if let Some(s) = &changes.sale {
            p.update_guarded(
                "sale",
                "tickets",
                vec![
                    ("status", TicketStatus::Sold.as_str().into()),
                    ("owner_id", s.owner.into()),
                    ("sold_ms", s.sold_ms.into()),
                ],
                vec![("id", s.ticket_id.into()), ("status", TicketStatus::Unsold.as_str().into())],
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
        if let Some(w) = &changes.restore {
            p.restore(w);
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
            if let Some(m) = mac {
                row.push(("key_id", m.key_id.into()));
                row.push(("mac", m.mac.as_str().into()));
                row.push(("movement_id", m.movement_id.as_deref().into()));
            }
            p.insert_row("audit", "audit_log", row);
        }
        p
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
pub(super) mod tests {
    use super::*;
    use domain::{BalanceChange, Effect, Movement, Reason};

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

    pub(crate) fn movement_changes() -> Changes {
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
        let p = WritePlan::of(&movement_changes(), None, None);
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
        let unguarded = WritePlan::of(&Changes { movement: None, ..movement_changes() }, None, None);
        assert_eq!(unguarded.postgres_statement_all_or_nothing(), unguarded.postgres_statement());
    }

    #[test]
    fn a_missing_guard_row_is_a_stale_write() {
        let p = WritePlan::of(&movement_changes(), None, None);
        assert!(p.check_guards(&["balance".to_string()]).is_ok());
        assert!(matches!(p.check_guards(&[]), Err(StoreError::Stale(m)) if m.contains("balance")));
        assert!(p.check_guards(&["balance".to_string(), "balance".to_string()]).is_err());
    }
}
