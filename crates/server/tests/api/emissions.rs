//! Committed emissions: every ticket's server seed is fixed and committed
//! in its block's published Merkle root before the sale (docs/contract.md
//! "Fairness" 1), the player's seed comes with the first action (Fairness
//! 2), a record is proven to the published root (Fairness, `verify`). The
//! operator's desk is in emissions_desk.rs, its report in
//! emissions_report.rs.

use crate::fairness::published_root;
use crate::helpers::*;
use crate::money::{play_out, play_out_with};
use engine::{Action, PrizeSchedule, Rank};
use record::{Published, Record, parse_seed, verify, verify_against};
use serde_json::{Value, json};
use server::ServerSeeds;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};

/// Another small table (blocks of 50), for the emissions an operator makes.
pub(crate) fn other_table() -> String {
    testkit::blocks_of_50("ASC")
}

/// The same table as a JSON object, with another game code, for paper.
pub(crate) fn paper_table_json() -> Value {
    testkit::blocks_of_50_json("PAP")
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

pub(crate) fn record_of(r: &Resp) -> Record {
    assert_eq!(r.status, 200, "{}", r.json);
    serde_json::from_value(r.json.clone()).unwrap()
}

/// The problems `verify_against` finds, one a line; panics when it finds none.
pub(crate) fn refused(record: &Record, published: &Published, what: &str) -> String {
    let v = verify_against(record, Some(published));
    assert!(!v.is_valid(), "{what}: the changed record was accepted:\n{v}");
    v.problems.join("\n")
}

/// Plays a found plan over HTTP to the end.
pub(crate) async fn play_plan(app: &TestApp, token: &str, ticket: &Value, plan: &Foreseen) {
    let answers = app.play(token, ticket["id"].as_str().unwrap(), &plan.actions).await;
    assert_eq!(answers.last().unwrap().json["ticket"]["phase"], "finished");
}

/// The published blocks of emission `emission` in `GET /api/emissions`:
/// block number -> the block's JSON.
pub(crate) fn published_blocks(emissions: &Value, emission: u64) -> BTreeMap<u64, Value> {
    let e = emissions["emissions"].as_array().unwrap().iter().find(|e| e["emission"] == emission);
    let e = e.unwrap_or_else(|| panic!("emission {emission} is published: {emissions}"));
    e["blocks"].as_array().unwrap().iter().map(|b| (b["block"].as_u64().unwrap(), b.clone())).collect()
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fairness_1_the_server_seed_is_the_one_committed_before_the_sale_whatever_the_client_seed() {
    // Real seeds, derived from the server key: nobody can predict them.
    let Some(app) = spawn_app_from_key(|_| {}).await else { return };
    // Before any sale, the blocks and their roots are public (no token).
    let before = app.get("/api/emissions", None).await;
    assert_eq!(before.status, 200, "{}", before.json);
    let e = &before.json["emissions"][0];
    let table = math::PrizeTable::parse_toml(TABLE).unwrap();
    assert_eq!(before.json["emissions"].as_array().unwrap().len(), 1, "{}", before.json);
    assert_eq!(e["emission"], 1);
    assert_eq!(e["code"], "TST");
    assert_eq!(e["channel"], "online");
    assert_eq!(e["price_cents"], 300);
    assert_eq!(e["block_size"], 100);
    assert_eq!(e["table_digest"], table.digest());
    assert_eq!(math::PrizeTable::parse_toml(e["table"].as_str().unwrap()).unwrap(), table);
    let blocks = published_blocks(&before.json, 1);
    assert_eq!(blocks.keys().copied().collect::<Vec<_>>(), vec![1, 2]);
    for b in blocks.values() {
        assert_eq!(b["size"], 100);
        assert!(b["published_ms"].as_i64().unwrap() > 0);
        assert_eq!(b["root"].as_str().unwrap().len(), 64);
    }

    // The emission's public salt and the key kept outside the database
    // give every ticket's seed (crate::keys), whoever derives it.
    let salt_hex = app.query_text("SELECT seed_salt FROM emissions WHERE id = 1").await;
    let salt = server::parse_salt(&salt_hex).expect("a 32-byte salt");
    let emission_seed = app.server_key().emission_seed(&salt);

    let token = app.register().await;
    let mut seeds = HashSet::new();
    for client_seed in ["client-seed-A", "client-seed-B"] {
        let t = app.buy(&token).await;
        let id = t["id"].as_str().unwrap();
        assert_eq!(t["server_seed"], Value::Null, "secret until the ticket is finished");
        let shown = t["commitment"].as_str().unwrap().to_string();
        let end = play_out_with(&app, &token, &t, Some(client_seed)).await;
        assert_eq!(end["commitment"], shown.as_str());
        let record = record_of(&app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await);
        assert_eq!(record.client_seed.as_deref(), Some(client_seed));
        let seed = parse_seed(record.server_seed.as_deref().unwrap()).unwrap();
        // SHA-256(server_seed) == the leaf's commitment == the one shown at purchase.
        assert_eq!(sha256_hex(&seed), record.leaf.commitment);
        assert_eq!(record.leaf.commitment, shown);
        assert_eq!(record.commitment, shown);
        // The leaf is in the root published before the sale.
        assert_eq!(record.emission, 1);
        assert_eq!(record.root, blocks[&u64::from(record.block)]["root"].as_str().unwrap());
        let mut root = [0u8; 32];
        hex::decode_to_slice(&record.root, &mut root).unwrap();
        let published = Published { root, source: "GET /api/emissions before the sale".into() };
        let v = verify_against(&record, Some(&published));
        assert!(v.is_valid(), "{v}");
        // And the seed is the one derived at emission for this place.
        assert_eq!(seed, emission_seed.server_seed(record.emission, record.block, record.position));
        assert_ne!(seed, SEED, "not the test-only seed");
        assert!(seeds.insert(seed), "every ticket has its own seed");
    }
    // What is published never changes.
    let after = app.get("/api/emissions", None).await;
    assert_eq!(after.json, before.json);
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fairness_4_seeds_and_play_codes_come_from_the_key_and_a_database_copy_reveals_none() {
    let Some(app) = spawn_app_from_key(|_| {}).await else { return };
    let key = app.server_key();
    // A paper block's print file is exactly what `emit` writes for the
    // emission's secret seed, derived from the key and the public salt.
    let r = app
        .admin_post("/api/admin/emissions", json!({"table": paper_table_json(), "blocks": 1, "channel": "paper"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["emission"], 2);
    let salt = server::parse_salt(&app.query_text("SELECT seed_salt FROM emissions WHERE id = 2").await).unwrap();
    let table = math::PrizeTable::from_json(&paper_table_json().to_string()).unwrap();
    let block = emission::Emission::new(2, table, key.emission_seed(&salt)).unwrap().generate_block(1).unwrap();
    assert_eq!(hex::encode(block.merkle_root), r.json["blocks"][0]["root"].as_str().unwrap());
    let csv = app.admin_get("/api/admin/emissions/2/blocks/1/print.csv").await;
    assert_eq!(csv.status, 200);
    assert_eq!(
        String::from_utf8(csv.bytes).unwrap(),
        String::from_utf8(emission::block_csv(&block, false)).unwrap()
    );

    // The online emission: a ticket sold and half played, one unsold. Their
    // seeds, and every play code, are nowhere in the database.
    let salt = server::parse_salt(&app.query_text("SELECT seed_salt FROM emissions WHERE id = 1").await).unwrap();
    let online = key.emission_seed(&salt);
    let token = app.register().await;
    let t = app.buy(&token).await;
    let r = app
        .post(
            &format!("/api/tickets/{}/actions", t["id"].as_str().unwrap()),
            Some(&token),
            action_body(0, Action::play(Rank::Ace)),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ticket"]["server_seed"], Value::Null);
    let mut secrets: Vec<String> = [1, 2].iter().map(|p| hex::encode(online.server_seed(1, 1, *p))).collect();
    secrets.extend(
        block.tickets.iter().take(3).flat_map(|t| {
            [t.play_code.compact().to_string(), String::from_utf8(t.play_code.grouped().to_vec()).unwrap()]
        }),
    );
    for secret in &secrets {
        for (table, column) in [
            ("audit_log", "data_json"),
            ("tickets", "serial"),
            ("tickets", "play_code_hash"),
            ("tickets", "commitment"),
            ("tickets", "client_seed"),
            ("ticket_games", "state_json"),
            ("actions", "answer_json"),
            ("emissions", "seed_salt"),
            ("emissions", "table_toml"),
            ("blocks", "chunk_roots"),
            ("server_key", "fingerprint"),
            ("server_keys", "fingerprint"),
        ] {
            let sql = format!("SELECT COUNT(*) FROM {table} WHERE UPPER({column}) LIKE UPPER('%{secret}%')");
            assert_eq!(app.query_i64(&sql).await, 0, "{table}.{column} reveals a secret");
        }
    }
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarantee_4_concurrent_first_actions_with_different_client_seeds_apply_once() {
    let Some(app) = spawn_app().await else { return };
    let app = std::sync::Arc::new(app);
    let token = app.register().await;
    for _ in 0..3 {
        let t = app.buy(&token).await;
        let path = format!("/api/tickets/{}/actions", t["id"].as_str().unwrap());
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let (app, token, path) = (app.clone(), token.clone(), path.clone());
                tokio::spawn(async move {
                    let body = json!({"seq": 0, "action": "play", "card": "J", "client_seed": format!("seed-{i}")});
                    (i, app.post(&path, Some(&token), body).await)
                })
            })
            .collect();
        let mut applied = Vec::new();
        for task in tasks {
            let (i, r) = task.await.unwrap();
            match r.status.as_u16() {
                200 => applied.push((i, r.json)),
                409 => assert_error(&r, 409, "conflict"),
                s => panic!("unexpected {s}: {}", r.json),
            }
        }
        assert_eq!(applied.len(), 1, "exactly one first action applies: {applied:?}");
        let (i, answer) = &applied[0];
        assert_eq!(answer["ticket"]["client_seed"], format!("seed-{i}"));
        let rec = app.get(&format!("{}/record", path.trim_end_matches("/actions")), Some(&token)).await;
        assert_eq!(rec.json["client_seed"], format!("seed-{i}"));
        assert_eq!(rec.json["draws"].as_array().unwrap().len(), 1);
    }
    shutdown_shared(app).await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fairness_verify_refuses_a_real_record_whose_prizes_position_proof_or_root_was_changed() {
    let Some(app) = spawn_app_from_key(|_| {}).await else { return };
    let token = app.register().await;
    let t = app.buy(&token).await;
    let id = t["id"].as_str().unwrap();
    play_out_with(&app, &token, &t, Some("tamper-test")).await;
    let record = record_of(&app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await);
    let published = published_root(&app, record.emission, record.block).await;
    let v = verify_against(&record, Some(&published));
    assert!(v.is_valid(), "{v}");
    assert!(v.passed.iter().any(|p| p.contains("published in GET /api/emissions")), "{v}");
    assert!(!record.proof.is_empty());

    // The prizes (art. 3.1), in the record only: the leaf says otherwise.
    let [p5, p6, p7, p8] = record.prizes_cents.cents();
    let richer = PrizeSchedule::new([p5, p6, p7, p8 * 10]);
    let mut bad = record.clone();
    bad.prizes_cents = richer;
    assert!(refused(&bad, &published, "prizes").contains("the leaf's prizes"));
    // ...and in the leaf too: the leaf no longer climbs to the root.
    bad.leaf.prizes_cents = richer;
    let problems = refused(&bad, &published, "prizes and leaf");
    assert!(problems.contains("does not lead from the ticket's leaf"), "{problems}");

    // The position, in the record and the leaf.
    let mut bad = record.clone();
    bad.position += 1;
    bad.leaf.position += 1;
    let problems = refused(&bad, &published, "position");
    assert!(problems.contains("position"), "{problems}");
    assert!(problems.contains("inclusion proof"), "{problems}");

    // One node of the proof, each in turn.
    for i in 0..record.proof.len() {
        let mut bad = record.clone();
        let node = &mut bad.proof[i];
        let last = node.pop().unwrap();
        node.push(if last == '0' { '1' } else { '0' });
        let problems = refused(&bad, &published, "proof node");
        assert!(problems.contains("inclusion proof"), "node {i}: {problems}");
    }
    // A node's side.
    let mut bad = record.clone();
    let flipped = if bad.proof[0].starts_with('L') { "R" } else { "L" };
    bad.proof[0].replace_range(..1, flipped);
    assert!(refused(&bad, &published, "proof side").contains("inclusion proof"));

    // The root: not the published one.
    let mut bad = record.clone();
    bad.root = "ab".repeat(32);
    let problems = refused(&bad, &published, "root");
    assert!(problems.contains("is not the root"), "{problems}");
    assert!(problems.contains("GET /api/emissions"), "{problems}");
    // The untouched record against another block's published root.
    let other = published_root(&app, 1, if record.block == 1 { 2 } else { 1 }).await;
    assert!(refused(&record, &other, "another root").contains("is not the root"));
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fairness_2_the_client_seed_comes_with_the_first_action_only() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    // A purchase with a client seed: 400, nothing debited, no ticket.
    let r = app.post("/api/tickets", Some(&token), json!({"client_seed": "too-early"})).await;
    assert_error(&r, 400, "bad_request");
    assert!(r.json["message"].as_str().unwrap().contains("first action"), "{}", r.json);
    assert_eq!(app.balance(&token).await, START);
    assert_eq!(app.get("/api/tickets", Some(&token)).await.json["tickets"], json!([]));

    let t = app.buy(&token).await;
    let id = t["id"].as_str().unwrap();
    let path = format!("/api/tickets/{id}/actions");
    assert_eq!(t["client_seed"], Value::Null);
    assert_eq!(t["commitment"], engine::commitment(&SEED), "the committed seed, shown before the player's");
    // The longest seed there is: 64 printable ASCII characters, '"' and '\' included.
    let mine: String = (b'!'..=b'`').map(char::from).collect();
    assert_eq!(mine.len(), 64);
    let first_body = json!({"seq": 0, "action": "play", "card": "Q", "client_seed": mine});
    let first = app.post(&path, Some(&token), first_body.clone()).await;
    assert_eq!(first.status, 200, "{}", first.json);
    assert_eq!(first.json["ticket"]["client_seed"], mine.as_str());
    // The same first action again: the identical answer.
    let again = app.post(&path, Some(&token), first_body).await;
    assert_eq!(again.bytes, first.bytes);
    // Another seed, or none, for the applied first action: 409.
    let r =
        app.post(&path, Some(&token), json!({"seq": 0, "action": "play", "card": "Q", "client_seed": "other"})).await;
    assert_error(&r, 409, "conflict");
    let r = app.post(&path, Some(&token), json!({"seq": 0, "action": "play", "card": "Q"})).await;
    assert_error(&r, 409, "conflict");
    // A seed with a later action: 400, and nothing changed.
    let next = if first.json["ticket"]["phase"] == "play" {
        json!({"seq": 1, "action": "play", "card": first.json["ticket"]["hand"][0]})
    } else {
        json!({"seq": 1, "action": "draw"})
    };
    let mut late = next.clone();
    late["client_seed"] = json!("late-seed");
    let r = app.post(&path, Some(&token), late).await;
    assert_error(&r, 400, "bad_request");
    let now = app.get(&format!("/api/tickets/{id}"), Some(&token)).await;
    assert_eq!(now.json["ticket"], first.json["ticket"], "still at seq 1, the seed unchanged");
    assert_eq!(now.json["ticket"]["seq"], 1);
    let rec = app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await;
    assert_eq!(rec.json["client_seed"], mine.as_str());
    assert_eq!(rec.json["actions"].as_array().unwrap().len(), 1);
    assert_eq!(rec.json["draws"].as_array().unwrap().len(), 1);
    // Without it, the next action applies; the record with that seed verifies.
    let r = app.post(&path, Some(&token), next).await;
    assert_eq!(r.status, 200, "{}", r.json);
    play_out(&app, &token, &r.json["ticket"]).await;
    let record = record_of(&app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await);
    assert_eq!(record.client_seed.as_deref(), Some(mine.as_str()));
    let v = verify(&record);
    assert!(v.is_valid(), "{v}");

    // No seed at seq 0: the server picks a random 32-hex one; the same
    // request again (no seed again) replays it.
    let mut randoms = HashSet::new();
    for _ in 0..2 {
        let t = app.buy(&token).await;
        let path = format!("/api/tickets/{}/actions", t["id"].as_str().unwrap());
        let first = app.post(&path, Some(&token), json!({"seq": 0, "action": "play", "card": "7"})).await;
        assert_eq!(first.status, 200, "{}", first.json);
        let seed = first.json["ticket"]["client_seed"].as_str().unwrap().to_string();
        assert!(seed.len() == 32 && seed.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')), "{seed}");
        let again = app.post(&path, Some(&token), json!({"action": "play", "card": "7", "seq": 0})).await;
        assert_eq!(again.bytes, first.bytes);
        // Naming the seed the server picked is another request: 409.
        let r =
            app.post(&path, Some(&token), json!({"seq": 0, "action": "play", "card": "7", "client_seed": seed})).await;
        assert_error(&r, 409, "conflict");
        randoms.insert(seed);
    }
    assert_eq!(randoms.len(), 2, "a new random seed for each ticket");
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fairness_4_a_server_with_another_key_or_none_refuses_to_start_on_the_database() {
    let Some(app) = spawn_app_from_key(|_| {}).await else { return };
    let token = app.register().await;
    let t = app.buy(&token).await;
    let id = t["id"].as_str().unwrap().to_string();
    let db = app.stop().await;
    let seeds = || ServerSeeds::FromKey;
    // Another key: its seeds would not be the committed ones.
    let other = db.dir().join("other.key");
    // Written 0600, as a key file must be (a key others may read is refused first).
    let mut options = std::fs::OpenOptions::new();
    std::os::unix::fs::OpenOptionsExt::mode(options.write(true).create_new(true), 0o600);
    let text = format!("{}\n", hex::encode([0x42; 32]));
    std::io::Write::write_all(&mut options.open(&other).unwrap(), text.as_bytes()).unwrap();
    let db = match try_spawn_app_on(db, seeds(), TABLE, |c| c.key_file = Some(other.clone())).await {
        Ok(_) => panic!("a server with another key started"),
        Err((db, e)) => {
            let m = format!("{e:#}");
            assert!(m.contains("but the database's key 1 has fingerprint"), "{m}");
            db
        }
    };
    // No key file named: PostgreSQL has no default and refuses; SQLite
    // makes a new key beside the database file, which is not the one either.
    let db = match try_spawn_app_on(db, seeds(), TABLE, |c| c.key_file = None).await {
        Ok(_) => panic!("a server without the database's key started"),
        Err((db, e)) => {
            let m = format!("{e:#}");
            assert!(m.contains("key"), "{m}");
            db
        }
    };
    // The original key: the server starts, the ticket is still there.
    let app = match try_spawn_app_on(db, seeds(), TABLE, |_| {}).await {
        Ok(app) => app,
        Err((_, e)) => panic!("the original key is taken: {e:#}"),
    };
    let again = app.get(&format!("/api/tickets/{id}"), Some(&token)).await;
    assert_eq!(again.json["ticket"], t);
    let end = play_out(&app, &token, &t).await;
    let record = record_of(&app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await);
    assert_eq!(Some(end["server_seed"].as_str().unwrap().to_string()), record.server_seed);
    let published = published_root(&app, record.emission, record.block).await;
    let v = verify_against(&record, Some(&published));
    assert!(v.is_valid(), "{v}");
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn art_3_2_3_3_a_stored_game_the_rules_cannot_reach_is_refused_when_read() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let other = app.register().await;
    let (t, plan) = find_ticket(&app, &token, 20, |p| p.game.result().unwrap().prize_cents > 0).await;
    play_plan(&app, &token, &t, &plan).await;
    let mine = app.buy(&other).await;
    // Someone with the database raises the finished game's prize.
    let serial = t["serial"].as_str().unwrap();
    let where_ = format!("ticket_id = (SELECT id FROM tickets WHERE serial = '{serial}')");
    let state = app.query_text(&format!("SELECT state_json FROM ticket_games WHERE {where_}")).await;
    let mut game: Value = serde_json::from_str(&state).unwrap();
    let prize = game["result"]["prize_cents"].as_u64().unwrap();
    game["result"]["prize_cents"] = json!(prize * 2);
    assert_eq!(app.exec_sql(&format!("UPDATE ticket_games SET state_json = '{game}' WHERE {where_}")).await, Ok(1));
    // Reading it is refused (500, in the error shape, nothing shown)...
    let id = t["id"].as_str().unwrap();
    assert_error(&app.get(&format!("/api/tickets/{id}"), Some(&token)).await, 500, "internal");
    assert_error(&app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await, 500, "internal");
    assert_error(&app.get("/api/tickets", Some(&token)).await, 500, "internal");
    // ...and the other tickets are read as before.
    let r = app.get(&format!("/api/tickets/{}", mine["id"].as_str().unwrap()), Some(&other)).await;
    assert_eq!(r.json["ticket"], mine);
    app.shutdown().await;
}
}
