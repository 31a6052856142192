//! The limits on guessing passwords and creating players (docs/limits.md):
//! per client network, per account from anywhere with a back-off its owner
//! can always get past, and held across server processes because they are
//! counted in the database. The play codes' limits are in `paper.rs`.

use crate::helpers::*;
use serde_json::json;
use std::time::{Duration, Instant};

/// `POST /api/sessions` from `from` (X-Forwarded-For) to `url`, with a bearer token or none.
async fn login_from(app: &TestApp, url: &str, from: &str, token: Option<&str>, login: &str, password: &str) -> Resp {
    app.post_from(url, "/api/sessions", from, token, json!({"login": login, "password": password})).await
}

/// The `Retry-After` of a 429, in seconds.
fn retry_after(r: &Resp) -> u64 {
    assert_error(r, 429, "too_many_attempts");
    r.headers["retry-after"].to_str().unwrap().parse().unwrap()
}

/// The most password checks the back-off admits in `elapsed` after the
/// free ones: one after 1 s, then 2 s, 4 s...
pub fn admitted_at_most(elapsed: Duration) -> usize {
    let (mut t, mut k) = (0u128, 0usize);
    while t <= elapsed.as_millis() {
        t += 1000 << k;
        k += 1;
    }
    5 + k
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guessing_one_login_from_many_addresses_is_slowed_and_its_owner_still_logs_in() {
    let Some(app) = spawn_app_with(|c| c.trust_forwarded_for = true).await else { return };
    let r = app.post("/api/players", None, json!({"login": "dora", "password": "correct horse"})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let owners_token = r.json["token"].as_str().unwrap().to_string();
    // 800 guesses from 40 networks, 20 each (each network within its own limit).
    let started = Instant::now();
    let (mut checked, mut refused) = (0, 0);
    for i in 0..800 {
        let r = login_from(&app, &app.url, &format!("10.5.{}.1", i % 40), None, "dora", &format!("guess-{i:04}")).await;
        match r.status.as_u16() {
            401 => checked += 1,
            _ => {
                assert!((1..=300).contains(&retry_after(&r)), "{}", r.json);
                refused += 1;
            }
        }
    }
    let elapsed = started.elapsed();
    assert!(
        (5..=admitted_at_most(elapsed)).contains(&checked),
        "{checked} passwords checked in {elapsed:?}: 5 free, then one per back-off"
    );
    assert_eq!(checked + refused, 800);
    // The owner's device (a valid token of theirs) skips the back-off at once.
    let s = login_from(&app, &app.url, "192.0.2.50", Some(&owners_token), "dora", "correct horse").await;
    assert_eq!(s.status, 201, "{}", s.json);
    assert_eq!(app.query_i64("SELECT count FROM limit_counters WHERE bucket = 'login:account:dora'").await, 0);
    // Guessing starts again; after the back-off, the owner's password works
    // from anywhere, even without a token.
    for i in 0..5 {
        let r = login_from(&app, &app.url, "10.6.0.1", None, "dora", &format!("again-{i}")).await;
        assert_error(&r, 401, "unauthorized");
    }
    let wait = retry_after(&login_from(&app, &app.url, "10.6.0.2", None, "dora", "again-5").await);
    assert_eq!(wait, 1);
    // A token of another player is not the owner's device.
    let other = app.register().await;
    retry_after(&login_from(&app, &app.url, "10.6.0.3", Some(&other), "dora", "correct horse").await);
    tokio::time::sleep(Duration::from_millis(wait * 1000 + 200)).await;
    let s = login_from(&app, &app.url, "198.51.100.7", None, "dora", "correct horse").await;
    assert_eq!(s.status, 201, "{}", s.json);
    // An unknown login is counted the same way: its answers say nothing.
    for i in 0..5 {
        assert_error(
            &login_from(&app, &app.url, "10.7.0.1", None, "nobody", &format!("x-{i}-xxxx")).await,
            401,
            "unauthorized",
        );
    }
    retry_after(&login_from(&app, &app.url, "10.7.0.2", None, "nobody", "x-5-xxxx").await);
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_limits_hold_across_server_processes() {
    let tune = |c: &mut server::Config| {
        c.trust_forwarded_for = true;
        c.logins_per_address = 6;
        c.registrations_per_address = 4;
    };
    let Some(app) = spawn_app_with(tune).await else { return };
    let second = app.another_process(tune).await;
    if app.backend == Backend::Sqlite {
        // One process per SQLite file: the second is refused, so one
        // process's counts are all there are.
        let e = second.err().expect("a second process on a SQLite file is refused");
        assert!(format!("{e:#}").contains("serves one process"), "{e:#}");
        app.shutdown().await;
        return;
    }
    let second = second.expect("a second process on PostgreSQL");
    let urls = [app.url.clone(), second.url()];
    // Six attempts from one network, alternating processes, each on a login
    // of its own (no account back-off): the seventh is refused by either.
    for i in 0..6 {
        let r = login_from(&app, &urls[i % 2], "10.8.0.1", None, &format!("who{i}"), "12345678").await;
        assert_error(&r, 401, "unauthorized");
    }
    for url in &urls {
        retry_after(&login_from(&app, url, "10.8.0.99", None, "who9", "12345678").await);
    }
    // One account from many networks, alternating processes.
    for i in 0..5 {
        let r = login_from(&app, &urls[i % 2], &format!("10.9.{i}.1"), None, "erin", "12345678").await;
        assert_error(&r, 401, "unauthorized");
    }
    for (i, url) in urls.iter().enumerate() {
        retry_after(&login_from(&app, url, &format!("10.10.{i}.1"), None, "erin", "12345678").await);
    }
    // Registrations from one network: four in all, whichever process.
    for i in 0..4 {
        let r = app.post_from(&urls[i % 2], "/api/players", "10.11.0.1", None, json!({})).await;
        assert_eq!(r.status, 201, "{}", r.json);
    }
    for url in &urls {
        retry_after(&app.post_from(url, "/api/players", "10.11.0.200", None, json!({})).await);
    }
    second.shutdown().await.unwrap();
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_whose_window_is_over_are_deleted() {
    // Guesses from ever new networks leave one counter each: the server
    // deletes those whose window is over (once a minute), and no other.
    let Some(app) = spawn_app_with(|c| c.trust_forwarded_for = true).await else { return };
    let now = server::now_ms();
    app.exec_sql(&format!(
        "INSERT INTO limit_counters VALUES ('redeem:10.0.0.0/24', {}, 3, 0), ('login:account:old', {}, 9, {})",
        now - 2 * 3_600_000,
        now - 3_600_001,
        now - 3_600_001
    ))
    .await
    .unwrap();
    let r = login_from(&app, &app.url, "10.20.0.1", None, "fresh", "12345678").await;
    assert_error(&r, 401, "unauthorized");
    app.app.store().expire_counters(now - 3_600_000).await.unwrap();
    let left = app.dump("SELECT bucket FROM limit_counters ORDER BY bucket").await;
    // With the ceiling on the counters' windows opened (the login's two),
    // whose own counter is a row too (docs/limits.md "Ceilings").
    let kept = [r#"bucket="ceiling:limit_counters"|"#, r#"bucket="login:10.20.0.0/24"|"#, r#"bucket="login:account:fresh"|"#];
    assert_eq!(left, kept, "{left:?}");
    assert_eq!(app.query_i64("SELECT count FROM limit_counters WHERE bucket = 'ceiling:limit_counters'").await, 2);
    app.shutdown().await;
}
}
