//! Guarantee 4: an action is applied exactly once; purchases honour
//! Idempotency-Key.

use crate::helpers::*;
use serde_json::json;

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarantee_4_a_retried_action_gets_the_identical_bytes_and_draws_nothing() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let t = app.buy(&token).await;
    let id = t["id"].as_str().unwrap();
    let path = format!("/api/tickets/{id}/actions");
    let first = app.post(&path, Some(&token), json!({"seq": 0, "action": "play", "card": "9"})).await;
    assert_eq!(first.status, 200);
    // The same request, spelled differently: same answer, byte for byte.
    let r = app
        .send(
            app.client
                .post(format!("{}{path}", app.url))
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body(r#"{ "card" : "9", "action":"play", "seq":0 }"#),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.bytes, first.bytes);
    // Later actions happen; the old answer stays the same bytes.
    let second = app.post(&path, Some(&token), action_body_for(&first.json, 1)).await;
    assert_eq!(second.status, 200);
    let again = app.post(&path, Some(&token), json!({"seq": 0, "action": "play", "card": "9"})).await;
    assert_eq!(again.bytes, first.bytes);
    let again2 = app.post(&path, Some(&token), action_body_for(&first.json, 1)).await;
    assert_eq!(again2.bytes, second.bytes);
    // A different body for an applied seq, or a future seq: 409.
    assert_error(
        &app.post(&path, Some(&token), json!({"seq": 0, "action": "play", "card": "8"})).await,
        409,
        "conflict",
    );
    // The same first action with a client seed is another body too (the
    // server picked one when none came): 409, the draws stay the ones given.
    assert_error(
        &app.post(&path, Some(&token), json!({"seq": 0, "action": "play", "card": "9", "client_seed": "late"})).await,
        409,
        "conflict",
    );
    assert_error(
        &app.post(&path, Some(&token), json!({"seq": 5, "action": "play", "card": "8"})).await,
        409,
        "conflict",
    );
    let rec = app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await;
    assert_eq!(rec.json["draws"].as_array().unwrap().len(), 2, "retries drew nothing");
    assert_eq!(rec.json["actions"].as_array().unwrap().len(), 2);
    app.shutdown().await;
}
}

