//! A player's own account over HTTP (docs/player-api.md): a login and a
//! password (argon2id), sessions, the limits they set on their play and
//! their self-exclusion. The decisions are [`domain::account`]'s; the
//! password work (tens of milliseconds of CPU by design) runs on the
//! blocking pool, never on the SQLite writer.

use super::answer::HttpError;
use super::extract::{Authed, AuthedVia, JsonBody, RequiredJson, bearer, client_ip};
use super::passwords::{hash_password, verify_password};
use super::state::AppState;
use axum::Json;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use domain::account::LimitsRequest;
use domain::api::{LimitsView, Me, NewPlayerBody, PlayerCreated, parse_name};
use domain::error::{AppError, ErrorBody};
use domain::limits;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `PUT /api/me/limits` body: both fields, `null` for no limit.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsBody {
    #[schema(minimum = 1, maximum = 1000)]
    #[serde(default, deserialize_with = "domain::api::json_opt_i64")]
    pub tickets_per_day: Option<i64>,
    /// `null`: no limit on stakes, refused (400 `stake_limit_required`)
    /// while the server requires one (`stake_limit_required`, on by
    /// default): the document it then serves gives this field no `null`.
    #[schema(minimum = 1, maximum = 10000000)]
    #[serde(default, deserialize_with = "domain::api::json_opt_i64")]
    pub spend_per_week_cents: Option<i64>,
}

/// `POST /api/me/self-exclusion` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SelfExclusionBody {
    #[schema(minimum = 1, maximum = 365)]
    #[serde(deserialize_with = "domain::api::json_i64")]
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
    #[schema(max_length = 128)]
    #[serde(default, deserialize_with = "domain::api::opt_password_field")]
    pub current_password: Option<String>,
}

/// `POST /api/sessions` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginBody {
    #[schema(max_length = 32)]
    pub login: String,
    #[schema(max_length = 128)]
    #[serde(deserialize_with = "domain::api::password_field")]
    pub password: String,
    /// The `device_token` this device was given at its last login
    /// (docs/limits.md, "Logins"): its password checks are then counted on
    /// the device's own back-off, which strangers guessing the password
    /// elsewhere never fill.
    #[schema(max_length = 128)]
    #[serde(default)]
    pub device_token: Option<String>,
}

/// `POST /api/sessions` answer (201).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SessionCreated {
    pub token: String,
    pub player_id: i64,
    pub expires_ms: i64,
    /// Kept by the device and sent with its next logins (`device_token`).
    /// Not a session: it opens nothing. It ends with the password.
    pub device_token: String,
}

/// `PUT /api/me/credentials` answer.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CredentialsSet {
    pub login: String,
    /// This device's token for the new password (see `SessionCreated`).
    pub device_token: String,
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

/// Refuses a login another player holds, before the password's slow hash
/// (the writer checks again in the unit that writes it).
pub async fn ensure_login_free(state: &AppState, login: &str, player: Option<i64>) -> Result<(), AppError> {
    match state.store.login(login).await? {
        Some((owner, _)) if Some(owner) != player => Err(domain::account::login_taken(login)),
        _ => Ok(()),
    }
}

/// A stored answer's JSON object with this device's token added (the
/// token is the device's, not the account's: never stored).
fn with_device_token(answer: &str, device_token: String) -> Result<String, AppError> {
    let mut json: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(answer).map_err(|e| AppError::internal(format!("a stored answer: {e}")))?;
    json.insert("device_token".into(), device_token.into());
    Ok(serde_json::Value::Object(json).to_string())
}

fn json_answer(status: StatusCode, answer: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], answer).into_response()
}

// ------------------------------------------------------------ recovery and closure

/// `POST /api/recovery` body: a new password with the login and the recovery code.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecoveryBody {
    #[schema(max_length = 32)]
    pub login: String,
    /// `XXXX-XXXX-XXXX-XXXX`, any case, dashes and spaces optional.
    #[schema(max_length = 64)]
    pub recovery_code: String,
    /// The new password.
    #[schema(min_length = 8, max_length = 128)]
    pub password: String,
}

/// `POST /api/recovery` answer (201): a session, and the account's new
/// recovery code (the one used no longer works), shown this once.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Recovered {
    pub token: String,
    pub player_id: i64,
    pub expires_ms: i64,
    pub recovery_code: String,
    /// This device's token for the new password (see `SessionCreated`).
    pub device_token: String,
}

