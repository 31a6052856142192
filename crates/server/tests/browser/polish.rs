//! The playtest's polish (docs/browser.md), on a desktop window and a
//! 390 px phone: a win celebrated within the page's Content-Security-Policy
//! (no inline style: every browser test also fails on any console error,
//! harness.rs), one name for the Extra games ("Partie Extra 1" / "Extra
//! game 1") everywhere, the keyboard (the new hand focused when an Extra
//! game starts, the arrow keys between the cards), no layout shift during a
//! trick, sounds off until the player turns them on, the odds page ("1
//! chance sur X" first, the exact fractions folded, no schedule's return to
//! player, no "%" alone on a line) and the "18+" badge's text in its circle.

use crate::harness::*;
use crate::webdriver::Screen;
use engine::{Action, Event, Outcome};
use serde_json::{Value, json};

const DESKTOP: Screen = Screen::Desktop { width: 1280, height: 900 };
const PHONE: Screen = Screen::Phone { width: 390, height: 844 };

/// Content-Security-Policy violations the page reports, from now on, in `window.__csp`.
const WATCH_CSP: &str = "window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));";

async fn registered_with_a_ticket(b: &Browser, path: &str) {
    b.open(path).await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
}

async fn reveal(b: &Browser) {
    b.click("#reveal").await;
    b.wait_for("document.getElementById('scratch').classList.contains('revealed')", "the prizes").await;
}

fn target(a: &Action) -> String {
    match a {
        Action::Play { card } => format!("#player-hand button[data-card='{}']", card.as_str()),
        Action::Draw => "#deck".to_string(),
    }
}

// ------------------------------------------------------------ the celebration

