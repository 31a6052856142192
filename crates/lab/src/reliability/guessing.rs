//! `as-capone reliability guessing`: the attacks of an outside audit on the
//! limits on guessing (docs/limits.md), replayed against the real binary on
//! each backend: a forged `X-Forwarded-For`, right play codes whose clients
//! hang up, wrong codes from many networks meant to lock every paper player
//! out, one login guessed from many networks, and (on PostgreSQL) the same
//! limits across two server processes on one database.
//!
//! Each check names what must hold; the part fails if any does not.

use super::args::{Backend, ReliabilityArgs};
use super::testbed::{Database, OPERATOR_TOKEN, start_server, table};
use serde_json::{Value, json};
use std::time::Duration;

const SHOP: &str = "Reliability Shop";
const SHOP_TOKEN: &str = "reliability-shop-token-0123456789";
/// Wrong play codes per network, from everyone before guessing is slowed,
/// and per network while it is.
const PER_NETWORK: usize = 5;
const GLOBAL: usize = 30;
const SLOWED: usize = 2;

/// The checks' outcome: each name with `ok` and what was seen.
#[derive(Default)]
struct Checks(Vec<Value>);

impl Checks {
    fn check(&mut self, name: &str, ok: bool, seen: impl std::fmt::Display) {
        println!("  {} {name}: {seen}", if ok { "ok  " } else { "FAIL" });
        self.0.push(json!({"check": name, "ok": ok, "seen": seen.to_string()}));
    }
}

/// An answer's status and JSON.
struct Answer {
    status: u16,
    json: Value,
    retry_after: Option<u64>,
}

struct Client {
    http: reqwest::Client,
}

impl Client {
    async fn send(&self, req: reqwest::RequestBuilder) -> anyhow::Result<Answer> {
        let r = req.send().await?;
        let status = r.status().as_u16();
        let retry_after = r.headers().get("retry-after").and_then(|v| v.to_str().ok()?.parse().ok());
        let json = serde_json::from_slice(&r.bytes().await?).unwrap_or(Value::Null);
        Ok(Answer { status, json, retry_after })
    }

    /// A POST from client address `from` (the proxy's X-Forwarded-For).
    async fn post(&self, url: &str, from: &str, token: Option<&str>, body: Value) -> anyhow::Result<Answer> {
        let mut req = self.http.post(url).header("x-forwarded-for", from).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        self.send(req).await
    }

    async fn redeem(&self, base: &str, from: &str, code: &str) -> anyhow::Result<Answer> {
        self.post(&format!("{base}/api/tickets/redeem"), from, None, json!({ "code": code })).await
    }

    async fn login(
        &self,
        base: &str,
        from: &str,
        token: Option<&str>,
        login: &str,
        pw: &str,
    ) -> anyhow::Result<Answer> {
        self.post(&format!("{base}/api/sessions"), from, token, json!({"login": login, "password": pw})).await
    }
}

/// Play codes no ticket has: 80 bits each from a fixed generator.
fn wrong_codes(seed: u64) -> impl Iterator<Item = String> {
    let mut rng = super::rng::Rng::new(seed);
    std::iter::repeat_with(move || {
        let bits = (u128::from(rng.next_u64()) << 16) ^ u128::from(rng.next_u64() & 0xffff);
        emission::PlayCode::from_bits(bits & ((1u128 << 80) - 1)).to_string()
    })
}

/// The server's settings for these checks, as a configuration file.
fn config_file(db: &Database) -> anyhow::Result<std::path::PathBuf> {
    let path = db.dir.path.join("guessing.toml");
    std::fs::write(
        &path,
        format!(
            "trust_forwarded_for = true\nredeem_failures_per_address = {PER_NETWORK}\n\
             redeem_failures_global = {GLOBAL}\nredeem_failures_per_address_slowed = {SLOWED}\n\
             logins_per_address = 50\nretailer_tokens = [\"{SHOP}:{SHOP_TOKEN}\"]\n"
        ),
    )?;
    Ok(path)
}

