//! A phone, 360 CSS pixels wide: nothing scrolls sideways on any screen, the
//! zone scratches by touch, the game is played with the keyboard, and the
//! page switches to English (and stays English after a reload).

use crate::game::{assert_table_shows, scratch};
use crate::harness::*;
use crate::webdriver::Screen;
use engine::{Action, Event, Outcome};
use serde_json::json;

/// Text that looks like a key of the strings table, leaked onto the page.
pub const LEAKED_KEYS: &str = r#"
  const leaks = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) { const s = walk.currentNode.textContent.trim(); if (/^[a-z]+(\.[a-z0-9_]+)+$/.test(s)) leaks.push(s); }
  for (const e of document.querySelectorAll('[aria-label]')) { const s = e.getAttribute('aria-label'); if (/^[a-z]+(\.[a-z0-9_]+)+$/.test(s)) leaks.push(s); }
  for (const e of document.querySelectorAll('[data-i18n]')) if (!e.textContent.trim()) leaks.push('empty: ' + e.dataset.i18n);
  return leaks;
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_360_px_phone_by_touch_and_keyboard_in_french_and_english() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, Screen::Phone { width: 360, height: 780 }).await else { return };
    let serial = serial_of_sale(1);
    let plan = find_seed(&serial, "mob", |p| {
        let tie = p.first(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. }));
        let extra = p.first(|e| matches!(e, Event::ExtraGame { .. }));
        matches!((tie, extra), (Some(t), Some(x)) if t < x) && p.game.result().unwrap().prize_cents > 0
    });

    b.open("/?anim=0").await;
    assert_fits(&b, 360, "welcome").await;
    assert_eq!(b.exec(LEAKED_KEYS, json!([])).await, json!([]));
    b.shot("mobile-0-welcome").await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    assert_fits(&b, 360, "home").await;
    b.shot("mobile-1-home").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    b.choose_seed(&plan.client_seed).await;
    assert_fits(&b, 360, "scratch").await;
    assert_eq!(b.exec(LEAKED_KEYS, json!([])).await, json!([]));
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot("mobile-2-scratch").await;
    scratch(&b, "touch").await;

    // Every card is at least 34 px wide, and the eight fit side by side.
    let widths = b
        .exec(
            "return [...document.querySelectorAll('#player-hand .card')].map(c => c.getBoundingClientRect().width);",
            json!([]),
        )
        .await;
    let widths: Vec<f64> = widths.as_array().unwrap().iter().map(|w| w.as_f64().unwrap()).collect();
    assert_eq!(widths.len(), 8);
    assert!(widths.iter().all(|&w| w >= 34.0), "cards too small to touch: {widths:?}");

    // The keyboard: the arrow keys move along the hand (one Tab stop), Enter plays the focused card.
    let Action::Play { card: first } = plan.actions[0] else { unreachable!() };
    b.exec("document.querySelector('#player-hand button').focus()", json!([])).await;
    let steps = engine::Rank::ALL.iter().position(|&r| r == first).unwrap();
    b.keys(&"\u{E014}".repeat(steps)).await;
    let focused = b.exec("return document.activeElement.dataset.card", json!([])).await;
    assert_eq!(focused, first.as_str(), "the Right arrow walks the hand in order");
    b.keys("\u{E007}").await;
    b.wait_seq(1).await;
    assert_table_shows(&b, &plan.events[0], 0).await;
    // Announced on the next animation frame (dom.js `announce`).
    b.wait_for("document.getElementById('live').textContent.startsWith('Pli 1 :')", "the trick announced").await;

    let first_tie = plan.first(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. })).unwrap();
    let extra_duel = plan.first(|e| matches!(e, Event::GameOver { next: engine::Next::ExtraDraw, .. })).unwrap();
    for i in 1..plan.actions.len() {
        let target = match plan.actions[i] {
            Action::Play { card } => format!("#player-hand button[data-card='{}']", card.as_str()),
            Action::Draw => "#deck".to_string(),
        };
        b.exec("document.querySelector(arguments[0]).focus()", json!([target])).await;
        b.keys("\u{E007}").await;
        b.wait_seq(i + 1).await;
        assert_table_shows(&b, &plan.events[i], i).await;
        if i == 2 {
            assert_fits(&b, 360, "duel").await;
            b.exec("document.getElementById('table').scrollIntoView({block: 'start'})", json!([])).await;
            b.shot("mobile-3-duel").await;
        }
        if i == first_tie {
            assert_fits(&b, 360, "tie").await;
            b.exec("document.getElementById('table').scrollIntoView({block: 'start'})", json!([])).await;
            b.shot("mobile-4-tie").await;
        }
        if i == extra_duel {
            assert_fits(&b, 360, "extra duel").await;
            b.exec("document.getElementById('table').scrollIntoView({block: 'start'})", json!([])).await;
            b.shot("mobile-5-extra-duel").await;
        }
    }
    b.wait_for("!document.getElementById('result').hidden", "the result").await;
    assert_fits(&b, 360, "result").await;
    b.exec("document.getElementById('result').scrollIntoView({block: 'end'})", json!([])).await;
    b.shot("mobile-6-result").await;

    b.click("#verify-btn").await;
    assert_eq!(b.wait_verdict().await, "true");
    assert_fits(&b, 360, "verify").await;
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot("mobile-7-verify").await;

    // English, kept after a reload; no key of the strings table shows.
    b.click("#lang").await;
    b.wait_for("document.documentElement.lang === 'en'", "English").await;
    assert_eq!(b.text("#verdict").await, "Honest game: the cards could not change after you bought the ticket.");
    b.click("#verify-back").await;
    b.wait_for("document.body.dataset.view === 'game' && document.body.dataset.state === 'idle'", "the ticket").await;
    b.refresh().await;
    b.wait_for("document.body.dataset.state === 'idle' && !document.getElementById('result').hidden", "the result")
        .await;
    assert_eq!(b.exec("return document.documentElement.lang", json!([])).await, "en");
    assert!(b.text("#result-title").await.contains("You won"));
    assert!(b.text("#game-no").await.starts_with("Extra game"));
    assert_eq!(b.exec(LEAKED_KEYS, json!([])).await, json!([]));
    assert_fits(&b, 360, "result in English").await;
    b.exec("document.getElementById('table').scrollIntoView({block: 'start'})", json!([])).await;
    b.shot("mobile-8-result-en").await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}