/// `POST /api/me/recovery-code` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecoveryCodeBody {
    #[schema(max_length = 128)]
    #[serde(deserialize_with = "domain::api::password_field")]
    pub password: String,
}

/// `POST /api/me/recovery-code` answer: the new code, shown this once.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RecoveryCode {
    pub recovery_code: String,
}

/// `POST /api/me/close` body: the password, for an account with a login.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseAccountBody {
    #[schema(max_length = 128)]
    #[serde(default, deserialize_with = "domain::api::opt_password_field")]
    pub password: Option<String>,
}

/// `POST /api/me/close` answer.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AccountClosed {
    pub closed_ms: i64,
    /// The play money left on the account, kept in the ledger (play money: nothing is paid out).
    pub balance_cents: i64,
}

/// A new recovery code (80 random bits) and its argon2id hash.
async fn new_recovery_code(state: &AppState) -> Result<(String, String), AppError> {
    let code = domain::account::recovery_code(crate::fairness::random_bytes::<10>());
    let compact = domain::account::parse_recovery_code(&code).ok_or_else(|| AppError::internal("recovery code"))?;
    Ok((code, hash_password(&state.password_hashes, compact).await?))
}

/// Sets a new password with the login and the recovery code: a new
/// session and a new recovery code; every other session and token ends.
#[utoipa::path(post, path = "/api/recovery", tag = "players", request_body = RecoveryBody,
    responses((status = 201, body = Recovered), (status = 400, description = "bad_request: the new password is not 8 to 128 characters", body = ErrorBody),
              (status = 401, description = "unauthorized: wrong login or recovery code", body = ErrorBody),
              (status = 403, description = "operator_mode: the operator owns the players (docs/operator-integration.md)", body = ErrorBody),
              (status = 429, description = "too_many_attempts, with Retry-After (the login's limits)", body = ErrorBody),
              (status = 503, description = "unavailable: too many passwords to hash at once, with Retry-After", body = ErrorBody)))]
pub async fn recover(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    RequiredJson(body): RequiredJson<RecoveryBody>,
) -> Result<(StatusCode, Json<Recovered>), HttpError> {
    accounts_are_ours(&state)?;
    check_password(&body.password)?;
    let ip = client_ip(&state, peer, &headers);
    let wrong = || AppError::Unauthorized("wrong login or recovery code".into());
    let login = parse_login(&body.login).ok();
    let code = domain::account::parse_recovery_code(&body.recovery_code);
    let found = match &login {
        Some(login) => state.store.recovery(login).await?,
        None => None,
    };
    // The recovery code's own budget (docs/limits.md, "Logins"): per client
    // network only. Its 80 random bits are not a guessable password, so it
    // shares no back-off with the account's password: strangers guessing
    // the password cannot close the owner's way back in.
    let admissions: Vec<_> = state.logins.admission("recover", ip, "recovery attempts").into_iter().collect();
    state.store.admit(admissions).await.inspect_err(|e| {
        if matches!(e, AppError::TooManyAttempts { .. }) {
            tracing::warn!(address = %ip, "recovery attempts limit reached");
        }
    })?;
    let (player, hash) = found.map_or((None, None), |(p, h)| (Some(p), h));
    // A malformed code still costs a verification: the time says nothing.
    let matched = verify_password(&state.password_hashes, code.clone().unwrap_or_default(), hash.clone()).await?;
    let (true, Some(_), Some(player), Some(verified), Some(login)) = (matched, code, player, hash, login) else {
        return Err(wrong().into());
    };
    state.store.count(vec![limits::login_succeeded(&limits::account_bucket(&login), crate::store::now_ms())]).await?;
    let password_hash = hash_password(&state.password_hashes, body.password).await?;
    let device_token = crate::devices::issue(state.store.keys(), player, &password_hash);
    let (recovery_code, recovery_hash) = new_recovery_code(&state).await?;
    let token = hex::encode(crate::fairness::random_bytes::<24>());
    let expires_ms = crate::store::now_ms() + state.session_ms;
    state
        .store
        .recover(player, verified, password_hash, recovery_hash, crate::store::token_hash(&token), expires_ms)
        .await?;
    Ok((StatusCode::CREATED, Json(Recovered { token, player_id: player, expires_ms, recovery_code, device_token })))
}

