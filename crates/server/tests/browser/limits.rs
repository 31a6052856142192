//! Responsible play in the browser, on a desktop and a 390 px phone: the
//! "Interdit aux mineurs" question of the first visit (remembered), the
//! footer's notice on every screen, a limit of one ticket a day set in
//! "Mes limites" and a second purchase refused with the server's message
//! and nothing debited, a raise that waits for its cooling-off, and a
//! self-exclusion confirmed first.

use crate::harness::*;
use crate::webdriver::Screen;
use serde_json::{Value, json};

const DESKTOP: Screen = Screen::Desktop { width: 1280, height: 900 };
const PHONE: Screen = Screen::Phone { width: 390, height: 844 };

async fn go(b: &Browser, hash: &str, view: &str) {
    b.exec("location.hash = arguments[0]; window.scrollTo(0, 0);", json!([hash])).await;
    b.wait_for(
        &format!("document.body.dataset.view === '{view}' && document.body.dataset.state === 'idle'"),
        &format!("the {view} view"),
    )
    .await;
}

/// The footer's notice, visible on the screen the page shows now.
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
    for needed in [
        "Interdit aux mineurs",
        "Jouer comporte des risques : endettement, isolement, dépendance.",
        "09 74 75 13 13",
        "joueurs-info-service.fr",
    ] {
        assert!(text.contains(needed), "{screen}: the footer says {needed:?}: {text}");
    }
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
    // "No": said plainly, and the question stays.
    b.click("#age-no").await;
    b.wait_for("!document.getElementById('age-refused').hidden", "the refusal").await;
    assert_eq!(b.text("#age-refused").await, b.string("fr", "age.refused", &[]).await);
    assert_eq!(b.exec("return document.getElementById('age-gate').open", json!([])).await, true);
    assert_eq!(b.exec("return localStorage.getItem('asc.adult')", json!([])).await, Value::Null);
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

    // One ticket a day, set in "Mes limites" (from the header's link).
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.click(".bar-nav a[href='#/limites']").await;
    b.wait_for(
        "document.body.dataset.view === 'limits' && document.body.dataset.state === 'idle' && document.getElementById('limits-form')",
        "the limits",
    )
    .await;
    b.type_into("#limit-day", "1").await;
    b.click("#limits-save").await;
    b.wait_for("!document.getElementById('limits-done').hidden", "saved").await;
    assert_eq!(b.text("#limits-done").await, b.string("fr", "limits.saved", &[]).await);
    let l = limits(&srv, &token).await;
    assert_eq!(l["tickets_per_day"], 1, "{l}");
    assert_eq!(l["pending"], Value::Null, "lowering applies at once: {l}");

    // One ticket bought; the second refused with the server's message, nothing debited.
    go(&b, "#", "home").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    go(&b, "#", "home").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '9700'", "one ticket paid").await;
    b.expect_http_error("/api/tickets", 403); // the refusal, on purpose
    b.click("#buy").await;
    b.wait_for(
        "document.body.dataset.state === 'idle' && document.getElementById('alert').dataset.reason === 'limit_reached' && !document.getElementById('alert').hidden",
        "the refusal",
    )
    .await;
    // The same purchase straight to the server: the same refusal, its message.
    let r = reqwest::Client::new()
        .post(format!("{}/api/tickets", srv.url))
        .bearer_auth(&token)
        .header("Idempotency-Key", "browser-limit-check-0001")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let refusal: Value = r.json().await.unwrap();
    assert_eq!(refusal["error"], "limit_reached");
    let message = refusal["message"].as_str().unwrap();
    assert_eq!(b.text("#refusal-message").await, message, "the server's message");
    let alert = b.text("#alert").await;
    assert!(alert.starts_with(&b.string("fr", "limits.refused.limit", &[]).await), "{alert}");
    assert!(alert.contains(&b.string("fr", "limits.refused.nothing", &[]).await), "{alert}");
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "home");
    assert_eq!(b.exec("return document.getElementById('balance').dataset.cents", json!([])).await, "9700");
    assert_eq!(srv.get("/api/me", &token).await["balance_cents"], 9700, "nothing debited");
    assert_eq!(srv.get("/api/tickets", &token).await["tickets"].as_array().unwrap().len(), 1);
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot(&format!("limits-{size}-2-refused")).await;

    // A raise waits for the cooling-off: shown with its date, the old limit holds.
    b.click("#alert a[href='#/limites']").await;
    b.wait_for(
        "document.body.dataset.view === 'limits' && document.body.dataset.state === 'idle' && document.getElementById('limits-form')",
        "the limits",
    )
    .await;
    assert!(b.text("#used-day").await.starts_with("1 ticket acheté sur 1"), "{}", b.text("#used-day").await);
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
    assert_eq!(days, json!(["7", "30", "90", "180"]));
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
    // A purchase is refused, said plainly, nothing debited.
    go(&b, "#", "home").await;
    b.expect_http_error("/api/tickets", 403); // the refusal, on purpose
    b.click("#buy").await;
    b.wait_for(
        "document.body.dataset.state === 'idle' && document.getElementById('alert').dataset.reason === 'self_excluded' && !document.getElementById('alert').hidden",
        "the refusal",
    )
    .await;
    assert!(b.text("#alert").await.starts_with(&b.string("fr", "limits.refused.excluded", &[]).await));
    assert!(!b.text("#refusal-message").await.is_empty(), "the server's message");
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
