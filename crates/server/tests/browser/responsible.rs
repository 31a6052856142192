//! The player's experience, second pass (what players used to FDJ's games expect), on a desktop and a
//! 390x844 phone, in French and English:
//! - every refusal of the API worded by the page from its code and params,
//!   in both languages, never with the server's English message; the shop
//!   page too;
//! - responsible play before it refuses: a new player chooses a limit on
//!   stakes over seven days before the first purchase (décret 2010-518,
//!   art. 16); the reminder of time played with "continue" and "stop"; the
//!   "bilan de jeu" per day, week and month;
//! - the paper winner told where and until when to be paid, and "Mes
//!   tickets" showing a paper ticket's result and payment.
//!
//! limits.rs has the 18+ question, the legal warning, a limit reached and
//! a self-exclusion.

use crate::harness::*;
use crate::retail::{OPERATOR, OTHER_RETAILER, OTHER_SHOP, RETAILER, SHOP, counter, print_file};
use crate::webdriver::Screen;
use engine::Action;
use serde_json::{Value, json};

const DESKTOP: Screen = Screen::Desktop { width: 1280, height: 900 };
const PHONE: Screen = Screen::Phone { width: 390, height: 844 };

/// The page in `lang` (its header's switch, remembered by the page).
async fn in_lang(b: &Browser, lang: &str) {
    let now = b.exec("return document.documentElement.lang", json!([])).await;
    if now != lang {
        b.click("#lang").await;
        b.wait_for(&format!("document.documentElement.lang === '{lang}'"), "the language").await;
    }
}

/// Every code of `server::ERROR_CODES` and every reason of
/// `server::ERROR_REASONS` has its wording in French and English, and the
/// page's `errorText` words each one with its params filled: never the
/// server's message, never a placeholder left, never a key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_of_the_api_has_its_words_in_french_and_english() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, DESKTOP).await else { return };
    b.open("/?anim=0").await;
    b.wait_for("document.body.dataset.state === 'idle'", "the page").await;
    let reasons: Vec<Value> = server::ERROR_REASONS.iter().map(|(c, r)| json!([c, r])).collect();
    let cases: Vec<Value> =
        server::ERROR_CODES.iter().map(|c| json!([c, null])).chain(reasons.iter().cloned()).collect();
    let out = b
        .exec_async(
            "const [cases, reasons] = arguments; const done = arguments[arguments.length - 1];
             Promise.all([import('/i18n.js'), import('/dom.js'), import('/api.js')]).then(([i, d, a]) => {
               const missing = [], bad = [];
               for (const lang of ['fr', 'en']) {
                 const has = (k) => k in i.STRINGS[lang] || `${k}.other` in i.STRINGS[lang];
                 for (const [code, reason] of cases) {
                   const key = reason ? `err.${code}.${reason}` : `err.${code}`;
                   if (!has(key)) missing.push(`${lang} ${key}`);
                 }
                 i.setLang(lang);
                 for (const [code, reason] of cases) {
                   const params = { reason, used: 2, max: 2, max_cents: 900, used_cents: 700, price_cents: 300,
                     balance_cents: 100, until_ms: Date.now() + 86400000, shop: 'Tabac du Port', paid_ms: Date.now(),
                     paid_by: 'Tabac du Port', prize_cents: 1000, ceiling_cents: 500000, retry_after_s: 30 };
                   const e = new a.ApiError(code === 'unauthorized' ? 401 : 403, code, 'SERVER-ENGLISH-MESSAGE', null, params);
                   const text = d.errorText(e);
                   if (!text || text.includes('SERVER-ENGLISH-MESSAGE') || /[{}]/.test(text) || text.startsWith('err.') || text === i.t('err.other', { code }))
                     bad.push(`${lang} ${code}/${reason}: ${text}`);
                 }
               }
               i.setLang('fr');
               done([missing, bad, reasons.length]);
             }, (e) => done(String(e)));",
            json!([cases, reasons]),
        )
        .await;
    assert_eq!(out[0], json!([]), "wordings missing");
    assert_eq!(out[1], json!([]), "refusals badly worded");
    assert!(out[2].as_u64().unwrap() >= 10, "{out}");
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

