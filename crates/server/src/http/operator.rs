//! The operator mode's endpoints (docs/operator-integration.md): the
//! operator's signed launch, the page's exchange of a launch code for a
//! session, the session's figures for the reality check, and the rounds
//! of a period for reconciliation (the operator's desk).

use super::answer::HttpError;
use super::extract::{AuthedVia, Operator, RequiredJson};
use super::state::AppState;
use crate::store::{now_ms, token_hash};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use domain::LaunchWrite;
use domain::account::Via;
use domain::error::{AppError, ErrorBody};
use domain::usecase::Launch;
use serde::{Deserialize, Serialize};
use wallet::{Covered, LaunchAnswer, LaunchRequest, OurRound, Signed};

/// The operator's server launches a game for one of its players: a signed
/// call; the answer (signed back) holds a URL with a one-time code.
#[utoipa::path(post, path = "/api/operator/launch", tag = "operator-launch",
    params(
        ("x-signature-key-id" = String, Header, description = "the key's id (docs/operator-integration.md)"),
        ("x-signature-timestamp" = String, Header, description = "unix milliseconds"),
        ("x-signature-nonce" = String, Header, description = "32 hex digits, used once"),
        ("x-signature" = String, Header, description = "hex HMAC-SHA256 of the canonical text")),
    request_body = LaunchRequest,
    responses((status = 200, body = LaunchAnswer), (status = 400, body = ErrorBody),
              (status = 401, description = "bad_signature", body = ErrorBody),
              (status = 404, description = "not in operator mode", body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn launch(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Result<Response, HttpError> {
    let path = wallet::paths::LAUNCH;
    let signed = Signed::from_headers(|n| headers.get(n).and_then(|v| v.to_str().ok()))
        .map_err(|e| AppError::BadSignature(e.to_string()))?;
    let launcher = state.launcher.as_ref().ok_or_else(not_operator_mode)?;
    let now = now_ms();
    launcher
        .keys
        .verify(Covered::Request { method: "POST", path }, &body, &signed, now)
        .map_err(|e| AppError::BadSignature(e.to_string()))?;
    let request: LaunchRequest =
        serde_json::from_slice(&body).map_err(|e| AppError::BadRequest(format!("a launch request: {e}")))?;
    check_launch(&request)?;
    let code = hex::encode(crate::fairness::random_bytes::<20>());
    let expires_ms = now + launcher.ttl_ms;
    let answer =
        LaunchAnswer { url: format!("{}/?launch={code}", launcher.public_base), code: code.clone(), expires_ms };
    let answer = serde_json::to_string(&answer).expect("a launch answer serializes");
    let op = Launch {
        nonce: format!("{}/{}", signed.key_id, signed.nonce),
        reference: request.player.clone(),
        unheld_token_hash: token_hash(&hex::encode(crate::fairness::random_bytes::<24>())),
        write: LaunchWrite {
            code_hash: token_hash(&code),
            player: 0,
            language: request.language.clone(),
            country: request.country.clone(),
            flags_json: serde_json::to_string(&request.flags).expect("flags serialize"),
            lobby_url: request.lobby_url.clone(),
            created_ms: now,
            expires_ms,
        },
        answer,
    };
    let answer = state.store.launch(op).await?;
    Ok(signed_answer(&launcher.keys, path, &signed.nonce, StatusCode::OK, answer))
}

/// An answer to the operator, signed (docs/operator-integration.md).
fn signed_answer(keys: &wallet::Keys, path: &str, request_nonce: &str, status: StatusCode, body: String) -> Response {
    let covered = Covered::Answer { method: "POST", path, status: status.as_u16(), request_nonce };
    let signed = keys.sign(covered, body.as_bytes(), now_ms());
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    for (name, value) in signed.headers() {
        if let Ok(v) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, v);
        }
    }
    response
}

fn not_operator_mode() -> AppError {
    AppError::NotFound("this server is not in operator mode (wallet = \"operator\")".into())
}

/// A launch's fields, checked.
fn check_launch(r: &LaunchRequest) -> Result<(), AppError> {
    let bad = |m: &str| Err(AppError::BadRequest(m.to_string()));
    if r.player.is_empty() || r.player.len() > 64 || !r.player.bytes().all(|b| b.is_ascii_graphic()) {
        return bad("player is the operator's reference: 1 to 64 printable ASCII characters");
    }
    if r.currency != wallet::CURRENCY {
        return bad("currency must be EUR: tickets are sold in euros");
    }
    if !matches!(r.language.as_str(), "fr" | "en") {
        return bad("language is fr or en");
    }
    if let Some(c) = &r.country
        && (c.len() != 2 || !c.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return bad("country is an ISO 3166-1 alpha-2 code (FR)");
    }
    if let Some(u) = &r.lobby_url
        && (u.len() > 2048 || !(u.starts_with("https://") || u.starts_with("http://")))
    {
        return bad("lobby_url is an http(s) URL");
    }
    let f = &r.flags;
    if f.reality_check_minutes.is_some_and(|m| !(1..=1440).contains(&m))
        || f.session_limit_minutes.is_some_and(|m| !(1..=1440).contains(&m))
    {
        return bad("reality_check_minutes and session_limit_minutes are 1 to 1440");
    }
    Ok(())
}

/// `POST /api/launch` body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExchangeBody {
    /// The one-time code of the launch URL.
    pub code: String,
}

/// `POST /api/launch` answer: a session of the launched player.
// The stored answer (`domain::operator::exchange`'s) with the session's
// token: its fields in alphabetical order, as the answer has always had
// them, and `flags` as the launch stored them.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LaunchSession {
    #[schema(value_type = wallet::LaunchFlags)]
    pub flags: serde_json::Value,
    pub language: String,
    pub lobby_url: Option<String>,
    /// The operator's reference of the player.
    pub player: String,
    pub session_expires_ms: i64,
    pub session_started_ms: i64,
    /// The session's bearer token.
    // Not in the stored answer: a token is never stored.
    #[serde(default)]
    #[schema(required = true)]
    pub token: String,
}