/// The password of a token's holder checked again (a new recovery code,
/// new credentials, closing the account). A password check is a password
/// check wherever it comes from: each counts as a login attempt of the
/// client's network (`logins_per_address`) and in the account's back-off,
/// shared with `POST /api/sessions` from strangers, so that a stolen token
/// guesses the password no faster than a login could. The token is never a
/// known device here: it is what a thief holds. Counted before the slow
/// hash, like a login; the right password forgets the account's attempts.
async fn check_holder_password(
    state: &AppState,
    ip: std::net::IpAddr,
    player: i64,
    password: String,
    hash: Option<String>,
) -> Result<bool, AppError> {
    let mut admissions: Vec<_> = state.logins.admission("password", ip, "password checks").into_iter().collect();
    let login = state.store.me(player).await?.login;
    if let Some(login) = &login {
        admissions.push(domain::usecase::Admission::Account { bucket: limits::account_bucket(login) });
    }
    state.store.admit(admissions).await.inspect_err(|e| {
        if matches!(e, AppError::TooManyAttempts { .. }) {
            tracing::warn!(address = %ip, "password checks limit reached");
        }
    })?;
    let matched = verify_password(&state.password_hashes, password, hash).await?;
    if let (true, Some(login)) = (matched, &login) {
        state
            .store
            .count(vec![limits::login_succeeded(&limits::account_bucket(login), crate::store::now_ms())])
            .await?;
    }
    Ok(matched)
}

/// A new recovery code for the account (its password required): the old one stops working.
#[utoipa::path(post, path = "/api/me/recovery-code", tag = "players", security(("bearer" = [])),
    request_body = RecoveryCodeBody,
    responses((status = 200, body = RecoveryCode), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, description = "forbidden: wrong password; operator_mode", body = ErrorBody),
              (status = 409, description = "conflict: the account has no login yet", body = ErrorBody),
              (status = 429, description = "too_many_attempts: too many password checks from this network, with Retry-After", body = ErrorBody),
              (status = 503, description = "unavailable: too many passwords to hash at once, with Retry-After", body = ErrorBody)))]
pub async fn renew_recovery_code(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Authed(player): Authed,
    RequiredJson(body): RequiredJson<RecoveryCodeBody>,
) -> Result<Json<RecoveryCode>, HttpError> {
    accounts_are_ours(&state)?;
    let Some(was) = state.store.password_hash(player).await? else {
        return Err(AppError::Conflict(
            "this account has no login: set a login and a password first (PUT /api/me/credentials)".into(),
        )
        .into());
    };
    let ip = client_ip(&state, peer, &headers);
    if !check_holder_password(&state, ip, player, body.password, Some(was.clone())).await? {
        return Err(AppError::Forbidden("password is wrong".into()).into());
    }
    let (recovery_code, recovery_hash) = new_recovery_code(&state).await?;
    state.store.renew_recovery(player, was, recovery_hash).await?;
    Ok(Json(RecoveryCode { recovery_code }))
}

/// Closes the player's account: no more logins, purchases or tokens; its
/// tickets, games and ledger movements are kept (docs/player-api.md).
#[utoipa::path(post, path = "/api/me/close", tag = "players", security(("bearer" = [])),
    request_body = CloseAccountBody,
    responses((status = 200, body = AccountClosed), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, description = "forbidden: the password is missing or wrong; operator_mode", body = ErrorBody),
              (status = 409, description = "self_excluded (params reason account_close, until_ms): the self-exclusion has not ended; ticket_in_play: a ticket of the account is not finished; conflict: changed meanwhile", body = ErrorBody),
              (status = 429, description = "too_many_attempts: too many password checks from this network, with Retry-After", body = ErrorBody),
              (status = 503, description = "unavailable: too many passwords to hash at once, with Retry-After", body = ErrorBody)))]
pub async fn close_account(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Authed(player): Authed,
    RequiredJson(body): RequiredJson<CloseAccountBody>,
) -> Result<Response, HttpError> {
    accounts_are_ours(&state)?;
    let was = state.store.password_hash(player).await?;
    if was.is_some() {
        let Some(password) = body.password else {
            return Err(AppError::Forbidden("this account has a password: give it as password".into()).into());
        };
        let ip = client_ip(&state, peer, &headers);
        if !check_holder_password(&state, ip, player, password, was.clone()).await? {
            return Err(AppError::Forbidden("password is wrong".into()).into());
        }
    }
    let answer = state.store.close_account(player, was).await?;
    Ok(json_answer(StatusCode::OK, answer))
}