/// The next action after an answer: a draw when one is due, else the lowest card.
fn action_body_for(answer: &serde_json::Value, seq: u64) -> serde_json::Value {
    let t = &answer["ticket"];
    if t["phase"] == "play" {
        json!({"seq": seq, "action": "play", "card": t["hand"][0]})
    } else {
        json!({"seq": seq, "action": "draw"})
    }
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarantee_4_concurrent_duplicates_apply_once() {
    let Some(app) = spawn_app().await else { return };
    let app = std::sync::Arc::new(app);
    let token = app.register().await;
    let t = app.buy(&token).await;
    let id = t["id"].as_str().unwrap().to_string();
    let path = format!("/api/tickets/{id}/actions");
    // 16 identical requests at once: one applies, all get the same bytes.
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (app, token, path) = (app.clone(), token.clone(), path.clone());
        tasks.push(tokio::spawn(async move {
            app.post(&path, Some(&token), json!({"seq": 0, "action": "play", "card": "K"})).await
        }));
    }
    let mut bodies = Vec::new();
    for task in tasks {
        let r = task.await.unwrap();
        assert_eq!(r.status, 200, "{}", r.json);
        bodies.push(r.bytes);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]), "every duplicate got the identical answer");
    // 8 different requests for the same seq at once: exactly one applies, the others get 409.
    let first: serde_json::Value = serde_json::from_slice(&bodies[0]).unwrap();
    let hand: Vec<String> =
        first["ticket"]["hand"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    let phase = first["ticket"]["phase"].as_str().unwrap().to_string();
    let mut tasks = Vec::new();
    // In a tie-break (the first trick tied) one draw and six plays: the
    // draw applies, a play is refused by the rules (422) or comes after
    // the draw (409).
    for (i, card) in hand.iter().take(7).enumerate() {
        let (app, token, path) = (app.clone(), token.clone(), path.clone());
        let body = if phase != "play" && i == 0 {
            json!({"seq": 1, "action": "draw"})
        } else {
            json!({"seq": 1, "action": "play", "card": card})
        };
        tasks.push(tokio::spawn(async move { app.post(&path, Some(&token), body).await }));
    }
    let mut ok = 0;
    for task in tasks {
        let r = task.await.unwrap();
        match r.status.as_u16() {
            200 => ok += 1,
            409 => assert_error(&r, 409, "conflict"),
            422 if phase != "play" => assert_error(&r, 422, "invalid_action"),
            s => panic!("unexpected {s}: {}", r.json),
        }
    }
    assert_eq!(ok, 1, "exactly one of the different requests applies");
    let rec = app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await;
    assert_eq!(rec.json["actions"].as_array().unwrap().len(), 2);
    assert_eq!(rec.json["draws"].as_array().unwrap().len(), 2);
    shutdown_shared(app).await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_purchase_returns_the_same_ticket_and_debits_once() {
    let Some(app) = spawn_app().await else { return };
    let app = std::sync::Arc::new(app);
    let token = app.register().await;
    let buy = |key: &'static str, body: serde_json::Value| {
        let (app, token) = (app.clone(), token.clone());
        async move {
            app.send(
                app.client
                    .post(format!("{}/api/tickets", app.url))
                    .bearer_auth(&token)
                    .header("Idempotency-Key", key)
                    .json(&body),
            )
            .await
        }
    };
    let a = buy("key-1", json!({})).await;
    assert_eq!(a.status, 201);
    let b = buy("key-1", json!({})).await;
    assert_eq!(b.status, 201);
    assert_eq!(a.bytes, b.bytes, "the same answer, byte for byte");
    assert_eq!(app.balance(&token).await, START - 300);
    // A purchase has no body to differ: the same key with the body left out
    // (a write still says JSON: 415 otherwise) is the same request...
    let r = app
        .send(
            app.client
                .post(format!("{}/api/tickets", app.url))
                .bearer_auth(&token)
                .header("Idempotency-Key", "key-1")
                .header("content-type", "application/json"),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.bytes, a.bytes);
    // ...and a body with a client seed is refused (400: the seed comes with
    // the first action, docs/contract.md Fairness 2), debiting nothing.
    assert_error(&buy("key-1", json!({"client_seed": "t"})).await, 400, "bad_request");
    assert_error(&buy("key-9", json!({"client_seed": "t"})).await, 400, "bad_request");
    assert_eq!(app.balance(&token).await, START - 300);
    // Concurrent purchases with one new key: one ticket.
    let tasks: Vec<_> = (0..8).map(|_| tokio::spawn(buy("key-2", json!({})))).collect();
    let mut ids = std::collections::HashSet::new();
    for t in tasks {
        let r = t.await.unwrap();
        assert_eq!(r.status, 201);
        ids.insert(r.json["ticket"]["id"].as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 1);
    assert_eq!(app.balance(&token).await, START - 600);
    // Keys are per player: another player's same key buys another ticket.
    let other = app.register().await;
    let r = app
        .send(
            app.client
                .post(format!("{}/api/tickets", app.url))
                .bearer_auth(&other)
                .header("Idempotency-Key", "key-1")
                .json(&json!({})),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_ne!(r.json["ticket"]["id"], a.json["ticket"]["id"]);
    let list = app.get("/api/tickets", Some(&token)).await;
    assert_eq!(list.json["tickets"].as_array().unwrap().len(), 2);
    shutdown_shared(app).await;
}
}

both! {
/// On PostgreSQL a game action takes no lock: it reads, decides, and writes
/// in one statement guarded by what it read (docs/storage.md, "A game
/// action without a lock"). Here the player's balance changes between the
/// winning action's read and its write, as a purchase in another tab would
/// change it: the write's balance guard fails, the whole statement is
/// undone (migration 16's `as_capone_stale`), and the action runs again
/// from its read. The prize is then credited once, on the new balance; had
/// the game's part of the write stayed without its credit, the retry would
/// find the game finished and the prize would be lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_winning_action_whose_balance_changed_meanwhile_is_written_whole_once() {
    let Some(app) = spawn_app().await else { return };
    if app.backend != Backend::Postgres {
        // One writer on SQLite: nothing changes between a read and its write.
        app.shutdown().await;
        return;
    }
    let token = app.register().await;
    let player = app.get("/api/me", Some(&token)).await.json["player_id"].as_i64().unwrap();
    let (t, plan) = find_ticket(&app, &token, 100, |p| p.game.result().is_some_and(|r| r.prize_cents > 0)).await;
    let prize = plan.game.result().unwrap().prize_cents as i64;
    let id = t["id"].as_str().unwrap().to_string();
    let last = plan.actions.len() - 1;
    app.play(&token, &id, &plan.actions[..last]).await;
    let before = app.balance(&token).await;

    // The test's own transaction holds the player's account row.
    let (conn, account) = hold_account(&app, player).await;
    let action = {
        let (app_url, token, path) = (app.url.clone(), token.clone(), format!("/api/tickets/{id}/actions"));
        let body = action_body(last as u64, plan.actions[last]);
        let client = app.client.clone();
        tokio::spawn(async move {
            client.post(format!("{app_url}{path}")).bearer_auth(token).json(&body).send().await.unwrap()
        })
    };
    // The action has read the balance and its write waits for the row.
    wait_for_a_lock_wait(&app).await;
    change_and_release(conn, account).await;
    let answer = action.await.unwrap();
    assert_eq!(answer.status(), 200);
    let answer: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(answer["ticket"]["phase"], "finished", "{answer}");
    assert_eq!(answer["ticket"]["result"]["prize_cents"], prize, "{answer}");
    assert_eq!(app.balance(&token).await, before + 1 + prize, "the prize credited once, on the changed balance");
    let paid = format!(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM movements WHERE id = 'prize:' || (SELECT id FROM tickets WHERE serial = '{id}')"
    );
    assert_eq!(app.query_i64(&paid).await, 1);
    let actions = format!(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM actions WHERE ticket_id = (SELECT id FROM tickets WHERE serial = '{id}')"
    );
    assert_eq!(app.query_i64(&actions).await, plan.actions.len() as i64);
    app.shutdown().await;
}
}

