//! The desk's health (`GET /api/admin/health`, issue 30 item 5): what it
//! says of the database, the key, the audit chain, the games in play, the
//! players' limits and self-exclusions (counted, never named) and this
//! process, checked against what the test did; who may read it (the
//! 401/403 of every desk endpoint: `emissions_desk.rs`); and the desk's
//! emission figures equal to `as-capone report --json`.

use crate::helpers::*;
use engine::{Action, Rank};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_health_counts_what_happened_and_names_nobody() {
    let Some(app) = spawn_app().await else { return };
    let fresh = app.admin_get("/api/admin/health").await;
    assert_eq!(fresh.status, 200, "{}", fresh.json);
    let h = &fresh.json;
    let backend = match crate::BACKEND {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    assert_eq!(h["database"]["backend"], backend);
    assert_eq!(h["database"]["schema"], json!(server::schema_version()));
    assert_eq!(h["database"]["database_schema"], json!(server::schema_version()));
    assert_eq!(h["version"], server::VERSION);
    assert_eq!(h["server_key"]["key_id"], 1);
    assert_eq!(h["server_key"]["fingerprint"], app.server_key().fingerprint());
    assert_eq!(h["server_key"]["held"], true);
    assert_eq!(h["tickets_in_play"], 0);
    assert_eq!(h["players"], json!({"registered": 0, "with_limits": 0, "self_excluded": 0}));
    assert_eq!(h["wallet"], json!({"mode": "internal", "outbox_depth": 0, "outbox_oldest_age_s": 0}));
    assert_eq!(h["process"]["actions"], 0);
    assert_eq!(h["process"]["action_p99_ms_at_most"], json!(null));

    // Three players: one sets a daily limit, one excludes herself, two buy;
    // one plays two cards.
    let (a, b, c) = (app.register().await, app.register().await, app.register().await);
    let limits = app
        .send(app.client.put(format!("{}/api/me/limits", app.url)).bearer_auth(&a).json(&json!({"tickets_per_day": 3})))
        .await;
    assert_eq!(limits.status, 200, "{}", limits.json);
    let ticket = app.buy(&a).await;
    app.buy(&b).await;
    let excluded = app.post("/api/me/self-exclusion", Some(&c), json!({"days": 7})).await;
    assert_eq!(excluded.status, 200, "{}", excluded.json);
    let id = ticket["id"].as_str().unwrap();
    for (seq, card) in [Rank::Ace, Rank::King].into_iter().enumerate() {
        let r = app
            .post(&format!("/api/tickets/{id}/actions"), Some(&a), action_body(seq as u64, Action::play(card)))
            .await;
        assert_eq!(r.status, 200, "{}", r.json);
    }
    // An action refused (out of turn) is not counted as applied.
    let refused =
        app.post(&format!("/api/tickets/{id}/actions"), Some(&a), action_body(9, Action::play(Rank::Queen))).await;
    assert_ne!(refused.status, 200);

    let after = app.admin_get("/api/admin/health").await;
    assert_eq!(after.status, 200, "{}", after.json);
    let h = &after.json;
    assert_eq!(h["tickets_in_play"], 2);
    assert_eq!(h["players"], json!({"registered": 3, "with_limits": 1, "self_excluded": 1}));
    assert_eq!(h["process"]["actions"], 2, "{h}");
    assert!(h["process"]["requests"].as_u64().unwrap() >= 10, "{h}");
    let p99 = h["process"]["action_p99_ms_at_most"].as_f64().expect("a bound once actions ran");
    assert!(p99 > 0.0 && p99 <= 10_000.0, "{p99}");
    // Counted, never named: no token, login or player id in the answer.
    let text = h.to_string();
    for token in [&a, &b, &c] {
        assert!(!text.contains(token.as_str()), "a player's token in {text}");
    }
    assert!(h.get("players").unwrap().as_object().unwrap().len() == 3, "only the three counts: {h}");
    // The audit chain is sealed soon after (PostgreSQL seals after commit).
    app.sealed_audit_check().await;
    let sealed = app.admin_get("/api/admin/health").await;
    assert_eq!(sealed.json["audit"], json!({"unsealed": 0, "oldest_unsealed_age_s": 0}), "{}", sealed.json);

    // What the desk page draws every block from is what `as-capone report
    // --json` prints for the same database (the browser test, on SQLite,
    // compares the page's cells with it).
    let desk = app.admin_get("/api/admin/emissions").await;
    assert_eq!(desk.status, 200, "{}", desk.json);
    let report = json!({"emissions": server::report_from(&app.db_url, None).await.unwrap()});
    assert_eq!(desk.json, report);
    assert_eq!(report["emissions"][0]["totals"]["in_play"], 2, "{report}");
}
