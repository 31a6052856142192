//! The paper channel on a phone, 390 CSS pixels wide, end to end: the shop
//! sells a printed ticket at `/shop` (after a wrong retailer token, a sale
//! twice and a mistyped serial, each refused in words); the player, logged
//! in on the phone, opens it from its QR code's address (`/play?code=...`,
//! refused while unsold), with their account loaded and the ticket joining
//! their list; the prizes show as already scratched (on paper); a reload
//! without the account resumes it with the ticket's own token; the result
//! says a retailer pays the prize (nothing credited). Then the shop checks
//! it (a winner to pay), pays it, checks it again (paid), and paying again
//! is refused in the page; the player's page says it was paid.

use crate::game::assert_table_shows;
use crate::harness::*;
use crate::webdriver::Screen;
use engine::Action;
use serde_json::{Value, json};

pub(crate) const OPERATOR: &str = "browser-operator-token-0001";
pub(crate) const RETAILER: &str = "browser-retailer-token-0001";
pub(crate) const SHOP: &str = "Tabac du Port";
pub(crate) const OTHER_SHOP: &str = "Bar des Sports";
pub(crate) const OTHER_RETAILER: &str = "browser-retailer-token-0002";

/// One ticket of a paper block's print file.
pub(crate) struct Printed {
    pub serial: String,
    pub code: String,
    /// `{"5": cents, ..., "8": cents}` as the ticket's `prizes_cents`.
    pub prizes: Value,
}

/// `GET /api/admin/emissions/{emission}/blocks/1/print.csv`, by its header's column names.
pub(crate) async fn print_file(srv: &TestServer, emission: u64) -> Vec<Printed> {
    let text = srv.get_text(&format!("/api/admin/emissions/{emission}/blocks/1/print.csv"), OPERATOR).await;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name} in {header:?}"));
    let (serial, code) = (col("serial"), col("play_code"));
    let prizes = ["5", "6", "7", "8"].map(|n| (n, col(&format!("prize_{n}"))));
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            let prizes: serde_json::Map<String, Value> =
                prizes.iter().map(|(n, i)| (n.to_string(), json!(f[*i].parse::<i64>().unwrap()))).collect();
            Printed { serial: f[serial].to_string(), code: f[code].to_string(), prizes: Value::Object(prizes) }
        })
        .collect()
}

/// A French string of the page (`web/i18n.js`), `{name}` placeholders filled.
async fn fr(b: &Browser, key: &str, params: &[(&str, &str)]) -> String {
    let v = b
        .exec_async(
            "const key = arguments[0]; const done = arguments[arguments.length - 1];
             import('/i18n.js').then(m => done(m.STRINGS.fr[key] ?? null), e => done(String(e)));",
            json!([key]),
        )
        .await;
    let mut s = v.as_str().unwrap_or_else(|| panic!("no French string {key}")).to_string();
    for (k, val) in params {
        s = s.replace(&format!("{{{k}}}"), val);
    }
    s
}

/// Clicks one of the counter's buttons and waits for the answer it shows:
/// `[action, ok, http status, ticket status, message, title]`.
pub(crate) async fn counter(b: &Browser, button: &str) -> (String, bool, u64, String, String, String) {
    let n = b.exec("return Number(document.getElementById('answer').dataset.n || 0)", json!([])).await;
    let n = n.as_u64().unwrap();
    b.click(button).await;
    b.wait_for(
        &format!(
            "document.body.dataset.state === 'idle' && Number(document.getElementById('answer').dataset.n || 0) === {}",
            n + 1
        ),
        &format!("the answer to {button}"),
    )
    .await;
    let v = b
        .exec(
            "const a = document.getElementById('answer');
             return [a.dataset.action, a.dataset.ok, Number(a.dataset.http), a.dataset.status,
                     document.getElementById('answer-message').textContent, document.getElementById('answer-title').textContent];",
            json!([]),
        )
        .await;
    let s = |i: usize| v[i].as_str().unwrap_or_default().to_string();
    (s(0), s(1) == "true", v[2].as_u64().unwrap(), s(3), s(4), s(5))
}