/// The value of a counter or a histogram's `_sum`/`_count` in `/metrics`.
async fn metric(app: &TestApp, name: &str) -> f64 {
    let text = String::from_utf8(app.get("/metrics", None).await.bytes.to_vec()).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

both! {
/// On PostgreSQL the actions waiting at the same moment share one read,
/// one write and one commit (docs/storage.md, "Actions in batches"). Here
/// twelve players play whole games at once, so batches form
/// (`as_capone_commit_batch_size` sees more requests than commits), and
/// every game is written as played: each action once, each prize once.
/// Then, while the test holds a winner's account row, the winner's last
/// action and eleven first actions of new tickets are sent at once: the
/// batch holding the winning action finds the balance changed, is undone
/// whole, and each of its actions runs again on its own; every action is
/// answered, written once, and the prize credited once on the new balance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_in_one_batch_are_written_once_each_even_when_the_batch_is_undone() {
    let Some(app) = spawn_app().await else { return };
    if app.backend != Backend::Postgres {
        // SQLite's group commit has its own tests (the writer).
        app.shutdown().await;
        return;
    }
    let app = std::sync::Arc::new(app);
    let count_actions = |serial: &str| {
        format!(
            "SELECT CAST(COUNT(*) AS BIGINT) FROM actions WHERE ticket_id = (SELECT id FROM tickets WHERE serial = '{serial}')"
        )
    };
    let (batches_before, actions_before) = (
        metric(&app, "as_capone_commit_batch_size_count").await,
        metric(&app, "as_capone_commit_batch_size_sum").await,
    );
    let mut players = Vec::new();
    for _ in 0..12 {
        let token = app.register().await;
        let t = app.buy(&token).await;
        let plan = search(&t, 100, |_| true).expect("any plan");
        players.push((token, t["serial"].as_str().unwrap().to_string(), plan));
    }
    let start = app.balance(&players[0].0).await;
    let tasks: Vec<_> = players
        .iter()
        .map(|(token, serial, plan)| {
            let (app, token, serial, actions) = (app.clone(), token.clone(), serial.clone(), plan.actions.clone());
            tokio::spawn(async move { app.play(&token, &serial, &actions).await })
        })
        .collect();
    for (task, (token, serial, plan)) in tasks.into_iter().zip(&players) {
        let answers = task.await.unwrap();
        let last = &answers.last().unwrap().json["ticket"];
        assert_eq!(last["phase"], "finished", "{last}");
        let prize = plan.game.result().unwrap().prize_cents as i64;
        assert_eq!(last["result"]["prize_cents"], prize);
        assert_eq!(app.query_i64(&count_actions(serial)).await, plan.actions.len() as i64);
        assert_eq!(app.balance(token).await, start + prize, "the prize credited once");
    }
    let batches = metric(&app, "as_capone_commit_batch_size_count").await - batches_before;
    let written = metric(&app, "as_capone_commit_batch_size_sum").await - actions_before;
    let played: usize = players.iter().map(|p| p.2.actions.len()).sum();
    assert!(written <= played as f64, "{written} actions committed in batches, {played} played");
    assert!(written > batches, "{batches} batches for {written} actions: no commit was shared");

    // A winner's last action, held by the test's lock on its account.
    let token = app.register().await;
    let player = app.get("/api/me", Some(&token)).await.json["player_id"].as_i64().unwrap();
    let (t, plan) = find_ticket(&app, &token, 100, |p| p.game.result().is_some_and(|r| r.prize_cents > 0)).await;
    let prize = plan.game.result().unwrap().prize_cents as i64;
    let serial = t["serial"].as_str().unwrap().to_string();
    let last = plan.actions.len() - 1;
    app.play(&token, &serial, &plan.actions[..last]).await;
    let before = app.balance(&token).await;
    let mut others = Vec::new();
    for (token, _, _) in &players[1..] {
        let t = app.buy(token).await;
        let plan = search(&t, 100, |_| true).expect("any plan");
        others.push((token.clone(), t["serial"].as_str().unwrap().to_string(), plan));
    }
    let (conn, account) = hold_account(&app, player).await;
    let mut sent = vec![{
        let (app, token, serial, body) =
            (app.clone(), token.clone(), serial.clone(), action_body(last as u64, plan.actions[last]));
        tokio::spawn(async move { app.post(&format!("/api/tickets/{serial}/actions"), Some(&token), body).await })
    }];
    for (token, serial, plan) in &others {
        let (app, token, serial, body) = (app.clone(), token.clone(), serial.clone(), action_body(0, plan.actions[0]));
        sent.push(tokio::spawn(async move {
            app.post(&format!("/api/tickets/{serial}/actions"), Some(&token), body).await
        }));
    }
    wait_for_a_lock_wait(&app).await;
    change_and_release(conn, account).await;
    for task in sent {
        let r = task.await.unwrap();
        assert_eq!(r.status, 200, "{}", r.json);
    }
    assert_eq!(app.balance(&token).await, before + 1 + prize, "the prize credited once, on the changed balance");
    assert_eq!(app.query_i64(&count_actions(&serial)).await, plan.actions.len() as i64);
    for (_, serial, _) in &others {
        assert_eq!(app.query_i64(&count_actions(serial)).await, 1, "{serial}: its first action once");
    }
    shutdown_shared(app).await;
}
}

