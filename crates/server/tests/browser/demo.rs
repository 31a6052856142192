//! The free demo game, "Essayer gratuitement" (docs/player-api.md
//! "Demo games"), on a desktop and a 390x844 phone, in French and English:
//! the lobby's button starts the real duel without money or account, every
//! screen of it says DÉMO (the prizes to scratch, the duel, the result),
//! the result says what a real ticket would have won and offers another
//! demo, and the game never joins "Mes tickets" nor moves the balance.

use crate::harness::*;
use crate::webdriver::Screen;
use serde_json::{Value, json};

const DESKTOP: Screen = Screen::Desktop { width: 1280, height: 900 };
const PHONE: Screen = Screen::Phone { width: 390, height: 844 };

/// The DÉMO banner is shown, says DÉMO (DEMO) and sits in the first screen.
async fn assert_demo_shown(b: &Browser, lang: &str, what: &str, height: f64) {
    let banner = b
        .exec(
            "const e = document.getElementById('demo-banner'); const r = e.getBoundingClientRect();
             return [e.hidden, e.querySelector('strong').textContent, r.top, r.bottom, document.body.dataset.demo];",
            json!([]),
        )
        .await;
    let word = if lang == "en" { "DEMO" } else { "DÉMO" };
    assert_eq!((&banner[0], &banner[1], &banner[4]), (&json!(false), &json!(word), &json!("true")), "{what}: {banner}");
    let (top, bottom) = (banner[2].as_f64().unwrap(), banner[3].as_f64().unwrap());
    assert!(top >= 0.0 && bottom <= height, "{what}: the banner in the first screen: {banner}");
}

