//! The HTTP layer: [`router`], the handlers of CONTRACT.md's online channel,
//! and the extractors that parse requests ([`Authed`], [`JsonBody`]) so that
//! every refusal comes out as an [`AppError`].

use crate::api::{
    ActionAnswer, ActionRequest, BuyBody, IdempotencyKey, Me, NewPlayerBody, PlayerCreated, Purchased, TicketEnvelope,
    TicketList, parse_name,
};
use crate::core::{BuyRequest, Caller, PlayerId};
use crate::error::{AppError, ErrorBody};
use crate::metrics::Metrics;
use crate::store::Store;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequest, FromRequestParts, MatchedPath, Path, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub store: Arc<Store>,
    pub metrics: Arc<Metrics>,
    pub body_limit: usize,
    pub request_timeout: Duration,
    /// SHA-256 of each operator token.
    pub operator_tokens: Arc<Vec<[u8; 32]>>,
    /// Tables off art. 2 are accepted (tests, demos).
    pub allow_non_regulation_table: bool,
    /// SHA-256 of each retailer token, and its shop.
    pub retailers: Arc<Vec<([u8; 32], String)>>,
    pub retail_pay_any_shop: bool,
    pub claim_days: u32,
    pub trust_forwarded_for: bool,
    /// How many trusted proxies append to `X-Forwarded-For`.
    pub trusted_proxy_hops: u32,
    pub redeem_limits: crate::store::RedeemLimits,
    /// New players per client network (play money).
    pub registrations: PerNetwork,
    /// Login attempts per client network.
    pub logins: PerNetwork,
    /// How long a session lasts.
    pub session_ms: i64,
    /// The bound on password hashes computed at once.
    pub password_hashes: Arc<crate::account::PasswordHashes>,
    /// How long before a player's raised limit applies.
    pub cooling_off_ms: i64,
    /// `GET /api/odds` answers, by table digest.
    pub odds: Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
}

/// A limit of attempts per client network and window (0: no limit),
/// counted in the database (core::limits).
#[derive(Debug, Clone, Copy)]
pub struct PerNetwork {
    pub limit: u32,
    pub window_ms: i64,
}

impl PerNetwork {
    /// This limit for the network of `ip`, named `kind` (`login`, `register`).
    pub fn admission(
        &self,
        kind: &str,
        ip: std::net::IpAddr,
        what: &'static str,
    ) -> Option<crate::core::usecase::Admission> {
        (self.limit > 0).then(|| crate::core::usecase::Admission::Network {
            bucket: format!("{kind}:{}", crate::core::limits::network(ip)),
            limit: self.limit,
            window_ms: self.window_ms,
            what,
        })
    }
}

/// The whole application: API, operations endpoints and the web page.
/// The operations listener's routes (`ops_listen`): the probes and the
/// metrics alone, timed out like the rest, so that no scrape ever waits
/// for a player's connection slot.
pub fn ops_router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .fallback(|method: Method, uri: axum::http::Uri| async move {
            AppError::NotFound(format!(
                "no route for {method} {} here: the operations listener serves /metrics and /healthz",
                uri.path()
            ))
        })
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), timeout))
        .with_state(state)
}

pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/api/players", post(create_player))
        .route("/api/me", get(me))
        .route("/api/me/limits", get(crate::account::get_limits).put(crate::account::put_limits))
        .route("/api/me/self-exclusion", post(crate::account::self_exclusion))
        .route("/api/me/credentials", axum::routing::put(crate::account::put_credentials))
        .route("/api/sessions", post(crate::account::login))
        .route("/api/sessions/current", axum::routing::delete(crate::account::logout))
        .route("/api/odds", get(crate::odds::odds))
        .route("/api/tickets", post(buy_ticket).get(list_tickets))
        .route("/api/tickets/{id}", get(get_ticket))
        .route("/api/tickets/{id}/actions", post(act))
        .route("/api/tickets/{id}/record", get(record))
        .route("/api/tickets/redeem", post(crate::retail::redeem))
        .route("/api/retail/sell", post(crate::retail::sell))
        .route("/api/retail/validate", post(crate::retail::validate))
        .route("/api/retail/pay", post(crate::retail::pay))
        .route("/api/admin/emissions/{id}/close", post(crate::admin::close_emission))
        .route("/shop", get(crate::web::shop))
        .route("/api/emissions", get(crate::admin::public_emissions))
        .route("/api/admin/emissions", post(crate::admin::create_emission).get(crate::admin::list_emissions))
        .route("/api/admin/emissions/{id}", get(crate::admin::get_emission))
        .route("/api/admin/emissions/{id}/blocks", post(crate::admin::add_blocks))
        .route("/api/admin/emissions/{id}/blocks/{n}/print.csv", get(crate::admin::print_file))
        .route("/api/openapi.json", get(openapi))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/", get(crate::web::index))
        .route("/play", get(crate::web::index))
        .fallback(crate::web::asset_or_not_found)
        .method_not_allowed_fallback(method_not_allowed);
    api.layer(middleware::from_fn_with_state(state.clone(), timeout))
        .layer(DefaultBodyLimit::max(state.body_limit))
        .layer(middleware::from_fn_with_state(state.clone(), track))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_panic: Box<dyn std::any::Any + Send>| {
            AppError::internal("a handler panicked").into_response()
        }))
        .with_state(state)
}

/// Counts requests by route, method and status and times them (`/metrics`).
/// Every label takes a bounded set of values: the route template (or
/// `unmatched`), a known method (or `other`), the status code; a client
/// inventing methods or paths cannot grow the metrics.
///
/// It also refuses at once, with 413, a body announced larger than the
/// limit (`Content-Length`), instead of waiting for a body that will be
/// refused anyway; the connection is then closed, since the body is unread.
/// A request with both `Content-Length` and `Transfer-Encoding` is refused
/// with 400 and its connection closed the same way.
async fn track(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let method = method_label(req.method());
    let started = Instant::now();
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    // A body framed both by its length and by chunks is read one way here
    // and perhaps the other way by a proxy in front: the way requests are
    // smuggled past it. Refused, and the connection closed, whatever follows.
    // hyper drops the length of such a request: the listener marks it.
    let framed_twice = req.extensions().get::<crate::listener::FramedTwice>().is_some()
        || (req.headers().contains_key(header::CONTENT_LENGTH)
            && req.headers().contains_key(header::TRANSFER_ENCODING));
    let response = match announced {
        _ if framed_twice => {
            let mut r = AppError::BadRequest(
                "a request has Content-Length or Transfer-Encoding, not both: the body's length is ambiguous".into(),
            )
            .into_response();
            r.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
            r
        }
        Some(n) if n > state.body_limit as u64 => {
            let mut r = AppError::PayloadTooLarge(format!(
                "the body ({n} bytes) is larger than the limit of {} bytes",
                state.body_limit
            ))
            .into_response();
            r.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
            r
        }
        _ => next.run(req).await,
    };
    let m = &state.metrics;
    m.requests.with_label_values(&[route.as_str(), method, response.status().as_str()]).inc();
    m.latency.with_label_values(&[route.as_str(), method]).observe(started.elapsed().as_secs_f64());
    response
}

/// The metric label of a method: the standard ones, else `other`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::HEAD => "HEAD",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// A path parameter, refused in the error shape (400) when it does not
/// decode (`/api/tickets/%FF`), like every other refusal.
pub struct PathParam<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for PathParam<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<PathParam<T>, AppError> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(v)) => Ok(PathParam(v)),
            Err(e) => Err(AppError::BadRequest(format!("invalid path: {}", e.body_text()))),
        }
    }
}

/// The request-time limit, answered in the error shape. The operator's
/// desk is not under it: writing blocks takes seconds (and is finished even
/// when the client goes away, see `admin`).
async fn timeout(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if req.uri().path().starts_with("/api/admin/") {
        return next.run(req).await;
    }
    match tokio::time::timeout(state.request_timeout, next.run(req)).await {
        Ok(r) => r,
        Err(_) => AppError::Timeout(format!(
            "the request took longer than {} ms; an action may have been applied: send the same request again to get its answer",
            state.request_timeout.as_millis()
        ))
        .into_response(),
    }
}

async fn method_not_allowed(method: Method) -> AppError {
    AppError::MethodNotAllowed(format!("method {method} is not allowed here"))
}