/// Holds `player`'s account row (`FOR UPDATE`) in a transaction of the
/// test's own connection, left open; returns it with the account's id.
async fn hold_account(app: &TestApp, player: i64) -> (sqlx::PgConnection, i64) {
    use sqlx::{Connection, Row};
    let mut conn = sqlx::PgConnection::connect(&app.db_url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut conn).await.unwrap();
    let account: i64 = sqlx::query("SELECT account_id FROM players WHERE id = $1")
        .bind(player)
        .fetch_one(&mut conn)
        .await
        .unwrap()
        .get(0);
    sqlx::query("SELECT balance_cents FROM accounts WHERE id = $1 FOR UPDATE")
        .bind(account)
        .execute(&mut conn)
        .await
        .unwrap();
    (conn, account)
}

/// Waits until a statement of the server waits for a row lock (the held account's).
async fn wait_for_a_lock_wait(app: &TestApp) {
    let waiting = "SELECT CAST(COUNT(*) AS BIGINT) FROM pg_stat_activity \
                   WHERE datname = current_database() AND wait_event_type = 'Lock'";
    let mut waited = 0;
    while app.query_i64(waiting).await == 0 {
        waited += 1;
        assert!(waited < 500, "the action's write never waited for the account's row");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Changes the held account's balance by a cent under the waiting write, and commits.
async fn change_and_release(mut conn: sqlx::PgConnection, account: i64) {
    use sqlx::Connection;
    sqlx::query("UPDATE accounts SET balance_cents = balance_cents + 1 WHERE id = $1")
        .bind(account)
        .execute(&mut conn)
        .await
        .unwrap();
    sqlx::query("COMMIT").execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
}
