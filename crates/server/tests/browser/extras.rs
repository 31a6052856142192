//! What players used to FDJ's instant games expect: the lobby's top prize from the
//! server's prize table; "Acheter un ticket à 3,00 € ?" before a purchase,
//! turned off with "Ne plus demander" and back on in ⚙.

use crate::harness::*;
use crate::webdriver::Screen;
use serde_json::json;

const DESKTOP: Screen = Screen::Desktop { width: 1280, height: 900 };
const PHONE: Screen = Screen::Phone { width: 390, height: 844 };
const ESCAPE: &str = "\u{E00C}";
const TAB: &str = "\u{E004}";

/// `cents` in whole euros as the page's `Intl.NumberFormat` writes them
/// (fr-FR: "2 000 €" with narrow no-break spaces; en-GB: "€2,000").
fn whole_euros(cents: u64, lang: &str) -> String {
    assert!(cents.is_multiple_of(100), "a prize in whole euros");
    let digits = (cents / 100).to_string();
    let sep = if lang == "fr" { '\u{202f}' } else { ',' };
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(sep);
        }
        grouped.push(c);
    }
    if lang == "fr" { format!("{grouped}\u{a0}€") } else { format!("€{grouped}") }
}

/// The test table's largest prize, from the math crate (what GET /api/odds says).
fn top_prize() -> u64 {
    let table = math::PrizeTable::parse_toml(TABLE).unwrap();
    math::Payout::compute(&table, &math::Odds::exact()).largest_prize_cents
}

/// A new player (no login) in the lobby, with the play money.
async fn new_player(b: &Browser) {
    b.open("/?anim=0").await;
    b.click("#register").await;
    b.wait_for(&format!("document.getElementById('balance').dataset.cents === '{START}'"), "the play money").await;
    b.wait_for("document.body.dataset.state === 'idle' && !document.getElementById('buy').disabled", "the lobby").await;
}

