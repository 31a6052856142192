//! The operator's report (docs/contract.md "Operator"): its figures equal
//! the sums recomputed from the stored tickets; and a purchase right after
//! a full-size emission reads one ticket on PostgreSQL.

use crate::emissions::*;
use crate::helpers::*;
use crate::money::play_out;
use engine::{Action, Rank};
use serde_json::{Value, json};
use server::Figures;
use std::collections::BTreeMap;

/// The operator's figures of one block or of the totals, as the report shows them.
fn figures_of(v: &Value) -> Figures {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("figures in {v}: {e}"))
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// Sells the two blocks of the report test: in block 1, wins and losses
/// played to the end, tickets never played, one half played, and the rest
/// of the block to the second player, one in five played out; in block 2, a
/// win, a loss and one in play.
async fn sell_two_blocks(app: &TestApp, players: &[String; 2]) {
    let won = |p: &Foreseen| p.game.result().unwrap().prize_cents > 0;
    let lost = |p: &Foreseen| p.game.result().unwrap().prize_cents == 0;
    // Block 1: wins and losses played to the end, tickets never played, one half played.
    for token in players {
        for want in [&won as &dyn Fn(&Foreseen) -> bool, &lost as &dyn Fn(&Foreseen) -> bool, &won] {
            let (t, plan) = find_ticket(app, token, 20, want).await;
            play_plan(app, token, &t, &plan).await;
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
    }
    // The rest of block 1 to the second player, one in five played out.
    let count = |list: &Value| list["tickets"].as_array().unwrap().len();
    let mut sold = 0;
    for token in players {
        sold += count(&app.get("/api/tickets", Some(token)).await.json);
    }
    assert!(sold < 100, "{sold}");
    for i in sold..100 {
        let t = app.buy(&players[1]).await;
        assert!(t["serial"].as_str().unwrap().starts_with("TST-001-00001-"));
        if i % 5 == 0 {
            play_out(app, &players[1], &t).await;
        }
    }
    // Block 2: a win, a loss, one in play.
    let (t, plan) = find_ticket(app, &players[0], 20, won).await;
    assert!(t["serial"].as_str().unwrap().starts_with("TST-001-00002-"));
    play_plan(app, &players[0], &t, &plan).await;
    let (t, plan) = find_ticket(app, &players[1], 20, lost).await;
    play_plan(app, &players[1], &t, &plan).await;
    app.buy(&players[0]).await;
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_report_figures_equal_sums_recomputed_from_the_stored_tickets() {
    let Some(app) = spawn_app_with(|c| c.start_balance_cents = 300 * 150).await else { return };
    let players = [app.register().await, app.register().await];
    sell_two_blocks(&app, &players).await;

    // What the players' own tickets say, per block.
    let mut expected: BTreeMap<u32, Figures> = BTreeMap::new();
    for b in [1, 2] {
        expected.insert(b, Figures { printed: 100, ..Figures::default() });
    }
    for token in &players {
        for t in app.get("/api/tickets", Some(token)).await.json["tickets"].as_array().unwrap() {
            let serial = emission::Serial::parse(t["serial"].as_str().unwrap()).unwrap();
            assert_eq!(serial.emission(), 1);
            let f = expected.get_mut(&serial.block()).unwrap();
            f.sold += 1;
            f.sales_cents += t["price_cents"].as_i64().unwrap();
            if t["phase"] == "finished" {
                let prize = t["result"]["prize_cents"].as_i64().unwrap();
                f.finished += 1;
                f.prizes_won_cents += prize;
                // Online: the prize was credited to the wallet when the game finished.
                f.prizes_paid_cents += prize;
                if prize > 0 {
                    f.won += 1;
                    assert_eq!(t["status"], "won");
                } else {
                    f.lost += 1;
                    assert_eq!(t["status"], "lost");
                }
            } else {
                f.in_play += 1;
                assert_eq!(t["status"], "in_play");
            }
        }
    }
    for f in expected.values() {
        assert!(f.won > 0 && f.lost > 0 && f.in_play > 0, "the test covers every kind of ticket: {f:?}");
    }
    let mut totals = Figures::default();
    expected.values().for_each(|f| totals.add(f));

    // What the database holds, counted directly.
    for (&b, f) in &expected {
        let in_block = format!("JOIN blocks b ON b.id = t.block_id WHERE b.emission_id = 1 AND b.number = {b}");
        let games = format!("FROM ticket_games g JOIN tickets t ON t.id = g.ticket_id {in_block}");
        let ledger = |reason: &str, kind: &str| {
            format!(
                "SELECT CAST(COALESCE(SUM(l.amount_cents), 0) AS BIGINT) FROM ledger_entries l
                 JOIN movements m ON m.id = l.movement_id JOIN accounts a ON a.id = l.account_id
                 JOIN tickets t ON t.id = m.ticket_id {in_block} AND m.reason = '{reason}' AND a.kind = '{kind}'"
            )
        };
        let db = Figures {
            printed: app.query_i64(&format!("SELECT COUNT(*) FROM tickets t {in_block}")).await,
            sold: app.query_i64(&format!("SELECT COUNT(*) FROM tickets t {in_block} AND t.status = 'sold'")).await,
            in_play: app.query_i64(&format!("SELECT COUNT(*) {games} AND g.phase <> 'finished'")).await,
            finished: app.query_i64(&format!("SELECT COUNT(*) {games} AND g.phase = 'finished'")).await,
            won: app
                .query_i64(&format!("SELECT COUNT(*) {games} AND g.phase = 'finished' AND g.prize_cents > 0"))
                .await,
            lost: app
                .query_i64(&format!("SELECT COUNT(*) {games} AND g.phase = 'finished' AND g.prize_cents = 0"))
                .await,
            sales_cents: app.query_i64(&ledger("ticket_sale", "house")).await,
            prizes_won_cents: app
                .query_i64(&format!(
                    "SELECT CAST(COALESCE(SUM(g.prize_cents), 0) AS BIGINT) {games} AND g.phase = 'finished'"
                ))
                .await,
            prizes_paid_cents: app.query_i64(&ledger("prize", "player")).await,
            prizes_owed_cents: 0,
        };
        assert_eq!(&db, f, "block {b}: the database and the players' tickets agree");
    }

    // The operator's report.
    let r = app.admin_get("/api/admin/emissions/1").await;
    assert_eq!(r.status, 200, "{}", r.json);
    let report = &r.json;
    assert_eq!(report["emission"], 1);
    assert_eq!(report["channel"], "online");
    assert_eq!(report["price_cents"], 300);
    assert_eq!(report["block_size"], 100);
    assert_eq!(figures_of(&report["totals"]), totals, "{report}");
    let blocks = report["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    let published = published_blocks(&app.get("/api/emissions", None).await.json, 1);
    for b in blocks {
        let n = b["block"].as_u64().unwrap();
        assert_eq!(figures_of(b), expected[&(n as u32)], "block {n}: {b}");
        assert_eq!(b["root"], published[&n]["root"]);
        assert_eq!(b["published_ms"], published[&n]["published_ms"]);
    }
    // The return to player so far: prizes won / (300 x finished), exact and reduced.
    let (p, q) = (totals.prizes_won_cents, 300 * totals.finished);
    let g = gcd(p, q);
    assert_eq!(report["rtp"]["so_far"], format!("{}/{}", p / g, q / g), "{report}");
    let decimal: f64 = report["rtp"]["so_far_decimal"].as_str().unwrap().parse().unwrap();
    assert!((decimal - p as f64 / q as f64).abs() < 1e-6, "{report}");
    // ...beside the table's exact expectation (math crate).
    let table = math::PrizeTable::parse_toml(TABLE).unwrap();
    let rtp = math::Payout::compute(&table, &math::Odds::exact()).rtp;
    assert_eq!(report["rtp"]["expected"], math::fraction::to_string(&rtp));
    // The list shows the same report.
    let list = app.admin_get("/api/admin/emissions").await;
    assert_eq!(&list.json["emissions"][0], report);
    // The money agrees: play money - sales + prizes.
    let mut balances = 0;
    for token in &players {
        balances += app.balance(token).await;
    }
    assert_eq!(balances, 2 * 300 * 150 - totals.sales_cents + totals.prizes_paid_cents);
    app.shutdown().await;
}
}

/// The sums of `block_figures` per block (block id, sold, in play, won,
/// lost, prizes won, prizes paid), read beside the server.
async fn kept_sums(app: &TestApp) -> Vec<String> {
    app.dump(
        "SELECT block_id, CAST(SUM(sold) AS BIGINT), CAST(SUM(in_play) AS BIGINT), CAST(SUM(won) AS BIGINT),
                CAST(SUM(lost) AS BIGINT), CAST(SUM(prizes_won_cents) AS BIGINT), CAST(SUM(prizes_paid_cents) AS BIGINT)
         FROM block_figures GROUP BY block_id ORDER BY block_id",
    )
    .await
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kept_block_figures_are_checked_against_the_tickets_and_postgres_folds_ended_connections() {
    // Migration 11: the report reads each block's figures as the triggers
    // keep them; check_ledger recounts them from the tickets.
    let Some(app) = spawn_app_with(|c| c.start_balance_cents = 300 * 150).await else { return };
    let players = [app.register().await, app.register().await];
    sell_two_blocks(&app, &players).await;
    let store = app.app.store();
    let check = store.check_ledger().await.unwrap();
    assert!(check.is_sound() && check.block_figure_mismatches == 0, "{check:?}");
    let kept = kept_sums(&app).await;
    assert_eq!(kept.len(), 2, "two blocks sold: {kept:?}");

    // A wrong figure is caught, block by block; put right, the check passes again.
    let first = "(SELECT MIN(block_id) FROM block_figures)";
    app.exec_sql(&format!("UPDATE block_figures SET won = won + 1 WHERE block_id = {first}")).await.unwrap();
    let check = store.check_ledger().await.unwrap();
    assert_eq!(check.block_figure_mismatches, 1, "{check:?}");
    assert!(!check.is_sound());
    app.exec_sql(&format!("UPDATE block_figures SET won = won - 1 WHERE block_id = {first}")).await.unwrap();
    app.exec_sql("UPDATE block_figures SET prizes_paid_cents = prizes_paid_cents - 1").await.unwrap();
    assert_eq!(store.check_ledger().await.unwrap().block_figure_mismatches, 2);
    app.exec_sql("UPDATE block_figures SET prizes_paid_cents = prizes_paid_cents + 1").await.unwrap();
    assert!(store.check_ledger().await.unwrap().is_sound());
    assert_eq!(kept_sums(&app).await, kept);

    if app.backend == Backend::Sqlite {
        // One writer, one row per block: nothing to fold.
        assert_eq!(app.query_i64("SELECT COUNT(*) FROM block_figures WHERE shard <> 0").await, 0);
        assert_eq!(store.fold_block_figures().await.unwrap(), 0);
        app.shutdown().await;
        return;
    }
    // PostgreSQL: each server connection wrote its own rows (shard = its
    // backend's pid). Rows of connections that ended (here two pids no
    // backend can have) are folded into shard 0, their sums kept; the rows
    // of a live connection are not.
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM block_figures WHERE shard = 0").await, 0, "{kept:?}");
    let live_rows = app.query_i64("SELECT COUNT(*) FROM block_figures").await;
    app.exec_sql(&format!(
        "INSERT INTO block_figures (block_id, shard, sold, won, prizes_paid_cents)
         SELECT {first}, 2147483001, 3, 1, 500 UNION ALL SELECT {first}, 2147483002, -3, -1, -500"
    ))
    .await
    .unwrap();
    use sqlx::Connection;
    let mut live = sqlx::PgConnection::connect(&app.db_url).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("SELECT block_figures_add({first}, 0, 0, 0, 0, 0, 0)")))
        .execute(&mut live)
        .await
        .unwrap();
    let live_pid: i64 =
        sqlx::query_scalar("SELECT CAST(pg_backend_pid() AS BIGINT)").fetch_one(&mut live).await.unwrap();
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM block_figures").await, live_rows + 3);
    // The server's own connections are alive: only the two ended rows go.
    assert_eq!(store.fold_block_figures().await.unwrap(), 2);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM block_figures WHERE shard IN (2147483001, 2147483002)").await, 0);
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM block_figures WHERE shard = {live_pid}")).await, 1);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM block_figures WHERE shard = 0").await, 1, "one block folded");
    assert_eq!(kept_sums(&app).await, kept, "the sums kept");
    assert!(store.check_ledger().await.unwrap().is_sound());
    // That connection ends: its row is folded at the next fold.
    live.close().await.unwrap();
    let mut folded = 0;
    for _ in 0..50 {
        folded += store.fold_block_figures().await.unwrap();
        if folded > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(folded, 1, "the ended connection's row");
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM block_figures WHERE shard = {live_pid}")).await, 0);
    assert_eq!(kept_sums(&app).await, kept);
    // More play after a fold adds to the connections' rows again.
    let t = app.buy(&players[0]).await;
    play_out(&app, &players[0], &t).await;
    assert_ne!(kept_sums(&app).await, kept);
    assert!(store.check_ledger().await.unwrap().is_sound());
    app.shutdown().await;
}
}

