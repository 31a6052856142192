//! Every screen of the game, on a desktop window and a 390 px phone, checked
//! with axe-core (npm, `tests/browser/node/`, injected into the page through
//! WebDriver) and photographed into `target/browser-artifacts/a11y-*.png`:
//! the 18+ question, the welcome, the rules, the odds, the lobby, the
//! account, the limits (and the self-exclusion's confirmation), a ticket
//! before scratching, in play, at a tie, at the Extra duel, in an Extra
//! game, the result, the check, the history, the logout question, a refused
//! purchase, a paper ticket and a wrong play code, and the shop's counter,
//! its question before paying, a payment's receipt and the day's report.
//! Any violation of impact "serious" or "critical" fails the test, with
//! the list of them all.

use crate::harness::*;
use crate::webdriver::Screen;
use engine::{Action, Event, Outcome};
use serde_json::json;

const OPERATOR: &str = "a11y-operator-token-0001";
const RETAILER: &str = "a11y-retailer-token-0001";

/// axe on the page as it is, then a screenshot; violations go to `found`.
async fn check(b: &Browser, size: &str, name: &str, found: &mut Vec<String>, checked: &mut usize) {
    if let Some(v) = b.axe().await {
        *checked += 1;
        found.extend(v.into_iter().map(|x| format!("[{size} {name}] {x}")));
    }
    b.shot(&format!("a11y-{size}-{name}")).await;
}

/// The ticket, scratched and played to the end: in play, at a tie, at the
/// Extra duel, in an Extra game, the result, the check and the history.
async fn play_the_ticket(b: &Browser, size: &str, plan: &Foreseen, found: &mut Vec<String>, n: &mut usize) {
    b.click("#reveal").await;
    let (mut tie, mut duel, mut extra) = (false, false, false);
    for (i, a) in plan.actions.iter().enumerate() {
        let target = match a {
            Action::Play { card } => format!("#player-hand button[data-card='{}']", card.as_str()),
            Action::Draw => "#deck".to_string(),
        };
        b.click(&target).await;
        b.wait_seq(i + 1).await;
        let phase = b.exec("return document.getElementById('view-game').dataset.phase", json!([])).await;
        let game = b.exec("return document.getElementById('view-game').dataset.game", json!([])).await;
        b.exec("document.getElementById('table').scrollIntoView({block: 'start'})", json!([])).await;
        if i == 0 {
            check(b, size, "10-game-in-play", found, n).await;
        }
        if phase == "tie_break" && !tie {
            tie = true;
            check(b, size, "11-tie-break", found, n).await;
        }
        if phase == "extra_draw" && !duel {
            duel = true;
            check(b, size, "12-extra-duel", found, n).await;
        }
        if game != "1" && phase == "play" && !extra {
            extra = true;
            check(b, size, "13-extra-game", found, n).await;
        }
    }
    assert!(tie && duel && extra, "the plan has a tie, an Extra duel and an Extra game");
    b.wait_for("!document.getElementById('result').hidden", "the result").await;
    b.exec("document.getElementById('result').scrollIntoView({block: 'center'})", json!([])).await;
    check(b, size, "14-result", found, n).await;
    b.click("#verify-btn").await;
    assert_eq!(b.wait_verdict().await, "true");
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    check(b, size, "15-verify", found, n).await;
    go(b, "#", "home").await;
    b.exec("document.getElementById('tickets-panel').scrollIntoView({block: 'start'})", json!([])).await;
    check(b, size, "16-history", found, n).await;
}