/// Décret 2010-518, art. 16: a new account chooses its limit on stakes over
/// seven days before its first purchase; the lobby asks for it (no buy
/// button before), the server refuses a purchase without one, and the
/// limit cannot be removed, only raised after the cooling-off.
async fn a_stake_limit_before_the_first_purchase(screen: Screen, size: &str, lang: &str) {
    let srv = spawn_server_with(|c| c.stake_limit_required = true).await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    b.open("/?anim=0").await;
    b.wait_for("document.body.dataset.state === 'idle'", "the page").await;
    in_lang(&b, lang).await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    let token = b.token().await;
    b.wait_for("document.getElementById('rg-lobby').dataset.state === 'required'", "the stake limit asked").await;
    assert_eq!(b.exec("return document.getElementById('buy-form').hidden", json!([])).await, true, "no buy button");
    assert_eq!(b.text("#rg-required-title").await, b.string(lang, "lobby.rg.required.title", &[]).await);
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot(&format!("responsible-{size}-{lang}-0-stake-limit")).await;
    axe_clean(&b, "the stake limit asked on the lobby").await;
    // The server refuses a purchase without one, with its code.
    let r = reqwest::Client::new()
        .post(format!("{}/api/tickets", srv.url))
        .bearer_auth(&token)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(r.json::<Value>().await.unwrap()["error"], "limit_required");
    // Empty: said under the field; 20 €: saved, and the buy button comes.
    b.click("#rg-required-save").await;
    b.wait_for("!document.getElementById('rg-required-week-error').hidden", "the field's error").await;
    assert_eq!(b.text("#rg-required-week-error").await, b.string(lang, "limits.week.required", &[]).await);
    b.type_into("#rg-required-week", "20").await;
    b.click("#rg-required-save").await;
    b.wait_for("document.getElementById('rg-lobby').dataset.state === 'ok'", "the limit saved").await;
    assert_eq!(b.exec("return document.getElementById('buy-form').hidden", json!([])).await, false);
    assert_eq!(srv.get("/api/me/limits", &token).await["spend_per_week_cents"], 2000);
    b.click("#buy").await;
    b.wait_seq(0).await;
    assert_eq!(srv.get("/api/me", &token).await["balance_cents"], 9700, "the first purchase passed");
    // The limit is kept: "no limit" is refused on the page and by the server.
    go(&b, "#/limites", "limits").await;
    assert_eq!(b.text("#limit-week-hint").await, b.string(lang, "limits.week.hint.required", &[]).await);
    b.type_into("#limit-week", "").await;
    b.click("#limits-save").await;
    b.wait_for("!document.getElementById('limit-week-error').hidden", "the field's error").await;
    assert_eq!(b.text("#limit-week-error").await, b.string(lang, "limits.week.required", &[]).await);
    let r = reqwest::Client::new()
        .put(format!("{}/api/me/limits", srv.url))
        .bearer_auth(&token)
        .json(&json!({"tickets_per_day": null, "spend_per_week_cents": null}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        (body["error"].as_str(), body["params"]["reason"].as_str()),
        (Some("bad_request"), Some("stake_limit_required"))
    );
    assert_eq!(srv.get("/api/me/limits", &token).await["spend_per_week_cents"], 2000, "unchanged");
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_player_chooses_a_stake_limit_before_the_first_purchase_on_a_desktop_in_french() {
    a_stake_limit_before_the_first_purchase(DESKTOP, "desktop", "fr").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_player_chooses_a_stake_limit_before_the_first_purchase_on_a_phone_in_english() {
    a_stake_limit_before_the_first_purchase(PHONE, "phone", "en").await;
}

/// The reminder of time played at the interval the player chose, with the
/// net result since the start, "continue" and "stop"; and the "bilan de
/// jeu" per day, week and month.
async fn reminder_and_statement(screen: Screen, size: &str, lang: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    b.open("/?anim=0").await;
    b.wait_for("document.body.dataset.state === 'idle'", "the page").await;
    in_lang(&b, lang).await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    b.click("#buy").await;
    b.wait_seq(0).await;

    // The statement: today's stake of 3 € in the day, the week and the month.
    go(&b, "#/limites", "limits").await;
    b.wait_for("document.getElementById('statement')", "the statement").await;
    let firsts = b
        .exec(
            "return ['days', 'weeks', 'months'].map(k => { const r = document.querySelector(`#statement-${k} tbody tr`);
               return [...r.querySelectorAll('td')].map(td => Number(td.dataset.cents)); });",
            json!([]),
        )
        .await;
    assert_eq!(firsts, json!([[300, 0, -300], [300, 0, -300], [300, 0, -300]]));
    let rows = b
        .exec(
            "return ['days', 'weeks', 'months'].map(k => document.querySelectorAll(`#statement-${k} tbody tr`).length)",
            json!([]),
        )
        .await;
    assert_eq!(rows, json!([7, 4, 3]));
    assert_eq!(b.text("#statement-title").await, b.string(lang, "statement.title", &[]).await);
    assert_eq!(
        b.text("#statement-days tbody tr th").await,
        b.string(lang, "statement.today", &[]).await,
        "today first"
    );
    b.exec("document.getElementById('statement').scrollIntoView()", json!([])).await;
    b.shot(&format!("responsible-{size}-{lang}-1-statement")).await;
    axe_clean(&b, "the limits page with the reminder and the statement").await;
    if size == "phone" {
        assert_fits(&b, 390, "the statement").await;
    }

    // The reminder: every 30 minutes.
    assert_eq!(b.exec("return document.getElementById('reminder-60').checked", json!([])).await, true, "60 at first");
    b.exec("document.getElementById('reminder-30').scrollIntoView({block: 'center'})", json!([])).await;
    b.click("#reminder-30").await;
    b.wait_for("!document.getElementById('reminder-done').hidden", "saved").await;
    assert_eq!(b.exec("return localStorage.getItem('asc.reminder')", json!([])).await, "30");
    go(&b, "#", "home").await;
    // 31 minutes of play (the clock of this tab, moved back).
    let remind = "const t = Date.now() - 31 * 60000; sessionStorage.setItem('asc.playStart', String(t));
                  sessionStorage.setItem('asc.reminded', String(t)); window.dispatchEvent(new Event('focus'));";
    b.exec(remind, json!([])).await;
    b.wait_for(
        "document.getElementById('reminder-dialog') && document.getElementById('reminder-dialog').open",
        "the reminder",
    )
    .await;
    assert_eq!(b.text("#reminder-text").await, b.string(lang, "reminder.text", &[("duration", "31 min")]).await);
    assert_eq!(b.exec("return document.getElementById('reminder-result').dataset.net", json!([])).await, "-300");
    b.shot(&format!("responsible-{size}-{lang}-2-reminder")).await;
    axe_clean(&b, "the reminder").await;
    // "Continue": the game goes on, the next reminder in 30 minutes.
    b.click("#reminder-continue").await;
    b.wait_for("!document.getElementById('reminder-dialog')", "closed").await;
    b.exec("window.dispatchEvent(new Event('focus'))", json!([])).await;
    assert_eq!(
        b.exec("return !!document.getElementById('reminder-dialog')", json!([])).await,
        false,
        "not again at once"
    );
    assert_eq!(b.exec("return document.getElementById('buy-form').hidden", json!([])).await, false);
    // "Stop": the lobby says the pause, no buy button, until "play again".
    b.exec(remind, json!([])).await;
    b.wait_for(
        "document.getElementById('reminder-dialog') && document.getElementById('reminder-dialog').open",
        "the reminder",
    )
    .await;
    b.click("#reminder-stop").await;
    b.wait_for("document.getElementById('rg-lobby').dataset.state === 'paused'", "the pause").await;
    assert_eq!(b.exec("return document.getElementById('buy-form').hidden", json!([])).await, true);
    assert_eq!(b.text("#rg-lobby-text").await, b.string(lang, "lobby.rg.paused", &[]).await);
    b.click("#rg-resume").await;
    b.wait_for("document.getElementById('rg-lobby').dataset.state === 'ok'", "play again").await;
    assert_eq!(b.exec("return document.getElementById('buy-form').hidden", json!([])).await, false);
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reminder_of_time_played_and_the_statement_on_a_desktop_in_english() {
    reminder_and_statement(DESKTOP, "desktop", "en").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reminder_of_time_played_and_the_statement_on_a_phone_in_french() {
    reminder_and_statement(PHONE, "phone", "fr").await;
}

/// A paper winner: the result names the shop that pays it and when the
/// claim ends; once paid, "Mes tickets" shows the paper ticket's result and
/// payment, without an account. The shop's page words its answers and
/// refusals in the page's language (no French inside English).
async fn paper_winner(screen: Screen, size: &str, lang: &str) {
    let srv = spawn_server_with(|c| {
        c.operator_tokens = vec![OPERATOR.into()];
        c.retailer_tokens = vec![format!("{SHOP}:{RETAILER}"), format!("{OTHER_SHOP}:{OTHER_RETAILER}")];
    })
    .await;
    let r = srv
        .post("/api/admin/emissions", Some(OPERATOR), &json!({"table": TABLE, "blocks": 1, "channel": "paper"}))
        .await;
    let printed = print_file(&srv, r["emission"].as_u64().unwrap()).await;
    let (ticket, other) = (&printed[0], &printed[1]);
    let serial = ticket.serial.as_str();
    let plan = find_seed(serial, "paper", |p| p.game.result().unwrap().prize_cents > 0);
    let tricks = plan.game.result().unwrap().tricks;
    let prize = ticket.prizes[tricks.to_string()].as_i64().unwrap();
    srv.post("/api/retail/sell", Some(RETAILER), &json!({"serial": serial})).await;
    srv.post("/api/retail/sell", Some(OTHER_RETAILER), &json!({"serial": other.serial})).await;

    let Some(b) = browser(&srv.url, screen).await else { return };
    b.open("/?anim=0").await;
    b.wait_for("document.body.dataset.state === 'idle'", "the page").await;
    in_lang(&b, lang).await;
    // The ticket from its QR code's address, without an account.
    b.goto(&format!("{}/play?code={}&anim=0", srv.url, ticket.code)).await;
    b.wait_seq(0).await;
    b.choose_seed(&plan.client_seed).await;
    for (i, a) in plan.actions.iter().enumerate() {
        match a {
            Action::Play { card } => b.click(&format!("#player-hand button[data-card='{}']", card.as_str())).await,
            Action::Draw => b.click("#deck").await,
        }
        b.wait_seq(i + 1).await;
    }
    b.wait_for(
        "!document.getElementById('result').hidden && !document.getElementById('result-claim').hidden",
        "the claim",
    )
    .await;
    assert_eq!(b.exec("return document.getElementById('result-claim').dataset.payAt", json!([])).await, "seller");
    let claim = b.text("#result-claim").await;
    let seller = b.string(lang, "claim.where.seller", &[("shop", SHOP)]).await;
    let days = b.string(lang, "claim.days", &[("n", "30")]).await;
    assert_eq!(claim, format!("{seller} {days}"), "where and until when");
    let ticket_token =
        b.exec("return JSON.parse(localStorage.getItem('asc.paper'))[arguments[0]]", json!([serial])).await;
    let api = srv.get(&format!("/api/tickets/{serial}/claim"), ticket_token.as_str().unwrap()).await;
    assert_eq!(
        (api["pay_at"].as_str(), api["shop"].as_str(), api["prize_cents"].as_i64()),
        (Some("seller"), Some(SHOP), Some(prize))
    );
    b.exec("document.getElementById('result').scrollIntoView({block: 'center'})", json!([])).await;
    b.shot(&format!("responsible-{size}-{lang}-3-paper-claim")).await;
    axe_clean(&b, "the paper winner's result").await;

    // "Mes tickets", without an account: the result, to collect.
    go(&b, "#", "home").await;
    let li = format!("#tickets li[data-id='{serial}']");
    b.wait_for(
        &format!("document.querySelector(\"{li}\") && document.querySelector(\"{li}\").dataset.status === 'won'"),
        "the paper ticket listed",
    )
    .await;

    // The shop's page, in the same language: refusals and answers in its words.
    b.open("/shop").await;
    in_lang(&b, lang).await;
    b.type_into("#shop-token", RETAILER).await;
    b.click("#login-go").await;
    b.wait_for("document.body.dataset.view === 'counter' && document.body.dataset.state === 'idle'", "signed in").await;
    b.type_into("#serial", &other.serial).await;
    b.expect_http_error("/api/retail/pay", 409); // not played yet: refused, on purpose
    let (_, ok, http, _, message, _) = counter(&b, "#do-pay").await;
    assert_eq!((ok, http), (false, 409), "{message}");
    assert_eq!(message, b.string(lang, "shop.msg.sold", &[]).await, "not played yet, in the page's words");
    b.type_into("#serial", serial).await;
    let (_, ok, _, status, message, _) = counter(&b, "#do-validate").await;
    assert_eq!((ok, status.as_str()), (true, "won"), "{message}");
    let money = b
        .exec(
            "return new Intl.NumberFormat(arguments[1] === 'fr' ? 'fr-FR' : 'en-GB', { style: 'currency', currency: 'EUR' }).format(arguments[0] / 100)",
            json!([prize, lang]),
        )
        .await;
    assert_eq!(message, b.string(lang, "shop.msg.won", &[("prize", money.as_str().unwrap())]).await);
    let shown = b.text("#answer").await;
    if lang == "en" {
        for french in ["Gagnant", "payer", "Vendu", "Déjà"] {
            assert!(!shown.contains(french), "no French in the English page: {shown}");
        }
    }
    srv.post("/api/retail/pay", Some(RETAILER), &json!({"serial": serial})).await;

    // Paid: "Mes tickets" says when and where.
    b.open("/?anim=0").await;
    b.wait_for(
        &format!("document.querySelector(\"{li}\") && document.querySelector(\"{li}\").dataset.status === 'paid'"),
        "paid",
    )
    .await;
    let status = b.text(&format!("{li} .status")).await;
    assert!(status.contains(SHOP), "{status}");
    b.exec(&format!("document.querySelector(\"{li}\").scrollIntoView({{block: 'center'}})"), json!([])).await;
    b.shot(&format!("responsible-{size}-{lang}-4-paper-paid")).await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paper_winner_is_told_where_to_be_paid_on_a_desktop_in_english() {
    paper_winner(DESKTOP, "desktop", "en").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paper_winner_is_told_where_to_be_paid_on_a_phone_in_french() {
    paper_winner(PHONE, "phone", "fr").await;
}
