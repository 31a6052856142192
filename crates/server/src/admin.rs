//! The operator's desk (CONTRACT.md Operator) and the public list of
//! emissions. Every `/api/admin/...` request needs one of the operator
//! tokens of the configuration: none gets 401, a player's token 403.

use crate::api::Channel;
use crate::error::{AppError, ErrorBody};
use crate::http::{AppState, PathParam, RequiredJson, bearer};
use crate::store::{EmissionCreated, EmissionReport, PublicEmission};
use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use math::PrizeTable;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A request of the operator.
pub struct Operator;

impl FromRequestParts<AppState> for Operator {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Operator, AppError> {
        let token = bearer(&parts.headers)?;
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        // Comparing hashes: the time taken says nothing of the tokens.
        if state.operator_tokens.iter().fold(false, |found, t| found | (*t == hash)) {
            return Ok(Operator);
        }
        if state.store.authenticate(token).await?.is_some() {
            return Err(AppError::Forbidden("the operator's desk needs an operator token, not a player's".into()));
        }
        Err(AppError::Unauthorized("invalid operator token".into()))
    }
}

/// `GET /api/emissions`: every emission and its published blocks' roots.
#[derive(Debug, Serialize)]
pub struct Emissions {
    pub emissions: Vec<PublicEmission>,
}

/// Every emission and its published blocks: the roots a player's record is checked against.
#[utoipa::path(get, path = "/api/emissions", tag = "emissions",
    responses((status = 200, description = "`{\"emissions\": [{emission, code, channel, price_cents, block_size, table_digest, table, blocks: [{block, size, root, published_ms, published_at}]}]}`", body = Object)))]
pub async fn public_emissions(State(state): State<AppState>) -> Result<Json<Emissions>, AppError> {
    Ok(Json(Emissions { emissions: state.store.public_emissions().await? }))
}

/// `POST /api/admin/emissions` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewEmission {
    /// The prize table: its TOML text, or the same as a JSON object.
    pub table: serde_json::Value,
    pub blocks: u32,
    pub channel: Channel,
}

/// `POST /api/admin/emissions/{id}/blocks` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoreBlocks {
    pub blocks: u32,
}

/// A table the server accepts: one the regulation allows (the table's own
/// rules, art. 3.1 and 3.2.3.3, are checked when it is read), at art. 2's
/// price and block size unless the configuration allows others.
pub fn accepted_table(table: &PrizeTable, allow_non_regulation: bool) -> Result<(), String> {
    let deviations = table.regulation_deviations();
    if deviations.is_empty() || allow_non_regulation {
        return Ok(());
    }
    Err(format!(
        "{}; a server takes such a table only when its configuration allows a non-regulation table \
         (allow_non_regulation_table, for tests and demos)",
        deviations.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; ")
    ))
}

fn parse_table(value: &serde_json::Value) -> Result<PrizeTable, AppError> {
    let table = match value {
        serde_json::Value::String(toml) => PrizeTable::parse_toml(toml),
        serde_json::Value::Object(_) => PrizeTable::from_json(&value.to_string()),
        _ => return Err(AppError::BadRequest("table must be the TOML text of a prize table or a JSON object".into())),
    };
    table.map_err(|e| AppError::BadRequest(e.to_string()))
}

