//! A player's own account over HTTP (docs/player-api.md): a login and a
//! password (argon2id), sessions, the limits they set on their play and
//! their self-exclusion. The decisions are [`crate::core::player`]'s; the
//! password work (tens of milliseconds of CPU by design) runs on the
//! blocking pool, never on the SQLite writer.

use crate::core::limits;
use crate::core::player::LimitsRequest;
use crate::error::{AppError, ErrorBody};
use crate::http::{AppState, Authed, RequiredJson, bearer};
use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
use utoipa::ToSchema;

/// `GET /api/me/limits` answer, and that of every change of the limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct LimitsView {
    /// `null`: no limit.
    pub tickets_per_day: Option<i64>,
    pub spend_per_week_cents: Option<i64>,
    /// A raise waiting for its cooling-off.
    pub pending: Option<PendingView>,
    /// The end of a self-exclusion in force (unix ms).
    pub excluded_until_ms: Option<i64>,
    pub used: UsageView,
    pub cooling_off_hours: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PendingView {
    pub tickets_per_day: Option<i64>,
    pub spend_per_week_cents: Option<i64>,
    /// When these limits apply (unix ms).
    pub from_ms: i64,
}

/// Online purchases in the limits' windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UsageView {
    /// Tickets bought in the last 24 hours.
    pub tickets_today: i64,
    /// Cents spent in the last 7 days.
    pub spent_week_cents: i64,
}

/// `PUT /api/me/limits` body: both fields, `null` for no limit.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsBody {
    #[schema(minimum = 1, maximum = 1000)]
    #[serde(default, deserialize_with = "crate::api::json_opt_i64")]
    pub tickets_per_day: Option<i64>,
    #[schema(minimum = 1, maximum = 10000000)]
    #[serde(default, deserialize_with = "crate::api::json_opt_i64")]
    pub spend_per_week_cents: Option<i64>,
}

/// `POST /api/me/self-exclusion` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SelfExclusionBody {
    #[schema(minimum = 1, maximum = 3650)]
    #[serde(deserialize_with = "crate::api::json_i64")]
    pub days: i64,
}

/// `PUT /api/me/credentials` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CredentialsBody {
    #[schema(pattern = "^[A-Za-z0-9._-]{3,32}$")]
    pub login: String,
    #[schema(min_length = 8, max_length = 128)]
    pub password: String,
    /// Required when the account has a password already.
    pub current_password: Option<String>,
}

/// `POST /api/sessions` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginBody {
    #[schema(max_length = 32)]
    pub login: String,
    #[schema(max_length = 128)]
    pub password: String,
}

/// `POST /api/sessions` answer (201).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SessionCreated {
    pub token: String,
    pub player_id: i64,
    pub expires_ms: i64,
}

/// `PUT /api/me/credentials` answer.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CredentialsSet {
    pub login: String,
}

/// A login as stored: 3 to 32 of `a-z 0-9 . _ -`, upper case folded.
pub fn parse_login(login: &str) -> Result<String, AppError> {
    let login = login.to_ascii_lowercase();
    let ok = (3..=32).contains(&login.len())
        && login.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(login)
    } else {
        Err(AppError::BadRequest("login must have 3 to 32 characters among a-z 0-9 . _ -".into()))
    }
}

/// A password: 8 to 128 characters.
pub fn check_password(password: &str) -> Result<(), AppError> {
    match password.chars().count() {
        8..=128 => Ok(()),
        _ => Err(AppError::BadRequest("password must have 8 to 128 characters".into())),
    }
}

/// The argon2id hash of a password (PHC string), on the blocking pool.
pub async fn hash_password(password: String) -> Result<String, AppError> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::encode_b64(&crate::fairness::random_bytes::<16>())
            .map_err(|e| AppError::internal(format!("password salt: {e}")))?;
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| AppError::internal(format!("password hash: {e}")))
    })
    .await
    .map_err(|e| AppError::internal(format!("password hash task: {e}")))?
}

