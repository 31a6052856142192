//! Operations: health, metrics, OpenAPI, the web page, graceful restart.

use crate::helpers::*;
use crate::money::play_out;
use serde_json::json;

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_metrics_openapi_and_the_page() {
    let Some(app) = spawn_app().await else { return };
    let h = app.get("/healthz", None).await;
    assert_eq!(h.status, 200);
    let token = app.register().await;
    let t = app.buy(&token).await;
    let end = play_out(&app, &token, &t).await;
    let m = app.get("/metrics", None).await;
    assert_eq!(m.status, 200);
    let text = String::from_utf8(m.bytes).unwrap();
    assert!(text.contains("as_capone_tickets_sold_total 1"), "{text}");
    assert!(text.contains("as_capone_games_finished_total 1"), "{text}");
    assert!(text.contains("as_capone_active_games 0"), "{text}");
    assert!(text.contains(&format!("as_capone_prizes_paid_cents_total {}", end["result"]["prize_cents"])), "{text}");
    assert!(
        text.contains(r#"as_capone_http_requests_total{method="POST",route="/api/tickets/{id}/actions",status="200"}"#),
        "{text}"
    );
    assert!(text.contains("as_capone_http_request_duration_seconds_bucket"), "{text}");
    assert!(text.contains("as_capone_commit_batch_size_count"), "{text}");

    let o = app.get("/api/openapi.json", None).await;
    assert_eq!(o.status, 200);
    assert!(o.json["openapi"].as_str().unwrap().starts_with("3."));
    for p in [
        "/api/players",
        "/api/me",
        "/api/tickets",
        "/api/tickets/{id}",
        "/api/tickets/{id}/actions",
        "/api/tickets/{id}/record",
        "/api/tickets/redeem",
        "/api/emissions",
        "/api/admin/emissions",
        "/api/admin/emissions/{id}",
        "/api/admin/emissions/{id}/blocks",
        "/api/admin/emissions/{id}/close",
        "/api/admin/emissions/{id}/blocks/{n}/print.csv",
        "/api/retail/sell",
        "/api/retail/validate",
        "/api/retail/pay",
        "/healthz",
        "/metrics",
    ] {
        assert!(o.json["paths"].get(p).is_some(), "OpenAPI documents {p}");
    }
    assert!(o.json["components"]["schemas"].get("TicketView").is_some());

    let page = app.send(app.client.get(format!("{}/", app.url))).await;
    assert_eq!(page.status, 200);
    assert!(String::from_utf8_lossy(&page.bytes).to_lowercase().contains("<html"));
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_restart_keeps_everything_and_the_game_continues() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let t = app.buy(&token).await;
    let id = t["id"].as_str().unwrap().to_string();
    let first = app
        .post(&format!("/api/tickets/{id}/actions"), Some(&token), json!({"seq": 0, "action": "play", "card": "A"}))
        .await;
    assert_eq!(first.status, 200);
    // The same database, a new server.
    let db = app.stop().await;
    let app = spawn_app_on(db, |_| {}).await;
    let again = app
        .post(&format!("/api/tickets/{id}/actions"), Some(&token), json!({"seq": 0, "action": "play", "card": "A"}))
        .await;
    assert_eq!(again.bytes, first.bytes, "the stored answer survives a restart");
    let t = app.get(&format!("/api/tickets/{id}"), Some(&token)).await.json["ticket"].clone();
    assert_eq!(t["seq"], 1);
    let end = play_out(&app, &token, &t).await;
    assert_eq!(end["phase"], "finished");
    assert_eq!(app.balance(&token).await, START - 300 + end["result"]["prize_cents"].as_i64().unwrap());
    // The emission was made once: the next sale is the ticket after the first.
    let next = app.buy(&token).await;
    assert_ne!(next["id"], json!(id));
    assert!(app.app.store().check_ledger().await.unwrap().is_sound());
    app.shutdown().await;
}
}
