//! A shop's sign-in and its day (docs/shops.md "The counter's sign-in" and
//! "A shop's day"): `GET /api/retail/me` names the shop of a retailer token
//! and no other token's; `GET /api/retail/report` counts the shop's own
//! sales and payments of one Paris calendar day, in integer cents, and
//! never another shop's.

use crate::helpers::*;
use crate::paper::*;
use serde_json::json;
use std::collections::HashSet;

both! {
/// The signed-in shop: its name for its token; every other token (none, a
/// wrong one, a player's, a paper ticket's own, the operator's) is
/// refused in the documented error shape and never gets a shop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_me_names_the_tokens_shop_and_refuses_every_other_token() {
    let Some(app) = spawn_app().await else { return };
    for (token, shop) in [(SHOP_A_TOKEN, SHOP_A), (SHOP_B_TOKEN, SHOP_B)] {
        let r = app.get("/api/retail/me", Some(token)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        // Each shop with its payout ceiling (the default, 5 000 €: docs/shops.md).
        assert_eq!(r.json, json!({"shop": shop, "payout_ceiling_cents": 500_000}));
    }
    // A paper ticket, sold and opened: its own token.
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let p = take(&printed, &mut HashSet::new());
    sell(&app, SHOP_A_TOKEN, SHOP_A, &p.serial).await;
    let (_, ticket_token) = redeem_ok(&app, &p.code, None).await;
    let player = app.register().await;

    let before = snapshot(&app).await;
    assert_error(&app.get("/api/retail/me", None).await, 401, "unauthorized");
    assert_error(&app.get("/api/retail/me", Some("not-a-retailer-token-0000")).await, 401, "unauthorized");
    assert_error(&app.get("/api/retail/me", Some(&ticket_token)).await, 401, "unauthorized");
    assert_error(&app.get("/api/retail/me", Some(OPERATOR)).await, 401, "unauthorized");
    assert_error(&app.get("/api/retail/me", Some(&player)).await, 403, "forbidden");
    // The same tokens are refused by the report too.
    assert_error(&app.get("/api/retail/report", Some(&ticket_token)).await, 401, "unauthorized");
    assert_error(&app.get("/api/retail/report", Some(&player)).await, 403, "forbidden");
    assert_unchanged(&before, &snapshot(&app).await, "refused sign-ins");
    app.shutdown().await;
}
}

