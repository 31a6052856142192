//! The desk's charts (`GET /api/admin/emissions/{id}/sales`,
//! `.../prizes` and `GET /api/admin/shops`, docs/operating.md "The desk
//! page"): after a run of online and paper tickets sold in two shops,
//! played, paid and left unpaid, each chart's figures equal what the test
//! did; the prize chart's mean and variance are the `math` crate's exact
//! ones for the emission's table; an owed prize past its claim deadline is
//! owed no more; only the operator reads them.

use crate::helpers::*;
use crate::paper::*;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};

/// The block number of a serial (`PAP-002-00001-000007-42`: emission, block, position).
fn block_of(serial: &str) -> u64 {
    serial.split('-').nth(2).unwrap_or_else(|| panic!("a block in {serial}")).parse().unwrap()
}

/// What the test expects of a shop.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Shop {
    sold: i64,
    redeemed: i64,
    paid: i64,
    paid_cents: i64,
    owed: i64,
    owed_cents: i64,
}

fn shop_of(v: &Value) -> Shop {
    let f = |k: &str| v[k].as_i64().unwrap_or_else(|| panic!("{k} in {v}"));
    Shop {
        sold: f("sold"),
        redeemed: f("redeemed"),
        paid: f("paid"),
        paid_cents: f("paid_cents"),
        owed: f("owed"),
        owed_cents: f("owed_cents"),
    }
}

