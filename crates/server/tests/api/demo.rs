//! The free demo game over HTTP, on both databases (docs/player-api.md
//! "Demo games"): the real duel (art. 3.2) on a schedule of the table on
//! sale, without money, account or ticket; its own token; every action
//! exactly once; a limit per network; gone after a day.

use crate::helpers::*;
use engine::{Action, FairStream, Game, PrizeSchedule};
use serde_json::{Value, json};

/// What a demo game must never change: tickets sold, money, the audit chain.
async fn untouched_counts(app: &TestApp) -> Vec<i64> {
    let mut out = Vec::new();
    for sql in [
        "SELECT COUNT(*) FROM tickets WHERE status <> 'unsold' AND status <> 'printed'",
        "SELECT COUNT(*) FROM ledger_entries",
        "SELECT COUNT(*) FROM movements",
        "SELECT COUNT(*) FROM audit_log",
        "SELECT COUNT(*) FROM ticket_games",
        "SELECT COUNT(*) FROM players",
    ] {
        out.push(app.query_i64(sql).await);
    }
    out
}

async fn start(app: &TestApp) -> (Value, String) {
    let r = app.post("/api/demo", None, json!({})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    (r.json["ticket"].clone(), r.json["token"].as_str().unwrap().to_string())
}

/// The first legal action of a game in this state: a card of the hand, or the deck.
fn next_action(ticket: &Value) -> Action {
    match ticket["phase"].as_str().unwrap() {
        "play" => Action::Play { card: ticket["hand"][0].as_str().unwrap().parse().unwrap() },
        _ => Action::Draw,
    }
}

/// Plays the demo game to its end; every request and its answer's bytes.
async fn play_out(app: &TestApp, id: &str, token: &str, first: &Value) -> Vec<(Value, Vec<u8>)> {
    let mut ticket = first.clone();
    let mut sent = Vec::new();
    while ticket["phase"] != "finished" {
        let seq = ticket["seq"].as_u64().unwrap();
        let mut body = testkit::action_json(seq, next_action(&ticket));
        if seq == 0 {
            body["client_seed"] = json!("demo-player-seed");
        }
        let r = app.post(&format!("/api/demo/{id}/actions"), Some(token), body.clone()).await;
        assert_eq!(r.status, 200, "action {seq}: {}", r.json);
        ticket = r.json["ticket"].clone();
        sent.push((body, r.bytes));
        assert!(sent.len() < 200, "a game ends");
    }
    sent
}

both! {
/// Art. 3.1 and 3.2: a demo game is the real duel on a schedule of the
/// table on sale; it moves no money, sells no ticket and writes no audit
/// entry; its record proves its draws once it is over (guarantee 6).
#[tokio::test]
async fn a_demo_game_is_the_real_duel_without_money_account_or_ticket() {
    let Some(app) = spawn_app().await else { return };
    let player = app.register().await;
    let balance = app.balance(&player).await;
    let before = untouched_counts(&app).await;

    let (ticket, token) = start(&app).await;
    let id = ticket["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("DEMO-") && id.len() == 21, "{id}");
    assert_eq!(ticket["channel"], "demo");
    assert_eq!(ticket["price_cents"], 0);
    assert_eq!((ticket["seq"].as_u64(), ticket["phase"].as_str()), (Some(0), Some("play")));
    assert_eq!(ticket["server_seed"], Value::Null, "secret until the end");
    let commitment = ticket["commitment"].as_str().unwrap().to_string();
    assert_eq!(commitment.len(), 64);
    // Its schedule is one of the table's (art. 3.1).
    let prizes: PrizeSchedule = serde_json::from_value(ticket["prizes_cents"].clone()).unwrap();
    let table = math::PrizeTable::parse_toml(TABLE).unwrap();
    assert!(table.schedules.iter().any(|row| row.prizes == prizes), "{prizes:?}");

    // Its own token reads it; nobody else's does, and it reads nothing else.
    let own = app.get(&format!("/api/demo/{id}"), Some(&token)).await;
    assert_eq!(own.status, 200, "{}", own.json);
    assert_eq!(own.json["ticket"], ticket);
    assert_error(&app.get(&format!("/api/demo/{id}"), None).await, 401, "unauthorized");
    // A token that is no demo game's: 401; another demo game's: 404, as an id that does not exist.
    assert_error(&app.get(&format!("/api/demo/{id}"), Some(&player)).await, 401, "unauthorized");
    let (_, other) = start(&app).await;
    assert_error(&app.get(&format!("/api/demo/{id}"), Some(&other)).await, 404, "not_found");
    assert_error(&app.get(&format!("/api/demo/{id}/record"), Some(&other)).await, 404, "not_found");
    let stranger = testkit::action_json(0, Action::Draw);
    assert_error(&app.post(&format!("/api/demo/{id}/actions"), Some(&other), stranger).await, 404, "not_found");
    assert_error(&app.get("/api/me", Some(&token)).await, 401, "unauthorized");
    assert_error(&app.get(&format!("/api/tickets/{id}"), Some(&token)).await, 401, "unauthorized");
    assert_error(&app.get("/api/demo/DEMO-NOSUCHGAME000000", Some(&token)).await, 404, "not_found");

    let sent = play_out(&app, &id, &token, &ticket).await;
    // Every action again: the very bytes answered the first time.
    for (body, bytes) in &sent {
        let again = app.post(&format!("/api/demo/{id}/actions"), Some(&token), body.clone()).await;
        assert_eq!(&again.bytes, bytes, "a retry gets the stored answer");
    }
    // Another body at an applied seq, or a seq ahead: refused, nothing changes.
    let last: Value = serde_json::from_slice(&sent.last().unwrap().1).unwrap();
    let applied = sent.len() as u64;
    let other_body = if sent[1].0["action"] == "draw" {
        testkit::action_json(1, Action::Play { card: "7".parse().unwrap() })
    } else {
        testkit::action_json(1, Action::Draw)
    };
    assert_error(&app.post(&format!("/api/demo/{id}/actions"), Some(&token), other_body).await, 409, "conflict");
    let ahead = testkit::action_json(applied + 1, Action::Draw);
    assert_error(&app.post(&format!("/api/demo/{id}/actions"), Some(&token), ahead).await, 409, "conflict");
    let now = app.get(&format!("/api/demo/{id}"), Some(&token)).await;
    assert_eq!(now.json["ticket"], last["ticket"]);

    // The record reveals the seed, which matches the commitment, and the
    // engine replays the same draws and the same result from it.
    let record = app.get(&format!("/api/demo/{id}/record"), Some(&token)).await;
    assert_eq!(record.status, 200, "{}", record.json);
    let seed = record::parse_seed(record.json["server_seed"].as_str().unwrap()).unwrap();
    assert_eq!(engine::commitment(&seed), commitment);
    assert_eq!(record.json["client_seed"], "demo-player-seed");
    let mut game = Game::new(prizes);
    let mut stream = FairStream::new(&seed, "demo-player-seed", &id);
    let mut events = Vec::new();
    for (body, _) in &sent {
        let action = match body["card"].as_str() {
            Some(card) => Action::Play { card: card.parse().unwrap() },
            None => Action::Draw,
        };
        game.apply(action, &mut stream, &mut events).unwrap();
    }
    assert_eq!(serde_json::to_value(game.result()).unwrap(), record.json["result"]);
    assert_eq!(record.json["actions"].as_array().unwrap().len(), sent.len());
    assert_eq!(record.json["draws"].as_array().unwrap().len() as u64, game.draws());
    assert_eq!(last["ticket"]["status"], if game.result().unwrap().prize_cents > 0 { "won" } else { "lost" });
    assert_eq!(last["balance_cents"], Value::Null, "no balance: no money moves");

    // Nothing of the ticket, money or audit tables moved; not in the player's list.
    assert_eq!(untouched_counts(&app).await, before);
    assert_eq!(app.balance(&player).await, balance);
    let list = app.get("/api/tickets", Some(&player)).await;
    assert_eq!(list.json["tickets"], json!([]));
    app.shutdown().await;
}
}

both! {
/// An action sent 20 times at once is applied once: every answer is the same bytes.
#[tokio::test]
async fn a_demo_action_sent_20_times_at_once_is_applied_once() {
    let Some(app) = spawn_app().await else { return };
    let app = std::sync::Arc::new(app);
    let (ticket, token) = start(&app).await;
    let id = ticket["id"].as_str().unwrap().to_string();
    let mut body = testkit::action_json(0, next_action(&ticket));
    body["client_seed"] = json!("twenty");
    let path = format!("/api/demo/{id}/actions");
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (app, token, path, body) = (app.clone(), token.clone(), path.clone(), body.clone());
            tokio::spawn(async move { app.post(&path, Some(&token), body).await })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    for a in &answers {
        assert_eq!(a.status, 200, "{}", a.json);
        assert_eq!(a.bytes, answers[0].bytes);
    }
    let now = app.get(&format!("/api/demo/{id}"), Some(&token)).await;
    assert_eq!(now.json["ticket"]["seq"], 1);
    assert_eq!(app.query_i64(&format!("SELECT seq FROM demo_games WHERE id = '{id}'")).await, 1);
    shutdown_shared(app).await;
}
}

both! {
/// Demo games are limited per client network, can be turned off, and are
/// gone a day after they began (removed from the database by the server).
#[tokio::test]
async fn demo_games_are_limited_per_network_turned_off_and_gone_after_a_day() {
    let Some(app) = spawn_app_with(|c| {
        c.demo_games_per_address = 2;
        c.trust_forwarded_for = true;
    })
    .await
    else {
        return;
    };
    let (ticket, token) = start(&app).await;
    start(&app).await;
    let refused = app.post("/api/demo", None, json!({})).await;
    assert_error(&refused, 429, "too_many_attempts");
    assert!(refused.headers.get("retry-after").is_some());
    // Another network still may.
    let other = app.post_from(&app.url, "/api/demo", "198.51.100.7", None, json!({})).await;
    assert_eq!(other.status, 201, "{}", other.json);

    // A day later: its token is no game's any more, then the game is removed by the server's minutely sweep
    // (its first run is at start).
    let id = ticket["id"].as_str().unwrap().to_string();
    app.exec_sql(&format!("UPDATE demo_games SET created_ms = created_ms - 86400001 WHERE id = '{id}'")).await.unwrap();
    assert_error(&app.get(&format!("/api/demo/{id}"), Some(&token)).await, 401, "unauthorized");
    // (The running server's sweep may already have removed it: its first
    // run, at start, can come after these requests on a busy machine.)
    let db = app.stop().await;
    let app = spawn_app_on(db, |c| {
        c.demo_games = false;
        c.trust_forwarded_for = true;
    })
    .await;
    let mut left = 3;
    for _ in 0..100 {
        left = app.query_i64("SELECT COUNT(*) FROM demo_games").await;
        if left == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(left, 2, "the day-old game is removed, the others kept");
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM demo_games WHERE id = '{id}'")).await, 0);
    // Turned off: 404, and nothing is written.
    assert_error(&app.post("/api/demo", None, json!({})).await, 404, "not_found");
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM demo_games").await, 2);
    app.shutdown().await;
}
}
