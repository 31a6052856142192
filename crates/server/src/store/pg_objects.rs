//! A PostgreSQL database's schema, object by object, against what the
//! migrations make, so that a restore believes no object it reads (an added
//! trigger would fire in the live server); the SQLite counterpart is
//! `schema_objects.rs`.
//!
//! The reference is made in the database itself: a new schema
//! `as_capone_reference_<random>`, the embedded PostgreSQL migrations up to
//! the database's version run into it (`search_path` set to it), then both
//! schemas are read from the catalog with `search_path` set to
//! `pg_catalog` alone, so that every name in a definition is qualified, and
//! each schema's own prefix is taken out. Compared, by kind and name:
//! relations (tables, sequences, views, their row security), columns (type,
//! not null, default, identity), indexes, constraints, triggers (and
//! whether enabled), functions (their whole definition), policies, rules.
//! Also refused: any other schema than `public` (a function there could be
//! called by a trigger) and any event trigger. The reference schema is
//! dropped whatever happens. `_sqlx_migrations` is the migrations' record,
//! checked by `schema.rs`, not here.

use super::schema::POSTGRES;
use anyhow::Context as _;
use sqlx::{Connection, PgConnection, Row};
use std::collections::BTreeMap;

/// The prefix of the reference schema's name.
const REFERENCE: &str = "as_capone_reference_";

/// Each catalog query: `$1` the schema's name; the columns, text, are the
/// object's name then its definition.
const OBJECTS: [(&str, &str); 9] = [
    (
        "relation",
        "SELECT c.relname, c.relkind::text || ' rls ' || c.relrowsecurity::text || ' ' || c.relforcerowsecurity::text
           FROM pg_class c WHERE c.relnamespace = $1::regnamespace AND c.relkind NOT IN ('i', 'I')",
    ),
    (
        "column",
        "SELECT c.relname || '.' || a.attname,
                format_type(a.atttypid, a.atttypmod) || ' not null ' || a.attnotnull::text || ' default '
                || COALESCE(pg_get_expr(d.adbin, d.adrelid), '-') || ' identity ' || a.attidentity::text
                || ' generated ' || a.attgenerated::text
           FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
           LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          WHERE c.relnamespace = $1::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
            AND c.relkind IN ('r', 'p', 'v', 'm', 'f')",
    ),
    (
        "index",
        "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relnamespace = $1::regnamespace",
    ),
    (
        "constraint",
        "SELECT t.relname || '.' || co.conname, pg_get_constraintdef(co.oid)
           FROM pg_constraint co JOIN pg_class t ON t.oid = co.conrelid WHERE co.connamespace = $1::regnamespace",
    ),
    (
        "trigger",
        "SELECT c.relname || '.' || t.tgname, pg_get_triggerdef(t.oid) || ' enabled ' || t.tgenabled::text
           FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
          WHERE NOT t.tgisinternal AND c.relnamespace = $1::regnamespace",
    ),
    (
        "function",
        "SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')',
                CASE WHEN p.prokind IN ('f', 'p', 'w') THEN pg_get_functiondef(p.oid) ELSE p.prokind::text END
           FROM pg_proc p WHERE p.pronamespace = $1::regnamespace",
    ),
    (
        "policy",
        "SELECT c.relname || '.' || p.polname, p.polcmd::text || ' ' || p.polpermissive::text || ' '
                || p.polroles::text || ' ' || COALESCE(pg_get_expr(p.polqual, p.polrelid), '-') || ' '
                || COALESCE(pg_get_expr(p.polwithcheck, p.polrelid), '-')
           FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid WHERE c.relnamespace = $1::regnamespace",
    ),
    (
        "rule",
        "SELECT c.relname || '.' || r.rulename, pg_get_ruledef(r.oid)
           FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
          WHERE c.relnamespace = $1::regnamespace AND r.rulename <> '_RETURN'",
    ),
    (
        "view",
        "SELECT c.relname, pg_get_viewdef(c.oid) FROM pg_class c
          WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('v', 'm')",
    ),
];

