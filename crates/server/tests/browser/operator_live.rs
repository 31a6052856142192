//! The page in operator mode against the real thing: the game server with
//! `wallet = "operator"` and the reference operator (crate
//! `as-capone-operator`, in process) holding the player and the money. A
//! launch signed by the operator, its link opened in Chromium: the lobby in
//! the player's language with none of our accounts, the operator's balance
//! and lobby link; the launch flags on and off (return to player, session
//! timer); the reality check (continue, stop) and the session's time
//! limit; each refusal of the operator's wallet in its own words; a launch
//! link used twice refused.

use crate::harness::*;
use crate::operator::{REFUSALS, visible, wait_ended};
use crate::webdriver::Screen;
use serde_json::{Value, json};
use server::WalletMode;
use wallet::{Keys, LaunchFlags, LaunchRequest};

const DESKTOP: Screen = Screen::Desktop { width: 1280, height: 900 };
const PHONE: Screen = Screen::Phone { width: 390, height: 844 };
/// The key shared by the game server and the reference operator.
const KEYS: &str = "k1:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
/// The operator's player, and what it holds at the start.
const PLAYER: &str = "op-player-1";
const FUNDS: i64 = 5_000;

/// A game server in operator mode and its reference operator.
struct World {
    srv: TestServer,
    op: reference::Running,
    keys: Keys,
    _dir: tempfile::TempDir,
}

impl World {
    async fn start() -> World {
        let dir = tempfile::tempdir().unwrap();
        let keys = Keys::parse(KEYS).unwrap();
        let mut options =
            reference::Options::new("127.0.0.1:0".parse().unwrap(), dir.path().join("operator.db"), keys.clone());
        options.players = vec![reference::PlayerSeed { player: PLAYER.into(), balance_cents: FUNDS }];
        let op = reference::start(options).await.expect("the reference operator starts");
        let wallet_url = op.url();
        let srv = spawn_server_with(|c| {
            c.wallet = WalletMode::Operator;
            c.operator_wallet_url = Some(wallet_url);
            c.operator_keys = Some(KEYS.into());
            c.wallet_timeout_ms = 1_000;
        })
        .await;
        World { srv, op, keys, _dir: dir }
    }

    /// The operator launches the game for its player: the path of the launch link on this server.
    async fn launch(&self, language: &str, flags: LaunchFlags, lobby_url: Option<String>) -> String {
        let request = LaunchRequest {
            player: PLAYER.into(),
            currency: "EUR".into(),
            language: language.into(),
            country: Some("FR".into()),
            flags,
            lobby_url,
        };
        let answer = reference::launch(&self.srv.url, &self.keys, &request).await.expect("the launch");
        assert!(
            answer.url.ends_with(&format!("/?launch={}", answer.code)),
            "the launch URL holds the code: {}",
            answer.url
        );
        format!("/?launch={}&anim=0", answer.code)
    }

    /// The operator's own record of its player's balance.
    async fn funds(&self) -> i64 {
        self.op.ledger().player(PLAYER, reference::now_ms()).await.unwrap().expect("the player").balance_cents
    }

    /// The operator changes its player (balance, weekly limit, blocked).
    async fn set_player(&self, balance: i64, weekly_limit: Option<i64>, blocked: bool) {
        self.op.ledger().set_player(PLAYER, balance, weekly_limit, blocked, reference::now_ms()).await.unwrap();
    }

    async fn stop(self) {
        self.srv.app.shutdown().await.unwrap();
        self.op.stop().await;
    }

    fn lobby(&self) -> String {
        format!("{}/favicon.svg?operator-lobby", self.srv.url)
    }
}

fn flags(show_rtp: bool, session_timer: bool, reality: Option<u32>, limit: Option<u32>) -> LaunchFlags {
    LaunchFlags { show_rtp, session_timer, reality_check_minutes: reality, session_limit_minutes: limit }
}

