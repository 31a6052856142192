//! Large prizes go to the operator (docs/shops.md "Claims
//! and the payout ceiling"): a shop never pays a prize above its payout
//! ceiling; its validation says where the holder is paid; the desk lists
//! the claims and records the payment centre's payment once, audited, in
//! the double-entry ledger; an emission keeps its notices (art. 1).

use crate::helpers::*;
use crate::paper::{assert_unchanged, emit_paper, names_amount, pick, play_plan, redeem_ok, sell, snapshot};
use serde_json::json;
use std::collections::HashSet;

/// Shop A pays up to 5 €, shop B up to the default (5 000 €).
const CEILING_A: i64 = 500;

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prize_above_the_shops_ceiling_is_paid_once_by_the_operator_never_by_a_shop() {
    let Some(app) = spawn_app_with(|c| {
        c.shop_payout_ceilings.insert(SHOP_A.to_string(), CEILING_A as u64);
    })
    .await
    else {
        return;
    };
    // Each shop signs in with its ceiling.
    let me = app.get("/api/retail/me", Some(SHOP_A_TOKEN)).await;
    assert_eq!(me.json, json!({"shop": SHOP_A, "payout_ceiling_cents": CEILING_A}));
    let me = app.get("/api/retail/me", Some(SHOP_B_TOKEN)).await;
    assert_eq!(me.json["payout_ceiling_cents"], 500_000);

    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let mut taken = HashSet::new();
    let prize = |p: &Foreseen| p.game.result().unwrap().prize_cents as i64;
    let (big, big_plan) = pick(&printed, &mut taken, |p| prize(p) > CEILING_A);
    let (small, small_plan) = pick(&printed, &mut taken, |p| (1..=CEILING_A).contains(&prize(p)));
    let (lost, lost_plan) = pick(&printed, &mut taken, |p| prize(p) == 0);
    for (p, plan) in [(&big, &big_plan), (&small, &small_plan), (&lost, &lost_plan)] {
        sell(&app, SHOP_A_TOKEN, SHOP_A, &p.serial).await;
        let (_, token) = redeem_ok(&app, &p.code, None).await;
        play_plan(&app, &token, &p.serial, plan).await;
    }
    let big_prize = prize(&big_plan);

    // The shop's validation says where the holder is paid.
    let v = app.retail("validate", Some(SHOP_A_TOKEN), &big.serial).await;
    assert_eq!((v.json["status"].as_str(), v.json["pay_at"].as_str()), (Some("won"), Some("operator")), "{}", v.json);
    let m = v.json["message"].as_str().unwrap();
    assert!(m.contains("centre de paiement") && m.contains("plafond"), "{m}");
    assert!(names_amount(m, big_prize as u64), "{m}");
    let v = app.retail("validate", Some(SHOP_A_TOKEN), &small.serial).await;
    assert_eq!(v.json["pay_at"], "shop", "{}", v.json);
    let v = app.retail("validate", Some(SHOP_A_TOKEN), &lost.serial).await;
    assert_eq!(v.json["pay_at"], json!(null), "{}", v.json);

    // The shop may not pay it: 403, saying why, nothing written.
    let snap = snapshot(&app).await;
    let r = app.retail("pay", Some(SHOP_A_TOKEN), &big.serial).await;
    assert_error(&r, 403, "forbidden");
    assert!(r.json["message"].as_str().unwrap().contains("payout ceiling"), "{}", r.json);
    assert_unchanged(&snap, &snapshot(&app).await, "a shop paying above its ceiling");
    // Within the ceiling, the shop pays.
    let r = app.retail("pay", Some(SHOP_A_TOKEN), &small.serial).await;
    assert_eq!((r.status.as_u16(), r.json["status"].as_str()), (200, Some("paid")), "{}", r.json);

    // The desk lists it, owed; players and shops get nothing from it.
    let claims = app.admin_get("/api/admin/claims").await;
    assert_eq!(claims.status, 200, "{}", claims.json);
    assert_eq!(claims.json["default_ceiling_cents"], 500_000);
    assert_eq!(claims.json["owed_cents"], big_prize);
    let list = claims.json["claims"].as_array().unwrap();
    assert_eq!(list.len(), 1, "only the prize above its shop's ceiling: {}", claims.json);
    let c = &list[0];
    assert_eq!(
        (c["serial"].as_str(), c["status"].as_str(), c["prize_cents"].as_i64(), c["sold_by"].as_str()),
        (Some(big.serial.as_str()), Some("owed"), Some(big_prize), Some(SHOP_A))
    );
    assert_eq!((c["shop_ceiling_cents"].as_i64(), c["emission"].as_u64()), (Some(CEILING_A), Some(emission)));
    let player = app.register().await;
    for (token, status) in [(Some(SHOP_A_TOKEN), 401), (Some(player.as_str()), 403), (None, 401)] {
        let r = app.get("/api/admin/claims", token).await;
        assert_eq!(r.status.as_u16(), status, "{}", r.json);
        let r = app.post("/api/admin/claims/pay", token, json!({"serial": big.serial, "reference": "X"})).await;
        assert_eq!(r.status.as_u16(), status, "{}", r.json);
    }

    // What the payment centre may not pay: 4xx, nothing written.
    let snap = snapshot(&app).await;
    let pay = |serial: &str, reference: &str| json!({"serial": serial, "reference": reference});
    assert_error(&app.admin_post("/api/admin/claims/pay", pay(&big.serial, "  ")).await, 400, "bad_request");
    assert_error(&app.admin_post("/api/admin/claims/pay", pay("nonsense", "R1")).await, 400, "bad_request");
    let unknown = "PAP-001-00009-000001-00";
    let r = app.admin_post("/api/admin/claims/pay", pay(unknown, "R1")).await;
    assert!([400, 404].contains(&r.status.as_u16()), "{}", r.json);
    assert_error(&app.admin_post("/api/admin/claims/pay", pay(&lost.serial, "R1")).await, 409, "conflict");
    assert_error(&app.admin_post("/api/admin/claims/pay", pay(&small.serial, "R1")).await, 409, "conflict");
    let r = app.admin_post("/api/admin/claims/pay", json!({"serial": big.serial})).await;
    assert_error(&r, 400, "bad_request");
    assert_unchanged(&snap, &snapshot(&app).await, "payments the payment centre may not make");

    // Paid once, audited, in the ledger: house:prizes to house:payment_centre.
    let r = app.admin_post("/api/admin/claims/pay", pay(&big.serial, "VIR-2026-000123")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!((r.json["status"].as_str(), r.json["paid_by"].as_str()), (Some("paid"), None), "{}", r.json);
    assert!(r.json["message"].as_str().unwrap().contains("VIR-2026-000123"), "{}", r.json);
    let ticket = crate::paper::ticket_id(&app, &big.serial).await;
    let movement = format!("prize:{ticket}");
    assert_eq!(crate::paper::house_entry(&app, &movement, "house:prizes").await, -big_prize);
    assert_eq!(crate::paper::house_entry(&app, &movement, "house:payment_centre").await, big_prize);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM audit_log WHERE kind = 'claim_paid'").await, 1);
    assert!(app.app.store().check_ledger().await.unwrap().is_sound());

    // Its retry gets the same answer; another reference or a shop: 409.
    let again = app.admin_post("/api/admin/claims/pay", pay(&big.serial, "VIR-2026-000123")).await;
    assert_eq!((again.status.as_u16(), &again.bytes), (200, &r.bytes));
    assert_eq!(again.headers.get("idempotent-replayed").map(|v| v.to_str().unwrap()), Some("true"));
    let snap = snapshot(&app).await;
    let other = app.admin_post("/api/admin/claims/pay", pay(&big.serial, "CHQ-1")).await;
    assert_error(&other, 409, "conflict");
    assert!(other.json["message"].as_str().unwrap().contains("VIR-2026-000123"), "{}", other.json);
    for shop in [SHOP_A_TOKEN, SHOP_B_TOKEN] {
        assert_error(&app.retail("pay", Some(shop), &big.serial).await, 409, "conflict");
    }
    assert_unchanged(&snap, &snapshot(&app).await, "paying a claim again");
    let v = app.retail("validate", Some(SHOP_B_TOKEN), &big.serial).await;
    assert_eq!(v.json["status"], "paid");
    assert!(v.json["message"].as_str().unwrap().contains("centre de paiement"), "{}", v.json);

    // The desk's list and the emission's figures say it is paid.
    let claims = app.admin_get("/api/admin/claims").await;
    let c = &claims.json["claims"][0];
    assert_eq!((c["status"].as_str(), c["reference"].as_str()), (Some("paid"), Some("VIR-2026-000123")));
    assert_eq!(claims.json["owed_cents"], 0);
    let report = app.admin_get(&format!("/api/admin/emissions/{emission}")).await;
    let small_prize = prize(&small_plan);
    assert_eq!(report.json["totals"]["prizes_paid_cents"], big_prize + small_prize, "{}", report.json);
    assert_eq!(report.json["totals"]["prizes_owed_cents"], 0);
    app.shutdown().await;
}
}