/// An authenticated player (`Authorization: Bearer TOKEN`).
pub struct Authed(pub PlayerId);

impl FromRequestParts<AppState> for Authed {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Authed, AppError> {
        let token = bearer(&parts.headers)?;
        if state.store.ticket_of_token(token).is_some() {
            return Err(AppError::Unauthorized(
                "a paper ticket's token opens that ticket only; this needs a player's token".into(),
            ));
        }
        match state.store.authenticate(token).await? {
            Some(id) => Ok(Authed(id)),
            None => Err(AppError::Unauthorized("invalid token".into())),
        }
    }
}

/// An authenticated player and which of their tokens the request came with
/// (a logout, a password change: what ends and what keeps working).
pub struct AuthedVia(pub PlayerId, pub crate::core::player::Via);

impl FromRequestParts<AppState> for AuthedVia {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<AuthedVia, AppError> {
        let token = bearer(&parts.headers)?;
        if state.store.ticket_of_token(token).is_some() {
            return Err(AppError::Unauthorized(
                "a paper ticket's token opens that ticket only; this needs a player's token".into(),
            ));
        }
        match state.store.authenticate_via(token).await? {
            Some((id, via)) => Ok(AuthedVia(id, via)),
            None => Err(AppError::Unauthorized("invalid token".into())),
        }
    }
}

/// Who acts on a ticket: a player, or a paper ticket's own token.
pub struct CallerAuth(pub Caller);

impl FromRequestParts<AppState> for CallerAuth {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<CallerAuth, AppError> {
        let token = bearer(&parts.headers)?;
        if let Some(serial) = state.store.ticket_of_token(token) {
            return Ok(CallerAuth(Caller::Ticket(serial)));
        }
        match state.store.authenticate(token).await? {
            Some(id) => Ok(CallerAuth(Caller::Player(id))),
            None => Err(AppError::Unauthorized("invalid token".into())),
        }
    }
}

/// The bearer token of a request, or 401.
pub fn bearer(headers: &HeaderMap) -> Result<&str, AppError> {
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or_else(|| AppError::Unauthorized("missing Authorization: Bearer TOKEN".into()))?;
    let value = value.to_str().map_err(|_| AppError::Unauthorized("malformed Authorization header".into()))?;
    let token = match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
        _ => return Err(AppError::Unauthorized("expected Authorization: Bearer TOKEN".into())),
    };
    if token.is_empty() || token.len() > 256 {
        return Err(AppError::Unauthorized("invalid token".into()));
    }
    Ok(token)
}

/// A JSON body, parsed with every refusal in the error shape: too large
/// (413), not `application/json` (400), malformed (400). An empty body is
/// `T::default()` where the body is optional ([`OptionalBody`]).
pub struct JsonBody<T>(pub T);

/// Marks bodies that may be left out.
pub trait OptionalBody: Default {}
impl OptionalBody for NewPlayerBody {}
impl OptionalBody for BuyBody {}

async fn read_json<T: DeserializeOwned, S: Send + Sync>(
    req: Request,
    state: &S,
    default: Option<fn() -> T>,
) -> Result<T, AppError> {
    let is_json =
        req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).and_then(|v| v.split(';').next()).map(
            |m| {
                let m = m.trim().to_ascii_lowercase();
                m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
            },
        );
    let bytes = Bytes::from_request(req, state).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        if let Some(d) = default {
            return Ok(d());
        }
        return Err(AppError::BadRequest("a JSON body is required".into()));
    }
    if is_json != Some(true) {
        return Err(AppError::BadRequest("expected Content-Type: application/json".into()));
    }
    // An optional body may also be JSON `null` (as the OpenAPI document says).
    if let Some(d) = default
        && bytes.trim_ascii() == b"null"
    {
        return Ok(d());
    }
    // Every body is a JSON object: serde would also read a struct from an
    // array of its fields in order (`[2, "play", "9"]`), which no document allows.
    if bytes.trim_ascii().first() != Some(&b'{') {
        return Err(AppError::BadRequest("the body must be a JSON object".into()));
    }
    serde_json::from_slice(&bytes).map_err(|e| AppError::BadRequest(format!("invalid JSON body: {e}")))
}

