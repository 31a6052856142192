//! A self-exclusion is not undone in a minute (a finding of the second outside audit): the page
//! keeps its end on the device (`asc.excludedUntil`), so that after a
//! logout, or a closure, the welcome screen offers neither "Créer mon
//! compte" nor the demo until then, and says why, in French and English;
//! "Se connecter" stays. Closing the account is refused (409
//! `self_excluded`) and the page says so. A fresh browser profile still
//! offers both: an account without identity can promise no more (docs/browser.md
//! "What an account without identity can and cannot promise").
//!
//! The rules: the player's self-exclusion keeps them from play until the end
//! they chose (loi 2010-476, art. 26: "mécanismes d'auto-exclusion"), beside
//! the limits an account sets on its own play (décret 2010-518, art. 16).

use crate::harness::*;
use crate::operator::visible;
use crate::webdriver::Screen;
use serde_json::{Value, json};

const DESKTOP: Screen = Screen::Desktop { width: 1280, height: 900 };
const PHONE: Screen = Screen::Phone { width: 390, height: 844 };

/// A day and time as the page writes it (dom.js `dayTime`) in `lang`.
async fn day_time(b: &Browser, lang: &str, ms: i64) -> String {
    let locale = if lang == "fr" { "fr-FR" } else { "en-GB" };
    let v = b
        .exec(
            "return new Intl.DateTimeFormat(arguments[0], { dateStyle: 'long', timeStyle: 'short' }).format(new Date(arguments[1]))",
            json!([locale, ms]),
        )
        .await;
    v.as_str().unwrap().to_string()
}

/// The welcome screen under the device's exclusion until `until`, in `lang`:
/// no "Créer mon compte", no demo, the exclusion said; "Se connecter" there.
async fn welcome_excluded(b: &Browser, lang: &str, until: i64) {
    b.wait_for(
        "document.body.dataset.view === 'home' && document.body.dataset.state === 'idle' && !document.getElementById('welcome').hidden",
        "the welcome screen",
    )
    .await;
    for gone in ["#register", "#register-form", "#demo-start", "#demo-panel"] {
        assert!(!visible(b, gone).await, "{lang}: {gone} is not offered during the exclusion");
    }
    for there in ["#welcome-excluded", "#login-form", "#login-submit"] {
        assert!(visible(b, there).await, "{lang}: {there} is shown");
    }
    let date = day_time(b, lang, until).await;
    assert_eq!(
        b.text("#welcome-excluded-title").await,
        b.string(lang, "welcome.excluded.title", &[("date", &date)]).await
    );
    assert_eq!(b.text("#welcome-excluded-text").await, b.string(lang, "welcome.excluded.text", &[]).await);
}

/// The page in `lang` (its header's switch).
async fn in_lang(b: &Browser, lang: &str) {
    if b.exec("return document.documentElement.lang", json!([])).await != lang {
        b.click("#lang").await;
        b.wait_for(&format!("document.documentElement.lang === '{lang}'"), "the language").await;
    }
}

async fn status_of_me(srv: &TestServer, token: &str) -> u16 {
    reqwest::Client::new().get(format!("{}/api/me", srv.url)).bearer_auth(token).send().await.unwrap().status().as_u16()
}