/// A sold paper ticket's play code: a paper emission of one block, its
/// print file's first ticket, sold by the shop.
async fn sold_paper_code(c: &Client, base: &str) -> anyhow::Result<String> {
    let r = c
        .send(c.http.post(format!("{base}/api/admin/emissions")).bearer_auth(OPERATOR_TOKEN).json(&json!({
            "table": table(), "blocks": 1, "channel": "paper"
        })))
        .await?;
    anyhow::ensure!(r.status == 201, "paper emission: {} {}", r.status, r.json);
    let emission = r.json["emission"].as_u64().unwrap_or_default();
    let csv = c
        .http
        .get(format!("{base}/api/admin/emissions/{emission}/blocks/1/print.csv"))
        .bearer_auth(OPERATOR_TOKEN)
        .send()
        .await?
        .text()
        .await?;
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).ok_or_else(|| anyhow::anyhow!("{name} column"));
    let (serial, code) = (col("serial")?, col("play_code")?);
    let first: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let sold = c
        .send(c.http.post(format!("{base}/api/retail/sell")).bearer_auth(SHOP_TOKEN).json(&json!({
            "serial": first[serial]
        })))
        .await?;
    anyhow::ensure!(sold.status == 200, "sale: {} {}", sold.status, sold.json);
    Ok(first[code].to_string())
}

/// Runs the checks on one backend; `{"backend", "ok", "checks": [...]}`.
pub fn run(args: &ReliabilityArgs, backend: Backend, rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    println!("\n== guessing on {} ==", backend.name());
    let Some(db) = Database::create(args, backend, "guessing")? else {
        return Ok(json!({"backend": backend.name(), "skipped": true, "ok": true}));
    };
    let config = config_file(&db)?;
    let config = config.to_str().unwrap_or_default().to_string();
    let server = start_server(&db, &["--initial-blocks", "1", "--config", &config])?;
    let second = match backend {
        Backend::Postgres => Some(start_server(&db, &["--initial-blocks", "1", "--config", &config])?),
        Backend::Sqlite => None,
    };
    let mut checks = Checks::default();
    rt.block_on(checks_on(&mut checks, &server.url, second.as_ref().map(|s| s.url.as_str())))?;
    let errors: Vec<String> = server.errors.lock().unwrap().clone();
    checks.check("no error in the server's log", errors.is_empty(), format!("{errors:?}"));
    let ok = checks.0.iter().all(|c| c["ok"] == true);
    Ok(json!({"backend": backend.name(), "ok": ok, "checks": checks.0}))
}

