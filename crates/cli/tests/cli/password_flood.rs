//! A flood of password work against the real `as-capone serve`: hundreds of
//! logins and credential changes at once, each within its address's limit
//! (the limit is off here, so that it cannot hide the bound being tested).
//! Every argon2id hash takes 19 MiB and tens of milliseconds of CPU; the
//! server computes only a few at once (one per core) and refuses the
//! password that waited too long for its turn with 503 and `Retry-After`.
//! Measured on the process itself: its peak memory (`VmHWM` of
//! `/proc/PID/status`) stays under a ceiling, and the games played by other
//! players during the flood keep their latency.

use crate::common;

use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Logins sent at once, each task sending its next as soon as it is answered.
const LOGINS_AT_ONCE: usize = 300;
/// Credential changes (a first login and password each) sent at once.
const CHANGES_AT_ONCE: usize = 60;
/// Players playing games throughout.
const GAMERS: usize = 4;
/// The process's peak resident memory must stay under this (MiB). Unbounded,
/// 300 hashes at once take 300 × 19 MiB, several GiB.
const CEILING_MIB: u64 = 400;

/// A flood request's status, `Retry-After` and kind.
type Answer = (u16, Option<String>, &'static str);

/// A figure of `/proc/PID/status` in KiB (`VmHWM`, `VmRSS`).
fn status_kib(pid: u32, field: &str) -> u64 {
    testkit::status_kib(pid, field).unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

async fn post(c: &reqwest::Client, url: &str, token: Option<&str>, body: &Value) -> (u16, Value, Option<String>) {
    let mut r = c.post(url).json(body);
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    send(r).await
}

async fn send(r: reqwest::RequestBuilder) -> (u16, Value, Option<String>) {
    let resp = r.send().await.unwrap();
    let status = resp.status().as_u16();
    let retry = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
    let bytes = resp.bytes().await.unwrap();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null), retry)
}

/// Plays games until `stop`, pushing each action's latency into the
/// current phase's list (`flood` says which).
async fn gamer(url: String, flood: Arc<AtomicBool>, stop: Arc<AtomicBool>, lat: Arc<Mutex<[Vec<Duration>; 2]>>) {
    let c = reqwest::Client::new();
    let (status, body, _) = post(&c, &format!("{url}/api/players"), None, &json!({})).await;
    assert_eq!(status, 201, "{body}");
    let token = body["token"].as_str().unwrap().to_string();
    while !stop.load(Ordering::Relaxed) {
        let (status, body, _) = post(&c, &format!("{url}/api/tickets"), Some(&token), &json!({})).await;
        assert_eq!(status, 201, "{body}");
        let mut t = body["ticket"].clone();
        let id = t["id"].as_str().unwrap().to_string();
        while t["phase"] != "finished" && !stop.load(Ordering::Relaxed) {
            let phase = flood.load(Ordering::Relaxed);
            let started = Instant::now();
            let (status, body, _) =
                post(&c, &format!("{url}/api/tickets/{id}/actions"), Some(&token), &common::next_action(&t)).await;
            let took = started.elapsed();
            assert_eq!(status, 200, "{body}");
            // Counted in a phase only when it began and ended in it.
            if flood.load(Ordering::Relaxed) == phase {
                lat.lock().unwrap()[phase as usize].push(took);
            }
            t = body["ticket"].clone();
        }
    }
}

fn p99(v: &mut [Duration]) -> Duration {
    v.sort();
    v[(v.len() * 99 / 100).min(v.len() - 1)]
}

