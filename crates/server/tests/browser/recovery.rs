//! Reloads and lost connections: the page resumes exactly where the server
//! has the ticket, and a failed request is retried with the same `seq`.

use crate::game::assert_table_shows;
use crate::harness::*;
use crate::webdriver::Screen;
use engine::{Action, Event, Next, Outcome};
use serde_json::{Value, json};

/// Makes the page's next POST to `/actions` fail: `lose_answer` sends it
/// and then drops the answer (as when the connection dies on the way
/// back); otherwise it fails before anything is sent. Every action body
/// the page sends is logged in `window.__sent`.
pub const FLAKY_FETCH: &str = r#"
  const loseAnswer = arguments[0];
  window.__sent = window.__sent || [];
  window.__failNext = true;
  if (!window.__realFetch) window.__realFetch = window.fetch;
  window.fetch = async (url, init) => {
    if (String(url).endsWith('/actions')) {
      window.__sent.push(init.body);
      if (window.__failNext) {
        window.__failNext = false;
        if (loseAnswer) { await window.__realFetch(url, init); }
        throw new TypeError('Failed to fetch');
      }
    }
    return window.__realFetch(url, init);
  };
"#;

async fn click_action(b: &Browser, a: &Action) {
    match a {
        Action::Play { card } => b.click(&format!("#player-hand button[data-card='{}']", card.as_str())).await,
        Action::Draw => b.click("#deck").await,
    }
}

