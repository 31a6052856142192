//! The server key ring (docs/keys.md): a rotation makes new emissions use
//! the new key while older emissions keep theirs (seeds, print files,
//! paper tickets' tokens), and a process that lacks a key it needs, or
//! holds another key under a known id, is refused at start.

use crate::fairness::published_root;
use crate::helpers::*;
use crate::paper::{emit_paper, sell};
use record::{Record, verify_against};
use serde_json::{Value, json};
use server::{Config, Keyring, ServerSeeds};
use std::path::{Path, PathBuf};

/// The key directory of a test database.
fn key_dir(db: &TestDatabase) -> PathBuf {
    db.dir().join("keys")
}

/// A server on `db` with its key directory and seeds derived from the keys,
/// as in production; or the refusal.
async fn start(db: TestDatabase) -> Result<TestApp, (TestDatabase, anyhow::Error)> {
    let dir = key_dir(&db);
    try_spawn_app_on(db, ServerSeeds::FromKey, TABLE, |c: &mut Config| {
        c.key_file = None;
        c.key_dir = Some(dir);
    })
    .await
}

/// A new key in the database's key directory, made current (`keys new`, `keys use`).
async fn rotate(db: &TestDatabase) -> u32 {
    let (id, _, _) = server::new_key_file(&key_dir(db), None).unwrap();
    let ring = Keyring::with_keys(server::read_key_dir(&key_dir(db)).unwrap(), None);
    let said = server::make_current(&db.url, &ring, id).await.unwrap();
    assert!(said.contains("now current"), "{said}");
    id
}

/// The fingerprint of key `id` of a key directory.
fn fingerprint(dir: &Path, id: u32) -> String {
    server::read_key_dir(dir).unwrap()[&id].fingerprint()
}

/// Plays a ticket to its end with `token` (its owner's or its own), the
/// first card of the hand each time; the finished ticket.
async fn play_out(app: &TestApp, token: &str, serial: &str) -> Value {
    let r = app.get(&format!("/api/tickets/{serial}"), Some(token)).await;
    assert_eq!(r.status, 200, "{serial}: {}", r.json);
    let mut t = r.json["ticket"].clone();
    while t["phase"] != "finished" {
        let mut body = testkit::next_action(&t);
        if t["seq"] == 0 {
            body["client_seed"] = json!(CLIENT_SEED);
        }
        let r = app.post(&format!("/api/tickets/{serial}/actions"), Some(token), body).await;
        assert_eq!(r.status, 200, "{serial}: {}", r.json);
        t = r.json["ticket"].clone();
    }
    t
}

