//! The operator's staff side, unsigned but behind the admin token
//! (`Authorization: Bearer TOKEN`; the demo page also takes `?token=`):
//! players, the ledger's summary, the chaos switch, and a demo lobby that
//! launches As Capone on the game server. Also the public
//! `GET /openapi.json` and `GET /health`.

use crate::app::App;
use crate::chaos::{ChaosConfig, CountersView};
use crate::client::launch;
use crate::clock::now_ms;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use wallet::{CURRENCY, ErrorBody, LaunchFlags, LaunchRequest};

/// The OpenAPI 3.0 document of the operator's wallet (served at `GET /openapi.json`).
pub const OPENAPI: &str = include_str!("../../../docs/operator-wallet.openapi.json");

pub(crate) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/", get(demo_page))
        .route("/demo/launch", post(demo_launch))
        .route("/admin/chaos", get(get_chaos).put(put_chaos))
        .route("/admin/players", get(list_players).post(set_player))
        .route("/admin/players/{player}", get(get_player))
        .route("/admin/summary", get(summary))
        .route("/openapi.json", get(openapi))
        .route("/health", get(|| async { "ok" }))
}

fn error(status: StatusCode, error: &str, message: impl Into<String>) -> Response {
    (status, Json(ErrorBody { error: error.into(), message: message.into() })).into_response()
}

/// Compares tokens through their hashes (no early exit on the secret's bytes).
fn same_token(given: &str, expected: &str) -> bool {
    Sha256::digest(given.as_bytes()) == Sha256::digest(expected.as_bytes())
}

/// Checks the admin token from the bearer header or `token` (query or
/// form); the refusal to send when it is missing or wrong.
fn authorize(app: &App, headers: &HeaderMap, token: Option<&str>) -> Option<Response> {
    let Some(expected) = &app.admin_token else {
        return Some(error(StatusCode::FORBIDDEN, "admin_disabled", "no admin token was configured (--admin-token)"));
    };
    let bearer =
        headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    match bearer.or(token) {
        Some(given) if same_token(given, expected) => None,
        _ => Some(error(StatusCode::UNAUTHORIZED, "unauthorized", "the admin token is missing or wrong")),
    }
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

#[derive(Serialize)]
struct ChaosView {
    config: ChaosConfig,
    counters: CountersView,
}

async fn get_chaos(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Some(r) = authorize(&app, &headers, None) {
        return r;
    }
    Json(ChaosView { config: app.chaos.config(), counters: app.chaos.counters() }).into_response()
}

async fn put_chaos(State(app): State<Arc<App>>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    if let Some(r) = authorize(&app, &headers, None) {
        return r;
    }
    let config: ChaosConfig = match serde_json::from_slice(&body) {
        Ok(c) => c,
        Err(e) => return error(StatusCode::BAD_REQUEST, "bad_request", format!("not a chaos setting: {e}")),
    };
    match app.chaos.set(config) {
        Ok(()) => Json(ChaosView { config: app.chaos.config(), counters: app.chaos.counters() }).into_response(),
        Err(e) => error(StatusCode::BAD_REQUEST, "bad_request", e),
    }
}

/// `POST /admin/players`: the player's whole state (absent limit: none;
/// absent blocked: false).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetPlayer {
    player: String,
    balance_cents: i64,
    #[serde(default)]
    weekly_limit_cents: Option<i64>,
    #[serde(default)]
    blocked: bool,
}

async fn set_player(State(app): State<Arc<App>>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    if let Some(r) = authorize(&app, &headers, None) {
        return r;
    }
    let p: SetPlayer = match serde_json::from_slice(&body) {
        Ok(p) => p,
        Err(e) => return error(StatusCode::BAD_REQUEST, "bad_request", format!("not a player: {e}")),
    };
    match app.ledger.set_player(&p.player, p.balance_cents, p.weekly_limit_cents, p.blocked, now_ms()).await {
        Ok(view) => Json(view).into_response(),
        Err(e) => error(StatusCode::BAD_REQUEST, "bad_request", e.to_string()),
    }
}

async fn get_player(State(app): State<Arc<App>>, headers: HeaderMap, Path(player): Path<String>) -> Response {
    if let Some(r) = authorize(&app, &headers, None) {
        return r;
    }
    match app.ledger.player(&player, now_ms()).await {
        Ok(Some(view)) => Json(view).into_response(),
        Ok(None) => error(StatusCode::NOT_FOUND, "unknown_player", format!("no player {player:?}")),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", e.to_string()),
    }
}

