//! Online play: buying a ticket, the player's tickets, an action on a
//! ticket (exactly once) and its public record.

use super::answer::HttpError;
use super::extract::{ActionCallerAuth, Authed, CallerAuth, JsonBody, PathParam, RequiredJson};
use super::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use domain::BuyRequest;
use domain::api::{ActionAnswer, ActionRequest, BuyBody, IdempotencyKey, Purchased, TicketEnvelope, TicketList};
use domain::error::{AppError, ErrorBody};

/// Buys the next ticket: debits its price and assigns it, in one transaction.
#[utoipa::path(post, path = "/api/tickets", tag = "tickets", security(("bearer" = [])),
    request_body(content = Option<BuyBody>, description = "optional"),
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,128}$",
            description = "1 to 128 printable ASCII characters: the same key again returns the same ticket and debits nothing")),
    responses((status = 201, body = Purchased), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 402, description = "insufficient_funds; in operator mode also limit_reached, player_blocked, session_expired (the operator's refusals)", body = ErrorBody),
              (status = 403, description = "limit_reached or self_excluded (docs/player-api.md)", body = ErrorBody),
              (status = 409, body = ErrorBody),
              (status = 503, description = "sold_out: no ticket for sale; its message says why: every published block \
                is sold (the operator can add blocks), or the sale of the online emission is closed (nothing is sold \
                online until a new emission); in operator mode also wallet_unavailable", body = ErrorBody)))]
pub async fn buy_ticket(
    State(state): State<AppState>,
    Authed(player): Authed,
    headers: HeaderMap,
    JsonBody(body): JsonBody<BuyBody>,
) -> Result<Response, HttpError> {
    let key = match headers.get("idempotency-key") {
        Some(v) => Some(IdempotencyKey::parse(
            v.to_str().map_err(|_| AppError::BadRequest("Idempotency-Key must be ASCII".into()))?,
        )?),
        None => None,
    };
    body.check()?;
    let bought = match &state.wallet {
        // The operator's wallet: reserve, debit, settle (docs/operator-integration.md).
        Some(wallet) => wallet.buy(player, key.map(|k| k.as_str().to_string())).await,
        None => {
            let request = BuyRequest { key, stake_limit_required: state.limit_rules.stake_limit_required };
            // The answer as stored: the same Idempotency-Key again gets the same bytes.
            state.store.buy_ticket(player, request).await
        }
    };
    let answer = match bought {
        Err(e) if e.code() == "sold_out" => return Err(state.store.why_sold_out(e).await.into()),
        other => other?,
    };
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
) -> Result<Json<TicketList>, HttpError> {
    let axum::extract::Query(q) =
        query.map_err(|e| AppError::BadRequest(format!("invalid query: {}", e.body_text())))?;
    if q.limit.is_some_and(|n| !(1..=100).contains(&n)) {
        return Err(AppError::BadRequest("limit must be 1 to 100".into()).into());
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
) -> Result<Json<TicketEnvelope>, HttpError> {
    Ok(Json(TicketEnvelope { ticket: state.store.ticket(&caller, &id).await? }))
}

/// Where and until when a paper ticket's prize is paid: the shop that sold
/// it, any shop, or the operator's payment centre, and the last day.
#[utoipa::path(get, path = "/api/tickets/{id}/claim", tag = "tickets", security(("bearer" = [])),
    params(("id" = String, Path, description = "the ticket's id")),
    responses((status = 200, body = domain::api::PaperClaim), (status = 401, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, description = "conflict (sold_online): an online ticket", body = ErrorBody)))]
pub async fn get_claim(
    State(state): State<AppState>,
    CallerAuth(caller): CallerAuth,
    PathParam(id): PathParam<String>,
) -> Result<Json<domain::api::PaperClaim>, HttpError> {
    let ticket = state.store.ticket(&caller, &id).await?;
    let claim = domain::retail::claim(
        &ticket,
        state.retail_pay_any_shop,
        &state.payout_ceilings,
        state.claim_days,
        crate::store::now_ms(),
    )?;
    Ok(Json(claim))
}

/// Applies one action exactly once; the same request again returns the
/// identical answer.
#[utoipa::path(post, path = "/api/tickets/{id}/actions", tag = "tickets", security(("bearer" = [])), operation_id = "act",
    params(("id" = String, Path, description = "the ticket's id")),
    request_body = domain::api::ActionBody,
    responses((status = 200, body = ActionAnswer), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 413, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn post_action(
    State(state): State<AppState>,
    ActionCallerAuth(caller, check): ActionCallerAuth,
    PathParam(id): PathParam<String>,
    RequiredJson(request): RequiredJson<ActionRequest>,
) -> Result<Response, HttpError> {
    let answer = state.store.run_checked_action(&caller, check, &id, request).await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], answer).into_response())
}

/// The ticket's public record (docs/contract.md "Fairness"); `server_seed` only
/// once it is finished.
#[utoipa::path(get, path = "/api/tickets/{id}/record", tag = "tickets", security(("bearer" = [])), operation_id = "record",
    params(("id" = String, Path, description = "the ticket's id")),
    responses((status = 200, description = "the public record", body = record::Record), (status = 401, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn get_record(
    State(state): State<AppState>,
    CallerAuth(caller): CallerAuth,
    PathParam(id): PathParam<String>,
) -> Result<Json<record::Record>, HttpError> {
    Ok(Json(state.store.record(&caller, &id).await?))
}