both! {
/// A shop's day: its sales at their price, its payments each with its
/// serial, amount and time, the net (sales - prizes paid) in cents; the
/// day's bounds are Paris midnights; another shop's sales and payments
/// are never in it; a day that does not exist is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_report_counts_the_shops_own_day_in_cents_and_never_another_shops() {
    let Some(app) = spawn_app().await else { return };
    let emission = emit_paper(&app, 1).await;
    let price = app.query_i64(&format!("SELECT price_cents FROM emissions WHERE id = {emission}")).await;
    let printed = app.print_file(emission, 1).await;
    let mut taken = HashSet::new();

    // Nothing yet: zeros, today in Paris.
    let r = app.get("/api/retail/report", Some(SHOP_A_TOKEN)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let today = r.json["day"].as_str().unwrap().to_string();
    assert_eq!((r.json["shop"].as_str(), r.json["time_zone"].as_str()), (Some(SHOP_A), Some("Europe/Paris")));
    let (from, to) = (r.json["from_ms"].as_i64().unwrap(), r.json["to_ms"].as_i64().unwrap());
    assert!(from <= now_ms() && now_ms() < to, "today holds now: {}", r.json);
    assert!([23, 24, 25].contains(&((to - from) / 3_600_000)), "a Paris day is 23 to 25 hours: {}", r.json);
    assert_eq!(from % 3_600_000, 0, "a Paris midnight is a whole UTC hour");
    assert_eq!(
        (&r.json["sold"], &r.json["paid"], &r.json["net_cents"], &r.json["payments"]),
        (&json!({"count": 0, "amount_cents": 0}), &json!({"count": 0, "amount_cents": 0}), &json!(0), &json!([]))
    );

    // Shop A sells a winner (played, paid by A), a loser and one more; shop B
    // sells a winner of its own and pays it.
    let (wa, win_a) = pick(&printed, &mut taken, won);
    let (la, loss_a) = pick(&printed, &mut taken, lost);
    let extra = take(&printed, &mut taken);
    let (wb, win_b) = pick(&printed, &mut taken, won);
    for (token, shop, p, plan) in [
        (SHOP_A_TOKEN, SHOP_A, &wa, Some(&win_a)),
        (SHOP_A_TOKEN, SHOP_A, &la, Some(&loss_a)),
        (SHOP_A_TOKEN, SHOP_A, &extra, None),
        (SHOP_B_TOKEN, SHOP_B, &wb, Some(&win_b)),
    ] {
        sell(&app, token, shop, &p.serial).await;
        if let Some(plan) = plan {
            let (_, t) = redeem_ok(&app, &p.code, None).await;
            play_plan(&app, &t, &p.serial, plan).await;
        }
    }
    let prize_a = win_a.game.result().unwrap().prize_cents as i64;
    let prize_b = win_b.game.result().unwrap().prize_cents as i64;
    let paid_a = app.retail("pay", Some(SHOP_A_TOKEN), &wa.serial).await;
    assert_eq!(paid_a.status, 200, "{}", paid_a.json);
    assert_eq!(app.retail("pay", Some(SHOP_B_TOKEN), &wb.serial).await.status, 200);
    // A second press of "Payer": the first answer again, nothing paid twice.
    let again = app.retail("pay", Some(SHOP_A_TOKEN), &wa.serial).await;
    assert_eq!(again.bytes, paid_a.bytes);

    let before = snapshot(&app).await;
    let a = app.get(&format!("/api/retail/report?day={today}"), Some(SHOP_A_TOKEN)).await;
    assert_eq!(a.status, 200, "{}", a.json);
    assert_eq!(a.json["sold"], json!({"count": 3, "amount_cents": 3 * price}));
    assert_eq!(a.json["paid"], json!({"count": 1, "amount_cents": prize_a}));
    assert_eq!(a.json["net_cents"], json!(3 * price - prize_a), "sales - prizes paid");
    assert_eq!(
        a.json["payments"],
        json!([{"serial": wa.serial, "prize_cents": prize_a, "paid_ms": paid_a.json["paid_ms"]}]),
        "the receipt's facts are the payment's"
    );
    let b = app.get("/api/retail/report", Some(SHOP_B_TOKEN)).await;
    assert_eq!((b.json["shop"].as_str(), b.json["day"].as_str()), (Some(SHOP_B), Some(today.as_str())));
    assert_eq!(b.json["sold"], json!({"count": 1, "amount_cents": price}));
    assert_eq!(b.json["paid"], json!({"count": 1, "amount_cents": prize_b}));
    assert_eq!(b.json["net_cents"], json!(price - prize_b));
    assert_eq!(b.json["payments"].as_array().unwrap().len(), 1);
    assert_eq!(b.json["payments"][0]["serial"], wb.serial.as_str(), "B sees its own payment only");
    assert_unchanged(&before, &snapshot(&app).await, "reading the reports");

    // The day's bounds: a sale moved to the last millisecond before today's
    // Paris midnight leaves today and is yesterday's; one at the midnight
    // itself stays today's.
    let extra_id = ticket_id(&app, &extra.serial).await;
    app.exec_sql(&format!("UPDATE tickets SET sold_ms = {} WHERE id = {extra_id}", from - 1)).await.unwrap();
    let a = app.get(&format!("/api/retail/report?day={today}"), Some(SHOP_A_TOKEN)).await;
    assert_eq!(a.json["sold"], json!({"count": 2, "amount_cents": 2 * price}));
    let yesterday = app.get(&format!("/api/retail/report?day={}", day_before(&today)), Some(SHOP_A_TOKEN)).await;
    assert_eq!(yesterday.status, 200, "{}", yesterday.json);
    assert_eq!(yesterday.json["to_ms"], json!(from), "days meet at Paris midnight");
    assert_eq!(yesterday.json["sold"], json!({"count": 1, "amount_cents": price}));
    assert_eq!(yesterday.json["paid"], json!({"count": 0, "amount_cents": 0}));
    app.exec_sql(&format!("UPDATE tickets SET sold_ms = {from} WHERE id = {extra_id}")).await.unwrap();
    let a = app.get(&format!("/api/retail/report?day={today}"), Some(SHOP_A_TOKEN)).await;
    assert_eq!(a.json["sold"], json!({"count": 3, "amount_cents": 3 * price}));
    // A winter day: Paris is UTC+1, its midnight 23:00 UTC the day before.
    let w = app.get("/api/retail/report?day=2026-01-15", Some(SHOP_A_TOKEN)).await;
    assert_eq!(w.json["from_ms"], json!(1_768_431_600_000_i64), "2026-01-14T23:00:00Z");

    // Refused: a day that does not exist, another shape, an unknown parameter.
    for q in ["day=2026-02-30", "day=2026-13-01", "day=05/12/2026", "day=", "shop=Bar%20des%20Sports"] {
        assert_error(&app.get(&format!("/api/retail/report?{q}"), Some(SHOP_A_TOKEN)).await, 400, "bad_request");
    }
    app.shutdown().await;
}
}

