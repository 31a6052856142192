//! Guessing a password, second audit (docs/limits.md, "Logins"): a stolen
//! token guesses no faster through the holder's own paths than a login
//! does, and strangers guessing from rotating networks cannot keep the
//! owner out: a device that logged in before has its own back-off, and the
//! recovery code (80 random bits) its own budget.

use crate::helpers::*;
use crate::limits::admitted_at_most;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

const PASSWORD: &str = "correct horse";

fn tune(c: &mut server::Config) {
    c.trust_forwarded_for = true;
    c.password_hash_wait_ms = 30_000;
}

/// A request with a JSON body from the client address `from` (X-Forwarded-For).
async fn send_from(app: &TestApp, method: &str, path: &str, from: &str, token: Option<&str>, body: Value) -> Resp {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = app.client.request(method, format!("{}{path}", app.url)).header("x-forwarded-for", from).json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    app.send(req).await
}

/// A player with a login and the password [`PASSWORD`]: its registration's answer.
async fn player(app: &TestApp, login: &str) -> Value {
    let r = app.post("/api/players", None, json!({"login": login, "password": PASSWORD})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    r.json
}

/// One wrong password through `path` (`sessions`: a stranger's login)
/// from one of 8 networks: whether it was checked (401/403) or refused (429).
async fn guess(app: &TestApp, path: &str, login: &str, token: &str, i: usize) -> bool {
    // Eight networks of each path's own (the per-network limit never refuses).
    let from = format!("10.{}.{}.1", 40 + path.len(), i % 8);
    let wrong = format!("wrong guess {i:03}");
    let r = match path {
        "sessions" => send_from(app, "POST", "/api/sessions", &from, None, json!({"login": login, "password": wrong})),
        "recovery-code" => {
            send_from(app, "POST", "/api/me/recovery-code", &from, Some(token), json!({"password": wrong}))
        }
        "credentials" => send_from(
            app,
            "PUT",
            "/api/me/credentials",
            &from,
            Some(token),
            json!({"login": login, "password": "a brand new password", "current_password": wrong}),
        ),
        "close" => send_from(app, "POST", "/api/me/close", &from, Some(token), json!({"password": wrong})),
        other => panic!("{other}"),
    }
    .await;
    match r.status.as_u16() {
        401 | 403 => true,
        429 => {
            assert_error(&r, 429, "too_many_attempts");
            assert!(r.headers.contains_key("retry-after"), "{}", r.json);
            false
        }
        s => panic!("{path}: {s} {}", r.json),
    }
}

both! {
/// The second outside audit's finding that a password given again with a
/// token guessed faster than a login (docs/limits.md "Logins"): 40 wrong passwords from 8 networks through each path
/// that checks the holder's password get the same few checks as through
/// `POST /api/sessions`; they count in the login's back-off, and the right
/// password, guessed at last, is refused with them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stolen_token_guesses_the_password_no_faster_than_a_login() {
    let Some(app) = spawn_app_with(tune).await else { return };
    for path in ["sessions", "recovery-code", "credentials", "close"] {
        let login = format!("holder-{path}");
        let token = player(&app, &login).await["token"].as_str().unwrap().to_string();
        let started = Instant::now();
        let mut checked = 0;
        for i in 0..40 {
            checked += usize::from(guess(&app, path, &login, &token, i).await);
        }
        let elapsed = started.elapsed();
        assert!(
            (5..=admitted_at_most(elapsed)).contains(&checked),
            "{path}: {checked} of 40 wrong passwords checked in {elapsed:?}: 5 free, then one per back-off"
        );
        // They filled the account's back-off, shared with the logins: a
        // stranger's login with the right password now waits too.
        let r = send_from(&app, "POST", "/api/sessions", "10.49.0.1", None, json!({"login": login, "password": PASSWORD}))
            .await;
        assert_error(&r, 429, "too_many_attempts");
        // And so does the thief who guessed right at last: nothing changed.
        let r = send_from(&app, "POST", "/api/me/close", "10.49.0.2", Some(&token), json!({"password": PASSWORD})).await;
        assert_error(&r, 429, "too_many_attempts");
        assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM players WHERE login = '{login}' AND closed_ms IS NULL")).await, 1);
    }
    app.shutdown().await;
}
}

/// Strangers' wrong logins for `login`, from rotating networks, as fast as
/// the server answers, until `stop` (at most 20 000 or 60 s), counting
/// those refused (429) in `refused`. How many were sent.
fn flood(app: &TestApp, login: &str, stop: Arc<AtomicBool>, refused: Arc<AtomicUsize>) -> JoinHandle<usize> {
    let (client, url, login) = (app.client.clone(), app.url.clone(), login.to_string());
    tokio::spawn(async move {
        let started = Instant::now();
        let mut sent = 0;
        while !stop.load(Ordering::Relaxed) && sent < 20_000 && started.elapsed() < Duration::from_secs(60) {
            let from = format!("10.{}.{}.1", 60 + sent / 250 % 100, sent % 250);
            let body = json!({"login": login, "password": format!("flood {sent}")});
            let r = client.post(format!("{url}/api/sessions")).header("x-forwarded-for", from).json(&body).send().await;
            match r.map(|r| r.status().as_u16()) {
                Ok(429) => _ = refused.fetch_add(1, Ordering::Relaxed),
                Ok(401) => {}
                Ok(other) => panic!("a wrong login of the flood: {other}"),
                Err(_) if stop.load(Ordering::Relaxed) => break,
                Err(e) => panic!("a wrong login of the flood: {e}"),
            }
            sent += 1;
        }
        sent
    })
}