/// Opens a launch link and waits for the lobby.
async fn open_launch(b: &Browser, path: &str) {
    b.goto(&format!("{}{path}", b.base)).await;
    b.wait_for(
        "document.body.dataset.view === 'home' && document.body.dataset.state === 'idle' && document.getElementById('balance').dataset.cents !== ''",
        "the operator's lobby",
    )
    .await;
}

async fn cents(b: &Browser, css: &str) -> i64 {
    let v = b.exec("return document.querySelector(arguments[0]).dataset.cents", json!([css])).await;
    v.as_str().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{css} says cents: {v}"))
}

async fn the_lobby_in_the_players_language(screen: Screen, size: &str, lang: &str) {
    let w = World::start().await;
    // A browser that never opened the game: the operator has checked its player's age, the page does not ask.
    let Some(b) = browser_first_visit(&w.srv.url, screen).await else { return w.stop().await };
    let path = w.launch(lang, flags(false, true, None, None), Some(w.lobby())).await;
    open_launch(&b, &path).await;
    assert!(b.try_find("#age-gate").await.is_none(), "{size}: no 18+ question of ours after a launch");
    // The code left the address bar at once.
    let at = b.exec("return location.pathname + location.search", json!([])).await;
    assert!(!at.as_str().unwrap().contains("launch"), "{size}: {at}");
    assert_eq!(b.exec("return document.documentElement.lang", json!([])).await, lang, "{size}");
    assert_eq!(b.exec("return document.body.dataset.mode", json!([])).await, "operator");
    // The token is the page's, like a session's: the server knows it as the operator's player.
    let me = w.srv.get("/api/me", &b.token().await).await;
    assert_eq!(me["mode"], "operator", "{me}");
    assert_eq!(me["name"], PLAYER, "{me}");
    // The operator's balance, no play money, none of our accounts or limits.
    assert_eq!(cents(&b, "#balance").await, FUNDS, "{size}: the operator's balance");
    assert!(visible(&b, "#buy").await, "{size}: the purchase");
    for css in [
        "#welcome",
        "#register",
        "#login-form",
        "#keep-panel",
        "#balance-box small",
        "#nav a[href='#/limites']",
        "#footer a[href='#/limites']",
    ] {
        assert!(!visible(&b, css).await, "{size} {lang}: {css} is the operator's, not shown");
    }
    b.exec("document.getElementById('settings').open = true", json!([])).await;
    assert!(!visible(&b, "#logout").await, "{size}: no logout of ours");
    b.exec("document.getElementById('settings').open = false", json!([])).await;
    assert!(visible(&b, "#lobby-link").await, "{size}: the lobby link");
    assert_eq!(b.exec("return document.getElementById('lobby-link').href", json!([])).await, w.lobby());
    assert_eq!(b.text("#lobby-link").await, b.string(lang, "op.lobby", &[]).await);
    // The session timer (flag on).
    assert!(visible(&b, "#session-timer").await, "{size}: the session timer");
    let shown = b.text("#session-time").await;
    assert!(
        shown.len() >= 4 && shown.contains(':') && shown.bytes().all(|c| c.is_ascii_digit() || c == b':'),
        "{size}: the timer says m:ss: {shown:?}"
    );
    assert_fits_if_phone(&b, screen, size).await;
    axe_clean(&b, &format!("{size} {lang} lobby")).await;
    b.shot(&format!("operator-{size}-{lang}-lobby")).await;

    // The account area: the operator's balance and lobby, no login, no password.
    go(&b, "#/compte", "account").await;
    assert_eq!(cents(&b, "#op-balance").await, FUNDS);
    assert_eq!(b.text("#op-player").await, PLAYER);
    assert_eq!(b.exec("return document.getElementById('account-lobby').href", json!([])).await, w.lobby());
    for css in ["#cred-form", "#cred-password", "#account-logout"] {
        assert!(b.try_find(css).await.is_none(), "{size}: no {css} in operator mode");
    }
    axe_clean(&b, &format!("{size} {lang} account")).await;
    b.shot(&format!("operator-{size}-{lang}-account")).await;
    // Our limits page only points to the operator's.
    go(&b, "#/limites", "limits").await;
    assert!(visible(&b, "#op-limits").await);
    assert!(b.try_find("#limits-form").await.is_none(), "{size}: no limits form of ours");

    // A purchase is paid from the operator's wallet.
    go(&b, "#", "home").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    let price = w.srv.get("/api/odds", "").await["table"]["price_cents"].as_i64().unwrap();
    assert_eq!(w.funds().await, FUNDS - price, "{size}: the operator debited one ticket");
    assert_eq!(cents(&b, "#balance").await, FUNDS - price, "{size}: the header says the operator's balance");
    // A reload keeps the operator's session, its mode and its timer.
    b.refresh().await;
    b.wait_for("document.body.dataset.state === 'idle'", "the page").await;
    assert_eq!(b.exec("return document.body.dataset.mode", json!([])).await, "operator");
    assert!(visible(&b, "#session-timer").await, "{size}: the timer after a reload");
    b.close().await;
    w.stop().await;
}

