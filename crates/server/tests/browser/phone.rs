//! On a phone, the duel comes first (docs/browser.md): at 390x844, without
//! scrolling, the first screen of a ticket holds the prize table and the
//! player's eight cards, and once the game is over the prize table and the
//! result; fairness (the commitment, the client seed) is folded under one
//! line, one tap away, and its seed field still takes the player's seed
//! before the first card. The same on a desktop window, in French and in
//! English, with axe-core on the ticket (fairness folded and unfolded) and
//! on the result.

use crate::harness::*;
use crate::mobile::LEAKED_KEYS;
use crate::webdriver::Screen;
use engine::{Action, Event};
use serde_json::json;

/// The rectangles of what must be in the first screen, measured at the
/// top of the page (scrolled to 0): `[name, top, bottom]` of each element
/// matched by `css` (every card of the hand, the prize table...), and the
/// viewport's height.
async fn first_screen(b: &Browser, css: &[&str]) -> (Vec<(String, f64, f64)>, f64) {
    let v = b
        .exec(
            "window.scrollTo(0, 0);
             const out = [];
             for (const css of arguments[0]) {
               const all = [...document.querySelectorAll(css)];
               if (!all.length) out.push([css + ' (missing)', -1, 1e9]);
               for (const e of all) { const r = e.getBoundingClientRect(); out.push([css, r.top, r.bottom, r.width * r.height]); }
             }
             return [out, window.innerHeight, window.scrollY];",
            json!([css]),
        )
        .await;
    assert_eq!(v[2], 0, "scrolled to the top");
    let rows = v[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let area = r[3].as_f64().unwrap_or(1.0);
            assert!(area > 0.0, "{} is displayed", r[0]);
            (r[0].as_str().unwrap().to_string(), r[1].as_f64().unwrap(), r[2].as_f64().unwrap())
        })
        .collect();
    (rows, v[1].as_f64().unwrap())
}

async fn assert_first_screen(b: &Browser, what: &str, css: &[&str]) {
    let (rows, height) = first_screen(b, css).await;
    let out: Vec<_> = rows.iter().filter(|(_, top, bottom)| *top < -0.5 || *bottom > height + 0.5).collect();
    assert!(out.is_empty(), "{what}: not within the first {height} px without scrolling: {out:?}");
}

/// A tap (phone: a touch pointer pressed and lifted on the element's
/// middle) or a click (desktop), without scrolling first.
async fn tap(b: &Browser, css: &str, phone: bool) {
    if !phone {
        return b.click(css).await;
    }
    let r = b
        .exec(
            "const r = document.querySelector(arguments[0]).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2];",
            json!([css]),
        )
        .await;
    b.stroke("touch", &[(r[0].as_f64().unwrap(), r[1].as_f64().unwrap())]).await;
}

async fn shown(b: &Browser, css: &str) -> bool {
    b.exec(
        "const e = document.querySelector(arguments[0]); return !!e && e.checkVisibility({visibilityProperty: true});",
        json!([css]),
    )
    .await
        == true
}

