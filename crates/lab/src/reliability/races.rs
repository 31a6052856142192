//! `as-capone reliability races`: logins with the old password sent at the
//! same moment as a password change, a recovery or a closure
//! (docs/limits.md, "Logins"), against the real binary: one process on
//! SQLite, two processes on one PostgreSQL database (the logins alternate
//! between them). After each race every session a login opened is tried on
//! every process: none may still work, and none may buy a ticket on a
//! closed account. The part counts the sessions the races opened (the
//! logins that got in before the change, and that the change then ended),
//! the survivors (0 to pass) and the purchases of a closed account (0).

use super::args::{Backend, ReliabilityArgs};
use super::testbed::{Database, start_server};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const OLD: &str = "the old password";
const NEW: &str = "the new password";
/// Logins with the old password in each race.
const LOGINS: usize = 4;
const KINDS: [&str; 3] = ["credentials", "recovery", "closure"];

pub fn run(args: &ReliabilityArgs, backends: &[Backend], rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    let mut parts = Vec::new();
    let mut ok = true;
    for &b in backends {
        let r = on_backend(args, b, rt)?;
        ok &= r["ok"] == true || r["skipped"] == true;
        parts.push(r);
    }
    println!("races: {}", if ok { "PASS" } else { "FAIL" });
    Ok(json!({"ok": ok, "backends": parts}))
}

/// What the races of one backend gave.
#[derive(Default)]
struct Tally {
    races: usize,
    logins: usize,
    opened: usize,
    survivors: Vec<String>,
    closed_purchases: usize,
}

fn on_backend(args: &ReliabilityArgs, backend: Backend, rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    let Some(db) = Database::create(args, backend, "races")? else {
        return Ok(json!({"backend": backend.name(), "skipped": true}));
    };
    let extra = ["--logins-per-address", "0", "--registrations-per-address", "0", "--initial-blocks", "1"];
    let first = start_server(&db, &extra)?;
    let second = match backend {
        Backend::Postgres => Some(start_server(&db, &extra)?),
        Backend::Sqlite => None,
    };
    let mut urls = vec![first.url.clone()];
    urls.extend(second.as_ref().map(|s| s.url.clone()));
    let started = Instant::now();
    let tally = rt.block_on(async {
        let mut tally = Tally::default();
        for kind in KINDS {
            let aim = aim(&urls[0], kind).await?;
            for round in 0..args.race_rounds as usize {
                race(&urls, kind, round, aim, &mut tally).await?;
            }
        }
        anyhow::Ok(tally)
    })?;
    let errors: Vec<String> = first.errors.lock().unwrap().iter().take(5).cloned().collect();
    let ok = tally.survivors.is_empty() && tally.closed_purchases == 0 && tally.opened > 0 && errors.is_empty();
    println!(
        "races on {} ({} process{}): {} races, {} logins with the old password, {} sessions opened and ended by the change, \
         {} survivors, {} purchases on a closed account, in {:.1} s: {}",
        backend.name(),
        urls.len(),
        if urls.len() > 1 { "es" } else { "" },
        tally.races,
        tally.logins,
        tally.opened,
        tally.survivors.len(),
        tally.closed_purchases,
        started.elapsed().as_secs_f64(),
        if ok { "ok" } else { "FAIL" }
    );
    for s in tally.survivors.iter().take(5) {
        println!("  survivor: {s}");
    }
    Ok(json!({
        "backend": backend.name(),
        "ok": ok,
        "processes": urls.len(),
        "races": tally.races,
        "logins": tally.logins,
        "sessions_opened": tally.opened,
        "survivors": tally.survivors.len(),
        "survivor_samples": tally.survivors.iter().take(5).collect::<Vec<_>>(),
        "closed_account_purchases": tally.closed_purchases,
        "server_errors": errors,
        "seconds": started.elapsed().as_secs_f64(),
    }))
}

