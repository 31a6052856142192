//! The desk's health (`GET /api/admin/health`, docs/operating.md "The desk page"): what it
//! says of the database, the key, the audit chain, the games in play, the
//! players' limits and self-exclusions (counted, never named) and this
//! process, checked against what the test did; who may read it (the
//! 401/403 of every desk endpoint: `emissions_desk.rs`); and the desk's
//! emission figures equal to `as-capone report --json`.

use crate::helpers::*;
use engine::{Action, Rank};
use serde_json::json;

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_health_counts_what_happened_and_names_nobody() {
    let Some(app) = spawn_app().await else { return };
    let fresh = app.admin_get("/api/admin/health").await;
    assert_eq!(fresh.status, 200, "{}", fresh.json);
    let h = &fresh.json;
    let backend = match crate::helpers::backend() {
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
    assert_eq!(h["wallet"], json!({"mode": "internal", "outbox_depth": 0, "outbox_oldest_age_s": 0, "unresolved_rounds": 0}));
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
}

both! {
/// The desk's table check (`POST /api/admin/tables/check`,
/// docs/operating.md "The desk page"): the exact figures of `odds --table` before an emission is made of a
/// table, whether this server would make one and why not (art. 2's price
/// and block size, docs/rules.md), a table art. 3.1 forbids refused with
/// 400 and its rule; nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_table_check_gives_the_exact_figures_and_the_rules_broken_and_writes_nothing() {
    // The tests' servers allow non-regulation tables (blocks of 100).
    let Some(app) = spawn_app().await else { return };
    let emissions = app.query_i64("SELECT COUNT(*) FROM emissions").await;
    let example = math::PrizeTable::example();
    let ok = app.post("/api/admin/tables/check", Some(OPERATOR), json!({"table": example.to_toml()})).await;
    assert_eq!(ok.status, 200, "{}", ok.json);
    assert_eq!(ok.json["accepted"], true, "{}", ok.json);
    assert_eq!(ok.json["refusals"], json!([]));
    assert_eq!(ok.json["deviations"], json!([]));
    assert_eq!(ok.json["digest"], example.digest());
    let exact = math::Payout::compute(&example, &math::Odds::exact()).to_json();
    // The fractions exactly; the block's risk (floating point, through
    // JSON's decimal text and back) to the last digits.
    for key in ["expected_payout_cents", "rtp", "hit_rate", "variance_cents2", "largest_prize_cents", "prize_chances"] {
        assert_eq!(ok.json["figures"][key], exact[key], "{key}");
    }
    let (risk, want) = (&ok.json["figures"]["block_risk"], &exact["block_risk"]);
    assert_eq!(risk["method"], want["method"]);
    for key in ["mean_cents", "std_dev_cents", "p_prizes_exceed_sales", "p99_cents", "p9999_cents"] {
        let (a, b) = (risk[key].as_f64().unwrap(), want[key].as_f64().unwrap());
        assert!((a - b).abs() <= 1e-12 * b.abs(), "{key}: {a} against {b}");
    }
    // The illustrative table returns 243518266/359298585 (README).
    assert_eq!(ok.json["figures"]["rtp"], "243518266/359298585");

    // Blocks of 50 tickets: art. 2 says 300 000. Said so; accepted only
    // because this server allows non-regulation tables.
    let small =
        app.post("/api/admin/tables/check", Some(OPERATOR), json!({"table": crate::emissions::other_table()})).await;
    assert_eq!(small.status, 200, "{}", small.json);
    assert_eq!(small.json["accepted"], true);
    assert_eq!(small.json["deviations"], json!(["a block holds 50 tickets, not the 300 000 that art. 2 sets"]));

    // A price the ledger cannot hold a block of: refused with 400 and why,
    // as the emission's creation refuses it.
    let mut huge: toml::Value = toml::from_str(&example.to_toml()).unwrap();
    huge["price_cents"] = toml::Value::Integer(40_000_000_000_000);
    let huge = toml::to_string(&huge).unwrap();
    let over = app.post("/api/admin/tables/check", Some(OPERATOR), json!({"table": huge})).await;
    assert_error(&over, 400, "bad_request");
    let made = app
        .post("/api/admin/emissions", Some(OPERATOR), json!({"table": huge, "blocks": 1, "channel": "online"}))
        .await;
    assert_error(&made, 400, "bad_request");

    // Prizes that fall from 7 to 8 tricks: the table's own rule (art. 3.1), 400.
    let mut bad: toml::Value = toml::from_str(&example.to_toml()).unwrap();
    let first = &mut bad["schedule"].as_array_mut().unwrap()[0]["prizes_cents"];
    let seven = first["7"].as_integer().unwrap();
    first["8"] = toml::Value::Integer(seven - 1);
    let refused =
        app.post("/api/admin/tables/check", Some(OPERATOR), json!({"table": toml::to_string(&bad).unwrap()})).await;
    assert_error(&refused, 400, "bad_request");
    let garbage = app.post("/api/admin/tables/check", Some(OPERATOR), json!({"table": "not a table"})).await;
    assert_error(&garbage, 400, "bad_request");
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM emissions").await, emissions, "a check writes nothing");
}
}

both! {
/// The desk's chart of a block's risk (`GET /api/admin/emissions/{id}/risk`,
/// docs/operating.md "The desk page"): the exact distribution of a whole block's prizes,
/// binned (its chances add up to 1 but for the tails left out, 1e-6 each
/// side, its mean is
/// the table's), and each block's prizes won so far as the report has them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_risk_chart_is_the_exact_distribution_and_each_blocks_running_prizes() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let ticket = app.buy(&token).await;
    let r = app
        .post(
            &format!("/api/tickets/{}/actions", ticket["id"].as_str().unwrap()),
            Some(&token),
            action_body(0, Action::play(Rank::Ace)),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let chart = app.admin_get("/api/admin/emissions/1/risk").await;
    assert_eq!(chart.status, 200, "{}", chart.json);
    let c = &chart.json;
    let bins: Vec<f64> = c["bins"].as_array().unwrap().iter().map(|b| b.as_f64().unwrap()).collect();
    assert!(!bins.is_empty() && bins.len() <= 200, "{} bins", bins.len());
    let total: f64 = bins.iter().sum();
    assert!((total - 1.0).abs() < 3e-6, "the bins hold {total} of the chance");
    let (first, width) = (c["first_cents"].as_f64().unwrap(), c["bin_cents"].as_f64().unwrap());
    let mean: f64 = bins.iter().enumerate().map(|(i, p)| p * (first + (i as f64 + 0.5) * width)).sum();
    let table = math::PrizeTable::parse_toml(testkit::TABLE).unwrap();
    let risk = math::Payout::compute(&table, &math::Odds::exact()).block_risk;
    assert!((mean - risk.mean_cents).abs() <= width, "binned mean {mean} against {}", risk.mean_cents);
    assert!((c["mean_cents"].as_f64().unwrap() - risk.mean_cents).abs() < 1e-6 * risk.mean_cents);
    assert_eq!(c["block_sales_cents"], json!(table.price_cents * u64::from(table.block_size)));
    let report = app.admin_get("/api/admin/emissions/1").await;
    let blocks: Vec<serde_json::Value> = report.json["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| json!({"block": b["block"], "printed": b["printed"], "finished": b["finished"], "prizes_won_cents": b["prizes_won_cents"]}))
        .collect();
    assert_eq!(c["blocks"], json!(blocks));
    let unknown = app.admin_get("/api/admin/emissions/99/risk").await;
    assert_error(&unknown, 404, "not_found");
}
}