/// The shop's counter: a wrong retailer token refused and asked again,
/// then the ticket `serial` sold, sold again (the same answer), a ticket
/// another shop sold (`theirs`) refused, and a mistyped check digit.
async fn sell_at_the_counter(b: &Browser, srv: &TestServer, serial: &str, theirs: &str) {
    // The shop's counter: a wrong retailer token is refused at sign-in, in
    // words, and nothing is kept; a player's token too.
    b.open("/shop").await;
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "login");
    assert_fits(b, 390, "shop login").await;
    let refused = |why: &'static str| async move {
        b.click("#login-go").await;
        b.wait_for("document.body.dataset.state === 'idle' && !document.getElementById('login-error').hidden", why)
            .await;
        assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "login", "{why}");
        assert_eq!(b.exec("return localStorage.getItem('asc.shopToken')", json!([])).await, Value::Null, "{why}");
        assert_eq!(b.exec("return document.getElementById('shop-signed').hidden", json!([])).await, true);
        b.text("#login-error").await
    };
    // Refused on purpose: a wrong token, a player's token.
    b.expect_http_error("/api/retail/me", 401);
    b.expect_http_error("/api/retail/me", 403);
    b.type_into("#shop-token", "not-a-retailer-token-0000").await;
    assert_eq!(refused("a wrong token").await, fr(b, "shop.err.auth", &[]).await);
    assert_fits(b, 390, "token refused").await;
    b.shot("retail-1a-token-refused").await;
    let player = srv.post("/api/players", None, &json!({})).await["token"].as_str().unwrap().to_string();
    b.type_into("#shop-token", &player).await;
    assert_eq!(refused("a player's token").await, fr(b, "shop.err.not_retailer", &[]).await);
    // The shop's token: signed in, the header names the shop.
    b.type_into("#shop-token", RETAILER).await;
    b.click("#login-go").await;
    b.wait_for("document.body.dataset.view === 'counter' && document.body.dataset.state === 'idle'", "signed in").await;
    assert_eq!(b.exec("return localStorage.getItem('asc.shopToken')", json!([])).await, RETAILER, "kept");
    assert_eq!(b.exec("return document.getElementById('shop-signed').hidden", json!([])).await, false);
    assert_eq!(b.text("#shop-name").await, SHOP);
    assert_eq!(b.exec("return document.getElementById('serial').inputMode", json!([])).await, "text");
    // The reminder beside "Vendre" (French law forbids selling games of
    // chance to minors), in both languages.
    assert_eq!(b.text("#minors [data-i18n]").await, fr(b, "shop.minors", &[]).await);
    assert_eq!(b.text("#minors [data-i18n]").await, "Vente interdite aux mineurs");
    let beside = b
        .exec(
            "const s = document.getElementById('do-sell').getBoundingClientRect(), m = document.getElementById('minors').getBoundingClientRect();
             return [m.width > 0 && m.height > 0, m.top >= s.bottom - 1 && m.top - s.bottom < 60, document.getElementById('do-sell').getAttribute('aria-describedby')];",
            json!([]),
        )
        .await;
    assert_eq!(beside, json!([true, true, "minors"]), "shown right under the actions, and read with Vendre");
    b.click("#lang").await;
    assert_eq!(b.text("#minors [data-i18n]").await, "Sale to minors is prohibited");
    b.shot("retail-1b-counter-en").await;
    b.click("#lang").await;
    b.type_into("#serial", serial).await;

    // Sold; sold again by this shop (its answer was lost, say): the
    // sale's answer again, nothing sold twice.
    let (action, ok, _, status, message, _) = counter(b, "#do-sell").await;
    assert_eq!((action.as_str(), ok, status.as_str()), ("sell", true, "sold"), "{message}");
    assert!(message.starts_with("Ticket vendu"), "{message}");
    assert_fits(b, 390, "sold").await;
    b.shot("retail-1-sold").await;
    let (_, ok, http, status, again, _) = counter(b, "#do-sell").await;
    assert_eq!((ok, http, status.as_str()), (true, 200, "sold"), "{again}");
    assert_eq!(again, fr(b, "shop.again.sell", &[]).await);
    assert_eq!(b.exec("return document.getElementById('answer').dataset.replayed", json!([])).await, "true");
    // A ticket another shop sold: refused, with who sold it.
    srv.post("/api/retail/sell", Some(OTHER_RETAILER), &json!({"serial": theirs})).await;
    b.type_into("#serial", theirs).await;
    b.expect_http_error("/api/retail/sell", 409);
    let (_, ok, http, _, message, title) = counter(b, "#do-sell").await;
    assert_eq!((ok, http), (false, 409), "{message}");
    assert_eq!(title, fr(b, "shop.refused.sell", &[]).await);
    assert_eq!(message, fr(b, "shop.err.sold", &[("shop", OTHER_SHOP)]).await);
    b.type_into("#serial", serial).await;
    // A mistyped check digit: "check the serial", in the counter's words.
    let last = serial.chars().last().unwrap().to_digit(10).unwrap();
    let mistyped = format!("{}{}", &serial[..serial.len() - 1], (last + 1) % 10);
    b.type_into("#serial", &mistyped).await;
    b.expect_http_error("/api/retail/validate", 400);
    let (_, ok, http, _, message, _) = counter(b, "#do-validate").await;
    assert_eq!((ok, http), (false, 400), "{message}");
    assert_eq!(message, fr(b, "shop.err.serial", &[]).await);
    assert_fits(b, 390, "mistyped serial").await;
    b.shot("retail-2-mistyped").await;
}