/// Compares the database `url`'s schema with what its migrations make:
/// `None` when every object is the migrations', else the first difference.
pub async fn check(url: &str) -> anyhow::Result<Option<String>> {
    let mut conn = PgConnection::connect(url).await.context("cannot connect to PostgreSQL")?;
    let version: Option<i64> =
        sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success").fetch_one(&mut conn).await?;
    let version = version.context("no migration applied: an empty database")?;
    let reference = format!("{REFERENCE}{}", hex::encode(crate::fairness::random_bytes::<6>()));
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {reference}"))).execute(&mut conn).await?;
    let compared = compare(&mut conn, &reference, version).await;
    let dropped = sqlx::raw_sql(sqlx::AssertSqlSafe(format!("RESET search_path; DROP SCHEMA {reference} CASCADE")))
        .execute(&mut conn)
        .await;
    conn.close().await?;
    let found = compared?;
    dropped.context("dropping the reference schema")?;
    Ok(found)
}

async fn compare(conn: &mut PgConnection, reference: &str, version: i64) -> anyhow::Result<Option<String>> {
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("SET search_path TO {reference}"))).execute(&mut *conn).await?;
    for m in POSTGRES.iter().filter(|m| m.version <= version && m.migration_type.is_up_migration()) {
        sqlx::raw_sql(sqlx::AssertSqlSafe(m.sql.as_str().to_string()))
            .execute(&mut *conn)
            .await
            .with_context(|| format!("making the reference schema: migration {}", m.version))?;
    }
    sqlx::raw_sql("SET search_path TO pg_catalog").execute(&mut *conn).await?;
    if let Some(found) = outside_public(conn).await? {
        return Ok(Some(found));
    }
    let live = objects(conn, "public").await?;
    let made = objects(conn, reference).await?;
    Ok(first_difference(&live, &made, version))
}

/// A schema other than `public` (and the reference), or an event trigger.
async fn outside_public(conn: &mut PgConnection) -> anyhow::Result<Option<String>> {
    let schemas: Vec<String> = sqlx::query_scalar(
        "SELECT nspname::text FROM pg_namespace
          WHERE nspname NOT IN ('public', 'information_schema') AND nspname NOT LIKE 'pg\\_%'
            AND nspname NOT LIKE 'as\\_capone\\_reference\\_%' ORDER BY nspname",
    )
    .fetch_all(&mut *conn)
    .await?;
    if let Some(s) = schemas.first() {
        return Ok(Some(format!("the database holds schema {s}, which the migrations do not make")));
    }
    let events: Vec<String> =
        sqlx::query_scalar("SELECT evtname::text FROM pg_event_trigger ORDER BY evtname").fetch_all(&mut *conn).await?;
    Ok(events.first().map(|e| format!("the database holds event trigger {e}, which the migrations do not make")))
}

/// Every object of `schema`: `"kind name"` to its definition, the schema's
/// own prefix taken out of it.
async fn objects(conn: &mut PgConnection, schema: &str) -> anyhow::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let prefix = format!("{schema}.");
    for (kind, sql) in OBJECTS {
        for row in sqlx::query(sql).bind(schema).fetch_all(&mut *conn).await? {
            let name: String = row.try_get(0)?;
            if name.starts_with("_sqlx_migrations") {
                continue;
            }
            let definition: String = row.try_get::<Option<String>, _>(1)?.unwrap_or_default();
            out.insert(format!("{kind} {name}"), definition.replace(&prefix, ""));
        }
    }
    Ok(out)
}

/// The first object that one side has and the other has not, or that differs.
fn first_difference(live: &BTreeMap<String, String>, made: &BTreeMap<String, String>, version: i64) -> Option<String> {
    for (name, definition) in live {
        match made.get(name) {
            None => {
                return Some(format!(
                    "the schema holds {name}, which the migrations up to version {version} do not make ({})",
                    one_line(definition)
                ));
            }
            Some(d) if d != definition => {
                return Some(format!(
                    "{name} is not what the migrations up to version {version} make: {} where they make {}",
                    one_line(definition),
                    one_line(d)
                ));
            }
            Some(_) => {}
        }
    }
    made.keys()
        .find(|name| !live.contains_key(*name))
        .map(|name| format!("the schema lacks {name}, which the migrations up to version {version} make"))
}

fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 200 { flat.chars().take(200).collect::<String>() + "…" } else { flat }
}
