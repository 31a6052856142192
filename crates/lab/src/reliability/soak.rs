//! A steady load for minutes: players paced to a fixed rate of requests
//! (purchases and actions, latency counted from each request's scheduled
//! time, so a server falling behind is charged for the wait), sampled every
//! `--sample-secs`: throughput, p99 latency and the server's resident
//! memory (`VmRSS`). The verdict on memory: after a warm-up (the first
//! tenth of the samples, at least one), the mean of the last third of the
//! samples may exceed the mean of the first third by at most 20 % plus
//! `--rss-allowance-mib`.

use super::args::{Backend, ReliabilityArgs};
use super::latency::quantile_ms;
use super::testbed::{Database, start_server};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use testkit::next_action;

#[derive(Default)]
struct Interval {
    latencies_us: Vec<u32>,
    requests: u64,
    actions: u64,
    errors: u64,
    server_errors: u64,
    first_error: Option<String>,
}

async fn player(
    url: String,
    interval: Duration,
    offset: Duration,
    window: Arc<Mutex<Interval>>,
    stop: Arc<AtomicBool>,
) {
    let c = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().expect("http client");
    let note_err = |s: u16, b: &[u8]| {
        let mut w = window.lock().unwrap();
        w.errors += 1;
        if s >= 500 {
            w.server_errors += 1;
        }
        if w.first_error.is_none() {
            w.first_error = Some(format!("{s} {}", String::from_utf8_lossy(&b[..b.len().min(200)])));
        }
    };
    let token = match c.post(format!("{url}/api/players")).json(&json!({})).send().await {
        Ok(r) if r.status().as_u16() == 201 => {
            let v: Value = r.json().await.unwrap_or_default();
            v["token"].as_str().unwrap_or_default().to_string()
        }
        Ok(r) => {
            let s = r.status().as_u16();
            note_err(s, &r.bytes().await.unwrap_or_default());
            return;
        }
        Err(e) => {
            note_err(0, e.to_string().as_bytes());
            return;
        }
    };
    let mut next = Instant::now() + offset;
    let mut ticket: Option<Value> = None;
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep_until(next.into()).await;
        let scheduled = next;
        next += interval;
        let is_action = ticket.is_some();
        let req = match &ticket {
            None => c.post(format!("{url}/api/tickets")).bearer_auth(&token).json(&json!({})),
            Some(t) => c
                .post(format!("{url}/api/tickets/{}/actions", t["id"].as_str().unwrap_or_default()))
                .bearer_auth(&token)
                .json(&next_action(t)),
        };
        let (status, bytes) = match req.send().await {
            Ok(r) => {
                let s = r.status().as_u16();
                (s, r.bytes().await.unwrap_or_default().to_vec())
            }
            Err(e) => (0, e.to_string().into_bytes()),
        };
        let us = scheduled.elapsed().as_micros().min(u32::MAX as u128) as u32;
        if status == 200 || status == 201 {
            let v: Value = serde_json::from_slice(&bytes).unwrap_or_default();
            let t = v["ticket"].clone();
            ticket = if t["phase"] == "finished" { None } else { Some(t) };
            let mut w = window.lock().unwrap();
            w.latencies_us.push(us);
            w.requests += 1;
            if is_action {
                w.actions += 1;
            }
        } else {
            note_err(status, &bytes);
            if status == 503 && String::from_utf8_lossy(&bytes).contains("sold_out") {
                return;
            }
            ticket = None;
        }
    }
}

