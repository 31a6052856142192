//! Committed emissions (issue 9): every ticket's server seed is fixed and
//! committed in its block's published Merkle root before the sale
//! (CONTRACT.md Fairness 1), the player's seed comes with the first action
//! (Fairness 2), a record is proven to the published root (Fairness,
//! `verify`), and the operator's desk (CONTRACT.md Operator; regulation
//! art. 2, 3.1 and 3.2.3.3 for the tables it takes).

use crate::fairness::published_root;
use crate::helpers::*;
use crate::money::{play_out, play_out_with};
use engine::{Action, PrizeSchedule, Rank};
use record::{Published, Record, parse_seed, verify, verify_against};
use reqwest::Method;
use serde_json::{Value, json};
use server::Figures;
use server::ServerSeeds;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};

/// Another small table (blocks of 50), for the emissions an operator makes.
const OTHER_TABLE: &str = r#"
game = "As Capone"
code = "ASC"
price_cents = 300
block_size = 50

[[schedule]]
tickets = 30
prizes_cents = { 5 = 300, 6 = 600, 7 = 5000, 8 = 50000 }

[[schedule]]
tickets = 20
prizes_cents = { 5 = 300, 6 = 1500, 7 = 5000, 8 = 100000 }
"#;

/// The same table as a JSON object, with another game code, for paper.
fn paper_table_json() -> Value {
    json!({
        "game": "As Capone", "code": "PAP", "price_cents": 300, "block_size": 50,
        "schedule": [
            {"tickets": 30, "prizes_cents": {"5": 300, "6": 600, "7": 5000, "8": 50000}},
            {"tickets": 20, "prizes_cents": {"5": 300, "6": 1500, "7": 5000, "8": 100000}},
        ],
    })
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn record_of(r: &Resp) -> Record {
    assert_eq!(r.status, 200, "{}", r.json);
    serde_json::from_value(r.json.clone()).unwrap()
}

/// The problems `verify_against` finds, one a line; panics when it finds none.
fn refused(record: &Record, published: &Published, what: &str) -> String {
    let v = verify_against(record, Some(published));
    assert!(!v.is_valid(), "{what}: the changed record was accepted:\n{v}");
    v.problems.join("\n")
}

/// The published blocks of emission `emission` in `GET /api/emissions`:
/// block number -> the block's JSON.
fn published_blocks(emissions: &Value, emission: u64) -> BTreeMap<u64, Value> {
    let e = emissions["emissions"].as_array().unwrap().iter().find(|e| e["emission"] == emission);
    let e = e.unwrap_or_else(|| panic!("emission {emission} is published: {emissions}"));
    e["blocks"].as_array().unwrap().iter().map(|b| (b["block"].as_u64().unwrap(), b.clone())).collect()
}

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
        String::from_utf8(emission::files::block_csv(&block, false)).unwrap()
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
        ] {
            let sql = format!("SELECT COUNT(*) FROM {table} WHERE UPPER({column}) LIKE UPPER('%{secret}%')");
            assert_eq!(app.query_i64(&sql).await, 0, "{table}.{column} reveals a secret");
        }
    }
    app.shutdown().await;
}

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

