//! The paper channel over HTTP (docs/contract.md "Retail tickets"): the shops'
//! three endpoints, and redeeming a play code, with its limit on failed
//! attempts per client address and in total.

use super::answer::HttpError;
use super::extract::{RequiredJson, bearer, client_ip};
use super::state::AppState;
use crate::store::{Redeemed as RedeemOutcome, code_hash};
use axum::Json;
use axum::extract::{ConnectInfo, FromRequestParts, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use domain::error::{AppError, ErrorBody};
use domain::retail::{RetailAnswer, ShopMe, ShopReport, parse_day};
use format::calendar::paris_day;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::net::SocketAddr;

/// A shop, from its retailer token.
pub struct Retailer(pub String);

impl FromRequestParts<AppState> for Retailer {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Retailer, HttpError> {
        let token = bearer(&parts.headers)?;
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        // Every token compared, as hashes: the time taken says nothing of them.
        let shop = state.retailers.iter().fold(None, |found, (h, shop)| if *h == hash { Some(shop) } else { found });
        if let Some(shop) = shop {
            return Ok(Retailer(shop.clone()));
        }
        if state.store.authenticate(token).await?.is_some() {
            return Err(AppError::Forbidden("the shops' endpoints need a retailer token, not a player's".into()).into());
        }
        Err(AppError::Unauthorized("invalid retailer token".into()).into())
    }
}

/// `{"serial": "..."}` as printed.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SerialBody {
    /// The ticket's serial as printed, either case, with its dashes or
    /// without: the game code (2 to 6 letters or digits, a letter first),
    /// the emission (3 digits, from 001), the block (5 digits, from 00001),
    /// the position (6 digits, from 000001) and 2 check digits (ISO 7064
    /// MOD 97-10). Wrong check digits, which a pattern cannot express, are
    /// refused with 400 ("check the serial").
    #[schema(
        pattern = "^[A-Za-z][A-Za-z0-9]{1,5}(-(00[1-9]|0[1-9][0-9]|[1-9][0-9]{2})-(0000[1-9]|000[1-9][0-9]|00[1-9][0-9]{2}|0[1-9][0-9]{3}|[1-9][0-9]{4})-(00000[1-9]|0000[1-9][0-9]|000[1-9][0-9]{2}|00[1-9][0-9]{3}|0[1-9][0-9]{4}|[1-9][0-9]{5})-|(00[1-9]|0[1-9][0-9]|[1-9][0-9]{2})(0000[1-9]|000[1-9][0-9]|00[1-9][0-9]{2}|0[1-9][0-9]{3}|[1-9][0-9]{4})(00000[1-9]|0000[1-9][0-9]|000[1-9][0-9]{2}|00[1-9][0-9]{3}|0[1-9][0-9]{4}|[1-9][0-9]{5}))[0-9]{2}$",
        example = "ASC-001-00001-000042-81"
    )]
    pub serial: String,
}

/// `POST /api/tickets/redeem` answer (documentation only: the answer is
/// stored and sent as written).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct Redeemed {
    pub ticket: domain::api::TicketView,
    /// The ticket's own token: it opens this ticket only, on any device.
    pub token: String,
}

/// `{"code": "..."}` as printed under the scratch zone.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeBody {
    /// 16 characters of Crockford's base32 (any case; spaces and dashes
    /// anywhere; `O`, `I`, `L` read as `0`, `1`, `1`), e.g. `7K3M-Q9ZD-XW4P-2HRT`.
    #[schema(pattern = "^[ -]*([0-9A-TV-Za-tv-z][ -]*){16}$", example = "7K3M-Q9ZD-XW4P-2HRT")]
    pub code: String,
}

/// A sale's or payment's answer; a retry's (the stored answer of the
/// shop's earlier request, nothing done again) carries
/// `Idempotent-Replayed: true`, so that a counter's screen can say "already
/// paid by you" rather than "pay" a second time.
/// A stored answer, marked `Idempotent-Replayed: true` when it is a retry's.
pub(super) fn shop_answer(answer: String, replayed: bool) -> Response {
    let mut r = json_answer(answer);
    if replayed {
        r.headers_mut().insert("idempotent-replayed", axum::http::HeaderValue::from_static("true"));
    }
    r
}

fn json_answer(answer: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], answer).into_response()
}