async fn top_prize_in(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let odds: serde_json::Value = reqwest::get(format!("{}/api/odds", srv.url)).await.unwrap().json().await.unwrap();
    let top = top_prize();
    assert_eq!(odds["table"]["top_prize_cents"], top, "the server's table says its largest prize");
    let Some(b) = browser(&srv.url, screen).await else { return };
    new_player(&b).await;
    b.wait_for("!document.getElementById('buy-top').hidden", "the top prize").await;
    assert_eq!(b.exec("return document.getElementById('buy-top').dataset.cents", json!([])).await, top.to_string());
    let fr = b.string("fr", "buy.top", &[("prize", &whole_euros(top, "fr"))]).await;
    assert_eq!(b.text("#buy-top").await, fr, "{size}");
    assert!(fr.starts_with("Jusqu’à 2\u{202f}000\u{a0}€"), "{fr}");
    // Inside the buy panel, above the button.
    let inside = b
        .exec("return document.getElementById('buy-panel').contains(document.getElementById('buy-top'))", json!([]))
        .await;
    assert_eq!(inside, true);
    b.shot(&format!("extras-top-prize-fr-{size}")).await;
    b.click("#lang").await;
    let en = b.string("en", "buy.top", &[("prize", &whole_euros(top, "en"))]).await;
    b.wait_for(&format!("document.getElementById('buy-top').textContent === {}", json!(en)), "the English top prize")
        .await;
    assert_eq!(en, "Win up to €2,000");
    if matches!(screen, Screen::Phone { .. }) {
        assert_fits(&b, 390, "the lobby with its top prize").await;
    }
    if let Some(v) = b.axe().await {
        assert!(v.is_empty(), "{size}: axe-core: {v:#?}");
    }
    b.shot(&format!("extras-top-prize-en-{size}")).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_says_the_top_prize_from_the_servers_table_in_french_and_english_on_a_desktop() {
    top_prize_in(DESKTOP, "desktop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_says_the_top_prize_from_the_servers_table_on_a_phone() {
    top_prize_in(PHONE, "phone").await;
}

// ------------------------------------------------------------------ the purchase's confirmation

async fn balance(b: &Browser) -> String {
    b.exec("return document.getElementById('balance').dataset.cents", json!([])).await.as_str().unwrap().to_string()
}

async fn tickets_of(srv: &TestServer, b: &Browser) -> usize {
    srv.get("/api/tickets", &b.token().await).await["tickets"].as_array().map_or(0, Vec::len)
}

async fn dialog_open(b: &Browser) -> bool {
    b.exec("const d = document.getElementById('buy-confirm'); return !!d && d.open;", json!([])).await == true
}

async fn active_id(b: &Browser) -> String {
    b.exec("return document.activeElement ? document.activeElement.id : ''", json!([]))
        .await
        .as_str()
        .unwrap_or("")
        .into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purchase_is_confirmed_first_cancel_buys_nothing_and_ne_plus_demander_turns_it_off() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, DESKTOP).await else { return };
    // A real player's browser: the question is on (the harness turns it off for the other tests).
    b.exec("localStorage.removeItem('asc.confirmBuy');", json!([])).await;
    new_player(&b).await;
    assert_eq!(b.exec("return document.getElementById('confirm-toggle').checked", json!([])).await, true);

    // Cancel with the button: no ticket, the balance unchanged, the focus back on #buy.
    b.click("#buy").await;
    b.wait_for("document.getElementById('buy-confirm')?.open", "the confirmation").await;
    let text = b.text("#buy-confirm-text").await;
    assert_eq!(text, b.string("fr", "confirm.buy", &[("price", "3,00\u{a0}€")]).await);
    assert_eq!(text, "Acheter un ticket à 3,00\u{a0}€ ?");
    assert_eq!(active_id(&b).await, "buy-confirm-yes", "the focus goes into the dialog");
    if let Some(v) = b.axe().await {
        assert!(v.is_empty(), "axe-core with the confirmation open: {v:#?}");
    }
    b.shot("extras-confirm-purchase").await;
    // The focus stays in the dialog: Tab goes round its three controls.
    let mut seen = Vec::new();
    for _ in 0..4 {
        b.keys(TAB).await;
        seen.push(active_id(&b).await);
    }
    assert_eq!(seen, ["buy-confirm-no", "buy-confirm-never", "buy-confirm-yes", "buy-confirm-no"]);
    b.click("#buy-confirm-no").await;
    b.wait_for("!document.getElementById('buy-confirm')", "the dialog closed").await;
    assert_eq!(active_id(&b).await, "buy");
    // Escape cancels too.
    b.click("#buy").await;
    b.wait_for("document.getElementById('buy-confirm')?.open", "the confirmation again").await;
    b.keys(ESCAPE).await;
    b.wait_for("!document.getElementById('buy-confirm')", "Escape closes it").await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(tickets_of(&srv, &b).await, 0, "cancelled: no ticket bought");
    assert_eq!(balance(&b).await, START.to_string(), "cancelled: the balance unchanged");
    assert_eq!(srv.get("/api/me", &b.token().await).await["balance_cents"], START);
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "home");

    // Confirmed: one ticket, opened.
    b.click("#buy").await;
    b.wait_for("document.getElementById('buy-confirm')?.open", "the confirmation").await;
    b.click("#buy-confirm-yes").await;
    b.wait_seq(0).await;
    assert_eq!(tickets_of(&srv, &b).await, 1);
    assert_eq!(balance(&b).await, (START - 300).to_string());
    b.exec("location.hash = ''", json!([])).await;
    b.wait_for("document.body.dataset.view === 'home' && document.body.dataset.state === 'idle'", "the lobby").await;

    // "Ne plus demander", ticked and confirmed: this purchase and the next go without the question.
    b.click("#buy").await;
    b.wait_for("document.getElementById('buy-confirm')?.open", "the confirmation").await;
    b.click("#buy-confirm-never").await;
    b.click("#buy-confirm-yes").await;
    b.wait_for("document.body.dataset.view === 'game' && document.body.dataset.state === 'idle'", "the second ticket")
        .await;
    assert_eq!(b.exec("return localStorage.getItem('asc.confirmBuy')", json!([])).await, "0");
    b.exec("location.hash = ''", json!([])).await;
    b.wait_for("document.body.dataset.view === 'home' && document.body.dataset.state === 'idle'", "the lobby").await;
    assert_eq!(b.exec("return document.getElementById('confirm-toggle').checked", json!([])).await, false);
    b.click("#buy").await;
    b.wait_for("document.body.dataset.view === 'game' && document.body.dataset.state === 'idle'", "a direct purchase")
        .await;
    assert!(!dialog_open(&b).await, "turned off: no question");
    assert_eq!(tickets_of(&srv, &b).await, 3);
    assert_eq!(balance(&b).await, (START - 900).to_string());

    // ⚙ turns it back on, kept across a reload; in English too.
    b.exec("location.hash = ''", json!([])).await;
    b.wait_for("document.body.dataset.view === 'home' && document.body.dataset.state === 'idle'", "the lobby").await;
    b.click("#settings > summary").await;
    b.click("#confirm-toggle").await;
    assert_eq!(b.exec("return localStorage.getItem('asc.confirmBuy')", json!([])).await, "1");
    b.click("#settings > summary").await;
    b.open("/?anim=0").await;
    b.click("#lang").await;
    b.click("#buy").await;
    b.wait_for("document.getElementById('buy-confirm')?.open", "the confirmation, back on").await;
    assert_eq!(b.text("#buy-confirm-text").await, "Buy a ticket for €3.00?");
    b.keys(ESCAPE).await;
    b.wait_for("!document.getElementById('buy-confirm')", "Escape closes it").await;
    assert_eq!(tickets_of(&srv, &b).await, 3);
    b.close().await;
}

