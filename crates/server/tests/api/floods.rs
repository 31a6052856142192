//! The second outside audit's findings on floods and cross-site forms
//! (README.md, "What an attacker meets"): what anonymous clients can
//! make the server keep has a global ceiling besides the per-network
//! limits (demo games, players, the limits' own counters:
//! docs/limits.md "Ceilings"), answered 503 with `Retry-After` while
//! honest players buy and play on; and every write carries
//! `Content-Type: application/json` (415 otherwise), so that no other
//! site's form or simple request makes its visitors' browsers do it
//! (docs/limits.md "Cross-site requests").
//!
//! The flood comes from many networks, every /64 of one IPv6 /48 as one
//! customer holds, through a trusted proxy's `X-Forwarded-For`.

use crate::helpers::*;
use crate::money::play_out;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The network `i` of the flood: a /64 of the attacker's /48.
fn network(i: usize) -> String {
    format!("2001:db8:48:{i:x}::1")
}

/// `per_network` POSTs of `body` to `path` from each of `networks`
/// networks, eight at a time; every answer.
async fn flood(app: &TestApp, path: &str, body: Value, networks: usize, per_network: usize) -> Vec<Resp> {
    let jobs: Vec<String> = (0..networks).flat_map(|i| std::iter::repeat_n(network(i), per_network)).collect();
    let mut answers = Vec::new();
    for chunk in jobs.chunks(8) {
        let mut sends = tokio::task::JoinSet::new();
        for from in chunk {
            let req = app.client.post(format!("{}{path}", app.url)).header("x-forwarded-for", from).json(&body);
            sends.spawn(async move {
                let r = req.send().await.expect("request");
                let (status, headers) = (r.status(), r.headers().clone());
                let bytes = r.bytes().await.unwrap().to_vec();
                Resp { status, headers, json: serde_json::from_slice(&bytes).unwrap_or(Value::Null), bytes }
            });
        }
        answers.extend(sends.join_all().await);
    }
    answers
}

/// The answers' statuses counted, and every refusal checked: 503
/// `unavailable` from the ceiling `ceiling`, with a `Retry-After` within
/// the ceiling's hour.
fn created_past(answers: &[Resp], ceiling: &str) -> usize {
    let mut created = 0;
    for r in answers {
        if r.status == 201 {
            created += 1;
            continue;
        }
        assert_error(r, 503, "unavailable");
        assert_eq!(r.json["params"]["ceiling"], ceiling, "{}", r.json);
        let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=3600).contains(&retry), "Retry-After {retry}");
        assert_eq!(r.json["params"]["retry_after_s"], retry, "{}", r.json);
    }
    created
}

/// The sample of `name` with `labels` in the server's metrics.
async fn metric(app: &TestApp, name_and_labels: &str) -> f64 {
    let r = app.get("/metrics", None).await;
    let text = String::from_utf8(r.bytes).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name_and_labels)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name_and_labels} in\n{text}"))
}

/// Demo games an hour (`demo_games_alive` / 26) and players an hour in the test.
const DEMOS_AN_HOUR: u32 = 12;
const PLAYERS_AN_HOUR: u32 = 10;

