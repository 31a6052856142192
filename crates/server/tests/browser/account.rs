//! The player keeps their account (docs/player-api.md): created with a
//! name, a login and a password, or played at once and kept later ("Garder
//! mon compte"); logging in on a second browser profile (another Chromium,
//! its own storage) finds the same tickets and balance; logging out warns
//! as it should (no lost-token warning when the account has a login) and
//! ends the session on the server. A desktop and a 390 px phone each play
//! both sides.

use crate::harness::*;
use crate::webdriver::Screen;
use serde_json::{Value, json};

const DESKTOP: Screen = Screen::Desktop { width: 1280, height: 900 };
const PHONE: Screen = Screen::Phone { width: 390, height: 844 };

/// The ids of "Mes tickets", as the page lists them.
async fn listed(b: &Browser) -> Value {
    b.exec("return [...document.querySelectorAll('#tickets > li[data-id]')].map(li => li.dataset.id).sort()", json!([]))
        .await
}

/// Buys a ticket from the lobby and comes back to it.
async fn buy_one(b: &Browser) -> String {
    b.click("#buy").await;
    b.wait_seq(0).await;
    let id = b.exec("return document.getElementById('view-game').dataset.id", json!([])).await;
    let id = id.as_str().unwrap().to_string();
    b.exec("location.hash = ''", json!([])).await;
    b.wait_for(
        &format!("document.body.dataset.view === 'home' && document.querySelector(\"#tickets > li[data-id='{id}']\")"),
        "the lobby with the ticket",
    )
    .await;
    id
}

/// Logs in with the welcome screen's form.
async fn log_in(b: &Browser, login: &str, password: &str) {
    b.type_into("#login-login", login).await;
    b.type_into("#login-password", password).await;
    b.click("#login-submit").await;
}

async fn status_of_me(srv: &TestServer, token: &str) -> u16 {
    reqwest::Client::new().get(format!("{}/api/me", srv.url)).bearer_auth(token).send().await.unwrap().status().as_u16()
}