/// Every endpoint of the operator's desk, with a body it would accept.
fn admin_endpoints() -> Vec<(Method, &'static str, Option<Value>)> {
    vec![
        (Method::POST, "/api/admin/emissions", Some(json!({"table": OTHER_TABLE, "blocks": 1, "channel": "online"}))),
        (Method::POST, "/api/admin/emissions/1/blocks", Some(json!({"blocks": 1}))),
        (Method::GET, "/api/admin/emissions", None),
        (Method::GET, "/api/admin/emissions/1", None),
        (Method::GET, "/api/admin/emissions/1/blocks/1/print.csv", None),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_a_non_operator_gets_401_or_403_on_every_admin_endpoint_and_changes_nothing() {
    let Some(app) = spawn_app().await else { return };
    let player = app.register().await;
    let public = app.get("/api/emissions", None).await;
    for (method, path, body) in admin_endpoints() {
        let auths: [(Option<String>, u16, &str); 5] = [
            (None, 401, "unauthorized"),
            (Some(format!("Bearer {player}")), 403, "forbidden"),
            (Some("Bearer not-an-operator-token".into()), 401, "unauthorized"),
            (Some(format!("Bearer {OPERATOR}x")), 401, "unauthorized"),
            (Some(format!("Basic {OPERATOR}")), 401, "unauthorized"),
        ];
        for (auth, status, code) in auths {
            let mut req = app.client.request(method.clone(), format!("{}{path}", app.url));
            if let Some(b) = &body {
                req = req.json(b);
            }
            if let Some(a) = &auth {
                req = req.header("authorization", a);
            }
            let r = app.send(req).await;
            assert_error(&r, status, code);
            assert!(!r.json["message"].as_str().unwrap().contains(OPERATOR), "{path}: {}", r.json);
        }
    }
    // Nothing was created: one emission, its two blocks, published as before.
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM emissions").await, 1);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM blocks").await, 2);
    assert_eq!(app.get("/api/emissions", None).await.json, public.json);
    // The operator's token opens every one of them.
    for (method, path, body) in admin_endpoints() {
        let mut req = app.client.request(method.clone(), format!("{}{path}", app.url)).bearer_auth(OPERATOR);
        if let Some(b) = &body {
            req = req.json(b);
        }
        let r = app.send(req).await;
        // The start-up emission is online: it has no print file (409).
        let want = match (method.as_str(), path.ends_with("print.csv")) {
            (_, true) => 409,
            ("POST", _) => 201,
            _ => 200,
        };
        assert_eq!(r.status.as_u16(), want, "{method} {path}: {}", String::from_utf8_lossy(&r.bytes));
    }
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_creates_online_and_paper_emissions_whose_roots_are_published() {
    let Some(app) = spawn_app().await else { return };
    let start_up = app.get("/api/emissions", None).await;
    let other = math::PrizeTable::parse_toml(OTHER_TABLE).unwrap();

    // An online emission, the table as TOML text.
    let r =
        app.admin_post("/api/admin/emissions", json!({"table": OTHER_TABLE, "blocks": 2, "channel": "online"})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["emission"], 2);
    assert_eq!(r.json["channel"], "online");
    let answered = r.json["blocks"].as_array().unwrap().clone();
    assert_eq!(answered.len(), 2);
    let public = app.get("/api/emissions", None).await;
    let blocks = published_blocks(&public.json, 2);
    for (i, b) in answered.iter().enumerate() {
        assert_eq!(b["block"], i as u64 + 1);
        let p = &blocks[&(i as u64 + 1)];
        assert_eq!(p["root"], b["root"], "the root answered is the one published");
        assert_eq!(p["size"], 50);
        assert!(p["published_ms"].as_i64().unwrap() > 0);
    }
    let e = public.json["emissions"].as_array().unwrap().iter().find(|e| e["emission"] == 2).unwrap().clone();
    assert_eq!((e["code"].as_str(), e["channel"].as_str()), (Some("ASC"), Some("online")));
    assert_eq!(e["table_digest"], other.digest());
    assert_eq!(e["block_size"], 50);
    // The start-up emission is as it was published.
    assert_eq!(public.json["emissions"][0], start_up.json["emissions"][0]);

    // A paper emission, the table as a JSON object.
    let r = app
        .admin_post("/api/admin/emissions", json!({"table": paper_table_json(), "blocks": 1, "channel": "paper"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["emission"], 3);
    assert_eq!(r.json["channel"], "paper");
    let paper_root = r.json["blocks"][0]["root"].as_str().unwrap().to_string();
    let public = app.get("/api/emissions", None).await;
    assert_eq!(published_blocks(&public.json, 3)[&1]["root"], paper_root.as_str());
    // Its print file: a header and one line per ticket, whose leaves make
    // the published root (CONTRACT.md Emissions and blocks).
    let r = app.admin_get("/api/admin/emissions/3/blocks/1/print.csv").await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.bytes));
    let text = String::from_utf8(r.bytes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "position,serial,play_code,row,prize_5,prize_6,prize_7,prize_8,commitment");
    assert_eq!(lines.len(), 1 + 50);
    let mut leaves = Vec::new();
    for (i, line) in lines[1..].iter().enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 9, "{line}");
        assert_eq!(f[0], (i + 1).to_string());
        let serial = emission::Serial::parse(f[1]).unwrap();
        assert_eq!((serial.code().as_str(), serial.emission(), serial.block()), ("PAP", 3, 1), "{line}");
        let prizes = PrizeSchedule::new([f[4], f[5], f[6], f[7]].map(|p| p.parse::<u64>().unwrap()));
        let mut commitment = [0u8; 32];
        hex::decode_to_slice(f[8], &mut commitment).unwrap();
        assert_eq!(f[8], engine::commitment(&SEED), "every ticket gets the test-only seed here");
        leaves.push(
            emission::Leaf {
                serial,
                position: (i + 1) as u32,
                row: f[3].parse::<u32>().unwrap() - 1,
                prizes,
                play_code_sha256: emission::PlayCode::parse(f[2]).unwrap().sha256(),
                commitment,
            }
            .hash(),
        );
    }
    assert_eq!(hex::encode(emission::merkle::root_of(leaves)), paper_root);
    // Paper tickets wait in the database as printed, never for sale online.
    assert_eq!(
        app.query_i64(
            "SELECT COUNT(*) FROM tickets t JOIN blocks b ON b.id = t.block_id WHERE b.emission_id = 3 AND t.status = 'printed'"
        )
        .await,
        50
    );
    // An online block has no print file (409); an unknown one, 404.
    assert_error(&app.admin_get("/api/admin/emissions/1/blocks/1/print.csv").await, 409, "conflict");
    assert_error(&app.admin_get("/api/admin/emissions/2/blocks/1/print.csv").await, 409, "conflict");
    assert_error(&app.admin_get("/api/admin/emissions/3/blocks/2/print.csv").await, 404, "not_found");
    assert_error(&app.admin_get("/api/admin/emissions/9/blocks/1/print.csv").await, 404, "not_found");

    // The operator's figures of the paper emission: printed, none sold.
    let r = app.admin_get("/api/admin/emissions/3").await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["channel"], "paper");
    assert_eq!(r.json["code"], "PAP");
    assert_eq!(r.json["totals"]["printed"], 50);
    assert_eq!(r.json["totals"]["sold"], 0);
    assert_eq!(r.json["blocks"][0]["root"], paper_root.as_str());
    let list = app.admin_get("/api/admin/emissions").await;
    assert_eq!(list.status, 200);
    let ids: Vec<u64> =
        list.json["emissions"].as_array().unwrap().iter().map(|e| e["emission"].as_u64().unwrap()).collect();
    assert_eq!(ids, vec![1, 2, 3]);
    assert_eq!(list.json["emissions"][2], r.json);
    assert_error(&app.admin_get("/api/admin/emissions/9").await, 404, "not_found");

    // More blocks for the paper emission: block 2, published.
    let r = app.admin_post("/api/admin/emissions/3/blocks", json!({"blocks": 1})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!((r.json["emission"].as_u64(), r.json["channel"].as_str()), (Some(3), Some("paper")));
    assert_eq!(r.json["blocks"][0]["block"], 2);
    let public = app.get("/api/emissions", None).await;
    assert_eq!(published_blocks(&public.json, 3)[&2]["root"], r.json["blocks"][0]["root"]);

    // Requests the desk refuses (400, 404), creating nothing.
    let bad = [
        json!({"table": OTHER_TABLE, "blocks": 0, "channel": "online"}),
        json!({"table": OTHER_TABLE, "blocks": 21, "channel": "online"}),
        json!({"table": OTHER_TABLE, "blocks": 1, "channel": "retail"}),
        json!({"table": "not = [a table", "blocks": 1, "channel": "online"}),
        json!({"table": 42, "blocks": 1, "channel": "online"}),
        json!({"table": OTHER_TABLE, "blocks": 1}),
    ];
    for body in bad {
        assert_error(&app.admin_post("/api/admin/emissions", body).await, 400, "bad_request");
    }
    assert_error(&app.admin_post("/api/admin/emissions/1/blocks", json!({"blocks": 0})).await, 400, "bad_request");
    assert_error(&app.admin_post("/api/admin/emissions/1/blocks", json!({"blocks": 21})).await, 400, "bad_request");
    assert_error(&app.admin_post("/api/admin/emissions/9/blocks", json!({"blocks": 1})).await, 404, "not_found");
    // A path that names no number names nothing: 404, in the error shape.
    for path in
        ["/api/admin/emissions/abc", "/api/admin/emissions/99999999999", "/api/admin/emissions/3/blocks/x/print.csv"]
    {
        assert_error(&app.admin_get(path).await, 404, "not_found");
    }
    assert_error(&app.admin_post("/api/admin/emissions/abc/blocks", json!({"blocks": 1})).await, 404, "not_found");
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM emissions").await, 3);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM blocks").await, 2 + 2 + 2);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_calls_at_once_number_emissions_and_blocks_in_turn_while_tickets_sell() {
    let Some(app) = spawn_app().await else { return };
    let app = std::sync::Arc::new(app);
    let token = app.register().await;
    let calls = [
        ("/api/admin/emissions", json!({"table": OTHER_TABLE, "blocks": 1, "channel": "online"})),
        ("/api/admin/emissions", json!({"table": OTHER_TABLE, "blocks": 2, "channel": "online"})),
        ("/api/admin/emissions", json!({"table": paper_table_json(), "blocks": 1, "channel": "paper"})),
        ("/api/admin/emissions/1/blocks", json!({"blocks": 1})),
        ("/api/admin/emissions/1/blocks", json!({"blocks": 2})),
    ];
    let admin: Vec<_> = calls
        .into_iter()
        .map(|(path, body)| {
            let app = app.clone();
            tokio::spawn(async move { (path, app.admin_post(path, body).await) })
        })
        .collect();
    let sales: Vec<_> = (0..10)
        .map(|_| {
            let (app, token) = (app.clone(), token.clone());
            tokio::spawn(async move { app.post("/api/tickets", Some(&token), json!({})).await })
        })
        .collect();
    let mut created = Vec::new();
    let mut added = Vec::new();
    for task in admin {
        let (path, r) = task.await.unwrap();
        assert_eq!(r.status, 201, "{path}: {}", r.json);
        let blocks: Vec<(u64, String)> = r.json["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| (b["block"].as_u64().unwrap(), b["root"].as_str().unwrap().to_string()))
            .collect();
        if path.ends_with("/blocks") {
            assert_eq!(r.json["emission"], 1);
            added.extend(blocks);
        } else {
            assert_eq!(blocks.iter().map(|b| b.0).collect::<Vec<_>>(), (1..=blocks.len() as u64).collect::<Vec<_>>());
            created.push((r.json["emission"].as_u64().unwrap(), blocks));
        }
    }
    for task in sales {
        let r = task.await.unwrap();
        assert_eq!(r.status, 201, "{}", r.json);
    }
    created.sort();
    assert_eq!(created.iter().map(|c| c.0).collect::<Vec<_>>(), vec![2, 3, 4], "one number each");
    added.sort();
    assert_eq!(added.iter().map(|b| b.0).collect::<Vec<_>>(), vec![3, 4, 5], "blocks after the first two, in turn");
    // Every root answered is the one published.
    let public = app.get("/api/emissions", None).await.json;
    let first = published_blocks(&public, 1);
    assert_eq!(first.keys().copied().collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
    for (n, root) in &added {
        assert_eq!(first[n]["root"], root.as_str());
    }
    for (e, blocks) in &created {
        let published = published_blocks(&public, *e);
        assert_eq!(published.len(), blocks.len());
        for (n, root) in blocks {
            assert_eq!(published[n]["root"], root.as_str());
        }
    }
    assert_eq!(app.get("/api/tickets", Some(&token)).await.json["tickets"].as_array().unwrap().len(), 10);
    // Each call published its blocks with one entry of the audit chain, which holds.
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM audit_log WHERE kind = 'blocks_published'").await, 1 + 5);
    let audit = app.sealed_audit_check().await;
    assert_eq!((audit.unsealed, audit.first_broken), (0, None), "{audit:?}");
    shutdown_shared(app).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn art_3_1_and_3_2_3_3_the_desk_refuses_a_table_whose_wins_pay_nothing_or_less_naming_row_and_article() {
    let Some(app) = spawn_app().await else { return };
    let with_row_two = |prizes: &str| {
        format!(
            "game = \"As Capone\"\ncode = \"BAD\"\nprice_cents = 300\nblock_size = 50\n\n[[schedule]]\ntickets = 30\n\
             prizes_cents = {{ 5 = 300, 6 = 600, 7 = 5000, 8 = 50000 }}\n\n[[schedule]]\ntickets = 20\n\
             prizes_cents = {prizes}\n"
        )
    };
    let cases = [
        ("{ 5 = 300, 6 = 0, 7 = 5000, 8 = 50000 }", "art. 3.1"),
        ("{ 5 = 300, 6 = 600, 7 = 5000 }", "art. 3.1"),
        ("{ 5 = 300, 6 = 600, 7 = 500, 8 = 50000 }", "art. 3.2.3.3"),
    ];
    for (prizes, article) in cases {
        let r = app
            .admin_post(
                "/api/admin/emissions",
                json!({"table": with_row_two(prizes), "blocks": 1, "channel": "online"}),
            )
            .await;
        assert_error(&r, 400, "bad_request");
        let m = r.json["message"].as_str().unwrap();
        assert!(m.contains("schedule row 2") && m.contains(article), "{prizes}: {m}");
    }
    // The same rules for a JSON table.
    let mut table = paper_table_json();
    table["schedule"][0]["prizes_cents"]["5"] = json!(0);
    let r = app.admin_post("/api/admin/emissions", json!({"table": table, "blocks": 1, "channel": "paper"})).await;
    assert_error(&r, 400, "bad_request");
    let m = r.json["message"].as_str().unwrap();
    assert!(m.contains("schedule row 1") && m.contains("art. 3.1"), "{m}");
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM emissions").await, 1);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn art_2_without_the_allowance_a_server_refuses_tables_off_300_cents_and_300000_tickets() {
    let Some(app) = spawn_app().await else { return };
    let db = app.stop().await;
    // Its own start-up table of blocks of 100 is refused at start...
    let db = match try_spawn_app_on(db, ServerSeeds::InsecureFixedForTests(SEED), TABLE, |c| {
        c.allow_non_regulation_table = false
    })
    .await
    {
        Ok(_) => panic!("a server without the allowance started with blocks of 100 tickets"),
        Err((db, e)) => {
            let m = format!("{e:#}");
            assert!(m.contains("art. 2") && m.contains("allow_non_regulation_table"), "{m}");
            db
        }
    };
    // ...a regulation one is taken (the database keeps its first emission),
    // and the desk refuses the block size and the price art. 2 does not set.
    let example = math::PrizeTable::example();
    assert!(example.is_regulation());
    let app = match try_spawn_app_on(db, ServerSeeds::InsecureFixedForTests(SEED), &example.to_toml(), |c| {
        c.allow_non_regulation_table = false
    })
    .await
    {
        Ok(app) => app,
        Err((_, e)) => panic!("a regulation table is taken: {e:#}"),
    };
    let r = app.admin_post("/api/admin/emissions", json!({"table": TABLE, "blocks": 1, "channel": "online"})).await;
    assert_error(&r, 400, "bad_request");
    let m = r.json["message"].as_str().unwrap();
    assert!(m.contains("art. 2") && m.contains("100 tickets"), "{m}");
    let cheap = example.to_toml().replace("price_cents = 300", "price_cents = 200");
    assert_ne!(cheap, example.to_toml());
    let r = app.admin_post("/api/admin/emissions", json!({"table": cheap, "blocks": 1, "channel": "paper"})).await;
    assert_error(&r, 400, "bad_request");
    let m = r.json["message"].as_str().unwrap();
    assert!(m.contains("art. 2") && m.contains("200 cents"), "{m}");
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM emissions").await, 1);
    // The tickets of the first emission are still sold.
    let token = app.register().await;
    assert!(app.buy(&token).await["serial"].as_str().unwrap().starts_with("TST-001-00001-"));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_a_sold_out_emission_answers_503_and_one_admin_call_makes_tickets_sellable_again() {
    let Some(app) = spawn_app_with(|c| {
        c.initial_blocks = 1;
        c.start_balance_cents = 300 * 300;
    })
    .await
    else {
        return;
    };
    // A paper emission beside it: its tickets are never sold online.
    let r = app
        .admin_post("/api/admin/emissions", json!({"table": paper_table_json(), "blocks": 1, "channel": "paper"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let token = app.register().await;
    for i in 0..100 {
        let t = app.buy(&token).await;
        let s = t["serial"].as_str().unwrap();
        assert!(s.starts_with("TST-001-00001-"), "{s} at sale {i}");
        assert_eq!(t["channel"], "online");
    }
    let sold_out = |r: &Resp| {
        assert_error(r, 503, "sold_out");
        let m = r.json["message"].as_str().unwrap();
        assert!(m.contains("operator") && m.contains("blocks"), "the message says what to do: {m}");
    };
    sold_out(&app.post("/api/tickets", Some(&token), json!({})).await);
    assert_eq!(app.balance(&token).await, 300 * 300 - 300 * 100, "a refused sale debits nothing");
    // Blocks of the paper emission do not help the online sale.
    let r = app.admin_post("/api/admin/emissions/2/blocks", json!({"blocks": 1})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    sold_out(&app.post("/api/tickets", Some(&token), json!({})).await);

    // One call: a block more for the online emission.
    let r = app.admin_post("/api/admin/emissions/1/blocks", json!({"blocks": 1})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["emission"], 1);
    assert_eq!(r.json["blocks"], json!([{"block": 2, "root": r.json["blocks"][0]["root"]}]));
    let root = r.json["blocks"][0]["root"].clone();
    assert_eq!(published_blocks(&app.get("/api/emissions", None).await.json, 1)[&2]["root"], root);
    for _ in 0..100 {
        let t = app.buy(&token).await;
        assert!(t["serial"].as_str().unwrap().starts_with("TST-001-00002-"), "{t}");
    }
    sold_out(&app.post("/api/tickets", Some(&token), json!({})).await);

    // Or one call: a new online emission.
    let r =
        app.admin_post("/api/admin/emissions", json!({"table": OTHER_TABLE, "blocks": 1, "channel": "online"})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["emission"], 3);
    let t = app.buy(&token).await;
    assert!(t["serial"].as_str().unwrap().starts_with("ASC-003-00001-"), "{t}");
    // Not one paper ticket was sold.
    assert_eq!(
        app.query_i64(
            "SELECT COUNT(*) FROM tickets t JOIN blocks b ON b.id = t.block_id WHERE b.emission_id = 2 AND t.status <> 'printed'"
        )
        .await,
        0
    );
    let list = app.get("/api/tickets", Some(&token)).await;
    assert_eq!(list.json["tickets"].as_array().unwrap().len(), 201);
    assert!(list.json["tickets"].as_array().unwrap().iter().all(|t| !t["serial"].as_str().unwrap().starts_with("PAP")));
    assert_eq!(app.balance(&token).await, 300 * 300 - 300 * 201);
    app.shutdown().await;
}

/// The operator's figures of one block or of the totals, as the report shows them.
fn figures_of(v: &Value) -> Figures {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("figures in {v}: {e}"))
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// Plays a found plan over HTTP to the end.
async fn play_plan(app: &TestApp, token: &str, ticket: &Value, plan: &Plan) {
    let answers = app.play(token, ticket["id"].as_str().unwrap(), &plan.actions).await;
    assert_eq!(answers.last().unwrap().json["ticket"]["phase"], "finished");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_report_figures_equal_sums_recomputed_from_the_stored_tickets() {
    let Some(app) = spawn_app_with(|c| c.start_balance_cents = 300 * 150).await else { return };
    let players = [app.register().await, app.register().await];
    let won = |p: &Plan| p.game.result().unwrap().prize_cents > 0;
    let lost = |p: &Plan| p.game.result().unwrap().prize_cents == 0;
    // Block 1: wins and losses played to the end, tickets never played, one half played.
    for token in &players {
        for want in [&won as &dyn Fn(&Plan) -> bool, &lost as &dyn Fn(&Plan) -> bool, &won] {
            let (t, plan) = find_ticket(&app, token, 20, want).await;
            play_plan(&app, token, &t, &plan).await;
        }
        let t = app.buy(token).await;
        let r = app
            .post(
                &format!("/api/tickets/{}/actions", t["id"].as_str().unwrap()),
                Some(token),
                action_body(0, Action::play(Rank::Seven)),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.json);
        app.buy(token).await;
    }
    // The rest of block 1 to the second player, one in five played out.
    let count = |list: &Value| list["tickets"].as_array().unwrap().len();
    let mut sold = 0;
    for token in &players {
        sold += count(&app.get("/api/tickets", Some(token)).await.json);
    }
    assert!(sold < 100, "{sold}");
    for i in sold..100 {
        let t = app.buy(&players[1]).await;
        assert!(t["serial"].as_str().unwrap().starts_with("TST-001-00001-"));
        if i % 5 == 0 {
            play_out(&app, &players[1], &t).await;
        }
    }
    // Block 2: a win, a loss, one in play.
    let (t, plan) = find_ticket(&app, &players[0], 20, won).await;
    assert!(t["serial"].as_str().unwrap().starts_with("TST-001-00002-"));
    play_plan(&app, &players[0], &t, &plan).await;
    let (t, plan) = find_ticket(&app, &players[1], 20, lost).await;
    play_plan(&app, &players[1], &t, &plan).await;
    app.buy(&players[0]).await;

    // What the players' own tickets say, per block.
    let mut expected: BTreeMap<u32, Figures> = BTreeMap::new();
    for b in [1, 2] {
        expected.insert(b, Figures { printed: 100, ..Figures::default() });
    }
    for token in &players {
        for t in app.get("/api/tickets", Some(token)).await.json["tickets"].as_array().unwrap() {
            let serial = emission::Serial::parse(t["serial"].as_str().unwrap()).unwrap();
            assert_eq!(serial.emission(), 1);
            let f = expected.get_mut(&serial.block()).unwrap();
            f.sold += 1;
            f.sales_cents += t["price_cents"].as_i64().unwrap();
            if t["phase"] == "finished" {
                let prize = t["result"]["prize_cents"].as_i64().unwrap();
                f.finished += 1;
                f.prizes_won_cents += prize;
                // Online: the prize was credited to the wallet when the game finished.
                f.prizes_paid_cents += prize;
                if prize > 0 {
                    f.won += 1;
                    assert_eq!(t["status"], "won");
                } else {
                    f.lost += 1;
                    assert_eq!(t["status"], "lost");
                }
            } else {
                f.in_play += 1;
                assert_eq!(t["status"], "in_play");
            }
        }
    }
    for f in expected.values() {
        assert!(f.won > 0 && f.lost > 0 && f.in_play > 0, "the test covers every kind of ticket: {f:?}");
    }
    let mut totals = Figures::default();
    expected.values().for_each(|f| totals.add(f));

    // What the database holds, counted directly.
    for (&b, f) in &expected {
        let in_block = format!("JOIN blocks b ON b.id = t.block_id WHERE b.emission_id = 1 AND b.number = {b}");
        let games = format!("FROM ticket_games g JOIN tickets t ON t.id = g.ticket_id {in_block}");
        let ledger = |reason: &str, kind: &str| {
            format!(
                "SELECT CAST(COALESCE(SUM(l.amount_cents), 0) AS BIGINT) FROM ledger_entries l
                 JOIN movements m ON m.id = l.movement_id JOIN accounts a ON a.id = l.account_id
                 JOIN tickets t ON t.id = m.ticket_id {in_block} AND m.reason = '{reason}' AND a.kind = '{kind}'"
            )
        };
        let db = Figures {
            printed: app.query_i64(&format!("SELECT COUNT(*) FROM tickets t {in_block}")).await,
            sold: app.query_i64(&format!("SELECT COUNT(*) FROM tickets t {in_block} AND t.status = 'sold'")).await,
            in_play: app.query_i64(&format!("SELECT COUNT(*) {games} AND g.phase <> 'finished'")).await,
            finished: app.query_i64(&format!("SELECT COUNT(*) {games} AND g.phase = 'finished'")).await,
            won: app
                .query_i64(&format!("SELECT COUNT(*) {games} AND g.phase = 'finished' AND g.prize_cents > 0"))
                .await,
            lost: app
                .query_i64(&format!("SELECT COUNT(*) {games} AND g.phase = 'finished' AND g.prize_cents = 0"))
                .await,
            sales_cents: app.query_i64(&ledger("ticket_sale", "house")).await,
            prizes_won_cents: app
                .query_i64(&format!(
                    "SELECT CAST(COALESCE(SUM(g.prize_cents), 0) AS BIGINT) {games} AND g.phase = 'finished'"
                ))
                .await,
            prizes_paid_cents: app.query_i64(&ledger("prize", "player")).await,
            prizes_owed_cents: 0,
        };
        assert_eq!(&db, f, "block {b}: the database and the players' tickets agree");
    }

    // The operator's report.
    let r = app.admin_get("/api/admin/emissions/1").await;
    assert_eq!(r.status, 200, "{}", r.json);
    let report = &r.json;
    assert_eq!(report["emission"], 1);
    assert_eq!(report["channel"], "online");
    assert_eq!(report["price_cents"], 300);
    assert_eq!(report["block_size"], 100);
    assert_eq!(figures_of(&report["totals"]), totals, "{report}");
    let blocks = report["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    let published = published_blocks(&app.get("/api/emissions", None).await.json, 1);
    for b in blocks {
        let n = b["block"].as_u64().unwrap();
        assert_eq!(figures_of(b), expected[&(n as u32)], "block {n}: {b}");
        assert_eq!(b["root"], published[&n]["root"]);
        assert_eq!(b["published_ms"], published[&n]["published_ms"]);
    }
    // The return to player so far: prizes won / (300 x finished), exact and reduced.
    let (p, q) = (totals.prizes_won_cents, 300 * totals.finished);
    let g = gcd(p, q);
    assert_eq!(report["rtp"]["so_far"], format!("{}/{}", p / g, q / g), "{report}");
    let decimal: f64 = report["rtp"]["so_far_decimal"].as_str().unwrap().parse().unwrap();
    assert!((decimal - p as f64 / q as f64).abs() < 1e-6, "{report}");
    // ...beside the table's exact expectation (math crate).
    let table = math::PrizeTable::parse_toml(TABLE).unwrap();
    let rtp = math::Payout::compute(&table, &math::Odds::exact()).rtp;
    assert_eq!(report["rtp"]["expected"], math::fraction::to_string(&rtp));
    // The list shows the same report.
    let list = app.admin_get("/api/admin/emissions").await;
    assert_eq!(&list.json["emissions"][0], report);
    // The money agrees: play money - sales + prizes.
    let mut balances = 0;
    for token in &players {
        balances += app.balance(token).await;
    }
    assert_eq!(balances, 2 * 300 * 150 - totals.sales_cents + totals.prizes_paid_cents);
    app.shutdown().await;
}

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
    std::fs::write(&other, format!("{}\n", hex::encode([0x42; 32]))).unwrap();
    let db = match try_spawn_app_on(db, seeds(), TABLE, |c| c.key_file = Some(other.clone())).await {
        Ok(_) => panic!("a server with another key started"),
        Err((db, e)) => {
            let m = format!("{e:#}");
            assert!(m.contains("server key is not the one"), "{m}");
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

/// Every node of a PostgreSQL plan (`EXPLAIN (FORMAT JSON)`'s "Plan"),
/// with the node types above it.
fn plan_nodes<'a>(node: &'a Value, above: &mut Vec<String>, out: &mut Vec<(&'a Value, Vec<String>)>) {
    out.push((node, above.clone()));
    above.push(node["Node Type"].as_str().unwrap_or("?").to_string());
    for child in node["Plans"].as_array().into_iter().flatten() {
        plan_nodes(child, above, out);
    }
    above.pop();
}

/// `EXPLAIN (options) sql` on PostgreSQL, in a transaction rolled back (an
/// `ANALYZE` runs the statement: its locks go with the rollback); the plan's
/// JSON.
async fn pg_explain(app: &TestApp, options: &str, sql: &str) -> Value {
    use sqlx::{Connection, Row};
    let mut conn = sqlx::PgConnection::connect(&app.db_url).await.unwrap();
    let mut tx = conn.begin().await.unwrap();
    let explain = format!("EXPLAIN ({options}, FORMAT JSON) {sql}");
    let row = sqlx::query(sqlx::AssertSqlSafe(explain)).fetch_one(&mut *tx).await.unwrap();
    // The column is of type json, whose wire format is its text.
    let text: String = row.try_get_unchecked(0).unwrap();
    tx.rollback().await.unwrap();
    conn.close().await.unwrap();
    serde_json::from_str::<Value>(&text).unwrap()[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purchase_right_after_a_full_size_emission_reads_one_ticket_on_a_database_without_statistics() {
    // A new deployment: the planner has no statistics of the tickets table
    // (nobody ran ANALYZE; autovacuum, off here for the table, would do it
    // only later, or never where it is off).
    let Some(app) = spawn_app_with(|c| {
        c.initial_blocks = 1;
        c.start_balance_cents = 300 * 110;
    })
    .await
    else {
        return;
    };
    if app.backend == Backend::Postgres {
        app.exec_sql("ALTER TABLE tickets SET (autovacuum_enabled = false)").await.unwrap();
    }
    // The start-up block of 100 sold out, then a regulation block of
    // 300 000 tickets (art. 2) emitted: the next purchases are its first.
    let token = app.register().await;
    for _ in 0..100 {
        assert!(app.buy(&token).await["serial"].as_str().unwrap().starts_with("TST-001-00001-"));
    }
    let regulation = math::PrizeTable::example();
    assert!(regulation.is_regulation() && regulation.block_size == 300_000);
    let r = app
        .admin_post("/api/admin/emissions", json!({"table": regulation.to_toml(), "blocks": 1, "channel": "online"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["emission"], 2);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM tickets WHERE status = 'unsold'").await, 300_000);

    match app.backend {
        Backend::Postgres => {
            // No statistics: none gathered, and the table never vacuumed nor analyzed.
            assert_eq!(app.query_i64("SELECT COUNT(*) FROM pg_stats WHERE tablename = 'tickets'").await, 0);
            assert_eq!(
                app.query_i64("SELECT CAST(reltuples AS BIGINT) FROM pg_class WHERE relname = 'tickets'").await,
                -1
            );
            // The plan of the server's own query: the tickets come from an
            // index scan under the LIMIT, in sale order, never from a sort
            // of the block.
            let sql = server::NEXT_FOR_SALE_POSTGRES;
            let plan = pg_explain(&app, "COSTS OFF", sql).await;
            let mut nodes = Vec::new();
            plan_nodes(&plan["Plan"], &mut Vec::new(), &mut nodes);
            let scans: Vec<_> = nodes.iter().filter(|(n, _)| n["Relation Name"] == "tickets").collect();
            assert_eq!(scans.len(), 1, "one scan of tickets: {plan:#}");
            let (scan, above) = scans[0];
            assert_eq!(scan["Node Type"], "Index Scan", "{plan:#}");
            assert_eq!(scan["Index Name"], "tickets_unsold", "{plan:#}");
            assert!(above.iter().any(|t| t == "Limit"), "the scan is under a LIMIT: {plan:#}");
            assert!(!above.iter().any(|t| t.contains("Sort")), "nothing sorts the tickets: {plan:#}");
            // Run: one ticket read, a few pages, nothing written to disk
            // (the sort of the whole block read 6 000 pages and spilled).
            let run = pg_explain(&app, "ANALYZE, BUFFERS, COSTS OFF, TIMING OFF", sql).await;
            let mut nodes = Vec::new();
            plan_nodes(&run["Plan"], &mut Vec::new(), &mut nodes);
            let (scan, _) = nodes.iter().find(|(n, _)| n["Relation Name"] == "tickets").unwrap();
            assert_eq!(scan["Actual Rows"], 1, "{run:#}");
            let root = &run["Plan"];
            let pages = root["Shared Hit Blocks"].as_i64().unwrap() + root["Shared Read Blocks"].as_i64().unwrap();
            assert!(pages < 100, "{pages} pages read for one ticket: {run:#}");
            for (n, _) in &nodes {
                assert_eq!(n["Temp Written Blocks"], 0, "{run:#}");
            }
        }
        Backend::Sqlite => {
            assert_eq!(app.query_i64("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sqlite_stat%'").await, 0);
            let plan = app.dump(&format!("EXPLAIN QUERY PLAN {}", server::NEXT_FOR_SALE_SQLITE)).await;
            assert!(plan.iter().any(|l| l.contains("tickets_unsold")), "{plan:#?}");
            assert!(!plan.iter().any(|l| l.contains("TEMP B-TREE")), "nothing sorts the tickets: {plan:#?}");
        }
    }

    // The purchases take the new block's tickets in order, from its first.
    let first = app
        .query_i64("SELECT MIN(t.position) FROM tickets t JOIN blocks b ON b.id = t.block_id WHERE b.emission_id = 2")
        .await;
    assert_eq!(first, 1);
    for position in first..first + 3 {
        let t = app.buy(&token).await;
        let serial = t["serial"].as_str().unwrap();
        assert!(serial.starts_with("ASC-002-00001-"), "{t}");
        let sql = format!("SELECT t.position FROM tickets t WHERE t.serial = '{serial}'");
        assert_eq!(app.query_i64(&sql).await, position, "{serial}");
    }
    app.shutdown().await;
}

/// Money is signed 64-bit cents in the ledger and in the stored table's
/// TOML: a JSON table whose prize, price or sum over a block passes
/// `i64::MAX` (while its sums fit the table's own unsigned 64 bits) is
/// refused, 400, creating nothing; the desk's reports still answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_a_table_whose_money_passes_signed_64_bits_is_refused_and_the_reports_still_answer() {
    let Some(app) = spawn_app().await else { return };
    let one_ticket = |prizes: Value| {
        json!({"game": "As Capone", "code": "BIG", "price_cents": 1, "block_size": 1,
               "schedule": [{"tickets": 1, "prizes_cents": prizes}]})
    };
    let mut dear = paper_table_json();
    dear["price_cents"] = json!(i64::MAX / 40);
    let mut rich = paper_table_json();
    rich["schedule"][1]["prizes_cents"]["8"] = json!(i64::MAX / 40);
    let cases = [
        (one_ticket(json!({"5": 1, "6": 1, "7": 1, "8": 1u64 << 63})), "schedule row 1"),
        (dear, "price_cents"),
        (rich, "schedule row 2"),
    ];
    for (table, names) in cases {
        let r = app.admin_post("/api/admin/emissions", json!({"table": table, "blocks": 1, "channel": "paper"})).await;
        assert_error(&r, 400, "bad_request");
        let m = r.json["message"].as_str().unwrap();
        assert!(m.contains(names) && m.contains("the ledger"), "{m}");
    }
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM emissions").await, 1);
    let reports = app.admin_get("/api/admin/emissions").await;
    assert_eq!(reports.status, 200, "{}", reports.json);
    assert_eq!(app.get("/api/emissions", None).await.status, 200);
    // The largest amounts that fit are taken.
    let r = app
        .admin_post(
            "/api/admin/emissions",
            json!({"table": one_ticket(json!({"5": 1, "6": 1, "7": 1, "8": i64::MAX - 3})), "blocks": 1, "channel": "paper"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(app.admin_get("/api/admin/emissions").await.status, 200);
    app.shutdown().await;
}