async fn demo_flow(screen: Screen, size: &str, lang: &str, with_account: bool) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    let height = match screen {
        Screen::Phone { height, .. } | Screen::Desktop { height, .. } => height as f64,
    };
    b.open(&format!("/?anim=0&lang={lang}")).await;
    let mut balance = None;
    if with_account {
        b.click("#register").await;
        b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
        balance = Some(srv.get("/api/me", &b.token().await).await["balance_cents"].clone());
    }
    // The lobby offers it, in the player's language.
    assert_eq!(b.text("#demo-start").await, b.string(lang, "demo.start", &[]).await);
    axe_clean(&b, &format!("{size} {lang}: the lobby with the demo")).await;
    b.exec("window.scrollTo(0, 0); document.getElementById('demo-start').scrollIntoView({block: 'center'})", json!([]))
        .await;
    b.click("#demo-start").await;
    b.wait_seq(0).await;
    let id = b.exec("return document.getElementById('view-game').dataset.id", json!([])).await;
    let id = id.as_str().unwrap().to_string();
    assert!(id.starts_with("DEMO-"), "{id}");
    assert!(b.exec("return location.hash", json!([])).await.as_str().unwrap().contains(&id));
    assert_eq!(b.text("#game-title").await, b.string(lang, "demo.title", &[]).await);
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    assert_demo_shown(&b, lang, &format!("{size} {lang}: the prizes to scratch"), height).await;
    axe_clean(&b, &format!("{size} {lang}: a demo game")).await;
    b.shot(&format!("demo-{size}-{lang}-0-scratch")).await;

    // Scratched, then played to the end by clicks: a card of the hand, or the deck.
    b.click("#reveal").await;
    b.wait_for("document.getElementById('scratch').classList.contains('revealed')", "the prizes").await;
    let mut seq = 0;
    loop {
        let phase = b.exec("return document.getElementById('view-game').dataset.phase", json!([])).await;
        if phase == "finished" {
            break;
        }
        if phase == "play" {
            b.click("#player-hand button.card[aria-disabled='false']").await;
        } else {
            b.click("#deck").await;
        }
        seq += 1;
        b.wait_seq(seq).await;
        if seq == 1 {
            b.exec("window.scrollTo(0, 0)", json!([])).await;
            assert_demo_shown(&b, lang, &format!("{size} {lang}: the duel"), height).await;
        }
        assert!(seq < 200, "a game ends");
    }
    b.wait_for("!document.getElementById('result').hidden", "the result").await;

    // The server's game is the one the page shows; its seed is revealed.
    let demo = b.exec("return JSON.parse(localStorage.getItem('asc.demo'))", json!([])).await;
    assert_eq!(demo["id"], id.as_str());
    let token = demo["token"].as_str().unwrap();
    let server: Value = srv.get(&format!("/api/demo/{id}"), token).await["ticket"].clone();
    assert_eq!(server["phase"], "finished");
    assert_eq!(server["seq"], seq);
    assert!(server["server_seed"].is_string());
    let result = &server["result"];
    let prize = result["prize_cents"].as_i64().unwrap();
    let shown = b.exec("return document.getElementById('result').dataset", json!([])).await;
    assert_eq!(shown["channel"], "demo");
    assert_eq!(shown["prize"], prize.to_string());
    assert_eq!(shown["tricks"], result["tricks"].to_string());
    if prize > 0 {
        // What a real ticket would have paid: never "credited to your balance".
        let text = b.text("#result-text").await;
        let money = b
            .exec_async(
                "const done = arguments[arguments.length - 1];
                 import('/i18n.js').then((i) => done(i.money(arguments[0])));",
                json!([prize]),
            )
            .await;
        let want = b
            .string(
                lang,
                "result.demo.won",
                &[("n", &result["tricks"].to_string()), ("prize", money.as_str().unwrap())],
            )
            .await;
        assert_eq!(text, want);
    }
    // No check against a published block, no purchase from here; another demo instead.
    let hidden = b
        .exec("return ['verify-btn', 'again', 'demo-again'].map((id) => document.getElementById(id).hidden)", json!([]))
        .await;
    assert_eq!(hidden, json!([true, true, false]));
    assert_eq!(b.text("#demo-again").await, b.string(lang, "demo.again", &[]).await);
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    assert_demo_shown(&b, lang, &format!("{size} {lang}: the result"), height).await;
    if matches!(screen, Screen::Phone { .. }) {
        assert_fits(&b, 390, "a demo's result").await;
    }
    axe_clean(&b, &format!("{size} {lang}: a demo's result")).await;
    b.shot(&format!("demo-{size}-{lang}-1-result")).await;

    // Another demo: a new game, its own token; the first one is forgotten here.
    b.click("#demo-again").await;
    b.wait_for(
        &format!(
            "document.getElementById('view-game').dataset.id !== '{id}' && document.body.dataset.state === 'idle'"
        ),
        "another demo",
    )
    .await;
    b.wait_seq(0).await;
    let second = b.exec("return JSON.parse(localStorage.getItem('asc.demo'))", json!([])).await;
    assert_ne!(second["id"], demo["id"]);

    // The first demo's address again: its token is no longer kept here, so
    // the server refuses it; the page says the demo is gone and keeps the
    // newer demo's token.
    b.expect_http_error(&format!("/api/demo/{id}"), 401);
    b.expect_http_error(&format!("/api/demo/{id}/record"), 401);
    b.exec("location.hash = arguments[0]", json!([format!("#t={id}")])).await;
    b.wait_for("document.body.dataset.view === 'home' && document.body.dataset.state === 'idle'", "home").await;
    assert_eq!(b.text("#alert").await, b.string(lang, "demo.gone", &[]).await);
    let kept = b.exec("return JSON.parse(localStorage.getItem('asc.demo'))", json!([])).await;
    assert_eq!(kept, second, "the newer demo's token is kept");

    // Home: no DÉMO any more, no demo in "Mes tickets", the balance untouched.
    b.exec("location.hash = ''", json!([])).await;
    b.wait_for("document.body.dataset.view === 'home' && document.body.dataset.state === 'idle'", "home").await;
    assert_eq!(b.exec("return document.body.dataset.demo", json!([])).await, "false");
    let listed = b
        .exec("return [...document.querySelectorAll('#tickets li')].map((li) => li.dataset.id || '')", json!([]))
        .await;
    assert!(listed.as_array().unwrap().iter().all(|i| !i.as_str().unwrap().starts_with("DEMO-")), "{listed}");
    if let Some(before) = balance {
        let token = b.token().await;
        assert_eq!(srv.get("/api/me", &token).await["balance_cents"], before);
        assert_eq!(srv.get("/api/tickets", &token).await["tickets"], json!([]));
        assert_eq!(b.exec("return document.getElementById('balance').dataset.cents", json!([])).await, "10000");
    }
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_free_demo_game_on_a_desktop_in_french_with_an_account() {
    demo_flow(DESKTOP, "desktop", "fr", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_free_demo_game_on_a_phone_in_english_without_an_account() {
    demo_flow(PHONE, "phone", "en", false).await;
}
