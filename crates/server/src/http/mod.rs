//! The HTTP layer, one file per audience:
//! - this module: [`router`] and [`ops_router`], the middleware (metrics,
//!   timeouts), the extractors that parse requests ([`Authed`],
//!   [`JsonBody`], ...) so that every refusal comes out as an [`AppError`]
//!   (whose `IntoResponse` is here), and the client's address;
//! - [`game`]: online play (buy, tickets, actions, records);
//! - [`demo`]: the free demo game, without money or account;
//! - [`account`]: player accounts, logins, sessions, limits;
//! - [`retail`]: shops and paper tickets;
//! - [`admin`]: the operator's desk;
//! - [`certification`]: the desk's download of an emission's certification report;
//! - [`public`]: odds, public emissions, health, metrics, the web page;
//! - [`openapi`]: the OpenAPI document and its documentation-only types;
//! - [`listener`]: the HTTP/1.1 connections themselves;
//! - [`writes`]: every write carries `Content-Type: application/json` (415).
//!
//! Handlers parse, call the [`Store`] (which runs the core's use cases) and
//! answer; no rule of money or of the game is decided here.

mod account;
mod admin;
mod certification;
mod claims;
mod demo;
mod desk;
mod desk_charts;
mod game;
pub mod listener;
mod openapi;
mod operator;
mod public;
mod retail;
mod writes;

pub use account::PasswordHashes;
pub use admin::accepted_table;
pub use operator::Launcher;

use crate::metrics::Metrics;
use crate::store::Store;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts, MatchedPath, Path, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use domain::api::{BuyBody, NewPlayerBody};
use domain::error::{AppError, error_chain};
use domain::{Caller, PlayerId};
use serde::de::DeserializeOwned;
use std::net::{IpAddr, SocketAddr};
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
    /// Each shop's payout ceiling: larger prizes are the operator's to pay.
    pub payout_ceilings: Arc<domain::retail::PayoutCeilings>,
    pub trust_forwarded_for: bool,
    /// How many trusted proxies append to `X-Forwarded-For`.
    pub trusted_proxy_hops: u32,
    pub redeem_limits: crate::store::RedeemLimits,
    /// New players per client network (play money).
    pub registrations: PerNetwork,
    /// Login attempts per client network.
    pub logins: PerNetwork,
    /// The free demo game is offered (`POST /api/demo`).
    pub demo_games: bool,
    /// Demo games started per client network.
    pub demos: PerNetwork,
    /// How long a session lasts.
    pub session_ms: i64,
    /// The bound on password hashes computed at once.
    pub password_hashes: Arc<account::PasswordHashes>,
    /// The rules on players' limits: how long before a raised limit
    /// applies, and whether a limit on stakes is chosen before buying.
    pub limit_rules: domain::account::LimitRules,
    /// `GET /api/odds` answers, by table digest.
    pub odds: Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
    /// Operator mode: the operator's wallet (`None`: the internal ledger).
    pub wallet: operator::Wallet,
    /// Operator mode: the signed launch's keys and URLs.
    pub launcher: Option<Arc<operator::Launcher>>,
    /// Set while a certification report is being written (one at a time).
    pub certifying: certification::Certifying,
}

/// A limit of attempts per client network and window (0: no limit), and
/// the global ceiling over everyone's (none: no ceiling), counted in the
/// database (core::limits).
#[derive(Debug, Clone, Copy)]
pub struct PerNetwork {
    pub limit: u32,
    pub window_ms: i64,
    pub ceiling: Option<domain::limits::Ceiling>,
}

impl PerNetwork {
    /// This limit for the network of `ip`, named `kind` (`login`, `register`).
    pub fn admission(
        &self,
        kind: &str,
        ip: std::net::IpAddr,
        what: &'static str,
    ) -> Option<domain::usecase::Admission> {
        (self.limit > 0 || self.ceiling.is_some()).then(|| domain::usecase::Admission::Network {
            bucket: format!("{kind}:{}", domain::limits::network(ip)),
            limit: self.limit,
            window_ms: self.window_ms,
            what,
            ceiling: self.ceiling,
        })
    }
}

