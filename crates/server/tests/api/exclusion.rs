//! A self-exclusion is not undone in a minute (a finding of the second outside audit): an
//! excluded player cannot close the account (and open another) before the
//! exclusion ends: `POST /api/me/close` answers 409 `self_excluded` with its
//! end (docs/player-api.md "Closing an account").
//!
//! The rules this keeps: a player who excludes themselves is kept from play
//! until the end they chose (loi 2010-476, art. 26: the operator offers
//! "mécanismes d'auto-exclusion" and keeps the excluded from play), and the
//! limits an account sets on its own play are the account's own (décret
//! 2010-518, art. 16): closing the account must not be a way around either.

use crate::helpers::*;
use serde_json::{Value, json};

async fn close(app: &TestApp, token: &str, body: Value) -> Resp {
    app.post("/api/me/close", Some(token), body).await
}

/// The player's account is open (no `closed_ms`, no `account_closed` in the
/// audit log) and still excluded until `until`.
async fn still_open_and_excluded(app: &TestApp, player: i64, token: &str, until: i64) {
    assert_eq!(app.get("/api/me", Some(token)).await.status, 200, "the account is open");
    let limits = app.get("/api/me/limits", Some(token)).await;
    assert_eq!(limits.json["excluded_until_ms"], until, "still excluded: {}", limits.json);
    assert_error(&app.post("/api/tickets", Some(token), json!({})).await, 403, "self_excluded");
    let closed = app
        .query_i64(&format!("SELECT CAST(COUNT(*) AS BIGINT) FROM players WHERE id = {player} AND closed_ms IS NULL"))
        .await;
    assert_eq!(closed, 1, "players.closed_ms stays NULL");
}

both! {
/// Exclude, close: 409 `self_excluded` with the exclusion's end, for an
/// account with a login (its password given) and one without (its token),
/// and nothing changes: the account is open, still excluded, its login still
/// logs in. Once the exclusion is over (its end written into the past, the
/// server restarted: the tests cannot wait 24 hours), both accounts close.
#[tokio::test]
async fn an_excluded_player_cannot_close_the_account_before_the_exclusion_ends() {
    let Some(app) = spawn_app().await else { return };
    let r = app.post("/api/players", None, json!({"login": "rocco", "password": "lampone1"})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let (with_login, rocco) = (r.json["token"].as_str().unwrap().to_string(), r.json["player_id"].as_i64().unwrap());
    let anonymous = app.register().await;
    let anon = app.get("/api/me", Some(&anonymous)).await.json["player_id"].as_i64().unwrap();

    let mut untils = Vec::new();
    for (token, days) in [(&with_login, 1), (&anonymous, 30)] {
        let ex = app.post("/api/me/self-exclusion", Some(token), json!({"days": days})).await;
        assert_eq!(ex.status, 200, "{}", ex.json);
        untils.push(ex.json["excluded_until_ms"].as_i64().unwrap());
    }
    // A wrong password is still refused first: the exclusion is not said to
    // whoever holds a token without the password.
    assert_error(&close(&app, &with_login, json!({"password": "wrong one"})).await, 403, "forbidden");
    for ((token, body), (player, until)) in [
        (&with_login, json!({"password": "lampone1"})),
        (&anonymous, json!({})),
    ]
    .into_iter()
    .zip([(rocco, untils[0]), (anon, untils[1])])
    {
        let refused = close(&app, token, body).await;
        assert_error(&refused, 409, "self_excluded");
        assert_eq!(refused.json["params"], json!({"reason": "account_close", "until_ms": until}), "{}", refused.json);
        still_open_and_excluded(&app, player, token, until).await;
    }
    let login = app.post("/api/sessions", None, json!({"login": "rocco", "password": "lampone1"})).await;
    assert_eq!(login.status, 201, "the login still logs in: {}", login.json);
    assert_eq!(app.query_i64("SELECT CAST(COUNT(*) AS BIGINT) FROM audit_log WHERE kind = 'account_closed'").await, 0);

    // The exclusions end (a second ago), read afresh by a restarted server.
    let past = server::now_ms() - 1_000;
    let sql = format!("UPDATE player_limits SET excluded_until_ms = {past} WHERE player_id IN ({rocco}, {anon})");
    let ended = app.exec_sql(&sql).await;
    assert_eq!(ended, Ok(2));
    let app = spawn_app_on(app.stop().await, |_| {}).await;
    for (token, body) in [(&with_login, json!({"password": "lampone1"})), (&anonymous, json!({}))] {
        let closed = close(&app, token, body).await;
        assert_eq!(closed.status, 200, "the exclusion over, the account closes: {}", closed.json);
        assert_error(&app.get("/api/me", Some(token)).await, 401, "unauthorized");
    }
    assert_eq!(app.query_i64("SELECT CAST(COUNT(*) AS BIGINT) FROM audit_log WHERE kind = 'account_closed'").await, 2);
    app.shutdown().await;
}
}