// ------------------------------------------------------------------ recovery without e-mail, closing

/// `XXXX-XXXX-XXXX-XXXX` of the unambiguous alphabet.
fn is_recovery_code(code: &str) -> bool {
    let groups: Vec<&str> = code.split('-').collect();
    groups.len() == 4
        && groups.iter().all(|g| g.len() == 4 && g.bytes().all(|b| b"23456789ABCDEFGHJKLMNPQRSTUVWXYZ".contains(&b)))
}

/// The recovery code's panel (not modal: the existing tests that sign up
/// with a login go on past it): its code, checked by axe-core, then
/// "C'est noté" removes it.
async fn note_the_code(b: &Browser, what: &str) -> String {
    b.wait_for("document.getElementById('recovery-panel') && document.body.dataset.state === 'idle'", what).await;
    let code = b.text("#recovery-code").await;
    assert!(is_recovery_code(&code), "{what}: {code:?}");
    // Announced on the next animation frame (dom.js `announce`): waited for, not read at once.
    b.wait_for(
        &format!("document.getElementById('live').textContent.includes('{code}')"),
        &format!("{what}: the code announced to screen readers"),
    )
    .await;
    if let Some(v) = b.axe().await {
        assert!(v.is_empty(), "{what}: axe-core: {v:#?}");
    }
    b.click("#recovery-done").await;
    b.wait_for("!document.getElementById('recovery-panel')", "the panel gone").await;
    code
}

async fn status_of(srv: &TestServer, token: &str) -> u16 {
    reqwest::Client::new().get(format!("{}/api/me", srv.url)).bearer_auth(token).send().await.unwrap().status().as_u16()
}

