//! The free demo game ("Essayer gratuitement", docs/player-api.md "Demo
//! games"): `POST /api/demo` starts one without account or money, and its
//! own bearer token reads and plays it at `/api/demo/{id}`. The decisions
//! are [`domain::demo`]'s; the rows [`crate::store`]'s.

use super::answer::HttpError;
use super::extract::{PathParam, RequiredJson, bearer, client_ip};
use super::state::AppState;
use crate::store::{now_ms, token_hash};
use axum::Json;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use domain::api::{ActionAnswer, ActionRequest, ClientSeed, TicketEnvelope, TicketView};
use domain::demo::{self, DEMO_LIFETIME_MS, DemoDecision, DemoRecord, DemoRow};
use domain::error::{AppError, ErrorBody};
use serde::Serialize;
use utoipa::ToSchema;

/// `POST /api/demo` answer (201): the game and its own bearer token.
#[derive(Debug, Serialize, ToSchema)]
pub struct DemoStartedAnswer {
    /// The game, as a ticket's view whose `channel` is `demo` and `price_cents` 0.
    pub ticket: TicketView,
    /// The game's own bearer token: it reads and plays this game only.
    pub token: String,
}

/// Crockford's base32 alphabet (no I, L, O, U).
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// `DEMO-` and 16 Crockford base32 characters (80 random bits).
fn new_id() -> String {
    let bytes = crate::fairness::random_bytes::<10>();
    let mut bits = 0u128;
    for b in bytes {
        bits = bits << 8 | u128::from(b);
    }
    let chars: String = (0..16).rev().map(|i| CROCKFORD[(bits >> (5 * i) & 31) as usize] as char).collect();
    format!("{}{chars}", demo::DEMO_PREFIX)
}

/// Starts a free demo game on a schedule of the table on sale.
#[utoipa::path(post, path = "/api/demo", tag = "demo",
    responses((status = 201, body = DemoStartedAnswer),
              (status = 404, description = "not_found: demo games are turned off (`demo_games = false`)", body = ErrorBody),
              (status = 429, description = "too_many_attempts: too many demo games from this network, with Retry-After", body = ErrorBody),
              (status = 503, description = "sold_out: no table on sale", body = ErrorBody)))]
pub async fn start(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    if !state.demo_games {
        return Err(AppError::NotFound("demo games are turned off on this server".into()).into());
    }
    let ip = client_ip(&state, peer, &headers);
    if let Some(admission) = state.demos.admission("demo", ip, "demo games") {
        state.store.admit(vec![admission]).await?;
    }
    let (_, toml) = state
        .store
        .online_table()
        .await?
        .ok_or_else(|| AppError::SoldOut("no online emission: no prize table on sale for a demo".into()))?;
    let table = math::PrizeTable::parse_toml(&toml)
        .map_err(|e| AppError::internal(format!("an emission's stored table is refused: {e}")))?;
    let prizes = demo::schedule_at(&table, crate::fairness::random_below(table.block_size))?;
    let token = hex::encode(crate::fairness::random_bytes::<32>());
    let started = demo::start(new_id(), token_hash(&token), prizes, crate::fairness::random_bytes::<32>(), now_ms())?;
    state.store.insert_demo(&started.row).await?;
    state.metrics.demo_games.inc();
    Ok((StatusCode::CREATED, Json(DemoStartedAnswer { ticket: started.ticket, token })).into_response())
}

/// The game `id`, read with its own token. The token is the game's only
/// credential: one that is no demo game's (a player's, a ticket's, a
/// removed game's) is 401; a demo game's token on another id is 404,
/// exactly as for an id that does not exist.
async fn own_game(state: &AppState, headers: &HeaderMap, id: &str) -> Result<DemoRow, AppError> {
    let token = bearer(headers)?;
    let row = state
        .store
        .demo_of_token(&token_hash(token), now_ms() - DEMO_LIFETIME_MS)
        .await?
        .ok_or_else(|| AppError::Unauthorized("not a demo game's token (a demo game is kept for a day)".into()))?;
    if row.id != id {
        return Err(AppError::NotFound(format!("no demo game {id} for this token")));
    }
    Ok(row)
}

/// A demo game.
#[utoipa::path(get, path = "/api/demo/{id}", tag = "demo", security(("bearer" = [])),
    params(("id" = String, Path, description = "the game's id (DEMO-...)")),
    responses((status = 200, body = TicketEnvelope), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    headers: HeaderMap,
    PathParam(id): PathParam<String>,
) -> Result<Json<TicketEnvelope>, HttpError> {
    let row = own_game(&state, &headers, &id).await?;
    Ok(Json(TicketEnvelope { ticket: demo::view(&demo::replay(&row)?.ticket) }))
}

/// Applies one action to a demo game exactly once: the same request again
/// returns the identical answer.
#[utoipa::path(post, path = "/api/demo/{id}/actions", tag = "demo", security(("bearer" = [])), operation_id = "demo_act",
    params(("id" = String, Path, description = "the game's id (DEMO-...)")),
    request_body = domain::api::ActionBody,
    responses((status = 200, body = ActionAnswer), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 413, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn act(
    State(state): State<AppState>,
    headers: HeaderMap,
    PathParam(id): PathParam<String>,
    RequiredJson(request): RequiredJson<ActionRequest>,
) -> Result<Response, HttpError> {
    let random = ClientSeed::from_random(crate::fairness::random_bytes());
    // Two requests deciding on the same seq at once: one writes, the other
    // decides again on the row as written (a replay, or a conflict).
    for _ in 0..3 {
        let row = own_game(&state, &headers, &id).await?;
        let answer = match demo::act(&row, request.clone(), &random, now_ms())? {
            DemoDecision::Replay(answer) => answer,
            DemoDecision::Apply { row, from_seq, answer } => {
                if !state.store.save_demo_action(&row, from_seq).await? {
                    continue;
                }
                answer
            }
        };
        return Ok(([(header::CONTENT_TYPE, "application/json")], answer).into_response());
    }
    Err(AppError::Conflict("the demo game moved while this action was decided: send it again".into()).into())
}

/// A demo game's record: its actions and draws (the page replays its
/// table from them); the server seed once it is finished.
#[utoipa::path(get, path = "/api/demo/{id}/record", tag = "demo", security(("bearer" = [])), operation_id = "demo_record",
    params(("id" = String, Path, description = "the game's id (DEMO-...)")),
    responses((status = 200, body = DemoRecord), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn record(
    State(state): State<AppState>,
    headers: HeaderMap,
    PathParam(id): PathParam<String>,
) -> Result<Json<DemoRecord>, HttpError> {
    let row = own_game(&state, &headers, &id).await?;
    Ok(Json(demo::record(&row)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_demo_id_is_demo_and_16_crockford_characters() {
        let a = new_id();
        let b = new_id();
        assert_ne!(a, b);
        assert!(a.starts_with(demo::DEMO_PREFIX));
        let rest = &a[demo::DEMO_PREFIX.len()..];
        assert_eq!(rest.len(), 16);
        assert!(rest.bytes().all(|c| CROCKFORD.contains(&c)), "{a}");
    }
}