both! {
/// A flood of demo games and registrations from 40 networks stops at the
/// global ceilings, counted in the database (a restart changes nothing),
/// while an honest player buys and plays; a refusal writes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn floods_of_demo_games_and_players_from_many_networks_stop_at_their_ceilings() {
    let tune = |c: &mut server::Config| {
        c.trust_forwarded_for = true;
        c.demo_games_alive = DEMOS_AN_HOUR * 26;
        c.registrations_per_hour = PLAYERS_AN_HOUR;
        c.registrations_per_address = 3;
    };
    let Some(app) = spawn_app_with(tune).await else { return };
    let honest = app.register().await;
    let ticket = app.buy(&honest).await;

    // Two of each from each network: under its own limits, past everyone's.
    let demos = flood(&app, "/api/demo", json!({}), 40, 2).await;
    let players = flood(&app, "/api/players", json!({"name": "flood"}), 40, 2).await;
    assert_eq!(created_past(&demos, "demo_games"), DEMOS_AN_HOUR as usize);
    assert_eq!(created_past(&players, "registrations"), PLAYERS_AN_HOUR as usize - 1, "the honest player was one");
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM demo_games").await, i64::from(DEMOS_AN_HOUR));
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM players").await, i64::from(PLAYERS_AN_HOUR));
    // A refused request counted nothing, not even its network: only the
    // networks admitted have a demo counter.
    let demo_networks = app.query_i64("SELECT COUNT(*) FROM limit_counters WHERE bucket LIKE 'demo:%'").await;
    assert!((6..=12).contains(&demo_networks), "{demo_networks} networks counted");
    let refused = 80.0 - f64::from(DEMOS_AN_HOUR);
    assert_eq!(metric(&app, r#"as_capone_ceiling_refused_total{ceiling="demo_games"}"#).await, refused);
    assert_eq!(metric(&app, r#"as_capone_ceiling_refused_total{ceiling="registrations"}"#).await, 80.0 - 9.0);

    // The honest player plays the ticket bought before, and buys and plays another.
    let t = play_out(&app, &honest, &ticket).await;
    assert_eq!(t["phase"], "finished");
    let next = app.buy(&honest).await;
    assert_eq!(play_out(&app, &honest, &next).await["phase"], "finished");

    // The ceilings are the database's: a restarted server refuses too.
    let db = app.stop().await;
    let app = spawn_app_on(db, tune).await;
    let more = flood(&app, "/api/demo", json!({}), 1, 1).await;
    assert_eq!(created_past(&more, "demo_games"), 0);
    let more = flood(&app, "/api/players", json!({}), 1, 1).await;
    assert_eq!(created_past(&more, "registrations"), 0);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM demo_games").await, i64::from(DEMOS_AN_HOUR));
    assert_eq!(app.buy(&honest).await["phase"], "play");
    app.shutdown().await;
}
}

both! {
/// The limits' counters are rows too: past the ceiling on the windows
/// opened an hour, a network (or a login) without a window is refused
/// before anything is looked up or counted, and one with a window goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limits_counters_rows_stop_at_their_ceiling() {
    let Some(app) = spawn_app_with(|c| {
        c.trust_forwarded_for = true;
        c.demo_games_alive = 0;
        c.limit_counters_per_hour = 6;
    })
    .await
    else {
        return;
    };
    let honest = app.register().await;
    let counters = "SELECT COUNT(*) FROM limit_counters WHERE bucket NOT LIKE 'ceiling:%'";
    let demos = flood(&app, "/api/demo", json!({}), 6, 1).await;
    assert_eq!(created_past(&demos, "limit_counters"), 6, "six networks, six windows");
    let late = app.post_from(&app.url, "/api/demo", &network(6), None, json!({})).await;
    assert_eq!(created_past(&[late], "limit_counters"), 0, "a seventh network would add a seventh row");
    let known = app.post_from(&app.url, "/api/demo", &network(0), None, json!({})).await;
    assert_eq!(known.status, 201, "a network with a window adds no row: {}", known.json);
    // A wrong play code, a login: each would open a window.
    let code = app.redeem_from(&network(7), "0000-0000-0000-0000").await;
    assert_eq!(created_past(&[code], "limit_counters"), 0);
    let wrong = json!({"login": "ana", "password": "not the password"});
    let login = app.post_from(&app.url, "/api/sessions", &network(8), None, wrong).await;
    assert_eq!(created_past(&[login], "limit_counters"), 0);
    assert_eq!(app.query_i64(counters).await, 6);
    assert_eq!(metric(&app, r#"as_capone_ceiling_refused_total{ceiling="limit_counters"}"#).await, 3.0);
    let t = app.buy(&honest).await;
    assert_eq!(play_out(&app, &honest, &t).await["phase"], "finished");
    app.shutdown().await;
}
}

/// Every table's row count: what "changes nothing" compares.
async fn row_counts(app: &TestApp) -> BTreeMap<String, i64> {
    let list = match app.backend {
        Backend::Sqlite => {
            "SELECT group_concat(name, ',') FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        }
        Backend::Postgres => "SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = 'public'",
    };
    let mut counts = BTreeMap::new();
    for table in app.query_text(list).await.split(',') {
        counts.insert(table.to_string(), app.query_i64(&format!("SELECT COUNT(*) FROM {table}")).await);
    }
    counts
}

/// The writes of the router, from its OpenAPI document: a route added
/// later is covered without a change here.
async fn writes(app: &TestApp) -> Vec<(reqwest::Method, String)> {
    let doc = app.get("/api/openapi.json", None).await.json;
    let mut writes = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in ["post", "put", "patch", "delete"] {
            if item.get(method).is_some() {
                let path = path.split('/').map(|s| if s.starts_with('{') { "1" } else { s }).collect::<Vec<_>>();
                writes.push((method.to_uppercase().parse().unwrap(), path.join("/")));
            }
        }
    }
    writes
}

/// The token that reaches a route's handler: the operator's, a shop's, a player's.
fn token_for<'a>(path: &str, player: &'a str) -> &'a str {
    match path {
        p if p.starts_with("/api/admin/") => OPERATOR,
        p if p.starts_with("/api/retail/") => SHOP_A_TOKEN,
        _ => player,
    }
}

both! {
/// Cross-site forms (docs/limits.md "Cross-site requests"): a form
/// post, text/plain and no content type, each to every write of the
/// router, get 415 in the error shape and change nothing; JSON (with or
/// without `charset=utf-8`) passes the check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_without_json_are_refused_415_everywhere_and_change_nothing() {
    let Some(app) = spawn_app().await else { return };
    let player = app.register().await;
    let ticket = app.buy(&player).await;
    let writes = writes(&app).await;
    assert!(writes.iter().any(|(m, p)| m == "POST" && p == "/api/demo"), "{writes:?}");
    assert!(writes.iter().any(|(m, p)| m == "DELETE" && p == "/api/sessions/current"), "{writes:?}");
    assert!(writes.len() >= 20, "{writes:?}");
    let before = row_counts(&app).await;
    let forms: [(Option<&str>, &[u8]); 5] = [
        (Some("application/x-www-form-urlencoded"), b"name=flood"),
        (Some("application/x-www-form-urlencoded"), b""),
        (Some("multipart/form-data; boundary=b"), b"--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--\r\n"),
        (Some("text/plain"), b"{}"),
        (None, b""),
    ];
    for (method, path) in &writes {
        for (content_type, body) in &forms {
            let mut req = app.client.request(method.clone(), format!("{}{path}", app.url)).body(body.to_vec());
            req = req.bearer_auth(token_for(path, &player));
            if let Some(ct) = content_type {
                req = req.header("content-type", *ct);
            }
            let r = app.send(req).await;
            assert_error(&r, 415, "unsupported_media_type");
            assert!(r.json["message"].as_str().unwrap().contains("application/json"), "{method} {path}: {}", r.json);
        }
    }
    assert_eq!(row_counts(&app).await, before, "a refused write changes nothing");
    // The anonymous creations, without a token, are refused the same way.
    for path in ["/api/demo", "/api/players"] {
        let r = app.send(app.client.post(format!("{}{path}", app.url)).header("content-type", "text/plain")).await;
        assert_error(&r, 415, "unsupported_media_type");
    }
    assert_eq!(row_counts(&app).await, before);
    // JSON passes the check, with its charset or without, an empty body too.
    for ct in ["application/json", "application/json; charset=utf-8", "Application/JSON;charset=\"UTF-8\""] {
        let r = app.send(app.client.post(format!("{}/api/players", app.url)).header("content-type", ct).body("")).await;
        assert_eq!(r.status, 201, "{ct}: {}", r.json);
    }
    let r = app
        .send(app.client.post(format!("{}/api/demo", app.url)).header("content-type", "application/json").body("{}"))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    // A method a path does not take is still 405, an unknown path 404.
    let r = app.send(app.client.delete(format!("{}/api/me", app.url)).bearer_auth(&player)).await;
    assert_error(&r, 405, "method_not_allowed");
    let r = app.send(app.client.post(format!("{}/api/nothing-here", app.url)).body("x=1")).await;
    assert_error(&r, 404, "not_found");
    assert_eq!(play_out(&app, &player, &ticket).await["phase"], "finished");
    app.shutdown().await;
}
}
