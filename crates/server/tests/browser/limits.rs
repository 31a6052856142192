//! Responsible play in the browser, on a desktop and a 390 px phone: the
//! "Interdit aux mineurs" question of the first visit (remembered; "Non"
//! leads away), the legal warning of the arrêté of 29 July 2022 word for
//! word on every screen, a limit of one ticket a day set in "Mes limites",
//! shown on the lobby before any refusal, and a purchase refused in the
//! page's words with nothing debited, a raise that waits for its
//! cooling-off, and a self-exclusion (24 hours to 12 months) confirmed
//! first and shown on the lobby with its end. More in responsible.rs.

use crate::harness::*;
use crate::webdriver::Screen;
use serde_json::{Value, json};

const DESKTOP: Screen = Screen::Desktop { width: 1280, height: 900 };
const PHONE: Screen = Screen::Phone { width: 390, height: 844 };

/// The footer's notice, visible on the screen the page shows now.
/// The warning of the arrêté of 29 July 2022 (the French online gaming
/// warnings), as the law words it.
pub const LEGAL_WARNING: &str = "Les jeux d'argent et de hasard peuvent être dangereux : pertes d'argent, conflits familiaux, addiction… Retrouvez nos conseils sur joueurs-info-service.fr (09 74 75 13 13 - appel non surtaxé)";

async fn assert_footer(b: &Browser, screen: &str) {
    let v = b
        .exec(
            "const f = document.getElementById('footer'); const r = f.getBoundingClientRect();
             return [f.offsetParent !== null && r.height > 0, f.textContent.replace(/\\s+/g, ' '),
                     document.getElementById('rg-site').getAttribute('href'), document.getElementById('rg-phone').getAttribute('href')];",
            json!([]),
        )
        .await;
    assert_eq!(v[0], true, "{screen}: the footer shows");
    let text = v[1].as_str().unwrap();
    assert!(text.contains("Interdit aux mineurs"), "{screen}: {text}");
    assert_eq!(
        b.exec("return document.getElementById('rg-warning').textContent.replace(/\\s+/g, ' ').trim()", json!([]))
            .await,
        LEGAL_WARNING,
        "{screen}: the warning of the arrêté of 29 July 2022, word for word"
    );
    assert_eq!(v[2], "https://www.joueurs-info-service.fr/");
    assert_eq!(v[3], "tel:+33974751313");
}