/// Whether `password` matches `hash`, on the blocking pool. `None` (no
/// such login) still costs one verification, so that the time of the
/// answer does not say whether a login exists.
pub async fn verify_password(password: String, hash: Option<String>) -> Result<bool, AppError> {
    tokio::task::spawn_blocking(move || {
        let known = hash.is_some();
        let hash = hash.unwrap_or_else(|| dummy_hash().to_string());
        let matches = PasswordHash::new(&hash)
            .map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
            .unwrap_or(false);
        known && matches
    })
    .await
    .map_err(|e| AppError::internal(format!("password check task: {e}")))
}

/// A hash of nothing anybody types, for [`verify_password`]'s unknown logins.
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        let salt = SaltString::encode_b64(&[7u8; 16]).expect("a fixed salt encodes");
        Argon2::default().hash_password(b"\0no login\0", &salt).expect("argon2 hashes").to_string()
    })
}

/// Refuses a login another player holds, before the password's slow hash
/// (the writer checks again in the unit that writes it).
pub async fn ensure_login_free(state: &AppState, login: &str, player: Option<i64>) -> Result<(), AppError> {
    match state.store.login(login).await? {
        Some((owner, _)) if Some(owner) != player => Err(crate::core::player::login_taken(login)),
        _ => Ok(()),
    }
}

fn json_answer(status: StatusCode, answer: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], answer).into_response()
}

/// The player's limits, their usage, a raise waiting and a self-exclusion.
#[utoipa::path(get, path = "/api/me/limits", tag = "players", security(("bearer" = [])),
    responses((status = 200, body = LimitsView), (status = 401, body = ErrorBody)))]
pub async fn get_limits(State(state): State<AppState>, Authed(player): Authed) -> Result<Response, AppError> {
    let view = state.store.limits(player, state.cooling_off_ms).await?;
    Ok(axum::Json(view).into_response())
}

/// Sets the player's limits: a lower one applies at once, a higher one (or
/// none) after the cooling-off.
#[utoipa::path(put, path = "/api/me/limits", tag = "players", security(("bearer" = [])),
    request_body = LimitsBody,
    responses((status = 200, body = LimitsView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn put_limits(
    State(state): State<AppState>,
    Authed(player): Authed,
    RequiredJson(body): RequiredJson<LimitsBody>,
) -> Result<Response, AppError> {
    let request =
        LimitsRequest { tickets_per_day: body.tickets_per_day, spend_per_week_cents: body.spend_per_week_cents };
    request.check()?;
    let answer = state.store.set_limits(player, request, state.cooling_off_ms).await?;
    Ok(json_answer(StatusCode::OK, answer))
}

/// Excludes the player from buying tickets for `days` (longer, never shorter).
#[utoipa::path(post, path = "/api/me/self-exclusion", tag = "players", security(("bearer" = [])),
    request_body = SelfExclusionBody,
    responses((status = 200, body = LimitsView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn self_exclusion(
    State(state): State<AppState>,
    Authed(player): Authed,
    RequiredJson(body): RequiredJson<SelfExclusionBody>,
) -> Result<Response, AppError> {
    let answer = state.store.self_exclude(player, body.days, state.cooling_off_ms).await?;
    Ok(json_answer(StatusCode::OK, answer))
}

/// Gives the account a login and a password, or changes them.
#[utoipa::path(put, path = "/api/me/credentials", tag = "players", security(("bearer" = [])),
    request_body = CredentialsBody,
    responses((status = 200, body = CredentialsSet), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, description = "wrong current_password", body = ErrorBody),
              (status = 409, description = "login taken", body = ErrorBody)))]
pub async fn put_credentials(
    State(state): State<AppState>,
    Authed(player): Authed,
    RequiredJson(body): RequiredJson<CredentialsBody>,
) -> Result<Response, AppError> {
    let login = parse_login(&body.login)?;
    check_password(&body.password)?;
    let was = state.store.password_hash(player).await?;
    if was.is_some() {
        let Some(current) = body.current_password else {
            return Err(AppError::Forbidden("this account has a password: give it as current_password".into()));
        };
        if !verify_password(current, was.clone()).await? {
            return Err(AppError::Forbidden("current_password is wrong".into()));
        }
    }
    ensure_login_free(&state, &login, Some(player)).await?;
    let hash = hash_password(body.password).await?;
    let answer = state.store.set_credentials(player, login, hash, was).await?;
    Ok(json_answer(StatusCode::OK, answer))
}

/// Opens a session with a login and a password.
#[utoipa::path(post, path = "/api/sessions", tag = "players", request_body = LoginBody,
    responses((status = 201, body = SessionCreated), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 429, description = "too_many_attempts, with Retry-After", body = ErrorBody)))]