async fn phase(b: &Browser) -> Value {
    b.exec("return document.getElementById('view-game').dataset.phase", json!([])).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reloads_lost_answers_and_other_tabs_resume_exactly_where_the_server_is() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1024, height: 800 }).await else { return };
    let serial = serial_of_sale(1);
    let plan = find_seed(&serial, "rec", |p| {
        let tie = p.first(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. }));
        let extra = p.first(|e| matches!(e, Event::GameOver { next: Next::ExtraDraw, .. }));
        let extra_game = p.first(|e| matches!(e, Event::ExtraGame { .. }));
        matches!((tie, extra, extra_game), (Some(t), Some(x), Some(_)) if t + 2 < x && t > 1)
    });
    let tie_at = plan.first(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. })).unwrap();
    let extra_at = plan.first(|e| matches!(e, Event::GameOver { next: Next::ExtraDraw, .. })).unwrap();
    let extra_game_at = plan.first(|e| matches!(e, Event::ExtraGame { .. })).unwrap();

    b.open("/?anim=0").await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    b.choose_seed(&plan.client_seed).await;
    let token = b.token().await;

    // Reload before anything is played: the same ticket, nothing spent
    // twice, and the seed typed is still the one the first card will carry.
    b.refresh().await;
    b.wait_seq(0).await;
    // The balance comes with its own request (GET /api/me), beside the ticket's.
    b.wait_for("document.getElementById('balance').dataset.cents === '9700'", "the balance, debited once").await;
    assert_eq!(b.exec("return document.getElementById('ticket-seed').value", json!([])).await, plan.client_seed);

    // The keyboard reveals the prizes: focus the button, press Enter.
    b.exec("document.getElementById('reveal').focus()", json!([])).await;
    b.keys("\u{E007}").await;
    b.wait_for("document.getElementById('scratch').classList.contains('revealed')", "the reveal").await;
    let focused = b.exec("return document.activeElement.closest('#player-hand') !== null", json!([])).await;
    assert_eq!(focused, true, "after the reveal the keyboard is on the cards");

    let mut i = 0;
    // Up to the tie, then reload in the middle of the tie-break.
    while i <= tie_at {
        click_action(&b, &plan.actions[i]).await;
        i += 1;
        b.wait_seq(i).await;
    }
    b.refresh().await;
    b.wait_seq(i).await;
    assert_eq!(phase(&b).await, "tie_break");
    assert_table_shows(&b, &plan.events[tie_at], tie_at).await;
    assert!(b.text("#prompt").await.contains("Égalité"), "the reloaded page still asks for the deck");
    let hist = b.exec("return document.querySelectorAll('#history li:not(.empty)').length", json!([])).await;
    assert_eq!(hist, tie_at as u64 + 1, "the tricks already played are shown again");
    assert_eq!(
        b.exec("return document.getElementById('scratch').classList.contains('revealed')", json!([])).await,
        true
    );

    // The deck click's answer is lost: the page asks again with the same seq.
    b.exec(FLAKY_FETCH, json!([true])).await;
    click_action(&b, &plan.actions[i]).await;
    i += 1;
    b.wait_seq(i).await;
    assert_table_shows(&b, &plan.events[i - 1], i - 1).await;
    let sent = b.exec("return window.__sent", json!([])).await;
    let sent: Vec<Value> =
        sent.as_array().unwrap().iter().map(|s| serde_json::from_str(s.as_str().unwrap()).unwrap()).collect();
    assert_eq!(sent.len(), 2, "one failed send, one retry: {sent:?}");
    assert_eq!(sent[0], sent[1], "the retry is the same request");
    assert_eq!(sent[0], action_json(i as u64 - 1, plan.actions[i - 1]), "with the ticket's seq");

    // A request that never leaves: retried too.
    b.exec(FLAKY_FETCH, json!([false])).await;
    click_action(&b, &plan.actions[i]).await;
    i += 1;
    b.wait_seq(i).await;
    assert_table_shows(&b, &plan.events[i - 1], i - 1).await;
    let sent = b.exec("return window.__sent.length", json!([])).await;
    assert_eq!(sent, 4);

    // Up to the Extra duel, then reload there.
    while i <= extra_at {
        click_action(&b, &plan.actions[i]).await;
        i += 1;
        b.wait_seq(i).await;
    }
    b.refresh().await;
    b.wait_seq(i).await;
    assert_eq!(phase(&b).await, "extra_draw");
    assert!(b.text("#prompt").await.contains("Extra"));
    assert_eq!(b.exec("return document.getElementById('deck').classList.contains('active')", json!([])).await, true);

    // Leave for the home page and come back through "my tickets".
    b.click("#brand").await;
    b.wait_for("document.querySelector('#tickets li[data-phase=extra_draw] a')", "the ticket in the list").await;
    b.click("#tickets li[data-phase=extra_draw] a").await;
    b.wait_seq(i).await;

    while i <= extra_game_at {
        click_action(&b, &plan.actions[i]).await;
        i += 1;
        b.wait_seq(i).await;
    }

    // Another tab plays the next card: this page's next click is refused
    // (409) and the page reloads the ticket as the server has it.
    srv.post(&format!("/api/tickets/{serial}/actions"), Some(&token), &action_json(i as u64, plan.actions[i])).await;
    b.expect_http_error(&format!("/api/tickets/{serial}/actions"), 409);
    let other_card = match plan.actions[i] {
        Action::Play { card } => engine::Rank::ALL.into_iter().find(|&r| r != card).unwrap(),
        Action::Draw => unreachable!("an Extra game starts with a card"),
    };
    b.click(&format!("#player-hand button[data-card='{}']", other_card.as_str())).await;
    i += 1;
    b.wait_seq(i).await;
    assert!(b.text("#alert").await.contains("remise à jour"), "the page says it caught up");
    assert_table_shows(&b, &plan.events[i - 1], i - 1).await;

    while i < plan.actions.len() {
        click_action(&b, &plan.actions[i]).await;
        i += 1;
        b.wait_seq(i).await;
    }
    assert_eq!(phase(&b).await, "finished");
    b.refresh().await;
    b.wait_for("!document.getElementById('result').hidden", "the result after a reload").await;

    // The server applied exactly the planned actions: nothing twice, nothing redrawn.
    let record: Value = srv.get(&format!("/api/tickets/{serial}/record"), &token).await;
    assert_eq!(record["client_seed"], plan.client_seed.as_str());
    let want: Vec<Value> = plan.actions.iter().enumerate().map(|(k, a)| action_json(k as u64, *a)).collect();
    assert_eq!(record["actions"], json!(want));
    let r = plan.game.result().unwrap();
    let prize = prize_of(&json!({"prizes_cents": record["prizes_cents"]}), r.tricks);
    assert_eq!(record["result"], json!({"tricks": r.tricks, "prize_cents": prize}));
    b.close().await;
    srv.app.shutdown().await.unwrap();
}