async fn recovery(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let Some(a) = browser(&srv.url, screen).await else { return };
    a.open("/?anim=0").await;
    a.type_into("#reg-login", "eliot").await;
    a.type_into("#reg-password", "incorruptible").await;
    a.click("#register").await;
    let code = note_the_code(&a, "the code at sign-up").await;
    a.shot(&format!("extras-recovery-code-{size}")).await;
    let first = a.token().await;
    assert_eq!(status_of(&srv, &first).await, 200);

    // Another browser, the password forgotten: the login, the code as typed on a phone, a new password.
    let Some(b) = browser(&srv.url, screen).await else { return };
    b.open("/?anim=0").await;
    b.click("#forgot > summary").await;
    b.type_into("#forgot-login", "eliot").await;
    b.type_into("#forgot-code", "2222-2222-2222-2222").await;
    b.type_into("#forgot-password", "a brand new one").await;
    b.expect_http_error("/api/recovery", 401); // a wrong code, on purpose
    b.click("#forgot-submit").await;
    b.wait_for("!document.getElementById('forgot-code-error').hidden", "the refusal").await;
    assert_eq!(b.text("#forgot-code-error").await, b.string("fr", "forgot.wrong", &[]).await);
    b.exec("document.getElementById('forgot-code').value = ''", json!([])).await;
    b.type_into("#forgot-code", &code.replace('-', "").to_lowercase()).await;
    b.click("#forgot-submit").await;
    let second = note_the_code(&b, "the new code").await;
    assert_ne!(second, code);
    b.wait_for(&format!("document.getElementById('balance').dataset.cents === '{START}'"), "signed in").await;
    assert_eq!(b.text("#alert").await, b.string("fr", "forgot.done", &[]).await);
    // The first browser's token ended; the new password opens the account.
    assert_eq!(status_of(&srv, &first).await, 401);
    let s = reqwest::Client::new()
        .post(format!("{}/api/sessions", srv.url))
        .json(&json!({"login": "eliot", "password": "a brand new one"}))
        .send()
        .await
        .unwrap();
    assert_eq!(s.status().as_u16(), 201);
    if matches!(screen, Screen::Phone { .. }) {
        assert_fits(&b, 390, "after the recovery").await;
    }

    // The account page gives a new code with the password; the old one stops working.
    b.exec("location.hash = '#/compte'", json!([])).await;
    b.wait_for(
        "document.body.dataset.view === 'account' && document.getElementById('recovery-form')",
        "the account page",
    )
    .await;
    if let Some(v) = b.axe().await {
        assert!(v.is_empty(), "the account page: axe-core: {v:#?}");
    }
    b.type_into("#recovery-password", "a brand new one").await;
    b.click("#recovery-new").await;
    let third = note_the_code(&b, "a new code from the account page").await;
    assert_ne!(third, second);
    let old = reqwest::Client::new()
        .post(format!("{}/api/recovery", srv.url))
        .json(&json!({"login": "eliot", "recovery_code": second, "password": "yet another one"}))
        .send()
        .await
        .unwrap();
    assert_eq!(old.status().as_u16(), 401);
    b.close().await;
    a.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recovery_code_shown_once_at_sign_up_sets_a_new_password_on_another_browser_on_a_desktop() {
    recovery(DESKTOP, "desktop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recovery_code_shown_once_at_sign_up_sets_a_new_password_on_another_browser_on_a_phone() {
    recovery(PHONE, "phone").await;
}

/// Plays the ticket `id` to its end through the API, as its owner.
async fn finish_over_the_api(srv: &TestServer, token: &str, id: &str) {
    let t = srv.get(&format!("/api/tickets/{id}"), token).await["ticket"].clone();
    let prizes = serde_json::from_value(t["prizes_cents"].clone()).unwrap();
    let seed = "00112233445566778899aabbccddeeff";
    let plan = testkit::search_card_orders(t["serial"].as_str().unwrap(), seed, prizes, 300, |_| true).unwrap();
    for (seq, a) in plan.actions.iter().enumerate() {
        let mut body = action_json(seq as u64, *a);
        if seq == 0 {
            body["client_seed"] = json!(seed);
        }
        srv.post(&format!("/api/tickets/{id}/actions"), Some(token), &body).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_account_waits_for_the_ticket_in_play_then_ends_every_token_and_keeps_the_tickets() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, PHONE).await else { return };
    b.open("/?anim=0").await;
    b.type_into("#reg-login", "frank").await;
    b.type_into("#reg-password", "nitti1234").await;
    b.click("#register").await;
    note_the_code(&b, "the code at sign-up").await;
    let token = b.token().await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    let id = b.exec("return document.getElementById('view-game').dataset.id", json!([])).await;
    let id = id.as_str().unwrap().to_string();

    b.exec("location.hash = '#/compte'", json!([])).await;
    b.wait_for("document.body.dataset.view === 'account' && document.getElementById('close-form')", "the account page")
        .await;
    b.type_into("#close-password", "nitti1234").await;
    // Not ticked: asked to confirm, nothing sent.
    b.click("#close-account").await;
    b.wait_for("!document.getElementById('close-sure-error').hidden", "the confirmation asked").await;
    assert_eq!(status_of(&srv, &token).await, 200);
    b.click("#close-sure").await;
    b.expect_http_error("/api/me/close", 409); // a ticket in play, on purpose
    b.click("#close-account").await;
    // A ticket in play: refused (409 ticket_in_play), said as such.
    let inplay = b.string("fr", "close.inplay", &[]).await;
    b.wait_for(&format!("document.getElementById('alert').textContent === {}", json!(inplay)), "the refusal").await;
    assert_eq!(status_of(&srv, &token).await, 200);
    if let Some(v) = b.axe().await {
        assert!(v.is_empty(), "the account page with the closing: axe-core: {v:#?}");
    }
    assert_fits(&b, 390, "the account page").await;
    b.shot("extras-close-account-phone").await;

    // Finished, it closes.
    finish_over_the_api(&srv, &token, &id).await;
    b.click("#close-account").await;
    let done = b.string("fr", "close.done", &[]).await;
    b.wait_for(&format!("document.getElementById('alert').textContent === {}", json!(done)), "closed").await;
    assert_eq!(b.exec("return localStorage.getItem('asc.token')", json!([])).await, serde_json::Value::Null);
    b.wait_for("document.body.dataset.view === 'home' && !document.getElementById('welcome').hidden", "the welcome")
        .await;
    assert_eq!(status_of(&srv, &token).await, 401);
    let again = reqwest::Client::new()
        .post(format!("{}/api/sessions", srv.url))
        .json(&json!({"login": "frank", "password": "nitti1234"}))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status().as_u16(), 401, "no login any more");
    b.close().await;
}