pub async fn login(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    RequiredJson(body): RequiredJson<LoginBody>,
) -> Result<(StatusCode, axum::Json<SessionCreated>), AppError> {
    let ip = crate::retail::client_ip(&state, peer, &headers);
    let wrong = || AppError::Unauthorized("wrong login or password".into());
    // A malformed login is a wrong one: the answer says nothing more.
    let login = parse_login(&body.login).ok().filter(|_| body.password.chars().count() <= 128);
    // The limits, counted before the slow hash (core::limits): attempts per
    // client network, and per account from anywhere with a back-off that
    // the owner's own device (a valid token of theirs) skips.
    let found = match &login {
        Some(login) => state.store.login(login).await?,
        None => None,
    };
    let mut admissions: Vec<_> = state.logins.admission("login", ip, "login attempts").into_iter().collect();
    if let Some(login) = &login {
        let known = match (bearer(&headers).ok(), &found) {
            (Some(token), Some((owner, _))) => state.store.authenticate(token).await? == Some(*owner),
            _ => false,
        };
        admissions.push(crate::core::usecase::Admission::Account { bucket: limits::account_bucket(login), known });
    }
    state.store.admit(admissions).await.inspect_err(|e| {
        if matches!(e, AppError::TooManyAttempts { .. }) {
            tracing::warn!(address = %ip, "login attempts limit reached");
        }
    })?;
    let (player, hash) = match found {
        Some((player, hash)) => (Some(player), hash),
        None => (None, None),
    };
    if !verify_password(body.password, hash.clone()).await? {
        return Err(wrong());
    }
    let (Some(player), Some(verified)) = (player, hash) else { return Err(wrong()) };
    if let Some(login) = &login {
        state
            .store
            .count(vec![limits::login_succeeded(&limits::account_bucket(login), crate::store::now_ms())])
            .await?;
    }
    let token = hex::encode(crate::fairness::random_bytes::<24>());
    let expires_ms = crate::store::now_ms() + state.session_ms;
    state.store.open_session(player, verified, crate::store::token_hash(&token), expires_ms).await?;
    Ok((StatusCode::CREATED, axum::Json(SessionCreated { token, player_id: player, expires_ms })))
}

/// Ends the session whose token is the bearer (logout). A player's own
/// token is not a session: it keeps working.
#[utoipa::path(delete, path = "/api/sessions/current", tag = "players", security(("bearer" = [])),
    responses((status = 204, description = "the session is over"), (status = 401, body = ErrorBody)))]
pub async fn logout(
    State(state): State<AppState>,
    Authed(_): Authed,
    headers: HeaderMap,
) -> Result<StatusCode, AppError> {
    let token = bearer(&headers)?;
    state.store.close_session(crate::store::token_hash(token)).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_are_folded_to_lower_case_and_checked() {
        assert_eq!(parse_login("Ana.B-1_").unwrap(), "ana.b-1_");
        for bad in ["ab", "a b c", "éléonore", &"x".repeat(33), "ana;drop"] {
            assert_eq!(parse_login(bad).unwrap_err().code(), "bad_request", "{bad}");
        }
        assert!(check_password("1234567").is_err());
        assert!(check_password("12345678").is_ok());
        assert!(check_password(&"é".repeat(128)).is_ok());
        assert!(check_password(&"é".repeat(129)).is_err());
    }

    #[tokio::test]
    async fn a_password_matches_its_argon2id_hash_only() {
        let hash = hash_password("correct horse".into()).await.unwrap();
        assert!(hash.starts_with("$argon2id$v=19$"), "{hash}");
        assert!(verify_password("correct horse".into(), Some(hash.clone())).await.unwrap());
        assert!(!verify_password("correct horsE".into(), Some(hash.clone())).await.unwrap());
        // Two hashes of one password differ (their salts do).
        assert_ne!(hash, hash_password("correct horse".into()).await.unwrap());
        // An unknown login never matches, whatever the password.
        assert!(!verify_password("\0no login\0".into(), None).await.unwrap());
    }
}
