//! The operator report after a mixed online and paper run: its paid and
//! owed prizes equal the sums recomputed from the stored tickets
//! (docs/contract.md "Retail tickets" and "Operator").

use crate::helpers::*;
use crate::paper::*;
use engine::{Action, Rank};
use serde_json::Value;
use std::collections::HashSet;

/// The operator's money figures of an emission's report.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Money {
    sold: i64,
    finished: i64,
    won: i64,
    lost: i64,
    sales_cents: i64,
    prizes_won_cents: i64,
    prizes_paid_cents: i64,
    prizes_owed_cents: i64,
}

impl Money {
    fn of(v: &Value) -> Money {
        let f = |k: &str| v[k].as_i64().unwrap_or_else(|| panic!("{k} in {v}"));
        Money {
            sold: f("sold"),
            finished: f("finished"),
            won: f("won"),
            lost: f("lost"),
            sales_cents: f("sales_cents"),
            prizes_won_cents: f("prizes_won_cents"),
            prizes_paid_cents: f("prizes_paid_cents"),
            prizes_owed_cents: f("prizes_owed_cents"),
        }
    }

    /// The same figures, recomputed from the stored tickets, games and
    /// movements of emission `e`.
    async fn stored(app: &TestApp, e: u64) -> Money {
        let in_e = format!("JOIN blocks b ON b.id = t.block_id WHERE b.emission_id = {e}");
        let games = format!("FROM ticket_games g JOIN tickets t ON t.id = g.ticket_id {in_e} AND g.phase = 'finished'");
        let ledger = |account: &str| {
            format!(
                "SELECT CAST(COALESCE(SUM(l.amount_cents), 0) AS BIGINT) FROM ledger_entries l
                 JOIN movements m ON m.id = l.movement_id JOIN accounts a ON a.id = l.account_id
                 JOIN tickets t ON t.id = m.ticket_id {in_e} AND a.name = '{account}'"
            )
        };
        let paid = "EXISTS (SELECT 1 FROM movements m WHERE m.ticket_id = t.id AND m.id LIKE 'prize:%')";
        Money {
            sold: app.query_i64(&format!("SELECT COUNT(*) FROM tickets t {in_e} AND t.status NOT IN ('unsold', 'printed')")).await,
            finished: app.query_i64(&format!("SELECT COUNT(*) {games}")).await,
            won: app.query_i64(&format!("SELECT COUNT(*) {games} AND g.prize_cents > 0")).await,
            lost: app.query_i64(&format!("SELECT COUNT(*) {games} AND g.prize_cents = 0")).await,
            sales_cents: app.query_i64(&ledger("house:sales")).await,
            prizes_won_cents: app.query_i64(&format!("SELECT CAST(COALESCE(SUM(g.prize_cents), 0) AS BIGINT) {games}")).await,
            prizes_paid_cents: -app.query_i64(&ledger("house:prizes")).await,
            prizes_owed_cents: app
                .query_i64(&format!(
                    "SELECT CAST(COALESCE(SUM(g.prize_cents), 0) AS BIGINT) {games} AND g.prize_cents > 0 AND NOT {paid}"
                ))
                .await,
        }
    }
}