/// The record of a finished ticket verifies against the published root of its block.
async fn assert_record_verifies(app: &TestApp, token: &str, serial: &str) -> Record {
    let r = app.get(&format!("/api/tickets/{serial}/record"), Some(token)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let record: Record = serde_json::from_value(r.json).unwrap();
    let published = published_root(app, record.emission, record.block).await;
    let v = verify_against(&record, Some(&published));
    assert!(v.is_valid(), "{serial}: {v:?}");
    record
}

async fn key_of_emission(app: &TestApp, emission: u64) -> i64 {
    app.query_i64(&format!("SELECT key_id FROM emissions WHERE id = {emission}")).await
}

both! {
/// Emit with key 1, rotate to key 2, emit again: the new emissions are
/// made with key 2; a game in play across the rotation finishes, an old
/// paper ticket redeems with a token of key 1 and plays, the old paper
/// block's print file regenerates, and every record verifies; on
/// PostgreSQL a second process reads the same ring.
#[tokio::test]
async fn a_rotation_keeps_old_emissions_on_their_key_and_new_ones_use_the_current_key() {
    let Some(db) = TestDatabase::create().await else { return };
    server::new_key_file(&key_dir(&db), None).unwrap();
    let app = start(db).await.map_err(|(_, e)| e).unwrap();
    let player = app.register().await;
    let in_play = app.buy(&player).await;
    let serial_a = in_play["serial"].as_str().unwrap().to_string();
    let mut body = testkit::next_action(&in_play);
    body["client_seed"] = json!(CLIENT_SEED);
    let first = app.post(&format!("/api/tickets/{serial_a}/actions"), Some(&player), body).await;
    assert_eq!(first.status, 200, "{}", first.json);
    let old_paper = emit_paper(&app, 1).await;
    let old_print = app.print_file(old_paper, 1).await;
    let old_ticket = old_print[0].clone();
    sell(&app, SHOP_A_TOKEN, SHOP_A, &old_ticket.serial).await;
    assert_eq!(key_of_emission(&app, 1).await, 1);
    assert_eq!(key_of_emission(&app, old_paper).await, 1);

    let db = app.stop().await;
    let new_key = rotate(&db).await;
    assert_eq!(new_key, 2);
    let app = start(db).await.map_err(|(_, e)| e).unwrap();
    assert_eq!(app.query_i64("SELECT key_id FROM server_keys WHERE is_current = 1").await, 2);
    let new_paper = emit_paper(&app, 1).await;
    assert_eq!(key_of_emission(&app, new_paper).await, 2, "a new emission uses the current key");
    let r = app.admin_post("/api/admin/emissions/1/close", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let r = app
        .admin_post(
            "/api/admin/emissions",
            json!({"table": testkit::blocks_of_50("NEW"), "blocks": 1, "channel": "online"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let new_online = r.json["emission"].as_u64().unwrap();
    assert_eq!(key_of_emission(&app, new_online).await, 2);
    // Blocks added to an old emission are made with its own key.
    let r = app.admin_post(&format!("/api/admin/emissions/{old_paper}/blocks"), json!({"blocks": 1})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    // A ticket of the old block is sold: its print file comes without the
    // play codes now, regenerated from key 1 and checked against the
    // published root (a 200), its serials, rows and prizes unchanged; the
    // old ticket's code still opens it (below).
    let lines = |p: &[Printed]| p.iter().map(|t| format!("{} {} {:?}", t.serial, t.row, t.prizes)).collect::<Vec<_>>();
    let again = app.print_file_without_codes(old_paper, 1).await;
    assert_eq!(lines(&again), lines(&old_print), "the old block's print file is regenerated unchanged");
    assert!(again.iter().all(|t| t.code.is_empty()), "no play code once a ticket of the block is sold");
    assert_eq!(app.print_file(old_paper, 2).await.len(), 50);

    // The game in play across the rotation finishes and verifies (key 1).
    play_out(&app, &player, &serial_a).await;
    let record = assert_record_verifies(&app, &player, &serial_a).await;
    assert_eq!(record.emission, 1);
    // The old paper ticket redeems: its token is key 1's, and opens it.
    let (_, token) = crate::paper::redeem_ok(&app, &old_ticket.code, None).await;
    let key_1 = server::read_key_dir(&key_dir(app.database())).unwrap()[&1].clone();
    let mac = hex::encode(key_1.hmac(&[b"as-capone ticket token v1", old_ticket.serial.as_bytes()]));
    assert_eq!(token, format!("t1.{}.{mac}", old_ticket.serial));
    play_out(&app, &token, &old_ticket.serial).await;
    assert_record_verifies(&app, &token, &old_ticket.serial).await;
    // A ticket of the new online emission (key 2) plays and verifies.
    let fresh = app.buy(&player).await;
    let serial_b = fresh["serial"].as_str().unwrap().to_string();
    play_out(&app, &player, &serial_b).await;
    assert_eq!(assert_record_verifies(&app, &player, &serial_b).await.emission as u64, new_online);
    // A paper ticket of the new emission: a token of key 2.
    let new_ticket = app.print_file(new_paper, 1).await[0].clone();
    sell(&app, SHOP_A_TOKEN, SHOP_A, &new_ticket.serial).await;
    let (_, token) = crate::paper::redeem_ok(&app, &new_ticket.code, None).await;
    assert!(!token.ends_with(&mac), "another key, another token");
    play_out(&app, &token, &new_ticket.serial).await;
    assert_record_verifies(&app, &token, &new_ticket.serial).await;

    if app.backend == Backend::Postgres {
        // A second process with the same ring makes its emissions with the current key.
        let dir = key_dir(app.database());
        let other = app.another_process(|c| (c.key_file, c.key_dir) = (None, Some(dir))).await.unwrap();
        let r = reqwest::Client::new()
            .post(format!("{}/api/admin/emissions", other.url()))
            .bearer_auth(OPERATOR)
            .json(&json!({"table": crate::paper::paper_table(), "blocks": 1, "channel": "paper"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        let made: Value = r.json().await.unwrap();
        assert_eq!(key_of_emission(&app, made["emission"].as_u64().unwrap()).await, 2);
        other.shutdown().await.unwrap();
        // A process given only key 1 (a single key file) is refused: it could not make the next emission.
        let key_1_file = app.database().dir().join("only-key-1.key");
        std::fs::copy(key_dir(app.database()).join("1.key"), &key_1_file).unwrap();
        let e = app.another_process(|c| (c.key_file, c.key_dir) = (Some(key_1_file), None)).await.err().unwrap();
        assert!(format!("{e:#}").contains("current server key is key 2"), "{e:#}");
    }
    app.shutdown().await;
}
}

/// The refusal of a start, as text.
async fn refused(db: TestDatabase) -> (TestDatabase, String) {
    match start(db).await {
        Ok(app) => panic!("the server started on {}", app.url),
        Err((db, e)) => (db, format!("{e:#}")),
    }
}

both! {
/// A key missing for an emission with unfinished tickets, the current key
/// missing, and another key under a known id are each refused at start,
/// with the emission, the key id and the fingerprint named; with every
/// key back, the server starts.
#[tokio::test]
async fn a_missing_or_wrong_key_is_refused_at_start_naming_the_emission_the_key_and_its_fingerprint() {
    let Some(db) = TestDatabase::create().await else { return };
    let dir = key_dir(&db);
    server::new_key_file(&dir, None).unwrap();
    let app = start(db).await.map_err(|(_, e)| e).unwrap();
    let db = app.stop().await;
    rotate(&db).await;
    let (one, two) = (fingerprint(&dir, 1), fingerprint(&dir, 2));
    let aside = db.dir().join("1.key.aside");

    // Key 1 missing: emission 1 still has unsold tickets.
    std::fs::rename(dir.join("1.key"), &aside).unwrap();
    let (db, e) = refused(db).await;
    assert!(e.contains("emission 1 has") && e.contains("server key 1") && e.contains(&one[..16]), "{e}");
    // Another key under id 1.
    server::new_key_file(&dir, Some(1)).unwrap();
    let (db, e) = refused(db).await;
    assert!(e.contains("key 1") && e.contains(&one[..16]) && e.contains("fingerprint"), "{e}");
    std::fs::remove_file(dir.join("1.key")).unwrap();
    std::fs::rename(&aside, dir.join("1.key")).unwrap();
    // The current key (2) missing.
    std::fs::rename(dir.join("2.key"), &aside).unwrap();
    let (db, e) = refused(db).await;
    assert!(e.contains("current server key is key 2") && e.contains(&two[..16]), "{e}");
    // The same key under two ids.
    std::fs::copy(dir.join("1.key"), dir.join("3.key")).unwrap();
    std::fs::rename(&aside, dir.join("2.key")).unwrap();
    let (db, e) = refused(db).await;
    assert!(e.contains("key 3") && e.contains("database's key 1"), "{e}");
    std::fs::remove_file(dir.join("3.key")).unwrap();
    // Nothing was changed by the refusals: every key back, it starts.
    let app = start(db).await.map_err(|(_, e)| e).unwrap();
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM server_keys").await, 2);
    app.shutdown().await;
}
}

/// A database of schema 6 (one key, table `server_key`), migrated: its key
/// becomes key 1, current, with its fingerprint, and its emissions are
/// marked as made with key 1.
macro_rules! migrate_from_version_6 {
    ($conn:ident, $migrator:expr) => {{
        let migrator = $migrator;
        migrator.run_to(6, &mut $conn).await.expect("migrations 1 to 6");
        let rows = "INSERT INTO server_key (id, fingerprint, created_ms) VALUES (1, 'fp-of-the-old-key', 7);
            INSERT INTO emissions (id, code, channel, table_toml, table_digest, price_cents, block_size, seed_salt, created_ms)
            VALUES (1, 'ASC', 'online', '', 'd', 300, 2, 's1', 8), (2, 'PAP', 'paper', '', 'd', 300, 2, 's2', 9);";
        sqlx::raw_sql(rows).execute(&mut $conn).await.expect("version 6 rows");
        migrator.run(&mut $conn).await.expect("migration 7");
        let keys: Vec<(i64, String, i64, i64, Option<i64>, Option<i64>)> = sqlx::query_as(
            "SELECT key_id, fingerprint, created_ms, is_current, current_from_ms, retired_ms FROM server_keys",
        )
        .fetch_all(&mut $conn)
        .await
        .unwrap();
        let emissions: Vec<(i64, Option<i64>)> =
            sqlx::query_as("SELECT id, key_id FROM emissions ORDER BY id").fetch_all(&mut $conn).await.unwrap();
        let second_current =
            sqlx::query("INSERT INTO server_keys (key_id, fingerprint, created_ms, is_current) VALUES (2, 'x', 1, 1)")
                .execute(&mut $conn)
                .await
                .is_err();
        $conn.close().await.unwrap();
        (keys, emissions, second_current)
    }};
}

both! {
#[tokio::test]
async fn migration_7_makes_the_one_key_key_1_of_the_ring_and_of_every_emission() {
    use sqlx::Connection;
    let Some(db) = TestDatabase::create().await else { return };
    let (keys, emissions, second_current) = match crate::helpers::backend() {
        Backend::Sqlite => {
            let opts = <sqlx::sqlite::SqliteConnectOptions as std::str::FromStr>::from_str(&db.url)
                .unwrap()
                .create_if_missing(true);
            let mut conn = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
            migrate_from_version_6!(conn, sqlx::migrate!("../server/migrations/sqlite"))
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
            migrate_from_version_6!(conn, sqlx::migrate!("../server/migrations/postgres"))
        }
    };
    assert_eq!(keys, vec![(1, "fp-of-the-old-key".to_string(), 7, 1, Some(7), None)]);
    assert_eq!(emissions, vec![(1, Some(1)), (2, Some(1))]);
    assert!(second_current, "one current key at most");
    db.remove().await;
}
}