both! {
/// Art. 1: an emission is announced by an official notice; the desk keeps
/// its reference, and `report --json` shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emission_keeps_the_reference_of_its_official_notice() {
    let Some(app) = spawn_app().await else { return };
    let body = |notice: serde_json::Value| json!({"table": crate::paper::paper_table(), "blocks": 1, "channel": "paper", "notice_ref": notice});
    for bad in [json!(""), json!("x".repeat(201)), json!("a\nb"), json!(3)] {
        let r = app.admin_post("/api/admin/emissions", body(bad)).await;
        assert_error(&r, 400, "bad_request");
    }
    let r = app.admin_post("/api/admin/emissions", body(json!("JORF n° 0283 du 5 décembre 2026, texte n° 97"))).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let id = r.json["emission"].as_u64().unwrap();
    let e = app.admin_get(&format!("/api/admin/emissions/{id}")).await;
    assert_eq!(e.json["notice_ref"], "JORF n° 0283 du 5 décembre 2026, texte n° 97");
    assert_eq!((e.json["closing_notice_date"].as_str(), e.json["closing_notice_ref"].as_str()), (None, None));
    // The first emission (made at start) has none.
    assert_eq!(app.admin_get("/api/admin/emissions/1").await.json["notice_ref"], json!(null));
    app.shutdown().await;
}
}
