//! The operator's desk at `/desk` (docs/operating.md "The desk page"),
//! in Chromium: signing in refuses a wrong token and a player's at
//! once, in words; the operator's token is kept in the tab's session,
//! never in the address nor in the browser's lasting storage; the
//! health screen and every block's figures appear, equal to `as-capone
//! report --json` for the same database (`server::report_from`, what
//! that command prints); both languages, no serious or critical
//! axe-core violation, fits a tablet; signing out forgets the token.

use crate::harness::*;
use crate::webdriver::Screen;
use serde_json::{Value, json};

const OPERATOR: &str = "browser-desk-operator-token-01";
const PLAYER: &str = "browser-desk-player-token-0001";

/// A string of the desk (`web/desk-strings.js`) in `lang`.
pub(crate) async fn desk_string(b: &Browser, lang: &str, key: &str) -> String {
    let v = b
        .exec_async(
            "const [lang, key] = arguments; const done = arguments[arguments.length - 1];
             import('/desk-strings.js').then(() => import('/i18n.js'))
               .then(m => done(m.STRINGS[lang][key] ?? null), e => done(String(e)));",
            json!([lang, key]),
        )
        .await;
    v.as_str().unwrap_or_else(|| panic!("no {lang} desk string {key}")).to_string()
}

/// Signs in with `token` and waits for the answer: the desk's first
/// figures, or the sign-in's error (its text).
pub(crate) async fn sign_in(b: &Browser, token: &str) -> Option<String> {
    b.type_into("#desk-token", token).await;
    b.click("#desk-login-go").await;
    b.wait_for(
        "document.body.dataset.state === 'idle' && (!document.getElementById('desk-login-error').hidden \
         || Number(document.body.dataset.loads || 0) > 0)",
        "the sign-in's answer",
    )
    .await;
    let error = b
        .exec(
            "const e = document.getElementById('desk-login-error'); return e.hidden ? null : e.textContent",
            json!([]),
        )
        .await;
    error.as_str().map(str::to_string)
}

/// Every figure row the page shows: `{emission, block ("total" for the
/// totals), figures {field: integer}}`.
async fn page_rows(b: &Browser) -> Value {
    b.exec(
        "return Array.from(document.querySelectorAll('tr[data-emission]')).map(tr => ({
           emission: Number(tr.dataset.emission), block: tr.dataset.block,
           figures: Object.fromEntries(Array.from(tr.querySelectorAll('td[data-field]'))
             .map(td => [td.dataset.field, Number(td.dataset.value)])) }))",
        json!([]),
    )
    .await
}