async fn checks_on(checks: &mut Checks, base: &str, second: Option<&str>) -> anyhow::Result<()> {
    let c = Client { http: reqwest::Client::builder().timeout(Duration::from_secs(20)).build()? };
    let code = sold_paper_code(&c, base).await?;

    // A forged left part of X-Forwarded-For: the client is the right-most
    // entry, the one the trusted proxy appended.
    let mut wrong = wrong_codes(1);
    let mut statuses = Vec::new();
    for i in 0..(PER_NETWORK + 2) {
        let from = format!("10.{i}.{i}.{i}, 203.0.113.{}", 10 + i);
        statuses.push(c.redeem(base, &from, &wrong.next().unwrap_or_default()).await?.status);
    }
    let refused = c.redeem(base, "198.51.100.1, 203.0.113.200", &code).await?;
    checks.check(
        "a forged X-Forwarded-For does not escape the network's limit",
        statuses[..PER_NETWORK].iter().all(|&s| s == 404)
            && statuses[PER_NETWORK..].iter().all(|&s| s == 429)
            && refused.status == 429,
        format!("wrong codes {statuses:?}, then the right code {}", refused.status),
    );

    // Right codes, many times, half of them from clients that hang up at
    // once: none counts.
    let from = "198.51.100.77";
    let mut right = Vec::new();
    for i in 0..(4 * PER_NETWORK) {
        if i % 2 == 0 {
            right.push(c.redeem(base, from, &code).await?.status);
        } else {
            let quick = reqwest::Client::builder().timeout(Duration::from_micros(300 * i as u64 + 50)).build()?;
            let _ = quick
                .post(format!("{base}/api/tickets/redeem"))
                .header("x-forwarded-for", from)
                .json(&json!({
                    "code": code
                }))
                .send()
                .await;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut after = Vec::new();
    for _ in 0..=PER_NETWORK {
        after.push(c.redeem(base, from, &wrong.next().unwrap_or_default()).await?.status);
    }
    checks.check(
        "a right code never counts, even when its client hangs up",
        right.iter().all(|&s| s == 200) && after[..PER_NETWORK].iter().all(|&s| s == 404) && after[PER_NETWORK] == 429,
        format!("right codes {right:?}; then wrong codes {after:?}"),
    );

    // One login guessed from 40 networks, then its owner from their device.
    let r = c
        .post(&format!("{base}/api/players"), "192.0.2.9", None, json!({"login": "owner", "password": "correct horse"}))
        .await?;
    anyhow::ensure!(r.status == 201, "a player with a login: {} {}", r.status, r.json);
    let owners = r.json["token"].as_str().unwrap_or_default().to_string();
    let (mut checked, mut limited) = (0, 0);
    for i in 0..200 {
        let a = c.login(base, &format!("10.50.{}.1", i % 40), None, "owner", &format!("guess-{i:04}")).await?;
        match (a.status, a.retry_after) {
            (401, _) => checked += 1,
            (429, Some(_)) => limited += 1,
            (s, _) => anyhow::bail!("a guess answered {s}: {}", a.json),
        }
    }
    let device = c.login(base, "10.50.0.1", Some(&owners), "owner", "correct horse").await?;
    checks.check(
        "one login guessed from 40 networks is slowed, and its owner's device still logs in",
        (5..=10).contains(&checked) && checked + limited == 200 && device.status == 201,
        format!("{checked} checked, {limited} refused with Retry-After; the owner's device {}", device.status),
    );

    // Wrong codes from many networks past the global limit: guessing is
    // slowed, and the holder still opens the ticket at once.
    let used = PER_NETWORK * 2;
    for i in 0..(GLOBAL - used) {
        let r = c.redeem(base, &format!("10.60.{}.1", i % 5), &wrong.next().unwrap_or_default()).await?;
        anyhow::ensure!(r.status == 404, "a wrong code under every limit: {} {}", r.status, r.json);
    }
    let mut fresh = Vec::new();
    for _ in 0..=SLOWED {
        fresh.push(c.redeem(base, "10.61.0.1", &wrong.next().unwrap_or_default()).await?.status);
    }
    let holder = c.redeem(base, "10.62.0.1", &code).await?;
    checks.check(
        "past the global limit guessing is slowed and the holder is not locked out",
        fresh[..SLOWED].iter().all(|&s| s == 404) && fresh[SLOWED] == 429 && holder.status == 200,
        format!("a new network's wrong codes {fresh:?}; the holder {}", holder.status),
    );

    // Two processes on one database: one network's limit, counted once.
    if let Some(second) = second {
        let urls = [base, second];
        let mut seen = Vec::new();
        for i in 0..(PER_NETWORK + 2) {
            seen.push(c.redeem(urls[i % 2], "10.70.0.1", &wrong.next().unwrap_or_default()).await?.status);
        }
        let expected = SLOWED; // guessing is slowed now: each network gets this many
        checks.check(
            "a network's limit holds across two server processes",
            seen[..expected].iter().all(|&s| s == 404) && seen[expected..].iter().all(|&s| s == 429),
            format!("alternating processes: {seen:?}"),
        );
        let mut logins = Vec::new();
        for i in 0..8 {
            logins.push(c.login(urls[i % 2], &format!("10.71.{i}.1"), None, "someone", "12345678").await?.status);
        }
        checks.check(
            "one login's back-off holds across two server processes",
            logins[..5].iter().all(|&s| s == 401) && logins[5..].iter().all(|&s| s == 429),
            format!("alternating processes: {logins:?}"),
        );
    }
    Ok(())
}