/// The whole application: API, operations endpoints and the web page.
/// The operations listener's routes (`ops_listen`): the probes and the
/// metrics alone, timed out like the rest, so that no scrape ever waits
/// for a player's connection slot.
pub fn ops_router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(public::healthz))
        .route("/metrics", get(public::metrics))
        .fallback(|method: Method, uri: axum::http::Uri| async move {
            HttpError(AppError::NotFound(format!(
                "no route for {method} {} here: the operations listener serves /metrics and /healthz",
                uri.path()
            )))
        })
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), timeout))
        .with_state(state)
}

pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/api/players", post(account::create_player))
        .route("/api/me", get(account::me))
        .route("/api/me/limits", get(account::get_limits).put(account::put_limits))
        .route("/api/me/statement", get(account::statement))
        .route("/api/me/self-exclusion", post(account::self_exclusion))
        .route("/api/me/credentials", axum::routing::put(account::put_credentials))
        .route("/api/sessions", post(account::login))
        .route("/api/sessions/current", axum::routing::delete(account::logout))
        // Issue 31: recovery without e-mail, closing one's account.
        .route("/api/recovery", post(account::recover))
        .route("/api/me/recovery-code", post(account::renew_recovery_code))
        .route("/api/me/close", post(account::close_account))
        .route("/api/odds", get(public::odds))
        .route("/api/tickets", post(game::buy_ticket).get(game::list_tickets))
        .route("/api/operator/launch", post(operator::launch))
        .route("/api/launch", post(operator::exchange))
        .route("/api/session", get(operator::session))
        .route("/api/admin/wallet/rounds", get(operator::rounds))
        .route("/api/demo", post(demo::start))
        .route("/api/demo/{id}", get(demo::get))
        .route("/api/demo/{id}/actions", post(demo::act))
        .route("/api/demo/{id}/record", get(demo::record))
        .route("/api/tickets/{id}", get(game::get_ticket))
        .route("/api/tickets/{id}/actions", post(game::post_action))
        .route("/api/tickets/{id}/record", get(game::get_record))
        .route("/api/tickets/{id}/claim", get(game::get_claim))
        .route("/api/tickets/redeem", post(retail::redeem))
        .route("/api/retail/sell", post(retail::sell))
        .route("/api/retail/validate", post(retail::validate))
        .route("/api/retail/pay", post(retail::pay))
        .route("/api/retail/me", get(retail::me))
        .route("/api/retail/report", get(retail::report))
        .route("/api/admin/emissions/{id}/close", post(admin::close_emission))
        .route("/api/admin/version", get(admin::version))
        .route("/api/admin/health", get(desk::health))
        .route("/api/admin/claims", get(claims::list))
        .route("/api/admin/claims/pay", post(claims::pay))
        .route("/api/admin/tables/check", post(desk::check_table))
        .route("/api/admin/emissions/{id}/risk", get(desk::risk))
        .route("/api/admin/emissions/{id}/certification", get(certification::certification))
        .route("/api/admin/emissions/{id}/sales", get(desk_charts::sales))
        .route("/api/admin/emissions/{id}/prizes", get(desk_charts::prizes))
        .route("/api/admin/shops", get(desk_charts::shops))
        .route("/desk", get(desk::page))
        .route("/shop", get(public::shop))
        .route("/api/emissions", get(public::public_emissions))
        .route("/api/admin/emissions", post(admin::create_emission).get(admin::list_emissions))
        .route("/api/admin/emissions/{id}", get(admin::get_emission))
        .route("/api/admin/emissions/{id}/blocks", post(admin::add_blocks))
        .route("/api/admin/emissions/{id}/blocks/{n}/print.csv", get(admin::print_file))
        .route("/api/openapi.json", get(public::openapi))
        .route("/healthz", get(public::healthz))
        .route("/metrics", get(public::metrics))
        .route("/", get(public::index))
        .route("/play", get(public::index))
        // After every route, before the fallbacks: a write to a route
        // without JSON is 415; an unknown path stays 404, a method the
        // path does not take 405 (docs/limits.md "Cross-site requests").
        .route_layer(middleware::from_fn(writes::json_only))
        .fallback(public::asset_or_not_found)
        .method_not_allowed_fallback(method_not_allowed);
    api.layer(middleware::from_fn_with_state(state.clone(), timeout))
        .layer(DefaultBodyLimit::max(state.body_limit))
        .layer(middleware::from_fn_with_state(state.clone(), track))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_panic: Box<dyn std::any::Any + Send>| {
            HttpError(AppError::internal("a handler panicked")).into_response()
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
    let framed_twice = req.extensions().get::<listener::FramedTwice>().is_some()
        || (req.headers().contains_key(header::CONTENT_LENGTH)
            && req.headers().contains_key(header::TRANSFER_ENCODING));
    let response = match announced {
        _ if framed_twice => {
            let mut r = HttpError(AppError::BadRequest(
                "a request has Content-Length or Transfer-Encoding, not both: the body's length is ambiguous".into(),
            ))
            .into_response();
            r.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
            r
        }
        Some(n) if n > state.body_limit as u64 => {
            let mut r = HttpError(AppError::PayloadTooLarge(format!(
                "the body ({n} bytes) is larger than the limit of {} bytes",
                state.body_limit
            )))
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
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<PathParam<T>, HttpError> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(v)) => Ok(PathParam(v)),
            Err(e) => Err(AppError::BadRequest(format!("invalid path: {}", e.body_text())).into()),
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
        Err(_) => HttpError(AppError::Timeout(format!(
            "the request took longer than {} ms; an action may have been applied: send the same request again to get its answer",
            state.request_timeout.as_millis()
        )))
        .into_response(),
    }
}

