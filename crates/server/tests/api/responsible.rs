//! Responsible play and the refusals' parameters over HTTP, on both
//! databases (docs/player-api.md, docs/contract.md "HTTP API"): a limit on
//! stakes chosen before the first purchase and kept (décret 2010-518,
//! art. 16), refusals that carry what the page needs to word them, the
//! statement per day, week and month, and a paper ticket's claim: where
//! and until when its prize is paid (docs/shops.md).

use crate::helpers::*;
use crate::paper::{emit_paper, pick, redeem_ok, sell, take, won};
use serde_json::{Value, json};
use std::collections::HashSet;

async fn put(app: &TestApp, path: &str, token: &str, body: Value) -> Resp {
    app.send(app.client.put(format!("{}{path}", app.url)).bearer_auth(token).json(&body)).await
}

both! {
/// Décret 2010-518, art. 16: a new account chooses its limit on stakes over
/// seven days before its first purchase; it can be raised, not removed.
#[tokio::test]
async fn decret_2010_518_art_16_no_purchase_before_a_stake_limit_and_it_is_never_removed() {
    let Some(app) = spawn_app_with(|c| c.stake_limit_required = true).await else { return };
    let token = app.register().await;
    let limits = app.get("/api/me/limits", Some(&token)).await;
    assert_eq!(limits.json["stake_limit_required"], true, "{}", limits.json);
    assert_eq!(limits.json["exclusion_days"], json!([1, 365]));
    let before = app.balance(&token).await;
    let refused = app.post("/api/tickets", Some(&token), json!({})).await;
    assert_error(&refused, 403, "limit_required");
    assert_eq!(app.balance(&token).await, before, "nothing debited");
    // Tickets per day alone is no stake limit.
    let day_only =
        put(&app, "/api/me/limits", &token, json!({"tickets_per_day": 3, "spend_per_week_cents": null})).await;
    assert_error(&day_only, 400, "bad_request");
    assert_eq!(day_only.json["params"]["reason"], "stake_limit_required", "{}", day_only.json);
    let set = put(&app, "/api/me/limits", &token, json!({"tickets_per_day": null, "spend_per_week_cents": 900})).await;
    assert_eq!(set.status, 200, "{}", set.json);
    for _ in 0..3 {
        app.buy(&token).await;
    }
    // The fourth would pass 9 €: refused with what the page words.
    let r = app.post("/api/tickets", Some(&token), json!({})).await;
    assert_error(&r, 403, "limit_reached");
    assert_eq!(
        r.json["params"],
        json!({"reason": "spend_per_week", "max_cents": 900, "used_cents": 900, "price_cents": 300}),
        "{}",
        r.json
    );
    // Removing it is refused and changes nothing; raising it waits.
    let removed =
        put(&app, "/api/me/limits", &token, json!({"tickets_per_day": null, "spend_per_week_cents": null})).await;
    assert_error(&removed, 400, "bad_request");
    assert_eq!(app.get("/api/me/limits", Some(&token)).await.json["spend_per_week_cents"], 900);
    let raised =
        put(&app, "/api/me/limits", &token, json!({"tickets_per_day": null, "spend_per_week_cents": 3000})).await;
    assert_eq!(
        (raised.json["spend_per_week_cents"].as_i64(), raised.json["pending"]["spend_per_week_cents"].as_i64()),
        (Some(900), Some(3000))
    );
    app.shutdown().await;
}
}

both! {
/// A self-exclusion lasts from 24 hours to 12 months; a purchase during it
/// is refused with its end as a parameter.
#[tokio::test]
async fn a_self_exclusion_lasts_from_24_hours_to_12_months_and_its_refusal_says_until_when() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    for days in [0, 366, 3650] {
        let r = app.post("/api/me/self-exclusion", Some(&token), json!({"days": days})).await;
        assert_error(&r, 400, "bad_request");
    }
    let r = app.post("/api/me/self-exclusion", Some(&token), json!({"days": 1})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let until = r.json["excluded_until_ms"].as_i64().unwrap();
    assert!((until - server::now_ms() - 86_400_000).abs() < 60_000, "24 hours: {}", r.json);
    let refused = app.post("/api/tickets", Some(&token), json!({})).await;
    assert_error(&refused, 403, "self_excluded");
    assert_eq!(refused.json["params"], json!({"until_ms": until}));
    let year = app.post("/api/me/self-exclusion", Some(&token), json!({"days": 365})).await;
    assert_eq!(year.status, 200, "{}", year.json);
    app.shutdown().await;
}
}

