//! The players' accounts under stress and at their ends (docs/player-api.md):
//!
//! - **login flood**: hundreds of logins at once against one server; the
//!   server hashes only a few passwords at once (each argon2id hash takes
//!   19 MiB), so its peak memory (`VmHWM`) stays under a ceiling, and every
//!   answer is a session (201) or a refusal 503 with `Retry-After`, never a
//!   500 nor a timeout;
//! - **revocation**, on each backend: a password change made with one
//!   session ends the player's other sessions and own token at once, the
//!   changing session going on; a logout ends the token it is made with;
//!   the own token of an account without a login is never revoked (409).

use super::args::{Backend, ReliabilityArgs};
use super::testbed::{Database, start_server};
use serde_json::{Value, json};
use std::time::Duration;

/// Logins sent at once in the flood.
const FLOOD: usize = 250;
/// The server's peak resident memory during the flood must stay under this.
const CEILING_MIB: u64 = 400;

pub fn run(args: &ReliabilityArgs, backends: &[Backend], rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    let flood = login_flood(args, rt)?;
    let mut ok = flood["ok"] == true;
    let mut revocations = Vec::new();
    for &b in backends {
        let r = revocation(args, b, rt)?;
        ok &= r["ok"] == true || r["skipped"] == true;
        revocations.push(r);
    }
    println!("accounts: {}", if ok { "PASS" } else { "FAIL" });
    Ok(json!({"ok": ok, "login_flood": flood, "revocation": revocations}))
}

async fn send(r: reqwest::RequestBuilder) -> anyhow::Result<(u16, Value, Option<String>)> {
    let resp = r.timeout(Duration::from_secs(60)).send().await?;
    let status = resp.status().as_u16();
    let retry = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_string);
    let bytes = resp.bytes().await?;
    Ok((status, serde_json::from_slice(&bytes).unwrap_or(Value::Null), retry))
}

/// Peak resident memory of a process, in KiB (`VmHWM`).
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn login_flood(args: &ReliabilityArgs, rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    let db = Database::create(args, Backend::Sqlite, "login-flood")?.expect("SQLite is always there");
    let server = start_server(&db, &["--logins-per-address", "0"])?;
    let url = server.url.clone();
    let answers = rt.block_on(async {
        let c = reqwest::Client::new();
        let body = json!({"login": "flood", "password": "right password"});
        let (status, created, _) = send(c.post(format!("{url}/api/players")).json(&body)).await?;
        anyhow::ensure!(status == 201, "registration: {status} {created}");
        // Five logins of that account (its back-off admits five at once)
        // among logins of names nobody holds (each checked against a hash
        // all the same, so that the answer does not say who exists): every
        // one costs a hash.
        let tasks: Vec<_> = (0..FLOOD)
            .map(|i| {
                let body = if i % (FLOOD / 5) == 0 {
                    body.clone()
                } else {
                    json!({"login": format!("nobody-{i}"), "password": "a guessed password"})
                };
                let url = url.clone();
                // A connection of its own each: they all arrive at once.
                tokio::spawn(async move {
                    send(reqwest::Client::new().post(format!("{url}/api/sessions")).json(&body)).await
                })
            })
            .collect();
        let mut answers = Vec::new();
        for t in tasks {
            answers.push(t.await??);
        }
        anyhow::Ok(answers)
    })?;
    let peak_mib = peak_kib(server.pid).unwrap_or(u64::MAX) / 1024;
    let sessions = answers.iter().filter(|a| a.0 == 201).count();
    let checked = sessions + answers.iter().filter(|a| a.0 == 401).count();
    let busy = answers.iter().filter(|a| a.0 == 503).count();
    let busy_with_retry =
        answers.iter().filter(|a| a.0 == 503 && a.2.is_some() && a.1["error"] == "unavailable").count();
    let others: Vec<String> = answers
        .iter()
        .filter(|a| !matches!(a.0, 201 | 401 | 503))
        .take(5)
        .map(|a| format!("{} {}", a.0, a.1))
        .collect();
    // The HTTP trace logs every 5xx at ERROR: the 503s counted above are
    // the refusals by design; anything else is a failure.
    let server_errors: Vec<String> =
        server.errors.lock().unwrap().iter().filter(|l| !l.contains("Status code: 503")).cloned().collect();
    let ok = peak_mib < CEILING_MIB
        && checked > 0
        && busy == busy_with_retry
        && others.is_empty()
        && server_errors.is_empty();
    println!(
        "accounts: {FLOOD} logins at once: {checked} passwords checked ({sessions} sessions), {busy} refused 503 ({busy_with_retry} with Retry-After), \
         peak memory {peak_mib} MiB (ceiling {CEILING_MIB}): {}",
        if ok { "ok" } else { "FAIL" }
    );
    Ok(json!({
        "ok": ok,
        "logins": FLOOD,
        "sessions": sessions,
        "checked": checked,
        "refused_503": busy,
        "refused_503_with_retry_after": busy_with_retry,
        "other_answers": others,
        "peak_rss_mib": peak_mib,
        "ceiling_mib": CEILING_MIB,
        "server_errors": server_errors,
    }))
}