pub fn run(args: &ReliabilityArgs, backend: Backend, rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    let secs = (args.minutes * 60.0).max(1.0);
    println!(
        "\n== soak on {}: {:.0} s at {} requests/s, a sample every {} s ==",
        backend.name(),
        secs,
        args.soak_rate,
        args.sample_secs
    );
    let Some(db) = Database::create(args, backend, "soak")? else {
        return Ok(json!({"backend": backend.name(), "skipped": true, "ok": !args.require_postgres}));
    };
    // About one purchase in eight requests; blocks of 2 000 tickets.
    let blocks = ((args.soak_rate * secs / 6.0 / 2000.0).ceil() as u64 + 2).to_string();
    let server = start_server(&db, &["--initial-blocks", &blocks])?;
    let players = 16usize;
    let interval = Duration::from_secs_f64(players as f64 / args.soak_rate.max(0.1));
    let window: Arc<Mutex<Interval>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let total_requests = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..players)
        .map(|i| {
            let offset = interval.mul_f64(i as f64 / players as f64);
            rt.spawn(player(server.url.clone(), interval, offset, window.clone(), stop.clone()))
        })
        .collect();
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut errors = 0u64;
    let mut server_errors = 0u64;
    let mut first_error = None;
    let mut all_latencies: Vec<u32> = Vec::new();
    println!("  {:>6} {:>10} {:>10} {:>9} {:>9} {:>7}", "t (s)", "req/s", "actions/s", "p99 ms", "RSS MiB", "errors");
    let mut tick = started;
    while started.elapsed().as_secs_f64() < secs {
        tick += Duration::from_secs(args.sample_secs.max(1));
        std::thread::sleep(tick.saturating_duration_since(Instant::now()));
        let w = std::mem::take(&mut *window.lock().unwrap());
        let dt = args.sample_secs.max(1) as f64;
        let mut lat = w.latencies_us.clone();
        let p99 = quantile_ms(&mut lat, 0.99);
        all_latencies.extend(w.latencies_us);
        let rss = server.rss_kib().unwrap_or(0);
        errors += w.errors;
        server_errors += w.server_errors;
        if first_error.is_none() {
            first_error = w.first_error;
        }
        total_requests.fetch_add(w.requests, Ordering::Relaxed);
        let s = json!({
            "t": started.elapsed().as_secs_f64().round(),
            "requests_per_s": w.requests as f64 / dt,
            "actions_per_s": w.actions as f64 / dt,
            "p99_ms": p99,
            "rss_kib": rss,
            "errors": w.errors,
        });
        println!(
            "  {:>6.0} {:>10.1} {:>10.1} {:>9.2} {:>9.1} {:>7}",
            s["t"].as_f64().unwrap_or(0.0),
            s["requests_per_s"].as_f64().unwrap_or(0.0),
            s["actions_per_s"].as_f64().unwrap_or(0.0),
            p99,
            rss as f64 / 1024.0,
            w.errors
        );
        samples.push(s);
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = rt.block_on(h);
    }
    let server_error_lines = server.errors.lock().unwrap().clone();
    drop(server);
    // The verdict on memory.
    let rss: Vec<f64> = samples.iter().map(|s| s["rss_kib"].as_f64().unwrap_or(0.0)).collect();
    let warm = (rss.len() / 10).max(1).min(rss.len());
    let steady = &rss[warm..];
    let third = (steady.len() / 3).max(1);
    let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
    let first = mean(&steady[..third.min(steady.len())]);
    let last = mean(&steady[steady.len().saturating_sub(third)..]);
    let limit = first * 1.2 + args.rss_allowance_mib as f64 * 1024.0;
    let memory_ok = steady.len() >= 3 && last <= limit;
    let p99_all = quantile_ms(&mut all_latencies, 0.99);
    let rates: Vec<f64> = samples.iter().map(|s| s["requests_per_s"].as_f64().unwrap_or(0.0)).collect();
    let actions: Vec<f64> = samples.iter().map(|s| s["actions_per_s"].as_f64().unwrap_or(0.0)).collect();
    let ok = memory_ok && errors == 0 && server_errors == 0 && server_error_lines.is_empty();
    let growth_pct = if first > 0.0 { (last / first - 1.0) * 100.0 } else { 0.0 };
    println!(
        "soak on {}: {} requests, mean {:.1} req/s ({:.1} actions/s), p99 {:.2} ms over the run; RSS {:.1} MiB (first third after warm-up) -> {:.1} MiB (last third), {:+.1} %, limit {:.1} MiB: memory {}; errors {errors} (5xx {server_errors}): {}",
        backend.name(),
        total_requests.load(Ordering::Relaxed),
        mean(&rates),
        mean(&actions),
        p99_all,
        first / 1024.0,
        last / 1024.0,
        growth_pct,
        limit / 1024.0,
        if memory_ok { "no growth" } else { "GROWTH" },
        if ok { "PASS" } else { "FAIL" }
    );
    if let Some(e) = &first_error {
        println!("  first error: {e}");
    }
    Ok(json!({
        "backend": backend.name(),
        "skipped": false,
        "seconds": secs,
        "rate": args.soak_rate,
        "players": players,
        "sample_secs": args.sample_secs,
        "samples": samples,
        "requests": total_requests.load(Ordering::Relaxed),
        "mean_requests_per_s": mean(&rates),
        "mean_actions_per_s": mean(&actions),
        "p99_ms": p99_all,
        "rss_first_third_kib": first,
        "rss_last_third_kib": last,
        "rss_growth_pct": growth_pct,
        "rss_limit_kib": limit,
        "memory_ok": memory_ok,
        "errors": errors,
        "server_errors_5xx": server_errors,
        "first_error": first_error,
        "server_error_log_lines": server_error_lines,
        "ok": ok,
    }))
}