/// Registers a player with the configured play money.
#[utoipa::path(post, path = "/api/players", tag = "players",
    request_body(content = Option<NewPlayerBody>, description = "optional"),
    responses((status = 201, body = PlayerCreated), (status = 400, body = ErrorBody), (status = 403, description = "operator_mode: the operator owns the players (docs/operator-integration.md)", body = ErrorBody), 
              (status = 409, description = "the login is taken", body = ErrorBody),
              (status = 429, description = "too_many_attempts, with Retry-After", body = ErrorBody),
              (status = 503, description = "unavailable: too many passwords to hash at once, with Retry-After", body = ErrorBody)))]
pub async fn create_player(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    JsonBody(body): JsonBody<NewPlayerBody>,
) -> Result<(StatusCode, Json<PlayerCreated>), HttpError> {
    accounts_are_ours(&state)?;
    let ip = client_ip(&state, peer, &headers);
    if let Some(admission) = state.registrations.admission("register", ip, "new players") {
        state.store.admit(vec![admission]).await.inspect_err(|e| {
            if matches!(e, AppError::TooManyAttempts { .. }) {
                tracing::warn!(address = %ip, "registration limit reached");
            }
        })?;
    }
    let name = parse_name(body.name)?;
    let mut recovery = None;
    let credentials = match (body.login, body.password) {
        (None, None) => None,
        (Some(login), Some(password)) => {
            let login = parse_login(&login)?;
            check_password(&password)?;
            ensure_login_free(&state, &login, None).await?;
            let password_hash = hash_password(&state.password_hashes, password).await?;
            // A login comes with its recovery code (docs/player-api.md "Recovery without e-mail"), shown this once.
            let (code, hashed) = new_recovery_code(&state).await?;
            recovery = Some((code, hashed));
            Some((login, password_hash))
        }
        _ => return Err(AppError::BadRequest("login and password go together".into()).into()),
    };
    let (code, recovery_hash) = recovery.unzip();
    let password_hash = credentials.as_ref().map(|(_, hash)| hash.clone());
    let mut created = state.store.create_recoverable_player(name, credentials, recovery_hash).await?;
    created.recovery_code = code;
    created.device_token =
        password_hash.map(|hash| crate::devices::issue(state.store.keys(), created.player_id, &hash));
    Ok((StatusCode::CREATED, Json(created)))
}

/// The player and their balance.
#[utoipa::path(get, path = "/api/me", tag = "players", security(("bearer" = [])),
    responses((status = 200, body = Me), (status = 401, body = ErrorBody),
              (status = 503, description = "operator mode: the operator's wallet did not give the balance", body = ErrorBody)))]
pub async fn me(State(state): State<AppState>, Authed(player): Authed) -> Result<Json<Me>, HttpError> {
    let mut me = state.store.me(player).await?;
    if let Some(wallet) = &state.wallet {
        // The operator owns the money: its balance, never play money of ours.
        me.balance_cents = wallet.balance(player).await?;
        me.mode = "operator".into();
    }
    Ok(Json(me))
}

/// In operator mode the operator owns the players: no registration,
/// login, password or limits of ours (docs/operator-integration.md).
fn accounts_are_ours(state: &AppState) -> Result<(), AppError> {
    match state.wallet {
        Some(_) => Err(AppError::OperatorMode(
            "accounts, logins and limits are the operator's in this mode: open the game from the operator's site"
                .into(),
        )),
        None => Ok(()),
    }
}

/// `GET /api/me/statement` query.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct StatementQuery {
    /// Also the totals from this instant (unix ms) to now; read from at
    /// most 31 days ago.
    pub since_ms: Option<i64>,
}

/// The player's "bilan de jeu": stakes, winnings and net result per day,
/// week and month (Paris time), and since `since_ms` (the page's reminder
/// of time played).
#[utoipa::path(get, path = "/api/me/statement", tag = "players", security(("bearer" = [])),
    params(StatementQuery),
    responses((status = 200, body = domain::api::StatementView), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody),
              (status = 403, description = "operator_mode: the operator owns the players' money", body = ErrorBody)))]