fn revocation(args: &ReliabilityArgs, backend: Backend, rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    let Some(db) = Database::create(args, backend, "revocation")? else {
        return Ok(json!({"backend": backend.name(), "skipped": true}));
    };
    let server = start_server(&db, &[])?;
    let url = server.url.clone();
    let failures = rt.block_on(async {
        let c = reqwest::Client::new();
        let mut failures = Vec::new();
        let mut expect = |what: &str, got: u16, want: u16| {
            if got != want {
                failures.push(format!("{what}: {got}, expected {want}"));
            }
        };
        let me = |token: &str| c.get(format!("{url}/api/me")).bearer_auth(token);
        let out = |token: &str| {
            c.delete(format!("{url}/api/sessions/current"))
                .bearer_auth(token)
                .header("content-type", "application/json")
        };
        let login = |password: &str| {
            c.post(format!("{url}/api/sessions")).json(&json!({"login": "revoked", "password": password}))
        };
        let (_, created, _) =
            send(c.post(format!("{url}/api/players")).json(&json!({"login": "revoked", "password": "first pass"})))
                .await?;
        let own = created["token"].as_str().unwrap_or_default().to_string();
        expect("own token before", send(me(&own)).await?.0, 200);
        let phone = send(login("first pass")).await?.1["token"].as_str().unwrap_or_default().to_string();
        let laptop = send(login("first pass")).await?.1["token"].as_str().unwrap_or_default().to_string();
        let change = json!({"login": "revoked", "password": "second pass", "current_password": "first pass"});
        let changed = send(c.put(format!("{url}/api/me/credentials")).bearer_auth(&phone).json(&change)).await?;
        expect("password change", changed.0, 200);
        expect("the changing session after the change", send(me(&phone)).await?.0, 200);
        expect("another session after the change", send(me(&laptop)).await?.0, 401);
        expect("the own token after the change", send(me(&own)).await?.0, 401);
        expect("the old password", send(login("first pass")).await?.0, 401);
        expect("logout", send(out(&phone)).await?.0, 204);
        expect("the session after its logout", send(me(&phone)).await?.0, 401);
        expect("the new password", send(login("second pass")).await?.0, 201);
        // An account without a login keeps its only key.
        let (_, bare, _) = send(c.post(format!("{url}/api/players")).json(&json!({}))).await?;
        let bare = bare["token"].as_str().unwrap_or_default().to_string();
        expect("logout with the only key", send(out(&bare)).await?.0, 409);
        expect("the only key after the refusal", send(me(&bare)).await?.0, 200);
        anyhow::Ok(failures)
    })?;
    let ok = failures.is_empty() && server.errors.lock().unwrap().is_empty();
    println!("accounts: revocation on {}: {}", backend.name(), if ok { "ok" } else { "FAIL" });
    for f in &failures {
        println!("  {f}");
    }
    Ok(json!({"backend": backend.name(), "ok": ok, "failures": failures}))
}
