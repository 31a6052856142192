//! Guarantee 3: wallet arithmetic, a ledger that sums to zero, and the
//! hash-chained audit log.

use crate::helpers::*;
use engine::Phase;
use serde_json::json;

/// Plays a ticket to the end over HTTP with the lowest card each time,
/// sending no client seed (the server picks one).
pub async fn play_out(app: &TestApp, token: &str, ticket: &serde_json::Value) -> serde_json::Value {
    play_out_with(app, token, ticket, None).await
}

/// Plays a ticket to the end over HTTP with the lowest card each time;
/// `client_seed` goes with the first action (`seq` 0) when given.
pub async fn play_out_with(
    app: &TestApp,
    token: &str,
    ticket: &serde_json::Value,
    client_seed: Option<&str>,
) -> serde_json::Value {
    let id = ticket["id"].as_str().unwrap();
    let mut t = ticket.clone();
    while t["phase"] != "finished" {
        let seq = t["seq"].as_u64().unwrap();
        let mut body = if t["phase"] == Phase::Play.name() {
            json!({"seq": seq, "action": "play", "card": t["hand"][0]})
        } else {
            json!({"seq": seq, "action": "draw"})
        };
        if let (0, Some(s)) = (seq, client_seed) {
            body["client_seed"] = json!(s);
        }
        let r = app.post(&format!("/api/tickets/{id}/actions"), Some(token), body).await;
        assert_eq!(r.status, 200, "{}", r.json);
        t = r.json["ticket"].clone();
    }
    t
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarantee_3_balance_is_start_minus_prices_plus_prizes_and_the_ledger_sums_to_zero() {
    let Some(app) = spawn_app().await else { return };
    let players = [app.register().await, app.register().await, app.register().await];
    for p in &players {
        assert_eq!(app.balance(p).await, START, "the configured play money");
    }
    let mut expected = [START; 3];
    for round in 0..6 {
        for (i, p) in players.iter().enumerate() {
            let t = app.buy(p).await;
            expected[i] -= 300;
            if round % 3 != 2 {
                let end = play_out(&app, p, &t).await;
                expected[i] += end["result"]["prize_cents"].as_i64().unwrap();
            }
        }
    }
    for (i, p) in players.iter().enumerate() {
        assert_eq!(app.balance(p).await, expected[i], "player {i}");
    }
    let ledger = app.app.store().check_ledger().await.unwrap();
    assert!(ledger.is_sound(), "{ledger:?}");
    assert_eq!(ledger.sum_cents, 0);
    // 3 starting balances + 18 sales + the prizes, two entries each.
    assert!(ledger.entries >= 2 * (3 + 18));
    let audit = app.sealed_audit_check().await;
    assert_eq!(audit.unsealed, 0, "{audit:?}");
    assert_eq!(audit.first_broken, None);
    // blocks_published x1 (the start-up emission's two blocks), player_created x3,
    // ticket_sold x18, ticket_finished x12
    assert_eq!(audit.entries, 1 + 3 + 18 + 12);
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_chain_check_finds_a_tampered_entry() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let t = app.buy(&token).await;
    play_out(&app, &token, &t).await;
    app.buy(&token).await;
    let store = app.app.store().clone();
    let before = app.sealed_audit_check().await;
    assert_eq!(before.unsealed, 0, "{before:?}");
    assert_eq!(before.first_broken, None);
    // The log refuses updates and deletes...
    assert!(app.exec_sql("UPDATE audit_log SET data_json = '{}' WHERE id = 2").await.is_err());
    assert!(app.exec_sql("DELETE FROM audit_log WHERE id = 2").await.is_err());
    // ...and someone who drops the guard is caught by the chain.
    let drop_guard = match app.backend {
        Backend::Sqlite => "DROP TRIGGER audit_log_no_update",
        Backend::Postgres => "DROP TRIGGER audit_log_no_update ON audit_log",
    };
    app.exec_sql(drop_guard).await.unwrap();
    assert_eq!(app.exec_sql("UPDATE audit_log SET data_json = '{\"serial\":\"forged\"}' WHERE id = 2").await, Ok(1));
    let check = store.check_audit_chain().await.unwrap();
    assert_eq!(check.first_broken, Some(2));
    drop(store);
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarantee_3_a_player_balance_cannot_go_negative_even_in_sql() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let store = app.app.store().clone();
    let r = app.exec_sql("UPDATE accounts SET balance_cents = -1 WHERE kind = 'player'").await;
    assert!(r.is_err(), "the CHECK constraint refuses a negative player balance");
    assert_eq!(app.balance(&token).await, START);
    assert!(store.check_ledger().await.unwrap().is_sound());
    drop(store);
    app.shutdown().await;
}
}

both! {
/// Guarantee 3: a balance changed behind the server's back (here by hand in
/// SQL) is never overwritten with a stale one. PostgreSQL reads it under its
/// lock; the SQLite writer's memory is stale, its guarded write finds the
/// row changed, and the batch is decided again from the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarantee_3_a_balance_changed_behind_the_servers_back_is_never_overwritten() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    assert_eq!(app.balance(&token).await, START);
    assert_eq!(
        app.exec_sql("UPDATE accounts SET balance_cents = balance_cents + 1000 WHERE kind = 'player'").await,
        Ok(1)
    );
    // The purchase debits the balance as it is in the database. PostgreSQL
    // reads it in the purchase's transaction. The SQLite writer first
    // decides from its memory (START): the guarded debit then finds the row
    // changed, the batch is rolled back, the memory dropped, and the
    // purchase decided again from the database (store::sqlite::run_batch).
    // Either way the change made behind the server's back is kept.
    let r = app.post("/api/tickets", Some(&token), json!({})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["balance_cents"], START + 1000 - 300);
    let tickets = app.get("/api/tickets", Some(&token)).await;
    assert_eq!(tickets.json["tickets"].as_array().unwrap().len(), 1);
    assert_eq!(app.balance(&token).await, START + 1000 - 300);
    app.shutdown().await;
}
}
