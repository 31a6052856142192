//! The player's seed on the ticket screen (docs/contract.md Fairness): the
//! browser draws one when an unplayed ticket opens, shows it with the
//! ticket's commitment before the first card, lets the player change it
//! (refusing what the server would refuse), sends it with the first card,
//! and shows it read-only after. The first card's body, seed included, is
//! the same on every retry, also after a reload.

use crate::harness::*;
use crate::recovery::FLAKY_FETCH;
use crate::webdriver::Screen;
use serde_json::{Value, json};

const SEED_FIELD: &str = "return document.getElementById('ticket-seed').value";

/// Every POST the page sends to `/actions`, logged in `window.__posts`.
const COUNT_POSTS: &str = r#"
  window.__posts = [];
  const f = window.fetch;
  window.fetch = (u, i) => { if (String(u).endsWith('/actions')) window.__posts.push(i.body); return f(u, i); };
"#;

async fn reveal(b: &Browser) {
    b.click("#reveal").await;
    b.wait_for("document.getElementById('scratch').classList.contains('revealed')", "the reveal").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_draws_shows_and_sends_the_players_seed_with_the_first_card() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1280, height: 900 }).await else { return };
    b.open("/?anim=0").await;
    assert!(b.try_find("#client-seed").await.is_none(), "no seed at purchase any more");
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    let token = b.token().await;
    let serial = serial_of_sale(1);
    let ticket = srv.get(&format!("/api/tickets/{serial}"), &token).await["ticket"].clone();
    assert_eq!(ticket["client_seed"], Value::Null);
    assert_eq!(ticket["status"], "in_play");

    // A seed drawn by the browser, shown before the first card with the
    // ticket's commitment and a word on what they are, one click away.
    assert_eq!(b.exec("return document.getElementById('fair').open", json!([])).await, false, "folded");
    b.click("#fair > summary").await;
    assert_eq!(b.exec("return document.getElementById('seed-form').hidden", json!([])).await, false);
    assert_eq!(
        b.exec("return document.getElementById('ticket-commitment').dataset.full", json!([])).await,
        ticket["commitment"]
    );
    assert!(b.text("#seed-explain").await.contains("première carte"));
    let drawn = b.exec(SEED_FIELD, json!([])).await.as_str().unwrap().to_string();
    assert!(drawn.len() == 32 && drawn.bytes().all(|c| c.is_ascii_hexdigit()), "{drawn}");
    b.shot("desktop-2b-seed").await;

    // Kept across a reload (nothing was sent); "Draw another" draws another.
    b.refresh().await;
    b.wait_seq(0).await;
    assert_eq!(b.exec(SEED_FIELD, json!([])).await, drawn.as_str());
    b.click("#fair > summary").await;
    b.click("#seed-new").await;
    let redrawn = b.exec(SEED_FIELD, json!([])).await.as_str().unwrap().to_string();
    assert!(redrawn != drawn && redrawn.len() == 32, "{redrawn}");

    // A seed the server would refuse: said at the field, nothing sent.
    reveal(&b).await;
    b.exec(COUNT_POSTS, json!([])).await;
    // (The field takes at most 64 characters.)
    for bad in ["my seed", "graine-à-moi", ""] {
        b.type_into("#ticket-seed", bad).await;
        b.click("#player-hand button[data-card='A']").await;
        b.wait_for("!document.getElementById('ticket-seed-error').hidden", "the seed's error").await;
        assert_eq!(
            b.exec("return document.getElementById('ticket-seed').getAttribute('aria-invalid')", json!([])).await,
            "true"
        );
        assert_eq!(b.exec("return document.activeElement.id", json!([])).await, "ticket-seed");
        assert_eq!(b.exec("return window.__posts.length", json!([])).await, 0, "{bad:?} sent");
        assert_eq!(b.exec("return document.getElementById('view-game').dataset.seq", json!([])).await, "0");
    }

    // The player's own seed; the first card never gets an answer, and the
    // page is reloaded: it sends the same body again, seed included.
    // A refused seed unfolds the box if the player folded it.
    b.click("#fair > summary").await;
    assert_eq!(b.exec("return document.getElementById('fair').open", json!([])).await, false);
    b.click("#player-hand button[data-card='A']").await;
    b.wait_for("document.getElementById('fair').open && document.activeElement.id === 'ticket-seed'", "the field")
        .await;
    let mine = "lucky~Seed#7";
    b.type_into("#ticket-seed", mine).await;
    assert_eq!(b.exec("return document.getElementById('ticket-seed-error').hidden", json!([])).await, true);
    b.exec(
        "const f = window.fetch; window.fetch = (u, i) => String(u).endsWith('/actions') ? new Promise(() => {}) : f(u, i);",
        json!([]),
    )
    .await;
    b.click("#player-hand button[data-card='Q']").await;
    b.wait_for("localStorage.getItem('asc.pendingAct') !== null", "the action kept").await;
    let pending: Value = serde_json::from_str(
        b.exec("return localStorage.getItem('asc.pendingAct')", json!([])).await.as_str().unwrap(),
    )
    .unwrap();
    let body = json!({"seq": 0, "action": "play", "card": "Q", "client_seed": mine});
    assert_eq!(pending, json!({"id": serial, "body": body}));
    assert_eq!(b.exec("return document.getElementById('ticket-seed').disabled", json!([])).await, true);
    b.refresh().await;
    b.wait_seq(1).await;
    assert_eq!(b.exec("return localStorage.getItem('asc.pendingAct')", json!([])).await, Value::Null);

    // The server has exactly that seed; the page shows it, read-only.
    let ticket = srv.get(&format!("/api/tickets/{serial}"), &token).await["ticket"].clone();
    assert_eq!(ticket["client_seed"], mine);
    let record = srv.get(&format!("/api/tickets/{serial}/record"), &token).await;
    assert_eq!(record["actions"], json!([{"seq": 0, "action": "play", "card": "Q"}]));
    assert_eq!(b.exec("return document.getElementById('seed-form').hidden", json!([])).await, true);
    assert_eq!(b.text("#ticket-seed-shown").await, mine);
    assert!(!b.text("#seed-after").await.is_empty());
    b.shot("desktop-3b-seed-sent").await;
    // The same first card again (another tab, a late retry): the identical answer.
    let again = srv.post(&format!("/api/tickets/{serial}/actions"), Some(&token), &body).await;
    assert_eq!(again["ticket"]["seq"], 1);

    // A second ticket: the drawn seed, unchanged, and the first card's
    // answer lost on the way back: the retry is the identical request.
    b.click("#brand").await;
    b.wait_for("document.body.dataset.view === 'home' && document.body.dataset.state === 'idle'", "home").await;
    b.click("#buy").await;
    b.wait_for("document.body.dataset.view === 'game'", "the second ticket").await;
    b.wait_seq(0).await;
    let serial2 = serial_of_sale(2);
    assert_eq!(b.exec("return document.getElementById('view-game').dataset.id", json!([])).await, serial2.as_str());
    let drawn2 = b.exec(SEED_FIELD, json!([])).await.as_str().unwrap().to_string();
    assert!(drawn2.len() == 32 && drawn2 != drawn && drawn2 != redrawn, "{drawn2}");
    reveal(&b).await;
    b.exec(FLAKY_FETCH, json!([true])).await;
    b.click("#player-hand button[data-card='7']").await;
    b.wait_seq(1).await;
    let sent = b.exec("return window.__sent", json!([])).await;
    let sent: Vec<Value> =
        sent.as_array().unwrap().iter().map(|s| serde_json::from_str(s.as_str().unwrap()).unwrap()).collect();
    assert_eq!(sent.len(), 2, "one answer lost, one retry: {sent:?}");
    assert_eq!(sent[0], sent[1], "the retry is the same request");
    assert_eq!(sent[0], json!({"seq": 0, "action": "play", "card": "7", "client_seed": drawn2}));
    let ticket2 = srv.get(&format!("/api/tickets/{serial2}"), &token).await["ticket"].clone();
    assert_eq!(ticket2["client_seed"], drawn2.as_str(), "the seed the page drew and showed");
    assert_eq!(b.text("#ticket-seed-shown").await, drawn2);

    // English too.
    b.click("#lang").await;
    b.wait_for("document.documentElement.lang === 'en'", "English").await;
    assert_eq!(b.text("#fair-title").await, "Fairness");
    assert!(b.text("#seed-after").await.contains("first card"));
    b.close().await;
    srv.app.shutdown().await.unwrap();
}