/// Created with a login on `first`, found again on `second`.
async fn created_with_a_login(first: Screen, second: Screen, login: &str) {
    let srv = spawn_server().await;
    let Some(a) = browser(&srv.url, first).await else { return };
    a.open("/?anim=0").await;
    a.type_into("#name", "Eliot Ness").await;
    a.type_into("#reg-login", &login.to_uppercase()).await;
    a.type_into("#reg-password", "incorruptible").await;
    a.click("#register").await;
    a.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    // An account with a login needs no reminder to keep it.
    a.wait_for("document.body.dataset.state === 'idle'", "the lobby").await;
    assert_eq!(a.exec("return document.getElementById('keep-panel').hidden", json!([])).await, true);
    let first_token = a.token().await;
    let me = srv.get("/api/me", &first_token).await;
    assert_eq!(me["login"], login, "the login is folded to lower case: {me}");
    assert_eq!(me["name"], "Eliot Ness");
    let bought = [buy_one(&a).await, buy_one(&a).await];
    let mut ids = bought.to_vec();
    ids.sort();
    assert_eq!(listed(&a).await, json!(ids));
    a.wait_for("document.getElementById('balance').dataset.cents === '9400'", "two tickets paid").await;

    // Another browser profile: a wrong password first, then the right one.
    let Some(b) = browser(&srv.url, second).await else { return };
    b.open("/?anim=0").await;
    assert_eq!(b.exec("return localStorage.getItem('asc.token')", json!([])).await, Value::Null, "a new profile");
    b.expect_http_error("/api/sessions", 401); // the wrong password, on purpose
    log_in(&b, login, "not-the-password").await;
    b.wait_for("!document.getElementById('login-password-error').hidden", "the refusal").await;
    assert_eq!(b.text("#login-password-error").await, b.string("fr", "account.login.wrong", &[]).await);
    assert_eq!(b.exec("return localStorage.getItem('asc.token')", json!([])).await, Value::Null);
    log_in(&b, login, "incorruptible").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '9400'", "the same balance").await;
    b.wait_for("document.querySelectorAll('#tickets > li[data-id]').length === 2", "the tickets").await;
    assert_eq!(listed(&b).await, json!(ids), "the second browser finds the same tickets");
    let session = b.token().await;
    assert_ne!(session, first_token, "a session of its own");
    b.shot(&format!(
        "account-{}-lobby-after-login",
        if matches!(second, Screen::Phone { .. }) { "phone" } else { "desktop" }
    ))
    .await;
    // A ticket opens there too.
    b.click(&format!("#tickets li[data-id='{}'] a", bought[0])).await;
    b.wait_seq(0).await;
    assert_eq!(b.exec("return document.getElementById('view-game').dataset.id", json!([])).await, bought[0]);

    // Logging out: the account has a login, so no warning about a lost token.
    b.exec("location.hash = ''; window.scrollTo(0, 0);", json!([])).await;
    b.wait_for("document.body.dataset.view === 'home' && document.body.dataset.state === 'idle'", "the lobby").await;
    b.click("#settings > summary").await;
    b.click("#logout").await;
    b.wait_for(
        "document.getElementById('logout-dialog') && document.getElementById('logout-dialog').open",
        "the question",
    )
    .await;
    assert_eq!(b.exec("return document.getElementById('logout-dialog').dataset.login", json!([])).await, "yes");
    assert_eq!(b.text("#logout-text").await, b.string("fr", "logout.text.login", &[("login", login)]).await);
    assert!(b.try_find("#logout-keep").await.is_none(), "nothing to keep");
    b.click("#logout-confirm").await;
    b.wait_for(
        "document.body.dataset.state === 'idle' && !document.getElementById('welcome').hidden && localStorage.getItem('asc.token') === null",
        "the welcome screen",
    )
    .await;
    // The session ended on the server; the first browser's stays.
    assert_eq!(status_of_me(&srv, &session).await, 401, "the session token stops working");
    assert_eq!(status_of_me(&srv, &first_token).await, 200);
    b.close().await;
    a.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_created_on_a_desktop_is_found_on_a_phone() {
    created_with_a_login(DESKTOP, PHONE, "eliot.ness").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_created_on_a_phone_is_found_on_a_desktop() {
    created_with_a_login(PHONE, DESKTOP, "al_capone-31").await;
}

/// Played at once, then kept: the logout warns, "Garder mon compte" sets a
/// login, and another browser logs in with it.
async fn played_at_once_then_kept(first: Screen, second: Screen, size: &str) {
    let srv = spawn_server().await;
    let Some(a) = browser(&srv.url, first).await else { return };
    a.open("/?anim=0").await;
    a.click("#register").await;
    a.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    a.wait_for("!document.getElementById('keep-panel').hidden", "the reminder to keep the account").await;
    let id = buy_one(&a).await;

    // Logging out without a login: the warning says the account would be lost.
    a.exec("window.scrollTo(0, 0)", json!([])).await;
    a.click("#settings > summary").await;
    a.click("#logout").await;
    a.wait_for(
        "document.getElementById('logout-dialog') && document.getElementById('logout-dialog').open",
        "the question",
    )
    .await;
    assert_eq!(a.exec("return document.getElementById('logout-dialog').dataset.login", json!([])).await, "no");
    assert_eq!(a.text("#logout-text").await, a.string("fr", "logout.text.nologin", &[]).await);
    a.shot(&format!("account-{size}-logout-warning")).await;
    a.click("#logout-keep").await;
    a.wait_for(
        "document.body.dataset.view === 'account' && document.body.dataset.state === 'idle'",
        "the account page",
    )
    .await;
    assert!(a.token().await.len() > 10, "still logged in");

    // A login too short, then a good one.
    a.type_into("#cred-login", "al").await;
    a.type_into("#cred-password", "prohibition").await;
    a.click("#cred-save").await;
    a.wait_for("!document.getElementById('cred-login-error').hidden", "the rule").await;
    assert_eq!(a.text("#cred-login-error").await, a.string("fr", "account.login.bad", &[]).await);
    a.type_into("#cred-login", "capone").await;
    a.click("#cred-save").await;
    a.wait_for("document.getElementById('cred-done') && !document.getElementById('cred-done').hidden", "kept").await;
    assert_eq!(a.text("#cred-done").await, a.string("fr", "account.saved", &[("login", "capone")]).await);
    assert_eq!(a.text("#account-login").await, "capone");
    a.shot(&format!("account-{size}-kept")).await;
    assert_eq!(srv.get("/api/me", &a.token().await).await["login"], "capone");
    // The reminder is gone from the lobby.
    a.exec("location.hash = ''", json!([])).await;
    a.wait_for(
        "document.body.dataset.view === 'home' && document.body.dataset.state === 'idle' && document.getElementById('keep-panel').hidden",
        "the lobby without the reminder",
    )
    .await;

    let Some(b) = browser(&srv.url, second).await else { return };
    b.open("/?anim=0").await;
    log_in(&b, "capone", "prohibition").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '9700'", "the same balance").await;
    assert_eq!(listed(&b).await, json!([id]), "the same ticket");
    b.close().await;
    a.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_played_at_once_is_kept_later_on_a_phone() {
    played_at_once_then_kept(PHONE, DESKTOP, "phone").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_played_at_once_is_kept_later_on_a_desktop() {
    played_at_once_then_kept(DESKTOP, PHONE, "desktop").await;
}
