//! The operator's desk (docs/contract.md "Operator"): who may call it,
//! the online and paper emissions it creates and numbers, the tables it
//! refuses (regulation art. 2, 3.1 and 3.2.3.3: docs/rules.md) and a sold
//! out emission made sellable again.

use crate::emissions::*;
use crate::helpers::*;
use engine::PrizeSchedule;
use reqwest::Method;
use serde_json::{Value, json};
use server::ServerSeeds;

/// Every endpoint of the operator's desk, with a body it would accept.
fn admin_endpoints() -> Vec<(Method, &'static str, Option<Value>)> {
    vec![
        (Method::POST, "/api/admin/emissions", Some(json!({"table": other_table(), "blocks": 1, "channel": "online"}))),
        (Method::POST, "/api/admin/emissions/1/blocks", Some(json!({"blocks": 1}))),
        (Method::GET, "/api/admin/emissions", None),
        (Method::GET, "/api/admin/emissions/1", None),
        (Method::GET, "/api/admin/emissions/1/blocks/1/print.csv", None),
        (Method::GET, "/api/admin/health", None),
        (Method::POST, "/api/admin/tables/check", Some(json!({"table": other_table()}))),
        (Method::GET, "/api/admin/emissions/1/risk", None),
    ]
}

both! {
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
            // A table's check writes nothing.
            _ if path.ends_with("tables/check") => 200,
            ("POST", _) => 201,
            _ => 200,
        };
        assert_eq!(r.status.as_u16(), want, "{method} {path}: {}", String::from_utf8_lossy(&r.bytes));
    }
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_creates_online_and_paper_emissions_whose_roots_are_published() {
    let Some(app) = spawn_app().await else { return };
    let start_up = app.get("/api/emissions", None).await;
    let other = math::PrizeTable::parse_toml(&other_table()).unwrap();

    // An online emission, the table as TOML text.
    let r =
        app.admin_post("/api/admin/emissions", json!({"table": other_table(), "blocks": 2, "channel": "online"})).await;
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
    // the published root (docs/contract.md Emissions and blocks).
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
    assert_eq!(hex::encode(emission::merkle_root(leaves)), paper_root);
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
        json!({"table": other_table(), "blocks": 0, "channel": "online"}),
        json!({"table": other_table(), "blocks": 21, "channel": "online"}),
        json!({"table": other_table(), "blocks": 1, "channel": "retail"}),
        json!({"table": "not = [a table", "blocks": 1, "channel": "online"}),
        json!({"table": 42, "blocks": 1, "channel": "online"}),
        json!({"table": other_table(), "blocks": 1}),
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
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_calls_at_once_number_emissions_and_blocks_in_turn_while_tickets_sell() {
    let Some(app) = spawn_app().await else { return };
    let app = std::sync::Arc::new(app);
    let token = app.register().await;
    let calls = [
        ("/api/admin/emissions", json!({"table": other_table(), "blocks": 1, "channel": "online"})),
        ("/api/admin/emissions", json!({"table": other_table(), "blocks": 2, "channel": "online"})),
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
}

both! {
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
}

both! {
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
}

both! {
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
        app.admin_post("/api/admin/emissions", json!({"table": other_table(), "blocks": 1, "channel": "online"})).await;
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
}

both! {
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
}