async fn age_gate_and_footer(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser_first_visit(&srv.url, screen).await else { return };
    b.open("/?anim=0").await;
    b.wait_for("document.getElementById('age-gate') && document.getElementById('age-gate').open", "the 18+ question")
        .await;
    assert_eq!(b.text("#age-title").await, "Interdit aux mineurs");
    // A modal question: the page behind it cannot be used.
    let behind = b
        .exec(
            "const r = document.getElementById('register').getBoundingClientRect();
             const e = document.elementFromPoint(r.left + r.width / 2, Math.min(r.top + r.height / 2, innerHeight - 2));
             return !!e && !e.closest('#register') && document.getElementById('age-gate').matches(':modal');",
            json!([]),
        )
        .await;
    assert_eq!(behind, true, "{size}: the welcome is out of reach until the question is answered");
    b.shot(&format!("limits-{size}-0-age-gate")).await;
    // Nothing of the page shows behind the question: its backdrop is opaque.
    let backdrop = b
        .exec("return getComputedStyle(document.getElementById('age-gate'), '::backdrop').backgroundColor", json!([]))
        .await;
    assert_eq!(backdrop, "rgb(16, 37, 27)", "{size}: an opaque backdrop");
    // "No": the game goes away; a page says why, and nothing else shows.
    b.click("#age-no").await;
    b.wait_for("document.getElementById('minor-page')", "the page for minors").await;
    assert_eq!(b.text("#age-refused").await, b.string("fr", "age.refused", &[]).await);
    let gone = b
        .exec(
            "return [!!document.getElementById('age-gate'), document.getElementById('main').hidden, document.querySelector('header.bar').hidden,
                     document.getElementById('footer').hidden, document.getElementById('main').offsetParent === null,
                     document.getElementById('minor-leave').getAttribute('href')];",
            json!([]),
        )
        .await;
    assert_eq!(gone, json!([false, true, true, true, true, "https://www.joueurs-info-service.fr/"]), "{size}");
    assert_eq!(b.exec("return localStorage.getItem('asc.adult')", json!([])).await, Value::Null);
    b.shot(&format!("limits-{size}-0-minor")).await;
    if let Some(v) = b.axe().await {
        assert!(v.is_empty(), "{size}: the page for minors: {v:?}");
    }
    // A wrong answer can be taken back: the question again.
    b.click("#minor-again").await;
    b.wait_for("document.getElementById('age-gate') && document.getElementById('age-gate').open", "the question again")
        .await;
    assert_eq!(b.exec("return document.getElementById('main').hidden", json!([])).await, false);
    b.click("#age-yes").await;
    b.wait_for("!document.getElementById('age-gate')", "the question answered").await;
    assert_eq!(b.exec("return localStorage.getItem('asc.adult')", json!([])).await, "1");
    // Remembered: not asked again.
    b.refresh().await;
    b.wait_for("document.body.dataset.state === 'idle'", "the page").await;
    assert_eq!(b.exec("return !!document.getElementById('age-gate')", json!([])).await, false);

    // The footer on every screen.
    assert_footer(&b, "welcome").await;
    for (hash, view) in [("#/regles", "rules"), ("#/chances", "odds"), ("#/limites", "limits"), ("#/compte", "account")]
    {
        go(&b, hash, view).await;
        assert_footer(&b, view).await;
    }
    go(&b, "#", "home").await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    assert_footer(&b, "lobby").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    assert_footer(&b, "ticket").await;
    b.exec("document.getElementById('footer').scrollIntoView({block: 'end'})", json!([])).await;
    b.shot(&format!("limits-{size}-1-footer")).await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_18_plus_question_and_the_footer_on_a_phone() {
    age_gate_and_footer(PHONE, "phone").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_18_plus_question_and_the_footer_on_a_desktop() {
    age_gate_and_footer(DESKTOP, "desktop").await;
}

async fn limits(srv: &TestServer, token: &str) -> Value {
    srv.get("/api/me/limits", token).await
}

async fn a_limit_reached(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    b.open("/?anim=0").await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    let token = b.token().await;

    // Two tickets a day, set in "Mes limites" (from the header's link).
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.click(".bar-nav a[href='#/limites']").await;
    b.wait_for(
        "document.body.dataset.view === 'limits' && document.body.dataset.state === 'idle' && document.getElementById('limits-form')",
        "the limits",
    )
    .await;
    b.type_into("#limit-day", "2").await;
    b.click("#limits-save").await;
    b.wait_for("!document.getElementById('limits-done').hidden", "saved").await;
    assert_eq!(b.text("#limits-done").await, b.string("fr", "limits.saved", &[]).await);
    assert_eq!(b.exec("return document.getElementById('limits-warn').hidden", json!([])).await, true);
    let l = limits(&srv, &token).await;
    assert_eq!(l["tickets_per_day"], 2, "{l}");
    assert_eq!(l["pending"], Value::Null, "lowering applies at once: {l}");

    // One ticket bought here; the lobby shows the limit and what is used.
    go(&b, "#", "home").await;
    b.wait_for("document.getElementById('rg-lobby').dataset.state === 'ok'", "the lobby's limits").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    go(&b, "#", "home").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '9700'", "one ticket paid").await;
    b.wait_for("document.getElementById('rg-lobby-usage')", "the usage").await;
    assert_eq!(
        b.text("#rg-lobby-usage").await,
        b.string("fr", "lobby.rg.usage", &[("what", "1 ticket sur 2 aujourd’hui")]).await
    );
    // A second one from another device: this lobby still offers the purchase,
    // and the server refuses the third, worded by the page from its code and
    // params (never the server's English), nothing debited.
    let r = reqwest::Client::new()
        .post(format!("{}/api/tickets", srv.url))
        .bearer_auth(&token)
        .header("Idempotency-Key", "browser-limit-check-0001")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    b.expect_http_error("/api/tickets", 403); // the refusal, on purpose
    b.click("#buy").await;
    b.wait_for(
        "document.body.dataset.state === 'idle' && document.getElementById('alert').dataset.reason === 'limit_reached' && !document.getElementById('alert').hidden",
        "the refusal",
    )
    .await;
    let alert = b.text("#alert").await;
    let worded = b.string("fr", "err.limit_reached.tickets_per_day.other", &[("used", "2"), ("max", "2")]).await;
    assert!(alert.starts_with(&worded), "{alert} / {worded}");
    assert!(!alert.contains("limit of") && !alert.contains("bought in"), "no English: {alert}");
    // The same purchase straight to the server: its code and params.
    let r = reqwest::Client::new()
        .post(format!("{}/api/tickets", srv.url))
        .bearer_auth(&token)
        .header("Idempotency-Key", "browser-limit-check-0002")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let refusal: Value = r.json().await.unwrap();
    assert_eq!(refusal["error"], "limit_reached");
    assert_eq!(refusal["params"], json!({"reason": "tickets_per_day", "max": 2, "used": 2}));
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "home");
    assert_eq!(srv.get("/api/me", &token).await["balance_cents"], 9400, "nothing more debited");
    assert_eq!(srv.get("/api/tickets", &token).await["tickets"].as_array().unwrap().len(), 2);
    // The lobby now says the limit before any purchase: no buy button.
    b.wait_for("document.getElementById('rg-lobby').dataset.state === 'limit'", "the limit on the lobby").await;
    assert_eq!(b.exec("return document.getElementById('buy-form').hidden", json!([])).await, true);
    assert_eq!(b.text("#rg-lobby-text").await, b.string("fr", "lobby.rg.day.other", &[("n", "2"), ("max", "2")]).await);
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot(&format!("limits-{size}-2-refused")).await;
    if let Some(v) = b.axe().await {
        assert!(v.is_empty(), "{size}: the lobby at a limit: {v:?}");
    }

    // "12 tickets achetés, limite 2": the page's words; a new limit already
    // passed is said at once.
    b.click("#rg-lobby-link").await;
    b.wait_for(
        "document.body.dataset.view === 'limits' && document.body.dataset.state === 'idle' && document.getElementById('limits-form')",
        "the limits",
    )
    .await;
    assert_eq!(b.text("#used-day").await, "2 tickets achetés, limite 2");
    b.type_into("#limit-day", "1").await;
    b.click("#limits-save").await;
    b.wait_for("!document.getElementById('limits-warn').hidden", "the warning").await;
    assert_eq!(
        b.text("#limits-warn").await,
        b.string("fr", "limits.passed.day.other", &[("n", "2"), ("max", "1")]).await
    );

    // A raise waits for the cooling-off: shown with its date, the old limit holds.
    b.type_into("#limit-day", "5").await;
    b.type_into("#limit-week", "30").await;
    b.click("#limits-save").await;
    b.wait_for("document.getElementById('limits-pending')", "the pending raise").await;
    let l = limits(&srv, &token).await;
    assert_eq!(l["tickets_per_day"], 1, "the old limit holds: {l}");
    assert_eq!(l["spend_per_week_cents"], 3000, "a new limit applies at once: {l}");
    assert_eq!(l["pending"]["tickets_per_day"], 5, "{l}");
    let from = l["pending"]["from_ms"].as_i64().unwrap();
    assert_eq!(
        b.exec("return document.getElementById('limits-pending').dataset.from", json!([])).await,
        from.to_string()
    );
    assert!(b.text("#limits-pending").await.contains("5 tickets"), "{}", b.text("#limits-pending").await);
    b.shot(&format!("limits-{size}-3-pending")).await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_ticket_a_day_then_a_second_purchase_refused_on_a_desktop() {
    a_limit_reached(DESKTOP, "desktop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_ticket_a_day_then_a_second_purchase_refused_on_a_phone() {
    a_limit_reached(PHONE, "phone").await;
}

async fn self_exclusion(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    b.open("/?anim=0").await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    let token = b.token().await;
    go(&b, "#/limites", "limits").await;
    let days =
        b.exec("return [...document.querySelectorAll('input[name=exclude-days]')].map(i => i.value)", json!([])).await;
    // From 24 hours to 12 months.
    assert_eq!(days, json!(["1", "7", "30", "90", "180", "365"]));
    let labels = b
        .exec(
            "return [...document.querySelectorAll('#exclusion-form label.choice')].map(l => l.textContent.trim())",
            json!([]),
        )
        .await;
    assert_eq!(labels, json!(["24 heures", "7 jours", "30 jours", "90 jours", "180 jours", "12 mois"]));
    // Asked first; "cancel" changes nothing.
    b.click("#exclude-90").await;
    b.click("#exclude-go").await;
    b.wait_for(
        "document.getElementById('exclude-dialog') && document.getElementById('exclude-dialog').open",
        "the question",
    )
    .await;
    assert_eq!(b.exec("return document.getElementById('exclude-dialog').dataset.days", json!([])).await, "90");
    b.shot(&format!("limits-{size}-4-exclusion-question")).await;
    b.click("#exclude-cancel").await;
    assert_eq!(limits(&srv, &token).await["excluded_until_ms"], Value::Null);
    // Confirmed: excluded for 90 days.
    b.click("#exclude-go").await;
    b.wait_for(
        "document.getElementById('exclude-dialog') && document.getElementById('exclude-dialog').open",
        "the question",
    )
    .await;
    let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    b.click("#exclude-confirm").await;
    b.wait_for("document.getElementById('limits-excluded')", "the exclusion").await;
    let until = limits(&srv, &token).await["excluded_until_ms"].as_i64().expect("excluded");
    let day = 86_400_000;
    assert!((until - before - 90 * day).abs() < day, "about 90 days: {until} from {before}");
    b.shot(&format!("limits-{size}-5-excluded")).await;
    // The lobby says it, with its end in the player's words, before any
    // refusal: no buy button.
    go(&b, "#", "home").await;
    b.wait_for("document.getElementById('rg-lobby').dataset.state === 'excluded'", "the exclusion on the lobby").await;
    assert_eq!(b.exec("return document.getElementById('buy-form').hidden", json!([])).await, true);
    let date = b
        .exec(
            "return new Intl.DateTimeFormat('fr-FR', { dateStyle: 'long', timeStyle: 'short' }).format(new Date(arguments[0]))",
            json!([until]),
        )
        .await;
    assert_eq!(
        b.text("#rg-lobby-text").await,
        b.string("fr", "lobby.rg.excluded", &[("date", date.as_str().unwrap())]).await
    );
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot(&format!("limits-{size}-6-lobby-excluded")).await;
    // The server refuses anyway, with the end as a parameter; nothing debited.
    let r = reqwest::Client::new()
        .post(format!("{}/api/tickets", srv.url))
        .bearer_auth(&token)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let refusal: Value = r.json().await.unwrap();
    assert_eq!(
        (refusal["error"].as_str(), refusal["params"]["until_ms"].as_i64()),
        (Some("self_excluded"), Some(until))
    );
    assert_eq!(srv.get("/api/me", &token).await["balance_cents"], 10_000);
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_exclusion_confirmed_first_then_purchases_refused_on_a_phone() {
    self_exclusion(PHONE, "phone").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_exclusion_confirmed_first_then_purchases_refused_on_a_desktop() {
    self_exclusion(DESKTOP, "desktop").await;
}