async fn method_not_allowed(method: Method) -> HttpError {
    HttpError(AppError::MethodNotAllowed(format!("method {method} is not allowed here")))
}

/// An authenticated player (`Authorization: Bearer TOKEN`).
pub struct Authed(pub PlayerId);

impl FromRequestParts<AppState> for Authed {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Authed, HttpError> {
        let token = bearer(&parts.headers)?;
        if state.store.ticket_of_token(token).await?.is_some() {
            return Err(AppError::Unauthorized(
                "a paper ticket's token opens that ticket only; this needs a player's token".into(),
            )
            .into());
        }
        match state.store.authenticate(token).await? {
            Some(id) => Ok(Authed(id)),
            None => Err(AppError::Unauthorized("invalid token".into()).into()),
        }
    }
}

/// An authenticated player and which of their tokens the request came with
/// (a logout, a password change: what ends and what keeps working).
pub struct AuthedVia(pub PlayerId, pub domain::account::Via);

impl FromRequestParts<AppState> for AuthedVia {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<AuthedVia, HttpError> {
        let token = bearer(&parts.headers)?;
        if state.store.ticket_of_token(token).await?.is_some() {
            return Err(AppError::Unauthorized(
                "a paper ticket's token opens that ticket only; this needs a player's token".into(),
            )
            .into());
        }
        match state.store.authenticate_via(token).await? {
            Some((id, via)) => Ok(AuthedVia(id, via)),
            None => Err(AppError::Unauthorized("invalid token".into()).into()),
        }
    }
}

/// Who acts on a ticket: a player, or a paper ticket's own token.
pub struct CallerAuth(pub Caller);

impl FromRequestParts<AppState> for CallerAuth {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<CallerAuth, HttpError> {
        let token = bearer(&parts.headers)?;
        if let Some(serial) = state.store.ticket_of_token(token).await? {
            return Ok(CallerAuth(Caller::Ticket(serial)));
        }
        match state.store.authenticate(token).await? {
            Some(id) => Ok(CallerAuth(Caller::Player(id))),
            None => Err(AppError::Unauthorized("invalid token".into()).into()),
        }
    }
}

