//! A shop's retries (docs/contract.md "Retail tickets"): the same shop
//! repeating its sale or its payment gets the first answer again, byte for
//! byte, and nothing is written twice, whether it retries later or sends
//! identical requests at once.

use crate::helpers::*;
use crate::paper::*;
use std::collections::HashSet;
use std::sync::Arc;

/// How many movements and ledger entries a movement id has.
async fn movement_rows(app: &TestApp, movement: &str) -> (i64, i64) {
    (
        app.query_i64(&format!("SELECT COUNT(*) FROM movements WHERE id = '{movement}'")).await,
        app.query_i64(&format!("SELECT COUNT(*) FROM ledger_entries WHERE movement_id = '{movement}'")).await,
    )
}

both! {
/// "A shop whose answer was lost retries": the same shop repeating its sale
/// or its payment of the same ticket gets the first answer again, byte for
/// byte, and nothing is written twice; another shop is still refused, and
/// another operation still refused as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_a_shop_repeating_its_sale_or_payment_gets_the_same_answer_and_nothing_twice() {
    let Some(app) = spawn_app().await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let mut taken = HashSet::new();
    let (w, win) = pick(&printed, &mut taken, won);
    let id = ticket_id(&app, &w.serial).await;

    let first = app.retail("sell", Some(SHOP_A_TOKEN), &w.serial).await;
    assert_eq!(first.status, 200, "{}", first.json);
    let validated = app.retail("validate", Some(SHOP_A_TOKEN), &w.serial).await;
    let before = snapshot(&app).await;
    // The retry, typed otherwise (lower case, no dashes): the same bytes.
    for serial in [w.serial.clone(), w.serial.replace('-', "").to_lowercase()] {
        let again = app.retail("sell", Some(SHOP_A_TOKEN), &serial).await;
        assert_eq!((again.status, &again.bytes), (first.status, &first.bytes), "{}", again.json);
        // Marked as a replay, the first answer not.
        assert_eq!(again.headers.get("idempotent-replayed").map(|v| v.to_str().unwrap()), Some("true"));
        assert!(first.headers.get("idempotent-replayed").is_none());
    }
    // Another shop selling it: 409 as before.
    assert_error(&app.retail("sell", Some(SHOP_B_TOKEN), &w.serial).await, 409, "conflict");
    // Another operation of the selling shop: paying an unfinished ticket, 409.
    assert_error(&app.retail("pay", Some(SHOP_A_TOKEN), &w.serial).await, 409, "conflict");
    assert_unchanged(&before, &snapshot(&app).await, "the repeated sale");
    assert_eq!(movement_rows(&app, &format!("retail_sale:{id}")).await, (1, 2));
    let v = app.retail("validate", Some(SHOP_A_TOKEN), &w.serial).await;
    assert_eq!((v.status, &v.bytes), (validated.status, &validated.bytes), "validate is unchanged");

    let (_, token) = redeem_ok(&app, &w.code, None).await;
    play_plan(&app, &token, &w.serial, &win).await;
    let paid = app.retail("pay", Some(SHOP_A_TOKEN), &w.serial).await;
    assert_eq!(paid.status, 200, "{}", paid.json);
    let validated = app.retail("validate", Some(SHOP_B_TOKEN), &w.serial).await;
    let before = snapshot(&app).await;
    for _ in 0..2 {
        let again = app.retail("pay", Some(SHOP_A_TOKEN), &w.serial).await;
        assert_eq!((again.status, &again.bytes), (paid.status, &paid.bytes), "{}", again.json);
        assert_eq!(again.headers.get("idempotent-replayed").map(|v| v.to_str().unwrap()), Some("true"));
        assert!(paid.headers.get("idempotent-replayed").is_none());
    }
    assert_error(&app.retail("pay", Some(SHOP_B_TOKEN), &w.serial).await, 409, "conflict");
    // The sale's retry still gets the sale's answer (not the payment's).
    let again = app.retail("sell", Some(SHOP_A_TOKEN), &w.serial).await;
    assert_eq!((again.status, &again.bytes), (first.status, &first.bytes), "{}", again.json);
    assert_error(&app.retail("sell", Some(SHOP_B_TOKEN), &w.serial).await, 409, "conflict");
    assert_unchanged(&before, &snapshot(&app).await, "the repeated payment");
    assert_eq!(movement_rows(&app, &format!("prize:{id}")).await, (1, 2));
    let v = app.retail("validate", Some(SHOP_B_TOKEN), &w.serial).await;
    assert_eq!((v.status, &v.bytes), (validated.status, &validated.bytes), "validate is unchanged");

    for kind in ["ticket_sold_in_shop", "ticket_paid"] {
        let n = app.query_i64(&format!("SELECT COUNT(*) FROM audit_log WHERE kind = '{kind}'")).await;
        assert_eq!(n, 1, "{kind}");
    }
    let ledger = app.app.store().check_ledger().await.unwrap();
    assert!(ledger.is_sound(), "{ledger:?}");
    app.shutdown().await;
}
}