pub async fn statement(
    State(state): State<AppState>,
    Authed(player): Authed,
    query: Result<axum::extract::Query<StatementQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, HttpError> {
    accounts_are_ours(&state)?;
    let axum::extract::Query(query) =
        query.map_err(|e| AppError::BadRequest(format!("invalid query: {}", e.body_text())))?;
    let now = crate::store::now_ms();
    // An older start is read from 31 days ago (a session's reminder never needs more).
    let since = query.since_ms.map(|s| s.clamp(now - 31 * domain::account::DAY_MS, now));
    let view = state.store.statement(player, since).await?;
    Ok(axum::Json(view).into_response())
}

/// The player's limits, their usage, a raise waiting and a self-exclusion.
#[utoipa::path(get, path = "/api/me/limits", tag = "players", security(("bearer" = [])),
    responses((status = 200, body = LimitsView), (status = 401, body = ErrorBody),
              (status = 403, description = "operator_mode: the operator owns the players (docs/operator-integration.md)", body = ErrorBody)))]
pub async fn get_limits(State(state): State<AppState>, Authed(player): Authed) -> Result<Response, HttpError> {
    accounts_are_ours(&state)?;
    let view = state.store.limits(player, state.limit_rules).await?;
    Ok(axum::Json(view).into_response())
}

/// Sets the player's limits: a lower one applies at once, a higher one (or
/// none) after the cooling-off.
#[utoipa::path(put, path = "/api/me/limits", tag = "players", security(("bearer" = [])),
    request_body = LimitsBody,
    responses((status = 200, body = LimitsView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, description = "operator_mode: the operator owns the players (docs/operator-integration.md)", body = ErrorBody)))]
pub async fn put_limits(
    State(state): State<AppState>,
    Authed(player): Authed,
    RequiredJson(body): RequiredJson<LimitsBody>,
) -> Result<Response, HttpError> {
    accounts_are_ours(&state)?;
    let request =
        LimitsRequest { tickets_per_day: body.tickets_per_day, spend_per_week_cents: body.spend_per_week_cents };
    request.check()?;
    let answer = state.store.set_limits(player, request, state.limit_rules).await?;
    Ok(json_answer(StatusCode::OK, answer))
}

/// Excludes the player from buying tickets for `days` (longer, never shorter).
#[utoipa::path(post, path = "/api/me/self-exclusion", tag = "players", security(("bearer" = [])),
    request_body = SelfExclusionBody,
    responses((status = 200, body = LimitsView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, description = "operator_mode: the operator owns the players (docs/operator-integration.md)", body = ErrorBody)))]
pub async fn self_exclusion(
    State(state): State<AppState>,
    Authed(player): Authed,
    RequiredJson(body): RequiredJson<SelfExclusionBody>,
) -> Result<Response, HttpError> {
    accounts_are_ours(&state)?;
    let answer = state.store.self_exclude(player, body.days, state.limit_rules).await?;
    Ok(json_answer(StatusCode::OK, answer))
}

/// Gives the account a login and a password, or changes them.
#[utoipa::path(put, path = "/api/me/credentials", tag = "players", security(("bearer" = [])),
    request_body = CredentialsBody,
    responses((status = 200, body = CredentialsSet), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, description = "operator_mode: the operator owns the players (docs/operator-integration.md)", body = ErrorBody), 
              (status = 403, description = "wrong current_password", body = ErrorBody),
              (status = 409, description = "login taken", body = ErrorBody),
              (status = 429, description = "too_many_attempts: too many password checks from this network, with Retry-After", body = ErrorBody),
              (status = 503, description = "unavailable: too many passwords to hash at once, with Retry-After", body = ErrorBody)))]
pub async fn put_credentials(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    AuthedVia(player, via): AuthedVia,
    RequiredJson(body): RequiredJson<CredentialsBody>,
) -> Result<Response, HttpError> {
    accounts_are_ours(&state)?;
    let login = parse_login(&body.login)?;
    check_password(&body.password)?;
    let was = state.store.password_hash(player).await?;
    if was.is_some() {
        let Some(current) = body.current_password else {
            return Err(AppError::Forbidden("this account has a password: give it as current_password".into()).into());
        };
        let ip = client_ip(&state, peer, &headers);
        if !check_holder_password(&state, ip, player, current, was.clone()).await? {
            return Err(AppError::Forbidden("current_password is wrong".into()).into());
        }
    }
    ensure_login_free(&state, &login, Some(player)).await?;
    let hash = hash_password(&state.password_hashes, body.password).await?;
    let device_token = crate::devices::issue(state.store.keys(), player, &hash);
    let answer = state.store.set_credentials(player, login, hash, was, via).await?;
    Ok(json_answer(StatusCode::OK, with_device_token(&answer, device_token)?))
}