/// The same rows from the report's JSON.
fn report_rows(report: &Value) -> Value {
    let fields = [
        "printed",
        "sold",
        "in_play",
        "won",
        "lost",
        "sales_cents",
        "prizes_won_cents",
        "prizes_paid_cents",
        "prizes_owed_cents",
    ];
    let pick = |o: &Value| -> Value { fields.iter().map(|f| (f.to_string(), o[*f].clone())).collect() };
    let mut rows = Vec::new();
    for e in report["emissions"].as_array().unwrap() {
        for block in e["blocks"].as_array().unwrap() {
            rows.push(json!({"emission": e["emission"], "block": block["block"].to_string(), "figures": pick(block)}));
        }
        rows.push(json!({"emission": e["emission"], "block": "total", "figures": pick(&e["totals"])}));
    }
    Value::Array(rows)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_signs_in_shows_health_and_every_block_as_the_report_in_both_languages() {
    let srv = spawn_server_with(|c| {
        c.operator_tokens = vec![OPERATOR.into()];
        c.demo_token = PLAYER.into();
    })
    .await;
    // Something to show: two tickets sold online, one of them played a
    // card into; a paper emission of one block.
    let one = srv.post("/api/tickets", Some(PLAYER), &json!({})).await;
    srv.post("/api/tickets", Some(PLAYER), &json!({})).await;
    let id = one["ticket"]["id"].as_str().expect("the ticket's id").to_string();
    srv.post(
        &format!("/api/tickets/{id}/actions"),
        Some(PLAYER),
        &json!({"seq": 0, "action": "play", "card": "A", "client_seed": "desk-test"}),
    )
    .await;
    srv.post("/api/admin/emissions", Some(OPERATOR), &json!({"table": TABLE, "blocks": 1, "channel": "paper"})).await;

    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1280, height: 900 }).await else { return };
    b.open("/desk").await;
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "login");
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe on the sign-in");

    // A wrong token and a player's are refused at the sign-in, in words.
    b.expect_http_error("/api/admin/version", 401);
    b.expect_http_error("/api/admin/version", 403);
    let bad = sign_in(&b, "not-an-operator-token").await;
    assert_eq!(bad, Some(desk_string(&b, "fr", "desk.login.bad").await));
    let player = sign_in(&b, PLAYER).await;
    assert_eq!(player, Some(desk_string(&b, "fr", "desk.login.player").await));
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "login");

    // The operator's.
    assert_eq!(sign_in(&b, OPERATOR).await, None);
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "desk");
    let where_ = b
        .exec(
            "return {href: location.href, session: sessionStorage.getItem('asc.deskToken'),
                     local: Object.keys(localStorage).map(k => localStorage.getItem(k)).join('|')}",
            json!([]),
        )
        .await;
    assert!(!where_["href"].as_str().unwrap().contains(OPERATOR), "{where_}");
    assert_eq!(where_["session"], OPERATOR);
    assert!(!where_["local"].as_str().unwrap().contains(OPERATOR), "the token outlives the tab: {where_}");

    // Every block and total as the report (what `as-capone report --json` prints).
    let report = json!({"emissions": server::report_from(&srv.db_url(), None).await.unwrap()});
    let rows = page_rows(&b).await;
    assert_eq!(rows.as_array().unwrap().len(), 2 + 2, "two emissions of one block and their totals: {rows}");
    assert_eq!(rows, report_rows(&report));
    assert_eq!(report["emissions"][0]["totals"]["sold"], 2, "{report}");
    assert_eq!(report["emissions"][1]["channel"], "paper", "{report}");
    // The health screen's figures.
    let health = b.exec("return {...document.getElementById('health-cards').dataset}", json!([])).await;
    assert_eq!(health["inPlay"], "2", "{health}");
    assert_eq!(health["registered"], "1", "{health}");
    assert_eq!(health["selfExcluded"], "0", "{health}");
    let cards = b.exec("return document.querySelectorAll('[data-health]').length", json!([])).await;
    assert_eq!(cards, 9);
    let bad_cards = b
        .exec(
            "return Array.from(document.querySelectorAll('[data-health][data-ok=false]')).map(c => c.dataset.health)",
            json!([]),
        )
        .await;
    assert_eq!(bad_cards, json!([]), "every card good on a healthy server");
    let checked = b
        .exec(
            "return Array.from(document.querySelectorAll('[data-health][data-ok=true]')).map(c => c.dataset.health)",
            json!([]),
        )
        .await;
    assert_eq!(checked, json!(["database", "key", "audit", "wallet"]));
    // A block's risk drawn for each emission, each block marked on it.
    b.wait_for("document.querySelectorAll('figure.desk-risk[data-drawn]').length === 2", "the risk charts").await;
    let marks = b.exec("return document.querySelectorAll('#risk-1 [data-part=block]').length", json!([])).await;
    assert_eq!(marks, 1);
    let parts = b.exec("return ['distribution', 'mean', 'p99'].map(p => !!document.querySelector('#risk-1 [data-part=' + p + ']'))", json!([])).await;
    assert_eq!(parts, json!([true, true, true]));
    let caption = b.text("#risk-1 figcaption").await;
    assert!(caption.starts_with("Risque d’un bloc") && caption.contains("bloc 1 :"), "{caption}");
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe on the desk, French");
    b.shot("desk-fr").await;
    b.exec("document.getElementById('risk-1').scrollIntoView({block: 'center'})", json!([])).await;
    b.shot("desk-risk").await;
    b.exec("window.scrollTo(0, 0)", json!([])).await;

    // English, the same figures, no key shown for a word.
    b.click("#lang").await;
    b.wait_for("document.documentElement.lang === 'en'", "English").await;
    let title = b.exec("return document.querySelector('.desk-toolbar h1').textContent", json!([])).await;
    assert_eq!(title, desk_string(&b, "en", "desk.title").await);
    let text = b.exec("return document.body.innerText", json!([])).await;
    assert!(!text.as_str().unwrap().contains("desk."), "a string key shows: {text}");
    assert!(text.as_str().unwrap().contains("Blocks") || text.as_str().unwrap().contains("Block"), "{text}");
    assert_eq!(page_rows(&b).await, report_rows(&report));
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe on the desk, English");
    b.shot("desk-en").await;

    // A reload keeps the session (same tab); signing out forgets the token.
    b.s.refresh().await;
    b.wait_for("Number(document.body.dataset.loads || 0) > 0", "the desk after a reload").await;
    b.click("#desk-logout").await;
    assert_eq!(
        b.exec("return [document.body.dataset.view, sessionStorage.getItem('asc.deskToken')]", json!([])).await,
        json!(["login", null])
    );
    b.close().await;

    // A tablet (768 CSS pixels): nothing scrolls sideways, the tables in their box.
    let Some(t) = browser(&srv.url, Screen::Phone { width: 768, height: 1024 }).await else { return };
    t.open("/desk").await;
    assert_eq!(sign_in(&t, OPERATOR).await, None);
    assert_fits(&t, 768, "the desk on a tablet").await;
    t.shot("desk-tablet").await;
    t.close().await;
}

