//! Complete games over HTTP: every phase, ties, Extra games, wins, losses.

use crate::helpers::*;
use engine::{DeckFor, Event, Next, Outcome};
use serde_json::json;

/// Plays a found plan over HTTP and checks every answer against the engine.
async fn play_and_check(app: &TestApp, token: &str, ticket: &serde_json::Value, plan: &Foreseen) -> serde_json::Value {
    let id = ticket["id"].as_str().unwrap();
    let answers = app.play(token, id, &plan.actions).await;
    let mut last = serde_json::Value::Null;
    for (i, (r, ev)) in answers.iter().zip(&plan.events).enumerate() {
        assert_eq!(r.json["events"], serde_json::to_value(ev).unwrap(), "events of action {i}");
        assert_eq!(r.json["ticket"]["seq"], i as u64 + 1);
        last = r.json["ticket"].clone();
    }
    assert_eq!(last["phase"], "finished");
    let result = plan.game.result().unwrap();
    assert_eq!(last["result"], json!({"tricks": result.tricks, "prize_cents": result.prize_cents}));
    // Guarantee 6: the seed is revealed once finished, and matches the commitment.
    assert_eq!(last["server_seed"], hex::encode(SEED));
    assert_eq!(last["commitment"], engine::commitment(&SEED));
    last
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarantee_1_a_trick_tie_then_its_deck_draw_over_http() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let (t, plan) = find_ticket(&app, &token, 10, |p| {
        all_events(p).any(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. }))
    })
    .await;
    // The tie puts the ticket in tie_break: only a draw is allowed there.
    let tie_at = plan
        .events
        .iter()
        .position(|ev| matches!(ev.last(), Some(Event::Trick { outcome: Outcome::Tie, .. })))
        .unwrap();
    let id = t["id"].as_str().unwrap();
    let before = app.play(&token, id, &plan.actions[..=tie_at]).await;
    assert_eq!(before.last().unwrap().json["ticket"]["phase"], "tie_break");
    let r = app
        .post(
            &format!("/api/tickets/{id}/actions"),
            Some(&token),
            json!({"seq": tie_at + 1, "action": "play", "card": "A"}),
        )
        .await;
    assert_error(&r, 422, "invalid_action");
    for (i, a) in plan.actions.iter().enumerate().skip(tie_at + 1) {
        let r = app.post(&format!("/api/tickets/{id}/actions"), Some(&token), action_body(i as u64, *a)).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.json["events"], serde_json::to_value(&plan.events[i]).unwrap());
    }
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn art_3_2_5_an_extra_game_is_played_to_the_end_over_http() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let (t, plan) =
        find_ticket(&app, &token, 20, |p| all_events(p).any(|e| matches!(e, Event::ExtraGame { game: 2 }))).await;
    assert!(all_events(&plan).any(|e| matches!(e, Event::GameOver { tricks: 4, next: Next::ExtraDraw })));
    assert!(all_events(&plan).any(|e| matches!(e, Event::Deck { for_: DeckFor::Extra, .. })));
    let id = t["id"].as_str().unwrap();
    // Up to the Extra duel: the phase is extra_draw.
    let at = plan
        .events
        .iter()
        .position(|ev| ev.iter().any(|e| matches!(e, Event::GameOver { next: Next::ExtraDraw, .. })))
        .unwrap();
    let answers = app.play(&token, id, &plan.actions[..=at]).await;
    assert_eq!(answers.last().unwrap().json["ticket"]["phase"], "extra_draw");
    let r = app.get(&format!("/api/tickets/{id}"), Some(&token)).await;
    assert_eq!(r.json["ticket"]["phase"], "extra_draw");
    assert_eq!(r.json["ticket"]["server_seed"], serde_json::Value::Null, "secret until finished");
    let rest: Vec<_> = plan.actions[at + 1..].to_vec();
    let mut game_two_seen = false;
    for (k, a) in rest.iter().enumerate() {
        let seq = at + 1 + k;
        let r = app.post(&format!("/api/tickets/{id}/actions"), Some(&token), action_body(seq as u64, *a)).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.json["events"], serde_json::to_value(&plan.events[seq]).unwrap());
        game_two_seen |= r.json["ticket"]["game"] == 2;
    }
    assert!(game_two_seen, "the ticket shows game 2 during the Extra game");
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wins_and_losses_are_played_to_the_end_and_credited() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let (won, plan) = find_ticket(&app, &token, 10, |p| p.game.result().unwrap().prize_cents > 0).await;
    let before = app.balance(&token).await;
    let last = play_and_check(&app, &token, &won, &plan).await;
    let prize = plan.game.result().unwrap().prize_cents as i64;
    assert_eq!(app.balance(&token).await, before + prize, "guarantee 3: the prize is credited");
    assert!(last["result"]["tricks"].as_u64().unwrap() >= 5);

    let (lost, plan) = find_ticket(&app, &token, 10, |p| p.game.result().unwrap().tricks <= 3).await;
    let before = app.balance(&token).await;
    let last = play_and_check(&app, &token, &lost, &plan).await;
    assert_eq!(last["result"]["prize_cents"], 0);
    assert_eq!(app.balance(&token).await, before);

    // An Extra duel lost: the ticket loses with 4 tricks (art. 3.2.5.3).
    let (t, plan) = find_ticket(&app, &token, 20, |p| {
        matches!(
            p.events.last().and_then(|e| e.first()),
            Some(Event::Deck { for_: DeckFor::Extra, outcome: Outcome::Lost, .. })
        )
    })
    .await;
    let last = play_and_check(&app, &token, &t, &plan).await;
    assert_eq!(last["result"], json!({"tricks": 4, "prize_cents": 0}));

    // Finished: any further action is refused with 409 (wrong seq) or 422.
    let id = t["id"].as_str().unwrap();
    let seq = last["seq"].as_u64().unwrap();
    let r = app.post(&format!("/api/tickets/{id}/actions"), Some(&token), json!({"seq": seq, "action": "draw"})).await;
    assert_error(&r, 422, "invalid_action");
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tickets_are_listed_newest_first_and_shown_as_the_contract_says() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let a = app.buy(&token).await;
    let b = app.buy(&token).await;
    let keys: Vec<&str> = a.as_object().unwrap().keys().map(String::as_str).collect();
    for k in [
        "id",
        "serial",
        "price_cents",
        "prizes_cents",
        "seq",
        "phase",
        "game",
        "hand",
        "capone_cards_left",
        "tricks_won",
        "tricks_lost",
        "result",
        "commitment",
        "client_seed",
        "server_seed",
        "channel",
        "status",
    ] {
        assert!(keys.contains(&k), "ticket has {k}");
    }
    assert_eq!(a["price_cents"], 300);
    assert_eq!(a["hand"], json!(["7", "8", "9", "10", "J", "Q", "K", "A"]));
    assert_eq!(a["phase"], "play");
    assert_eq!(a["game"], 1);
    assert_eq!(a["capone_cards_left"], 8);
    assert_eq!(a["commitment"], engine::commitment(&SEED));
    assert_eq!(a["server_seed"], serde_json::Value::Null);
    // docs/contract.md Fairness 2: no client seed before the first action; an
    // online ticket is in play from its purchase.
    assert_eq!(a["client_seed"], serde_json::Value::Null);
    assert_eq!(a["channel"], "online");
    assert_eq!(a["status"], "in_play");
    let list = app.get("/api/tickets", Some(&token)).await;
    let ids: Vec<&str> = list.json["tickets"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![b["id"].as_str().unwrap(), a["id"].as_str().unwrap()]);
    let one = app.get(&format!("/api/tickets/{}", a["id"].as_str().unwrap()), Some(&token)).await;
    assert_eq!(one.json["ticket"], a);
    // The first action brings the player's seed, or the server picks a random hex one.
    let id_a = a["id"].as_str().unwrap();
    let id_b = b["id"].as_str().unwrap();
    let r = app
        .post(
            &format!("/api/tickets/{id_a}/actions"),
            Some(&token),
            json!({"seq": 0, "action": "play", "card": "7", "client_seed": "first"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ticket"]["client_seed"], "first");
    let r = app
        .post(&format!("/api/tickets/{id_b}/actions"), Some(&token), json!({"seq": 0, "action": "play", "card": "7"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let random = r.json["ticket"]["client_seed"].as_str().unwrap();
    assert!(random.len() == 32 && random.bytes().all(|c| c.is_ascii_hexdigit()), "a random hex seed: {random}");
    let one = app.get(&format!("/api/tickets/{id_a}"), Some(&token)).await;
    assert_eq!(one.json["ticket"]["client_seed"], "first");
    assert_eq!(one.json["ticket"]["seq"], 1);
    assert_eq!(one.json["ticket"]["status"], "in_play");
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sales_move_to_the_next_block_and_stop_when_all_are_sold() {
    let Some(app) = spawn_app_with(|c| {
        c.initial_blocks = 2;
        c.start_balance_cents = 300 * 250;
    })
    .await
    else {
        return;
    };
    let token = app.register().await;
    let mut serials = std::collections::HashSet::new();
    for i in 0..200 {
        let t = app.buy(&token).await;
        let s = t["serial"].as_str().unwrap().to_string();
        assert!(s.starts_with(if i < 100 { "TST-001-00001-" } else { "TST-001-00002-" }), "{s} at sale {i}");
        assert!(serials.insert(s));
    }
    // All sold: 503 sold_out (docs/contract.md).
    let r = app.post("/api/tickets", Some(&token), json!({})).await;
    assert_error(&r, 503, "sold_out");
    assert_eq!(app.balance(&token).await, 300 * 250 - 300 * 200, "a refused sale debits nothing");
    app.shutdown().await;
}
}