impl<S: Send + Sync, T: DeserializeOwned + OptionalBody> FromRequest<S> for JsonBody<T> {
    type Rejection = AppError;
    async fn from_request(req: Request, state: &S) -> Result<JsonBody<T>, AppError> {
        Ok(JsonBody(read_json(req, state, Some(T::default)).await?))
    }
}

/// A JSON body that must be there.
pub struct RequiredJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for RequiredJson<T> {
    type Rejection = AppError;
    async fn from_request(req: Request, state: &S) -> Result<RequiredJson<T>, AppError> {
        Ok(RequiredJson(read_json(req, state, None).await?))
    }
}

/// Registers a player with the configured play money.
#[utoipa::path(post, path = "/api/players", tag = "players",
    request_body(content = Option<crate::api::NewPlayerBodyDoc>, description = "optional"),
    responses((status = 201, body = PlayerCreated), (status = 400, body = ErrorBody),
              (status = 409, description = "the login is taken", body = ErrorBody),
              (status = 429, description = "too_many_attempts, with Retry-After", body = ErrorBody),
              (status = 503, description = "unavailable: too many passwords to hash at once, with Retry-After", body = ErrorBody)))]
pub async fn create_player(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    JsonBody(body): JsonBody<NewPlayerBody>,
) -> Result<(StatusCode, Json<PlayerCreated>), AppError> {
    let ip = crate::retail::client_ip(&state, peer, &headers);
    if let Some(admission) = state.registrations.admission("register", ip, "new players") {
        state.store.admit(vec![admission]).await.inspect_err(|e| {
            if matches!(e, AppError::TooManyAttempts { .. }) {
                tracing::warn!(address = %ip, "registration limit reached");
            }
        })?;
    }
    let name = parse_name(body.name)?;
    let credentials = match (body.login, body.password) {
        (None, None) => None,
        (Some(login), Some(password)) => {
            let login = crate::account::parse_login(&login)?;
            crate::account::check_password(&password)?;
            crate::account::ensure_login_free(&state, &login, None).await?;
            Some((login, crate::account::hash_password(&state.password_hashes, password).await?))
        }
        _ => return Err(AppError::BadRequest("login and password go together".into())),
    };
    let created = state.store.create_player(name, credentials).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// The player and their balance.
#[utoipa::path(get, path = "/api/me", tag = "players", security(("bearer" = [])),
    responses((status = 200, body = Me), (status = 401, body = ErrorBody)))]
pub async fn me(State(state): State<AppState>, Authed(player): Authed) -> Result<Json<Me>, AppError> {
    Ok(Json(state.store.me(player).await?))
}