/// At the counter (the token was kept), ticket `serial`, won `prize`:
/// check, pay, check again, pay again (the payment's answer again).
async fn validate_and_pay_at_the_counter(b: &Browser, srv: &TestServer, serial: &str, prize: i64) {
    // At the counter (the token was kept): check, pay, check again, pay again.
    b.open("/shop").await;
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "counter");
    b.type_into("#serial", &serial.to_lowercase().replace('-', "")).await;
    let (action, ok, _, status, message, _) = counter(b, "#do-validate").await;
    assert_eq!((action.as_str(), ok, status.as_str()), ("validate", true, "won"), "{message}");
    assert!(message.starts_with("Gagnant"), "{message}");
    assert_eq!(b.exec("return document.getElementById('answer').dataset.kind", json!([])).await, "pay");
    assert_eq!(
        b.exec("return document.getElementById('answer-prize').dataset.cents", json!([])).await,
        prize.to_string()
    );
    assert_fits(b, 390, "validate").await;
    b.shot("retail-5-validate").await;

    // "Payer" asks first, with the amount to hand over (in English, then
    // in French); cancelling pays nothing and writes nothing.
    let prize_fr = page_money(b, prize).await;
    b.click("#lang").await;
    let prize_en = page_money(b, prize).await;
    open_pay_question(b).await;
    assert_eq!(b.text("#pay-title").await, format!("Pay {prize_en} to the bearer?"));
    assert_eq!(b.text("#pay-confirm").await, "Confirm the payment");
    assert!(b.text("#pay-text").await.contains(serial), "{}", b.text("#pay-text").await);
    b.shot("retail-5b-pay-question-en").await;
    b.click("#pay-cancel").await;
    b.click("#lang").await;
    let before = shop_figures(srv, serial).await;
    open_pay_question(b).await;
    assert_eq!(b.text("#pay-title").await, format!("Payer {prize_fr} au porteur ?"));
    assert_eq!(b.text("#pay-title").await, fr(b, "shop.pay.ask", &[("prize", &prize_fr)]).await);
    assert_eq!(
        b.exec("return document.activeElement.id", json!([])).await,
        "pay-cancel",
        "the safe answer has the focus"
    );
    assert_fits(b, 390, "pay question").await;
    b.shot("retail-5c-pay-question").await;
    b.click("#pay-cancel").await;
    assert_eq!(b.exec("return document.getElementById('pay-dialog').open", json!([])).await, false);
    assert_eq!(b.exec("return document.getElementById('pay-dialog').dataset.answered", json!([])).await, "cancel");
    assert_eq!(shop_figures(srv, serial).await, before, "cancel pays nothing");
    assert_eq!(before.0, "won", "still a winner to pay");

    // Confirmed, with a double press: paid once.
    let n = b.exec("return Number(document.getElementById('answer').dataset.n || 0)", json!([])).await;
    open_pay_question(b).await;
    b.exec(
        "const c = document.getElementById('pay-confirm'); c.click(); c.click(); document.getElementById('do-pay').click();",
        json!([]),
    )
    .await;
    b.wait_for(
        &format!(
            "document.body.dataset.state === 'idle' && Number(document.getElementById('answer').dataset.n) === {}",
            n.as_u64().unwrap() + 1
        ),
        "the payment",
    )
    .await;
    let (action, ok, status, message) = (
        b.exec("return document.getElementById('answer').dataset.action", json!([])).await,
        b.exec("return document.getElementById('answer').dataset.ok", json!([])).await,
        b.exec("return document.getElementById('answer').dataset.status", json!([])).await,
        b.text("#answer-message").await,
    );
    assert_eq!((action, ok, status), (json!("pay"), json!("true"), json!("paid")), "{message}");
    assert!(message.starts_with("Payez"), "{message}");
    let after = shop_figures(srv, serial).await;
    assert_eq!((after.0.as_str(), after.1, after.2), ("paid", 1, prize), "one payment, of the prize");
    b.shot("retail-6-paid").await;

    // Its receipt: shop, serial, amount, date and time, reference; printed alone.
    let paid_ms =
        srv.post("/api/retail/validate", Some(RETAILER), &json!({"serial": serial})).await["paid_ms"].as_i64().unwrap();
    b.click("#answer-receipt").await;
    check_receipt(b, serial, prize, paid_ms, "fr").await;
    assert_fits(b, 390, "receipt").await;
    b.shot("retail-6b-receipt").await;
    b.click("#receipt-back").await;
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "counter");

    let (_, ok, _, status, message, _) = counter(b, "#do-validate").await;
    assert_eq!((ok, status.as_str()), (true, "paid"), "{message}");
    assert!(message.starts_with("Déjà payé"), "{message}");
    assert!(b.text("#answer-paid").await.contains(SHOP), "paid by: {}", b.text("#answer-paid").await);

    // Paid again by the same shop (its answer lost, or a second press): the
    // payment's answer again, and the screen says not to pay twice.
    let (_, ok, http, status, message, _) = counter(b, "#do-pay").await;
    assert_eq!((ok, http, status.as_str()), (true, 200, "paid"), "{message}");
    assert_eq!(message, fr(b, "shop.again.pay", &[]).await);
    assert_eq!(b.exec("return document.getElementById('answer').dataset.kind", json!([])).await, "info");
    assert!(message.contains("Déjà payé"), "{message}");
    assert_fits(b, 390, "paid again").await;
    b.shot("retail-7-paid-again").await;
}