/// Clicks `button` (a confirmed action) and answers the dialog: `yes` or
/// cancel; waits for the action's end when confirmed. The question asked.
pub(crate) async fn confirm(b: &Browser, button: &str, yes: bool) -> String {
    let acted = b.exec("return Number(document.body.dataset.acted || 0)", json!([])).await.as_u64().unwrap();
    b.click(button).await;
    b.wait_for("document.getElementById('desk-confirm').open", "the confirmation").await;
    let question = b.text("#confirm-text").await;
    b.click(if yes { "#confirm-yes" } else { "#confirm-no" }).await;
    if yes {
        b.wait_for(
            &format!("Number(document.body.dataset.acted || 0) > {acted} && document.body.dataset.state === 'idle'"),
            "the action's end",
        )
        .await;
    } else {
        b.wait_for("!document.getElementById('desk-confirm').open", "the dialog closed").await;
    }
    question
}

/// The desk's actions (docs/operating.md "The desk page"), each
/// confirmed first and audited: a table checked (its exact figures, the
/// art. 2 rule it breaks) then an emission made of it; blocks added (a
/// cancel first, which changes nothing); a sale closed; a paper block's
/// print file downloaded with the token, never in an address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_checks_a_table_then_creates_adds_closes_and_downloads_each_confirmed() {
    let srv = spawn_server_with(|c| c.operator_tokens = vec![OPERATOR.into()]).await;
    let audit = |srv: &TestServer| {
        let store = srv.app.store().clone();
        async move { store.check_audit_chain().await.unwrap().entries }
    };
    let entries = audit(&srv).await;
    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1280, height: 900 }).await else { return };
    b.open("/desk").await;
    assert_eq!(sign_in(&b, OPERATOR).await, None);

    // A table that is not one: refused, in the page.
    b.expect_http_error("/api/admin/tables/check", 400);
    b.type_into("#new-table", "this is not a prize table").await;
    b.click("#new-check").await;
    b.wait_for("!document.getElementById('new-error').hidden", "the refusal").await;
    assert!(
        b.text("#new-error").await.starts_with("Cette grille n’est pas acceptée"),
        "{}",
        b.text("#new-error").await
    );

    // The tests' table (blocks of 100): its exact figures, and art. 2's block size said.
    b.type_into("#new-table", TABLE).await;
    b.click("#new-check").await;
    b.wait_for("!document.getElementById('new-preview').hidden", "the preview").await;
    let check = srv.post("/api/admin/tables/check", Some(OPERATOR), &json!({"table": TABLE})).await;
    let rtp = b.text("[data-fact=rtp] dd").await;
    assert!(rtp.contains(check["figures"]["rtp"].as_str().unwrap()), "{rtp} against {check}");
    let rules = b.text("#preview-rules").await;
    assert!(rules.contains("art. 2"), "{rules}");
    assert_eq!(b.exec("return document.getElementById('new-create').hidden", json!([])).await, false);
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe on the table's preview");

    // Two paper blocks, confirmed.
    b.type_into("#new-blocks", "2").await;
    b.exec("document.getElementById('new-channel').value = 'paper'", json!([])).await;
    confirm(&b, "#new-create", true).await;
    assert_eq!(b.text("#desk-done").await, "Émission 2 créée : 2 bloc(s) publiés.");
    let emission = srv.get("/api/admin/emissions/2", OPERATOR).await;
    assert_eq!((emission["channel"].as_str(), emission["blocks"].as_array().unwrap().len()), (Some("paper"), 2));
    b.wait_for("document.querySelectorAll('tr[data-emission=\"2\"]').length === 3", "emission 2's rows").await;

    // Add blocks: cancelled first (nothing changes), then confirmed.
    b.type_into("#more-2", "1").await;
    confirm(&b, "button[data-act=more][data-emission='2']", false).await;
    assert_eq!(srv.get("/api/admin/emissions/2", OPERATOR).await["blocks"].as_array().unwrap().len(), 2);
    confirm(&b, "button[data-act=more][data-emission='2']", true).await;
    assert_eq!(srv.get("/api/admin/emissions/2", OPERATOR).await["blocks"].as_array().unwrap().len(), 3);

    // A paper block's print file: the same bytes as the API's.
    let file = srv.get_text("/api/admin/emissions/2/blocks/1/print.csv", OPERATOR).await;
    b.click("button[data-act=print][data-emission='2']").await;
    b.wait_for("document.body.dataset.downloaded !== undefined", "the download").await;
    let size = b.exec("return Number(document.body.dataset.downloaded)", json!([])).await;
    assert_eq!(size, json!(file.len()));
    // Both downloads are in the audit log and on the block's line (the second
    // outside audit's finding on print files: README.md, "What an attacker
    // meets"): how many, the last one's operator token and address, and that
    // the codes are given until a ticket of the block is sold; then the
    // file without the codes, counted apart.
    let cell = "tr[data-emission='2'][data-block='1'] td[data-print=downloads]";
    let count = |n: u32| format!("document.querySelector(\"{cell}\")?.dataset.count === '{n}'");
    b.wait_for(&count(2), "two downloads on the block's line").await;
    let text = b.text(cell).await;
    assert!(text.starts_with("2 téléchargements (2 avec les codes de jeu) ; dernier le "), "{text}");
    assert!(text.contains("avec les codes (jeton d’opérateur n° 1, 127.0.0.1)"), "{text}");
    assert!(text.ends_with("codes de jeu téléchargeables tant qu’aucun ticket du bloc n’est vendu"), "{text}");
    b.click("button[data-act=print-nocodes][data-emission='2']").await;
    b.wait_for(&count(3), "the download without the codes on the block's line").await;
    let text = b.text(cell).await;
    assert!(text.starts_with("3 téléchargements (2 avec les codes de jeu) ; dernier le "), "{text}");
    assert!(text.contains("sans les codes (jeton d’opérateur n° 1, 127.0.0.1)"), "{text}");

    // Close the sale of emission 2.
    confirm(&b, "button[data-act=close][data-emission='2']", true).await;
    let closed = srv.get("/api/admin/emissions/2", OPERATOR).await;
    assert!(closed["sale_end_ms"].is_i64(), "{closed}");
    b.wait_for(
        "!document.querySelector(\"button[data-act=close][data-emission='2']\") \
         && !document.querySelector(\"button[data-act=more][data-emission='2']\")",
        "no close nor add button any more",
    )
    .await;
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe after the actions");
    b.shot("desk-actions").await;

    // Each action wrote its audit entries: the new emission's and the new
    // block's publications, and the end of sale.
    assert!(audit(&srv).await >= entries + 3, "audit entries {entries} -> {}", audit(&srv).await);
    b.close().await;
}