/// Runs an emission's writing in a task of its own: it is finished (or
/// undone) even when the client goes away.
async fn detached(
    work: impl std::future::Future<Output = Result<EmissionCreated, AppError>> + Send + 'static,
) -> Result<Response, AppError> {
    let created = tokio::spawn(work).await.map_err(|e| AppError::internal(format!("emission task: {e}")))??;
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

/// Creates an emission and its blocks, written and published (operator).
#[utoipa::path(post, path = "/api/admin/emissions", tag = "operator", security(("bearer" = [])),
    request_body(content = Object, description = "`{\"table\": TOML text or JSON table, \"blocks\": 1..20, \"channel\": \"online\" | \"paper\"}`"),
    responses((status = 201, description = "`{emission, channel, blocks: [{block, root}]}`", body = Object),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn create_emission(
    State(state): State<AppState>,
    _: Operator,
    RequiredJson(body): RequiredJson<NewEmission>,
) -> Result<Response, AppError> {
    let table = parse_table(&body.table)?;
    accepted_table(&table, state.allow_non_regulation_table).map_err(AppError::BadRequest)?;
    let store = state.store.clone();
    detached(async move { store.create_emission(table, body.channel, body.blocks).await }).await
}

/// A number of the path (an emission's, a block's). Anything else names
/// nothing: 404 in the error shape (axum's own rejection is plain text).
fn path_number(text: &str, what: &str) -> Result<u32, AppError> {
    text.parse().map_err(|_| AppError::NotFound(format!("no {what} {text:?}: {what}s are numbered from 1")))
}

/// Adds blocks to an emission, written and published (operator).
#[utoipa::path(post, path = "/api/admin/emissions/{id}/blocks", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number")),
    request_body(content = Object, description = "`{\"blocks\": 1..20}`"),
    responses((status = 201, description = "`{emission, channel, blocks: [{block, root}]}`", body = Object),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn add_blocks(
    State(state): State<AppState>,
    _: Operator,
    PathParam(id): PathParam<String>,
    RequiredJson(body): RequiredJson<MoreBlocks>,
) -> Result<Response, AppError> {
    let id = path_number(&id, "emission")?;
    let store = state.store.clone();
    detached(async move { store.add_blocks(id, body.blocks).await }).await
}

/// `GET /api/admin/emissions`.
#[derive(Debug, Serialize)]
pub struct Reports {
    pub emissions: Vec<EmissionReport>,
}

/// Figures of every emission, per block (operator).
#[utoipa::path(get, path = "/api/admin/emissions", tag = "operator", security(("bearer" = [])),
    responses((status = 200, description = "`{emissions: [EmissionReport]}`", body = Object),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn list_emissions(State(state): State<AppState>, _: Operator) -> Result<Json<Reports>, AppError> {
    Ok(Json(Reports { emissions: state.store.emission_reports(None).await? }))
}

/// Figures of one emission, per block: printed, sold, in play, won, lost, prizes won, paid and owed, return to player (operator).
#[utoipa::path(get, path = "/api/admin/emissions/{id}", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number")),
    responses((status = 200, description = "EmissionReport", body = Object),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_emission(
    State(state): State<AppState>,
    _: Operator,
    PathParam(id): PathParam<String>,
) -> Result<Json<EmissionReport>, AppError> {
    let id = path_number(&id, "emission")?;
    let mut one = state.store.emission_reports(Some(id)).await?;
    one.pop().map(Json).ok_or_else(|| AppError::NotFound(format!("no emission {id}")))
}

/// Ends an emission's sale now: its tickets are no longer sold, and its
/// paper prizes are paid until `claim_days` later (operator).
#[utoipa::path(post, path = "/api/admin/emissions/{id}/close", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number")),
    responses((status = 200, description = "EmissionReport, with sale_end_ms and claim_end_ms", body = Object),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = 409, body = ErrorBody)))]
pub async fn close_emission(
    State(state): State<AppState>,
    _: Operator,
    PathParam(id): PathParam<String>,
) -> Result<Json<EmissionReport>, AppError> {
    let id = path_number(&id, "emission")?;
    state.store.emission_reports(Some(id)).await?;
    state.store.close_emission(id, state.claim_days).await?;
    let mut one = state.store.emission_reports(Some(id)).await?;
    one.pop().map(Json).ok_or_else(|| AppError::NotFound(format!("no emission {id}")))
}

/// A paper block's print file, `emit`'s CSV (operator).
#[utoipa::path(get, path = "/api/admin/emissions/{id}/blocks/{n}/print.csv", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number"), ("n" = u32, Path, description = "the block's number")),
    responses((status = 200, description = "text/csv", content_type = "text/csv"), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn print_file(
    State(state): State<AppState>,
    _: Operator,
    PathParam((id, n)): PathParam<(String, String)>,
) -> Result<Response, AppError> {
    let (id, n) = (path_number(&id, "emission")?, path_number(&n, "block")?);
    let csv = state.store.print_file(id, n).await?;
    let name = format!("attachment; filename=\"emission-{id:03}-{}\"", emission::files::block_file_name(n));
    Ok(([(header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()), (header::CONTENT_DISPOSITION, name)], csv)
        .into_response())
}
