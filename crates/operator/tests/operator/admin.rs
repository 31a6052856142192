//! The staff side: players, the summary, the demo lobby and the launch
//! client against a stand-in game server that checks signatures as the
//! real one does (docs/operator-integration.md, the launch).

use crate::helpers::*;
use as_capone_operator::{LaunchError, launch};
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use std::sync::Arc;
use wallet::{Covered, Keys, LaunchAnswer, LaunchFlags, LaunchRequest, Signed, Signer, paths};

/// A stand-in for the game server's launch endpoint: it verifies the
/// request (nonce once) and signs its answer with `answer_keys`; it
/// refuses any language but fr and en with 400.
async fn game_server(answer_keys: Keys) -> (String, Arc<std::sync::Mutex<Vec<LaunchRequest>>>) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let signer = Arc::new(Signer::new(keys()));
    let s = seen.clone();
    let handler = move |headers: HeaderMap, body: Bytes| {
        let (signer, seen, answer_keys) = (signer.clone(), s.clone(), answer_keys.clone());
        async move {
            let now = as_capone_operator::now_ms();
            let signed = Signed::from_headers(|n| headers.get(n).and_then(|v| v.to_str().ok()));
            let checked = signed
                .clone()
                .and_then(|sg| signer.check(Covered::Request { method: "POST", path: paths::LAUNCH }, &body, &sg, now));
            let (status, answer) = match checked {
                Err(e) => (401, serde_json::json!({"error": "bad_signature", "message": e.to_string()})),
                Ok(()) => {
                    let request: LaunchRequest = serde_json::from_slice(&body).unwrap();
                    if request.language != "fr" && request.language != "en" {
                        (400, serde_json::json!({"error": "bad_request", "message": "language: fr or en"}))
                    } else {
                        seen.lock().unwrap().push(request);
                        let a = LaunchAnswer {
                            url: "http://game.test/?launch=C0DE".into(),
                            code: "C0DE".into(),
                            expires_ms: now + 60_000,
                        };
                        (200, serde_json::to_value(a).unwrap())
                    }
                }
            };
            let bytes = serde_json::to_vec(&answer).unwrap();
            let nonce = signed.map(|s| s.nonce).unwrap_or_default();
            let sig = answer_keys.sign(
                Covered::Answer { method: "POST", path: paths::LAUNCH, status, request_nonce: &nonce },
                &bytes,
                now,
            );
            let mut response = (StatusCode::from_u16(status).unwrap(), bytes).into_response();
            for (name, value) in sig.headers() {
                response.headers_mut().insert(name, value.parse().unwrap());
            }
            response
        }
    };
    let app = axum::Router::new().route(paths::LAUNCH, axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

fn request(language: &str) -> LaunchRequest {
    LaunchRequest {
        player: "p1".into(),
        currency: "EUR".into(),
        language: language.into(),
        country: Some("FR".into()),
        flags: LaunchFlags {
            show_rtp: true,
            session_timer: true,
            reality_check_minutes: Some(30),
            session_limit_minutes: None,
        },
        lobby_url: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_launch_client_signs_and_verifies() {
    let (url, seen) = game_server(keys()).await;
    let a = launch(&url, &keys(), &request("fr")).await.unwrap();
    assert_eq!((a.code.as_str(), a.url.as_str()), ("C0DE", "http://game.test/?launch=C0DE"));
    assert_eq!(seen.lock().unwrap().len(), 1);
    match launch(&url, &keys(), &request("de")).await {
        Err(LaunchError::Refused { status: 400, body }) => assert_eq!(body.error, "bad_request"),
        other => panic!("{other:?}"),
    }
    let stranger = Keys::parse(&format!("test-key:{}", "cd".repeat(32))).unwrap();
    match launch(&url, &stranger, &request("fr")).await {
        Err(LaunchError::Refused { status: 401, .. }) => {}
        other => panic!("{other:?}"),
    }
    // A game server whose answers are not signed with the shared key is not trusted.
    let (forged, _) = game_server(stranger).await;
    assert!(matches!(launch(&forged, &keys(), &request("fr")).await, Err(LaunchError::BadSignature(_))));
    assert!(matches!(launch("http://127.0.0.1:9", &keys(), &request("fr")).await, Err(LaunchError::Transport(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_summary_and_the_demo_lobby() {
    let (game_url, seen) = game_server(keys()).await;
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(&dir);
    options.game_url = Some(game_url);
    let op = operator_with(options, dir).await;
    let base = op.running.url();

    // Players through the admin API.
    let post =
        |body: serde_json::Value| op.http.post(format!("{base}/admin/players")).bearer_auth(ADMIN).json(&body).send();
    assert_eq!(post(serde_json::json!({"player": "p1", "balance_cents": 5_000})).await.unwrap().status(), 200);
    let r = post(serde_json::json!({"player": "<b>", "balance_cents": 100, "weekly_limit_cents": 50, "blocked": true}))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let view: serde_json::Value = r.json().await.unwrap();
    assert_eq!((view["blocked"].as_bool(), view["weekly_limit_cents"].as_i64()), (Some(true), Some(50)));
    assert_eq!(post(serde_json::json!({"player": "p1", "balance_cents": -1})).await.unwrap().status(), 400);
    assert_eq!(post(serde_json::json!({"player": "", "balance_cents": 1})).await.unwrap().status(), 400);
    let unauthorized = op
        .http
        .post(format!("{base}/admin/players"))
        .json(&serde_json::json!({"player": "x", "balance_cents": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorized.status(), 401);
    // Lowering a balance is a withdrawal entry: still balanced.
    assert_eq!(post(serde_json::json!({"player": "p1", "balance_cents": 4_000})).await.unwrap().status(), 200);
    let p1 = op.admin_get("/admin/players/p1").await;
    assert_eq!((p1["balance_cents"].as_i64(), p1["stakes_this_week_cents"].as_i64()), (Some(4_000), Some(0)));
    let missing = op.http.get(format!("{base}/admin/players/zz")).bearer_auth(ADMIN).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    let summary = op.admin_get("/admin/summary").await;
    assert_eq!(
        (summary["players"].as_i64(), summary["balances_cents"].as_i64(), summary["house_cents"].as_i64()),
        (Some(2), Some(4_100), Some(-4_100))
    );
    assert_eq!(summary["balanced"], true);

    // The lobby: the token in the query, names escaped, no script at all.
    assert_eq!(op.http.get(format!("{base}/")).send().await.unwrap().status(), 401);
    let page = op.http.get(format!("{base}/?token={ADMIN}")).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("Jouer à As Capone / Play As Capone") && page.contains("40,00\u{a0}€"), "{page}");
    assert!(page.contains("&lt;b&gt;") && !page.contains("<b>"));
    assert!(!page.to_lowercase().contains("<script"));
    // Its button: the launch, then a redirect to the game's URL.
    let no_redirect = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let form = format!("token={ADMIN}&player=p1&language=en&show_rtp=on&reality_check_minutes=45");
    let r = no_redirect
        .post(format!("{base}/demo/launch"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "http://game.test/?launch=C0DE");
    let launched = seen.lock().unwrap().pop().unwrap();
    assert_eq!((launched.player.as_str(), launched.language.as_str()), ("p1", "en"));
    assert_eq!(
        launched.flags,
        LaunchFlags {
            show_rtp: true,
            session_timer: false,
            reality_check_minutes: Some(45),
            session_limit_minutes: None
        }
    );
    assert_eq!(launched.lobby_url, Some(format!("http://{}/", op.running.addr)));
    // The document is served.
    let doc: serde_json::Value =
        op.http.get(format!("{base}/openapi.json")).send().await.unwrap().json().await.unwrap();
    assert_eq!(doc["openapi"], "3.0.3");
}
