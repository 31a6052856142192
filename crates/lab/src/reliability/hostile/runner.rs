//! Runs the corpus against a server and judges each answer.

use super::case::{Case, Ctx, Want};
use super::corpus::corpus;
use super::state::{clip, diff, refresh, setup, snapshot};
use super::wire::{Answer, exchange, json_ct, printable, req};
use crate::reliability::args::{Backend, ReliabilityArgs};
use crate::reliability::rng::Rng;
use crate::reliability::testbed::{Database, start_server};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// The verdict on one answer.
fn judge(case: &Case, a: &Answer, stall_cap: f64, head: bool) -> Result<(), String> {
    if let Some(max) = case.max_secs
        && a.secs > max
    {
        return Err(format!("took {:.1} s (at most {max} s expected)", a.secs));
    }
    match case.want {
        Want::Closed => {
            if a.note.as_deref().is_some_and(|n| n.starts_with("no answer and still open")) {
                Err(format!("still open after {stall_cap:.0} s"))
            } else if a.status.is_some_and(|s| s >= 500) {
                Err(format!("closed after {:.1} s with a 5xx", a.secs))
            } else {
                Ok(())
            }
        }
        Want::HeadOk => match a.status {
            Some(200) if a.body.is_empty() => Ok(()),
            _ => Err("HEAD should answer like GET: 200, no body".into()),
        },
        Want::Protocol => match a.status {
            None if a.note.as_deref().is_some_and(|n| n.starts_with("no answer and still open")) => {
                Err("no answer, connection left open".into())
            }
            None => Ok(()),
            Some(s) if (400..500).contains(&s) => {
                if a.body.is_empty() || a.in_shape() {
                    Ok(())
                } else {
                    Err("a body not in the error shape".into())
                }
            }
            Some(s) => Err(format!("status {s}, a 4xx expected")),
        },
        Want::Refused | Want::Exactly(_) => {
            let Some(s) = a.status else { return Err("no answer".into()) };
            let status_ok = match case.want {
                Want::Exactly(list) => list.contains(&s),
                _ => (400..500).contains(&s),
            };
            if !status_ok {
                return Err(format!(
                    "status {s}, expected {}",
                    match case.want {
                        Want::Exactly(l) => format!("{l:?}"),
                        _ => "a 4xx".into(),
                    }
                ));
            }
            // An answer to HEAD has no body: its type alone is checked.
            let head_ok = head
                && a.body.is_empty()
                && a.header("content-type").is_some_and(|c| c.starts_with("application/json"));
            if !a.in_shape() && !head_ok {
                return Err("not in the error shape {\"error\", \"message\"} (application/json)".into());
            }
            if s == 429 && a.header("retry-after").is_none() {
                return Err("429 without Retry-After".into());
            }
            Ok(())
        }
    }
}

/// One category's tally.
#[derive(Default)]
struct Cat {
    cases: u64,
    passed: u64,
    in_shape: u64,
    bare: u64,
    failures: Vec<Value>,
}

/// One case's answer: its index in the corpus, the answer, the bytes sent,
/// and what went wrong beside the answer (state changed, a metric label).
type Outcome = (usize, Answer, Vec<u8>, Option<String>);

/// What the cases did, before they are judged.
struct Played {
    results: Vec<Outcome>,
    changed_cases: u64,
    slow_changed: Vec<String>,
}

/// Runs the corpus: the slow cases in the background, the others one by
/// one with a snapshot of the state after each.
fn play(ctx: &mut Ctx, cases: &[Case], sqlite_file: Option<&Path>, stall: Duration) -> anyhow::Result<Played> {
    let normal_timeout = Duration::from_secs(NORMAL_TIMEOUT_SECS);
    // The slow cases in the background (they wait for timeouts).
    let slow: Vec<_> = cases
        .iter()
        .enumerate()
        .filter(|(_, c)| c.slow)
        .map(|(i, c)| {
            let bytes = (c.build)(ctx);
            let addr = ctx.addr.clone();
            let drip = c.drip;
            let timeout = if matches!(c.want, Want::Closed) { stall } else { normal_timeout };
            (i, std::thread::spawn(move || exchange(&addr, &bytes, false, timeout, drip)))
        })
        .collect();

    let mut changed_cases = 0u64;
    let mut results: Vec<Outcome> = Vec::new();
    let mut before = snapshot(ctx, sqlite_file);
    for (i, case) in cases.iter().enumerate() {
        if case.slow {
            continue;
        }
        let bytes = (case.build)(ctx);
        let head_only = bytes.starts_with(b"HEAD ");
        let a = exchange(&ctx.addr, &bytes, head_only, normal_timeout, false);
        let mut extra = None;
        if let Some(m) = &case.metric_probe {
            let metrics = exchange(&ctx.addr, &req("GET", "/metrics", &[], b""), false, normal_timeout, false);
            if String::from_utf8_lossy(&metrics.body).contains(m.as_str()) {
                extra = Some(format!(
                    "the made-up method {m} is a label of /metrics (now {} bytes): unbounded labels",
                    metrics.body.len()
                ));
            }
        }
        let after = snapshot(ctx, sqlite_file);
        let d = diff(&before, &after);
        if !d.is_empty() {
            changed_cases += 1;
            let note = format!("CHANGED STATE: {}", d.join("; "));
            extra = Some(match extra {
                Some(e) => format!("{e}; {note}"),
                None => note,
            });
            refresh(ctx)?;
            before = snapshot(ctx, sqlite_file);
        } else {
            before = after;
        }
        results.push((i, a, bytes, extra));
    }
    for (i, h) in slow {
        let a = h.join().unwrap_or_default();
        results.push((i, a, (cases[i].build)(ctx), None));
    }
    // Slow cases could not be snapshotted one by one: one check at the end.
    let end = snapshot(ctx, sqlite_file);
    let slow_changed = diff(&before, &end);
    results.sort_by_key(|r| r.0);
    Ok(Played { results, changed_cases, slow_changed })
}