/// Buys the next ticket: debits its price and assigns it, in one transaction.
#[utoipa::path(post, path = "/api/tickets", tag = "tickets", security(("bearer" = [])),
    request_body(content = Option<BuyBody>, description = "optional"),
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,128}$",
            description = "1 to 128 printable ASCII characters: the same key again returns the same ticket and debits nothing")),
    responses((status = 201, body = Purchased), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 402, body = ErrorBody),
              (status = 403, description = "limit_reached or self_excluded (docs/player-api.md)", body = ErrorBody),
              (status = 409, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn buy_ticket(
    State(state): State<AppState>,
    Authed(player): Authed,
    headers: HeaderMap,
    JsonBody(body): JsonBody<BuyBody>,
) -> Result<Response, AppError> {
    let key = match headers.get("idempotency-key") {
        Some(v) => Some(IdempotencyKey::parse(
            v.to_str().map_err(|_| AppError::BadRequest("Idempotency-Key must be ASCII".into()))?,
        )?),
        None => None,
    };
    body.check()?;
    let request = BuyRequest { key };
    // The answer as stored: the same Idempotency-Key again gets the same bytes.
    let answer = state.store.buy_ticket(player, request).await?;
    Ok((StatusCode::CREATED, [(header::CONTENT_TYPE, "application/json")], answer).into_response())
}

/// `GET /api/tickets` query: a page (docs/player-api.md).
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TicketsQuery {
    /// At most this many tickets (1 to 100); absent: every ticket.
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// Only tickets bought before this one (its id).
    pub before: Option<String>,
}

/// The player's tickets, newest first; a page with `limit` (and `before`).
#[utoipa::path(get, path = "/api/tickets", tag = "tickets", security(("bearer" = [])), params(TicketsQuery),
    responses((status = 200, body = TicketList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn list_tickets(
    State(state): State<AppState>,
    Authed(player): Authed,
    query: Result<axum::extract::Query<TicketsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<TicketList>, AppError> {
    let axum::extract::Query(q) =
        query.map_err(|e| AppError::BadRequest(format!("invalid query: {}", e.body_text())))?;
    if q.limit.is_some_and(|n| !(1..=100).contains(&n)) {
        return Err(AppError::BadRequest("limit must be 1 to 100".into()));
    }
    let tickets = state.store.tickets(player, q.limit, q.before.as_deref()).await?;
    // A full page may have a next one; its first ticket is bought before the last of this one.
    let next = match q.limit {
        Some(n) if tickets.len() == n as usize => tickets.last().map(|t| t.id.clone()),
        _ => None,
    };
    Ok(Json(TicketList { tickets, next }))
}

/// One of the player's tickets.
#[utoipa::path(get, path = "/api/tickets/{id}", tag = "tickets", security(("bearer" = [])),
    params(("id" = String, Path, description = "the ticket's id")),
    responses((status = 200, body = TicketEnvelope), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_ticket(
    State(state): State<AppState>,
    CallerAuth(caller): CallerAuth,
    PathParam(id): PathParam<String>,
) -> Result<Json<TicketEnvelope>, AppError> {
    Ok(Json(TicketEnvelope { ticket: state.store.ticket(&caller, &id).await? }))
}

/// Applies one action exactly once; the same request again returns the
/// identical answer.
#[utoipa::path(post, path = "/api/tickets/{id}/actions", tag = "tickets", security(("bearer" = [])),
    params(("id" = String, Path, description = "the ticket's id")),
    request_body = crate::api::ActionBodyDoc,
    responses((status = 200, body = ActionAnswer), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 413, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn act(
    State(state): State<AppState>,
    CallerAuth(caller): CallerAuth,
    PathParam(id): PathParam<String>,
    RequiredJson(request): RequiredJson<ActionRequest>,
) -> Result<Response, AppError> {
    let answer = state.store.act(&caller, &id, request).await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], answer).into_response())
}

/// The ticket's public record (CONTRACT.md Fairness); `server_seed` only
/// once it is finished.
#[utoipa::path(get, path = "/api/tickets/{id}/record", tag = "tickets", security(("bearer" = [])),
    params(("id" = String, Path, description = "the ticket's id")),
    responses((status = 200, description = "the public record", body = crate::openapi::RecordDoc), (status = 401, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn record(
    State(state): State<AppState>,
    CallerAuth(caller): CallerAuth,
    PathParam(id): PathParam<String>,
) -> Result<Json<record::Record>, AppError> {
    Ok(Json(state.store.record(&caller, &id).await?))
}

/// 200 when the database answers (within two seconds), 503 otherwise.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "ok"), (status = 503, body = ErrorBody)))]
pub async fn healthz(State(state): State<AppState>) -> Result<Json<serde_json::Value>, AppError> {
    match tokio::time::timeout(Duration::from_secs(2), state.store.health()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::warn!(error = %crate::error::error_chain(&e), "health check: the database does not answer");
            return Err(AppError::Unavailable("the database does not answer".into()));
        }
        Err(_) => return Err(AppError::Unavailable("the database did not answer within 2 s".into())),
    }
    Ok(Json(serde_json::json!({"status": "ok"})))
}

/// Prometheus text format.
#[utoipa::path(get, path = "/metrics", tag = "operations", responses((status = 200, description = "Prometheus text")))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    // Games in play, whichever process sold them.
    match state.store.active_games().await {
        Ok(n) => state.metrics.active_games.set(n),
        Err(e) => tracing::warn!(error = %crate::error::error_chain(&e), "counting the active games"),
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], state.metrics.render()).into_response()
}

/// This document.
pub async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], crate::openapi::document_json()).into_response()
}