/// Checks a chart of sales against the sales per block the test made.
fn check_sales(chart: &Value, emission: u64, channel: &str, blocks: u64, want: &BTreeMap<u64, i64>) {
    assert_eq!(chart["emission"], emission, "{chart}");
    assert_eq!(chart["channel"], channel, "{chart}");
    assert_eq!(chart["price_cents"], 300, "{chart}");
    let buckets = chart["buckets"].as_u64().unwrap() as usize;
    let (from, width) = (chart["from_ms"].as_i64().unwrap(), chart["bucket_ms"].as_i64().unwrap());
    let (first, last) = (chart["first_sale_ms"].as_i64().unwrap(), chart["last_sale_ms"].as_i64().unwrap());
    assert!(from <= first && first <= last && last < from + width * buckets as i64, "{chart}");
    assert!(width >= 1000 && (1..=51).contains(&buckets), "{chart}");
    let listed = chart["blocks"].as_array().unwrap();
    assert_eq!(listed.len() as u64, blocks, "every block, sold or not: {chart}");
    for (i, b) in listed.iter().enumerate() {
        let number = b["block"].as_u64().unwrap();
        assert_eq!(number, i as u64 + 1, "{chart}");
        let sold: Vec<i64> = b["sold"].as_array().unwrap().iter().map(|c| c.as_i64().unwrap()).collect();
        assert_eq!(sold.len(), buckets, "{chart}");
        let expected = want.get(&number).copied().unwrap_or(0);
        assert_eq!(b["total"], expected, "block {number}: {chart}");
        assert_eq!(sold.iter().sum::<i64>(), expected, "block {number}'s buckets: {chart}");
    }
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_charts_count_the_sales_prizes_and_shops_the_test_made() {
    let Some(app) = spawn_app_with(|c| {
        c.start_balance_cents = 300 * 100;
        c.retail_pay_any_shop = true;
    })
    .await
    else {
        return;
    };
    // Online: a player plays out won and lost tickets; some bought tickets
    // are never played (find_ticket's others, and one more).
    let player = app.register().await;
    let mut online_prizes = Vec::new();
    for want in [&won as &dyn Fn(&Foreseen) -> bool, &lost, &won, &lost] {
        let (t, plan) = find_ticket(&app, &player, 20, want).await;
        app.play(&player, t["id"].as_str().unwrap(), &plan.actions).await;
        online_prizes.push(plan.game.result().unwrap().prize_cents as i64);
    }
    app.buy(&player).await;
    let mut online_sold = BTreeMap::new();
    for t in app.get("/api/tickets", Some(&player)).await.json["tickets"].as_array().unwrap() {
        *online_sold.entry(block_of(t["serial"].as_str().unwrap())).or_insert(0) += 1;
    }

    // Paper, two blocks, two shops: each shop sells tickets of both blocks;
    // some are redeemed and played, won prizes paid by the seller or by the
    // other shop (retail_pay_any_shop), or left owed; one sold, not redeemed.
    let emission = emit_paper(&app, 2).await;
    let mut printed = app.print_file(emission, 1).await;
    printed.extend(app.print_file(emission, 2).await);
    let mut taken = HashSet::new();
    let mut shops: BTreeMap<&str, Shop> = BTreeMap::new();
    let mut paper_sold = BTreeMap::new();
    let mut paper_prizes = Vec::new();
    // (outcome, seller, payer)
    type Run<'a> = (&'a dyn Fn(&Foreseen) -> bool, &'a str, Option<&'a str>);
    let runs: [Run; 6] = [
        (&won, SHOP_A, Some(SHOP_A)),
        (&won, SHOP_A, Some(SHOP_B)),
        (&won, SHOP_A, None),
        (&lost, SHOP_A, None),
        (&won, SHOP_B, None),
        (&won, SHOP_B, Some(SHOP_B)),
    ];
    let token_of = |shop: &str| if shop == SHOP_A { SHOP_A_TOKEN } else { SHOP_B_TOKEN };
    for (i, (want, seller, payer)) in runs.into_iter().enumerate() {
        // Alternate the blocks: tickets of both are sold.
        let block = i as u64 % 2 + 1;
        let pool: Vec<Printed> = printed.iter().filter(|p| block_of(&p.serial) == block).cloned().collect();
        let (p, plan) = pick(&pool, &mut taken, want);
        sell(&app, token_of(seller), seller, &p.serial).await;
        *paper_sold.entry(block).or_insert(0) += 1;
        let (_, ticket_token) = redeem_ok(&app, &p.code, None).await;
        play_plan(&app, &ticket_token, &p.serial, &plan).await;
        let prize = plan.game.result().unwrap().prize_cents as i64;
        paper_prizes.push(prize);
        let s = shops.entry(seller).or_default();
        s.sold += 1;
        s.redeemed += 1;
        match payer {
            Some(payer) => {
                let r = app.retail("pay", Some(token_of(payer)), &p.serial).await;
                assert_eq!(r.status, 200, "{}", r.json);
                let s = shops.entry(payer).or_default();
                s.paid += 1;
                s.paid_cents += prize;
            }
            None if prize > 0 => {
                s.owed += 1;
                s.owed_cents += prize;
            }
            None => {}
        }
    }
    let unplayed = take(&printed, &mut taken);
    sell(&app, SHOP_B_TOKEN, SHOP_B, &unplayed.serial).await;
    *paper_sold.entry(block_of(&unplayed.serial)).or_insert(0) += 1;
    shops.entry(SHOP_B).or_default().sold += 1;
    assert!(shops[SHOP_A].owed > 0 && shops[SHOP_B].owed > 0 && shops[SHOP_B].paid == 2, "{shops:?}");

    // Sales over time: per block, as sold; the channel said.
    let online = app.admin_get("/api/admin/emissions/1/sales").await;
    assert_eq!(online.status, 200, "{}", online.json);
    check_sales(&online.json, 1, "online", 2, &online_sold);
    let paper = app.admin_get(&format!("/api/admin/emissions/{emission}/sales")).await;
    assert_eq!(paper.status, 200, "{}", paper.json);
    check_sales(&paper.json, emission, "paper", 2, &paper_sold);
    assert!(paper_sold.len() == 2, "both paper blocks sold: {paper_sold:?}");

    // Prizes against the exact expectation: the finished games in order of
    // finishing, each a point (fewer than 200), their running sums; the
    // table's exact mean and variance of one ticket's prize.
    for (e, toml, prizes) in [(1, testkit::TABLE.to_string(), &online_prizes), (emission, paper_table(), &paper_prizes)]
    {
        let r = app.admin_get(&format!("/api/admin/emissions/{e}/prizes")).await;
        assert_eq!(r.status, 200, "{}", r.json);
        let c = &r.json;
        assert_eq!(c["emission"], e);
        assert_eq!(c["finished"], prizes.len() as i64, "{c}");
        assert_eq!(c["prizes_won_cents"], prizes.iter().sum::<i64>(), "{c}");
        let mut running = 0;
        let want: Vec<Value> = prizes
            .iter()
            .enumerate()
            .map(|(i, p)| {
                running += p;
                serde_json::json!({"finished": i + 1, "prizes_won_cents": running})
            })
            .collect();
        assert_eq!(c["points"], Value::Array(want), "the running sums in order of finishing: {c}");
        let table = math::PrizeTable::parse_toml(&toml).unwrap();
        let exact = math::Payout::compute(&table, &math::Odds::exact());
        assert_eq!(c["mean_cents"], math::fraction::to_string(&exact.expected_payout_cents));
        assert_eq!(c["variance_cents2"], math::fraction::to_string(&exact.variance_cents2));
        assert_eq!(c["z"], 3.0);
        let mean = c["mean_cents_approx"].as_f64().unwrap();
        assert!((mean - math::fraction::approx(&exact.expected_payout_cents)).abs() < 1e-9 * mean, "{c}");
        let variance = c["variance_cents2_approx"].as_f64().unwrap();
        assert!((variance - exact.std_dev_cents().powi(2)).abs() < 1e-9 * variance, "{c}");
    }
    // An emission with no finished game: no point, and the exact figures.
    let none = app.admin_get(&format!("/api/admin/emissions/{}/prizes", emit_paper(&app, 1).await)).await;
    assert_eq!(none.status, 200, "{}", none.json);
    assert_eq!((&none.json["finished"], &none.json["points"]), (&serde_json::json!(0), &serde_json::json!([])));

    // The paper channel per shop: as sold, redeemed, paid and owed.
    let listed = app.admin_get("/api/admin/shops").await;
    assert_eq!(listed.status, 200, "{}", listed.json);
    let got: BTreeMap<String, Shop> = listed.json["shops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["shop"].as_str().unwrap().to_string(), shop_of(s)))
        .collect();
    let want: BTreeMap<String, Shop> = shops.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    assert_eq!(got, want, "{}", listed.json);
    assert!(listed.json["at_ms"].as_i64().unwrap() > 0);

    // Past the claim deadline a prize is owed no more; the rest stays.
    let changed = app.exec_sql(&format!("UPDATE emissions SET claim_end_ms = 1 WHERE id = {emission}")).await;
    assert_eq!(changed, Ok(1));
    let late = app.admin_get("/api/admin/shops").await;
    for s in late.json["shops"].as_array().unwrap() {
        let mut expected = want[s["shop"].as_str().unwrap()].clone();
        (expected.owed, expected.owed_cents) = (0, 0);
        assert_eq!(shop_of(s), expected, "{}", late.json);
    }

    // The panel reads the figures kept per shop and emission (migration
    // 12); the ledger check recounts them from the tickets and catches one
    // changed behind the server's back.
    let store = app.app.store();
    let check = store.check_ledger().await.unwrap();
    assert!(check.is_sound() && check.shop_figure_mismatches == 0, "{check:?}");
    let one = format!("shop = '{SHOP_B}' AND emission_id = {emission}");
    assert!(
        app.exec_sql(&format!("UPDATE shop_figures SET paid_cents = paid_cents + 1 WHERE {one}")).await.unwrap() > 0
    );
    let check = store.check_ledger().await.unwrap();
    assert_eq!((check.shop_figure_mismatches, check.is_sound()), (1, false), "{check:?}");
    app.exec_sql(&format!("UPDATE shop_figures SET paid_cents = paid_cents - 1 WHERE {one}")).await.unwrap();
    assert!(store.check_ledger().await.unwrap().is_sound());
    if app.backend == Backend::Postgres {
        // A row of a connection that ended is folded into shard 0, its sums kept.
        let shops = app.admin_get("/api/admin/shops").await.json["shops"].clone();
        app.exec_sql(&format!(
            "INSERT INTO shop_figures (shop, emission_id, shard, sold, paid_cents)
             VALUES ('{SHOP_B}', {emission}, 2147483001, 2, 700), ('{SHOP_B}', {emission}, 2147483002, -2, -700)"
        ))
        .await
        .unwrap();
        assert_eq!(store.fold_block_figures().await.unwrap(), 2);
        assert_eq!(app.query_i64("SELECT COUNT(*) FROM shop_figures WHERE shard > 2147483000").await, 0);
        assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM shop_figures WHERE shard = 0 AND {one}")).await, 1);
        assert_eq!(app.admin_get("/api/admin/shops").await.json["shops"], shops, "the same figures after the fold");
        assert!(store.check_ledger().await.unwrap().is_sound());
    }

    // More than 200 finished games: at most 200 points, each an exact
    // running sum in order of finishing, the last one all of them. An
    // online emission of 3 blocks of 100, every ticket marked sold and
    // finished here (prize (id mod 3) × 100 cents, finished at 1000 + id ms).
    let big = app
        .admin_post(
            "/api/admin/emissions",
            serde_json::json!({"table": testkit::TABLE, "blocks": 3, "channel": "online"}),
        )
        .await;
    assert_eq!(big.status, 201, "{}", big.json);
    let big = big.json["emission"].as_u64().unwrap();
    let of_big = format!("block_id IN (SELECT id FROM blocks WHERE emission_id = {big})");
    assert_eq!(
        app.exec_sql(&format!("UPDATE tickets SET status = 'sold', sold_ms = id WHERE {of_big}")).await,
        Ok(300)
    );
    let games = format!(
        "INSERT INTO ticket_games (ticket_id, seq, phase, state_json, prize_cents, finished_ms)
         SELECT id, 1, 'finished', '{{}}', (id % 3) * 100, 1000 + id FROM tickets WHERE {of_big}"
    );
    assert_eq!(app.exec_sql(&games).await, Ok(300));
    let ids: Vec<i64> = app
        .dump(&format!("SELECT id FROM tickets WHERE {of_big} ORDER BY id"))
        .await
        .iter()
        .map(|l| l.trim_start_matches("id=").trim_end_matches('|').parse().unwrap())
        .collect();
    let mut prefix = vec![0i64];
    for id in &ids {
        prefix.push(prefix.last().unwrap() + (id % 3) * 100);
    }
    let r = app.admin_get(&format!("/api/admin/emissions/{big}/prizes")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (&r.json["finished"], &r.json["prizes_won_cents"]),
        (&serde_json::json!(300), &serde_json::json!(prefix[300]))
    );
    let points = r.json["points"].as_array().unwrap();
    assert!(points.len() > 1 && points.len() <= 200, "{} points", points.len());
    let mut before = 0;
    for p in points {
        let n = p["finished"].as_u64().unwrap() as usize;
        assert!(n > before, "in order of finishing: {}", r.json);
        assert_eq!(p["prizes_won_cents"], prefix[n], "the running sum of the first {n}");
        before = n;
    }
    assert_eq!(before, 300);
    let sales = app.admin_get(&format!("/api/admin/emissions/{big}/sales")).await;
    let totals: Vec<i64> =
        sales.json["blocks"].as_array().unwrap().iter().map(|b| b["total"].as_i64().unwrap()).collect();
    assert_eq!(totals, vec![100, 100, 100], "{}", sales.json);
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_operator_reads_the_desk_charts_and_an_unknown_emission_is_not_found() {
    let Some(app) = spawn_app().await else { return };
    let player = app.register().await;
    for path in ["/api/admin/emissions/1/sales", "/api/admin/emissions/1/prizes", "/api/admin/shops"] {
        assert_error(&app.get(path, None).await, 401, "unauthorized");
        assert_error(&app.get(path, Some("not-a-token")).await, 401, "unauthorized");
        assert_error(&app.get(path, Some(SHOP_A_TOKEN)).await, 401, "unauthorized");
        assert_error(&app.get(path, Some(&player)).await, 403, "forbidden");
        let ok = app.get(path, Some(OPERATOR)).await;
        assert_eq!(ok.status, 200, "{path}: {}", ok.json);
    }
    for chart in ["sales", "prizes"] {
        for id in ["99", "0", "x"] {
            let r = app.admin_get(&format!("/api/admin/emissions/{id}/{chart}")).await;
            assert_error(&r, 404, "not_found");
        }
    }
    // Before any sale: every block listed, no bucket.
    let fresh = app.admin_get("/api/admin/emissions/1/sales").await;
    assert_eq!(fresh.json["buckets"], 0, "{}", fresh.json);
    assert_eq!(fresh.json["first_sale_ms"], Value::Null);
    assert_eq!(fresh.json["blocks"].as_array().unwrap().len(), 2, "{}", fresh.json);
    app.shutdown().await;
}
}