async fn send(r: reqwest::RequestBuilder) -> anyhow::Result<(u16, Value)> {
    let resp = r.timeout(Duration::from_secs(60)).send().await?;
    let status = resp.status().as_u16();
    let bytes = resp.bytes().await?;
    Ok((status, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
}

/// The request that ends the old password's sessions.
fn change(c: &reqwest::Client, url: &str, kind: &str, login: &str, own: &str, code: &str) -> reqwest::RequestBuilder {
    match kind {
        "credentials" => c
            .put(format!("{url}/api/me/credentials"))
            .bearer_auth(own)
            .json(&json!({"login": login, "password": NEW, "current_password": OLD})),
        "recovery" => {
            c.post(format!("{url}/api/recovery")).json(&json!({"login": login, "recovery_code": code, "password": NEW}))
        }
        _ => c.post(format!("{url}/api/me/close")).bearer_auth(own).json(&json!({"password": OLD})),
    }
}

/// A new account of password [`OLD`]: its own token and recovery code.
async fn account(c: &reqwest::Client, url: &str, login: &str) -> anyhow::Result<(String, String)> {
    let (status, created) =
        send(c.post(format!("{url}/api/players")).json(&json!({"login": login, "password": OLD}))).await?;
    anyhow::ensure!(status == 201, "registration: {status} {created}");
    let own = created["token"].as_str().unwrap_or_default().to_string();
    Ok((own, created["recovery_code"].as_str().unwrap_or_default().to_string()))
}

/// How long before the change's answer its logins start, so that they end
/// with its commit: the change's time alone less a login's alone.
async fn aim(url: &str, kind: &str) -> anyhow::Result<Duration> {
    let c = reqwest::Client::new();
    let login = format!("aim-{kind}");
    let (own, code) = account(&c, url, &login).await?;
    let started = Instant::now();
    let body = json!({"login": login, "password": OLD});
    anyhow::ensure!(send(c.post(format!("{url}/api/sessions")).json(&body)).await?.0 == 201, "aim: a login");
    let one_login = started.elapsed();
    let started = Instant::now();
    let (status, answer) = send(change(&c, url, kind, &login, &own, &code)).await?;
    anyhow::ensure!((200..300).contains(&status), "aim: {kind}: {status} {answer}");
    Ok(started.elapsed().saturating_sub(one_login))
}

/// One race: a new account, the change, and [`LOGINS`] logins with the old
/// password timed to end around the change's commit (spread by a few ms),
/// alternately on each process; then every session opened is tried everywhere.
async fn race(urls: &[String], kind: &str, round: usize, aim: Duration, tally: &mut Tally) -> anyhow::Result<()> {
    let c = reqwest::Client::new();
    let login = format!("race-{kind}-{round}");
    let (own, code) = account(&c, &urls[0], &login).await?;
    let logins: Vec<_> = (0..LOGINS)
        .map(|i| {
            let (url, login) = (urls[i % urls.len()].clone(), login.clone());
            let spread = Duration::from_millis(((i * 4 + round * 3) % 13) as u64);
            let delay = (aim + spread).saturating_sub(Duration::from_millis(6));
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let body = json!({"login": login, "password": OLD});
                send(reqwest::Client::new().post(format!("{url}/api/sessions")).json(&body)).await
            })
        })
        .collect();
    let (status, answer) = send(change(&c, &urls[round % urls.len()], kind, &login, &own, &code)).await?;
    anyhow::ensure!((200..300).contains(&status), "{kind}: {status} {answer}");
    tally.races += 1;
    for l in logins {
        let (status, answer) = l.await??;
        tally.logins += 1;
        anyhow::ensure!(matches!(status, 201 | 401), "a login in the race: {status} {answer}");
        let Some(token) = answer["token"].as_str() else { continue };
        tally.opened += 1;
        for url in urls {
            let (me, _) = send(c.get(format!("{url}/api/me")).bearer_auth(token)).await?;
            let (bought, _) = send(c.post(format!("{url}/api/tickets")).bearer_auth(token).json(&json!({}))).await?;
            if kind == "closure" && bought == 201 {
                tally.closed_purchases += 1;
            }
            if me != 401 || bought != 401 {
                tally.survivors.push(format!("{kind} round {round} on {url}: /api/me {me}, purchase {bought}"));
            }
        }
    }
    Ok(())
}
