//! Schema migrations on a database written by an earlier version: the rows
//! it holds come through unchanged, and a migration that finds rows it
//! cannot carry over refuses, changing nothing.
//!
//! Migration 3 (fewer pages per action) moves each action's draw
//! into the action's row, counts unfinished games from a partial index and
//! drops the audit log's unique index on `hash`.

use crate::helpers::{Backend, TestDatabase};
use sqlx::Connection;
use std::str::FromStr;

/// A database at schema version 2 with two sold tickets: one in play after
/// two actions (a trick, then a tie settled from the deck), one finished
/// after one action; a sealed and an unsealed audit entry.
const VERSION_2_ROWS: &str = "
INSERT INTO emissions (id, code, channel, table_toml, table_digest, price_cents, block_size, seed_salt, created_ms)
VALUES (1, 'ASC', 'online', '', 'digest', 300, 2, 'salt', 1);
INSERT INTO blocks (id, emission_id, number, size, root, chunk_roots, created_ms, published_ms)
VALUES (1, 1, 1, 2, 'root', '[]', 1, 1);
INSERT INTO tickets (id, block_id, position, serial, play_code_hash, schedule_row, prize_5, prize_6, prize_7, prize_8,
                     commitment, status)
VALUES (1, 1, 1, 'S1', 'code1', 0, 300, 1000, 10000, 1000000, 'c1', 'sold'),
       (2, 1, 2, 'S2', 'code2', 0, 300, 1000, 10000, 1000000, 'c2', 'sold');
INSERT INTO ticket_games (ticket_id, seq, phase, state_json, result_tricks, prize_cents, finished_ms)
VALUES (1, 2, 'play', '{\"seq\":2}', NULL, NULL, NULL),
       (2, 1, 'finished', '{\"seq\":1}', 4, 0, 30);
INSERT INTO actions (ticket_id, seq, request_json, answer_json, created_ms)
VALUES (1, 0, '{\"seq\":0}', '{\"answer\":10}', 10),
       (1, 1, '{\"seq\":1}', '{\"answer\":11}', 11),
       (2, 0, '{\"seq\":0}', '{\"answer\":20}', 30);
INSERT INTO draws (ticket_id, n, seq, kind, player, capone)
VALUES (1, 0, 0, 'capone', NULL, 'A'),
       (1, 1, 1, 'deck', '7', '9'),
       (2, 0, 0, 'capone', NULL, 'K');
INSERT INTO audit_log (id, created_ms, kind, data_json, chain_pos, prev_hash, hash)
VALUES (1, 5, 'emission_created', '{}', 1, '00', 'h1'),
       (2, 30, 'ticket_finished', '{\"serial\":\"S2\"}', NULL, NULL, NULL);
";

type ActionRow = (i64, i64, String, String, i64, String, Option<String>, String);
type AuditRow = (i64, i64, String, String, Option<i64>, Option<String>, Option<String>);

/// What the test reads back after the migrations, the same on both databases.
#[derive(Debug)]
struct Migrated {
    actions: Vec<ActionRow>,
    audit: Vec<AuditRow>,
    unfinished: i64,
    /// Whether the partial index `ticket_games_unfinished` exists.
    unfinished_index: bool,
    /// Whether the `draws` table is gone.
    draws_gone: bool,
    /// Whether changing a sealed audit entry, and sealing a second entry at
    /// the same `chain_pos`, are still refused.
    audit_update_refused: bool,
    duplicate_chain_pos_refused: bool,
}

