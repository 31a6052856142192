//! The page in operator mode (web/operator.js, web/session.js;
//! docs/operator-integration.md), in French and English: a launch link
//! refused by a server that launches no operator's game (its code gone from
//! the address bar, no purchase behind the page), and the words of every
//! refusal of the operator's wallet, found by their codes in both
//! languages and shown without the server's own message.

use crate::harness::*;
use crate::webdriver::Screen;
use serde_json::{Value, json};

const DESKTOP: Screen = Screen::Desktop { width: 1280, height: 900 };
const PHONE: Screen = Screen::Phone { width: 390, height: 844 };

/// Whether `css` is on screen (in the layout, not hidden by an ancestor).
pub async fn visible(b: &Browser, css: &str) -> bool {
    b.exec(
        "const e = document.querySelector(arguments[0]); return !!e && e.offsetParent !== null && e.getClientRects().length > 0;",
        json!([css]),
    )
    .await
        == true
}

/// Waits for the page "session ended" / "link refused" and returns its reason.
pub async fn wait_ended(b: &Browser) -> String {
    b.wait_for(
        "document.body.dataset.view === 'ended' && document.body.dataset.state === 'idle'",
        "the page that says why there is no game",
    )
    .await;
    b.exec("return document.getElementById('view-ended').dataset.reason", json!([])).await.as_str().unwrap().to_string()
}

/// The page's address after its scripts ran: the path and the query.
async fn address(b: &Browser) -> String {
    b.exec("return location.pathname + location.search", json!([])).await.as_str().unwrap().to_string()
}