async fn list_players(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Some(r) = authorize(&app, &headers, None) {
        return r;
    }
    match app.ledger.players().await {
        Ok(list) => Json(serde_json::json!({
            "players": list.into_iter().map(|(player, balance_cents, blocked)| serde_json::json!({
                "player": player, "balance_cents": balance_cents, "blocked": blocked,
            })).collect::<Vec<_>>()
        }))
        .into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", e.to_string()),
    }
}

async fn summary(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Some(r) = authorize(&app, &headers, None) {
        return r;
    }
    match app.ledger.summary().await {
        Ok(s) => Json(s).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", e.to_string()),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

async fn demo_page(State(app): State<Arc<App>>, headers: HeaderMap, Query(q): Query<TokenQuery>) -> Response {
    if let Some(r) = authorize(&app, &headers, q.token.as_deref()) {
        return r;
    }
    let players = match app.ledger.players().await {
        Ok(p) => p,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", e.to_string()),
    };
    let token = escape(q.token.as_deref().unwrap_or_default());
    let mut rows = String::new();
    for (player, balance, blocked) in &players {
        let p = escape(player);
        rows.push_str(&format!(
            r#"<tr><td>{p}</td><td>{}</td><td>{}</td><td><form method="post" action="/demo/launch">
<input type="hidden" name="token" value="{token}"><input type="hidden" name="player" value="{p}">
<select name="language" aria-label="Langue / Language"><option value="fr">Français</option><option value="en">English</option></select>
<label><input type="checkbox" name="show_rtp" value="on" checked> RTP</label>
<label><input type="checkbox" name="session_timer" value="on" checked> Minuteur / Timer</label>
<label>Rappel / Reality check (min) <input type="number" name="reality_check_minutes" min="0" max="1440" value="30" size="4"></label>
<button type="submit">Jouer à As Capone / Play As Capone</button></form></td></tr>
"#,
            format::euros(*balance),
            if *blocked { "bloqué / blocked" } else { "" },
        ));
    }
    let game = escape(app.game_url.as_deref().unwrap_or("(--game-url not set)"));
    Html(format!(
        r#"<!doctype html>
<html lang="fr"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Opérateur de démonstration / Demo operator</title>
<style>body{{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}}table{{border-collapse:collapse;width:100%}}
td,th{{border-bottom:1px solid #ccc;padding:.5rem;text-align:left;vertical-align:top}}button{{padding:.4rem .8rem}}</style></head>
<body><h1>Opérateur de démonstration / Demo operator</h1>
<p>Serveur de jeu / Game server: <code>{game}</code></p>
<table><thead><tr><th>Joueur / Player</th><th>Solde / Balance</th><th></th><th></th></tr></thead><tbody>
{rows}</tbody></table></body></html>"#
    ))
    .into_response()
}

#[derive(Deserialize)]
struct DemoLaunch {
    token: Option<String>,
    player: String,
    language: String,
    show_rtp: Option<String>,
    session_timer: Option<String>,
    reality_check_minutes: Option<String>,
}

fn page_error(status: StatusCode, message: &str) -> Response {
    (
        status,
        Html(format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>Erreur / Error</title></head><body><h1>Erreur / Error</h1><p>{}</p><p>Revenez en arrière / Go back.</p></body></html>",
            escape(message)
        )),
    )
        .into_response()
}

async fn demo_launch(State(app): State<Arc<App>>, headers: HeaderMap, Form(form): Form<DemoLaunch>) -> Response {
    if let Some(r) = authorize(&app, &headers, form.token.as_deref()) {
        return r;
    }
    let Some(game_url) = &app.game_url else {
        return page_error(StatusCode::SERVICE_UNAVAILABLE, "no game server configured (--game-url)");
    };
    let reality_check_minutes = match form.reality_check_minutes.as_deref().map(str::trim) {
        None | Some("") | Some("0") => None,
        Some(m) => match m.parse::<u32>() {
            Ok(m) => Some(m),
            Err(_) => return page_error(StatusCode::BAD_REQUEST, "reality check minutes: a whole number"),
        },
    };
    let lobby_url = headers.get(header::HOST).and_then(|h| h.to_str().ok()).map(|h| format!("http://{h}/"));
    let request = LaunchRequest {
        player: form.player,
        currency: CURRENCY.into(),
        language: form.language,
        country: Some("FR".into()),
        flags: LaunchFlags {
            show_rtp: form.show_rtp.is_some(),
            session_timer: form.session_timer.is_some(),
            reality_check_minutes,
            session_limit_minutes: None,
        },
        lobby_url,
    };
    match launch(game_url, &app.keys, &request).await {
        Ok(answer) => Redirect::to(&answer.url).into_response(),
        Err(e) => page_error(StatusCode::BAD_GATEWAY, &e.to_string()),
    }
}