/// An amount as the page writes it, in its language.
async fn page_money(b: &Browser, cents: i64) -> String {
    let v = b
        .exec_async(
            "const c = arguments[0]; const done = arguments[arguments.length - 1];
             import('/i18n.js').then(m => done(m.money(c)), e => done(String(e)));",
            json!([cents]),
        )
        .await;
    v.as_str().unwrap().to_string()
}

/// Presses "Payer" and waits for its question.
async fn open_pay_question(b: &Browser) {
    b.click("#do-pay").await;
    b.wait_for(
        "document.getElementById('pay-dialog').open && document.body.dataset.state === 'idle'",
        "the question before paying",
    )
    .await;
}

/// What the server holds of a ticket's payment: its status, and this
/// shop's payments of the day (count, amount).
async fn shop_figures(srv: &TestServer, serial: &str) -> (String, i64, i64) {
    let v = srv.post("/api/retail/validate", Some(RETAILER), &json!({"serial": serial})).await;
    let r = srv.get("/api/retail/report", RETAILER).await;
    (
        v["status"].as_str().unwrap().to_string(),
        r["paid"]["count"].as_i64().unwrap(),
        r["paid"]["amount_cents"].as_i64().unwrap(),
    )
}

/// The receipt screen shows the payment of `serial`, and its print rules
/// leave the receipt alone on the page (applied here to the screen).
async fn check_receipt(b: &Browser, serial: &str, prize: i64, paid_ms: i64, lang: &str) {
    b.wait_for("document.body.dataset.view === 'receipt'", "the receipt").await;
    assert_eq!(b.text("#receipt-shop").await, SHOP);
    assert_eq!(b.text("#receipt-serial").await, serial);
    assert_eq!(b.text("#receipt-amount").await, page_money(b, prize).await);
    let reference = format!("R-{}-{}", serial.replace('-', ""), base36(paid_ms));
    assert_eq!(b.text("#receipt-ref").await, reference);
    let when = b
        .exec(
            "return new Intl.DateTimeFormat(arguments[0] === 'fr' ? 'fr-FR' : 'en-GB', {dateStyle: 'long', timeStyle: 'medium', timeZone: 'Europe/Paris'}).format(new Date(arguments[1]))",
            json!([lang, paid_ms]),
        )
        .await;
    let zone = if lang == "fr" { "heure de Paris" } else { "Paris time" };
    assert_eq!(b.text("#receipt-date").await, format!("{} ({zone})", when.as_str().unwrap()));
    // The print rules (style.css `@media print`) applied to the screen:
    // the header and the buttons go, the receipt stays.
    let printed = b
        .exec(
            "const rules = [];
             for (const sheet of document.styleSheets) for (const r of sheet.cssRules)
               if (r instanceof CSSMediaRule && r.media.mediaText === 'print') for (const x of r.cssRules) rules.push(x.cssText);
             // Into the page's own sheet (the CSP refuses a <style> element), then out again.
             const sheet = document.styleSheets[0], at = sheet.cssRules.length;
             rules.forEach((r, i) => sheet.insertRule(r, at + i));
             const shown = (id) => getComputedStyle(document.getElementById(id)).display !== 'none' && !document.getElementById(id).closest('[hidden]');
             const out = [rules.length > 0, shown('shop-receipt'), getComputedStyle(document.querySelector('.bar')).display, getComputedStyle(document.querySelector('.receipt-actions')).display, getComputedStyle(document.getElementById('receipt-ref')).color];
             rules.forEach(() => sheet.deleteRule(at));
             return out;",
            json!([]),
        )
        .await;
    assert_eq!(
        printed,
        json!([true, true, "none", "none", "rgb(0, 0, 0)"]),
        "the receipt prints alone, black on white"
    );
}