/// Judges every answer into its category's tally; returns the number of
/// 5xx answers and the half-sent requests' figures.
fn tally(
    cases: &[Case],
    results: &[Outcome],
    stall: Duration,
    cats: &mut BTreeMap<&'static str, Cat>,
) -> (u64, Vec<Value>) {
    let mut server_errors = 0u64;
    let mut stalls = Vec::new();
    for (i, a, bytes, extra) in results {
        let case = &cases[*i];
        let cat = cats.entry(case.cat).or_default();
        cat.cases += 1;
        if a.status.is_some_and(|s| s >= 500) {
            server_errors += 1;
        }
        if a.status.is_some() {
            if a.in_shape() {
                cat.in_shape += 1;
            } else {
                cat.bare += 1;
            }
        }
        if matches!(case.want, Want::Closed) {
            stalls.push(json!({"case": case.name, "closed_after_s": (a.secs * 10.0).round() / 10.0,
                "status": a.status, "open_at_cap": a.note.as_deref().is_some_and(|n| n.starts_with("no answer and still open"))}));
        }
        let verdict = judge(case, a, stall.as_secs_f64(), bytes.starts_with(b"HEAD "));
        let problem = match (verdict, extra) {
            (Ok(()), None) => None,
            (Ok(()), Some(e)) => Some(e.clone()),
            (Err(e), None) => Some(e),
            (Err(e), Some(x)) => Some(format!("{e}; {x}")),
        };
        match problem {
            None => cat.passed += 1,
            Some(p) => cat.failures.push(json!({
                "case": case.name,
                "request": clip(&printable(&bytes[..bytes.len().min(400)])),
                "answer": a.brief(),
                "seconds": (a.secs * 100.0).round() / 100.0,
                "problem": p,
            })),
        }
    }
    (server_errors, stalls)
}