/// Opens a session with a login and a password.
#[utoipa::path(post, path = "/api/sessions", tag = "players", request_body = LoginBody,
    responses((status = 201, body = SessionCreated), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, description = "operator_mode: the operator owns the players (docs/operator-integration.md)", body = ErrorBody), 
              (status = 429, description = "too_many_attempts, with Retry-After", body = ErrorBody),
              (status = 503, description = "unavailable: too many passwords to hash at once, with Retry-After", body = ErrorBody)))]
pub async fn login(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    RequiredJson(body): RequiredJson<LoginBody>,
) -> Result<(StatusCode, axum::Json<SessionCreated>), HttpError> {
    accounts_are_ours(&state)?;
    let ip = client_ip(&state, peer, &headers);
    let wrong = || AppError::Unauthorized("wrong login or password".into());
    // A malformed login is a wrong one: the answer says nothing more.
    let login = parse_login(&body.login).ok().filter(|_| body.password.chars().count() <= 128);
    // The limits, counted before the slow hash (core::limits): attempts per
    // client network, and per account with a back-off: the account's, which
    // every stranger shares, or a known device's own.
    let found = match &login {
        Some(login) => state.store.login(login).await?,
        None => None,
    };
    let device = known_device(&state, &headers, body.device_token.as_deref(), found.as_ref()).await?;
    let mut admissions: Vec<_> = state.logins.admission("login", ip, "login attempts").into_iter().collect();
    if let Some(login) = &login {
        let bucket = match &device {
            Some(device) => limits::device_bucket(device),
            None => limits::account_bucket(login),
        };
        admissions.push(domain::usecase::Admission::Account { bucket });
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
    if !verify_password(&state.password_hashes, body.password, hash.clone()).await? {
        return Err(wrong().into());
    }
    let (Some(player), Some(verified)) = (player, hash) else { return Err(wrong().into()) };
    if let Some(login) = &login {
        let now = crate::store::now_ms();
        let mut succeeded = vec![limits::login_succeeded(&limits::account_bucket(login), now)];
        if let Some(device) = &device {
            succeeded.push(limits::login_succeeded(&limits::device_bucket(device), now));
        }
        state.store.count(succeeded).await?;
    }
    let token = hex::encode(crate::fairness::random_bytes::<24>());
    let expires_ms = crate::store::now_ms() + state.session_ms;
    let device_token = crate::devices::issue(state.store.keys(), player, &verified);
    state.store.open_session(player, verified, crate::store::token_hash(&token), expires_ms).await?;
    Ok((StatusCode::CREATED, axum::Json(SessionCreated { token, player_id: player, expires_ms, device_token })))
}

/// The known device a login comes from, by its id: a device token of the
/// login's account and current password, or else a valid token of its
/// player that the request carries (`Authorization`: a session or the
/// player's own token, which only the owner's devices hold). `None`: a
/// stranger's device, counted in the account's back-off.
async fn known_device(
    state: &AppState,
    headers: &HeaderMap,
    device_token: Option<&str>,
    found: Option<&(i64, Option<String>)>,
) -> Result<Option<String>, AppError> {
    let Some((owner, hash)) = found else { return Ok(None) };
    if let (Some(token), Some(hash)) = (device_token, hash)
        && let Some(device) = crate::devices::check(state.store.keys(), token, *owner, hash)
    {
        return Ok(Some(device));
    }
    match bearer(headers).ok() {
        Some(token) if state.store.authenticate(token).await? == Some(*owner) => {
            Ok(Some(crate::store::token_hash(token)))
        }
        _ => Ok(None),
    }
}

/// Logout: the token of the request stops working. A session's ends; the
/// player's own token is revoked, when the account has a login and a
/// password to come back with (else 409: the account would be lost).
#[utoipa::path(delete, path = "/api/sessions/current", tag = "players", security(("bearer" = [])),
    responses((status = 204, description = "the token no longer works"), (status = 401, body = ErrorBody),
              (status = 409, description = "the player's own token of an account without a login: set one first", body = ErrorBody)))]
pub async fn logout(State(state): State<AppState>, AuthedVia(player, via): AuthedVia) -> Result<StatusCode, HttpError> {
    state.store.logout(player, via).await?;
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
}
