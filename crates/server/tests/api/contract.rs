//! The document and the server agree where an outside audit found they did
//! not (two findings of the second outside audit): every operationId names one operation,
//! every body the server refuses is one the document refuses too (and
//! the other way), and what the server says of a closed sale is true.

use crate::helpers::*;
use serde_json::{Value, json};

/// The server's OpenAPI document.
async fn document(app: &TestApp) -> Value {
    let r = app.get("/api/openapi.json", None).await;
    assert_eq!(r.status, 200);
    r.json
}

/// Every operation of the document: (method, path, operation).
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            out.push((method.clone(), path.clone(), operation.clone()));
        }
    }
    out
}

/// A property of a schema of `components.schemas`.
fn property<'a>(doc: &'a Value, schema: &str, field: &str) -> &'a Value {
    &doc["components"]["schemas"][schema]["properties"][field]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_id_names_one_operation() {
    let Some(app) = spawn_app().await else { return };
    let doc = document(&app).await;
    let mut seen = std::collections::BTreeMap::new();
    for (method, path, operation) in operations(&doc) {
        let id = operation["operationId"].as_str().unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        if let Some(first) = seen.insert(id.to_string(), format!("{method} {path}")) {
            panic!("operationId {id:?} names both {first} and {method} {path}");
        }
    }
    assert!(seen.len() > 40, "{seen:?}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claims_serial_is_documented_as_every_other_serial() {
    let Some(app) = spawn_app().await else { return };
    let doc = document(&app).await;
    let retail = property(&doc, "SerialBody", "serial")["pattern"].as_str().expect("a shop's serial has a pattern");
    let claim = property(&doc, "ClaimPayBody", "serial");
    assert_eq!(claim["pattern"].as_str(), Some(retail), "{claim}");
    // What the pattern lets through with wrong check digits, the server refuses as documented (400).
    let r =
        app.admin_post("/api/admin/claims/pay", json!({"serial": "ASC-001-00001-000001-00", "reference": "R-1"})).await;
    assert_error(&r, 400, "bad_request");
    app.shutdown().await;
}

/// A password of `n` characters, two bytes each (the document's `maxLength`
/// counts characters).
fn password(n: usize) -> String {
    "é".repeat(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_longer_than_the_document_allows_is_refused_400_wherever_it_is_given() {
    let Some(app) = spawn_app().await else { return };
    let doc = document(&app).await;
    for (schema, field) in [
        ("PlayerWithLogin", "password"),
        ("CredentialsBody", "password"),
        ("CredentialsBody", "current_password"),
        ("LoginBody", "password"),
        ("RecoveryBody", "password"),
        ("RecoveryCodeBody", "password"),
        ("CloseAccountBody", "password"),
    ] {
        assert_eq!(property(&doc, schema, field)["maxLength"], 128, "{schema}.{field}");
    }
    // 128 characters (256 bytes) are a password.
    let (login, long) = ("contract-login", password(128));
    let r = app.post("/api/players", None, json!({"login": login, "password": long})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let holder = r.json["token"].as_str().unwrap().to_string();
    let r = app.post("/api/sessions", None, json!({"login": login, "password": long})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    // 129 are refused as the document refuses them: 400, before any password is checked.
    let too_long = password(129);
    let r = app.post("/api/sessions", None, json!({"login": login, "password": too_long})).await;
    assert_error(&r, 400, "bad_request");
    let r = app.post("/api/me/recovery-code", Some(&holder), json!({"password": too_long})).await;
    assert_error(&r, 400, "bad_request");
    let creds = json!({"login": login, "password": "a new password", "current_password": too_long});
    let r = app.send(app.client.put(format!("{}/api/me/credentials", app.url)).bearer_auth(&holder).json(&creds)).await;
    assert_error(&r, 400, "bad_request");
    let r = app.post("/api/me/close", Some(&holder), json!({"password": too_long})).await;
    assert_error(&r, 400, "bad_request");
    // An account without a password is not closed by a body the document refuses.
    let anonymous = app.register().await;
    let r = app.post("/api/me/close", Some(&anonymous), json!({"password": password(300)})).await;
    assert_error(&r, 400, "bad_request");
    assert!(r.json["message"].as_str().unwrap().contains("at most 128 characters, not 300"), "{}", r.json);
    assert_eq!(app.get("/api/me", Some(&anonymous)).await.status, 200, "the account is still open");
    assert_eq!(app.get("/api/me", Some(&holder)).await.status, 200, "the account is still open");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_players_null_login_or_password_is_refused_as_the_document_refuses_it() {
    let Some(app) = spawn_app().await else { return };
    let doc = document(&app).await;
    let anonymous = &doc["components"]["schemas"]["AnonymousPlayer"];
    assert_eq!(anonymous["additionalProperties"], false, "{anonymous}");
    assert!(anonymous["properties"].get("password").is_none(), "{anonymous}");
    assert!(property(&doc, "PlayerWithLogin", "password")["type"] == "string", "no null");
    for body in [
        json!({"password": null}),
        json!({"login": null}),
        json!({"name": "n", "login": null, "password": null}),
        json!({"login": "contract-null", "password": null}),
    ] {
        let r = app.post("/api/players", None, body.clone()).await;
        assert_error(&r, 400, "bad_request");
        assert!(r.json["message"].as_str().unwrap().contains("null"), "{body}: {}", r.json);
    }
    // What the document allows is taken.
    for body in [json!({}), json!({"name": "n"}), json!({"name": null})] {
        assert_eq!(app.post("/api/players", None, body.clone()).await.status, 201, "{body}");
    }
    app.shutdown().await;
}

/// `spend_per_week_cents: null` (no limit on stakes) as the served
/// document and the server see it, with and without `stake_limit_required`.
async fn null_stake_limit(required: bool) -> (Value, u16) {
    let app = spawn_app_with(|c| c.stake_limit_required = required).await.expect("SQLite is always there");
    let doc = document(&app).await;
    let player = app.register().await;
    let body = json!({"tickets_per_day": null, "spend_per_week_cents": null});
    let r = app.send(app.client.put(format!("{}/api/me/limits", app.url)).bearer_auth(&player).json(&body)).await;
    if required {
        assert_error(&r, 400, "bad_request");
        assert_eq!(r.json["params"]["reason"], "stake_limit_required", "{}", r.json);
    }
    app.shutdown().await;
    (doc["components"]["schemas"]["LimitsBody"].clone(), r.status.as_u16())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_document_allows_no_null_stake_limit_where_the_server_requires_one() {
    let (limits, status) = null_stake_limit(true).await;
    assert_eq!(status, 400);
    assert_eq!(limits["properties"]["spend_per_week_cents"]["type"], "integer", "{limits}");
    assert_eq!(limits["required"], json!(["spend_per_week_cents"]), "{limits}");
    let description = limits["properties"]["spend_per_week_cents"]["description"].as_str().unwrap_or_default();
    assert!(description.contains("stake_limit_required"), "{limits}");
    let (limits, status) = null_stake_limit(false).await;
    assert_eq!(status, 200);
    assert_eq!(limits["properties"]["spend_per_week_cents"]["type"], json!(["integer", "null"]), "{limits}");
    assert!(limits.get("required").is_none(), "{limits}");
}

both! {
/// The certification report answers within the request time limit, as the
/// server promises (and nginx waits for, deploy/nginx): a report that does
/// not fit is stopped and answered 503 `timeout` saying what to do, and
/// the turn is given back at once, not when the run would have ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_that_does_not_fit_in_the_request_time_limit_is_stopped_and_answered_503() {
    let limit = std::time::Duration::from_millis(400);
    let Some(app) = spawn_app_with(|c| c.request_timeout_ms = limit.as_millis() as u64).await else { return };
    let asked = std::time::Instant::now();
    let r = app.admin_get("/api/admin/emissions/1/certification?games=1000000").await;
    let answered = asked.elapsed();
    assert_error(&r, 503, "timeout");
    let message = r.json["message"].as_str().unwrap();
    assert!(message.contains("request time limit of 400 ms"), "{message}");
    assert!(message.contains("ask for fewer games") && message.contains("as-capone report"), "{message}");
    assert!(answered < limit + std::time::Duration::from_secs(2), "answered after {answered:?}");
    // The stopped run gives the turn back within a chunk of tickets; a
    // report that fits is then written.
    let stopped = std::time::Instant::now();
    let written = loop {
        let r = app.admin_get("/api/admin/emissions/1/certification?games=100").await;
        if r.status != 503 {
            break r;
        }
        assert_error(&r, 503, "unavailable");
        assert!(stopped.elapsed() < std::time::Duration::from_secs(5), "the stopped run still holds the turn");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(written.status, 200, "{}", String::from_utf8_lossy(&written.bytes));
    app.shutdown().await;
}
}

both! {
/// A closed emission's sale stays closed: no block is added to it (409 in
/// the error shape, nothing written), and a purchase says the sale is
/// closed, not that the operator can add blocks; a new emission sells.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_emission_takes_no_block_and_a_purchase_says_its_sale_is_closed() {
    let Some(app) = spawn_app().await else { return };
    let player = app.register().await;
    app.buy(&player).await;
    let r = app.admin_post("/api/admin/emissions/1/close", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let blocks = "SELECT CAST(COUNT(*) AS BIGINT) FROM blocks WHERE emission_id = 1";
    let before = app.query_i64(blocks).await;
    let r = app.admin_post("/api/admin/emissions/1/blocks", json!({"blocks": 1})).await;
    assert_error(&r, 409, "conflict");
    assert!(r.json["message"].as_str().unwrap().contains("the sale of emission 1 was closed"), "{}", r.json);
    assert_eq!(app.query_i64(blocks).await, before, "no block written");
    let r = app.post("/api/tickets", Some(&player), json!({})).await;
    assert_error(&r, 503, "sold_out");
    let message = r.json["message"].as_str().unwrap();
    assert!(message.contains("the sale of emission 1 was closed on"), "{message}");
    assert!(!message.contains("add blocks"), "{message}");
    // A new online emission is on sale.
    let r = app.admin_post("/api/admin/emissions", json!({"table": TABLE, "blocks": 1, "channel": "online"})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    app.buy(&player).await;
    app.shutdown().await;
}
}

both! {
/// Where any shop pays any winner, a prize above its seller's ceiling may
/// be paid by a shop whose ceiling is higher: the claim stays on the desk's
/// list, paid, with the shop that paid it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_paid_by_another_shop_stays_listed_with_who_paid_it() {
    let Some(app) = spawn_app_with(|c| {
        c.retail_pay_any_shop = true;
        c.shop_payout_ceilings.insert(SHOP_A.to_string(), 500);
    })
    .await
    else {
        return;
    };
    let emission = crate::paper::emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let prize = |p: &Foreseen| p.game.result().unwrap().prize_cents as i64;
    let (big, plan) = crate::paper::pick(&printed, &mut Default::default(), |p| (501..=500_000).contains(&prize(p)));
    crate::paper::sell(&app, SHOP_A_TOKEN, SHOP_A, &big.serial).await;
    let (_, token) = crate::paper::redeem_ok(&app, &big.code, None).await;
    crate::paper::play_plan(&app, &token, &big.serial, &plan).await;
    let claims = app.admin_get("/api/admin/claims").await;
    assert_eq!(claims.json["claims"][0]["status"], "owed", "{}", claims.json);
    assert_eq!(claims.json["claims"][0]["paid_by"], Value::Null, "{}", claims.json);
    let r = app.retail("pay", Some(SHOP_B_TOKEN), &big.serial).await;
    assert_eq!((r.status.as_u16(), r.json["status"].as_str()), (200, Some("paid")), "{}", r.json);
    let claims = app.admin_get("/api/admin/claims").await;
    let list = claims.json["claims"].as_array().unwrap();
    assert_eq!(list.len(), 1, "the claim is still listed: {}", claims.json);
    let c = &list[0];
    assert_eq!((c["serial"].as_str(), c["status"].as_str()), (Some(big.serial.as_str()), Some("paid")), "{c}");
    assert_eq!((c["sold_by"].as_str(), c["paid_by"].as_str()), (Some(SHOP_A), Some(SHOP_B)), "{c}");
    assert_eq!((c["reference"].clone(), c["prize_cents"].as_i64()), (Value::Null, Some(prize(&plan))), "{c}");
    assert!(c["paid_ms"].as_i64().is_some(), "{c}");
    assert_eq!(claims.json["owed_cents"], 0);
    app.shutdown().await;
}
}

both! {
/// The database's check (what `as-capone restore` prints) counts a paper
/// ticket printed and not sold apart from the tickets sold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_check_counts_printed_paper_tickets_apart_from_sold_ones() {
    let Some(app) = spawn_app().await else { return };
    app.buy(&app.register().await).await;
    let emission = crate::paper::emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    for p in &printed[..2] {
        crate::paper::sell(&app, SHOP_A_TOKEN, SHOP_A, &p.serial).await;
    }
    let db = app.stop().await;
    let check = server::backup::check_database(&db.url).await.unwrap();
    assert_eq!((check.tickets_sold, check.tickets_printed), (3, printed.len() as i64 - 2), "{check:?}");
    db.remove().await;
}
}