both! {
/// Identical retries sent at once (the shop's terminal resends while the
/// first is still running): one sale and one payment, every retry answered
/// with the same bytes; a second shop racing for the same ticket is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_identical_retries_at_once_make_one_sale_and_one_payment_with_one_answer() {
    let Some(app) = spawn_app().await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let mut taken = HashSet::new();
    let (w, win) = pick(&printed, &mut taken, won);
    let raced = take(&printed, &mut taken);
    let app = Arc::new(app);
    let at_once = |op: &'static str, shops: Vec<&'static str>, serial: String| {
        let tasks: Vec<_> = shops
            .into_iter()
            .map(|shop| {
                let (app, serial) = (app.clone(), serial.clone());
                tokio::spawn(async move { (shop, app.retail(op, Some(shop), &serial).await) })
            })
            .collect();
        async move {
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap());
            }
            out
        }
    };

    let sells = at_once("sell", vec![SHOP_A_TOKEN; 8], w.serial.clone()).await;
    for (_, r) in &sells {
        assert_eq!((r.status.as_u16(), &r.bytes), (200, &sells[0].1.bytes), "{}", r.json);
    }
    let id = ticket_id(&app, &w.serial).await;
    assert_eq!(movement_rows(&app, &format!("retail_sale:{id}")).await, (1, 2));

    let (_, token) = redeem_ok(&app, &w.code, None).await;
    play_plan(&app, &token, &w.serial, &win).await;
    let pays = at_once("pay", vec![SHOP_A_TOKEN; 8], w.serial.clone()).await;
    for (_, r) in &pays {
        assert_eq!((r.status.as_u16(), &r.bytes), (200, &pays[0].1.bytes), "{}", r.json);
    }
    assert_eq!(movement_rows(&app, &format!("prize:{id}")).await, (1, 2));

    // Two shops at once: one sells, the other is refused; the winner's
    // retries all get its answer.
    let mut shops = vec![SHOP_A_TOKEN, SHOP_B_TOKEN];
    shops.extend([SHOP_A_TOKEN, SHOP_B_TOKEN].repeat(3));
    let raced_answers = at_once("sell", shops, raced.serial.clone()).await;
    let sold_by = app.retail("validate", Some(SHOP_A_TOKEN), &raced.serial).await.json["sold_by"].clone();
    let winner = if sold_by == SHOP_A { SHOP_A_TOKEN } else { SHOP_B_TOKEN };
    let won_answer = raced_answers.iter().find(|(s, r)| *s == winner && r.status == 200).expect("the seller's answer");
    for (shop, r) in &raced_answers {
        if *shop == winner {
            assert_eq!((r.status, &r.bytes), (won_answer.1.status, &won_answer.1.bytes), "{}", r.json);
        } else {
            assert_error(r, 409, "conflict");
        }
    }
    let raced_id = ticket_id(&app, &raced.serial).await;
    assert_eq!(movement_rows(&app, &format!("retail_sale:{raced_id}")).await, (1, 2));
    let n = app.query_i64("SELECT COUNT(*) FROM audit_log WHERE kind = 'ticket_sold_in_shop'").await;
    assert_eq!(n, 2);
    let ledger = app.app.store().check_ledger().await.unwrap();
    assert!(ledger.is_sound(), "{ledger:?}");
    shutdown_shared(app).await;
}
}