/// Registrations in a burst: some must be refused (429, Retry-After).
/// Returns the number of 5xx answers and the burst's figures.
fn burst(addr: &str, cats: &mut BTreeMap<&'static str, Cat>) -> (u64, Value) {
    let burst = 300usize;
    let normal_timeout = Duration::from_secs(NORMAL_TIMEOUT_SECS);
    let burst_began = Instant::now();
    let answers: Vec<Answer> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..10)
            .map(|_| {
                s.spawn(move || {
                    (0..burst / 10)
                        .map(|_| {
                            exchange(
                                addr,
                                &req("POST", "/api/players", &[json_ct()], b"{}"),
                                false,
                                normal_timeout,
                                false,
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    let burst_secs = burst_began.elapsed().as_secs_f64();
    let created = answers.iter().filter(|a| a.status == Some(201)).count();
    let limited: Vec<&Answer> = answers.iter().filter(|a| a.status == Some(429)).collect();
    let limited_ok = limited.iter().all(|a| a.in_shape() && a.header("retry-after").is_some());
    let burst_5xx = answers.iter().filter(|a| a.status.is_some_and(|s| s >= 500)).count() as u64;
    let cat = cats.entry("registration_burst").or_default();
    cat.cases += 1;
    cat.in_shape += limited.len() as u64;
    if !limited.is_empty() && limited_ok && burst_5xx == 0 {
        cat.passed += 1;
    } else {
        cat.failures.push(json!({
            "case": format!("{burst} registrations from one address in {burst_secs:.2} s"),
            "request": "POST /api/players {} (x300, 10 at a time)",
            "answer": format!("{created} created (201), {} refused (429){}, {burst_5xx} 5xx", limited.len(),
                if limited_ok { "" } else { ", some 429 without the shape or Retry-After" }),
            "problem": "registrations are not rate-limited: a 429 with Retry-After was expected within the burst",
        }));
    }
    (burst_5xx, json!({"requests": burst, "created": created, "refused_429": limited.len(), "seconds": burst_secs}))
}

/// Prints the categories, the half-sent requests and every failure.
fn print_tally(cats: &BTreeMap<&'static str, Cat>, stalls: &[Value], stall_cap_secs: u64, total: u64, passed: u64) {
    println!("  {:<20} {:>6} {:>7} {:>7} {:>9} {:>6}", "category", "cases", "passed", "failed", "in shape", "bare");
    for (name, c) in cats {
        println!(
            "  {:<20} {:>6} {:>7} {:>7} {:>9} {:>6}",
            name,
            c.cases,
            c.passed,
            c.cases - c.passed,
            c.in_shape,
            c.bare
        );
    }
    println!("  {:<20} {:>6} {:>7} {:>7}", "total", total, passed, total - passed);
    for s in stalls {
        println!(
            "  half-sent request {:?}: {}",
            s["case"],
            if s["open_at_cap"].as_bool().unwrap_or(false) {
                format!("still open after {} s", stall_cap_secs)
            } else {
                format!("closed by the server after {} s", s["closed_after_s"])
            }
        );
    }
    for (name, c) in cats {
        for f in &c.failures {
            println!(
                "  FAIL [{name}] {}\n       request: {}\n       answer:  {}\n       problem: {}",
                f["case"].as_str().unwrap_or_default(),
                clip(f["request"].as_str().unwrap_or_default()),
                f["answer"].as_str().unwrap_or_default(),
                f["problem"].as_str().unwrap_or_default()
            );
        }
    }
}

/// The time a case's answer may take, but for the half-sent ones.
const NORMAL_TIMEOUT_SECS: u64 = 15;

/// Starts a server on a fresh SQLite database, sends it the whole corpus and
/// a burst of registrations, and returns the report's JSON.
pub fn run(args: &ReliabilityArgs, seed: u64) -> anyhow::Result<Value> {
    println!("\n== hostile requests on sqlite ==");
    let db = Database::create(args, Backend::Sqlite, "hostile")?.expect("SQLite is always there");
    let server = start_server(&db, &["--initial-blocks", "2"])?;
    let began = Instant::now();
    let mut ctx = setup(&server.addr)?;
    let sqlite_file =
        db.sqlite_file().filter(|_| std::process::Command::new("sqlite3").arg("-version").output().is_ok());
    let mut rng = Rng::new(seed ^ 0x4057);
    let cases = corpus(&mut rng);
    let stall = Duration::from_secs(args.stall_cap_secs);

    let played = play(&mut ctx, &cases, sqlite_file.as_deref(), stall)?;
    let (changed_cases, slow_changed) = (played.changed_cases, played.slow_changed);
    let mut cats: BTreeMap<&'static str, Cat> = BTreeMap::new();
    let (mut server_errors, stalls) = tally(&cases, &played.results, stall, &mut cats);
    let (burst_5xx, burst_figures) = burst(&ctx.addr, &mut cats);
    server_errors += burst_5xx;

    let error_lines = server.errors.lock().unwrap().clone();
    drop(server);
    let total: u64 = cats.values().map(|c| c.cases).sum();
    let passed: u64 = cats.values().map(|c| c.passed).sum();
    print_tally(&cats, &stalls, args.stall_cap_secs, total, passed);
    if !slow_changed.is_empty() {
        println!("  CHANGED STATE during the slow cases: {}", slow_changed.join("; "));
    }
    let ok = passed == total && slow_changed.is_empty() && error_lines.is_empty() && total >= 500;
    println!(
        "hostile: {total} cases, {passed} passed, {} failed; {changed_cases} changed the state; 5xx {server_errors}; {:.0} s: {}",
        total - passed,
        began.elapsed().as_secs_f64(),
        if ok { "PASS" } else { "FAIL" }
    );
    let categories: serde_json::Map<String, Value> = cats
        .iter()
        .map(|(k, c)| {
            (
                k.to_string(),
                json!({"cases": c.cases, "passed": c.passed, "failed": c.cases - c.passed,
                "answered_in_shape": c.in_shape, "answered_without_shape": c.bare, "failures": c.failures}),
            )
        })
        .collect();
    Ok(json!({
        "cases": total,
        "passed": passed,
        "failed": total - passed,
        "changed_state": changed_cases + u64::from(!slow_changed.is_empty()),
        "server_errors_5xx": server_errors,
        "row_counts_checked": sqlite_file.is_some(),
        "half_sent": stalls,
        "burst": burst_figures,
        "categories": categories,
        "server_error_log_lines": error_lines,
        "seconds": began.elapsed().as_secs_f64(),
        "ok": ok,
    }))
}