async fn the_duel_comes_first(screen: Screen, size: &str, lang: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    let phone = matches!(screen, Screen::Phone { .. });
    let serial = serial_of_sale(1);
    // A winning ticket of one game: the result with its prize.
    let plan = find_seed(&serial, &format!("first-{size}-{lang}"), |p| {
        p.first(|e| matches!(e, Event::ExtraGame { .. })).is_none() && p.game.result().unwrap().prize_cents > 0
    });
    let en = lang == "en";
    b.open(&format!("/?anim=0&lang={lang}")).await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    b.wait_for("document.getElementById('seed-form') && document.getElementById('ticket-seed').value", "the seed")
        .await;

    // The first screen: the prizes (to scratch) and the eight cards;
    // fairness folded under its one line, in view too.
    let cards = "#player-hand button.card";
    assert_eq!(b.exec(&format!("return document.querySelectorAll('{cards}').length"), json!([])).await, 8);
    assert_eq!(b.exec("return document.getElementById('fair').open", json!([])).await, false, "fairness is folded");
    assert!(!shown(&b, "#ticket-seed").await, "the seed field is folded away");
    assert_first_screen(&b, &format!("{size} {lang}: a new ticket"), &[cards, "#prizes", "#fair > summary"]).await;
    let title = b.text("#fair-title").await;
    assert_eq!(title, if en { "Fairness" } else { "Équité" });
    let hint = b.text("#fair-hint").await;
    assert_eq!(hint, b.string(lang, "fair.summary.open", &[]).await);
    assert_eq!(b.exec(LEAKED_KEYS, json!([])).await, json!([]));
    axe_clean(&b, &format!("{size} {lang}: the ticket, fairness folded")).await;
    b.shot(&format!("phone-first-{size}-{lang}-0-ticket")).await;

    // One tap: the commitment and the seed's field; the player types a seed.
    tap(&b, "#fair > summary", phone).await;
    b.wait_for("document.getElementById('fair').open", "fairness unfolded").await;
    assert!(shown(&b, "#ticket-seed").await && shown(&b, "#ticket-commitment").await, "one tap shows the seed");
    axe_clean(&b, &format!("{size} {lang}: the ticket, fairness unfolded")).await;
    b.shot(&format!("phone-first-{size}-{lang}-1-fairness")).await;
    b.type_into("#ticket-seed", &plan.client_seed).await;
    b.exec("document.activeElement.blur()", json!([])).await;
    tap(&b, "#fair > summary", phone).await;
    b.wait_for("!document.getElementById('fair').open", "fairness folded").await;
    assert_first_screen(&b, &format!("{size} {lang}: fairness folded again"), &[cards, "#prizes"]).await;

    // Scratched, then played to the end by clicks.
    b.click("#reveal").await;
    b.wait_for("document.getElementById('scratch').classList.contains('revealed')", "the prizes").await;
    assert_first_screen(&b, &format!("{size} {lang}: the prizes revealed"), &[cards, "#prizes"]).await;
    for (i, a) in plan.actions.iter().enumerate() {
        match a {
            Action::Play { card } => b.click(&format!("#player-hand button[data-card='{}']", card.as_str())).await,
            Action::Draw => b.click("#deck").await,
        }
        b.wait_seq(i + 1).await;
        if i == 0 {
            // The seed typed in the folded box is the one the server got.
            let t = srv.get(&format!("/api/tickets/{serial}"), &b.token().await).await;
            assert_eq!(t["ticket"]["client_seed"], plan.client_seed.as_str());
            assert_eq!(b.text("#fair-hint").await, b.string(lang, "fair.summary.sent", &[]).await);
            assert_first_screen(&b, &format!("{size} {lang}: in play"), &["#player-hand button.card", "#prizes"]).await;
        }
    }
    b.wait_for("!document.getElementById('result').hidden", "the result").await;
    assert_eq!(b.exec("return document.getElementById('result').dataset.won", json!([])).await, "true");
    // After the game: the prizes (the one won marked) and the whole result, in the first screen.
    assert_first_screen(
        &b,
        &format!("{size} {lang}: the result"),
        &["#prizes", "#prizes tr.hit", "#result", "#result-title", "#verify-btn"],
    )
    .await;
    let won = b.string(lang, "result.won.title", &[]).await;
    assert_eq!(b.text("#result-title").await, won);
    // Fairness still one tap away: the seed sent, shown read-only.
    tap(&b, "#fair > summary", phone).await;
    b.wait_for("document.getElementById('fair').open", "fairness unfolded").await;
    assert_eq!(b.text("#ticket-seed-shown").await, plan.client_seed);
    tap(&b, "#fair > summary", phone).await;
    if phone {
        assert_fits(&b, 390, "the result").await;
    }
    assert_eq!(b.exec(LEAKED_KEYS, json!([])).await, json!([]));
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    axe_clean(&b, &format!("{size} {lang}: the result")).await;
    b.shot(&format!("phone-first-{size}-{lang}-2-result")).await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_390_px_phone_the_duel_comes_first_in_french() {
    the_duel_comes_first(Screen::Phone { width: 390, height: 844 }, "phone", "fr").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_390_px_phone_the_duel_comes_first_in_english() {
    the_duel_comes_first(Screen::Phone { width: 390, height: 844 }, "phone", "en").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_desktop_the_duel_comes_first_in_french_and_english() {
    the_duel_comes_first(Screen::Desktop { width: 1280, height: 900 }, "desktop", "fr").await;
    the_duel_comes_first(Screen::Desktop { width: 1280, height: 900 }, "desktop", "en").await;
}