/// A winning ticket's celebration (animations on) sets its pieces' places
/// through the CSSOM: no inline style refused, no error in the console.
async fn a_win_within_the_policy(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    let serial = serial_of_sale(1);
    let plan = find_seed(&serial, &format!("win-{size}"), |p| p.game.result().unwrap().prize_cents > 0);
    registered_with_a_ticket(&b, "/?anim=0").await;
    b.choose_seed(&plan.client_seed).await;
    reveal(&b).await;
    b.exec(WATCH_CSP, json!([])).await;
    let last = plan.actions.len() - 1;
    for (i, a) in plan.actions.iter().enumerate() {
        if i == last {
            // The animations on for the last action: the celebration.
            b.exec("window.scrollTo(0, 0)", json!([])).await;
            b.click("#settings > summary").await;
            b.click("#anim-toggle").await;
            b.click("#settings > summary").await;
            assert_eq!(b.exec("return document.documentElement.dataset.anim", json!([])).await, "on");
        }
        b.click(&target(a)).await;
        b.wait_seq(i + 1).await;
    }
    b.wait_for("document.querySelectorAll('#result .confetti span').length === 14", "the celebration").await;
    let placed = b
        .exec(
            "return [...document.querySelectorAll('#result .confetti span')].map(s => [getComputedStyle(s).getPropertyValue('--x').trim(), getComputedStyle(s).animationName, s.getAttribute('style')]);",
            json!([]),
        )
        .await;
    for (k, p) in placed.as_array().unwrap().iter().enumerate() {
        assert!(p[0].as_str().unwrap().ends_with('%'), "piece {k} placed through the CSSOM: {p}");
        assert_eq!(p[1], "confetti", "piece {k} animated by the style sheet");
    }
    assert_eq!(b.exec("return window.__csp", json!([])).await, json!([]), "no Content-Security-Policy violation");
    b.shot(&format!("polish-{size}-celebration")).await;
    b.close().await; // and no console error (harness.rs)
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_win_is_celebrated_within_the_content_security_policy_on_a_desktop() {
    a_win_within_the_policy(DESKTOP, "desktop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_win_is_celebrated_within_the_content_security_policy_on_a_phone() {
    a_win_within_the_policy(PHONE, "phone").await;
}

// ------------------------------------------------------------ the Extra games' name and the keyboard

/// Plays a ticket with an Extra game from the keyboard only: the arrow
/// keys to the card (the hand is one Tab stop), Enter to play it, Enter on
/// the deck when it is asked for. When the Extra game starts the focus is
/// on the new hand's first card; the game is called by one name in the
/// header, the table's badge, the banner and the recap (art. 3.2.5).
async fn keyboard_and_extra_names(screen: Screen, size: &str, lang: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    let serial = serial_of_sale(1);
    let plan = find_seed(&serial, &format!("kbd-{size}-{lang}"), |p| {
        let tie = p.first(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. }));
        let extra = p.first(|e| matches!(e, Event::ExtraGame { .. }));
        matches!((tie, extra), (Some(t), Some(x)) if t < x)
    });
    let extra_game = plan.first(|e| matches!(e, Event::ExtraGame { .. })).unwrap();
    let name1 = b.string(lang, "ticket.gameN", &[("n", "1")]).await;
    assert_eq!(name1, if lang == "en" { "Extra game 1" } else { "Partie Extra 1" });
    let first = b.string(lang, "ticket.game1", &[]).await;

    registered_with_a_ticket(&b, &format!("/?anim=0&lang={lang}")).await;
    b.choose_seed(&plan.client_seed).await;
    reveal(&b).await;
    assert_eq!(b.text("#game-no").await, first);

    // The hand is one stop of the Tab key: only one card is tabbable.
    let tabbable = "return [...document.querySelectorAll('#player-hand button')].filter(c => c.tabIndex === 0).map(c => c.dataset.card)";
    assert_eq!(b.exec(tabbable, json!([])).await, json!(["7"]), "the first card is the hand's Tab stop");
    b.exec("document.querySelector('#player-hand button').focus()", json!([])).await;
    // Right, Down, Left, Up, End, Home, and Left from the first wraps to the last.
    let focused = "return document.activeElement.dataset.card || document.activeElement.id";
    for (key, want) in [
        ("\u{E014}", "8"),
        ("\u{E015}", "9"),
        ("\u{E012}", "8"),
        ("\u{E013}", "7"),
        ("\u{E010}", "A"),
        ("\u{E011}", "7"),
        ("\u{E012}", "A"),
        ("\u{E014}", "7"),
    ] {
        b.keys(key).await;
        assert_eq!(b.exec(focused, json!([])).await, want, "{size} {lang}: arrow keys in the hand");
    }
    assert_eq!(b.exec(tabbable, json!([])).await, json!(["7"]), "the Tab stop follows the focus");
    b.keys("\u{E004}").await;
    assert_eq!(
        b.exec("return !!document.activeElement.closest('#player-hand')", json!([])).await,
        false,
        "Tab leaves the hand at once"
    );
    b.exec("document.querySelector('#player-hand button').focus()", json!([])).await;

    for (i, a) in plan.actions.iter().enumerate() {
        match a {
            Action::Play { card } => {
                let order = b
                    .exec(
                        "return [...document.querySelectorAll('#player-hand button')].map(c => c.dataset.card)",
                        json!([]),
                    )
                    .await;
                let order: Vec<String> =
                    order.as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
                let at = b.exec(focused, json!([])).await;
                let from = order.iter().position(|c| at == c.as_str()).unwrap_or_else(|| {
                    panic!("{size} {lang} action {i}: the focus is in the hand, not on {at} ({order:?})")
                });
                let to = order.iter().position(|c| c == card.as_str()).unwrap();
                let keys = if to >= from { "\u{E014}".repeat(to - from) } else { "\u{E012}".repeat(from - to) };
                b.keys(&keys).await;
                assert_eq!(b.exec(focused, json!([])).await, card.as_str());
            }
            Action::Draw => {
                assert_eq!(b.exec(focused, json!([])).await, "deck", "{size} {lang} action {i}: the deck is focused");
            }
        }
        b.keys("\u{E007}").await;
        b.wait_seq(i + 1).await;
        if i == extra_game {
            // Eight new cards, and the keyboard on the first one.
            let f = b
                .exec(
                    "const a = document.activeElement; return [!!a.closest('#player-hand'), a === document.querySelector('#player-hand button')]",
                    json!([]),
                )
                .await;
            assert_eq!(f, json!([true, true]), "{size} {lang}: the new hand has the focus");
            assert_eq!(b.text("#game-no").await, name1, "the header");
            assert_eq!(b.text("#trick-badge").await, name1, "the table's badge");
            let banner = b.text("#extra-banner-title").await;
            assert!(banner.ends_with(&format!("— {name1}")), "the banner: {banner}");
            b.exec("document.getElementById('table').scrollIntoView({block: 'start'})", json!([])).await;
            b.shot(&format!("polish-{size}-{lang}-extra-game-focus")).await;
        }
        if b.exec("return document.getElementById('view-game').dataset.phase", json!([])).await == "finished" {
            break;
        }
    }
    b.wait_for("!document.getElementById('result').hidden", "the result").await;
    let recap = b
        .exec("return [...document.querySelectorAll('#result-games-list li')].map(l => l.textContent)", json!([]))
        .await;
    let recap: Vec<String> = recap.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect();
    assert!(recap.len() >= 2, "{recap:?}");
    assert!(recap[0].starts_with(&first), "the recap's first game: {recap:?}");
    assert!(recap[1].starts_with(&name1), "the recap says {name1}: {recap:?}");
    // No other wording of it anywhere on the page.
    let page = b.exec("return document.body.innerText", json!([])).await;
    let page = page.as_str().unwrap();
    for old in ["2e partie", "Game 2"] {
        assert!(!page.contains(old), "{size} {lang}: {old:?} on the page");
    }
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keyboard_and_the_extra_games_name_on_a_desktop_in_french() {
    keyboard_and_extra_names(DESKTOP, "desktop", "fr").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keyboard_and_the_extra_games_name_on_a_phone_in_english() {
    keyboard_and_extra_names(PHONE, "phone", "en").await;
}

// ------------------------------------------------------------ no layout shift

/// The heights of what stands above the hand (for a failure's message).
const BOXES: &str = "return Object.fromEntries(['.game-head', '.scratch-wrap', '#fair', '.area-capone', '#extra-banner', '#trick', '#prompt', '#history', '#games-earlier']
  .map(s => [s, Math.round(document.querySelector(s).getBoundingClientRect().height * 10) / 10]))";

/// Every trick (and deck draw) of a ticket but the last, animations on:
/// the hand stays where it is before, during and after, and the browser
/// records no layout shift (PerformanceObserver 'layout-shift').
async fn no_layout_shift(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    let serial = serial_of_sale(1);
    let plan = find_seed(&serial, &format!("shift-{size}"), |p| {
        let tie = p.first(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. }));
        let extra_draw = p.first(|e| matches!(e, Event::GameOver { next: engine::Next::ExtraDraw, .. }));
        matches!((tie, extra_draw), (Some(t), Some(x)) if t < x)
    });
    registered_with_a_ticket(&b, "/").await;
    assert_eq!(b.exec("return document.documentElement.dataset.anim", json!([])).await, "on");
    b.choose_seed(&plan.client_seed).await;
    reveal(&b).await;
    b.exec(
        "window.__shifts = [];
         new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__shifts.push({value: e.value, at: e.startTime,
           nodes: (e.sources || []).map(s => s.node ? (s.node.id || s.node.className || s.node.nodeName) : '?')}); })
           .observe({type: 'layout-shift'});",
        json!([]),
    )
    .await;
    let hand_top = "return document.getElementById('player-hand').getBoundingClientRect().top + window.scrollY";
    // Until the game ends (the result then comes: a new state of the screen, not a trick).
    let until = plan
        .first(|e| matches!(e, Event::GameOver { .. } | Event::ExtraGame { .. } | Event::Finished { .. }))
        .unwrap_or(plan.actions.len() - 1);
    let mut seen = 0;
    for (i, a) in plan.actions.iter().enumerate().take(until) {
        let before = b.exec(hand_top, json!([])).await.as_f64().unwrap();
        let boxes_before = b.exec(BOXES, json!([])).await;
        b.click(&target(a)).await;
        // During the suspense: sampled until the answer is on the table.
        let mut during = Vec::new();
        loop {
            during.push(b.exec(hand_top, json!([])).await.as_f64().unwrap());
            let seq = b.exec("return document.getElementById('view-game').dataset.seq", json!([])).await;
            let idle = b.exec("return document.body.dataset.state", json!([])).await;
            if seq == json!((i + 1).to_string()) && idle == "idle" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(60)).await;
        }
        let after = b.exec(hand_top, json!([])).await.as_f64().unwrap();
        let boxes_after = b.exec(BOXES, json!([])).await;
        for y in during.iter().chain([after].iter()) {
            assert!(
                (y - before).abs() < 0.5,
                "{size} action {i}: the hand moved from {before} to {y} ({during:?}); heights before {boxes_before}, after {boxes_after}"
            );
        }
        seen += during.len();
    }
    assert!(seen > until, "the hand was measured during the tricks");
    let shifts = b.exec("return window.__shifts", json!([])).await;
    let total: f64 = shifts.as_array().unwrap().iter().map(|s| s["value"].as_f64().unwrap()).sum();
    assert!(total < 0.001, "{size}: layout shifts while playing (total {total}): {shifts}");
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_layout_shift_during_a_trick_on_a_desktop() {
    no_layout_shift(DESKTOP, "desktop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_layout_shift_during_a_trick_on_a_phone() {
    no_layout_shift(PHONE, "phone").await;
}

// ------------------------------------------------------------ sounds

/// Every AudioContext the page creates, counted in `window.__audio`.
const COUNT_AUDIO: &str = "window.__audio = 0;
  const Real = window.AudioContext;
  window.AudioContext = class extends Real { constructor(...a) { super(...a); window.__audio++; } };";

/// A fresh profile: the sounds' switch is off and a trick plays no sound;
/// turned on, a sound plays, and the choice is kept after a reload.
async fn sounds_off_until_turned_on(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    let plan = find_seed(&serial_of_sale(1), &format!("sound-{size}"), |p| p.actions.len() > 3);
    registered_with_a_ticket(&b, "/").await;
    assert_eq!(b.exec("return localStorage.getItem('asc.sound')", json!([])).await, Value::Null, "a fresh profile");
    assert_eq!(b.exec("return document.getElementById('sound-toggle').checked", json!([])).await, false);
    assert_eq!(b.exec("return document.documentElement.dataset.sound", json!([])).await, "off");
    b.exec(COUNT_AUDIO, json!([])).await;
    b.choose_seed(&plan.client_seed).await;
    reveal(&b).await;
    for (i, a) in plan.actions.iter().enumerate().take(2) {
        b.click(&target(a)).await;
        b.wait_seq(i + 1).await;
    }
    assert_eq!(
        b.exec("return [window.__audio, document.body.dataset.sound ?? null]", json!([])).await,
        json!([0, null])
    );
    // Turned on: a sound at once (the switch's own), and kept.
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.click("#settings > summary").await;
    b.click("#sound-toggle").await;
    b.click("#settings > summary").await;
    assert_eq!(b.exec("return window.__audio", json!([])).await, 1, "a sound plays once turned on");
    assert_eq!(b.exec("return localStorage.getItem('asc.sound')", json!([])).await, "1");
    b.refresh().await;
    b.wait_for("document.body.dataset.state === 'idle'", "the page").await;
    assert_eq!(b.exec("return document.getElementById('sound-toggle').checked", json!([])).await, true);
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sounds_are_off_until_the_player_turns_them_on_on_a_desktop() {
    sounds_off_until_turned_on(DESKTOP, "desktop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sounds_are_off_until_the_player_turns_them_on_on_a_phone() {
    sounds_off_until_turned_on(PHONE, "phone").await;
}

// ------------------------------------------------------------ the odds page

/// Every "%" of the odds page whose line starts with it: `[text, top of
/// the "%", top of the character before it]`.
const PERCENT_ALONE: &str = "
  const out = [];
  const walk = document.createTreeWalker(document.getElementById('odds-body'), NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode; const s = n.textContent;
    for (let i = s.indexOf('%'); i >= 0; i = s.indexOf('%', i + 1)) {
      if (!n.parentElement.checkVisibility()) continue;
      let j = i - 1; while (j >= 0 && /\\s/.test(s[j])) j--;
      if (j < 0) { out.push([s, 'no character before']); continue; }
      const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
      const q = document.createRange(); q.setStart(n, j); q.setEnd(n, j + 1);
      const a = r.getClientRects()[0], b = q.getClientRects()[0];
      if (!a || !b || Math.abs(a.top - b.top) > 2) out.push([s, a && a.top, b && b.top]);
    }
  }
  return out;";

async fn the_odds_page(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    for lang in ["fr", "en"] {
        b.open(&format!("/?anim=0&lang={lang}#/chances")).await;
        b.wait_for(
            "document.body.dataset.view === 'odds' && document.querySelector('[data-fraction=\"final-5\"]')",
            "the odds",
        )
        .await;
        // "1 chance sur X" first: the headline, then each row's first figure.
        let one_in = b.string(lang, "odds.one_in", &[("n", "")]).await;
        let cells = b
            .exec(
                "return [...document.querySelectorAll('#odds-final tbody tr')].map(r => r.cells[1].textContent)",
                json!([]),
            )
            .await;
        for c in cells.as_array().unwrap() {
            assert!(c.as_str().unwrap().starts_with(&one_in), "{size} {lang}: the chance in words first: {cells}");
        }
        let head = b
            .exec("return [...document.querySelectorAll('#odds-final thead th')].map(h => h.textContent)", json!([]))
            .await;
        assert_eq!(head[1], b.string(lang, "odds.col.chance", &[]).await);
        // The exact fractions, folded: there, not shown, one click away.
        let folded = "return [...document.querySelectorAll('#odds-body [data-fraction]')].filter(e => !e.closest('details')).map(e => e.dataset.fraction)";
        assert_eq!(b.exec(folded, json!([])).await, json!([]), "{size} {lang}: every fraction folded");
        assert!(
            b.exec("return !document.querySelector('[data-fraction=\"final-5\"]').checkVisibility()", json!([])).await
                == true
        );
        // No schedule's own return to player; the table's, explained in one sentence.
        assert_eq!(b.exec("return document.querySelectorAll('[data-fraction$=\"-rtp\"]').length", json!([])).await, 0);
        let rtp_word = b.string(lang, "odds.rtp", &[]).await;
        let schedules = b.text("#schedules").await;
        assert!(!schedules.contains(&rtp_word), "{size} {lang}: no schedule's return to player: {schedules}");
        let explain = b.string(lang, "odds.rtp.explain", &[]).await;
        let rtp_line =
            b.exec("return document.getElementById('odds-rtp-percent').parentElement.textContent", json!([])).await;
        assert!(rtp_line.as_str().unwrap().contains(&explain), "{rtp_line}");
        // No "%" alone at the start of a line, fractions folded or unfolded.
        assert_eq!(b.exec(PERCENT_ALONE, json!([])).await, json!([]), "{size} {lang}: a '%' alone on a line");
        if let Some(v) = b.axe().await {
            assert!(v.is_empty(), "axe-core on the odds ({size} {lang}):\n{}", v.join("\n"));
        }
        b.shot(&format!("polish-{size}-{lang}-odds")).await;
        b.click("#odds-exact > summary").await;
        assert!(
            b.exec("return document.querySelector('[data-fraction=\"final-5\"]').checkVisibility()", json!([])).await
                == true
        );
        assert_eq!(b.exec(PERCENT_ALONE, json!([])).await, json!([]), "{size} {lang}: a '%' alone on a line");
        if let Some(v) = b.axe().await {
            assert!(v.is_empty(), "axe-core on the odds, unfolded ({size} {lang}):\n{}", v.join("\n"));
        }
        if size == "phone" {
            assert_fits(&b, 390, "the odds").await;
        }
        b.exec("document.getElementById('odds-exact').scrollIntoView()", json!([])).await;
        b.shot(&format!("polish-{size}-{lang}-odds-exact")).await;
    }
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_odds_page_says_one_chance_in_x_first_on_a_desktop() {
    the_odds_page(DESKTOP, "desktop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_odds_page_says_one_chance_in_x_first_on_a_phone() {
    the_odds_page(PHONE, "phone").await;
}

// ------------------------------------------------------------ 18+

/// The "18+" badges' text fits their circles: the footer's, and the first
/// visit question's.
async fn the_18_badge_fits(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser_first_visit(&srv.url, screen).await else { return };
    let fits = "const e = document.querySelector(arguments[0]); return [e.textContent, e.scrollWidth, e.clientWidth, e.scrollHeight, e.clientHeight];";
    for lang in ["fr", "en"] {
        b.open(&format!("/?anim=0&lang={lang}")).await;
        b.wait_for(
            "document.getElementById('age-gate') && document.getElementById('age-gate').open",
            "the 18+ question",
        )
        .await;
        for css in [".rg-18", "#age-gate .age-badge"] {
            let v = b.exec(fits, json!([css])).await;
            assert_eq!(v[0], "18+", "{css}");
            let (sw, cw, sh, ch) =
                (v[1].as_i64().unwrap(), v[2].as_i64().unwrap(), v[3].as_i64().unwrap(), v[4].as_i64().unwrap());
            assert!(sw <= cw && sh <= ch, "{size} {lang}: {css}'s text overflows its circle: {v}");
        }
    }
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_18_badge_text_fits_its_circle_on_a_desktop() {
    the_18_badge_fits(DESKTOP, "desktop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_18_badge_text_fits_its_circle_on_a_phone() {
    the_18_badge_fits(PHONE, "phone").await;
}
