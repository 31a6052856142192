//! What players used to FDJ's games expect (docs/player-api.md): an account
//! recovered without e-mail (a recovery code shown once, stored as an
//! argon2id hash, with the login's limits), and an account closed (its
//! records kept, its tokens ended, refused while a ticket is in play).

use crate::helpers::*;
use serde_json::{Value, json};

/// `XXXX-XXXX-XXXX-XXXX` of the unambiguous alphabet (no 0, 1, I, O).
fn assert_code(code: &Value) -> String {
    let code = code.as_str().unwrap_or_else(|| panic!("a recovery code: {code}"));
    let groups: Vec<&str> = code.split('-').collect();
    assert_eq!(groups.len(), 4, "{code}");
    for g in &groups {
        assert_eq!(g.len(), 4, "{code}");
        assert!(g.bytes().all(|b| b"23456789ABCDEFGHJKLMNPQRSTUVWXYZ".contains(&b)), "{code}");
    }
    code.to_string()
}

async fn login(app: &TestApp, login: &str, password: &str) -> Resp {
    app.post("/api/sessions", None, json!({"login": login, "password": password})).await
}

async fn recover(app: &TestApp, login: &str, code: &str, password: &str) -> Resp {
    app.post("/api/recovery", None, json!({"login": login, "recovery_code": code, "password": password})).await
}

async fn me_status(app: &TestApp, token: &str) -> u16 {
    app.get("/api/me", Some(token)).await.status.as_u16()
}

