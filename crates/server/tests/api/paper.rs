//! The paper channel (issue 10; CONTRACT.md "Retail tickets"): a ticket
//! printed in a paper block is sold in a shop, scratched, played online
//! with its play code, and its prize is paid once by the retailer, never
//! credited to a wallet. "Impossible moves are refused with the documented
//! errors and change nothing"; "guessing codes is useless"; "the operator
//! report's paid and owed prizes equal the sums recomputed from the stored
//! tickets after a mixed online and paper run".

use crate::helpers::*;
use engine::{Action, Rank};
use record::{Record, verify};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A small paper table (blocks of 50, art. 2 allowed off by the tests' configuration).
const PAPER_TABLE: &str = r#"
game = "As Capone"
code = "PAP"
price_cents = 300
block_size = 50

[[schedule]]
tickets = 30
prizes_cents = { 5 = 300, 6 = 600, 7 = 5000, 8 = 50000 }

[[schedule]]
tickets = 20
prizes_cents = { 5 = 300, 6 = 1500, 7 = 5000, 8 = 100000 }
"#;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

fn won(p: &Plan) -> bool {
    p.game.result().unwrap().prize_cents > 0
}

fn lost(p: &Plan) -> bool {
    p.game.result().unwrap().prize_cents == 0
}

/// Creates a paper emission of `blocks` blocks; its number.
async fn emit_paper(app: &TestApp, blocks: u32) -> u64 {
    let r = app
        .admin_post("/api/admin/emissions", json!({"table": PAPER_TABLE, "blocks": blocks, "channel": "paper"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["channel"], "paper");
    r.json["emission"].as_u64().unwrap()
}

/// The printed tickets not taken yet, in print order, that admit a plan
/// with `want`; the first one is taken.
fn pick(printed: &[Printed], taken: &mut HashSet<String>, want: impl Fn(&Plan) -> bool) -> (Printed, Plan) {
    for p in printed {
        if taken.contains(&p.serial) {
            continue;
        }
        if let Some(plan) = search_printed(p, 300, &want) {
            taken.insert(p.serial.clone());
            return (p.clone(), plan);
        }
    }
    panic!("no printed ticket left admits the wanted plan");
}

/// A printed ticket not taken yet (any one); it is taken.
fn take(printed: &[Printed], taken: &mut HashSet<String>) -> Printed {
    let p = printed.iter().find(|p| !taken.contains(&p.serial)).expect("a printed ticket left").clone();
    taken.insert(p.serial.clone());
    p
}

/// The stored id of a ticket (movement ids are `retail_sale:<id>`, `prize:<id>`).
async fn ticket_id(app: &TestApp, serial: &str) -> i64 {
    app.query_i64(&format!("SELECT id FROM tickets WHERE serial = '{serial}'")).await
}

/// The amount movement `movement` puts on the house account `name`.
async fn house_entry(app: &TestApp, movement: &str, name: &str) -> i64 {
    app.query_i64(&format!(
        "SELECT CAST(COALESCE(SUM(l.amount_cents), 0) AS BIGINT) FROM ledger_entries l
         JOIN accounts a ON a.id = l.account_id WHERE l.movement_id = '{movement}' AND a.name = '{name}'"
    ))
    .await
}

/// The one account of movement `movement` that is not a house account, and
/// the amount on it.
async fn other_entry(app: &TestApp, movement: &str) -> (i64, i64) {
    let not_house = format!("l.movement_id = '{movement}' AND a.name NOT LIKE 'house:%'");
    let from = "FROM ledger_entries l JOIN accounts a ON a.id = l.account_id";
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) {from} WHERE {not_house}")).await, 1, "{movement}");
    let account = app.query_i64(&format!("SELECT CAST(l.account_id AS BIGINT) {from} WHERE {not_house}")).await;
    let amount = app.query_i64(&format!("SELECT l.amount_cents {from} WHERE {not_house}")).await;
    (account, amount)
}

/// Sells a printed ticket at a shop: 200, status sold, by that shop.
async fn sell(app: &TestApp, shop_token: &str, shop: &str, serial: &str) -> Value {
    let r = app.retail("sell", Some(shop_token), serial).await;
    assert_eq!(r.status, 200, "sell {serial}: {}", r.json);
    assert_eq!(r.json["status"], "sold", "{}", r.json);
    assert_eq!(r.json["sold_by"], shop, "{}", r.json);
    r.json
}

/// Redeems a play code: 200, and the ticket and its token.
async fn redeem_ok(app: &TestApp, code: &str, player: Option<&str>) -> (Value, String) {
    let r = app.redeem(code, player).await;
    assert_eq!(r.status, 200, "redeem {code}: {}", r.json);
    let token = r.json["token"].as_str().unwrap_or_else(|| panic!("a token: {}", r.json)).to_string();
    (r.json["ticket"].clone(), token)
}

/// Plays a plan with `token` (a ticket's or its owner's) and checks every
/// answer against the engine; the last ticket.
async fn play_plan(app: &TestApp, token: &str, serial: &str, plan: &Plan) -> Vec<Resp> {
    let answers = app.play(token, serial, &plan.actions).await;
    for (i, (r, ev)) in answers.iter().zip(&plan.events).enumerate() {
        assert_eq!(r.json["events"], serde_json::to_value(ev).unwrap(), "events of action {i}");
    }
    let last = &answers.last().unwrap().json["ticket"];
    assert_eq!(last["phase"], "finished");
    let result = plan.game.result().unwrap();
    assert_eq!(last["result"], json!({"tricks": result.tricks, "prize_cents": result.prize_cents}));
    answers
}

/// Whether a message of the shop's validation names the amount `cents`
/// (`50 €`, `50,00 €`, `50 EUR`...), whatever the spaces.
fn names_amount(message: &str, cents: u64) -> bool {
    let m: String = message.chars().filter(|c| !c.is_whitespace() && *c != '\u{202f}').collect();
    let units = (cents / 100).to_string();
    let cents_part = format!("{},{:02}", cents / 100, cents % 100);
    [format!("{units}€"), format!("{units}EUR"), format!("{cents_part}€"), format!("{cents_part}EUR")]
        .iter()
        .any(|s| m.contains(s.as_str()))
}

/// What a refused move must leave as it was: every ticket, game, action,
/// draw, movement, ledger entry, account, player and audit entry (its
/// data: a PostgreSQL sealer chains entries after their commit), and
/// whatever the paper channel stores beside them. Failed play codes are
/// left out: counting them is the point of a 404 to a redeem.
async fn snapshot(app: &TestApp) -> Vec<String> {
    let mut out = Vec::new();
    for sql in [
        "SELECT * FROM tickets ORDER BY id",
        "SELECT * FROM ticket_games ORDER BY ticket_id",
        "SELECT * FROM actions ORDER BY ticket_id, seq",
        "SELECT * FROM movements ORDER BY id",
        "SELECT * FROM ledger_entries ORDER BY movement_id, account_id",
        "SELECT * FROM accounts ORDER BY id",
        "SELECT * FROM players ORDER BY id",
        "SELECT * FROM emissions ORDER BY id",
        "SELECT id, emission_id, number, root, published_ms FROM blocks ORDER BY id",
        "SELECT id, created_ms, kind, data_json FROM audit_log ORDER BY id",
        "SELECT * FROM retail_answers ORDER BY ticket_id, operation",
    ] {
        out.push(sql.to_string());
        out.extend(app.dump(sql).await);
    }
    out
}

fn assert_unchanged(before: &[String], after: &[String], what: &str) {
    if before != after {
        let at = before.iter().zip(after).position(|(a, b)| a != b).unwrap_or(before.len().min(after.len()));
        panic!(
            "{what} changed the database: first difference at line {at}:\n before: {:?}\n after:  {:?}\n({} lines before, {} after)",
            before.get(at),
            after.get(at),
            before.len(),
            after.len()
        );
    }
}

/// The `Retry-After` of a 429, in seconds: present, at least 1, at most the window.
fn retry_after(r: &Resp, window_s: u64) -> u64 {
    assert_error(r, 429, "too_many_attempts");
    let v = r.headers.get("retry-after").unwrap_or_else(|| panic!("429 without Retry-After: {}", r.json));
    let s: u64 = v.to_str().unwrap().trim().parse().unwrap_or_else(|_| panic!("Retry-After in seconds: {v:?}"));
    assert!((1..=window_s).contains(&s), "Retry-After {s} within the window of {window_s} s");
    s
}

/// A play code no ticket has: 80 bits from a fixed generator (50 live
/// codes among 2^80: a hit would be a 1 in 10^22 accident).
fn wrong_codes(seed: u64) -> impl Iterator<Item = String> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    std::iter::repeat_with(move || {
        let mut bits = 0u128;
        for _ in 0..2 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            bits = bits << 64 | u128::from(x);
        }
        String::from_utf8(emission::PlayCode::from_bits(bits).grouped().to_vec()).unwrap()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_a_paper_ticket_is_sold_redeemed_played_validated_and_paid_once() {
    let Some(app) = spawn_app().await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    assert_eq!(printed.len(), 50);
    let table = math::PrizeTable::parse_toml(PAPER_TABLE).unwrap();
    for p in &printed {
        assert_eq!(p.prizes, table.schedules[p.row as usize - 1].prizes, "{p:?}");
    }
    let mut taken = HashSet::new();
    let (t, plan) = pick(&printed, &mut taken, won);
    let prize = plan.game.result().unwrap().prize_cents;
    let serial = t.serial.as_str();
    let id = ticket_id(&app, serial).await;

    // Before the sale, the shop sees a ticket that is not sold.
    let v = app.retail("validate", Some(SHOP_A_TOKEN), serial).await;
    assert_eq!(v.status, 200, "{}", v.json);
    assert_eq!((v.json["serial"].as_str(), v.json["status"].as_str()), (Some(serial), Some("printed")));
    assert_eq!(v.json["sold_by"], Value::Null);
    assert_eq!(v.json["prize_cents"].as_u64().unwrap_or(0), 0, "nothing won before the game: {}", v.json);
    assert!(!v.json["message"].as_str().unwrap().is_empty());

    // "Serials are accepted in any case, with or without dashes": the shop
    // types it in lower case without dashes.
    let typed = serial.replace('-', "").to_lowercase();
    let sale = sell(&app, SHOP_A_TOKEN, SHOP_A, &typed).await;
    assert_eq!(sale["serial"], serial, "answered as printed");
    assert_eq!((sale["paid_ms"].clone(), sale["paid_by"].clone()), (Value::Null, Value::Null));
    assert_eq!(sale["claim_until_ms"], Value::Null, "no deadline while the emission is on sale");
    assert!(!sale["message"].as_str().unwrap().is_empty());
    // 300 cents from the shop to the house's sales, in the ledger.
    let sale_id = format!("retail_sale:{id}");
    assert_eq!(house_entry(&app, &sale_id, "house:sales").await, 300);
    let (shop_account, amount) = other_entry(&app, &sale_id).await;
    assert_eq!(amount, -300);
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM movements WHERE id = '{sale_id}'")).await, 1);

    // The player scratches the ticket and types its play code, logged in.
    let player = app.register().await;
    let (ticket, token) = redeem_ok(&app, &t.code, Some(&player)).await;
    assert_eq!(ticket["serial"], serial);
    assert_eq!(ticket["id"], serial);
    // Opened by its code: in play from now on, before its first action too.
    assert_eq!((ticket["channel"].as_str(), ticket["status"].as_str()), (Some("paper"), Some("in_play")));
    assert_eq!(ticket["seq"], 0);
    assert_eq!(ticket["prizes_cents"], serde_json::to_value(t.prizes).unwrap());
    assert_eq!(ticket["commitment"], engine::commitment(&SEED));
    assert_eq!(ticket["retail"]["sold_by"], SHOP_A, "{ticket}");
    assert_eq!(ticket["retail"]["paid_ms"], Value::Null);
    assert_eq!(ticket["retail"]["paid_by"], Value::Null);
    assert!(token.starts_with(&format!("t1.{serial}.")), "{token}");
    // "The same code again resumes the same ticket (any device), never a
    // second one": typed otherwise, without a player's token.
    let retyped = t.code.replace('-', " ").to_lowercase();
    let (again, token_again) = redeem_ok(&app, &retyped, None).await;
    assert_eq!((again, token_again.as_str()), (ticket.clone(), token.as_str()));
    // It joined the player's history.
    let list = app.get("/api/tickets", Some(&player)).await;
    assert_eq!(list.json["tickets"], json!([ticket]));

    // The ticket's token opens this ticket, and only it.
    let r = app.get(&format!("/api/tickets/{serial}"), Some(&token)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ticket"], ticket);
    let online = app.buy(&player).await;
    assert_eq!(online["retail"], Value::Null, "an online ticket: {online}");
    let online_id = online["id"].as_str().unwrap();
    assert_error(&app.get(&format!("/api/tickets/{online_id}"), Some(&token)).await, 404, "not_found");
    let r = app.post(&format!("/api/tickets/{online_id}/actions"), Some(&token), action_body(0, Action::Draw)).await;
    assert_error(&r, 404, "not_found");
    let other = &printed.iter().find(|p| !taken.contains(&p.serial)).unwrap().serial;
    assert_error(&app.get(&format!("/api/tickets/{other}"), Some(&token)).await, 404, "not_found");
    assert_error(&app.get("/api/me", Some(&token)).await, 401, "unauthorized");
    assert_error(&app.get("/api/tickets", Some(&token)).await, 401, "unauthorized");
    assert_error(&app.post("/api/tickets", Some(&token), json!({})).await, 401, "unauthorized");
    let forged = format!("{}{}", &token[..token.len() - 1], if token.ends_with('0') { '1' } else { '0' });
    assert_error(&app.get(&format!("/api/tickets/{serial}"), Some(&forged)).await, 401, "unauthorized");

    // Played to the end with the ticket's token: no wallet, no balance.
    let answers = play_plan(&app, &token, serial, &plan).await;
    for r in &answers {
        assert_eq!(r.json["balance_cents"], Value::Null, "a paper ticket credits no wallet: {}", r.json);
    }
    let end = answers.last().unwrap().json["ticket"].clone();
    assert_eq!((end["status"].as_str(), end["channel"].as_str()), (Some("won"), Some("paper")));
    assert_eq!(end["server_seed"], hex::encode(SEED));
    // "A paper ticket's prize is owed by a retailer and never credited to a
    // wallet": the logged-in owner's balance only paid their online ticket.
    assert_eq!(app.balance(&player).await, START - 300);
    let wallet = format!(
        "SELECT COUNT(*) FROM ledger_entries l JOIN accounts a ON a.id = l.account_id
         JOIN movements m ON m.id = l.movement_id WHERE m.ticket_id = {id} AND a.kind = 'player'"
    );
    assert_eq!(app.query_i64(&wallet).await, 0);
    let listed = app.get("/api/tickets", Some(&player)).await.json["tickets"].clone();
    assert!(listed.as_array().unwrap().iter().any(|x| x["serial"] == serial && x["status"] == "won"), "{listed}");
    // Its record verifies, opened with the ticket's token.
    let r = app.get(&format!("/api/tickets/{serial}/record"), Some(&token)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let record: Record = serde_json::from_value(r.json).unwrap();
    assert!(verify(&record).is_valid(), "{}", verify(&record));

    // The shop validates: won, and the amount to pay in words.
    let v = app.retail("validate", Some(SHOP_A_TOKEN), serial).await;
    assert_eq!(v.status, 200, "{}", v.json);
    assert_eq!(v.json["status"], "won");
    assert_eq!(v.json["prize_cents"], prize);
    assert!(names_amount(v.json["message"].as_str().unwrap(), prize), "{}", v.json);

    // Pays once: 200, paid by this shop; the prize goes from the house's
    // prizes to the shop's account (the one its sale was taken from).
    let before_pay = now_ms();
    let p = app.retail("pay", Some(SHOP_A_TOKEN), serial).await;
    assert_eq!(p.status, 200, "{}", p.json);
    assert_eq!((p.json["status"].as_str(), p.json["paid_by"].as_str()), (Some("paid"), Some(SHOP_A)));
    assert_eq!(p.json["prize_cents"], prize);
    let paid_ms = p.json["paid_ms"].as_i64().unwrap();
    assert!((before_pay - 1000..=now_ms() + 1000).contains(&paid_ms), "{paid_ms}");
    let prize_id = format!("prize:{id}");
    assert_eq!(house_entry(&app, &prize_id, "house:prizes").await, -(prize as i64));
    assert_eq!(other_entry(&app, &prize_id).await, (shop_account, prize as i64));

    // Paid once: another shop paying again gets 409, the paying shop's
    // retry its own answer again; nothing moves.
    let before = snapshot(&app).await;
    assert_error(&app.retail("pay", Some(SHOP_B_TOKEN), serial).await, 409, "conflict");
    let again = app.retail("pay", Some(SHOP_A_TOKEN), serial).await;
    assert_eq!((again.status, &again.bytes), (p.status, &p.bytes), "{}", again.json);
    assert_unchanged(&before, &snapshot(&app).await, "paying again");

    // Validated again: paid, when and where.
    let v = app.retail("validate", Some(SHOP_B_TOKEN), serial).await;
    assert_eq!(v.status, 200, "{}", v.json);
    assert_eq!(v.json["status"], "paid");
    assert_eq!((v.json["paid_ms"].as_i64(), v.json["paid_by"].as_str()), (Some(paid_ms), Some(SHOP_A)));
    assert_eq!(v.json["sold_by"], SHOP_A);
    assert!(v.json["message"].as_str().unwrap().contains(SHOP_A), "where it was paid: {}", v.json);
    assert_unchanged(&before, &snapshot(&app).await, "validating");
    // The ticket says so; the code still opens the same ticket.
    let (now, token_now) = redeem_ok(&app, &t.code, None).await;
    assert_eq!(token_now, token);
    assert_eq!(now["status"], "paid");
    assert_eq!((now["retail"]["paid_ms"].as_i64(), now["retail"]["paid_by"].as_str()), (Some(paid_ms), Some(SHOP_A)));
    assert_eq!(app.get(&format!("/api/tickets/{serial}"), Some(&player)).await.json["ticket"], now);

    // The ledger sums to zero, each move has its audit entry, the chain holds.
    let ledger = app.app.store().check_ledger().await.unwrap();
    assert!(ledger.is_sound(), "{ledger:?}");
    assert_eq!(ledger.sum_cents, 0);
    for kind in ["ticket_sold_in_shop", "ticket_redeemed", "ticket_paid"] {
        let n = app.query_i64(&format!("SELECT COUNT(*) FROM audit_log WHERE kind = '{kind}'")).await;
        assert_eq!(n, 1, "{kind}");
    }
    let audit = app.sealed_audit_check().await;
    assert_eq!((audit.unsealed, audit.first_broken), (0, None), "{audit:?}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_every_impossible_move_is_refused_with_its_error_and_changes_nothing() {
    let Some(app) = spawn_app().await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let mut taken = HashSet::new();
    let (w, win) = pick(&printed, &mut taken, won);
    let (l, loss) = pick(&printed, &mut taken, lost);
    let unfinished = take(&printed, &mut taken);
    let sold = take(&printed, &mut taken);
    let unsold = take(&printed, &mut taken);
    for p in [&w, &l, &unfinished, &sold] {
        sell(&app, SHOP_A_TOKEN, SHOP_A, &p.serial).await;
    }
    let (_, wt) = redeem_ok(&app, &w.code, None).await;
    play_plan(&app, &wt, &w.serial, &win).await;
    let (_, lt) = redeem_ok(&app, &l.code, None).await;
    play_plan(&app, &lt, &l.serial, &loss).await;
    let (u, ut) = redeem_ok(&app, &unfinished.code, None).await;
    let r = app
        .post(
            &format!("/api/tickets/{}/actions", unfinished.serial),
            Some(&ut),
            action_body(0, Action::play(Rank::Ace)),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(u["status"], "in_play", "opened by its code: in play before its first action");
    assert_eq!(r.json["ticket"]["status"], "in_play");
    let player = app.register().await;
    let online = app.buy(&player).await;
    let online_serial = online["serial"].as_str().unwrap().to_string();

    let before = snapshot(&app).await;
    let mut views = Vec::new();
    for p in [&w, &l, &unfinished, &sold, &unsold] {
        let v = app.retail("validate", Some(SHOP_B_TOKEN), &p.serial).await;
        assert_eq!(v.status, 200, "{}", v.json);
        assert!(!v.json["message"].as_str().unwrap().is_empty(), "{}", v.json);
        views.push(v.json);
    }
    let got: Vec<&str> = views.iter().map(|v| v["status"].as_str().unwrap()).collect();
    assert_eq!(got, ["won", "lost", "in_play", "sold", "printed"]);
    assert_eq!(views[1]["prize_cents"].as_u64().unwrap_or(0), 0);
    assert_eq!(views[0]["prize_cents"], win.game.result().unwrap().prize_cents);

    // Playing an unsold ticket: its code opens nothing (409), nor does an
    // unknown code (404) or one of the wrong shape (400).
    let r = app.redeem(&unsold.code, None).await;
    assert_error(&r, 409, "conflict");
    assert_error(&app.redeem(&wrong_codes(1).next().unwrap(), None).await, 404, "not_found");
    for bad in ["", "7K3M-Q9ZD", "7K3M-Q9ZD-XW4P-2HRT-AAAA", "UUUU-UUUU-UUUU-UUUU"] {
        assert_error(&app.redeem(bad, None).await, 400, "bad_request");
    }
    let r = app.post("/api/tickets/redeem", None, json!({"serial": unsold.serial})).await;
    assert_error(&r, 400, "bad_request");
    // ...nor do its serial and another ticket's token or a player's.
    for token in [&wt, &player] {
        let path = format!("/api/tickets/{}", unsold.serial);
        assert_error(&app.get(&path, Some(token)).await, 404, "not_found");
        let r = app.post(&format!("{path}/actions"), Some(token), action_body(0, Action::play(Rank::Ace))).await;
        assert_error(&r, 404, "not_found");
    }

    // Redeeming an online ticket's code: online codes are never printed,
    // but the key and the emission's public salt give them (crate::keys),
    // for the ticket sold online and for one still unsold.
    let salt = server::parse_salt(&app.query_text("SELECT seed_salt FROM emissions WHERE id = 1").await).unwrap();
    let table = math::PrizeTable::parse_toml(TABLE).unwrap();
    let block =
        emission::Emission::new(1, table, app.server_key().emission_seed(&salt)).unwrap().generate_block(1).unwrap();
    let online_codes: Vec<String> =
        block.tickets.iter().take(2).map(|t| String::from_utf8(t.play_code.grouped().to_vec()).unwrap()).collect();
    assert_eq!(block.tickets[0].serial.to_string(), online_serial, "the first online ticket is the one sold");
    let hash = hex::encode(block.tickets[0].play_code.sha256());
    assert_eq!(
        app.query_text(&format!("SELECT play_code_hash FROM tickets WHERE serial = '{online_serial}'")).await,
        hash
    );
    for code in &online_codes {
        assert_error(&app.redeem(code, None).await, 409, "conflict");
        assert_error(&app.redeem(code, Some(&player)).await, 409, "conflict");
    }

    // Selling again at another shop: 409 (the selling shop's retry gets its
    // answer again: retail_tickets_a_shop_repeating_its_sale_or_payment_*).
    // Selling an online ticket: 409.
    for (shop, p) in [(SHOP_B_TOKEN, &sold), (SHOP_B_TOKEN, &w), (SHOP_B_TOKEN, &unfinished)] {
        assert_error(&app.retail("sell", Some(shop), &p.serial).await, 409, "conflict");
    }
    assert_error(&app.retail("sell", Some(SHOP_A_TOKEN), &online_serial).await, 409, "conflict");
    let online_unsold = block.tickets[1].serial.to_string();
    assert_error(&app.retail("sell", Some(SHOP_A_TOKEN), &online_unsold).await, 409, "conflict");

    // Paying a lost ticket, an unfinished one (sold, in play), an unsold one: 409.
    for p in [&l, &sold, &unfinished, &unsold] {
        let r = app.retail("pay", Some(SHOP_A_TOKEN), &p.serial).await;
        assert_error(&r, 409, "conflict");
    }
    // Paying at a shop that did not sell it: 403.
    assert_error(&app.retail("pay", Some(SHOP_B_TOKEN), &w.serial).await, 403, "forbidden");

    // A serial with a wrong check digit: 400, "check the serial"; one of no
    // ticket: 404; not a serial at all: 400.
    let s = &w.serial;
    let last = s.chars().last().unwrap();
    let mistyped = format!("{}{}", &s[..s.len() - 1], if last == '9' { '0' } else { char::from(last as u8 + 1) });
    let parsed = emission::Serial::parse(s).unwrap();
    let missing = emission::Serial::new(parsed.code(), parsed.emission(), parsed.block(), 51).unwrap().to_string();
    let elsewhere = emission::Serial::new(parsed.code(), 9, 1, 1).unwrap().to_string();
    for op in ["sell", "validate", "pay"] {
        let r = app.retail(op, Some(SHOP_A_TOKEN), &mistyped).await;
        assert_error(&r, 400, "bad_request");
        assert!(r.json["message"].as_str().unwrap().contains("check the serial"), "{op}: {}", r.json);
        for nobody in [&missing, &elsewhere] {
            assert_error(&app.retail(op, Some(SHOP_A_TOKEN), nobody).await, 404, "not_found");
        }
        assert_error(&app.retail(op, Some(SHOP_A_TOKEN), "not a serial").await, 400, "bad_request");
        let r = app.post(&format!("/api/retail/{op}"), Some(SHOP_A_TOKEN), json!({})).await;
        assert_error(&r, 400, "bad_request");
    }

    // Not a retailer: no token or an unknown one 401, a player's or a ticket's 403 or 401.
    for op in ["sell", "validate", "pay"] {
        for p in [&unsold, &w] {
            assert_error(&app.retail(op, None, &p.serial).await, 401, "unauthorized");
            assert_error(&app.retail(op, Some("not-a-retailer-token-at-all"), &p.serial).await, 401, "unauthorized");
            assert_error(&app.retail(op, Some(&format!("{SHOP_A_TOKEN}x")), &p.serial).await, 401, "unauthorized");
            assert_error(&app.retail(op, Some(&player), &p.serial).await, 403, "forbidden");
            let r = app.retail(op, Some(&wt), &p.serial).await;
            assert!([401, 403].contains(&r.status.as_u16()), "{op} with a ticket's token: {}", r.json);
            let req = app
                .client
                .post(format!("{}/api/retail/{op}", app.url))
                .header("authorization", format!("Basic {SHOP_A_TOKEN}"))
                .json(&json!({"serial": p.serial}));
            assert_error(&app.send(req).await, 401, "unauthorized");
        }
    }

    // Nothing changed: every row as it was, every ticket as the shop saw it.
    assert_unchanged(&before, &snapshot(&app).await, "the refused moves");
    for (p, v) in [&w, &l, &unfinished, &sold, &unsold].iter().zip(&views) {
        assert_eq!(&app.retail("validate", Some(SHOP_B_TOKEN), &p.serial).await.json, v);
    }
    // And what may happen still happens: the unsold ticket sells, the won one is paid by its shop.
    sell(&app, SHOP_B_TOKEN, SHOP_B, &unsold.serial).await;
    let r = app.retail("pay", Some(SHOP_A_TOKEN), &w.serial).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let ledger = app.app.store().check_ledger().await.unwrap();
    assert!(ledger.is_sound(), "{ledger:?}");
    let audit = app.sealed_audit_check().await;
    assert_eq!((audit.unsealed, audit.first_broken), (0, None), "{audit:?}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_with_retail_pay_any_shop_another_shop_pays_and_is_credited() {
    let Some(app) = spawn_app_with(|c| c.retail_pay_any_shop = true).await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let mut taken = HashSet::new();
    let (w, win) = pick(&printed, &mut taken, won);
    let prize = win.game.result().unwrap().prize_cents as i64;
    let (l, loss) = pick(&printed, &mut taken, lost);
    for (p, plan) in [(&w, &win), (&l, &loss)] {
        sell(&app, SHOP_A_TOKEN, SHOP_A, &p.serial).await;
        let (_, token) = redeem_ok(&app, &p.code, None).await;
        play_plan(&app, &token, &p.serial, plan).await;
    }
    // Still only a won ticket is paid, and once.
    let before = snapshot(&app).await;
    assert_error(&app.retail("pay", Some(SHOP_B_TOKEN), &l.serial).await, 409, "conflict");
    assert_unchanged(&before, &snapshot(&app).await, "paying a lost ticket");
    let r = app.retail("pay", Some(SHOP_B_TOKEN), &w.serial).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!((r.json["sold_by"].as_str(), r.json["paid_by"].as_str()), (Some(SHOP_A), Some(SHOP_B)));
    // Paid once: the seller is refused, the payer's retry gets its answer again.
    let before = snapshot(&app).await;
    assert_error(&app.retail("pay", Some(SHOP_A_TOKEN), &w.serial).await, 409, "conflict");
    let again = app.retail("pay", Some(SHOP_B_TOKEN), &w.serial).await;
    assert_eq!((again.status, &again.bytes), (r.status, &r.bytes), "{}", again.json);
    assert_unchanged(&before, &snapshot(&app).await, "paying again");
    // The paying shop is credited, not the selling one.
    let id = ticket_id(&app, &w.serial).await;
    let (seller, _) = other_entry(&app, &format!("retail_sale:{id}")).await;
    let (payer, amount) = other_entry(&app, &format!("prize:{id}")).await;
    assert_ne!(payer, seller);
    assert_eq!(amount, prize);
    let v = app.retail("validate", Some(SHOP_A_TOKEN), &w.serial).await;
    assert_eq!((v.json["status"].as_str(), v.json["paid_by"].as_str()), (Some("paid"), Some(SHOP_B)));
    assert!(app.app.store().check_ledger().await.unwrap().is_sound());
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_thousands_of_wrong_codes_are_refused_and_slowed_down_even_after_a_restart() {
    // "Guessing codes is useless": wrong codes are limited per client
    // network (IPv4 /24 here; the address as the trusted proxy appended it
    // to X-Forwarded-For), and the limit survives a restart.
    let defaults = server::Config::default();
    assert_eq!(
        (
            defaults.redeem_failures_per_address,
            defaults.redeem_failures_global,
            defaults.redeem_failures_per_address_slowed,
            defaults.redeem_window_s
        ),
        (20, 2000, 2, 900)
    );
    assert!(!defaults.trust_forwarded_for && !defaults.retail_pay_any_shop);
    assert_eq!((defaults.claim_days, defaults.trusted_proxy_hops), (60, 1));
    let limit = u64::from(defaults.redeem_failures_per_address);
    let window = defaults.redeem_window_s;
    let Some(app) = spawn_app_with(|c| c.trust_forwarded_for = true).await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let holder = printed[0].clone();
    sell(&app, SHOP_A_TOKEN, SHOP_A, &holder.serial).await;
    let attacker = "203.0.113.7";

    // Codes of the wrong shape are refused (400) and not counted.
    for i in 0..(2 * limit) {
        let r = app.redeem_from(attacker, &format!("NOT-A-CODE-{i}")).await;
        assert_error(&r, 400, "bad_request");
    }
    // The first `limit` wrong codes are not found (404); then every attempt
    // from the attacker's network is refused (429), its other addresses too.
    let mut codes = wrong_codes(7);
    for i in 0..100 {
        let from = format!("203.0.113.{}", 1 + i % 250);
        let r = app.redeem_from(&from, &codes.next().unwrap()).await;
        if i < limit {
            assert_error(&r, 404, "not_found");
        } else {
            retry_after(&r, window);
        }
    }
    // Thousands more, several at a time: all refused, none ever opens a ticket.
    let app = Arc::new(app);
    let tasks: Vec<_> = (0..8u64)
        .map(|k| {
            let app = app.clone();
            tokio::spawn(async move {
                let mut refused = 0;
                for code in wrong_codes(100 + k).take(3000 / 8) {
                    let r = app.redeem_from(attacker, &code).await;
                    assert_ne!(r.status, 200, "a guess opened a ticket: {}", r.json);
                    retry_after(&r, window);
                    refused += 1;
                }
                refused
            })
        })
        .collect();
    let mut refused = 0;
    for t in tasks {
        refused += t.await.unwrap();
    }
    assert_eq!(refused, 3000 / 8 * 8);
    // Even the right code is refused from that network, before it is looked at...
    retry_after(&app.redeem_from(attacker, &holder.code).await, window);
    // ...and a forged left part of X-Forwarded-For changes nothing: the
    // client is the entry the trusted proxy appended, the right-most.
    retry_after(&app.redeem_from(&format!("198.51.100.23, {attacker}"), &holder.code).await, window);
    // The right code still works for its holder, elsewhere.
    let r = app.redeem_from("198.51.100.23", &holder.code).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let token = r.json["token"].as_str().unwrap().to_string();
    assert_eq!(r.json["ticket"]["serial"], holder.serial);
    let r = app.redeem_from(&format!("{attacker}, 198.51.100.24"), &holder.code).await;
    assert_eq!(r.status, 200, "the right-most address is the client's: {}", r.json);
    // No guess sold or opened anything: one ticket sold, the holder's.
    let in_paper = format!("JOIN blocks b ON b.id = t.block_id WHERE b.emission_id = {emission}");
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM tickets t {in_paper} AND t.status <> 'printed'")).await, 1);
    // The wrong codes are in the database: the attacker's network's, counted to the limit.
    let stored = "SELECT count FROM limit_counters WHERE bucket = 'redeem:203.0.113.0/24'";
    assert_eq!(app.query_i64(stored).await, limit as i64);
    assert_eq!(app.query_i64("SELECT count FROM limit_counters WHERE bucket = 'redeem:global'").await, limit as i64);
    // A metric counts the refusals (every 429), another the networks that reached the limit.
    let metrics = String::from_utf8(app.get("/metrics", None).await.bytes).unwrap();
    let metric = |name: &str| -> u64 {
        let line = metrics.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name}:\n{metrics}"));
        line.rsplit(' ').next().unwrap().parse::<f64>().unwrap() as u64
    };
    assert_eq!(metric("as_capone_redeem_refused_total"), (100 - limit) + 3000 / 8 * 8 + 2);
    assert_eq!(metric("as_capone_redeem_limit_reached_total"), 1);

    // After a restart on the same database, the attacker is still refused.
    let app = Arc::into_inner(app).unwrap();
    let db = app.stop().await;
    let app = spawn_app_on(db, |c| c.trust_forwarded_for = true).await;
    retry_after(&app.redeem_from(attacker, &wrong_codes(9999).next().unwrap()).await, window);
    retry_after(&app.redeem_from(attacker, &holder.code).await, window);
    // The holder, from another device, resumes the same ticket with the same token.
    let r = app.redeem_from("198.51.100.99", &holder.code).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (r.json["ticket"]["serial"].as_str(), r.json["token"].as_str()),
        (Some(holder.serial.as_str()), Some(token.as_str()))
    );
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_without_a_trusted_proxy_the_forwarded_address_is_ignored() {
    // trust_forwarded_for = false (the default): the client is the TCP
    // peer, whatever X-Forwarded-For says, so changing it gains nothing.
    let Some(app) = spawn_app_with(|c| c.redeem_failures_per_address = 5).await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    sell(&app, SHOP_A_TOKEN, SHOP_A, &printed[0].serial).await;
    for (i, code) in wrong_codes(3).take(5).enumerate() {
        assert_error(&app.redeem_from(&format!("192.0.2.{i}"), &code).await, 404, "not_found");
    }
    for (i, code) in wrong_codes(4).take(5).enumerate() {
        retry_after(&app.redeem_from(&format!("198.51.100.{i}"), &code).await, 900);
    }
    retry_after(&app.redeem(&printed[0].code, None).await, 900);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_the_client_is_the_entry_the_nearest_trusted_proxy_appended() {
    // Two proxies in front (a CDN, then a load balancer): the client is the
    // second entry from the right; every entry left of it is the client's
    // own words. IPv6 clients are counted per /64.
    let Some(app) = spawn_app_with(|c| {
        c.trust_forwarded_for = true;
        c.trusted_proxy_hops = 2;
        c.redeem_failures_per_address = 3;
    })
    .await
    else {
        return;
    };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    sell(&app, SHOP_A_TOKEN, SHOP_A, &printed[0].serial).await;
    let mut codes = wrong_codes(21);
    // The client 2001:db8:7:7::/64 guesses from three addresses of its /64,
    // each time with another forged address on the left.
    for i in 0..3 {
        let chain = format!("10.9.{i}.9, 2001:db8:7:7::{i:x}, 192.0.2.1");
        assert_error(&app.redeem_from(&chain, &codes.next().unwrap()).await, 404, "not_found");
    }
    for chain in ["2001:db8:7:7:ffff::1, 192.0.2.1", "10.0.0.1, 2001:db8:7:7:1:2:3:4, 192.0.2.1"] {
        retry_after(&app.redeem_from(chain, &codes.next().unwrap()).await, 900);
    }
    // The same chain written as two header lines is one list.
    let r = app
        .send(
            app.client
                .post(format!("{}/api/tickets/redeem", app.url))
                .header("x-forwarded-for", "10.0.0.1, 2001:db8:7:7::99")
                .header("x-forwarded-for", "192.0.2.1")
                .json(&json!({"code": codes.next().unwrap()})),
        )
        .await;
    retry_after(&r, 900);
    // Another /64 is another client; so is the proxy's address alone (too
    // few entries: the request did not come through both proxies).
    assert_error(&app.redeem_from("2001:db8:7:8::1, 192.0.2.1", &codes.next().unwrap()).await, 404, "not_found");
    assert_error(&app.redeem_from("192.0.2.1", &codes.next().unwrap()).await, 404, "not_found");
    let r = app.redeem_from("2001:db8:7:9::1, 192.0.2.1", &printed[0].code).await;
    assert_eq!(r.status, 200, "{}", r.json);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_past_the_global_limit_guessing_is_slowed_and_no_holder_is_locked_out() {
    let (per_network, global, slowed, window) = (20u32, 30u32, 2u32, 4u64);
    let Some(app) = spawn_app_with(|c| {
        c.trust_forwarded_for = true;
        c.redeem_failures_per_address = per_network;
        c.redeem_failures_global = global;
        c.redeem_failures_per_address_slowed = slowed;
        c.redeem_window_s = window;
    })
    .await
    else {
        return;
    };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let holder = printed[0].clone();
    sell(&app, SHOP_A_TOKEN, SHOP_A, &holder.serial).await;
    // 30 wrong codes from 6 networks, 5 each (under the per-network limit).
    let mut codes = wrong_codes(11);
    for i in 0..global {
        let r = app.redeem_from(&format!("10.1.{}.1", i % 6), &codes.next().unwrap()).await;
        assert_error(&r, 404, "not_found");
    }
    // Guessing is now slowed for everyone: a network that already sent
    // wrong codes is refused, a new one gets `slowed` of them...
    retry_after(&app.redeem_from("10.1.0.1", &codes.next().unwrap()).await, window);
    for _ in 0..slowed {
        assert_error(&app.redeem_from("10.2.0.1", &codes.next().unwrap()).await, 404, "not_found");
    }
    let mut wait = retry_after(&app.redeem_from("10.2.0.1", &codes.next().unwrap()).await, window);
    // ...and 40 more networks, 2 each, can do nothing to the holder: their
    // right code opens the ticket at once, from any network that sent no
    // wrong code.
    for n in 0..40 {
        for _ in 0..slowed {
            assert_error(&app.redeem_from(&format!("10.3.{n}.1"), &codes.next().unwrap()).await, 404, "not_found");
        }
    }
    let r = app.redeem_from("10.4.0.1", &holder.code).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ticket"]["serial"], holder.serial);
    wait = wait.max(retry_after(&app.redeem_from("10.3.0.1", &codes.next().unwrap()).await, window));
    // Slowed, not locked: once the window has passed, every network starts again.
    tokio::time::sleep(Duration::from_millis(wait * 1000 + 500)).await;
    assert_error(&app.redeem_from("10.1.0.1", &codes.next().unwrap()).await, 404, "not_found");
    assert_error(&app.redeem_from("10.3.0.1", &codes.next().unwrap()).await, 404, "not_found");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_a_right_code_never_counts_even_when_its_client_hangs_up() {
    let limit = 5u32;
    let Some(app) = spawn_app_with(|c| {
        c.trust_forwarded_for = true;
        c.redeem_failures_per_address = limit;
    })
    .await
    else {
        return;
    };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let holder = printed[0].clone();
    sell(&app, SHOP_A_TOKEN, SHOP_A, &holder.serial).await;
    let from = "198.51.100.61";
    // The right code, many more times than the limit: never refused.
    for _ in 0..(4 * limit) {
        let r = app.redeem_from(from, &holder.code).await;
        assert_eq!(r.status, 200, "{}", r.json);
    }
    // The right code again 40 times, each client hanging up as soon as it
    // has sent its request, at every moment of the server's work on it.
    let addr = app.url.trim_start_matches("http://").to_string();
    let body = json!({"code": holder.code}).to_string();
    for i in 0..40u64 {
        let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let request = format!(
            "POST /api/tickets/redeem HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: {from}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        tokio::io::AsyncWriteExt::write_all(&mut s, request.as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_micros(i * 250)).await;
        drop(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // None of it counted: the network still has all its wrong codes.
    let mut codes = wrong_codes(41);
    for _ in 0..limit {
        assert_error(&app.redeem_from(from, &codes.next().unwrap()).await, 404, "not_found");
    }
    retry_after(&app.redeem_from(from, &codes.next().unwrap()).await, 900);
    app.shutdown().await;
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_report_paid_and_owed_prizes_equal_the_stored_tickets_after_a_mixed_online_and_paper_run() {
    let Some(app) = spawn_app_with(|c| c.start_balance_cents = 300 * 100).await else { return };
    let players = [app.register().await, app.register().await];
    let mut online = Money::default();
    // Online: won and lost tickets played out, one in play, one never played.
    for token in &players {
        for want in [&won as &dyn Fn(&Plan) -> bool, &lost, &won] {
            let (t, plan) = find_ticket(&app, token, 20, want).await;
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
    for token in &players {
        bought += app.get("/api/tickets", Some(token)).await.json["tickets"].as_array().unwrap().len() as i64;
    }
    assert!(bought >= online.sold);
    online.sold = bought;
    online.sales_cents = 300 * bought;

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
        (&won as &dyn Fn(&Plan) -> bool, SHOP_A, true, None),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_after_the_claim_deadline_a_winner_is_no_longer_paid() {
    // The claim deadline: sale_end + claim_days (CONTRACT.md; 60 days by
    // default, as for French instant games), here 0 days.
    let Some(app) = spawn_app_with(|c| c.claim_days = 0).await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let mut taken = HashSet::new();
    let (w, win) = pick(&printed, &mut taken, won);
    let (u, later) = pick(&printed, &mut taken, won);
    let unsold = take(&printed, &mut taken);
    for p in [&w, &u] {
        sell(&app, SHOP_A_TOKEN, SHOP_A, &p.serial).await;
    }
    let (_, wt) = redeem_ok(&app, &w.code, None).await;
    play_plan(&app, &wt, &w.serial, &win).await;
    let (_, ut) = redeem_ok(&app, &u.code, None).await;
    app.play(&ut, &u.serial, &later.actions[..1]).await;

    // Only the operator closes an emission; an unknown one is not found.
    let close = format!("/api/admin/emissions/{emission}/close");
    assert_error(&app.post(&close, None, json!({})).await, 401, "unauthorized");
    let r = app.post(&close, Some(SHOP_A_TOKEN), json!({})).await;
    assert!([401, 403].contains(&r.status.as_u16()), "a retailer is not the operator: {}", r.json);
    let player = app.register().await;
    assert_error(&app.post(&close, Some(&player), json!({})).await, 403, "forbidden");
    assert_error(&app.admin_post("/api/admin/emissions/99/close", json!({})).await, 404, "not_found");
    let before = now_ms();
    let r = app.admin_post(&close, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["emission"], emission);
    let sale_end = r.json["sale_end_ms"].as_i64().unwrap_or_else(|| panic!("sale_end_ms in {}", r.json));
    assert!((before - 1000..=now_ms() + 1000).contains(&sale_end), "{sale_end}");
    assert_eq!(r.json["claim_end_ms"], sale_end, "claim_days = 0");
    tokio::time::sleep(Duration::from_millis(20)).await;
    // Closed once: again, 409, and the end of sale stays.
    let snap = snapshot(&app).await;
    assert_error(&app.admin_post(&close, json!({})).await, 409, "conflict");
    assert_unchanged(&snap, &snapshot(&app).await, "closing again");
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM audit_log WHERE kind = 'sale_ended'").await, 1);

    // The sale has ended: selling is refused.
    let snap = snapshot(&app).await;
    assert_error(&app.retail("sell", Some(SHOP_A_TOKEN), &unsold.serial).await, 409, "conflict");
    // The deadline has passed: the winner is not paid (409, saying why).
    let r = app.retail("pay", Some(SHOP_A_TOKEN), &w.serial).await;
    assert_error(&r, 409, "conflict");
    let m = r.json["message"].as_str().unwrap().to_lowercase();
    assert!(m.contains("deadline") || m.contains("claim") || m.contains("limite"), "{m}");
    assert_unchanged(&snap, &snapshot(&app).await, "selling after the end of sale, paying after the deadline");
    let v = app.retail("validate", Some(SHOP_A_TOKEN), &w.serial).await;
    assert_eq!((v.json["status"].as_str(), v.json["claim_until_ms"].as_i64()), (Some("won"), Some(sale_end)));
    // An unfinished ticket can always be finished; its prize is no more payable.
    for (seq, a) in later.actions.iter().enumerate().skip(1) {
        let r = app.post(&format!("/api/tickets/{}/actions", u.serial), Some(&ut), action_body(seq as u64, *a)).await;
        assert_eq!(r.status, 200, "{}", r.json);
    }
    assert_error(&app.retail("pay", Some(SHOP_A_TOKEN), &u.serial).await, 409, "conflict");
    let t = app.get(&format!("/api/tickets/{}", u.serial), Some(&ut)).await;
    assert_eq!(t.json["ticket"]["status"], "won");
    assert_eq!(t.json["ticket"]["retail"]["claim_until_ms"], sale_end);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_a_winner_is_paid_until_60_days_after_the_end_of_sale() {
    let Some(app) = spawn_app().await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let mut taken = HashSet::new();
    let (w, win) = pick(&printed, &mut taken, won);
    let unsold = take(&printed, &mut taken);
    sell(&app, SHOP_B_TOKEN, SHOP_B, &w.serial).await;
    let (_, wt) = redeem_ok(&app, &w.code, None).await;
    play_plan(&app, &wt, &w.serial, &win).await;
    let r = app.admin_post(&format!("/api/admin/emissions/{emission}/close"), json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let sale_end = r.json["sale_end_ms"].as_i64().unwrap();
    assert_eq!(r.json["claim_end_ms"], sale_end + 60 * DAY_MS, "{}", r.json);
    assert_error(&app.retail("sell", Some(SHOP_A_TOKEN), &unsold.serial).await, 409, "conflict");
    let v = app.retail("validate", Some(SHOP_B_TOKEN), &w.serial).await;
    assert_eq!(v.json["claim_until_ms"], sale_end + 60 * DAY_MS, "{}", v.json);
    let p = app.retail("pay", Some(SHOP_B_TOKEN), &w.serial).await;
    assert_eq!(p.status, 200, "{}", p.json);
    assert_eq!(p.json["status"], "paid");
    let r = app.admin_get(&format!("/api/admin/emissions/{emission}")).await;
    assert_eq!(r.json["totals"]["prizes_paid_cents"], win.game.result().unwrap().prize_cents);
    assert_eq!(r.json["totals"]["prizes_owed_cents"], 0);
    // Closing the online emission ends its sale too: nothing left to buy.
    let player = app.register().await;
    app.buy(&player).await;
    let r = app.admin_post("/api/admin/emissions/1/close", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_error(&app.post("/api/tickets", Some(&player), json!({})).await, 503, "sold_out");
    assert_eq!(app.balance(&player).await, START - 300);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn retail_tickets_concurrent_wrong_codes_from_one_address_get_no_more_than_the_limit() {
    // "failed attempts limited per client address": however many at once.
    let limit = 20u32;
    let Some(app) = spawn_app_with(|c| {
        c.trust_forwarded_for = true;
        c.redeem_failures_per_address = limit;
    })
    .await
    else {
        return;
    };
    let app = Arc::new(app);
    let tasks: Vec<_> = (0..64u64)
        .map(|k| {
            let app = app.clone();
            tokio::spawn(async move {
                let mut looked_up = 0u32;
                for code in wrong_codes(500 + k).take(5) {
                    let r = app.redeem_from("203.0.113.99", &code).await;
                    match r.status.as_u16() {
                        404 => looked_up += 1,
                        429 => {}
                        s => panic!("{s}: {}", r.json),
                    }
                }
                looked_up
            })
        })
        .collect();
    let mut looked_up = 0;
    for t in tasks {
        looked_up += t.await.unwrap();
    }
    assert!(looked_up <= limit, "{looked_up} wrong codes were looked up from one address, the limit is {limit}");
    shutdown_shared(app).await;
}

/// How many movements and ledger entries a movement id has.
async fn movement_rows(app: &TestApp, movement: &str) -> (i64, i64) {
    (
        app.query_i64(&format!("SELECT COUNT(*) FROM movements WHERE id = '{movement}'")).await,
        app.query_i64(&format!("SELECT COUNT(*) FROM ledger_entries WHERE movement_id = '{movement}'")).await,
    )
}

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

/// "Life cycle: sold, then in play once the play code opened it": validate
/// and the operator's figures count a redeemed ticket in play before its
/// first action, and a sold one not redeemed as sold only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_a_redeemed_ticket_is_in_play_before_its_first_action() {
    let Some(app) = spawn_app().await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let mut taken = HashSet::new();
    let opened = take(&printed, &mut taken);
    let closed = take(&printed, &mut taken);
    for p in [&opened, &closed] {
        sell(&app, SHOP_A_TOKEN, SHOP_A, &p.serial).await;
    }
    let (ticket, _) = redeem_ok(&app, &opened.code, None).await;
    assert_eq!((ticket["status"].as_str(), ticket["seq"].as_u64()), (Some("in_play"), Some(0)));
    let v = app.retail("validate", Some(SHOP_B_TOKEN), &opened.serial).await;
    assert_eq!(v.json["status"], "in_play", "{}", v.json);
    let v = app.retail("validate", Some(SHOP_B_TOKEN), &closed.serial).await;
    assert_eq!(v.json["status"], "sold", "{}", v.json);
    let r = app.admin_get(&format!("/api/admin/emissions/{emission}")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let totals = &r.json["totals"];
    assert_eq!((totals["sold"].as_i64(), totals["in_play"].as_i64()), (Some(2), Some(1)), "{totals}");
    // The figures the operator's report reads from the database directly.
    let reports = server::report_from(&app.db_url, Some(emission as u32)).await.unwrap();
    assert_eq!((reports[0].totals.sold, reports[0].totals.in_play), (2, 1));
    // Its redemption and its game were written together, with their audit entry.
    let redeemed = app.query_i64("SELECT COUNT(*) FROM audit_log WHERE kind = 'ticket_redeemed'").await;
    let games = app
        .query_i64(&format!(
            "SELECT COUNT(*) FROM ticket_games g JOIN tickets t ON t.id = g.ticket_id WHERE t.serial = '{}'",
            opened.serial
        ))
        .await;
    assert_eq!((redeemed, games), (1, 1));
    app.shutdown().await;
}