both! {
/// The statement: stakes, winnings and net per day, week and month, from
/// the player's own ledger entries; `since_ms` within 31 days.
#[tokio::test]
async fn the_statement_sums_the_players_stakes_and_prizes_per_day_week_and_month() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    let start = server::now_ms();
    // A ticket that wins, played out, and one still in play.
    let (ticket, plan) = find_ticket(&app, &token, 400, |p| p.game.result().unwrap().prize_cents > 0).await;
    let prize = plan.game.result().unwrap().prize_cents as i64;
    let id = ticket["id"].as_str().unwrap().to_string();
    app.play(&token, &id, &plan.actions).await;
    app.buy(&token).await;
    let other = app.register().await;
    app.buy(&other).await;
    let s = app.get(&format!("/api/me/statement?since_ms={start}"), Some(&token)).await;
    assert_eq!(s.status, 200, "{}", s.json);
    let (days, weeks, months) =
        (s.json["days"].as_array().unwrap(), s.json["weeks"].as_array().unwrap(), s.json["months"].as_array().unwrap());
    assert_eq!((days.len(), weeks.len(), months.len()), (7, 4, 3));
    // Every ticket the player bought (find_ticket may buy several), one prize.
    let bought = app.get("/api/tickets", Some(&token)).await.json["tickets"].as_array().unwrap().len() as i64;
    assert!(bought >= 2);
    let stakes = 300 * bought;
    let expected = json!({"stakes_cents": stakes, "winnings_cents": prize, "net_cents": prize - stakes});
    for period in [&days[0], &weeks[0], &months[0], &s.json["since"]] {
        let got = json!({"stakes_cents": period["stakes_cents"], "winnings_cents": period["winnings_cents"], "net_cents": period["net_cents"]});
        assert_eq!(got, expected, "{period}");
    }
    assert!(days[0]["from_ms"].as_i64().unwrap() <= start && start < days[0]["to_ms"].as_i64().unwrap());
    assert_eq!(days[1]["stakes_cents"], 0);
    for bad in ["since_ms=abc", "other=1"] {
        assert_error(&app.get(&format!("/api/me/statement?{bad}"), Some(&token)).await, 400, "bad_request");
    }
    // An older start is read from 31 days ago.
    let old = app.get(&format!("/api/me/statement?since_ms={}", start - 40 * 86_400_000), Some(&token)).await;
    let from = old.json["since"]["from_ms"].as_i64().unwrap();
    assert!((from - (server::now_ms() - 31 * 86_400_000)).abs() < 60_000, "{}", old.json);
    assert_eq!(old.json["since"]["stakes_cents"], stakes);
    assert_error(&app.get("/api/me/statement", None).await, 401, "unauthorized");
    app.shutdown().await;
}
}