both! {
#[tokio::test]
async fn a_login_comes_with_a_recovery_code_that_sets_a_new_password_once_and_ends_the_other_sessions() {
    let Some(app) = spawn_app().await else { return };
    let r = app.post("/api/players", None, json!({"login": "eliot", "password": "incorruptible"})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let code = assert_code(&r.json["recovery_code"]);
    let own = r.json["token"].as_str().unwrap().to_string();
    let player = r.json["player_id"].as_i64().unwrap();
    // Stored as an argon2id hash only.
    let hash = app.query_text("SELECT recovery_hash FROM players WHERE login = 'eliot'").await;
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    assert!(!hash.contains(&code) && !hash.contains(&code.replace('-', "")), "{hash}");
    // Without a login, no code.
    let plain = app.post("/api/players", None, json!({"name": "anon"})).await;
    assert_eq!(plain.status, 201);
    assert!(plain.json.get("recovery_code").is_none(), "{}", plain.json);

    let session = login(&app, "eliot", "incorruptible").await.json["token"].as_str().unwrap().to_string();
    // A wrong code, a malformed one, an unknown login: 401, nothing changes.
    for (l, c) in [("eliot", "2222-2222-2222-2222"), ("eliot", "not a code"), ("nobody", code.as_str())] {
        let w = recover(&app, l, c, "a new password").await;
        assert_error(&w, 401, "unauthorized");
        assert_eq!(w.json["message"], "wrong login or recovery code");
    }
    assert_eq!(me_status(&app, &session).await, 200);
    // A new password too short: 400, in the documented shape.
    let short = recover(&app, "eliot", &code, "short").await;
    assert_error(&short, 400, "bad_request");
    assert!(short.json["message"].as_str().unwrap().contains("8 to 128"), "{}", short.json);

    // The code as typed on a phone: lower case, no dashes.
    let typed = code.replace('-', "").to_lowercase();
    let ok = recover(&app, "ELIOT", &typed, "a new password").await;
    assert_eq!(ok.status, 201, "{}", ok.json);
    assert_eq!(ok.json["player_id"], player);
    let second = assert_code(&ok.json["recovery_code"]);
    assert_ne!(second, code);
    let fresh = ok.json["token"].as_str().unwrap();
    assert_eq!(me_status(&app, fresh).await, 200, "the new session opens the account");
    // Every other token ends: the session and the account's own token.
    assert_eq!(me_status(&app, &session).await, 401);
    assert_eq!(me_status(&app, &own).await, 401);
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM sessions WHERE player_id = {player}")).await, 1);
    assert_error(&login(&app, "eliot", "incorruptible").await, 401, "unauthorized");
    assert_eq!(login(&app, "eliot", "a new password").await.status, 201);
    // A code works once; the new one works.
    assert_error(&recover(&app, "eliot", &code, "a third password").await, 401, "unauthorized");
    assert_eq!(recover(&app, "eliot", &second, "a third password").await.status, 201);
    // The audit log says it happened, never the code.
    let audit = app.query_i64("SELECT COUNT(*) FROM audit_log WHERE kind = 'password_recovered'").await;
    assert_eq!(audit, 2);
    let leaked =
        app.query_i64(&format!("SELECT COUNT(*) FROM audit_log WHERE data_json LIKE '%{}%'", &second[..4])).await;
    assert_eq!(leaked, 0);
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn a_new_recovery_code_needs_the_password_and_the_old_one_stops_working() {
    let Some(app) = spawn_app().await else { return };
    let r = app.post("/api/players", None, json!({"login": "ness", "password": "untouchable"})).await;
    let first = assert_code(&r.json["recovery_code"]);
    let token = r.json["token"].as_str().unwrap().to_string();
    let renew = |body: Value| {
        let app = &app;
        let token = token.clone();
        async move { app.post("/api/me/recovery-code", Some(&token), body).await }
    };
    assert_error(&renew(json!({"password": "not the one"})).await, 403, "forbidden");
    assert_error(&renew(json!({})).await, 400, "bad_request");
    let ok = renew(json!({"password": "untouchable"})).await;
    assert_eq!(ok.status, 200, "{}", ok.json);
    let second = assert_code(&ok.json["recovery_code"]);
    assert_ne!(first, second);
    assert_eq!(me_status(&app, &token).await, 200, "the token it came with keeps working");
    assert_error(&recover(&app, "ness", &first, "a new password").await, 401, "unauthorized");
    assert_eq!(recover(&app, "ness", &second, "a new password").await.status, 201);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM audit_log WHERE kind = 'recovery_code_renewed'").await, 1);
    // An account without a login has no code to renew: 409.
    let plain = app.register().await;
    assert_error(
        &app.post("/api/me/recovery-code", Some(&plain), json!({"password": "whatever1"})).await,
        409,
        "conflict",
    );
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn recovery_attempts_have_the_limits_of_logins() {
    let Some(app) = spawn_app_with(|c| c.logins_per_address = 3).await else { return };
    let r = app.post("/api/players", None, json!({"login": "capone", "password": "scarface1"})).await;
    let code = assert_code(&r.json["recovery_code"]);
    for _ in 0..3 {
        assert_error(&recover(&app, "capone", "2222-2222-2222-2222", "a new password").await, 401, "unauthorized");
    }
    // The fourth from the same network: 429 with Retry-After, even with the right code.
    let limited = recover(&app, "capone", &code, "a new password").await;
    assert_error(&limited, 429, "too_many_attempts");
    assert!(limited.headers.get("retry-after").is_some());
    assert_error(&login(&app, "capone", "a new password").await, 401, "unauthorized");
    assert_eq!(login(&app, "capone", "scarface1").await.status, 201, "the password is unchanged");
    app.shutdown().await;
}
}

both! {
/// A token's holder checking the account's password again (a new recovery
/// code, new credentials, closing the account) has the limit of logins per
/// network: a stolen token guesses the password no faster than a login.
#[tokio::test]
async fn password_checks_with_a_token_have_the_limits_of_logins() {
    let Some(app) = spawn_app_with(|c| c.logins_per_address = 3).await else { return };
    let r = app.post("/api/players", None, json!({"login": "nitti", "password": "the enforcer"})).await;
    let token = r.json["token"].as_str().unwrap().to_string();
    let wrong = json!({"password": "not the password"});
    assert_error(&app.post("/api/me/recovery-code", Some(&token), wrong.clone()).await, 403, "forbidden");
    let creds = json!({"login": "nitti", "password": "another one!", "current_password": "not it either"});
    let put =
        app.send(app.client.put(format!("{}/api/me/credentials", app.url)).bearer_auth(&token).json(&creds)).await;
    assert_error(&put, 403, "forbidden");
    assert_error(&close(&app, &token, wrong.clone()).await, 403, "forbidden");
    // The fourth check from the same network: 429 with Retry-After, even with the right password.
    for (path, body) in [
        ("/api/me/recovery-code", json!({"password": "the enforcer"})),
        ("/api/me/close", json!({"password": "the enforcer"})),
    ] {
        let limited = app.post(path, Some(&token), body).await;
        assert_error(&limited, 429, "too_many_attempts");
        assert!(limited.headers.get("retry-after").is_some());
    }
    assert_eq!(me_status(&app, &token).await, 200, "the account is still open");
    // Logins count on their own: the owner still logs in.
    assert_eq!(login(&app, "nitti", "the enforcer").await.status, 201);
    app.shutdown().await;
}
}

// ------------------------------------------------------------------ closing an account

async fn close(app: &TestApp, token: &str, body: Value) -> Resp {
    app.post("/api/me/close", Some(token), body).await
}

both! {
#[tokio::test]
async fn closing_an_account_needs_its_password_waits_for_its_ticket_and_keeps_its_records() {
    let Some(app) = spawn_app().await else { return };
    let r = app.post("/api/players", None, json!({"login": "frank", "password": "nitti1234"})).await;
    let own = r.json["token"].as_str().unwrap().to_string();
    let code = assert_code(&r.json["recovery_code"]);
    let player = r.json["player_id"].as_i64().unwrap();
    let session = login(&app, "frank", "nitti1234").await.json["token"].as_str().unwrap().to_string();
    let ticket = app.buy(&own).await;
    let id = ticket["id"].as_str().unwrap().to_string();

    assert_error(&close(&app, &session, json!({})).await, 403, "forbidden");
    assert_error(&close(&app, &session, json!({"password": "wrong one"})).await, 403, "forbidden");
    // A ticket in play: refused with its own code, nothing changes.
    let in_play = close(&app, &session, json!({"password": "nitti1234"})).await;
    assert_error(&in_play, 409, "ticket_in_play");
    assert!(in_play.json["message"].as_str().unwrap().contains("not finished"), "{}", in_play.json);
    assert_eq!(me_status(&app, &own).await, 200);

    // Finished, the account closes.
    let plan = search(&ticket, 300, |_| true).unwrap();
    app.play(&own, &id, &plan.actions).await;
    let balance = app.balance(&own).await;
    let movements = app.query_i64("SELECT COUNT(*) FROM movements").await;
    let closed = close(&app, &session, json!({"password": "nitti1234"})).await;
    assert_eq!(closed.status, 200, "{}", closed.json);
    assert_eq!(closed.json["balance_cents"], balance);
    assert!(closed.json["closed_ms"].as_i64().unwrap() > 0);

    // No token works, no login, no recovery, no purchase.
    for t in [&own, &session] {
        assert_error(&app.get("/api/me", Some(t)).await, 401, "unauthorized");
        assert_error(&app.post("/api/tickets", Some(t), json!({})).await, 401, "unauthorized");
    }
    assert_error(&login(&app, "frank", "nitti1234").await, 401, "unauthorized");
    assert_error(&recover(&app, "frank", &code, "a new password").await, 401, "unauthorized");
    // The login, the password and recovery hashes are gone; the records stay.
    let gone = app
        .query_i64(&format!(
            "SELECT CAST(CASE WHEN login IS NULL AND password_hash IS NULL AND recovery_hash IS NULL \
             AND closed_ms IS NOT NULL THEN 1 ELSE 0 END AS BIGINT) FROM players WHERE id = {player}"
        ))
        .await;
    assert_eq!(gone, 1);
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM tickets WHERE owner_id = {player}")).await, 1);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM movements").await, movements, "the ledger is kept, untouched");
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM sessions WHERE player_id = {player}")).await, 0);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM audit_log WHERE kind = 'account_closed'").await, 1);
    // The audit chain holds, the closure in it.
    assert_eq!(app.sealed_audit_check().await.first_broken, None);
    // The login is free again for somebody else.
    let again = app.post("/api/players", None, json!({"login": "frank", "password": "another1"})).await;
    assert_eq!(again.status, 201, "{}", again.json);
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn an_account_without_a_login_closes_with_its_token() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let closed = close(&app, &token, json!({})).await;
    assert_eq!(closed.status, 200, "{}", closed.json);
    assert_eq!(closed.json["balance_cents"], START);
    assert_error(&app.get("/api/me", Some(&token)).await, 401, "unauthorized");
    assert_error(&close(&app, &token, json!({})).await, 401, "unauthorized");
    app.shutdown().await;
}
}