/// A paper ticket sold by the shop and opened from its QR code, then a
/// wrong play code; the paper ticket's serial, and the serial of a second
/// one, sold, played to a win over the API: a winner to pay at the counter.
async fn paper_ticket_screens(
    srv: &TestServer,
    b: &Browser,
    size: &str,
    found: &mut Vec<String>,
    n: &mut usize,
) -> (String, String) {
    let em = srv
        .post("/api/admin/emissions", Some(OPERATOR), &json!({"table": TABLE, "blocks": 1, "channel": "paper"}))
        .await;
    let text = srv
        .get_text(&format!("/api/admin/emissions/{}/blocks/1/print.csv", em["emission"].as_u64().unwrap()), OPERATOR)
        .await;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    let second: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |line: &[&str], name: &str| line[header.iter().position(|h| *h == name).unwrap()].to_string();
    let (paper_serial, code) = (col(&first, "serial"), col(&first, "play_code"));
    let (won_serial, won_code) = (col(&second, "serial"), col(&second, "play_code"));
    srv.post("/api/retail/sell", Some(RETAILER), &json!({"serial": won_serial})).await;
    let opened = srv.post("/api/tickets/redeem", None, &json!({"code": won_code})).await;
    let token = opened["token"].as_str().unwrap();
    let plan = find_seed(&won_serial, "a11y-won", |p| p.game.result().unwrap().prize_cents > 0);
    for (seq, a) in plan.actions.iter().enumerate() {
        let mut body = action_json(seq as u64, *a);
        if seq == 0 {
            body["client_seed"] = json!(plan.client_seed);
        }
        srv.post(&format!("/api/tickets/{won_serial}/actions"), Some(token), &body).await;
    }
    srv.post("/api/retail/sell", Some(RETAILER), &json!({"serial": paper_serial})).await;
    b.goto(&format!("{}/play?code={code}&anim=0", srv.url)).await;
    b.wait_for(
        "document.body.dataset.view === 'game' && document.body.dataset.state === 'idle' && document.getElementById('view-game').dataset.seq === '0'",
        "the paper ticket",
    )
    .await;
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    check(b, size, "19-paper-ticket", found, n).await;
    // A wrong play code: its 404 is this test's own.
    b.expect_http_error("/api/tickets/redeem", 404);
    b.goto(&format!("{}/play?code=7K3M-Q9ZD-XW4P-2HRT&anim=0", srv.url)).await;
    b.wait_for("!document.getElementById('paper-error').hidden", "the message").await;
    check(b, size, "20-paper-wrong-code", found, n).await;
    (paper_serial, won_serial)
}