/// A shop sells a printed paper ticket (retailer). The same shop sending it
/// again (its answer was lost) gets the first answer again, byte for byte;
/// another shop gets 409.
#[utoipa::path(post, path = "/api/retail/sell", tag = "retail", security(("bearer" = [])),
    request_body = SerialBody,
    responses((status = 200, description = "the ticket's status and the words for the counter", body = RetailAnswer),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn sell(
    State(state): State<AppState>,
    Retailer(shop): Retailer,
    RequiredJson(body): RequiredJson<SerialBody>,
) -> Result<Response, HttpError> {
    let (answer, replayed) = state.store.retail_sell(&shop, state.payout_ceilings.of(&shop), &body.serial).await?;
    Ok(shop_answer(answer, replayed))
}

/// What the shop should do with a ticket, in words; changes nothing (retailer).
#[utoipa::path(post, path = "/api/retail/validate", tag = "retail", security(("bearer" = [])),
    request_body = SerialBody,
    responses((status = 200, description = "the ticket's status and the words for the counter", body = RetailAnswer),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn validate(
    State(state): State<AppState>,
    Retailer(shop): Retailer,
    RequiredJson(body): RequiredJson<SerialBody>,
) -> Result<Json<RetailAnswer>, HttpError> {
    Ok(Json(state.store.retail_validate(state.payout_ceilings.of(&shop), &body.serial).await?))
}

/// A shop pays a won paper ticket, once (retailer). The paying shop sending
/// it again (its answer was lost) gets the first answer again, byte for
/// byte, and nothing is paid twice; another shop gets 409.
#[utoipa::path(post, path = "/api/retail/pay", tag = "retail", security(("bearer" = [])),
    request_body = SerialBody,
    responses((status = 200, description = "the ticket's status and the words for the counter", body = RetailAnswer),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn pay(
    State(state): State<AppState>,
    Retailer(shop): Retailer,
    RequiredJson(body): RequiredJson<SerialBody>,
) -> Result<Response, HttpError> {
    let ceiling = state.payout_ceilings.of(&shop);
    let (answer, replayed) = state.store.retail_pay(&shop, ceiling, &body.serial, state.retail_pay_any_shop).await?;
    Ok(shop_answer(answer, replayed))
}

/// The shop a retailer token signs in (retailer): the counter page checks
/// the token with it when the shopkeeper types it, and shows the name.
/// A player's token gets 403, any other token (a ticket's, the
/// operator's, a wrong one) 401: never a shop.
#[utoipa::path(get, path = "/api/retail/me", operation_id = "retail_me", tag = "retail", security(("bearer" = [])),
    responses((status = 200, description = "the signed-in shop", body = ShopMe),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn me(State(state): State<AppState>, Retailer(shop): Retailer) -> Json<ShopMe> {
    Json(ShopMe { payout_ceiling_cents: state.payout_ceilings.of(&shop), shop })
}

/// `GET /api/retail/report` query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ReportQuery {
    /// The day, `YYYY-MM-DD`, in Paris civil time (`Europe/Paris`);
    /// absent: today in Paris. A date that does not exist (2026-02-30) is
    /// refused with 400.
    #[param(pattern = "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$", example = "2026-12-05")]
    pub day: Option<String>,
}

/// The signed-in shop's day (retailer): the paper tickets it sold, the
/// prizes it paid (each, for its receipt) and the net it owes the operator
/// (negative: is owed), in cents, from its own tickets only.
#[utoipa::path(get, path = "/api/retail/report", operation_id = "retail_report", tag = "retail", security(("bearer" = [])), params(ReportQuery),
    responses((status = 200, description = "the shop's day", body = ShopReport),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn report(
    State(state): State<AppState>,
    Retailer(shop): Retailer,
    query: Result<Query<ReportQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ShopReport>, HttpError> {
    let Query(q) = query.map_err(|e| AppError::BadRequest(format!("invalid query: {}", e.body_text())))?;
    let day = match q.day.as_deref() {
        Some(text) => parse_day(text)?,
        None => paris_day(crate::store::now_ms()),
    };
    Ok(Json(state.store.retail_report(&shop, day).await?))
}

/// `POST /api/tickets/redeem`: opens a sold paper ticket from its play code.
#[utoipa::path(post, path = "/api/tickets/redeem", tag = "tickets",
    request_body(content = CodeBody, description = "a player's bearer token, optional, adds the ticket to their history"),
    responses((status = 200, description = "the ticket, and its own token: it opens this ticket only", body = Redeemed),
              (status = 400, body = ErrorBody),
              (status = 401, description = "a bearer token that opens no account (a player's is optional)", body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 429, description = "too_many_attempts, with Retry-After", body = ErrorBody)))]
pub async fn redeem(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    RequiredJson(body): RequiredJson<CodeBody>,
) -> Result<Response, HttpError> {
    let ip = client_ip(&state, peer, &headers);
    let hash = code_hash(&body.code)?;
    // A player's token makes the ticket theirs; a ticket's own token is ignored.
    let player = match headers.get(header::AUTHORIZATION) {
        None => None,
        Some(_) => {
            let token = bearer(&headers)?;
            if state.store.ticket_of_token(token).await?.is_some() {
                None
            } else {
                Some(
                    state
                        .store
                        .authenticate(token)
                        .await?
                        .ok_or_else(|| AppError::Unauthorized("invalid token".into()))?,
                )
            }
        }
    };
    let network = domain::limits::network(ip);
    match state.store.redeem(hash, player, network.clone(), state.redeem_limits).await {
        Ok(RedeemOutcome::Opened(answer)) => Ok(json_answer(answer)),
        Ok(RedeemOutcome::WrongCode { filled }) => {
            if filled {
                state.metrics.redeem_limited.inc();
                tracing::warn!(
                    address = %ip,
                    network = %network,
                    "the limit of wrong play codes is reached: this network's attempts are refused until its window ends"
                );
            }
            Err(AppError::NotFound("no ticket has this play code: check it on the ticket".into()).into())
        }
        Err(e @ AppError::TooManyAttempts { .. }) => {
            state.metrics.redeem_refused.inc();
            Err(e.into())
        }
        Err(e) => Err(e.into()),
    }
}
