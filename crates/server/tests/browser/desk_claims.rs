//! Large prizes go to the operator (docs/shops.md "Claims and the payout ceiling"), in Chromium: at the
//! counter a prize above the shop's payout ceiling opens no payment
//! question and says where the holder is paid; on the desk the claim is
//! listed, its payment asked for its reference, confirmed (a cancel first
//! changes nothing), recorded once and shown paid; the emission's notices
//! (art. 1) are shown and the closing notice's date is asked when a sale
//! is closed; both languages, axe-core clean.

use crate::desk::{confirm, desk_string};
use crate::harness::*;
use crate::webdriver::Screen;
use serde_json::json;

const OPERATOR: &str = "browser-claims-operator-token-1";
const RETAILER: &str = "browser-claims-retailer-token-1";
const SHOP: &str = "Tabac du Port";
const NOTICE: &str = "JORF n° 0283 du 5 décembre 2026, texte n° 97";

/// A string of the pages (`web/i18n.js` and the desk's) in `lang`, `{name}` filled.
async fn string(b: &Browser, lang: &str, key: &str, params: &[(&str, &str)]) -> String {
    let mut s = desk_string(b, lang, key).await;
    for (k, val) in params {
        s = s.replace(&format!("{{{k}}}"), val);
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prize_above_the_shops_ceiling_is_sent_to_the_operator_and_its_payment_recorded_on_the_desk() {
    // This shop pays up to 1 cent: every prize of the test table is above it.
    let srv = spawn_server_with(|c| {
        c.operator_tokens = vec![OPERATOR.into()];
        c.retailer_tokens = vec![format!("{SHOP}:{RETAILER}")];
        c.shop_payout_ceilings.insert(SHOP.to_string(), 1);
    })
    .await;
    let em = srv
        .post(
            "/api/admin/emissions",
            Some(OPERATOR),
            &json!({"table": TABLE, "blocks": 1, "channel": "paper", "notice_ref": NOTICE}),
        )
        .await;
    let emission = em["emission"].as_u64().unwrap_or_else(|| panic!("{em}"));
    let text = srv.get_text(&format!("/api/admin/emissions/{emission}/blocks/1/print.csv"), OPERATOR).await;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| first[header.iter().position(|h| *h == name).unwrap()].to_string();
    let (serial, code) = (col("serial"), col("play_code"));
    srv.post("/api/retail/sell", Some(RETAILER), &json!({"serial": serial})).await;
    let opened = srv.post("/api/tickets/redeem", None, &json!({"code": code})).await;
    let token = opened["token"].as_str().unwrap().to_string();
    // find_seed plays with its own schedule: the prize is the ticket's own for the tricks won.
    let ticket = srv.get(&format!("/api/tickets/{serial}"), &token).await["ticket"].clone();
    let plan = find_seed(&serial, "claims-won", |p| prize_of(&ticket, p.game.result().unwrap().tricks) > 0);
    for (seq, a) in plan.actions.iter().enumerate() {
        let mut body = action_json(seq as u64, *a);
        if seq == 0 {
            body["client_seed"] = json!(plan.client_seed);
        }
        srv.post(&format!("/api/tickets/{serial}/actions"), Some(&token), &body).await;
    }
    let prize = prize_of(&ticket, plan.game.result().unwrap().tricks);

    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1280, height: 900 }).await else { return };

    // The counter: "Payer" opens no question; the answer says where the holder is paid.
    b.open("/shop").await;
    b.type_into("#shop-token", RETAILER).await;
    b.click("#login-go").await;
    b.wait_for("document.body.dataset.view === 'counter' && document.body.dataset.state === 'idle'", "signed in").await;
    b.type_into("#serial", &serial).await;
    let n =
        b.exec("return Number(document.getElementById('answer').dataset.n || 0)", json!([])).await.as_u64().unwrap();
    b.click("#do-pay").await;
    b.wait_for(
        &format!(
            "document.body.dataset.state === 'idle' && Number(document.getElementById('answer').dataset.n || 0) > {n}"
        ),
        "the counter's answer",
    )
    .await;
    let shown = b
        .exec(
            "const a = document.getElementById('answer');
             return [a.dataset.kind, a.dataset.payAt, a.dataset.status, document.getElementById('pay-dialog').open];",
            json!([]),
        )
        .await;
    assert_eq!(shown, json!(["info", "operator", "won", false]), "no payment question");
    let amount = b.exec("return document.getElementById('answer-prize').textContent", json!([])).await;
    let amount = amount.as_str().unwrap().to_string();
    let message = b.text("#answer-message").await;
    let template = string(&b, "fr", "shop.msg.operator", &[("prize", &amount)]).await;
    let (before, after) = template.split_once("{ceiling}").unwrap();
    assert!(message.starts_with(before) && message.ends_with(after), "{message} against {template}");
    assert!(message.contains("centre de paiement") && message.contains(&amount), "{message}");
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe at the counter");
    b.shot("claims-1-counter").await;
    let r = srv.post("/api/retail/validate", Some(RETAILER), &json!({"serial": serial})).await;
    assert_eq!(r["status"], "won", "nothing paid at the counter: {r}");

    // The desk: the emission's notice, the claim listed, owed.
    b.open("/desk").await;
    b.type_into("#desk-token", OPERATOR).await;
    b.click("#desk-login-go").await;
    b.wait_for("Number(document.body.dataset.loads || 0) > 0 && document.body.dataset.state === 'idle'", "the desk")
        .await;
    let notice = format!("article[data-emission='{emission}'] [data-notice] dd");
    assert_eq!(b.text(&notice).await, NOTICE);
    let row = format!("#claims-body tr[data-serial='{serial}']");
    b.wait_for(&format!("!!document.querySelector(\"{row}\")"), "the claim's row").await;
    assert_eq!(b.exec(&format!("return document.querySelector(\"{row}\").dataset.status"), json!([])).await, "owed");
    assert_eq!(
        b.exec("return document.getElementById('claims-summary').dataset.owed", json!([])).await,
        prize.to_string()
    );
    // No reference: asked for, nothing sent.
    b.click(&format!("{row} button[data-claim]")).await;
    assert_eq!(b.text("#desk-error").await, string(&b, "fr", "desk.claims.ref.missing", &[]).await);
    assert_eq!(b.exec("return document.getElementById('desk-confirm').open", json!([])).await, false);
    b.type_into(&format!("{row} input"), "VIR-2026-000123").await;
    // Cancelled: nothing paid.
    let question = confirm(&b, &format!("{row} button[data-claim]"), false).await;
    assert!(
        question.contains(&serial) && question.contains("VIR-2026-000123") && question.contains(&amount),
        "{question}"
    );
    assert_eq!(srv.get("/api/admin/claims", OPERATOR).await["claims"][0]["status"], "owed");
    // Confirmed: paid once, audited, shown paid.
    let entries = srv.app.store().check_audit_chain().await.unwrap().entries;
    confirm(&b, &format!("{row} button[data-claim]"), true).await;
    let claims = srv.get("/api/admin/claims", OPERATOR).await;
    assert_eq!(
        (claims["claims"][0]["status"].as_str(), claims["claims"][0]["reference"].as_str()),
        (Some("paid"), Some("VIR-2026-000123"))
    );
    assert!(srv.app.store().check_audit_chain().await.unwrap().entries > entries);
    b.wait_for(&format!("document.querySelector(\"{row}\").dataset.status === 'paid'"), "the claim paid").await;
    assert_eq!(
        b.text("#desk-done").await,
        string(
            &b,
            "fr",
            "desk.done.claim",
            &[("serial", &serial), ("amount", &amount), ("reference", "VIR-2026-000123")]
        )
        .await
    );
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe on the claims");
    b.exec("document.getElementById('desk-claims').scrollIntoView()", json!([])).await;
    b.shot("claims-2-desk").await;

    // Closing the sale asks the closing notice's date: the deadline follows from it.
    let close = format!("button[data-act=close][data-emission='{emission}']");
    b.type_into(&format!("#close-ref-{emission}"), "JORF n° 1 du 2 janvier 2027").await;
    confirm(&b, &close, true).await;
    let closed = srv.get(&format!("/api/admin/emissions/{emission}"), OPERATOR).await;
    assert!(closed["closing_notice_date"].is_string(), "{closed}");
    assert_eq!(closed["closing_notice_ref"], "JORF n° 1 du 2 janvier 2027");
    b.wait_for(
        &format!("!!document.querySelector('article[data-emission=\"{emission}\"] [data-closing-notice]')"),
        "the closing notice shown",
    )
    .await;

    // English.
    b.click("#lang").await;
    assert_eq!(b.text("#desk-claims-title").await, string(&b, "en", "desk.claims.title", &[]).await);
    let status = b.text(&format!("{row} td:nth-of-type(4)")).await;
    assert_eq!(status, string(&b, "en", "desk.claims.status.paid", &[]).await);
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe in English");
    b.close().await;
}
