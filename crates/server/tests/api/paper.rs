//! The paper channel (docs/contract.md "Retail tickets"): a ticket
//! printed in a paper block is sold in a shop, scratched, played online
//! with its play code, and its prize is paid once by the retailer, never
//! credited to a wallet. "Impossible moves are refused with the documented
//! errors and change nothing". The play codes' limits are in
//! paper_codes.rs, the operator report in paper_report.rs, a shop's
//! retries in paper_retries.rs.

use crate::helpers::*;
use engine::{Action, Rank};
use record::{Record, verify};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A small paper table (blocks of 50, art. 2 allowed off by the tests' configuration).
pub(crate) fn paper_table() -> String {
    testkit::blocks_of_50("PAP")
}

pub(crate) const DAY_MS: i64 = 24 * 60 * 60 * 1000;

pub(crate) fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

pub(crate) fn won(p: &Foreseen) -> bool {
    p.game.result().unwrap().prize_cents > 0
}

pub(crate) fn lost(p: &Foreseen) -> bool {
    p.game.result().unwrap().prize_cents == 0
}

/// Creates a paper emission of `blocks` blocks; its number.
pub(crate) async fn emit_paper(app: &TestApp, blocks: u32) -> u64 {
    let r = app
        .admin_post("/api/admin/emissions", json!({"table": paper_table(), "blocks": blocks, "channel": "paper"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["channel"], "paper");
    r.json["emission"].as_u64().unwrap()
}

/// The printed tickets not taken yet, in print order, that admit a plan
/// with `want`; the first one is taken.
pub(crate) fn pick(
    printed: &[Printed],
    taken: &mut HashSet<String>,
    want: impl Fn(&Foreseen) -> bool,
) -> (Printed, Foreseen) {
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
pub(crate) fn take(printed: &[Printed], taken: &mut HashSet<String>) -> Printed {
    let p = printed.iter().find(|p| !taken.contains(&p.serial)).expect("a printed ticket left").clone();
    taken.insert(p.serial.clone());
    p
}

/// The stored id of a ticket (movement ids are `retail_sale:<id>`, `prize:<id>`).
pub(crate) async fn ticket_id(app: &TestApp, serial: &str) -> i64 {
    app.query_i64(&format!("SELECT id FROM tickets WHERE serial = '{serial}'")).await
}

/// The amount movement `movement` puts on the house account `name`.
pub(crate) async fn house_entry(app: &TestApp, movement: &str, name: &str) -> i64 {
    app.query_i64(&format!(
        "SELECT CAST(COALESCE(SUM(l.amount_cents), 0) AS BIGINT) FROM ledger_entries l
         JOIN accounts a ON a.id = l.account_id WHERE l.movement_id = '{movement}' AND a.name = '{name}'"
    ))
    .await
}

/// The one account of movement `movement` that is not a house account, and
/// the amount on it.
pub(crate) async fn other_entry(app: &TestApp, movement: &str) -> (i64, i64) {
    let not_house = format!("l.movement_id = '{movement}' AND a.name NOT LIKE 'house:%'");
    let from = "FROM ledger_entries l JOIN accounts a ON a.id = l.account_id";
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) {from} WHERE {not_house}")).await, 1, "{movement}");
    let account = app.query_i64(&format!("SELECT CAST(l.account_id AS BIGINT) {from} WHERE {not_house}")).await;
    let amount = app.query_i64(&format!("SELECT l.amount_cents {from} WHERE {not_house}")).await;
    (account, amount)
}

/// Sells a printed ticket at a shop: 200, status sold, by that shop.
pub(crate) async fn sell(app: &TestApp, shop_token: &str, shop: &str, serial: &str) -> Value {
    let r = app.retail("sell", Some(shop_token), serial).await;
    assert_eq!(r.status, 200, "sell {serial}: {}", r.json);
    assert_eq!(r.json["status"], "sold", "{}", r.json);
    assert_eq!(r.json["sold_by"], shop, "{}", r.json);
    r.json
}

/// Redeems a play code: 200, and the ticket and its token.
pub(crate) async fn redeem_ok(app: &TestApp, code: &str, player: Option<&str>) -> (Value, String) {
    let r = app.redeem(code, player).await;
    assert_eq!(r.status, 200, "redeem {code}: {}", r.json);
    let token = r.json["token"].as_str().unwrap_or_else(|| panic!("a token: {}", r.json)).to_string();
    (r.json["ticket"].clone(), token)
}

/// Plays a plan with `token` (a ticket's or its owner's) and checks every
/// answer against the engine; the last ticket.
pub(crate) async fn play_plan(app: &TestApp, token: &str, serial: &str, plan: &Foreseen) -> Vec<Resp> {
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
pub(crate) fn names_amount(message: &str, cents: u64) -> bool {
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
pub(crate) async fn snapshot(app: &TestApp) -> Vec<String> {
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

pub(crate) fn assert_unchanged(before: &[String], after: &[String], what: &str) {
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
pub(crate) fn retry_after(r: &Resp, window_s: u64) -> u64 {
    assert_error(r, 429, "too_many_attempts");
    let v = r.headers.get("retry-after").unwrap_or_else(|| panic!("429 without Retry-After: {}", r.json));
    let s: u64 = v.to_str().unwrap().trim().parse().unwrap_or_else(|_| panic!("Retry-After in seconds: {v:?}"));
    assert!((1..=window_s).contains(&s), "Retry-After {s} within the window of {window_s} s");
    s
}

/// A play code no ticket has: 80 bits from a fixed generator (50 live
/// codes among 2^80: a hit would be a 1 in 10^22 accident).
pub(crate) fn wrong_codes(seed: u64) -> impl Iterator<Item = String> {
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

/// A paper ticket's token (from its play code) opens this ticket and only
/// it: not an online ticket of its owner, not another printed ticket, not
/// the player's account; a forged token opens nothing.
async fn the_tickets_token_opens_only_it(
    app: &TestApp,
    token: &str,
    serial: &str,
    player: &str,
    ticket: &Value,
    printed: &[Printed],
    taken: &HashSet<String>,
) {
    let r = app.get(&format!("/api/tickets/{serial}"), Some(token)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(&r.json["ticket"], ticket);
    let online = app.buy(player).await;
    assert_eq!(online["retail"], Value::Null, "an online ticket: {online}");
    let online_id = online["id"].as_str().unwrap();
    assert_error(&app.get(&format!("/api/tickets/{online_id}"), Some(token)).await, 404, "not_found");
    let r = app.post(&format!("/api/tickets/{online_id}/actions"), Some(token), action_body(0, Action::Draw)).await;
    assert_error(&r, 404, "not_found");
    let other = &printed.iter().find(|p| !taken.contains(&p.serial)).unwrap().serial;
    assert_error(&app.get(&format!("/api/tickets/{other}"), Some(token)).await, 404, "not_found");
    assert_error(&app.get("/api/me", Some(token)).await, 401, "unauthorized");
    assert_error(&app.get("/api/tickets", Some(token)).await, 401, "unauthorized");
    assert_error(&app.post("/api/tickets", Some(token), json!({})).await, 401, "unauthorized");
    let forged = format!("{}{}", &token[..token.len() - 1], if token.ends_with('0') { '1' } else { '0' });
    assert_error(&app.get(&format!("/api/tickets/{serial}"), Some(&forged)).await, 401, "unauthorized");
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_a_paper_ticket_is_sold_redeemed_played_validated_and_paid_once() {
    let Some(app) = spawn_app().await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    assert_eq!(printed.len(), 50);
    let table = math::PrizeTable::parse_toml(&paper_table()).unwrap();
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
    the_tickets_token_opens_only_it(&app, &token, serial, &player, &ticket, &printed, &taken).await;

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
}

/// Every retail call refuses a serial with a wrong check digit (400,
/// "check the serial"), one of no ticket (404) and what is not a serial
/// (400); `serial` is a printed ticket's.
async fn refuses_serials_of_no_ticket(app: &TestApp, serial: &str) {
    let s = serial;
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
}

both! {
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
    refuses_serials_of_no_ticket(&app, &w.serial).await;

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
}

both! {
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
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_after_the_claim_deadline_a_winner_is_no_longer_paid() {
    // The claim deadline: claim_days (30) after the closing notice's date,
    // then the next working day (docs/shops.md). Here the notice is dated
    // 1 January 2020 (the emission's creation moved back before it): the
    // deadline was Friday 31 January 2020, long past.
    let Some(app) = spawn_app().await else { return };
    let emission = emit_paper(&app, 1).await;
    app.exec_sql(&format!("UPDATE emissions SET created_ms = 1577833200000 WHERE id = {emission}")).await.unwrap();
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
    // A notice's date that is not a day, before the emission, or over a
    // year ahead, and a reference too long: 400, nothing closed.
    let snap = snapshot(&app).await;
    for bad in [
        json!({"closing_notice_date": "2020-02-30"}),
        json!({"closing_notice_date": "1/1/2020"}),
        json!({"closing_notice_date": "2019-12-31"}),
        json!({"closing_notice_date": "2999-01-01"}),
        json!({"closing_notice_date": "2020-01-01", "closing_notice_ref": "x".repeat(201)}),
        json!({"closing_notice_date": "2020-01-01", "other": 1}),
    ] {
        assert_error(&app.admin_post(&close, bad.clone()).await, 400, "bad_request");
    }
    assert_unchanged(&snap, &snapshot(&app).await, "closing with a wrong notice");
    let before = now_ms();
    let r = app
        .admin_post(
            &close,
            json!({"closing_notice_date": "2020-01-01", "closing_notice_ref": "JO n° 1 du 1er janvier 2020"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["emission"], emission);
    let sale_end = r.json["sale_end_ms"].as_i64().unwrap_or_else(|| panic!("sale_end_ms in {}", r.json));
    assert!((before - 1000..=now_ms() + 1000).contains(&sale_end), "{sale_end}");
    assert_eq!(r.json["closing_notice_date"], "2020-01-01");
    assert_eq!(r.json["closing_notice_ref"], "JO n° 1 du 1er janvier 2020");
    // The last instant of 31 January 2020 in Paris (UTC+1).
    assert_eq!(r.json["claim_end_ms"], 1_580_511_599_999_i64, "{}", r.json);
    let claim_end = 1_580_511_599_999_i64;
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
    assert_eq!((v.json["status"].as_str(), v.json["claim_until_ms"].as_i64()), (Some("won"), Some(claim_end)));
    // An unfinished ticket can always be finished; its prize is no more payable.
    for (seq, a) in later.actions.iter().enumerate().skip(1) {
        let r = app.post(&format!("/api/tickets/{}/actions", u.serial), Some(&ut), action_body(seq as u64, *a)).await;
        assert_eq!(r.status, 200, "{}", r.json);
    }
    assert_error(&app.retail("pay", Some(SHOP_A_TOKEN), &u.serial).await, 409, "conflict");
    let t = app.get(&format!("/api/tickets/{}", u.serial), Some(&ut)).await;
    assert_eq!(t.json["ticket"]["status"], "won");
    assert_eq!(t.json["ticket"]["retail"]["claim_until_ms"], claim_end);
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_a_winner_is_paid_until_30_days_after_the_closing_notice_then_a_working_day() {
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
    // No notice given: dated today (Paris). The deadline's day is 30 to 34
    // days later (a Sunday and holidays after it move it), it ends at a
    // Paris midnight, and it is not a Sunday (the exact dates, holidays
    // included: the unit tests of core::claims).
    let sale_end = r.json["sale_end_ms"].as_i64().unwrap();
    let notice = r.json["closing_notice_date"].as_str().unwrap_or_else(|| panic!("{}", r.json)).to_string();
    let claim_end = r.json["claim_end_ms"].as_i64().unwrap();
    let notice_day = format::calendar::days_from_civil(format::calendar::parse_day(&notice).unwrap());
    // Paris is UTC+1 or UTC+2: its day is the UTC day or the next.
    let sale_day = sale_end.div_euclid(DAY_MS);
    assert!(notice_day == sale_day || notice_day == sale_day + 1, "{notice}");
    // The next instant is a Paris midnight: 22:00 or 23:00 UTC of the deadline's day.
    let next = claim_end + 1;
    assert!([22 * 3_600_000, 23 * 3_600_000].contains(&next.rem_euclid(DAY_MS)), "a Paris midnight: {claim_end}");
    let deadline_day = next.div_euclid(DAY_MS);
    assert!((30..=34).contains(&(deadline_day - notice_day)), "{notice} -> {}", r.json);
    let deadline = format::calendar::civil_from_days(deadline_day);
    assert!(!format::calendar::is_sunday(deadline), "the deadline is never a Sunday: {deadline:?}");
    assert_error(&app.retail("sell", Some(SHOP_A_TOKEN), &unsold.serial).await, 409, "conflict");
    let v = app.retail("validate", Some(SHOP_B_TOKEN), &w.serial).await;
    assert_eq!(v.json["claim_until_ms"], claim_end, "{}", v.json);
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
}

both! {
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
}