async fn every_screen(screen: Screen, size: &str) {
    let srv = spawn_server_with(|c| {
        c.operator_tokens = vec![OPERATOR.into()];
        c.retailer_tokens = vec![format!("Tabac du Port:{RETAILER}")];
    })
    .await;
    let Some(b) = browser_first_visit(&srv.url, screen).await else { return };
    let serial = serial_of_sale(1);
    let plan = find_seed(&serial, "a11y", |p| {
        let tie = p.first(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. }));
        let extra = p.first(|e| matches!(e, Event::ExtraGame { .. }));
        matches!((tie, extra), (Some(t), Some(x)) if t < x) && p.game.result().unwrap().prize_cents > 0
    });
    let mut found = Vec::new();
    let mut n = 0usize;

    // The first visit: the 18+ question.
    b.open("/?anim=0").await;
    b.wait_for("document.getElementById('age-gate') && document.getElementById('age-gate').open", "the 18+ question")
        .await;
    check(&b, size, "00-age-gate", &mut found, &mut n).await;
    b.click("#age-yes").await;
    check(&b, size, "01-welcome", &mut found, &mut n).await;

    // Rules and odds, with their exact figures.
    go(&b, "#/regles", "rules").await;
    b.wait_for("document.querySelector('[data-fraction=\"rules-final-lose\"]')", "the rules' figures").await;
    check(&b, size, "02-rules", &mut found, &mut n).await;
    go(&b, "#/chances", "odds").await;
    b.wait_for("document.querySelector('[data-fraction=\"final-5\"]')", "the odds").await;
    check(&b, size, "03-odds", &mut found, &mut n).await;
    go(&b, "#/limites", "limits").await;
    check(&b, size, "04-limits-logged-out", &mut found, &mut n).await;

    // An account with a login and a password.
    go(&b, "#", "home").await;
    b.type_into("#name", "Eliot").await;
    b.type_into("#reg-login", &format!("eliot-{size}")).await;
    b.type_into("#reg-password", "untouchable-1931").await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    check(&b, size, "05-lobby", &mut found, &mut n).await;
    // The recovery code shown once at sign-up (checked above with the lobby): noted.
    b.wait_for("document.getElementById('recovery-done')", "the recovery code").await;
    b.exec("document.getElementById('recovery-done').scrollIntoView({block: 'center'})", json!([])).await;
    b.click("#recovery-done").await;
    go(&b, "#/compte", "account").await;
    check(&b, size, "06-account", &mut found, &mut n).await;
    go(&b, "#/limites", "limits").await;
    b.wait_for("document.getElementById('limits-form')", "the limits form").await;
    check(&b, size, "07-limits", &mut found, &mut n).await;
    b.click("#exclude-30").await;
    b.click("#exclude-go").await;
    b.wait_for(
        "document.getElementById('exclude-dialog') && document.getElementById('exclude-dialog').open",
        "the question",
    )
    .await;
    check(&b, size, "08-exclusion-question", &mut found, &mut n).await;
    b.click("#exclude-cancel").await;

    // A ticket: before scratching, in play, a tie, the Extra duel, an Extra game, the result.
    go(&b, "#", "home").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    b.choose_seed(&plan.client_seed).await;
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    check(&b, size, "09-ticket-scratch", &mut found, &mut n).await;
    play_the_ticket(&b, size, &plan, &mut found, &mut n).await;

    // A purchase refused by the player's own limit (1 ticket a day, one bought).
    let token = b.token().await;
    let r = reqwest::Client::new()
        .put(format!("{}/api/me/limits", srv.url))
        .bearer_auth(&token)
        .json(&json!({"tickets_per_day": 1, "spend_per_week_cents": null}))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "PUT /api/me/limits: {}", r.status());
    b.expect_http_error("/api/tickets", 403);
    // From the top: scrolled to "Mes tickets", the button sits under the sticky header.
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.click("#buy").await;
    b.wait_for("document.getElementById('alert').dataset.reason === 'limit_reached'", "the refusal").await;
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    check(&b, size, "17-purchase-refused", &mut found, &mut n).await;

    // Logging out asks first.
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.click("#settings > summary").await;
    b.click("#logout").await;
    b.wait_for(
        "document.getElementById('logout-dialog') && document.getElementById('logout-dialog').open",
        "the question",
    )
    .await;
    check(&b, size, "18-logout-question", &mut found, &mut n).await;
    b.click("#logout-cancel").await;

    // Paper: a ticket sold by a shop, opened from its QR code; a wrong code.
    let (paper_serial, won_serial) = paper_ticket_screens(&srv, &b, size, &mut found, &mut n).await;

    // The shop's counter.
    b.open("/shop").await;
    check(&b, size, "21-shop-login", &mut found, &mut n).await;
    b.type_into("#shop-token", RETAILER).await;
    b.click("#login-go").await;
    b.wait_for("document.body.dataset.view === 'counter' && document.body.dataset.state === 'idle'", "signed in").await;
    b.type_into("#serial", &paper_serial).await;
    b.click("#do-validate").await;
    b.wait_for("document.body.dataset.state === 'idle' && !document.getElementById('answer').hidden", "the answer")
        .await;
    check(&b, size, "22-shop-counter", &mut found, &mut n).await;
    // "Payer" on a winner: the question, then the payment's receipt.
    b.type_into("#serial", &won_serial).await;
    b.click("#do-pay").await;
    b.wait_for("document.getElementById('pay-dialog').open && document.body.dataset.state === 'idle'", "the question")
        .await;
    check(&b, size, "23-shop-pay-question", &mut found, &mut n).await;
    b.click("#pay-confirm").await;
    b.wait_for(
        "document.body.dataset.state === 'idle' && document.getElementById('answer').dataset.status === 'paid' && !document.getElementById('answer-receipt').hidden",
        "the payment",
    )
    .await;
    b.click("#answer-receipt").await;
    b.wait_for("document.body.dataset.view === 'receipt'", "the receipt").await;
    check(&b, size, "24-shop-receipt", &mut found, &mut n).await;
    b.click("#receipt-back").await;
    // The day's report.
    b.click("#open-report").await;
    b.wait_for(
        "document.body.dataset.view === 'report' && document.body.dataset.state === 'idle' && !document.getElementById('report-body').hidden",
        "the report",
    )
    .await;
    check(&b, size, "25-shop-report", &mut found, &mut n).await;

    if n > 0 {
        assert_eq!(n, 26, "axe ran on every screen");
    }
    assert!(
        found.is_empty(),
        "axe-core: {} serious or critical violations on the {size} screens:\n{}",
        found.len(),
        found.join("\n")
    );
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_screen_on_a_desktop_passes_axe_core() {
    every_screen(Screen::Desktop { width: 1280, height: 900 }, "desktop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_screen_on_a_390_px_phone_passes_axe_core() {
    every_screen(Screen::Phone { width: 390, height: 844 }, "phone").await;
}
