//! PostgreSQL's batch of plans ([`postgres_batch`]): the plans of several
//! requests as one statement over arrays.

use super::write::{Val, WritePlan};
use std::fmt::Write as _;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::plan::write::tests::movement_changes;
    use domain::{BalanceChange, Changes, Effect};

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
        let (a, b) = (WritePlan::of(&movement_of(1), None, None), WritePlan::of(&movement_of(2), None, None));
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
        let movement = WritePlan::of(&movement_of(1), None, None);
        let expire = WritePlan::of(
            &Changes { expire_counters_before: Some(5), ..Changes::none(Effect::PlayerCreated) },
            None,
            None,
        );
        assert!(postgres_batch(&[&movement, &expire]).is_none(), "a DELETE is not batched");
        assert_eq!(
            update_template("UPDATE t SET a = $12 WHERE b = $13 AND c IS NULL"),
            ("UPDATE t SET a = u.c0 WHERE b = u.c1 AND c IS NULL".to_string(), 2)
        );
        assert!(only_placeholder_rows("($1, $2), ($3, $4)"));
        assert!(!only_placeholder_rows("($1, $2) ON CONFLICT (k) DO NOTHING"));
    }
}