/// Every node of a PostgreSQL plan (`EXPLAIN (FORMAT JSON)`'s "Plan"),
/// with the node types above it.
fn plan_nodes<'a>(node: &'a Value, above: &mut Vec<String>, out: &mut Vec<(&'a Value, Vec<String>)>) {
    out.push((node, above.clone()));
    above.push(node["Node Type"].as_str().unwrap_or("?").to_string());
    for child in node["Plans"].as_array().into_iter().flatten() {
        plan_nodes(child, above, out);
    }
    above.pop();
}

/// `EXPLAIN (options) sql` on PostgreSQL, in a transaction rolled back (an
/// `ANALYZE` runs the statement: its locks go with the rollback); the plan's
/// JSON.
async fn pg_explain(app: &TestApp, options: &str, sql: &str) -> Value {
    use sqlx::{Connection, Row};
    let mut conn = sqlx::PgConnection::connect(&app.db_url).await.unwrap();
    let mut tx = conn.begin().await.unwrap();
    let explain = format!("EXPLAIN ({options}, FORMAT JSON) {sql}");
    let row = sqlx::query(sqlx::AssertSqlSafe(explain)).fetch_one(&mut *tx).await.unwrap();
    // The column is of type json, whose wire format is its text.
    let text: String = row.try_get_unchecked(0).unwrap();
    tx.rollback().await.unwrap();
    conn.close().await.unwrap();
    serde_json::from_str::<Value>(&text).unwrap()[0].clone()
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purchase_right_after_a_full_size_emission_reads_one_ticket_on_a_database_without_statistics() {
    // A new deployment: the planner has no statistics of the tickets table
    // (nobody ran ANALYZE; autovacuum, off here for the table, would do it
    // only later, or never where it is off).
    let Some(app) = spawn_app_with(|c| {
        c.initial_blocks = 1;
        c.start_balance_cents = 300 * 110;
    })
    .await
    else {
        return;
    };
    if app.backend == Backend::Postgres {
        app.exec_sql("ALTER TABLE tickets SET (autovacuum_enabled = false)").await.unwrap();
    }
    // The start-up block of 100 sold out, then a regulation block of
    // 300 000 tickets (art. 2) emitted: the next purchases are its first.
    let token = app.register().await;
    for _ in 0..100 {
        assert!(app.buy(&token).await["serial"].as_str().unwrap().starts_with("TST-001-00001-"));
    }
    let regulation = math::PrizeTable::example();
    assert!(regulation.is_regulation() && regulation.block_size == 300_000);
    let r = app
        .admin_post("/api/admin/emissions", json!({"table": regulation.to_toml(), "blocks": 1, "channel": "online"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["emission"], 2);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM tickets WHERE status = 'unsold'").await, 300_000);

    match app.backend {
        Backend::Postgres => {
            // No statistics: none gathered, and the table never vacuumed nor analyzed.
            assert_eq!(app.query_i64("SELECT COUNT(*) FROM pg_stats WHERE tablename = 'tickets'").await, 0);
            assert_eq!(
                app.query_i64("SELECT CAST(reltuples AS BIGINT) FROM pg_class WHERE relname = 'tickets'").await,
                -1
            );
            // The plan of the server's own query: the tickets come from an
            // index scan under the LIMIT, in sale order, never from a sort
            // of the block.
            let sql = server::NEXT_FOR_SALE_POSTGRES;
            let plan = pg_explain(&app, "COSTS OFF", sql).await;
            let mut nodes = Vec::new();
            plan_nodes(&plan["Plan"], &mut Vec::new(), &mut nodes);
            let scans: Vec<_> = nodes.iter().filter(|(n, _)| n["Relation Name"] == "tickets").collect();
            assert_eq!(scans.len(), 1, "one scan of tickets: {plan:#}");
            let (scan, above) = scans[0];
            assert_eq!(scan["Node Type"], "Index Scan", "{plan:#}");
            assert_eq!(scan["Index Name"], "tickets_unsold", "{plan:#}");
            assert!(above.iter().any(|t| t == "Limit"), "the scan is under a LIMIT: {plan:#}");
            assert!(!above.iter().any(|t| t.contains("Sort")), "nothing sorts the tickets: {plan:#}");
            // Run: one ticket read, a few pages, nothing written to disk
            // (the sort of the whole block read 6 000 pages and spilled).
            let run = pg_explain(&app, "ANALYZE, BUFFERS, COSTS OFF, TIMING OFF", sql).await;
            let mut nodes = Vec::new();
            plan_nodes(&run["Plan"], &mut Vec::new(), &mut nodes);
            let (scan, _) = nodes.iter().find(|(n, _)| n["Relation Name"] == "tickets").unwrap();
            assert_eq!(scan["Actual Rows"], 1, "{run:#}");
            let root = &run["Plan"];
            let pages = root["Shared Hit Blocks"].as_i64().unwrap() + root["Shared Read Blocks"].as_i64().unwrap();
            assert!(pages < 100, "{pages} pages read for one ticket: {run:#}");
            for (n, _) in &nodes {
                assert_eq!(n["Temp Written Blocks"], 0, "{run:#}");
            }
        }
        Backend::Sqlite => {
            assert_eq!(app.query_i64("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sqlite_stat%'").await, 0);
            let plan = app.dump(&format!("EXPLAIN QUERY PLAN {}", server::NEXT_FOR_SALE_SQLITE)).await;
            assert!(plan.iter().any(|l| l.contains("tickets_unsold")), "{plan:#?}");
            assert!(!plan.iter().any(|l| l.contains("TEMP B-TREE")), "nothing sorts the tickets: {plan:#?}");
        }
    }

    // The purchases take the new block's tickets in order, from its first.
    let first = app
        .query_i64("SELECT MIN(t.position) FROM tickets t JOIN blocks b ON b.id = t.block_id WHERE b.emission_id = 2")
        .await;
    assert_eq!(first, 1);
    for position in first..first + 3 {
        let t = app.buy(&token).await;
        let serial = t["serial"].as_str().unwrap();
        assert!(serial.starts_with("ASC-002-00001-"), "{t}");
        let sql = format!("SELECT t.position FROM tickets t WHERE t.serial = '{serial}'");
        assert_eq!(app.query_i64(&sql).await, position, "{serial}");
    }
    app.shutdown().await;
}
}