/// The caller of a game action, and on PostgreSQL the remembered token its
/// first statement confirms ([`crate::store::Store::action_caller`]).
pub struct ActionCallerAuth(pub Caller, pub Option<crate::store::TokenCheck>);

impl FromRequestParts<AppState> for ActionCallerAuth {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<ActionCallerAuth, HttpError> {
        let token = bearer(&parts.headers)?;
        let (caller, check) = state.store.action_caller(token).await?;
        Ok(ActionCallerAuth(caller, check))
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
    let bytes = Bytes::from_request(req, state).await.map_err(bytes_refused)?;
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
    type Rejection = HttpError;
    async fn from_request(req: Request, state: &S) -> Result<JsonBody<T>, HttpError> {
        Ok(JsonBody(read_json(req, state, Some(T::default)).await?))
    }
}

/// A JSON body that must be there.
pub struct RequiredJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for RequiredJson<T> {
    type Rejection = HttpError;
    async fn from_request(req: Request, state: &S) -> Result<RequiredJson<T>, HttpError> {
        Ok(RequiredJson(read_json(req, state, None).await?))
    }
}

/// The client's address: the TCP peer, or behind trusted proxies
/// (`trust_forwarded_for`) the address the nearest of them saw, which is
/// the `trusted_proxy_hops`-th entry of `X-Forwarded-For` from the right
/// (every header line of it, in order). The entries left of it are the
/// client's own words and never used: a client that writes
/// `X-Forwarded-For: 1.2.3.4` only adds an entry that is skipped. With
/// fewer entries than proxies, or an entry that is not an address, the
/// TCP peer is the client.
pub fn client_ip(state: &AppState, peer: SocketAddr, headers: &HeaderMap) -> IpAddr {
    if !state.trust_forwarded_for || state.trusted_proxy_hops == 0 {
        return peer.ip();
    }
    let entries: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let hops = state.trusted_proxy_hops as usize;
    entries.len().checked_sub(hops).and_then(|i| parse_forwarded(entries[i])).unwrap_or_else(|| peer.ip())
}

/// An `X-Forwarded-For` entry: an address, with or without a port.
fn parse_forwarded(entry: &str) -> Option<IpAddr> {
    entry.parse::<IpAddr>().ok().or_else(|| entry.parse::<SocketAddr>().ok().map(|s| s.ip()))
}

/// An [`AppError`] on its way out: the edge's one type of error answer, in
/// the shape of docs/contract.md. Handlers return it; `?` makes one of any
/// [`AppError`] or [`StoreError`](domain::error::StoreError).
#[derive(Debug)]
pub struct HttpError(pub AppError);

impl<E: Into<AppError>> From<E> for HttpError {
    fn from(e: E) -> HttpError {
        HttpError(e.into())
    }
}

impl IntoResponse for HttpError {
    /// The edge: a server-side failure (5xx) is logged here with its causes.
    fn into_response(self) -> Response {
        let HttpError(error) = self;
        let status = StatusCode::from_u16(error.status()).expect("a refusal's status is a valid HTTP status");
        if status.is_server_error()
            // An unconfirmed debit is the operator's network, logged with its
            // reason by the wallet's client (WARN), not a failure of ours.
            && !matches!(
                error.inner(),
                AppError::SoldOut(_) | AppError::Timeout(_) | AppError::Busy { .. } | AppError::WalletUnavailable(_)
            )
        {
            tracing::error!(status = status.as_u16(), error = %error_chain(&error), "request failed");
        }
        if let Some(retry_after_s) = error.retry_after_s() {
            let retry = retry_after_s.to_string();
            return (status, [(axum::http::header::RETRY_AFTER, retry)], axum::Json(error.body())).into_response();
        }
        (status, axum::Json(error.body())).into_response()
    }
}

/// axum's own refusal of a body's bytes, in the same shape.
fn bytes_refused(r: BytesRejection) -> AppError {
    if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
        AppError::PayloadTooLarge(r.body_text())
    } else {
        AppError::BadRequest(r.body_text())
    }
}