/// Waits until the flood has been refused 20 more times (the account's
/// back-off closed by strangers), then checks that a stranger with the
/// right `password` is kept out too.
async fn strangers_are_kept_out(app: &TestApp, refused: &AtomicUsize, password: &str) {
    let (started, from) = (Instant::now(), refused.load(Ordering::Relaxed));
    while refused.load(Ordering::Relaxed) < from + 20 {
        assert!(started.elapsed() < Duration::from_secs(30), "the flood never closed the back-off");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    closed_for_two_seconds(app).await;
    let r = send_from(app, "POST", "/api/sessions", "192.0.2.9", None, json!({"login": "hugo", "password": password}))
        .await;
    assert_error(&r, 429, "too_many_attempts");
}

/// Waits until the account's back-off stays closed two more seconds (a
/// stranger's wrong login refused with `Retry-After` of three or more),
/// so that the checks that follow fall inside it: when a back-off ends,
/// one attempt is admitted, the flood's or a test's, whichever the server
/// takes first, and on a loaded machine the flood's cadence slows.
async fn closed_for_two_seconds(app: &TestApp) {
    let started = Instant::now();
    loop {
        let r =
            send_from(app, "POST", "/api/sessions", "192.0.2.8", None, json!({"login": "hugo", "password": "a probe"}))
                .await;
        let retry_after = r.headers.get("retry-after").and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        match (r.status.as_u16(), retry_after) {
            (429, Some(s)) if s >= 3 => return,
            (429, Some(s)) => tokio::time::sleep(Duration::from_secs(s)).await,
            (401, _) => {}
            (status, _) => panic!("a probe's wrong login: {status} {}", r.json),
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the back-off never stayed closed");
    }
}

both! {
/// The second outside audit's finding that strangers could lock the owner
/// out (docs/limits.md "Logins"): while strangers keep the account's back-off closed,
/// the owner logs in from a device where they logged in before (its device
/// token), again and again, and recovers the account from a new device with
/// the recovery code; a stranger's right password, another account's device
/// token and a forged one wait like any stranger.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn under_a_flood_of_wrong_logins_the_owner_gets_in_from_a_known_device_and_by_the_recovery_code() {
    let Some(app) = spawn_app_with(|c| {
        tune(c);
        c.logins_per_address = 20;
    })
    .await
    else {
        return;
    };
    let owner = player(&app, "hugo").await;
    let device = owner["device_token"].as_str().expect("a login's registration gives a device token").to_string();
    let code = owner["recovery_code"].as_str().unwrap().to_string();
    let other = player(&app, "ivy").await["device_token"].as_str().unwrap().to_string();
    let (stop, refused) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let flooding = flood(&app, "hugo", stop.clone(), refused.clone());
    strangers_are_kept_out(&app, &refused, PASSWORD).await;
    let login = |device: Option<String>, from: &'static str| {
        let body = json!({"login": "hugo", "password": PASSWORD, "device_token": device});
        send_from(&app, "POST", "/api/sessions", from, None, body)
    };
    // The owner's device, five times over two seconds of flood: in each time,
    // and each login's answer gives the device its next token.
    let mut token = device.clone();
    for _ in 0..5 {
        let r = login(Some(token.clone()), "198.51.100.20").await;
        assert_eq!(r.status, 201, "the owner's known device: {}", r.json);
        token = r.json["device_token"].as_str().unwrap().to_string();
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    // Not the owner's device: another account's token, a forged one, none.
    closed_for_two_seconds(&app).await;
    // Its last digit changed: to '0', or to '1' when it is '0' (never the real token).
    let forged = format!("{}{}", &device[..device.len() - 1], if device.ends_with('0') { '1' } else { '0' });
    for stranger in [Some(other), Some(forged), Some("d1.1.not-a-device".to_string()), None] {
        assert_error(&login(stranger, "198.51.100.21").await, 429, "too_many_attempts");
    }
    // A new device recovers the account with its code, whatever the flood.
    let body = json!({"login": "hugo", "recovery_code": code, "password": "a new password after the flood"});
    let r = send_from(&app, "POST", "/api/recovery", "203.0.113.30", None, body).await;
    assert_eq!(r.status, 201, "the recovery code under the flood: {}", r.json);
    assert_eq!(app.get("/api/me", r.json["token"].as_str()).await.status, 200);
    // The password changed: the old device tokens know the old password only.
    strangers_are_kept_out(&app, &refused, "a new password after the flood").await;
    let body = json!({"login": "hugo", "password": "a new password after the flood", "device_token": device});
    let r = send_from(&app, "POST", "/api/sessions", "198.51.100.22", None, body).await;
    assert_error(&r, 429, "too_many_attempts");
    stop.store(true, Ordering::Relaxed);
    let sent = flooding.await.unwrap();
    assert!(sent > 50, "the flood sent {sent} logins");
    app.shutdown().await;
}
}
