//! The player's own account over HTTP (docs/player-api.md): a
//! login and password kept across devices, sessions, limits on their play
//! checked in the purchase's transaction, self-exclusion, the odds page's
//! figures and the history's pages.

use crate::helpers::*;
use serde_json::{Value, json};

async fn put(app: &TestApp, path: &str, token: &str, body: Value) -> Resp {
    app.send(app.client.put(format!("{}{path}", app.url)).bearer_auth(token).json(&body)).await
}

async fn delete(app: &TestApp, path: &str, token: &str) -> Resp {
    app.send(
        app.client.delete(format!("{}{path}", app.url)).bearer_auth(token).header("content-type", "application/json"),
    )
    .await
}

async fn login(app: &TestApp, login: &str, password: &str) -> Resp {
    app.post("/api/sessions", None, json!({"login": login, "password": password})).await
}

/// The rows that a refused purchase must leave alone.
async fn money_rows(app: &TestApp) -> (i64, i64, i64) {
    (
        app.query_i64("SELECT COUNT(*) FROM movements").await,
        app.query_i64("SELECT COUNT(*) FROM tickets WHERE status = 'sold'").await,
        app.query_i64("SELECT COUNT(*) FROM idempotency_keys").await,
    )
}

both! {
#[tokio::test]
async fn a_player_with_a_login_finds_the_same_account_on_another_device() {
    let Some(app) = spawn_app().await else { return };
    let r =
        app.post("/api/players", None, json!({"name": "Ana", "login": "Ana.Lyon", "password": "correct horse"})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let first = r.json["token"].as_str().unwrap().to_string();
    let ticket = app.buy(&first).await;
    let me = app.get("/api/me", Some(&first)).await.json;
    assert_eq!((me["name"].as_str(), me["login"].as_str()), (Some("Ana"), Some("ana.lyon")), "{me}");

    // Another device: the login (any case) and the password open a session.
    let s = login(&app, "ANA.LYON", "correct horse").await;
    assert_eq!(s.status, 201, "{}", s.json);
    let session = s.json["token"].as_str().unwrap().to_string();
    assert_eq!(s.json["player_id"], r.json["player_id"]);
    assert!(s.json["expires_ms"].as_i64().unwrap() > server::now_ms() + 29 * 86_400_000);
    let list = app.get("/api/tickets", Some(&session)).await;
    assert_eq!(list.json["tickets"][0]["id"], ticket["id"], "{}", list.json);
    assert_eq!(app.balance(&session).await, START - 300);
    // The database holds neither the password nor the session's token.
    let hash = app.query_text("SELECT password_hash FROM players WHERE login = 'ana.lyon'").await;
    assert!(hash.starts_with("$argon2id$") && !hash.contains("correct"), "{hash}");
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM sessions WHERE token_hash = '{session}'")).await, 0);

    // An expired session does not open the account, and goes at the next login.
    let player = r.json["player_id"].as_i64().unwrap();
    let stale = server::token_hash("an-old-session-token");
    app.exec_sql(&format!("INSERT INTO sessions VALUES ('{stale}', {player}, 1, 2)")).await.unwrap();
    assert_error(&app.get("/api/me", Some("an-old-session-token")).await, 401, "unauthorized");
    assert_eq!(login(&app, "ana.lyon", "correct horse").await.status, 201);
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM sessions WHERE token_hash = '{stale}'")).await, 0);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM sessions").await, 2);

    // Logout ends that session at once; the first device's token still works.
    let out = delete(&app, "/api/sessions/current", &session).await;
    assert_eq!(out.status, 204, "{}", out.json);
    assert_error(&app.get("/api/me", Some(&session)).await, 401, "unauthorized");
    assert_eq!(app.get("/api/me", Some(&first)).await.status, 200);
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn a_wrong_password_an_unknown_login_and_a_taken_login_are_refused() {
    let Some(app) = spawn_app().await else { return };
    let r = app.post("/api/players", None, json!({"login": "bruno", "password": "12345678"})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    for (l, p) in [("bruno", "12345679"), ("nobody", "12345678"), ("x", "12345678"), ("bruno", "")] {
        let s = login(&app, l, p).await;
        assert_error(&s, 401, "unauthorized");
        assert_eq!(s.json["message"], "wrong login or password");
    }
    let players = app.query_i64("SELECT COUNT(*) FROM players").await;
    assert_error(
        &app.post("/api/players", None, json!({"login": "BRUNO", "password": "abcdefgh"})).await,
        409,
        "conflict",
    );
    assert_error(&app.post("/api/players", None, json!({"login": "carla"})).await, 400, "bad_request");
    assert_error(
        &app.post("/api/players", None, json!({"login": "carla", "password": "short"})).await,
        400,
        "bad_request",
    );
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM players").await, players, "nothing written");
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM sessions").await, 0);
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn a_player_keeps_an_account_made_without_a_login_and_changes_the_password() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let ticket = app.buy(&token).await;
    let r = put(&app, "/api/me/credentials", &token, json!({"login": "dora", "password": "first pass"})).await;
    assert_eq!((r.status.as_u16(), &r.json["login"]), (200, &json!("dora")));
    assert!(r.json["device_token"].as_str().is_some_and(|d| d.starts_with("d1.")), "{}", r.json);
    let s = login(&app, "dora", "first pass").await;
    assert_eq!(s.status, 201);
    let session = s.json["token"].as_str().unwrap();
    assert_eq!(app.get("/api/tickets", Some(session)).await.json["tickets"][0]["id"], ticket["id"]);

    // A change needs the current password.
    let no = put(&app, "/api/me/credentials", session, json!({"login": "dora", "password": "second pass"})).await;
    assert_error(&no, 403, "forbidden");
    let wrong = json!({"login": "dora", "password": "second pass", "current_password": "nope nope"});
    assert_error(&put(&app, "/api/me/credentials", session, wrong).await, 403, "forbidden");
    let ok = json!({"login": "dora", "password": "second pass", "current_password": "first pass"});
    assert_eq!(put(&app, "/api/me/credentials", session, ok).await.status, 200);
    assert_error(&login(&app, "dora", "first pass").await, 401, "unauthorized");
    assert_eq!(login(&app, "dora", "second pass").await.status, 201);
    // Another player cannot take that login.
    let other = app.register().await;
    let taken = put(&app, "/api/me/credentials", &other, json!({"login": "Dora", "password": "whatever1"})).await;
    assert_error(&taken, 409, "conflict");
    let audit = app.query_i64("SELECT COUNT(*) FROM audit_log WHERE kind = 'credentials_set'").await;
    assert_eq!(audit, 2);
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn a_password_change_ends_every_other_session_and_the_players_own_token() {
    let Some(app) = spawn_app().await else { return };
    let r = app.post("/api/players", None, json!({"login": "erin", "password": "first pass"})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let own = r.json["token"].as_str().unwrap().to_string();
    let player = r.json["player_id"].as_i64().unwrap();
    // The own token is seen (and may be remembered) before its revocation.
    assert_eq!(app.get("/api/me", Some(&own)).await.status, 200);
    let phone = login(&app, "erin", "first pass").await.json["token"].as_str().unwrap().to_string();
    let laptop = login(&app, "erin", "first pass").await.json["token"].as_str().unwrap().to_string();
    // The laptop's session is seen (and remembered, on SQLite) before it ends.
    assert_eq!(app.get("/api/me", Some(&laptop)).await.status, 200);
    // Someone else's session is not touched.
    let other = app.post("/api/players", None, json!({"login": "fanny", "password": "other pass"})).await;
    let other_own = other.json["token"].as_str().unwrap().to_string();
    let other_session = login(&app, "fanny", "other pass").await.json["token"].as_str().unwrap().to_string();

    // Changed from the phone: the phone goes on, everything else of Erin's ends.
    let change = json!({"login": "erin", "password": "second pass", "current_password": "first pass"});
    let ok = put(&app, "/api/me/credentials", &phone, change).await;
    assert_eq!(ok.status, 200, "{}", ok.json);
    assert_eq!(app.get("/api/me", Some(&phone)).await.status, 200);
    assert_error(&app.get("/api/me", Some(&laptop)).await, 401, "unauthorized");
    assert_error(&app.get("/api/me", Some(&own)).await, 401, "unauthorized");
    assert_error(&app.post("/api/tickets", Some(&own), json!({})).await, 401, "unauthorized");
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM sessions WHERE player_id = {player}")).await, 1);
    assert_eq!(app.get("/api/me", Some(&other_own)).await.status, 200);
    assert_eq!(app.get("/api/me", Some(&other_session)).await.status, 200);
    let data =
        app.query_text("SELECT data_json FROM audit_log WHERE kind = 'credentials_set' ORDER BY id DESC LIMIT 1").await;
    let data: Value = serde_json::from_str(&data).unwrap();
    assert_eq!((data["player_id"].as_i64(), &data["own_token_revoked"]), (Some(player), &json!(true)), "{data}");

    // Changed with the player's own token: every session ends, the token goes on.
    let session = login(&app, "fanny", "other pass").await.json["token"].as_str().unwrap().to_string();
    assert_eq!(app.get("/api/me", Some(&session)).await.status, 200);
    let change = json!({"login": "fanny", "password": "new other pass", "current_password": "other pass"});
    assert_eq!(put(&app, "/api/me/credentials", &other_own, change).await.status, 200);
    assert_eq!(app.get("/api/me", Some(&other_own)).await.status, 200);
    assert_error(&app.get("/api/me", Some(&session)).await, 401, "unauthorized");
    assert_error(&app.get("/api/me", Some(&other_session)).await, 401, "unauthorized");
    // The new password opens a new session; the phone still works.
    let back = login(&app, "erin", "second pass").await;
    assert_eq!(back.status, 201, "{}", back.json);
    assert_eq!(app.get("/api/me", Some(back.json["token"].as_str().unwrap())).await.status, 200);
    assert_eq!(app.get("/api/me", Some(&phone)).await.status, 200);
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn a_logout_ends_the_token_it_came_with_and_never_loses_an_account_without_a_login() {
    let Some(app) = spawn_app().await else { return };
    let own = app.register().await;
    let player = app.get("/api/me", Some(&own)).await.json["player_id"].as_i64().unwrap();
    // Without a login, the player's own token is the account's only key: kept, 409.
    let refused = delete(&app, "/api/sessions/current", &own).await;
    assert_error(&refused, 409, "conflict");
    assert!(refused.json["message"].as_str().unwrap().contains("/api/me/credentials"), "{}", refused.json);
    assert_eq!(app.get("/api/me", Some(&own)).await.status, 200);

    let r = put(&app, "/api/me/credentials", &own, json!({"login": "gael", "password": "gael pass"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let session = login(&app, "gael", "gael pass").await.json["token"].as_str().unwrap().to_string();
    // A session's logout ends it alone.
    assert_eq!(delete(&app, "/api/sessions/current", &session).await.status, 204);
    assert_error(&app.get("/api/me", Some(&session)).await, 401, "unauthorized");
    assert_eq!(app.get("/api/me", Some(&own)).await.status, 200);

    // With a login, logging out with the own token revokes it, for good.
    let kept = login(&app, "gael", "gael pass").await.json["token"].as_str().unwrap().to_string();
    let out = delete(&app, "/api/sessions/current", &own).await;
    assert_eq!(out.status, 204, "{}", out.json);
    assert_error(&app.get("/api/me", Some(&own)).await, 401, "unauthorized");
    assert_error(&delete(&app, "/api/sessions/current", &own).await, 401, "unauthorized");
    assert_eq!(app.get("/api/me", Some(&kept)).await.status, 200, "other sessions go on");
    let audit = app.query_i64("SELECT COUNT(*) FROM audit_log WHERE kind = 'own_token_revoked'").await;
    assert_eq!(audit, 1);
    // The login and password still open the account.
    let back = login(&app, "gael", "gael pass").await;
    assert_eq!(back.status, 201, "{}", back.json);
    assert_eq!(back.json["player_id"].as_i64(), Some(player));
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn a_ticket_limit_refuses_the_next_purchase_with_403_and_debits_nothing() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let limits = app.get("/api/me/limits", Some(&token)).await;
    assert_eq!(limits.json["tickets_per_day"], Value::Null, "{}", limits.json);
    assert_eq!(limits.json["cooling_off_hours"], 72);

    let set = put(&app, "/api/me/limits", &token, json!({"tickets_per_day": 1, "spend_per_week_cents": null})).await;
    assert_eq!(set.status, 200, "{}", set.json);
    assert_eq!(set.json["tickets_per_day"], 1);
    app.buy(&token).await;
    let before = (app.balance(&token).await, money_rows(&app).await);
    let refused = app
        .send(app.client.post(format!("{}/api/tickets", app.url)).bearer_auth(&token).header("Idempotency-Key", "k2").json(&json!({})))
        .await;
    assert_error(&refused, 403, "limit_reached");
    assert!(refused.json["message"].as_str().unwrap().contains("1 ticket a day"), "{}", refused.json);
    assert_eq!((app.balance(&token).await, money_rows(&app).await), before, "nothing debited, nothing sold");

    // A raise waits for the cooling-off: the limit of one still holds.
    let raise = put(&app, "/api/me/limits", &token, json!({"tickets_per_day": 5, "spend_per_week_cents": null})).await;
    assert_eq!(raise.json["tickets_per_day"], 1, "{}", raise.json);
    assert_eq!(raise.json["pending"]["tickets_per_day"], 5);
    let from = raise.json["pending"]["from_ms"].as_i64().unwrap();
    assert!((from - server::now_ms() - 72 * 3_600_000).abs() < 60_000, "{}", raise.json);
    assert_eq!(raise.json["used"], json!({"tickets_today": 1, "spent_week_cents": 300}));
    assert_error(&app.post("/api/tickets", Some(&token), json!({})).await, 403, "limit_reached");
    // Other players are not limited.
    let other = app.register().await;
    app.buy(&other).await;
    let audit = app.query_i64("SELECT COUNT(*) FROM audit_log WHERE kind = 'limits_set'").await;
    assert_eq!(audit, 2);
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn a_spend_limit_counts_the_week_and_a_lower_one_applies_at_once() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let set = put(&app, "/api/me/limits", &token, json!({"tickets_per_day": null, "spend_per_week_cents": 1000})).await;
    assert_eq!(set.status, 200, "{}", set.json);
    for _ in 0..3 {
        app.buy(&token).await;
    }
    // 900 spent: a fourth ticket would make 1 200.
    let before = app.balance(&token).await;
    let r = app.post("/api/tickets", Some(&token), json!({})).await;
    assert_error(&r, 403, "limit_reached");
    assert_eq!(app.balance(&token).await, before);
    let lower = put(&app, "/api/me/limits", &token, json!({"tickets_per_day": 3, "spend_per_week_cents": 600})).await;
    assert_eq!(
        (lower.json["tickets_per_day"].as_i64(), lower.json["spend_per_week_cents"].as_i64()),
        (Some(3), Some(600))
    );
    assert_eq!(lower.json["pending"], Value::Null);
    for bad in
        [json!({"tickets_per_day": 0}), json!({"spend_per_week_cents": -5}), json!({"tickets_per_day": 2, "x": 1})]
    {
        assert_error(&put(&app, "/api/me/limits", &token, bad).await, 400, "bad_request");
    }
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn a_self_excluded_player_cannot_buy_but_can_finish_a_ticket() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let ticket = app.buy(&token).await;
    let r = app.post("/api/me/self-exclusion", Some(&token), json!({"days": 30})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let until = r.json["excluded_until_ms"].as_i64().unwrap();
    assert!((until - server::now_ms() - 30 * 86_400_000).abs() < 60_000);
    let before = (app.balance(&token).await, money_rows(&app).await);
    assert_error(&app.post("/api/tickets", Some(&token), json!({})).await, 403, "self_excluded");
    assert_eq!((app.balance(&token).await, money_rows(&app).await), before);
    // It is never shortened.
    let shorter = app.post("/api/me/self-exclusion", Some(&token), json!({"days": 1})).await;
    assert_eq!(shorter.json["excluded_until_ms"].as_i64(), Some(until));
    assert_error(&app.post("/api/me/self-exclusion", Some(&token), json!({"days": 0})).await, 400, "bad_request");
    // The ticket bought before is played to the end.
    let done = crate::money::play_out(&app, &token, &ticket).await;
    assert_eq!(done["phase"], "finished");
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn the_odds_are_the_math_crates_exact_fractions() {
    let Some(app) = spawn_app().await else { return };
    let r = app.get("/api/odds", None).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let odds = math::Odds::exact();
    assert_eq!(r.json["final"], odds.to_json()["final"]);
    let table = math::PrizeTable::parse_toml(TABLE).unwrap();
    let payout = math::Payout::compute(&table, &odds).to_json();
    assert_eq!(r.json["table"]["rtp"], payout["rtp"]);
    assert_eq!(r.json["table"]["hit_rate"], payout["hit_rate"]);
    assert_eq!(r.json["schedules"].as_array().unwrap().len(), table.schedules.len());
    app.shutdown().await;
}
}

both! {
#[tokio::test]
async fn the_history_comes_in_pages_with_dates_and_games() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(app.buy(&token).await["id"].as_str().unwrap().to_string());
    }
    let page = app.get("/api/tickets?limit=2", Some(&token)).await;
    let got: Vec<&str> = page.json["tickets"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(got, [ids[2].as_str(), ids[1].as_str()]);
    assert_eq!(page.json["next"], ids[1]);
    let t = &page.json["tickets"][0];
    assert!(t["sold_ms"].as_i64().unwrap() > 0, "{t}");
    assert_eq!(t["games"], json!([{"game": 1, "tricks": 0, "extra": null}]));
    let last = app.get(&format!("/api/tickets?limit=2&before={}", ids[1]), Some(&token)).await;
    assert_eq!(last.json["tickets"].as_array().unwrap().len(), 1);
    assert_eq!(last.json["tickets"][0]["id"], ids[0]);
    assert_eq!(last.json["next"], Value::Null);
    // Without a limit: every ticket, and no `next`, as docs/contract.md has it.
    let all = app.get("/api/tickets", Some(&token)).await;
    assert_eq!(all.json["tickets"].as_array().unwrap().len(), 3);
    assert!(all.json.get("next").is_none());
    // `before` alone: every older ticket; an unknown one: none.
    let older = app.get(&format!("/api/tickets?before={}", ids[2]), Some(&token)).await;
    assert_eq!(older.json["tickets"].as_array().unwrap().len(), 2);
    assert_eq!(app.get("/api/tickets?before=nope", Some(&token)).await.json["tickets"], json!([]));
    for bad in ["?limit=0", "?limit=101", "?limit=abc", "?page=2"] {
        assert_error(&app.get(&format!("/api/tickets{bad}"), Some(&token)).await, 400, "bad_request");
    }
    // A finished ticket's games end with the deciding one.
    let done = crate::money::play_out(&app, &token, &app.buy(&token).await).await;
    let games = done["games"].as_array().unwrap();
    assert_eq!(games.last().unwrap()["tricks"], done["result"]["tricks"], "{done}");
    assert_eq!(games.len() as u64, done["game"].as_u64().unwrap());
    app.shutdown().await;
}
}

both! {
/// A token one process remembers and another revokes stops at once in the
/// first: on PostgreSQL a game action does not read its token apart, its
/// first statement confirms it (`Store::action_caller`), so a logout in any
/// process refuses the next action, whether or not its ticket exists, and
/// the refused action changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_by_another_process_stops_the_next_action_at_once() {
    let Some(app) = spawn_app().await else { return };
    let second = app.another_process(|_| {}).await;
    if app.backend == Backend::Sqlite {
        // One process per SQLite file, which revokes and forgets by itself.
        assert!(second.is_err(), "a second process on a SQLite file is refused");
        app.shutdown().await;
        return;
    }
    let second = second.expect("a second process on PostgreSQL");
    let own = app.register().await;
    let r = put(&app, "/api/me/credentials", &own, json!({"login": "hugo", "password": "hugo pass"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let session = login(&app, "hugo", "hugo pass").await.json["token"].as_str().unwrap().to_string();
    // The session first (its ticket's action refused), then the own token
    // (an action on a ticket that does not exist refused first).
    for (token, missing_first) in [(&session, false), (&own, true)] {
        let t = app.buy(token).await;
        let id = t["id"].as_str().unwrap().to_string();
        let plan = search(&t, 50, |_| true).expect("a game");
        app.play(token, &id, &plan.actions[..1]).await;
        let out =
            app.send(app.client.delete(format!("{}/api/sessions/current", second.url())).bearer_auth(token).json(&json!({})))
                .await;
        assert_eq!(out.status, 204, "{}", out.json);
        let next = action_body(1, plan.actions[1]);
        if missing_first {
            let r = app.post("/api/tickets/ONL-001-00001-999999-00/actions", Some(token), next.clone()).await;
            assert_error(&r, 401, "unauthorized");
        }
        let r = app.post(&format!("/api/tickets/{id}/actions"), Some(token), next).await;
        assert_error(&r, 401, "unauthorized");
        let seq = app
            .query_i64(&format!(
                "SELECT g.seq FROM ticket_games g JOIN tickets t ON t.id = g.ticket_id WHERE t.serial = '{id}'"
            ))
            .await;
        assert_eq!(seq, 1, "the refused action changed nothing");
    }
    second.shutdown().await.unwrap();
    app.shutdown().await;
}
}
