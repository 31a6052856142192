//! The desk's "Certification report" button (docs/certification.md), in
//! Chromium: it says it is busy while the server writes the report, then
//! saves the file fetched with the token in the Authorization header (never
//! in an address): the report of the emission's own table (its
//! `table_digest` in it, its verdicts); in French and in English; no
//! serious or critical axe-core violation, busy or done.

use crate::desk::{desk_string, sign_in};
use crate::harness::*;
use crate::webdriver::Screen;
use serde_json::json;

const OPERATOR: &str = "browser-desk-certify-operator-01";

/// Clicks emission 1's button and returns the saved file's text, after
/// checking the busy state and the words said in `lang`.
async fn download(b: &Browser, lang: &str) -> String {
    // Keep what the page saves: the blob handed to URL.createObjectURL.
    b.exec(
        "window.__saved = null; const make = URL.createObjectURL.bind(URL);
         URL.createObjectURL = (blob) => { window.__saved = blob; return make(blob); };
         delete document.body.dataset.downloaded;",
        json!([]),
    )
    .await;
    let button = "button[data-act=certify][data-emission='1']";
    assert_eq!(b.text(button).await, desk_string(b, lang, "desk.certify.button").await);
    b.click(button).await;
    // The server takes seconds: meanwhile the button is disabled and says so.
    let busy = b
        .exec(
            "const b = document.querySelector(arguments[0]);
             return [b.disabled, b.getAttribute('aria-busy'), b.textContent,
                     document.getElementById('desk-done').textContent, document.body.dataset.state]",
            json!([button]),
        )
        .await;
    let wait = desk_string(b, lang, "desk.certify.wait").await.replace("{emission}", "1");
    assert_eq!(busy, json!([true, "true", desk_string(b, lang, "desk.certify.running").await, wait, "busy"]));
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe while the report is written ({lang})");
    b.wait_for("document.body.dataset.downloaded !== undefined", "the download").await;
    let done = desk_string(b, lang, "desk.done.certify").await.replace("{emission}", "1");
    assert_eq!(b.text("#desk-done").await, done);
    assert_eq!(b.exec("return document.querySelector(arguments[0]).disabled", json!([button])).await, false);
    let saved = b
        .exec_async(
            "const done = arguments[arguments.length - 1];
             window.__saved.text().then(t => done([t, Number(document.body.dataset.downloaded)]));",
            json!([]),
        )
        .await;
    let text = saved[0].as_str().unwrap().to_string();
    assert_eq!(saved[1], json!(text.len()), "dataset.downloaded is the file's size");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_certification_button_downloads_the_report_of_the_emissions_table_in_both_languages() {
    let srv = spawn_server_with(|c| c.operator_tokens = vec![OPERATOR.into()]).await;
    let digest =
        srv.get("/api/emissions", OPERATOR).await["emissions"][0]["table_digest"].as_str().unwrap().to_string();
    assert_eq!(digest.len(), 64);
    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1280, height: 900 }).await else { return };
    b.open("/desk").await;
    assert_eq!(sign_in(&b, OPERATOR).await, None);
    b.wait_for("document.querySelector(\"button[data-act=certify][data-emission='1']\")", "the button").await;

    let fr = download(&b, "fr").await;
    assert!(fr.starts_with("<!DOCTYPE html>"), "{}", &fr[..fr.len().min(200)]);
    assert!(fr.contains(&digest), "the emission's table digest is not in the report");
    assert!(fr.contains("Overall verdict: <span class="), "no verdict in the report");
    assert!(fr.contains("<tr id=\"check-fair.capone.cards_left\">"), "no check line");
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe after the download (fr)");
    // The token went in a header: no address the page asked for holds it.
    let urls = b.exec("return performance.getEntriesByType('resource').map(e => e.name)", json!([])).await;
    assert!(!urls.to_string().contains(OPERATOR), "{urls}");
    assert!(urls.to_string().contains("/api/admin/emissions/1/certification"), "{urls}");
    b.shot("desk-certify-fr").await;

    b.click("#lang").await;
    b.wait_for("document.documentElement.lang === 'en'", "English").await;
    let en = download(&b, "en").await;
    assert!(en.contains(&digest));
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe after the download (en)");
    b.shot("desk-certify-en").await;
    b.close().await;
}
