//! What a request says, read so that every refusal comes out as an
//! [`AppError`] in the error shape: who calls (a player's token [`Authed`],
//! [`AuthedVia`], a ticket's or a player's [`CallerAuth`], the operator's
//! [`Operator`]), the JSON body ([`JsonBody`], [`RequiredJson`]), the path
//! ([`PathParam`], [`path_number`]) and the client's address ([`client_ip`]).

use super::answer::HttpError;
use super::state::AppState;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use domain::api::{BuyBody, NewPlayerBody};
use domain::error::AppError;
use domain::{Caller, PlayerId};
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use std::net::{IpAddr, SocketAddr};

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

/// A request of the operator, and which operator token it carries: its
/// place in the configuration's `operator_tokens`, from 1 (how the audit
/// log names the caller of a print file's download).
pub struct Operator {
    pub token: u32,
}

impl FromRequestParts<AppState> for Operator {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Operator, HttpError> {
        let token = bearer(&parts.headers)?;
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        // Comparing hashes, every one: the time taken says nothing of the tokens.
        let found = state
            .operator_tokens
            .iter()
            .zip(1u32..)
            .fold(None, |found, (t, n)| if *t == hash { found.or(Some(n)) } else { found });
        if let Some(token) = found {
            return Ok(Operator { token });
        }
        if state.store.authenticate(token).await?.is_some() {
            return Err(
                AppError::Forbidden("the operator's desk needs an operator token, not a player's".into()).into()
            );
        }
        Err(AppError::Unauthorized("invalid operator token".into()).into())
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

/// A number of the path (an emission's, a block's). Anything else names
/// nothing: 404 in the error shape (axum's own rejection is plain text).
pub fn path_number(text: &str, what: &str) -> Result<u32, AppError> {
    text.parse().map_err(|_| AppError::NotFound(format!("no {what} {text:?}: {what}s are numbered from 1")))
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

/// axum's own refusal of a body's bytes, in the same shape.
fn bytes_refused(r: BytesRejection) -> AppError {
    if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
        AppError::PayloadTooLarge(r.body_text())
    } else {
        AppError::BadRequest(r.body_text())
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