/// The page exchanges a launch code for a session of the launched player.
#[utoipa::path(post, path = "/api/launch", tag = "operator-launch", request_body = ExchangeBody,
    responses((status = 200, body = LaunchSession), (status = 400, body = ErrorBody),
              (status = 401, description = "launch_invalid: unknown, expired or used", body = ErrorBody),
              (status = 404, description = "not in operator mode", body = ErrorBody)))]
pub async fn exchange(
    State(state): State<AppState>,
    RequiredJson(body): RequiredJson<ExchangeBody>,
) -> Result<Response, HttpError> {
    state.launcher.as_ref().ok_or_else(not_operator_mode)?;
    if body.code.is_empty() || body.code.len() > 128 {
        return Err(AppError::LaunchInvalid(
            "this launch code is unknown: open the game again from the operator's site".into(),
        )
        .into());
    }
    let token = hex::encode(crate::fairness::random_bytes::<24>());
    // A launched session lasts a day at most (the operator launches again).
    let expires = now_ms() + state.session_ms.min(domain::account::DAY_MS);
    let answer = state.store.exchange_launch(token_hash(&body.code), token_hash(&token), expires).await?;
    let mut session: LaunchSession = serde_json::from_str(&answer).map_err(AppError::internal)?;
    session.token = token;
    Ok(Json(session).into_response())
}

/// `GET /api/session`: the session's figures.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SessionView {
    /// `internal` or `operator`.
    pub mode: &'static str,
    /// When the session began (unix ms); a player's own token: the first ticket of the last 24 hours' window.
    pub started_ms: i64,
    pub expires_ms: Option<i64>,
    /// Online tickets bought since it began.
    pub tickets: i64,
    pub staked_cents: i64,
    pub won_cents: i64,
    /// won - staked.
    pub net_cents: i64,
    /// The operator's flags for this session (operator mode).
    #[schema(value_type = Option<Object>)]
    pub flags: Option<serde_json::Value>,
    pub lobby_url: Option<String>,
    pub language: Option<String>,
}

/// The session's time and net result, for the reality check.
#[utoipa::path(get, path = "/api/session", tag = "operator-launch", security(("bearer" = [])),
    responses((status = 200, body = SessionView), (status = 401, body = ErrorBody)))]
pub async fn session(
    State(state): State<AppState>,
    AuthedVia(player, via): AuthedVia,
) -> Result<Json<SessionView>, HttpError> {
    let mode = if state.wallet.is_some() { "operator" } else { "internal" };
    let now = now_ms();
    let info = match &via {
        Via::Session(hash) => state.store.session_info(hash).await?,
        Via::OwnToken => None,
    };
    let started_ms = info.as_ref().map_or(now - domain::account::DAY_MS, |i| i.started_ms);
    let summary = state.store.play_since(player, started_ms).await?;
    let flags = match info.as_ref().and_then(|i| i.flags_json.as_deref()) {
        Some(f) => Some(serde_json::from_str(f).map_err(AppError::internal)?),
        None => None,
    };
    Ok(Json(SessionView {
        mode,
        started_ms,
        expires_ms: info.as_ref().map(|i| i.expires_ms),
        tickets: summary.tickets,
        staked_cents: summary.staked_cents,
        won_cents: summary.won_cents,
        net_cents: summary.won_cents - summary.staked_cents,
        flags,
        lobby_url: info.as_ref().and_then(|i| i.lobby_url.clone()),
        language: info.and_then(|i| i.language),
    }))
}

/// `GET /api/admin/wallet/rounds` answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Rounds {
    pub rounds: Vec<OurRound>,
}

/// `GET /api/admin/wallet/rounds` query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RoundsQuery {
    /// From this instant (unix ms, included).
    pub from_ms: i64,
    /// Until this instant (unix ms, excluded).
    pub to_ms: i64,
}

/// The rounds begun in a period, as reconciliation compares them with the
/// operator's transactions.
#[utoipa::path(get, path = "/api/admin/wallet/rounds", tag = "operator", security(("bearer" = [])),
    params(RoundsQuery),
    responses((status = 200, body = Rounds), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn rounds(
    State(state): State<AppState>,
    _: Operator,
    query: Result<Query<RoundsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, HttpError> {
    let Query(q) = query.map_err(|e| AppError::BadRequest(e.body_text()))?;
    // A period that ends before it begins holds no round.
    let rounds = match q.to_ms > q.from_ms {
        true => state.store.wallet_rounds(q.from_ms, q.to_ms).await?,
        false => Vec::new(),
    };
    // As a JSON value, each round's keys in alphabetical order, as the
    // answer has always given them.
    let answer = serde_json::to_value(Rounds { rounds }).map_err(AppError::internal)?;
    Ok(Json(answer).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The launch's session as it always was: the stored answer and the
    /// token, the keys in alphabetical order.
    #[test]
    fn a_launch_session_keeps_the_stored_answer_and_its_order() {
        let stored = serde_json::json!({
            "player": "p-1", "language": "fr", "flags": {"show_rtp": true, "session_timer": false, "session_limit_minutes": 30},
            "lobby_url": null, "session_started_ms": 1, "session_expires_ms": 2,
        })
        .to_string();
        let mut session: LaunchSession = serde_json::from_str(&stored).unwrap();
        session.token = "t".into();
        let mut value: serde_json::Value = serde_json::from_str(&stored).unwrap();
        value["token"] = "t".into();
        assert_eq!(serde_json::to_string(&session).unwrap(), value.to_string());
    }
}
