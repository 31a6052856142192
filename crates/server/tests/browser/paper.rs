//! Paper tickets: `/play?code=...` (the printed QR code) and the form for a
//! typed play code. A wrong code gets a clear message and opens nothing.

use crate::harness::*;
use crate::webdriver::Screen;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_urls_serve_the_page_and_a_wrong_play_code_gets_a_clear_message() {
    let srv = spawn_server().await;
    let http = reqwest::Client::new();
    for path in ["/play", "/play?code=7K3M-Q9ZD-XW4P-2HRT", "/"] {
        let r = http.get(format!("{}{path}", srv.url)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/html"), "{path}");
        assert!(r.text().await.unwrap().contains(r#"<script type="module" src="/app.js">"#), "{path}");
    }
    // The retailer's counter: its own page and module.
    let r = http.get(format!("{}/shop", srv.url)).send().await.unwrap();
    assert_eq!(r.status(), 200, "/shop");
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/html"), "/shop");
    assert!(r.text().await.unwrap().contains(r#"<script type="module" src="/shop.js">"#), "/shop");
    for (path, mime) in [
        ("/app.js", "javascript"),
        ("/verify.js", "javascript"),
        ("/shop.js", "javascript"),
        ("/style.css", "text/css"),
        ("/favicon.svg", "image/svg+xml"),
    ] {
        let r = http.get(format!("{}{path}", srv.url)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert!(r.headers()["content-type"].to_str().unwrap().contains(mime), "{path}");
    }

    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1024, height: 768 }).await else { return };
    b.open("/?anim=0").await;
    let messages = b
        .exec_async(
            "const done = arguments[arguments.length - 1];
             import('/i18n.js').then(m => done([m.STRINGS.fr['paper.unknown'], m.STRINGS.fr['paper.unavailable'], m.STRINGS.fr['paper.format']]), e => done([String(e)]));",
            json!([]),
        )
        .await;
    let (unknown, unavailable, format) =
        (messages[0].as_str().unwrap(), messages[1].as_str().unwrap(), messages[2].as_str().unwrap());

    // The QR code's address with a code nobody sold (its 404s are this test's own).
    b.expect_http_error("/api/tickets/redeem", 404);
    b.goto(&format!("{}/play?code=7K3M-Q9ZD-XW4P-2HRT&anim=0", srv.url)).await;
    b.wait_for("!document.getElementById('paper-error').hidden", "the message").await;
    let msg = b.text("#paper-error").await;
    // No ticket has this code: said plainly.
    assert_eq!(msg, unknown);
    assert_ne!(msg, unavailable);
    assert_eq!(
        b.exec("return location.search", json!([])).await,
        "?anim=0",
        "the secret code leaves the address bar, the other settings stay"
    );
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "home");
    assert_eq!(
        b.exec("return document.getElementById('play-code').getAttribute('aria-invalid')", json!([])).await,
        "true"
    );
    b.shot("desktop-11-paper-wrong-code").await;

    // A typed code that cannot be a play code: said at once, nothing sent.
    b.exec("window.__posts = 0; const f = window.fetch; window.fetch = (u, i) => { if (i && i.method === 'POST') window.__posts++; return f(u, i); };", json!([])).await;
    b.type_into("#play-code", "HELLO-WORLD").await;
    b.click("#paper-go").await;
    b.wait_for(
        &format!("document.getElementById('paper-error').textContent === {}", json!(format)),
        "the format message",
    )
    .await;
    assert_eq!(b.exec("return window.__posts", json!([])).await, 0);

    // A well-formed code, typed in lower case with spaces: sent, refused, said.
    b.type_into("#play-code", "zzzz zzzz zzzz zzzz").await;
    b.keys("\u{E007}").await;
    b.wait_for("window.__posts === 1 && document.body.dataset.state === 'idle'", "the answer").await;
    let msg = b.text("#paper-error").await;
    assert_eq!(msg, unknown);
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "home", "no ticket opened");
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_wrong_codes_get_429_and_the_page_says_when_to_try_again() {
    let srv = spawn_server_with(|c| {
        c.redeem_failures_per_address = 2;
        c.redeem_window_s = 600;
    })
    .await;
    let Some(b) = browser(&srv.url, Screen::Phone { width: 390, height: 844 }).await else { return };
    b.open("/?anim=0").await;
    b.exec("window.__posts = 0; const f = window.fetch; window.fetch = (u, i) => { if (i && i.method === 'POST') window.__posts++; return f(u, i); };", json!([])).await;
    let slow = b
        .exec_async(
            "const done = arguments[arguments.length - 1];
             import('/i18n.js').then(m => done(m.STRINGS.fr['paper.slow']), e => done(String(e)));",
            json!([]),
        )
        .await;
    let slow = slow.as_str().unwrap();
    let (head, _) = slow.split_once('{').unwrap();
    // Two wrong codes: each said unknown. The third: refused for 10 minutes, said with the time.
    b.expect_http_error("/api/tickets/redeem", 404);
    b.expect_http_error("/api/tickets/redeem", 429);
    for (k, (code, reason)) in [
        ("ZZZZ-ZZZZ-ZZZZ-ZZZ1", "unknown"),
        ("ZZZZ-ZZZZ-ZZZZ-ZZZ2", "unknown"),
        ("ZZZZ-ZZZZ-ZZZZ-ZZZ3", "too_many_attempts"),
    ]
    .into_iter()
    .enumerate()
    {
        b.type_into("#play-code", code).await;
        b.click("#paper-go").await;
        b.wait_for(
            &format!(
                "window.__posts === {} && document.body.dataset.state === 'idle' && document.getElementById('paper-error').dataset.reason === '{reason}'",
                k + 1
            ),
            reason,
        )
        .await;
    }
    let msg = b.text("#paper-error").await;
    assert!(msg.starts_with(head) && msg.contains("10 min"), "{msg}");
    b.shot("mobile-paper-too-many").await;
    // Until then the page does not send another code.
    b.type_into("#play-code", "ZZZZ-ZZZZ-ZZZZ-ZZZ4").await;
    b.click("#paper-go").await;
    b.wait_for("document.getElementById('paper-error').dataset.reason === 'too_many_attempts'", "the wait").await;
    assert_eq!(b.exec("return window.__posts", json!([])).await, 3);
    assert_eq!(b.exec("return document.body.dataset.view", json!([])).await, "home", "no ticket opened");
    b.close().await;
    srv.app.shutdown().await.unwrap();
}