#[test]
fn a_flood_of_logins_keeps_memory_bounded_and_games_fast() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    let server = common::start_server(
        dir.path(),
        "flood.db",
        // 20 blocks of 2 000: four players playing without pause for the
        // test's ten seconds finished the default 2 blocks on an idle
        // machine and were refused with 503 sold_out.
        &[
            "--start-balance-cents",
            "10000000",
            "--demo-token",
            "",
            "--logins-per-address",
            "0",
            "--initial-blocks",
            "20",
        ],
    );
    let (pid, url) = (server.pid, server.url.clone());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let c = reqwest::Client::new();
        let (status, body, _) =
            post(&c, &format!("{url}/api/players"), None, &json!({"login": "flood", "password": "right password"}))
                .await;
        assert_eq!(status, 201, "{body}");
        // The players whose credentials will be set during the flood.
        let mut fresh = Vec::new();
        for _ in 0..CHANGES_AT_ONCE {
            let (status, body, _) = post(&c, &format!("{url}/api/players"), None, &json!({})).await;
            assert_eq!(status, 201, "{body}");
            fresh.push(body["token"].as_str().unwrap().to_string());
        }
        let before_kib = status_kib(pid, "VmRSS:");

        // The games alone, then with the flood, then alone again.
        let flood = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let lat: Arc<Mutex<[Vec<Duration>; 2]>> = Arc::default();
        let gamers: Vec<_> =
            (0..GAMERS).map(|_| tokio::spawn(gamer(url.clone(), flood.clone(), stop.clone(), lat.clone()))).collect();
        tokio::time::sleep(Duration::from_secs(3)).await;
        flood.store(true, Ordering::Relaxed);
        let until = Instant::now() + Duration::from_secs(4);
        let answers: Arc<Mutex<Vec<Answer>>> = Arc::default();
        let mut tasks = Vec::new();
        // Logins of names nobody holds, each checked against a hash all the
        // same (the answer does not say who exists): one account's own
        // back-off would stop a flood of one login before its hashes.
        for task in 0..LOGINS_AT_ONCE {
            let (url, answers) = (url.clone(), answers.clone());
            tasks.push(tokio::spawn(async move {
                let c = reqwest::Client::new();
                let mut n = 0;
                while Instant::now() < until {
                    n += 1;
                    let body = json!({"login": format!("nobody-{task}-{n}"), "password": "a guessed password"});
                    let (status, _, retry) = post(&c, &format!("{url}/api/sessions"), None, &body).await;
                    answers.lock().unwrap().push((status, retry, "login"));
                }
            }));
        }
        for (i, token) in fresh.into_iter().enumerate() {
            let (url, answers) = (url.clone(), answers.clone());
            tasks.push(tokio::spawn(async move {
                let c = reqwest::Client::new();
                let body = json!({"login": format!("fresh-{i}"), "password": "a new password"});
                let r = c.put(format!("{url}/api/me/credentials")).bearer_auth(&token).json(&body);
                let (status, _, retry) = send(r).await;
                answers.lock().unwrap().push((status, retry, "credentials"));
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        flood.store(false, Ordering::Relaxed);
        stop.store(true, Ordering::Relaxed);
        for g in gamers {
            g.await.unwrap();
        }

        let peak_mib = status_kib(pid, "VmHWM:") / 1024;
        let answers = answers.lock().unwrap().clone();
        let count = |s: u16| answers.iter().filter(|a| a.0 == s).count();
        let (ok, busy) = (count(201) + count(200) + count(401), count(503));
        let [mut calm, mut flooded] = std::mem::take(&mut *lat.lock().unwrap());
        let (n_calm, n_flooded) = (calm.len(), flooded.len());
        let (calm99, flooded99) = (p99(&mut calm), p99(&mut flooded));
        eprintln!(
            "flood: {} answers ({ok} ok, {busy} busy 503, others {}), memory {} MiB before, peak {peak_mib} MiB; \
             game actions p99 {calm99:?} alone ({n_calm}), {flooded99:?} in the flood ({n_flooded})",
            answers.len(),
            answers.len() - ok - busy,
            before_kib / 1024,
        );
        assert!(peak_mib < CEILING_MIB, "peak memory {peak_mib} MiB, over the ceiling of {CEILING_MIB} MiB");
        assert!(ok > 0, "some passwords are checked during the flood");
        assert_eq!(ok + busy, answers.len(), "every answer is a password checked or a 503: {answers:?}");
        for (status, retry, what) in &answers {
            if *status == 503 {
                assert_eq!(retry.as_deref(), Some("1"), "a refused {what} says when to retry");
            }
        }
        assert!(busy > 0, "a flood beyond the bound is refused, not queued without end");
        // The games keep their pace: generous against a noisy machine, far
        // below the seconds of an unbounded flood.
        assert!(n_calm >= 20 && n_flooded >= 20, "enough actions measured: {n_calm} alone, {n_flooded} flooded");
        let bound = (calm99 * 10).max(Duration::from_millis(250));
        assert!(
            flooded99 < bound,
            "game actions' p99 went from {calm99:?} to {flooded99:?} in the flood (bound {bound:?})"
        );
    });
}