fn base36(mut n: i64) -> String {
    let digits = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut out = Vec::new();
    while n > 0 {
        out.push(digits[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap()
}

/// The shop's day, in English: its one sale and one payment, the net the
/// operator owes it, and the payment's receipt from the list.
async fn report_at_the_counter(b: &Browser, srv: &TestServer, serial: &str, prize: i64) {
    let price = srv.get("/api/retail/report", RETAILER).await["sold"]["amount_cents"].as_i64().unwrap();
    b.click("#lang").await;
    b.click("#open-report").await;
    b.wait_for(
        "document.body.dataset.view === 'report' && document.body.dataset.state === 'idle' && document.getElementById('shop-report').dataset.n === '1'",
        "the report",
    )
    .await;
    let today = b
        .exec("return new Intl.DateTimeFormat('en-CA', {timeZone: 'Europe/Paris', year: 'numeric', month: '2-digit', day: '2-digit'}).format(new Date())", json!([]))
        .await;
    assert_eq!(b.exec("return document.getElementById('report-day').value", json!([])).await, today);
    assert_eq!(b.text("#report-title").await, "Day report");
    assert_eq!(b.text("#report-sold").await, format!("1 ticket, {}", page_money(b, price).await));
    assert_eq!(b.text("#report-paid").await, format!("1 prize, {}", page_money(b, prize).await));
    // The net: what the shop owes the operator (sales - prizes paid), or is owed.
    let net = price - prize;
    let (key, amount) = match net.signum() {
        1 => ("shop.report.owes", net),
        -1 => ("shop.report.owed", -net),
        _ => ("shop.report.even", 0),
    };
    assert_eq!(b.exec("return document.getElementById('report-net').dataset.cents", json!([])).await, net.to_string());
    let amount = page_money(b, amount).await;
    assert_eq!(b.text("#report-net").await, b.string("en", key, &[("amount", &amount)]).await);
    if net < 0 {
        assert_eq!(
            b.text("#report-net").await,
            format!("The operator owes the shop {amount} (prizes paid beyond sales).")
        );
    }
    assert_eq!(b.exec("return document.querySelectorAll('#report-payments li').length", json!([])).await, 1);
    assert!(b.text("#report-payments li").await.contains(serial));
    assert_fits(b, 390, "report").await;
    b.shot("retail-9-report-en").await;
    // Another day: nothing.
    b.exec("document.getElementById('report-day').value = '2026-01-15'", json!([])).await;
    b.click("#report-go").await;
    b.wait_for(
        "document.getElementById('shop-report').dataset.n === '2' && document.body.dataset.state === 'idle'",
        "another day",
    )
    .await;
    assert_eq!(b.text("#report-sold").await, format!("0 tickets, {}", page_money(b, 0).await));
    assert_eq!(b.text("#report-net").await, "Nothing to settle: sales equal prizes paid.");
    assert_eq!(b.exec("return document.getElementById('report-none').hidden", json!([])).await, false);
    b.exec("document.getElementById('report-day').value = arguments[0]", json!([today])).await;
    b.click("#report-go").await;
    b.wait_for(
        "document.getElementById('shop-report').dataset.n === '3' && document.body.dataset.state === 'idle'",
        "today again",
    )
    .await;
    // The payment's receipt from the report, in English.
    let paid_ms =
        srv.post("/api/retail/validate", Some(RETAILER), &json!({"serial": serial})).await["paid_ms"].as_i64().unwrap();
    b.click("#report-payments button.receipt-open").await;
    check_receipt(b, serial, prize, paid_ms, "en").await;
    assert_eq!(b.text("#receipt-title").await, "Prize payment receipt");
    b.shot("retail-9b-receipt-en").await;
    b.click("#receipt-back").await;
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "report");
    // In French, the same day.
    b.click("#lang").await;
    assert_eq!(b.text("#report-title").await, fr(b, "shop.report.title", &[]).await);
    let amount = page_money(b, net.abs()).await;
    assert_eq!(b.text("#report-net").await, fr(b, key, &[("amount", &amount)]).await);
    b.shot("retail-9c-report").await;
    b.click("#report-back").await;
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "counter");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paper_ticket_from_its_qr_code_on_a_phone_then_validated_and_paid_at_the_shop() {
    let srv = spawn_server_with(|c| {
        c.operator_tokens = vec![OPERATOR.into()];
        c.retailer_tokens = vec![format!("{SHOP}:{RETAILER}"), format!("{OTHER_SHOP}:{OTHER_RETAILER}")];
    })
    .await;
    // A paper emission of the test table; its print file gives the serials and play codes.
    let r = srv
        .post("/api/admin/emissions", Some(OPERATOR), &json!({"table": TABLE, "blocks": 1, "channel": "paper"}))
        .await;
    assert_eq!(r["channel"], "paper", "{r}");
    let printed = print_file(&srv, r["emission"].as_u64().unwrap()).await;
    let ticket = &printed[0];
    let serial = ticket.serial.as_str();
    // Every ticket of the test server has the fixed server seed: the plan
    // of a win, with the client seed the player types.
    let plan = find_seed(serial, "paper", |p| p.game.result().unwrap().prize_cents > 0);
    let tricks = plan.game.result().unwrap().tricks;
    let prize = ticket.prizes[tricks.to_string()].as_i64().unwrap();
    assert!(prize > 0, "every count of 5 to 8 tricks pays in the test table");

    let Some(b) = browser(&srv.url, Screen::Phone { width: 390, height: 844 }).await else { return };

    // The player has an account on this phone.
    b.open("/?anim=0").await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    let player = b.token().await;

    // The QR code of a ticket the shop has not sold yet: said plainly,
    // nothing opens, and the account is loaded as on `/`.
    b.expect_http_error("/api/tickets/redeem", 409); // unsold, on purpose
    b.goto(&format!("{}/play?code={}&anim=0", srv.url, ticket.code)).await;
    b.wait_for(
        "document.body.dataset.state === 'idle' && !document.getElementById('paper-error').hidden",
        "the unsold message",
    )
    .await;
    assert_eq!(b.text("#paper-error").await, fr(&b, "paper.unsold", &[]).await);
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "home");
    assert_eq!(b.exec("return location.search", json!([])).await, "?anim=0", "the code leaves the address bar");
    assert_eq!(b.exec("return document.getElementById('balance').dataset.cents", json!([])).await, "10000");
    assert_eq!(b.exec("return document.getElementById('buy-panel').hidden", json!([])).await, false);
    assert_fits(&b, 390, "unsold").await;
    b.shot("retail-0-unsold").await;

    sell_at_the_counter(&b, &srv, serial, &printed[1].serial).await;

    // The player scans the QR code: the account loads, the ticket opens
    // with its prizes shown (scratched on paper) and joins the player's list.
    b.goto(&format!("{}/play?code={}&anim=0", srv.url, ticket.code)).await;
    b.wait_seq(0).await;
    assert_eq!(b.text("#game-title").await, format!("Ticket {serial}"));
    assert_eq!(b.exec("return location.search", json!([])).await, "?anim=0");
    assert_eq!(b.exec("return document.getElementById('balance').dataset.cents", json!([])).await, "10000");
    let scratched = b
        .exec(
            "return [document.getElementById('scratch').classList.contains('revealed'), document.getElementById('scratch-canvas').hidden, document.getElementById('reveal').hidden];",
            json!([]),
        )
        .await;
    assert_eq!(scratched, json!([true, true, true]), "a paper ticket's zone is shown scratched");
    let shown = b
        .exec("return Object.fromEntries([...document.querySelectorAll('#prizes tr')].map(r => [r.dataset.tricks, Number(r.querySelector('td').dataset.cents)]));", json!([]))
        .await;
    assert_eq!(shown, ticket.prizes, "the prizes printed on the ticket");
    assert!(b.text("#paper-note").await.contains(SHOP), "sold by: {}", b.text("#paper-note").await);
    let mine = srv.get("/api/tickets", &player).await;
    let listed = mine["tickets"].as_array().unwrap().iter().find(|t| t["serial"] == serial);
    assert_eq!(listed.map(|t| t["channel"].clone()), Some(json!("paper")), "the ticket joins the player's list");
    let ticket_token = b
        .exec("return JSON.parse(localStorage.getItem('asc.paper') || '{}')[arguments[0]] || null", json!([serial]))
        .await;
    let ticket_token = ticket_token.as_str().expect("the ticket's token is kept").to_string();
    assert!(ticket_token.starts_with(&format!("t1.{serial}.")), "{ticket_token}");
    b.choose_seed(&plan.client_seed).await;
    assert_fits(&b, 390, "paper ticket").await;
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot("retail-3-ticket").await;

    for (i, a) in plan.actions.iter().enumerate() {
        match a {
            Action::Play { card } => b.click(&format!("#player-hand button[data-card='{}']", card.as_str())).await,
            Action::Draw => b.click("#deck").await,
        }
        b.wait_seq(i + 1).await;
        assert_table_shows(&b, &plan.events[i], i).await;
        if i == 2 {
            // Without the account (another phone, say): a reload resumes
            // the ticket with its own token.
            b.exec("localStorage.removeItem('asc.token')", json!([])).await;
            b.refresh().await;
            b.wait_seq(3).await;
            assert_eq!(b.exec("return document.getElementById('balance-box').hidden", json!([])).await, true);
            assert_eq!(
                b.exec("return document.getElementById('scratch').classList.contains('revealed')", json!([])).await,
                true
            );
        }
    }

    // The result: a retailer pays the prize; nothing is credited.
    b.wait_for("!document.getElementById('result').hidden", "the result").await;
    let result = b
        .exec(
            "const r = document.getElementById('result'); return [r.dataset.won, r.dataset.prize, r.dataset.channel, r.dataset.paid, document.getElementById('again').hidden, document.getElementById('result-serial').hidden];",
            json!([]),
        )
        .await;
    assert_eq!(result, json!(["true", prize.to_string(), "paper", "false", true, false]));
    let text = b.text("#result-text").await;
    assert!(text.contains("détaillant") && !text.contains("crédité sur votre solde"), "{text}");
    assert!(b.text("#result-serial").await.contains(serial), "the serial to hand over");
    assert_eq!(srv.get("/api/me", &player).await["balance_cents"], START, "a paper prize never goes to a wallet");
    let t = srv.get(&format!("/api/tickets/{serial}"), &ticket_token).await;
    assert_eq!(
        (t["ticket"]["status"].as_str(), t["ticket"]["result"]["prize_cents"].as_i64()),
        (Some("won"), Some(prize))
    );
    assert_fits(&b, 390, "result").await;
    b.exec("document.getElementById('result').scrollIntoView({block: 'center'})", json!([])).await;
    b.shot("retail-4-result").await;

    validate_and_pay_at_the_counter(&b, &srv, serial, prize).await;
    report_at_the_counter(&b, &srv, serial, prize).await;

    // The player's page says it was paid; the code again opens the same ticket.
    b.goto(&format!("{}/play?code={}&anim=0", srv.url, ticket.code.to_lowercase())).await;
    b.wait_for(
        "document.body.dataset.view === 'game' && document.body.dataset.state === 'idle' && !document.getElementById('result').hidden",
        "the paid ticket",
    )
    .await;
    assert_eq!(b.text("#game-title").await, format!("Ticket {serial}"));
    assert_eq!(b.exec("return document.getElementById('result').dataset.paid", json!([])).await, "true");
    assert_eq!(b.text("#result-title").await, fr(&b, "result.paid.title", &[]).await);
    assert!(b.text("#result-text").await.contains(SHOP), "{}", b.text("#result-text").await);
    assert!(b.text("#paper-note").await.contains(SHOP), "{}", b.text("#paper-note").await);
    let same = b
        .exec("return JSON.parse(localStorage.getItem('asc.paper') || '{}')[arguments[0]] || null", json!([serial]))
        .await;
    assert_eq!(same, ticket_token.as_str(), "the same code, the same ticket and token");
    assert_fits(&b, 390, "paid ticket").await;
    b.exec("document.getElementById('result').scrollIntoView({block: 'center'})", json!([])).await;
    b.shot("retail-8-player-paid").await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}