both! {
/// The reports read a shop's rows through the indexes of migration 8
/// (shop, time), not the whole tickets table: SQLite's plan names them;
/// PostgreSQL plans a small table by cost, so there the indexes are
/// checked to exist as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_report_reads_a_shops_rows_through_its_indexes() {
    let Some(app) = spawn_app().await else { return };
    if crate::helpers::backend() == Backend::Postgres {
        let defs =
            app.dump("SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'tickets_shop_%' ORDER BY indexname").await;
        assert_eq!(defs.len(), 2, "{defs:?}");
        assert!(defs[0].contains("(paid_shop, paid_ms) WHERE (paid_shop IS NOT NULL)"), "{defs:?}");
        assert!(defs[1].contains("(shop, sold_ms) WHERE (shop IS NOT NULL)"), "{defs:?}");
        app.shutdown().await;
        return;
    }
    let plan = |sql: &str| format!("EXPLAIN QUERY PLAN {sql}");
    let sold = app
        .dump(&plan(
            "SELECT COUNT(*), CAST(COALESCE(SUM(e.price_cents), 0) AS BIGINT) FROM tickets t
             JOIN blocks b ON b.id = t.block_id JOIN emissions e ON e.id = b.emission_id
             WHERE t.shop = 'A' AND t.sold_ms >= 0 AND t.sold_ms < 10",
        ))
        .await
        .join("\n");
    assert!(sold.contains("USING INDEX tickets_shop_sold (shop=? AND sold_ms>? AND sold_ms<?)"), "{sold}");
    let paid = app
        .dump(&plan(
            "SELECT t.serial, g.prize_cents, t.paid_ms FROM tickets t JOIN ticket_games g ON g.ticket_id = t.id
             WHERE t.paid_shop = 'A' AND t.paid_ms >= 0 AND t.paid_ms < 10 ORDER BY t.paid_ms, t.id",
        ))
        .await
        .join("\n");
    assert!(paid.contains("USING INDEX tickets_shop_paid (paid_shop=? AND paid_ms>? AND paid_ms<?)"), "{paid}");
    app.shutdown().await;
}
}

/// `YYYY-MM-DD` of the day before (the test's own arithmetic, on UTC dates).
fn day_before(day: &str) -> String {
    let (y, m, d): (i32, u32, u32) =
        (day[0..4].parse().unwrap(), day[5..7].parse().unwrap(), day[8..10].parse().unwrap());
    if d > 1 {
        return format!("{y:04}-{m:02}-{:02}", d - 1);
    }
    let (y, m) = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
    let last = match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    format!("{y:04}-{m:02}-{last:02}")
}
