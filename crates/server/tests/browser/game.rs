//! A whole ticket played by clicking, on a desktop window: register, buy,
//! choose a client seed, scratch with the mouse, a tied trick settled at the
//! deck, an Extra duel won, an Extra game, the prize credited, the check.

use crate::harness::*;
use crate::webdriver::Screen;
use engine::{Action, Event, Outcome};
use serde_json::json;

/// Checks that the middle of the table shows the cards of the action's last
/// trick or deck draw, as the engine predicted.
pub async fn assert_table_shows(b: &Browser, events: &[Event], i: usize) {
    if let Some((p, c)) = shown_after(events) {
        let shown = b
            .exec(
                "const q = s => { const e = document.querySelector(s); return e ? e.dataset.card : null; };
                 return [q('#slot-player .card:not(.tied)'), q('#slot-capone .card:not(.tied)')];",
                json!([]),
            )
            .await;
        assert_eq!(shown, json!([p, c]), "action {i}: the table shows the server's cards ({events:?})");
    }
}

/// Scratches the zone with a pointer, row after row.
pub async fn scratch(b: &Browser, pointer: &str) {
    let r = b
        .exec(
            "const c = document.getElementById('scratch-canvas'); c.scrollIntoView({block: 'center'});
             const r = c.getBoundingClientRect(); return [r.left, r.top, r.width, r.height];",
            json!([]),
        )
        .await;
    let [x, y, w, h] = [0, 1, 2, 3].map(|i| r[i].as_f64().unwrap());
    let rows = 7;
    for k in 0..rows {
        let yy = y + h * (0.5 + k as f64) / rows as f64;
        let pts: Vec<(f64, f64)> = (0..=8).map(|j| (x + 4.0 + (w - 8.0) * j as f64 / 8.0, yy)).collect();
        b.stroke(pointer, &pts).await;
        let done = b.exec("return document.getElementById('scratch').classList.contains('revealed');", json!([])).await;
        if done == true {
            return;
        }
    }
    b.wait_for("document.getElementById('scratch').classList.contains('revealed')", "the scratch zone to be revealed")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_ticket_by_clicking_with_a_tie_an_extra_duel_and_a_prize() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1280, height: 900 }).await else { return };
    let serial = serial_of_sale(1);
    let plan = find_seed(&serial, "desk", |p| {
        let tie = p.first(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. }));
        let extra = p.first(|e| matches!(e, Event::ExtraGame { .. }));
        matches!((tie, extra), (Some(t), Some(x)) if t < x) && p.game.result().unwrap().prize_cents > 0
    });

    // Animations on (the default) for the first tricks, then off in the settings.
    b.open("/").await;
    assert_eq!(b.exec("return document.documentElement.dataset.anim", json!([])).await, "on");
    assert!(b.text("#welcome h1").await.contains("As Capone"));
    b.shot("desktop-0-welcome").await;
    b.type_into("#name", "Eliot").await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    b.shot("desktop-1-home").await;
    b.click("#buy").await;
    b.wait_for("document.body.dataset.view === 'game'", "the ticket").await;
    b.wait_seq(0).await;
    assert_eq!(b.text("#game-title").await, format!("Ticket {serial}"), "the first sale's serial");
    assert_eq!(b.text("#balance").await.replace(['\u{202f}', '\u{a0}'], " "), "97,00 €");
    let token = b.token().await;
    // The seed the page drew, shown before the first card with the
    // ticket's commitment; the player types the plan's instead.
    let bought = srv.get(&format!("/api/tickets/{serial}"), &token).await;
    assert_eq!(bought["ticket"]["client_seed"], serde_json::Value::Null);
    let commitment = bought["ticket"]["commitment"].as_str().unwrap();
    assert_eq!(b.exec("return document.getElementById('ticket-commitment').dataset.full", json!([])).await, commitment);
    let short = b.text("#ticket-commitment").await;
    let (head, tail) = short.split_once('…').expect("the commitment in short");
    assert!(head.len() >= 8 && commitment.starts_with(head) && commitment.ends_with(tail), "{short} for {commitment}");
    b.choose_seed(&plan.client_seed).await;

    // Before the zone is scratched, the cards do not play.
    b.shot("desktop-2-scratch").await;
    b.click("#player-hand button[data-card='A']").await;
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    assert_eq!(b.exec("return document.getElementById('view-game').dataset.seq", json!([])).await, "0");
    scratch(&b, "mouse").await;
    // The revealed schedule is the ticket's own.
    let t = srv.get(&format!("/api/tickets/{serial}"), &token).await;
    let shown = b
        .exec("return Object.fromEntries([...document.querySelectorAll('#prizes tr')].map(r => [r.dataset.tricks, Number(r.querySelector('td').dataset.cents)]));", json!([]))
        .await;
    assert_eq!(shown, t["ticket"]["prizes_cents"], "the scratch zone reveals the ticket's prizes");
    assert_eq!(t["ticket"]["client_seed"], serde_json::Value::Null, "no seed before the first card");
    let prize = prize_of(&t["ticket"], plan.game.result().unwrap().tricks);
    assert!(prize > 0, "a winning ticket");

    let first_tie = plan.first(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. })).unwrap();
    let extra_duel = plan.first(|e| matches!(e, Event::GameOver { next: engine::Next::ExtraDraw, .. })).unwrap();
    let extra_game = plan.first(|e| matches!(e, Event::ExtraGame { .. })).unwrap();
    for (i, a) in plan.actions.iter().enumerate() {
        match a {
            Action::Play { card } => b.click(&format!("#player-hand button[data-card='{}']", card.as_str())).await,
            Action::Draw => b.click("#deck").await,
        }
        b.wait_seq(i + 1).await;
        assert_table_shows(&b, &plan.events[i], i).await;
        if i == 0 {
            // The seed went with the first card; it is shown read-only now.
            let t = srv.get(&format!("/api/tickets/{serial}"), &token).await;
            assert_eq!(t["ticket"]["client_seed"], plan.client_seed.as_str());
            assert_eq!(b.exec("return document.getElementById('seed-form').hidden", json!([])).await, true);
            assert_eq!(b.text("#ticket-seed-shown").await, plan.client_seed);
        }
        if i == 2 {
            b.shot("desktop-3-duel").await;
            b.click("#settings > summary").await;
            b.click("#anim-toggle").await;
            assert_eq!(b.exec("return document.documentElement.dataset.anim", json!([])).await, "off");
            assert_eq!(b.exec("return localStorage.getItem('asc.anim')", json!([])).await, "0", "the setting is kept");
            b.click("#settings > summary").await;
        }
        if i == first_tie {
            let phase = b.exec("return document.getElementById('view-game').dataset.phase", json!([])).await;
            assert_eq!(phase, "tie_break");
            assert!(b.text("#prompt").await.contains("paquet"), "the page asks for the deck");
            let deck_active =
                b.exec("return document.getElementById('deck').classList.contains('active')", json!([])).await;
            assert_eq!(deck_active, true);
            // Announced on the next animation frame (dom.js `announce`).
            b.wait_for("document.getElementById('live').textContent.includes('Égalité')", "the tie announced").await;
            b.shot("desktop-4-tie").await;
        }
        if i == first_tie + 1 {
            // The deck draw shows both cards, beside the tied trick.
            let tied = b.exec("return document.querySelectorAll('#trick .card.tied').length", json!([])).await;
            assert_eq!(tied, 2, "the tied trick stays visible beside the deck draw");
            b.shot("desktop-5-tie-deck").await;
        }
        if i == extra_duel {
            assert_eq!(
                b.exec("return document.getElementById('view-game').dataset.phase", json!([])).await,
                "extra_draw"
            );
            assert!(b.text("#prompt").await.contains("Extra"));
            b.shot("desktop-6-extra-duel").await;
        }
        if i == extra_game {
            assert_eq!(b.exec("return document.getElementById('view-game').dataset.game", json!([])).await, "2");
            assert_eq!(b.text("#game-no").await, "Partie Extra 1");
            b.shot("desktop-7-extra-game").await;
        }
    }

    // The result, and the prize credited to the balance.
    b.wait_for("!document.getElementById('result').hidden", "the result").await;
    let r = plan.game.result().unwrap();
    assert_eq!(b.exec("return document.getElementById('result').dataset.prize", json!([])).await, prize.to_string());
    assert_eq!(
        b.exec("return document.getElementById('result').dataset.tricks", json!([])).await,
        r.tricks.to_string()
    );
    let want = START - 300 + prize;
    assert_eq!(b.exec("return document.getElementById('balance').dataset.cents", json!([])).await, want.to_string());
    let me = srv.get("/api/me", &token).await;
    assert_eq!(me["balance_cents"], want, "the server credited the prize the page shows");
    b.shot("desktop-8-result").await;

    // Check this game: the browser recomputes every draw.
    b.click("#verify-btn").await;
    b.wait_verdict().await;
    assert_eq!(b.exec("return document.getElementById('verdict').dataset.valid", json!([])).await, "true");
    let rows = b.exec("return document.querySelectorAll('#verify-draws tbody tr.ok').length", json!([])).await;
    let draws = plan.events.iter().flatten().filter(|e| matches!(e, Event::Trick { .. } | Event::Deck { .. })).count();
    assert_eq!(rows, draws as u64, "one checked row per draw");
    b.shot("desktop-9-verify").await;

    // Back home: the ticket is listed as won.
    b.click("#verify-back").await;
    b.wait_for("document.body.dataset.view === 'game' && document.body.dataset.state === 'idle'", "the ticket again")
        .await;
    b.click("#home-btn").await;
    b.wait_for("document.querySelector('#tickets li[data-phase=finished]')", "the ticket list").await;
    assert!(b.text("#tickets").await.contains("Gagné"));
    b.close().await;
    srv.app.shutdown().await.unwrap();
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "browser screenshots: {}", artifacts_dir().display());
}
