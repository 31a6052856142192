//! The desk's certification report (`GET
//! /api/admin/emissions/{id}/certification?games=N`, docs/certification.md): the
//! HTML page of `as-capone report --table` for the emission's own table as
//! stored (its digest is the emission's `table_digest`), with every check's
//! verdict; `games` bounded (400 beyond, nothing run); the operator's token
//! only; an unknown emission 404; one report at a time (503 with
//! Retry-After).

use crate::emissions::paper_table_json;
use crate::helpers::*;

/// The report of `emission` with `games` tickets per stream, as the desk asks.
async fn certification(app: &TestApp, emission: u64, games: &str, token: Option<&str>) -> Resp {
    app.get(&format!("/api/admin/emissions/{emission}/certification?games={games}"), token).await
}

/// A p-value as the page prints it (`certify::render_html`).
fn fmt_p(p: f64) -> String {
    if p >= 1e-4 { format!("{p:.4}") } else { format!("{p:.2e}") }
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_is_the_one_of_the_emissions_own_table_with_its_verdicts() {
    let Some(app) = spawn_app().await else { return };
    // A second emission on another table: the report must be of emission 2's.
    let made = app
        .admin_post(
            "/api/admin/emissions",
            serde_json::json!({"table": paper_table_json(), "blocks": 1, "channel": "paper"}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.json);
    assert_eq!(made.json["emission"], 2);
    let digest = app.query_text("SELECT table_digest FROM emissions WHERE id = 2").await;
    let first = app.query_text("SELECT table_digest FROM emissions WHERE id = 1").await;
    assert_ne!(digest, first, "the two emissions have different tables");
    let before =
        (app.query_i64("SELECT COUNT(*) FROM audit_log").await, app.query_i64("SELECT COUNT(*) FROM emissions").await);

    let r = certification(&app, 2, "3000", Some(OPERATOR)).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.bytes));
    assert_eq!(r.headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(r.headers["content-disposition"], "attachment; filename=\"certification-emission-002-3000.html\"");
    let html = String::from_utf8(r.bytes.clone()).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for bad in ["http://", "https://", "<script", "<link", "<img", "@import", "url("] {
        assert!(!html.contains(bad), "the page holds {bad:?}");
    }
    assert!(html.contains(&digest), "the emission's table_digest {digest} is not in the report");
    assert!(!html.contains(&first), "emission 1's digest is in emission 2's report");

    // The same report computed here from the table as the API publishes it,
    // with the desk's seed: every check is a line of the page with its
    // verdict and p-value.
    let toml = app.query_text("SELECT table_toml FROM emissions WHERE id = 2").await;
    let table = math::PrizeTable::parse_toml(&toml).unwrap();
    assert_eq!(table.digest(), digest);
    let want = certify::build(
        &certify::Options {
            table,
            table_name: "emission 2".into(),
            table_bytes: toml.into_bytes(),
            tickets: 3000,
            seed: 2026,
            threads: 1,
            dieharder: Vec::new(),
            command: String::new(),
            build: certify::BuildInfo::unknown(),
        },
        &certify::Silent,
    )
    .unwrap();
    assert_eq!(want.table.digest, digest);
    assert_eq!(want.checks.len(), 21);
    for c in &want.checks {
        let start = html.find(&format!("<tr id=\"check-{}\">", c.id)).unwrap_or_else(|| panic!("no line for {}", c.id));
        let line = &html[start..start + html[start..].find("</tr>").unwrap()];
        assert!(line.contains(&format!(">{}</span>", c.verdict.as_str())), "{}: {line}", c.id);
        if let Some(p) = c.p_value {
            assert!(line.contains(&format!(">{}</td>", fmt_p(p))), "{}: p {p} not in {line}", c.id);
        }
    }
    let overall = want.verdict.as_str().to_lowercase();
    assert!(html.contains(&format!("Overall verdict: <span class=\"{overall}\">")), "overall {overall}");
    assert!(html.contains(&want.exact.rtp.fraction));
    // It changed nothing.
    assert_eq!(
        (app.query_i64("SELECT COUNT(*) FROM audit_log").await, app.query_i64("SELECT COUNT(*) FROM emissions").await),
        before
    );

    // The default is 100 000 tickets per stream (the file's name says it).
    let started = std::time::Instant::now();
    let default = app.get("/api/admin/emissions/1/certification", Some(OPERATOR)).await;
    assert_eq!(default.status, 200, "{}", String::from_utf8_lossy(&default.bytes));
    eprintln!("the default report (100 000 tickets per stream) in {:.2} s", started.elapsed().as_secs_f64());
    assert_eq!(
        default.headers["content-disposition"],
        "attachment; filename=\"certification-emission-001-100000.html\""
    );
    assert!(String::from_utf8_lossy(&default.bytes).contains(&first));
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_out_of_bounds_another_token_and_an_unknown_emission_are_refused() {
    let Some(app) = spawn_app().await else { return };
    for games in ["0", "1000001", "18446744073709551615", "-1", "many", "1.5"] {
        let r = certification(&app, 1, games, Some(OPERATOR)).await;
        assert_error(&r, 400, "bad_request");
        if games == "0" || games == "1000001" {
            assert!(r.json["message"].as_str().unwrap().contains("between 1 and 1000000"), "{}", r.json);
        }
    }
    let extra = app.get("/api/admin/emissions/1/certification?games=10&seed=1", Some(OPERATOR)).await;
    assert_error(&extra, 400, "bad_request");
    assert_error(&certification(&app, 9, "10", Some(OPERATOR)).await, 404, "not_found");
    assert_error(&app.get("/api/admin/emissions/x/certification", Some(OPERATOR)).await, 404, "not_found");
    let player = app.register().await;
    assert_error(&certification(&app, 1, "10", Some(&player)).await, 403, "forbidden");
    assert_error(&certification(&app, 1, "10", Some(SHOP_A_TOKEN)).await, 401, "unauthorized");
    assert_error(&certification(&app, 1, "10", None).await, 401, "unauthorized");
    // The bound itself is accepted (1 ticket per stream: fast).
    assert_eq!(certification(&app, 1, "1", Some(OPERATOR)).await.status, 200);
    app.shutdown().await;
}
}

both! {
/// One report at a time per process: while one is written, another is
/// refused with 503 `unavailable` and `Retry-After`; afterwards one runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_report_while_one_is_written_is_told_to_retry() {
    // A request time limit the long report fits in on a busy machine (it is
    // the report's deadline: contract::a_report_that_does_not_fit_...).
    let Some(app) = spawn_app_with(|c| c.request_timeout_ms = 120_000).await else { return };
    let app = std::sync::Arc::new(app);
    let spawn_long = || {
        let app = app.clone();
        tokio::spawn(async move { certification(&app, 1, "1000000", Some(OPERATOR)).await })
    };
    let mut long = spawn_long();
    // Until the long one holds the turn, a short one runs (200), or holds
    // it first and the long one is refused (then asked again); once the long
    // one runs, a short one is refused.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let refused = loop {
        assert!(std::time::Instant::now() < deadline, "never refused");
        if long.is_finished() {
            let r = (&mut long).await.unwrap();
            assert_eq!(r.status, 503, "the long report ended before a request met it");
            long = spawn_long();
        }
        let r = certification(&app, 1, "1", Some(OPERATOR)).await;
        if r.status == 503 && !long.is_finished() {
            break r;
        }
        assert!(r.status == 200 || r.status == 503, "{}", String::from_utf8_lossy(&r.bytes));
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_error(&refused, 503, "unavailable");
    assert_eq!(refused.headers["retry-after"], "10");
    let long = long.await.unwrap();
    assert_eq!(long.status, 200, "{}", String::from_utf8_lossy(&long.bytes));
    assert_eq!(certification(&app, 1, "1", Some(OPERATOR)).await.status, 200, "the turn was given back");
    shutdown_shared(app).await;
}
}