async fn assert_fits_if_phone(b: &Browser, screen: Screen, size: &str) {
    if let Screen::Phone { width, .. } = screen {
        assert_fits(b, width as u64, size).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launch_opens_the_operators_lobby_in_french_on_a_desktop() {
    the_lobby_in_the_players_language(DESKTOP, "desktop", "fr").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launch_opens_the_operators_lobby_in_english_on_a_phone() {
    the_lobby_in_the_players_language(PHONE, "phone", "en").await;
}

/// The odds page: whether the return to player (and the expected payout) is there.
async fn rtp_shown(b: &Browser) -> bool {
    go(b, "#/chances", "odds").await;
    b.wait_for("document.querySelector('#odds-one-in')", "the odds").await;
    let v = b
        .exec(
            "return [!!document.getElementById('odds-rtp-percent'), !!document.querySelector('[data-fraction=rtp]'),
                     !!document.querySelector('[data-fraction=expected_payout_cents]')]",
            json!([]),
        )
        .await;
    let all = v.as_array().unwrap().iter().all(|x| *x == true);
    let none = v.as_array().unwrap().iter().all(|x| *x == false);
    assert!(all || none, "the return to player is shown everywhere or nowhere: {v}");
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_launch_flags_show_or_hide_the_return_to_player_and_the_timer() {
    let w = World::start().await;
    let Some(b) = browser(&w.srv.url, DESKTOP).await else { return w.stop().await };
    // show_rtp off, timer off.
    open_launch(&b, &w.launch("fr", flags(false, false, None, None), None).await).await;
    assert!(!visible(&b, "#session-timer").await, "no timer without the flag");
    assert!(!visible(&b, "#lobby-link").await, "no lobby link without a lobby");
    assert!(!rtp_shown(&b).await, "show_rtp false: no return to player");
    b.shot("operator-desktop-odds-without-rtp").await;
    // Another launch: show_rtp on, timer on.
    open_launch(&b, &w.launch("fr", flags(true, true, None, None), None).await).await;
    assert!(visible(&b, "#session-timer").await, "the timer with the flag");
    assert!(rtp_shown(&b).await, "show_rtp true: the return to player");
    b.close().await;
    w.stop().await;
}

/// Moves the page's session clock `ms` ahead (session.js reads it once a second).
async fn advance(b: &Browser, ms: i64) {
    b.exec_async(
        "const [ms] = arguments; const done = arguments[arguments.length - 1];
         import('/session.js').then(m => { const real = Date.now; m.sessionClock.now = () => real() + ms; done(true); });",
        json!([ms]),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reality_check_says_time_and_net_result_then_continue_then_stop_to_the_lobby() {
    let w = World::start().await;
    let Some(b) = browser(&w.srv.url, DESKTOP).await else { return w.stop().await };
    open_launch(&b, &w.launch("fr", flags(false, true, Some(1), None), Some(w.lobby())).await).await;
    let token = b.token().await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    go(&b, "#", "home").await;
    assert!(b.try_find("#reality").await.is_none(), "no check before a minute");
    advance(&b, 61_000).await;
    b.wait_for("document.getElementById('reality') && document.getElementById('reality').open", "the reality check")
        .await;
    let session = w.srv.get("/api/session", &token).await;
    assert_eq!(session["mode"], "operator", "{session}");
    b.wait_for("document.getElementById('reality-net').dataset.cents !== undefined", "the session's figures").await;
    assert_eq!(cents(&b, "#reality-staked").await, session["staked_cents"].as_i64().unwrap());
    assert_eq!(cents(&b, "#reality-won").await, session["won_cents"].as_i64().unwrap());
    assert_eq!(cents(&b, "#reality-net").await, session["net_cents"].as_i64().unwrap());
    assert!(session["staked_cents"].as_i64().unwrap() > 0, "one ticket staked: {session}");
    assert_eq!(b.text("#reality-title").await, b.string("fr", "reality.title", &[]).await);
    assert_eq!(b.text("#reality-text").await, b.string("fr", "reality.text", &[("time", "1 min")]).await);
    // A modal dialog, its focus kept inside.
    let modal = b
        .exec("const d = document.getElementById('reality'); return [d.matches(':modal'), d.getAttribute('role'), document.activeElement.id];", json!([]))
        .await;
    assert_eq!(modal, json!([true, "dialog", "reality-continue"]));
    for _ in 0..3 {
        b.keys("\u{E004}").await;
        let f = b.exec("return document.activeElement.id", json!([])).await;
        assert!(f == "reality-continue" || f == "reality-stop", "the focus stays in the dialog: {f}");
    }
    axe_clean(&b, "reality check").await;
    b.shot("operator-desktop-reality-check").await;
    // Escape is not an answer: the dialog stays and says so.
    b.keys("\u{E00C}").await;
    b.keys("\u{E00C}").await;
    b.wait_for("document.getElementById('reality-note').textContent !== ''", "the note").await;
    // Chromium may close the dialog on the second Escape whatever `cancel`
    // says; its `close` event (a task of its own) opens it again.
    b.wait_for(
        "document.getElementById('reality') && document.getElementById('reality').open",
        "the dialog open again",
    )
    .await;
    assert_eq!(b.exec("return document.getElementById('reality').open", json!([])).await, true);
    assert_eq!(b.text("#reality-note").await, b.string("fr", "reality.answer", &[]).await);
    // Continue: the game goes on, the next check a minute later.
    b.click("#reality-continue").await;
    b.wait_for("!document.getElementById('reality')", "the dialog closed").await;
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    assert!(b.try_find("#reality").await.is_none(), "no second check in the same minute");
    assert!(visible(&b, "#buy").await);
    // A reload does not ask again the check answered (they are kept per session).
    b.refresh().await;
    b.wait_for("document.body.dataset.view === 'home' && document.body.dataset.state === 'idle'", "the lobby again")
        .await;
    advance(&b, 61_000).await;
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    assert!(b.try_find("#reality").await.is_none(), "the first check is not asked twice");
    advance(&b, 121_000).await;
    b.wait_for(
        "document.getElementById('reality') && document.getElementById('reality').dataset.k === '2'",
        "the second check",
    )
    .await;
    // Stop: the session ends on the server, and the player is back at the operator's lobby.
    b.click("#reality-stop").await;
    b.wait_for("location.href.includes('operator-lobby')", "the operator's lobby").await;
    let r = reqwest::Client::new().get(format!("{}/api/me", w.srv.url)).bearer_auth(&token).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401, "the session is over on the server");
    b.close().await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_limit_ends_the_session_and_stop_without_a_lobby_says_so_in_english() {
    let w = World::start().await;
    let Some(b) = browser(&w.srv.url, PHONE).await else { return w.stop().await };
    // The time limit, no lobby: the page says the session ended.
    open_launch(&b, &w.launch("en", flags(false, true, None, Some(1)), None).await).await;
    let token = b.token().await;
    advance(&b, 61_000).await;
    assert_eq!(wait_ended(&b).await, "limit");
    assert_eq!(b.text("#ended-text").await, b.string("en", "ended.limit.text", &[]).await);
    assert!(!visible(&b, "#buy").await && !visible(&b, "#register").await);
    let r = reqwest::Client::new().get(format!("{}/api/me", w.srv.url)).bearer_auth(&token).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401, "the session is over on the server");
    assert_fits(&b, 390, "ended").await;
    axe_clean(&b, "session ended").await;
    b.shot("operator-phone-en-session-limit").await;
    // "Stop" of the reality check without a lobby: the same page, its own words.
    open_launch(&b, &w.launch("en", flags(false, false, Some(1), None), None).await).await;
    advance(&b, 61_000).await;
    b.wait_for("document.getElementById('reality') && document.getElementById('reality').open", "the reality check")
        .await;
    assert_eq!(b.text("#reality-continue").await, "Continue");
    assert_eq!(b.text("#reality-stop").await, "Stop");
    b.click("#reality-stop").await;
    assert_eq!(wait_ended(&b).await, "stop");
    assert_eq!(b.text("#ended-title").await, b.string("en", "ended.stop.title", &[]).await);
    b.close().await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launch_link_used_twice_is_refused_in_the_players_language() {
    let w = World::start().await;
    let Some(b) = browser(&w.srv.url, DESKTOP).await else { return w.stop().await };
    for lang in ["fr", "en"] {
        let path = w.launch(lang, flags(false, false, None, None), Some(w.lobby())).await;
        open_launch(&b, &path).await;
        // The same link again (the browser's history, a shared link): refused.
        b.expect_http_error("/api/launch", 401);
        b.goto(&format!("{}{path}", w.srv.url)).await;
        assert_eq!(wait_ended(&b).await, "launch_invalid", "{lang}");
        assert_eq!(b.exec("return document.documentElement.lang", json!([])).await, lang);
        assert_eq!(b.text("#ended-text").await, b.string(lang, "ended.launch.text", &[]).await);
        if lang == "fr" {
            assert_eq!(
                b.text("#ended-text").await,
                "Ce lien de jeu a expiré ou a déjà servi ; relancez le jeu depuis le site de votre opérateur."
            );
        }
        assert_eq!(b.exec("return document.getElementById('ended-lobby').href", json!([])).await, w.lobby());
        for css in ["#buy", "#register", "#login-form"] {
            assert!(!visible(&b, css).await, "{lang}: {css} not shown");
        }
        axe_clean(&b, &format!("{lang} launch refused")).await;
        b.shot(&format!("operator-desktop-{lang}-launch-refused")).await;
        // Neither the brand nor "Mon compte" leads to a welcome or an account of ours.
        go(&b, "#/regles", "rules").await;
        b.click("#brand").await;
        assert_eq!(wait_ended(&b).await, "launch_invalid");
        go(&b, "#/regles", "rules").await;
        b.exec("location.hash = '#/compte'", json!([])).await;
        assert_eq!(wait_ended(&b).await, "launch_invalid");
        assert!(visible(&b, "#lobby-link").await, "{lang}: the operator's lobby stays in the header");
        go(&b, "#", "ended").await;
    }
    b.close().await;
    w.stop().await;
}

/// Buys, and waits for the refusal's alert: its reason and text.
async fn refused(b: &Browser) -> (Value, String) {
    b.click("#buy").await;
    b.wait_for("!document.getElementById('alert').hidden && document.body.dataset.state === 'idle'", "the refusal")
        .await;
    let reason = b.exec("return document.getElementById('alert').dataset.reason", json!([])).await;
    (reason, b.text("#alert").await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_refusal_of_the_operators_wallet_is_said_in_its_own_words() {
    let w = World::start().await;
    let Some(b) = browser(&w.srv.url, DESKTOP).await else { return w.stop().await };
    for lang in ["fr", "en"] {
        open_launch(&b, &w.launch(lang, flags(false, false, None, None), Some(w.lobby())).await).await;
        for (status, code, _) in REFUSALS {
            // The lobby first (its balance is read from the operator's wallet), then the operator says no.
            go(&b, "#", "home").await;
            match code {
                "insufficient_funds" => w.set_player(100, None, false).await,
                "limit_reached" => w.set_player(FUNDS, Some(0), false).await,
                "player_blocked" => w.set_player(FUNDS, None, true).await,
                "wallet_unavailable" => {
                    w.set_player(FUNDS, None, false).await;
                    let mut c = w.op.chaos().config();
                    c.error_rate = 1.0;
                    w.op.chaos().set(c).unwrap();
                }
                // The reference operator never says it (its sessions are ours): the walk of operator.rs covers it.
                _ => continue,
            }
            let before = w.funds().await;
            // The operator's refusal, on purpose (and, its wallet down, the lobby's balance).
            b.expect_http_error("/api/tickets", status);
            if code == "wallet_unavailable" {
                b.expect_http_error("/api/me", 503);
            }
            let (reason, text) = refused(&b).await;
            assert_eq!(reason, code, "{lang} {status} {code}: {text}");
            let key = match code {
                "insufficient_funds" => "op.refused.funds",
                "limit_reached" => "op.refused.limit",
                "player_blocked" => "op.refused.blocked",
                _ => "op.refused.unavailable",
            };
            assert!(text.starts_with(&b.string(lang, key, &[]).await), "{lang} {code}: {text}");
            assert_eq!(w.funds().await, before, "{lang} {code}: nothing debited");
            assert!(b.try_find("#view-game:not([hidden])").await.is_none(), "{lang} {code}: no ticket opened");
            if lang == "fr" {
                axe_clean(&b, &format!("refusal {code}")).await;
                b.shot(&format!("operator-desktop-refused-{code}")).await;
            }
            if code == "wallet_unavailable" {
                // The wallet still down: the lobby and the tickets show, the balance said unknown.
                b.refresh().await;
                b.wait_for(
                    "document.body.dataset.view === 'home' && document.body.dataset.state === 'idle'",
                    "the lobby",
                )
                .await;
                assert_eq!(b.text("#alert").await, b.string(lang, "op.balance.unavailable", &[]).await);
                assert!(visible(&b, "#buy").await && visible(&b, "#tickets-panel").await, "{lang}: the lobby shows");
            }
            let mut c = w.op.chaos().config();
            c.error_rate = 0.0;
            w.op.chaos().set(c).unwrap();
        }
        w.set_player(FUNDS, None, false).await;
    }
    b.close().await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operators_header_fits_a_360_px_phone_with_an_hour_on_the_timer() {
    let w = World::start().await;
    let Some(b) = browser(&w.srv.url, Screen::Phone { width: 360, height: 740 }).await else { return w.stop().await };
    for lang in ["fr", "en"] {
        open_launch(&b, &w.launch(lang, flags(true, true, None, None), Some(w.lobby())).await).await;
        advance(&b, 3_723_000).await;
        b.wait_for("/^1:02:\\d\\d$/.test(document.getElementById('session-time').textContent)", "an hour on the timer")
            .await;
        assert!(visible(&b, "#lobby-link").await && visible(&b, "#balance").await, "{lang}");
        assert_fits(&b, 360, &format!("operator lobby {lang}")).await;
        go(&b, "#/compte", "account").await;
        assert_fits(&b, 360, &format!("operator account {lang}")).await;
        b.shot(&format!("operator-phone360-{lang}-account")).await;
    }
    b.close().await;
    w.stop().await;
}