both! {
/// A paper ticket's claim: the shop that sold it pays it (or any shop when
/// configured); above the payout ceiling the payment centre; paid: nothing
/// to claim; an online ticket has none. The shops' refusals carry their reason.
#[tokio::test]
async fn a_paper_ticket_says_where_and_until_when_its_prize_is_paid() {
    let Some(app) = spawn_app_with(|c| c.shop_payout_ceiling_cents = 1).await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let mut taken = HashSet::new();
    let (t, plan) = pick(&printed, &mut taken, won);
    let serial = t.serial.as_str();
    sell(&app, SHOP_A_TOKEN, SHOP_A, serial).await;
    let (_, token) = redeem_ok(&app, &t.code, None).await;
    // In play: nothing to claim yet.
    let c = app.get(&format!("/api/tickets/{serial}/claim"), Some(&token)).await;
    assert_eq!(c.status, 200, "{}", c.json);
    assert_eq!((c.json["pay_at"].clone(), c.json["shop"].as_str()), (Value::Null, Some(SHOP_A)));
    app.play(&token, serial, &plan.actions).await;
    // Won, above this server's ceiling of 1 cent: the payment centre.
    let c = app.get(&format!("/api/tickets/{serial}/claim"), Some(&token)).await;
    assert_eq!(c.json["pay_at"], "payment_centre", "{}", c.json);
    assert_eq!(c.json["claim_days"], 30);
    assert_eq!(c.json["claim_until_ms"], Value::Null, "the sale is not closed");
    assert_eq!(c.json["expired"], false);
    // The shop that sold it may not pay it: refused with its reason and figures.
    let refused = app.retail("pay", Some(SHOP_A_TOKEN), serial).await;
    assert_error(&refused, 403, "forbidden");
    assert_eq!(refused.json["params"]["reason"], "above_ceiling", "{}", refused.json);
    assert_eq!(refused.json["params"]["ceiling_cents"], 1);
    // Another shop: not its ticket (reason and the seller).
    let other = app.retail("sell", Some(SHOP_B_TOKEN), serial).await;
    assert_error(&other, 409, "conflict");
    assert_eq!(other.json["params"], json!({"reason": "already_sold", "shop": SHOP_A}));
    // A ticket not played: its reason.
    let unplayed = take(&printed, &mut taken);
    sell(&app, SHOP_A_TOKEN, SHOP_A, &unplayed.serial).await;
    let r = app.retail("pay", Some(SHOP_A_TOKEN), &unplayed.serial).await;
    assert_error(&r, 409, "conflict");
    assert_eq!(r.json["params"]["reason"], "not_played");
    // Someone else's token sees nothing of it; an online ticket has no claim.
    let player = app.register().await;
    assert_error(&app.get(&format!("/api/tickets/{serial}/claim"), Some(&player)).await, 404, "not_found");
    let online = app.buy(&player).await;
    let id = online["id"].as_str().unwrap();
    let c = app.get(&format!("/api/tickets/{id}/claim"), Some(&player)).await;
    assert_error(&c, 409, "conflict");
    assert_eq!(c.json["params"]["reason"], "sold_online");
    app.shutdown().await;
}
}

both! {
/// Within the seller's ceiling: the seller pays it; with any shop allowed,
/// any shop; once paid, nothing to claim and the payment said.
#[tokio::test]
async fn a_paper_winner_within_the_ceiling_is_paid_by_its_seller_or_any_shop() {
    for any_shop in [false, true] {
        let Some(app) = spawn_app_with(|c| c.retail_pay_any_shop = any_shop).await else { return };
        let emission = emit_paper(&app, 1).await;
        let printed = app.print_file(emission, 1).await;
        let mut taken = HashSet::new();
        let (t, plan) = pick(&printed, &mut taken, won);
        let serial = t.serial.as_str();
        sell(&app, SHOP_A_TOKEN, SHOP_A, serial).await;
        let (_, token) = redeem_ok(&app, &t.code, None).await;
        app.play(&token, serial, &plan.actions).await;
        let c = app.get(&format!("/api/tickets/{serial}/claim"), Some(&token)).await;
        assert_eq!(c.json["pay_at"], if any_shop { "any_shop" } else { "seller" }, "{}", c.json);
        assert_eq!(c.json["prize_cents"].as_u64(), Some(plan.game.result().unwrap().prize_cents));
        let paid = app.retail("pay", Some(SHOP_A_TOKEN), serial).await;
        assert_eq!(paid.status, 200, "{}", paid.json);
        let c = app.get(&format!("/api/tickets/{serial}/claim"), Some(&token)).await;
        assert_eq!((c.json["pay_at"].clone(), c.json["paid_by"].as_str()), (Value::Null, Some(SHOP_A)), "{}", c.json);
        // Paid again: refused with when and by whom.
        let again = app.retail("pay", Some(SHOP_B_TOKEN), serial).await;
        assert_error(&again, 409, "conflict");
        assert_eq!(again.json["params"]["reason"], "already_paid", "{}", again.json);
        assert_eq!(again.json["params"]["paid_by"], SHOP_A);
        app.shutdown().await;
    }
}
}
