//! Every error code of docs/contract.md, in its shape, changing nothing (guarantee 7).

use crate::helpers::*;
use serde_json::json;

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarantee_7_every_error_code_has_the_contract_shape_and_changes_nothing() {
    let Some(app) = spawn_app_with(|c| c.start_balance_cents = 500).await else { return };
    let token = app.register().await;
    let other = app.register().await;
    let t = app.buy(&token).await;
    let id = t["id"].as_str().unwrap();
    let actions = format!("/api/tickets/{id}/actions");

    // 401: no token, a bad token, another scheme.
    assert_error(&app.get("/api/me", None).await, 401, "unauthorized");
    assert_error(&app.get("/api/me", Some("nope")).await, 401, "unauthorized");
    let r =
        app.send(app.client.get(format!("{}/api/me", app.url)).header("authorization", format!("Basic {token}"))).await;
    assert_error(&r, 401, "unauthorized");
    assert_error(&app.post("/api/tickets", None, json!({})).await, 401, "unauthorized");
    assert_error(&app.post(&actions, Some("bad"), json!({"seq": 0, "action": "draw"})).await, 401, "unauthorized");

    // 400: malformed JSON, bad fields; 415: not JSON (docs/limits.md "Cross-site requests").
    let r = app
        .send(
            app.client
                .post(format!("{}{actions}", app.url))
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body("{\"seq\": 0, "),
        )
        .await;
    assert_error(&r, 400, "bad_request");
    let r = app
        .send(
            app.client
                .post(format!("{}{actions}", app.url))
                .bearer_auth(&token)
                .header("content-type", "text/plain")
                .body(r#"{"seq":0,"action":"play","card":"A"}"#),
        )
        .await;
    assert_error(&r, 415, "unsupported_media_type");
    let r = app.send(app.client.post(format!("{}{actions}", app.url)).bearer_auth(&token)).await;
    assert_error(&r, 415, "unsupported_media_type");
    let r = app.send(app.client.post(format!("{}{actions}", app.url)).bearer_auth(&token).json(&json!(null))).await;
    assert_error(&r, 400, "bad_request");
    assert_error(
        &app.post(&actions, Some(&token), json!({"seq": 0, "action": "play", "card": "11"})).await,
        400,
        "bad_request",
    );
    assert_error(&app.post(&actions, Some(&token), json!({"seq": 0, "action": "fold"})).await, 400, "bad_request");
    assert_error(&app.post(&actions, Some(&token), json!({"seq": -1, "action": "draw"})).await, 400, "bad_request");
    // A purchase takes no client seed, even a valid one: it comes with the
    // ticket's first action (docs/contract.md Fairness, 2).
    assert_error(
        &app.post("/api/tickets", Some(&token), json!({"client_seed": "valid-seed"})).await,
        400,
        "bad_request",
    );
    assert_error(&app.post("/api/tickets", Some(&token), json!({"seed": "typo"})).await, 400, "bad_request");
    // At seq 0 a client seed must be 1 to 64 printable ASCII characters without spaces.
    for bad in [json!("has space"), json!("x".repeat(65)), json!(""), json!("tab\there"), json!("é"), json!(42)] {
        let body = json!({"seq": 0, "action": "play", "card": "A", "client_seed": bad});
        assert_error(&app.post(&actions, Some(&token), body).await, 400, "bad_request");
    }
    // A client seed with any later action: 400, even before it is that action's turn.
    assert_error(
        &app.post(&actions, Some(&token), json!({"seq": 1, "action": "play", "card": "A", "client_seed": "late"}))
            .await,
        400,
        "bad_request",
    );
    assert_error(&app.post("/api/players", None, json!({"name": "x".repeat(65)})).await, 400, "bad_request");

    // 404: unknown ticket, another player's ticket (the same answer), unknown route.
    for path in ["/api/tickets/NOPE", "/api/tickets/NOPE/record"] {
        assert_error(&app.get(path, Some(&token)).await, 404, "not_found");
    }
    assert_error(&app.get(&format!("/api/tickets/{id}"), Some(&other)).await, 404, "not_found");
    assert_error(&app.get(&format!("/api/tickets/{id}/record"), Some(&other)).await, 404, "not_found");
    assert_error(
        &app.post(&actions, Some(&other), json!({"seq": 0, "action": "play", "card": "A"})).await,
        404,
        "not_found",
    );
    assert_error(
        &app.post("/api/tickets/NOPE/actions", Some(&token), json!({"seq": 0, "action": "draw"})).await,
        404,
        "not_found",
    );
    assert_error(&app.get("/api/nothing-here", None).await, 404, "not_found");
    let others = app.get("/api/tickets", Some(&other)).await;
    assert_eq!(others.json["tickets"], json!([]));

    // 422: the engine refuses; 409: a wrong seq.
    assert_error(&app.post(&actions, Some(&token), json!({"seq": 0, "action": "draw"})).await, 422, "invalid_action");
    assert_error(
        &app.post(&actions, Some(&token), json!({"seq": 1, "action": "play", "card": "A"})).await,
        409,
        "conflict",
    );

    // 413: a body over the limit (16 KiB), whatever its content.
    let big = json!({"seq": 0, "action": "play", "card": "A", "pad": "x".repeat(20_000)});
    assert_error(&app.post(&actions, Some(&token), big.clone()).await, 413, "payload_too_large");
    assert_error(&app.post("/api/players", None, big).await, 413, "payload_too_large");

    // 402: 500 cents buy one ticket, not two.
    assert_error(&app.post("/api/tickets", Some(&token), json!({})).await, 402, "insufficient_funds");

    // 405 keeps the shape too.
    let r = app.send(app.client.delete(format!("{}/api/me", app.url)).bearer_auth(&token)).await;
    assert_error(&r, 405, "method_not_allowed");

    // Nothing changed: balance, ticket, tickets, draws.
    assert_eq!(app.balance(&token).await, 200);
    assert_eq!(app.balance(&other).await, 500);
    let again = app.get(&format!("/api/tickets/{id}"), Some(&token)).await;
    assert_eq!(again.json["ticket"], t);
    let record = app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await;
    assert_eq!(record.json["client_seed"], serde_json::Value::Null, "no refused seed was recorded");
    assert_eq!(record.json["actions"], json!([]));
    assert_eq!(record.json["draws"], json!([]));
    let list = app.get("/api/tickets", Some(&token)).await;
    assert_eq!(list.json["tickets"].as_array().unwrap().len(), 1);
    // The action is still possible at seq 0.
    let r = app.post(&actions, Some(&token), json!({"seq": 0, "action": "play", "card": "A"})).await;
    assert_eq!(r.status, 200);
    app.shutdown().await;
}
}
