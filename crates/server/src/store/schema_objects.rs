//! A SQLite file's schema, object by object, against what the migrations
//! make (docs/backups.md, "A backup is not believed"): a backup or a
//! restore whose file holds a table, column, index, trigger or view that
//! the embedded migrations up to its schema version do not make, or lacks
//! or changes one they do, is refused, naming the first object that
//! differs. An added trigger would run inside the live server (copying
//! every new token hash elsewhere, say), so it is never believed.
//!
//! The reference is made at each check: the migrations up to the file's
//! version run in an in-memory database of the same SQLite library, whose
//! `sqlite_master` is then compared with the file's, statement text
//! included (SQLite keeps each object's `CREATE` as written, and rewrites
//! it the same way on both sides when a migration alters a table).

use super::schema::SQLITE;
use anyhow::Context as _;
use rusqlite::Connection;
use std::collections::BTreeMap;

/// `(type, name)` → `(table, CREATE statement)`: the schema's objects,
/// SQLite's own (`sqlite_*`) and sqlx's bookkeeping table aside (a trigger
/// or index on it is an object like any other).
type Objects = BTreeMap<(String, String), (String, Option<String>)>;

fn objects(conn: &Connection) -> anyhow::Result<Objects> {
    let mut stmt = conn.prepare(
        "SELECT type, name, tbl_name, sql FROM sqlite_master
         WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND NOT (type = 'table' AND name = '_sqlx_migrations')",
    )?;
    let rows = stmt.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?))))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// An in-memory database migrated to `version` by the embedded migrations.
fn migrated(version: i64) -> anyhow::Result<Connection> {
    let conn = Connection::open_in_memory()?;
    for m in SQLITE.iter().filter(|m| m.version <= version && m.migration_type.is_up_migration()) {
        conn.execute_batch(m.sql.as_str()).with_context(|| format!("migration {} ({})", m.version, m.description))?;
    }
    Ok(conn)
}

/// The objects that the embedded migrations up to `version` make.
fn reference(version: i64) -> anyhow::Result<Objects> {
    objects(&migrated(version)?)
}

/// Refuses a schema that is not, object by object, the one the migrations
/// up to `version` make: the first difference is named.
pub(super) fn check(conn: &Connection, version: i64) -> anyhow::Result<()> {
    let (found, wanted) = (objects(conn)?, reference(version)?);
    for ((kind, name), (table, sql)) in &found {
        match wanted.get(&(kind.clone(), name.clone())) {
            None => anyhow::bail!(
                "the schema holds {kind} {name} (on {table}), which the migrations up to version {version} do not \
                 make: a file changed outside as-capone is not believed ({})",
                sql.as_deref().unwrap_or("")
            ),
            Some(expected) if expected != &(table.clone(), sql.clone()) => anyhow::bail!(
                "the schema's {kind} {name} is not the one the migrations up to version {version} make: {} \
                 instead of {}",
                sql.as_deref().unwrap_or("(none)"),
                expected.1.as_deref().unwrap_or("(none)")
            ),
            Some(_) => {}
        }
    }
    if let Some((kind, name)) = wanted.keys().find(|k| !found.contains_key(*k)) {
        anyhow::bail!("the schema lacks {kind} {name}, which the migrations up to version {version} make");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn migrated(version: i64) -> Connection {
        super::migrated(version).unwrap()
    }

    #[test]
    fn every_schema_version_matches_itself_and_no_other() {
        let last = crate::store::schema_version();
        for version in 1..=last {
            check(&migrated(version), version).unwrap();
        }
        let err = check(&migrated(1), last).unwrap_err().to_string();
        assert!(err.contains("migrations up to version"), "{err}");
    }

    #[test]
    fn an_added_trigger_a_changed_table_and_a_dropped_index_are_each_named() {
        let last = crate::store::schema_version();
        let tampered = |sql: &str| {
            let conn = migrated(last);
            conn.execute_batch(sql).unwrap();
            check(&conn, last).unwrap_err().to_string()
        };
        let err = tampered("CREATE TRIGGER copy_sessions AFTER INSERT ON sessions BEGIN SELECT 1; END;");
        assert!(err.contains("trigger copy_sessions (on sessions)"), "{err}");
        let err = tampered("ALTER TABLE tickets ADD COLUMN bonus BIGINT");
        assert!(err.contains("table tickets is not the one") && err.contains("bonus"), "{err}");
        let index = migrated(last)
            .query_row("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL LIMIT 1", [], |r| {
                r.get::<_, String>(0)
            })
            .unwrap();
        let err = tampered(&format!("DROP INDEX {index}"));
        assert_eq!(err, format!("the schema lacks index {index}, which the migrations up to version {last} make"));
    }
}