async fn refused_on_a_server_without_operators(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    // What this server answers to a launch: no operator's game here.
    let r = reqwest::Client::new()
        .post(format!("{}/api/launch", srv.url))
        .json(&json!({"code": "K7Q2M9"}))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    assert!([403, 404, 405].contains(&status), "an internal server refuses launches: {status}");
    b.expect_http_error("/api/launch", status); // the page asks it too, on purpose

    // The player's language: the address's when it says one, else the device's.
    let device =
        b.exec("return /^en\\b/i.test(navigator.languages[0] || navigator.language) ? 'en' : 'fr'", json!([])).await;
    let device = device.as_str().unwrap().to_string();
    for (lang, query) in [
        ("fr", "?lang=fr&launch=K7Q2M9&anim=0"),
        ("en", "?lang=en&launch=K7Q2M9&anim=0"),
        (&device, "?launch=K7Q2M9&anim=0"),
    ] {
        b.goto(&format!("{}/{query}", srv.url)).await;
        assert_eq!(wait_ended(&b).await, "launch_unavailable", "{size} {lang}");
        // The code left the address bar (the other parameters stay).
        let at = address(&b).await;
        assert!(!at.contains("launch") && !at.contains("K7Q2M9"), "{size} {lang}: the code left the address: {at}");
        assert!(at.contains("anim=0"), "{size} {lang}: the other parameters stay: {at}");
        assert_eq!(b.exec("return document.documentElement.lang", json!([])).await, lang);
        assert_eq!(b.text("#ended-title").await, b.string(lang, "ended.unavailable.title", &[]).await);
        assert_eq!(b.text("#ended-text").await, b.string(lang, "ended.unavailable.text", &[]).await);
        // Nothing to buy and no account to open behind it.
        for css in ["#buy", "#register", "#login-form", "#view-home"] {
            assert!(!visible(&b, css).await, "{size} {lang}: {css} is not shown");
        }
        // No lobby is known in this browser: no link to one.
        assert!(!visible(&b, "#ended-lobby").await, "{size} {lang}: no lobby link without a lobby");
        assert_eq!(
            b.exec("return document.activeElement && document.activeElement.id", json!([])).await,
            "ended-title",
            "{size} {lang}: the focus is on the page's title"
        );
        assert_fits_screen(&b, screen, size).await;
        if let Some(v) = b.axe().await {
            assert!(v.is_empty(), "{size} {lang}: axe-core on the refused launch: {v:#?}");
        }
        b.shot(&format!("operator-{size}-launch-unavailable-{lang}")).await;
        // The brand leads home: this server's own welcome (the internal mode).
        b.click("#brand").await;
        b.wait_for("document.body.dataset.view === 'home' && document.body.dataset.state === 'idle'", "the home").await;
        assert!(visible(&b, "#register").await, "{size} {lang}: the internal mode's welcome");
        // A reload does not send the code again: the page opens as usual.
        b.refresh().await;
        b.wait_for("document.body.dataset.state === 'idle' && document.body.dataset.view === 'home'", "the home").await;
        assert!(!address(&b).await.contains("launch"));
    }
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

/// The page fits the screen it was given (phones only: a desktop window is wide).
async fn assert_fits_screen(b: &Browser, screen: Screen, size: &str) {
    if let Screen::Phone { width, .. } = screen {
        assert_fits(b, width as u64, size).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launch_link_on_a_server_without_operators_is_refused_plainly_on_a_desktop() {
    refused_on_a_server_without_operators(DESKTOP, "desktop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launch_link_on_a_server_without_operators_is_refused_plainly_on_a_phone() {
    refused_on_a_server_without_operators(PHONE, "phone").await;
}

/// The refusals of the operator's wallet (docs/operator-integration.md):
/// status, code, and the words the brief asks for in French.
pub const REFUSALS: [(u16, &str, &str); 5] = [
    (402, "insufficient_funds", "Solde insuffisant chez votre opérateur"),
    (402, "limit_reached", "Vous avez atteint une limite de jeu fixée auprès de votre opérateur"),
    (402, "player_blocked", "Votre opérateur a suspendu le jeu sur votre compte"),
    (402, "session_expired", "Votre session de jeu chez votre opérateur a expiré"),
    (
        503,
        "wallet_unavailable",
        "Le paiement n’a pas pu être confirmé : aucun montant ne vous sera prélevé pour ce ticket. Réessayez.",
    ),
];

/// Every code of the operator's wallet, walked through the page's own
/// refusal (operator.js `showWalletRefusal`, as purchase.js calls it) in
/// both languages: its own words, different in French and English and from
/// every other code's, never the server's English message; a refusal of
/// our own limits (403) and a sold-out emission stay with their own modules.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_of_the_operators_wallet_has_its_words_in_french_and_english() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, DESKTOP).await else { return };
    b.open("/?anim=0").await;
    let walk = b
        .exec_async(
            "const [codes] = arguments; const done = arguments[arguments.length - 1];
             Promise.all([import('/operator.js'), import('/api.js'), import('/i18n.js'), import('/state.js')]).then(([op, api, i18n, st]) => {
               const out = {};
               // In the operator's mode (a launch's session), with its lobby.
               st.state.op = { token: 'x', flags: {}, lobby_url: 'https://operator.example/lobby', started_ms: Date.now() };
               for (const lang of ['fr', 'en']) {
                 i18n.setLang(lang);
                 out[lang] = codes.map(([status, code]) => {
                   const e = new api.ApiError(status, code, 'SERVER ENGLISH MESSAGE ' + code);
                   const shown = op.showWalletRefusal(e);
                   const a = document.getElementById('alert');
                   return { code, shown, key: op.walletRefusalKey(status, code), text: a.textContent, reason: a.dataset.reason,
                            lobby: a.querySelector('#refusal-lobby') ? a.querySelector('#refusal-lobby').getAttribute('href') : null,
                            visible: !a.hidden };
                 });
               }
               out.other402 = op.walletRefusalKey(402, 'something_new');
               out.ours403 = op.walletRefusalKey(403, 'limit_reached');
               out.soldOut = op.walletRefusalKey(503, 'sold_out');
               st.state.op = null;
               out.internal = op.showWalletRefusal(new api.ApiError(402, 'insufficient_funds', 'x'));
               i18n.setLang('fr');
               done(out);
             }, e => done(String(e)));",
            json!([REFUSALS.iter().map(|(s, c, _)| json!([s, c])).collect::<Vec<_>>()]),
        )
        .await;
    let mut keys = std::collections::HashSet::new();
    for lang in ["fr", "en"] {
        let rows = walk[lang].as_array().unwrap_or_else(|| panic!("the walk ran: {walk}"));
        assert_eq!(rows.len(), REFUSALS.len());
        let mut texts = std::collections::HashSet::new();
        for (row, (_, code, french)) in rows.iter().zip(REFUSALS) {
            assert_eq!(row["shown"], true, "{lang} {code}: shown as the operator's refusal");
            assert_eq!(row["visible"], true, "{lang} {code}: the alert shows");
            assert_eq!(row["reason"], code, "{lang} {code}: the alert says which refusal");
            let key = row["key"].as_str().unwrap();
            let words = b.string(lang, key, &[]).await;
            assert!(!words.is_empty() && words != key, "{lang} {code}: a sentence of i18n.js");
            let text = row["text"].as_str().unwrap();
            assert!(text.starts_with(&words), "{lang} {code}: the page says {words:?}: {text:?}");
            assert!(!text.contains("SERVER ENGLISH MESSAGE"), "{lang} {code}: not the server's message: {text:?}");
            assert!(texts.insert(words.clone()), "{lang} {code}: its own words: {words:?}");
            if lang == "fr" {
                assert!(words.contains(french), "fr {code}: {words:?} says {french:?}");
                keys.insert(key.to_string());
            } else {
                assert_ne!(words, b.string("fr", key, &[]).await, "en {code}: an English sentence");
            }
            // The lobby link with every refusal but the unknown outcome (try again here).
            let lobby =
                if code == "wallet_unavailable" { Value::Null } else { json!("https://operator.example/lobby") };
            assert_eq!(row["lobby"], lobby, "{lang} {code}: the lobby link");
        }
    }
    assert_eq!(keys.len(), REFUSALS.len(), "one sentence per code");
    assert_eq!(walk["other402"], "op.refused.other", "a new code of 402 still gets plain words");
    assert_eq!(walk["ours403"], Value::Null, "our own limits' refusal is limits.js's");
    assert_eq!(walk["soldOut"], Value::Null, "sold out is purchase.js's");
    assert_eq!(walk["internal"], false, "the internal mode keeps its own insufficient funds");
    b.close().await;
    srv.app.shutdown().await.unwrap();
}