/// Excluded for 24 hours from "Mes limites", a closure refused and said,
/// logged out: the welcome offers no new account and no demo (French, then
/// English, then after a reload), "Se connecter" finds the account again;
/// another browser profile still offers both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_self_exclusion_and_a_logout_the_welcome_offers_no_new_account_nor_demo_on_this_device() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, DESKTOP).await else { return };
    b.open("/?anim=0").await;
    b.type_into("#reg-login", "rocco").await;
    b.type_into("#reg-password", "lampone1").await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    let token = b.token().await;

    // Excluded for 24 hours (the first choice), confirmed.
    go(&b, "#/limites", "limits").await;
    b.click("#exclude-go").await;
    b.wait_for("document.getElementById('exclude-dialog')?.open", "the question").await;
    b.click("#exclude-confirm").await;
    b.wait_for("document.getElementById('limits-excluded')", "the exclusion").await;
    let until = srv.get("/api/me/limits", &token).await["excluded_until_ms"].as_i64().expect("excluded");
    assert_eq!(b.exec("return localStorage.getItem('asc.excludedUntil')", json!([])).await, until.to_string());

    // Closing is refused (409 self_excluded), said with the exclusion's end.
    go(&b, "#/compte", "account").await;
    b.wait_for("document.getElementById('close-form')", "the closing form").await;
    b.type_into("#close-password", "lampone1").await;
    b.click("#close-sure").await;
    b.expect_http_error("/api/me/close", 409); // excluded, on purpose
    b.click("#close-account").await;
    let said = b.string("fr", "err.self_excluded.account_close", &[("until", &day_time(&b, "fr", until).await)]).await;
    b.wait_for(&format!("document.getElementById('alert').textContent === {}", json!(said)), "the refusal").await;
    assert!(said.contains("ne peut pas être fermé avant"), "{said}");
    assert_eq!(status_of_me(&srv, &token).await, 200, "the account stays open");
    assert_eq!(srv.get("/api/me/limits", &token).await["excluded_until_ms"], until, "and excluded");

    // Logged out: the welcome, without "Créer mon compte" nor the demo.
    go(&b, "#", "home").await;
    b.click("#settings > summary").await;
    b.click("#logout").await;
    b.wait_for("document.getElementById('logout-dialog')?.open", "the question").await;
    b.click("#logout-confirm").await;
    b.wait_for("localStorage.getItem('asc.token') === null", "the logout").await;
    welcome_excluded(&b, "fr", until).await;
    axe_clean(&b, "the welcome during a self-exclusion").await;
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot("exclusion-desktop-welcome-fr").await;
    in_lang(&b, "en").await;
    welcome_excluded(&b, "en", until).await;
    b.shot("exclusion-desktop-welcome-en").await;
    // A reload reads it from the device again.
    b.open("/?anim=0").await;
    welcome_excluded(&b, "en", until).await;
    in_lang(&b, "fr").await;

    // "Se connecter" with the existing login stays possible; the lobby says the exclusion.
    b.type_into("#login-login", "rocco").await;
    b.type_into("#login-password", "lampone1").await;
    b.click("#login-submit").await;
    b.wait_for("document.getElementById('rg-lobby').dataset.state === 'excluded'", "the lobby, excluded").await;
    assert!(!visible(&b, "#buy").await, "no purchase");

    // Another browser profile knows nothing of it: both are offered.
    let Some(other) = browser(&srv.url, DESKTOP).await else { return };
    other.open("/?anim=0").await;
    for there in ["#register", "#demo-start"] {
        assert!(visible(&other, there).await, "a fresh profile offers {there}");
    }
    assert!(!visible(&other, "#welcome-excluded").await);
    other.close().await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

/// An account without a login, excluded from another device (over the API):
/// this browser learns it from the closure's 409 itself (English, on a
/// phone), keeps it, and once the account is forgotten here the welcome
/// offers neither a new account nor the demo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closure_refused_for_an_exclusion_keeps_the_exclusion_on_the_device_in_english_on_a_phone() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, PHONE).await else { return };
    b.open("/?anim=0").await;
    in_lang(&b, "en").await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    let token = b.token().await;
    assert_eq!(b.exec("return localStorage.getItem('asc.excludedUntil')", json!([])).await, Value::Null);
    let until = srv.post("/api/me/self-exclusion", Some(&token), &json!({"days": 7})).await["excluded_until_ms"]
        .as_i64()
        .unwrap();

    go(&b, "#/compte", "account").await;
    b.wait_for("document.getElementById('close-form')", "the closing form").await;
    b.click("#close-sure").await;
    b.expect_http_error("/api/me/close", 409); // excluded, on purpose
    b.click("#close-account").await;
    let said = b.string("en", "err.self_excluded.account_close", &[("until", &day_time(&b, "en", until).await)]).await;
    b.wait_for(&format!("document.getElementById('alert').textContent === {}", json!(said)), "the refusal").await;
    assert_eq!(b.exec("return localStorage.getItem('asc.excludedUntil')", json!([])).await, until.to_string());
    assert_eq!(status_of_me(&srv, &token).await, 200, "the account stays open");
    assert_fits(&b, 390, "the account page with the refusal").await;

    // Forgotten here (a logout without a login loses the account): the welcome.
    go(&b, "#", "home").await;
    b.click("#settings > summary").await;
    b.click("#logout").await;
    b.wait_for("document.getElementById('logout-dialog')?.open", "the question").await;
    b.click("#logout-confirm").await;
    b.wait_for("localStorage.getItem('asc.token') === null", "the logout").await;
    welcome_excluded(&b, "en", until).await;
    assert_fits(&b, 390, "the welcome during a self-exclusion").await;
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot("exclusion-phone-welcome-en").await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}