/// The online part of the mixed run: for each player, won and lost
/// tickets played out, one in play, one never played (and those
/// `find_ticket` bought and left); the money figures it makes.
async fn online_run(app: &TestApp, players: &[String; 2]) -> Money {
    let mut online = Money::default();
    // Online: won and lost tickets played out, one in play, one never played.
    for token in players {
        for want in [&won as &dyn Fn(&Foreseen) -> bool, &lost, &won] {
            let (t, plan) = find_ticket(app, token, 20, want).await;
            let answers = app.play(token, t["id"].as_str().unwrap(), &plan.actions).await;
            let prize = plan.game.result().unwrap().prize_cents as i64;
            assert_eq!(answers.last().unwrap().json["ticket"]["result"]["prize_cents"], prize);
            online.sold += 1;
            online.finished += 1;
            online.sales_cents += 300;
            online.prizes_won_cents += prize;
            // Online: credited to the wallet when the game finished.
            online.prizes_paid_cents += prize;
            if prize > 0 { online.won += 1 } else { online.lost += 1 }
        }
        let t = app.buy(token).await;
        let r = app
            .post(
                &format!("/api/tickets/{}/actions", t["id"].as_str().unwrap()),
                Some(token),
                action_body(0, Action::play(Rank::Seven)),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.json);
        app.buy(token).await;
        online.sold += 2;
        online.sales_cents += 600;
    }
    // find_ticket buys until a ticket fits: the others are sold, never played.
    let mut bought = 0;
    for token in players {
        bought += app.get("/api/tickets", Some(token)).await.json["tickets"].as_array().unwrap().len() as i64;
    }
    assert!(bought >= online.sold);
    online.sold = bought;
    online.sales_cents = 300 * bought;
    online
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_report_paid_and_owed_prizes_equal_the_stored_tickets_after_a_mixed_online_and_paper_run() {
    let Some(app) = spawn_app_with(|c| c.start_balance_cents = 300 * 100).await else { return };
    let players = [app.register().await, app.register().await];
    let online = online_run(&app, &players).await;

    // Paper, two blocks: won and paid by the shop, won and not yet paid (owed),
    // lost, in play, sold and not played, never sold.
    let emission = emit_paper(&app, 2).await;
    let mut printed = app.print_file(emission, 1).await;
    printed.extend(app.print_file(emission, 2).await);
    let mut taken = HashSet::new();
    let mut paper = Money::default();
    // Each shop's account: what the test expects on it, and one ticket it sold.
    let mut shop_a = (0i64, String::new());
    let mut shop_b = (0i64, String::new());
    for (want, shop, pay, owner) in [
        (&won as &dyn Fn(&Foreseen) -> bool, SHOP_A, true, None),
        (&won, SHOP_B, true, Some(&players[0])),
        (&won, SHOP_A, false, None),
        (&won, SHOP_B, false, Some(&players[1])),
        (&lost, SHOP_A, false, None),
        (&lost, SHOP_B, false, Some(&players[0])),
    ] {
        let (p, plan) = pick(&printed, &mut taken, want);
        let token = if shop == SHOP_A { SHOP_A_TOKEN } else { SHOP_B_TOKEN };
        sell(&app, token, shop, &p.serial).await;
        let (_, ticket_token) = redeem_ok(&app, &p.code, owner.map(String::as_str)).await;
        // An owner plays with their own token: their balance does not move.
        let by = owner.map_or(ticket_token.as_str(), String::as_str);
        let before = match owner {
            Some(o) => Some(app.balance(o).await),
            None => None,
        };
        play_plan(&app, by, &p.serial, &plan).await;
        if let (Some(o), Some(b)) = (owner, before) {
            assert_eq!(app.balance(o).await, b, "a paper prize is never credited to a wallet");
        }
        let prize = plan.game.result().unwrap().prize_cents as i64;
        paper.sold += 1;
        paper.finished += 1;
        paper.sales_cents += 300;
        paper.prizes_won_cents += prize;
        if prize > 0 {
            paper.won += 1
        } else {
            paper.lost += 1
        }
        let account = if shop == SHOP_A { &mut shop_a } else { &mut shop_b };
        account.0 -= 300;
        account.1 = p.serial.clone();
        if pay {
            let r = app.retail("pay", Some(token), &p.serial).await;
            assert_eq!(r.status, 200, "{}", r.json);
            paper.prizes_paid_cents += prize;
            account.0 += prize;
        } else if prize > 0 {
            paper.prizes_owed_cents += prize;
        }
    }
    let in_play = take(&printed, &mut taken);
    sell(&app, SHOP_A_TOKEN, SHOP_A, &in_play.serial).await;
    let (_, token) = redeem_ok(&app, &in_play.code, None).await;
    let r = app
        .post(
            &format!("/api/tickets/{}/actions", in_play.serial),
            Some(&token),
            action_body(0, Action::play(Rank::King)),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let never_played = take(&printed, &mut taken);
    sell(&app, SHOP_B_TOKEN, SHOP_B, &never_played.serial).await;
    paper.sold += 2;
    paper.sales_cents += 600;
    shop_a.0 -= 300;
    shop_b.0 -= 300;
    assert!(paper.prizes_paid_cents > 0 && paper.prizes_owed_cents > 0 && paper.lost > 0, "{paper:?}");

    // The reports, the stored tickets and the test's own count agree.
    for (e, expected) in [(1, &online), (emission, &paper)] {
        let stored = Money::stored(&app, e).await;
        let r = app.admin_get(&format!("/api/admin/emissions/{e}")).await;
        assert_eq!(r.status, 200, "{}", r.json);
        let report = Money::of(&r.json["totals"]);
        assert_eq!(&stored, expected, "emission {e}: the stored tickets and the test's count");
        assert_eq!(report, stored, "emission {e}: the report and the stored tickets: {}", r.json);
        // The blocks add up to the totals.
        let mut sum = Money::default();
        for b in r.json["blocks"].as_array().unwrap() {
            let m = Money::of(b);
            sum.sold += m.sold;
            sum.finished += m.finished;
            sum.won += m.won;
            sum.lost += m.lost;
            sum.sales_cents += m.sales_cents;
            sum.prizes_won_cents += m.prizes_won_cents;
            sum.prizes_paid_cents += m.prizes_paid_cents;
            sum.prizes_owed_cents += m.prizes_owed_cents;
        }
        assert_eq!(sum, report, "emission {e}: blocks and totals");
        let list = app.admin_get("/api/admin/emissions").await;
        let listed = list.json["emissions"].as_array().unwrap().iter().find(|x| x["emission"] == e).cloned();
        assert_eq!(listed, Some(r.json.clone()));
    }
    assert_eq!(online.prizes_owed_cents, 0, "online prizes are paid when the game finishes");
    // The money agrees: the players' wallets moved by online sales and prizes
    // only; each shop's account by its sales and the prizes it paid.
    let mut balances = 0;
    for token in &players {
        balances += app.balance(token).await;
    }
    assert_eq!(balances, 2 * 300 * 100 - online.sales_cents + online.prizes_paid_cents);
    for (expected, serial) in [shop_a, shop_b] {
        let (account, _) = other_entry(&app, &format!("retail_sale:{}", ticket_id(&app, &serial).await)).await;
        let sql = format!(
            "SELECT CAST(COALESCE(SUM(amount_cents), 0) AS BIGINT) FROM ledger_entries WHERE account_id = {account}"
        );
        assert_eq!(app.query_i64(&sql).await, expected, "the account of the shop that sold {serial}");
    }
    let ledger = app.app.store().check_ledger().await.unwrap();
    assert!(ledger.is_sound(), "{ledger:?}");
    let audit = app.sealed_audit_check().await;
    assert_eq!((audit.unsealed, audit.first_broken), (0, None), "{audit:?}");
    app.shutdown().await;
}
}