/// Runs the migrations up to version 2, writes `rows`, runs them all, and
/// reads back; or, when they fail, their error with the version the
/// database is left at and its count of draws. Closes the connection.
macro_rules! migrate_from_version_2 {
    ($conn:ident, $migrator:expr, $rows:expr, $index_exists:expr) => {{
        let migrator = $migrator;
        migrator.run_to(2, &mut $conn).await.expect("migrations 1 and 2");
        sqlx::raw_sql(sqlx::AssertSqlSafe($rows)).execute(&mut $conn).await.expect("version 2 rows");
        let out = match migrator.run(&mut $conn).await {
            Err(e) => {
                let version: i64 = sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
                    .fetch_one(&mut $conn)
                    .await
                    .unwrap();
                let draws: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM draws").fetch_one(&mut $conn).await.unwrap();
                Err((e.to_string(), version, draws))
            }
            Ok(()) => {
                let actions = sqlx::query_as(
                    "SELECT ticket_id, seq, request_json, answer_json, created_ms, draw_kind, draw_player, draw_capone
                       FROM actions ORDER BY ticket_id, seq",
                )
                .fetch_all(&mut $conn)
                .await
                .unwrap();
                let audit = sqlx::query_as(
                    "SELECT id, created_ms, kind, data_json, chain_pos, prev_hash, hash FROM audit_log ORDER BY id",
                )
                .fetch_all(&mut $conn)
                .await
                .unwrap();
                let unfinished = sqlx::query_scalar("SELECT COUNT(*) FROM ticket_games WHERE phase <> 'finished'")
                    .fetch_one(&mut $conn)
                    .await
                    .unwrap();
                let unfinished_index: i64 = sqlx::query_scalar($index_exists).fetch_one(&mut $conn).await.unwrap();
                let draws_gone = sqlx::query("SELECT COUNT(*) FROM draws").fetch_one(&mut $conn).await.is_err();
                let audit_update_refused = sqlx::query("UPDATE audit_log SET kind = 'changed' WHERE id = 1")
                    .execute(&mut $conn)
                    .await
                    .is_err();
                let duplicate_chain_pos_refused =
                    sqlx::query("UPDATE audit_log SET chain_pos = 1, prev_hash = '00', hash = 'h2' WHERE id = 2")
                        .execute(&mut $conn)
                        .await
                        .is_err();
                Ok(Migrated {
                    actions,
                    audit,
                    unfinished,
                    unfinished_index: unfinished_index == 1,
                    draws_gone,
                    audit_update_refused,
                    duplicate_chain_pos_refused,
                })
            }
        };
        $conn.close().await.unwrap();
        out
    }};
}

/// Migrates a version-2 database holding `rows`; with the database's
/// version and its count of draws afterwards when the migration failed.
async fn migrate(rows: &str) -> Option<Result<Migrated, (String, i64, i64)>> {
    let db = TestDatabase::create().await?;
    let out = match crate::helpers::backend() {
        Backend::Sqlite => {
            let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&db.url).unwrap().create_if_missing(true);
            let mut conn = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
            let index = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'ticket_games_unfinished'";
            migrate_from_version_2!(conn, sqlx::migrate!("../server/migrations/sqlite"), rows.to_string(), index)
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
            let index = "SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'ticket_games_unfinished'";
            migrate_from_version_2!(conn, sqlx::migrate!("../server/migrations/postgres"), rows.to_string(), index)
        }
    };
    db.remove().await;
    Some(out)
}

fn s(text: &str) -> String {
    text.to_string()
}

both! {
#[tokio::test]
async fn migration_3_keeps_each_draw_in_its_action_and_the_audit_log_as_it_was() {
    let Some(out) = migrate(VERSION_2_ROWS).await else { return };
    let m = out.expect("migration 3 runs on a version-2 database");
    assert_eq!(
        m.actions,
        vec![
            (1, 0, s("{\"seq\":0}"), s("{\"answer\":10}"), 10, s("capone"), None, s("A")),
            (1, 1, s("{\"seq\":1}"), s("{\"answer\":11}"), 11, s("deck"), Some(s("7")), s("9")),
            (2, 0, s("{\"seq\":0}"), s("{\"answer\":20}"), 30, s("capone"), None, s("K")),
        ],
        "every action keeps its bytes and gains its draw"
    );
    assert_eq!(
        m.audit,
        vec![
            (1, 5, s("emission_created"), s("{}"), Some(1), Some(s("00")), Some(s("h1"))),
            (2, 30, s("ticket_finished"), s("{\"serial\":\"S2\"}"), None, None, None),
        ],
        "the audit log's entries are the same"
    );
    assert_eq!(m.unfinished, 1);
    assert!(m.unfinished_index, "games in play are counted from the partial index");
    assert!(m.draws_gone, "the draws table is gone");
    assert!(m.audit_update_refused, "a sealed audit entry still cannot change");
    assert!(m.duplicate_chain_pos_refused, "chain_pos is still unique");
}
}

both! {
#[tokio::test]
async fn migration_3_refuses_a_draw_that_is_not_its_actions_and_changes_nothing() {
    // A second draw for ticket 1's action 1: no longer one draw per action.
    let rows = format!(
        "{VERSION_2_ROWS} INSERT INTO draws (ticket_id, n, seq, kind, player, capone) VALUES (1, 2, 1, 'capone', NULL, 'Q');"
    );
    let Some(out) = migrate(&rows).await else { return };
    let (error, version, draws) = out.expect_err("migration 3 must refuse");
    assert_eq!((version, draws), (2, 4), "the database is left at version 2 with its draws ({error})");
    // An action without its draw.
    let rows = VERSION_2_ROWS.replace("(2, 0, 0, 'capone', NULL, 'K')", "(2, 5, 0, 'capone', NULL, 'K')");
    let Some(out) = migrate(&rows).await else { return };
    let (error, version, draws) = out.expect_err("migration 3 must refuse");
    assert_eq!((version, draws), (2, 3), "the database is left at version 2 with its draws ({error})");
}
}
