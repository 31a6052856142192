//! Races on accounts (docs/limits.md, "Logins"): logins with the old
//! password sent at the same moment as a change of password, a recovery or
//! a closure. Whatever ends sessions is ordered with whatever opens them
//! (on PostgreSQL the player's row is locked by both), so no session born
//! from the old credentials outlives their change, on either of two server
//! processes, and a closed account never buys.

use crate::helpers::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const OLD: &str = "the old password";
const NEW: &str = "the new password";
/// Rounds of each race; logins with the old password in each.
const ROUNDS: usize = 10;
const LOGINS: usize = 4;

#[derive(Debug, Clone, Copy)]
enum Change {
    Credentials,
    Recovery,
    Closure,
}

/// The request that ends the sessions: answered 2xx.
async fn change(app: &TestApp, url: &str, kind: Change, login: &str, own: &str, code: &str) -> Resp {
    let (path, token, body) = match kind {
        Change::Credentials => {
            ("/api/me/credentials", Some(own), json!({"login": login, "password": NEW, "current_password": OLD}))
        }
        Change::Recovery => ("/api/recovery", None, json!({"login": login, "recovery_code": code, "password": NEW})),
        Change::Closure => ("/api/me/close", Some(own), json!({"password": OLD})),
    };
    let method = if matches!(kind, Change::Credentials) { reqwest::Method::PUT } else { reqwest::Method::POST };
    let mut req = app.client.request(method, format!("{url}{path}")).json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    app.send(req).await
}

/// A new account of password [`OLD`]: its login, own token and recovery code.
async fn account(app: &TestApp, login: &str) -> (String, String) {
    let r = app.post("/api/players", None, json!({"login": login, "password": OLD})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    (r.json["token"].as_str().unwrap().to_string(), r.json["recovery_code"].as_str().unwrap().to_string())
}

/// How long before the change's answer its logins start, so that they end
/// with it (the change's commit is the moment to race): the change's time
/// alone less a login's alone, both measured on accounts of their own.
async fn aim(app: &TestApp, kind: Change) -> Duration {
    let login = format!("aim-{kind:?}").to_lowercase();
    let (own, code) = account(app, &login).await;
    let started = Instant::now();
    let r = app.post("/api/sessions", None, json!({"login": login, "password": OLD})).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let one_login = started.elapsed();
    let started = Instant::now();
    assert!(change(app, &app.url, kind, &login, &own, &code).await.status.is_success());
    started.elapsed().saturating_sub(one_login)
}

/// One race: the change, and [`LOGINS`] logins with the old password timed
/// to end around the change's commit (`aim`, spread by a few ms),
/// alternately on each process. The tokens of the logins answered 201.
async fn race(app: &TestApp, urls: &[String], kind: Change, round: usize, aim: Duration) -> Vec<String> {
    let login = format!("racer-{kind:?}-{round}").to_lowercase();
    let (own, code) = account(app, &login).await;
    let logins = (0..LOGINS).map(|i| {
        let (client, url, login) = (app.client.clone(), urls[i % urls.len()].clone(), login.clone());
        // From 6 ms before the aim to 6 ms after, shifted each round.
        let spread = Duration::from_millis(((i * 4 + round * 3) % 13) as u64);
        let delay = (aim + spread).saturating_sub(Duration::from_millis(6));
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let r = client
                .post(format!("{url}/api/sessions"))
                .json(&json!({"login": login, "password": OLD}))
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let body: Value = r.json().await.unwrap_or(Value::Null);
            assert!(matches!(status, 201 | 401), "a login in the race: {status} {body}");
            body["token"].as_str().map(str::to_string)
        })
    });
    let logins: Vec<_> = logins.collect();
    let changed = change(app, &urls[round % urls.len()], kind, &login, &own, &code).await;
    assert!(changed.status.is_success(), "{kind:?}: {} {}", changed.status, changed.json);
    let mut tokens = Vec::new();
    for l in logins {
        tokens.extend(l.await.unwrap());
    }
    tokens
}

both! {
/// The second outside audit's finding that a session opened with an old
/// password outlived its change (README.md, "What an attacker meets"):
/// zero survivors over many rounds of each race, on two processes where
/// the database allows it (PostgreSQL), and no purchase by a token of a
/// closed account.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_session_opened_with_the_old_password_outlives_its_change() {
    let tune = |c: &mut server::Config| {
        c.logins_per_address = 0;
        c.password_hash_wait_ms = 30_000;
    };
    let Some(app) = spawn_app_with(tune).await else { return };
    let other = match app.backend {
        Backend::Postgres => Some(app.another_process(tune).await.unwrap()),
        Backend::Sqlite => None,
    };
    let mut urls = vec![app.url.clone()];
    urls.extend(other.as_ref().map(|o| o.url()));
    let (mut opened, mut survivors) = (0, Vec::new());
    for kind in [Change::Credentials, Change::Recovery, Change::Closure] {
        let aim = aim(&app, kind).await;
        for round in 0..ROUNDS {
            for token in race(&app, &urls, kind, round, aim).await {
                opened += 1;
                for url in &urls {
                    let me = app.send(app.client.get(format!("{url}/api/me")).bearer_auth(&token)).await;
                    let bought = app
                        .send(app.client.post(format!("{url}/api/tickets")).bearer_auth(&token).json(&json!({})))
                        .await;
                    assert_ne!(bought.status, 201, "{kind:?}: a session of the old password bought: {}", bought.json);
                    if me.status != 401 || bought.status != 401 {
                        survivors.push((kind, round, me.status, bought.status));
                    }
                }
            }
        }
    }
    assert!(survivors.is_empty(), "sessions of the old password still work: {survivors:?} ({opened} opened)");
    // The races were real: some logins got in before the change, and were ended by it.
    assert!(opened > 0, "no login of the old password got in: the race was never run");
    // A closed account holds no session at all.
    let alive = app.query_i64(
        "SELECT COUNT(*) FROM sessions s JOIN players p ON p.id = s.player_id WHERE p.closed_ms IS NOT NULL",
    )
    .await;
    assert_eq!(alive, 0);
    if let Some(other) = other {
        other.shutdown().await.unwrap();
    }
    app.shutdown().await;
}
}
