//! Hostile requests to the server, each case kept here: bounded metric labels, the header-read timeout, the
//! connection cap, a bounded graceful shutdown, an announced body over the
//! limit refused at once, undecodable paths and unknown fields refused in
//! the error shape, HEAD on the page's files, and the per-address limit of
//! new players. Transport matters, not storage: these run on SQLite only.

use crate::helpers::*;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads until the server closes the connection (or `limit` passes), and
/// returns what it sent and how long it took.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(Ok(n)) = tokio::time::timeout(limit.saturating_sub(started.elapsed()), stream.read(&mut buf)).await {
        if n == 0 {
            break;
        }
        all.extend_from_slice(&buf[..n]);
    }
    (String::from_utf8_lossy(&all).into_owned(), started.elapsed())
}

fn addr(app: &TestApp) -> String {
    app.url.trim_start_matches("http://").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_methods_do_not_grow_the_metrics() {
    let Some(app) = spawn_app().await else { return };
    for i in 0..200 {
        let method = reqwest::Method::from_bytes(format!("FOO{i}").as_bytes()).unwrap();
        let r = app.send(app.client.request(method, format!("{}/api/me", app.url))).await;
        assert!(r.status.is_client_error(), "{}", r.status);
        assert!(r.json["error"].is_string(), "{}", r.json);
    }
    let metrics = String::from_utf8(app.get("/metrics", None).await.bytes.to_vec()).unwrap();
    assert!(!metrics.contains("FOO"), "a made-up method became a label");
    assert!(metrics.contains(r#"method="other""#), "made-up methods are counted as `other`");
    assert!(metrics.len() < 64 * 1024, "/metrics is {} bytes", metrics.len());
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_stops_in_its_headers_is_closed() {
    let Some(app) = spawn_app_with(|c| c.header_read_timeout_ms = 500).await else { return };
    let mut stalled = TcpStream::connect(addr(&app)).await.unwrap();
    stalled.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Half: ").await.unwrap();
    let (_, took) = read_until_closed(&mut stalled, Duration::from_secs(10)).await;
    assert!(took < Duration::from_secs(5), "closed after {took:?}");
    assert!(took >= Duration::from_millis(400), "closed after {took:?}, before the timeout");
    // An idle keep-alive connection is closed too.
    let mut idle = TcpStream::connect(addr(&app)).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let (answer, took) = read_until_closed(&mut idle, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(took < Duration::from_secs(5), "idle connection kept {took:?}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_cannot_take_every_connection() {
    let Some(app) = spawn_app_with(|c| {
        c.max_connections = 3;
        c.header_read_timeout_ms = 1_000;
    })
    .await
    else {
        return;
    };
    let mut stalled = Vec::new();
    for _ in 0..3 {
        let mut s = TcpStream::connect(addr(&app)).await.unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        stalled.push(s);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The cap holds the fourth client back until the header timeout frees a slot.
    let started = Instant::now();
    let r = app.get("/healthz", None).await;
    assert_eq!(r.status, 200);
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(500), "served at once ({waited:?}): the cap did not hold");
    assert!(waited < Duration::from_secs(5), "waited {waited:?}");
    app.shutdown().await;
}

/// An operator's scrape and health check never wait behind players: with
/// `ops_listen`, `/metrics` and `/healthz` answer on their own listener
/// while the players' listener is at `max_connections` (a scrape waited 7 s
/// in the backlog at 1 024 players, BENCHMARKS.md). It serves nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operations_listener_answers_while_players_hold_every_connection() {
    let Some(app) = spawn_app_with(|c| {
        c.max_connections = 2;
        c.header_read_timeout_ms = 5_000;
        c.ops_listen = Some("127.0.0.1:0".into());
    })
    .await
    else {
        return;
    };
    let ops = format!("http://{}", app.app.ops_addr().expect("the operations listener is bound"));
    let mut stalled = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(addr(&app)).await.unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        stalled.push(s);
    }
    let held = Instant::now();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The players' listener makes a new client wait for a slot...
    let players =
        tokio::time::timeout(Duration::from_millis(800), app.client.get(format!("{}/healthz", app.url)).send());
    assert!(players.await.is_err(), "the players' listener answered at once: the cap did not hold");
    // ...while the operations listener answers, long before a slot frees.
    let metrics = app.client.get(format!("{ops}/metrics")).send().await.unwrap();
    assert_eq!(metrics.status(), 200);
    let text = metrics.text().await.unwrap();
    assert!(text.contains("as_capone_commit_seconds_count"), "{text}");
    let health = app.client.get(format!("{ops}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let version = json!({"status": "ok", "version": server::VERSION, "schema": server::schema_version()});
    assert_eq!(health.json::<serde_json::Value>().await.unwrap(), version);
    assert!(held.elapsed() < Duration::from_secs(4), "answered after {:?}: it waited for the cap", held.elapsed());
    // Only the operator's routes: the API is not served there.
    let api = app.client.post(format!("{ops}/api/players")).json(&json!({})).send().await.unwrap();
    assert_eq!(api.status(), 404);
    let body: serde_json::Value = api.json().await.unwrap();
    assert_eq!(body["error"], "not_found", "{body}");
    let wrong = app.client.post(format!("{ops}/metrics")).send().await.unwrap();
    assert_eq!(wrong.status(), 405);
    drop(stalled);
    tokio::time::timeout(Duration::from_secs(20), app.shutdown()).await.expect("both listeners stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_client_cannot_hold_the_shutdown() {
    let Some(app) = spawn_app_with(|c| {
        c.header_read_timeout_ms = 60_000;
        c.shutdown_grace_ms = 500;
    })
    .await
    else {
        return;
    };
    let mut stalled = TcpStream::connect(addr(&app)).await.unwrap();
    stalled.write_all(b"POST /api/players HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{").await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), app.shutdown()).await.expect("shutdown ends");
    assert!(started.elapsed() < Duration::from_secs(5), "shutdown took {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_announced_body_over_the_limit_is_refused_at_once() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let t = app.buy(&token).await;
    let id = t["id"].as_str().unwrap();
    let mut s = TcpStream::connect(addr(&app)).await.unwrap();
    let head = format!(
        "POST /api/tickets/{id}/actions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{{\"seq\":0"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let (answer, took) = read_until_closed(&mut s, Duration::from_secs(15)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains(r#""error":"payload_too_large""#), "{answer}");
    assert!(took < Duration::from_secs(3), "answered after {took:?}");
    // Nothing happened to the ticket.
    let again = app.get(&format!("/api/tickets/{id}"), Some(&token)).await;
    assert_eq!(again.json["ticket"], t);
    app.shutdown().await;
}

/// A request framed both by `Content-Length` and by chunks (in either
/// order, after an ordinary request on the same connection) is refused with
/// 400 in the error shape, changes nothing, and its connection is closed:
/// what was sent after it is never read as a request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_with_both_content_length_and_transfer_encoding_is_refused_and_closes() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let t = app.buy(&token).await;
    let id = t["id"].as_str().unwrap();
    let body = json!({"seq": 0, "action": "draw"}).to_string();
    let chunked = format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
    let first = format!("GET /api/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n");
    let smuggled = format!("GET /api/tickets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n");
    for (framing, lead) in [
        (format!("Content-Length: {}\r\nTransfer-Encoding: chunked", chunked.len()), ""),
        (format!("Transfer-Encoding: chunked\r\nContent-Length: {}", chunked.len()), ""),
        (format!("transfer-encoding: chunked\r\ncontent-length: {}", body.len()), first.as_str()),
    ] {
        let mut s = TcpStream::connect(addr(&app)).await.unwrap();
        let request = format!(
            "{lead}POST /api/tickets/{id}/actions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\n{framing}\r\n\r\n{chunked}{smuggled}"
        );
        s.write_all(request.as_bytes()).await.unwrap();
        let (answer, took) = read_until_closed(&mut s, Duration::from_secs(15)).await;
        let answers: Vec<&str> = answer.split("HTTP/1.1 ").skip(1).collect();
        let refused = answers.last().copied().unwrap_or_default();
        assert_eq!(
            answers.len(),
            if lead.is_empty() { 1 } else { 2 },
            "{framing}: one answer per request read: {answer}"
        );
        assert!(refused.starts_with("400"), "{framing}: {answer}");
        assert!(refused.contains(r#""error":"bad_request""#), "{framing}: {answer}");
        assert!(took < Duration::from_secs(5), "{framing}: closed after {took:?}");
    }
    // Nothing happened to the ticket.
    let again = app.get(&format!("/api/tickets/{id}"), Some(&token)).await;
    assert_eq!(again.json["ticket"], t);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_unknown_fields_null_bodies_and_head_have_one_rule() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    // An undecodable path parameter: 400 in the error shape, not text/plain.
    for path in ["/api/tickets/%FF", "/api/tickets/%FF/record"] {
        let r = app.get(path, Some(&token)).await;
        assert_error(&r, 400, "bad_request");
    }
    // JSON `null` is an absent optional body (the OpenAPI document allows it).
    let r = app.send(app.client.post(format!("{}/api/players", app.url)).json(&serde_json::Value::Null)).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let r = app
        .send(app.client.post(format!("{}/api/tickets", app.url)).bearer_auth(&token).json(&serde_json::Value::Null))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let t = r.json["ticket"].clone();
    let actions = format!("/api/tickets/{}/actions", t["id"].as_str().unwrap());
    // Unknown fields are refused in an action as in every other body.
    let r = app.post(&actions, Some(&token), json!({"seq": 0, "action": "play", "card": "A", "bet": 100})).await;
    assert_error(&r, 400, "bad_request");
    assert!(r.json["message"].as_str().unwrap().contains("bet"), "{}", r.json);
    // A body is a JSON object: an array of the fields in order is refused
    // (serde alone would read it), for an action and for a new player.
    let r = app.post(&actions, Some(&token), json!([0, "play", "A"])).await;
    assert_error(&r, 400, "bad_request");
    let before = app.dump("SELECT * FROM players").await;
    assert_error(&app.post("/api/players", None, json!(["array-name"])).await, 400, "bad_request");
    assert_error(&app.post("/api/players", None, json!([null])).await, 400, "bad_request");
    assert_eq!(app.dump("SELECT * FROM players").await, before);
    // `play` needs a card, `draw` takes none.
    assert_error(&app.post(&actions, Some(&token), json!({"seq": 0, "action": "play"})).await, 400, "bad_request");
    assert_error(
        &app.post(&actions, Some(&token), json!({"seq": 0, "action": "draw", "card": "A"})).await,
        400,
        "bad_request",
    );
    let again = app.get(&format!("/api/tickets/{}", t["id"].as_str().unwrap()), Some(&token)).await;
    assert_eq!(again.json["ticket"], t, "nothing was applied");
    // HEAD on the page's files answers like GET, without a body.
    for path in ["/", "/app.js", "/style.css"] {
        let r = app.send(app.client.head(format!("{}{path}", app.url))).await;
        assert_eq!(r.status, 200, "HEAD {path}");
        assert!(r.bytes.is_empty(), "HEAD {path} sent a body");
    }
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_players_are_limited_per_address() {
    let Some(app) = spawn_app_with(|c| c.registrations_per_address = 3).await else { return };
    for _ in 0..3 {
        assert_eq!(app.post("/api/players", None, json!({})).await.status, 201);
    }
    let before = app.dump("SELECT * FROM players").await;
    assert_eq!(before.len(), 3);
    let r = app.post("/api/players", None, json!({"name": "one too many"})).await;
    assert_error(&r, 429, "too_many_attempts");
    let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
    assert_eq!(app.dump("SELECT * FROM players").await, before, "the refused registration created nothing");
    app.shutdown().await;
}
