//! The operator's desk (docs/contract.md Operator) and the public list of
//! emissions. Every `/api/admin/...` request needs one of the operator
//! tokens of the configuration: none gets 401, a player's token 403.

use super::answer::HttpError;
use super::extract::{JsonBody, Operator, OptionalBody, PathParam, RequiredJson, client_ip, path_number};
use super::state::AppState;
use crate::store::{EmissionCreated, EmissionReport};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use domain::api::Channel;
use domain::claims::reference;
use domain::error::{AppError, ErrorBody};
use math::PrizeTable;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use utoipa::ToSchema;

/// `POST /api/admin/emissions` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewEmission {
    /// The prize table: its TOML text, or the same as a JSON object.
    #[schema(value_type = TableDoc)]
    pub table: serde_json::Value,
    /// How many blocks to write and publish now, 1 to 20.
    #[schema(minimum = 1, maximum = 20)]
    #[serde(deserialize_with = "whole_u32")]
    pub blocks: u32,
    pub channel: Channel,
    /// The reference of the official notice that announces the emission
    /// (art. 1), e.g. its Journal officiel's; 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    #[serde(default)]
    pub notice_ref: Option<String>,
}

/// `POST /api/admin/emissions/{id}/blocks` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoreBlocks {
    /// How many blocks to write and publish now, 1 to 20.
    #[schema(minimum = 1, maximum = 20)]
    #[serde(deserialize_with = "whole_u32")]
    pub blocks: u32,
}

/// A count as JSON Schema's `integer` reads it: `2` or `2.0`.
fn whole_u32<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = domain::api::json_i64(d)?;
    u32::try_from(n)
        .map_err(|_| serde::de::Error::custom(format!("expected a whole number from 0 to {}, found {n}", u32::MAX)))
}

/// The OpenAPI document of a prize table in a request (documentation
/// only): its TOML text (docs/contract.md's format, `examples/prize-table.toml`)
/// or the same as a JSON object. What JSON Schema cannot say is checked
/// when the table is read, and refused with 400 and the rule broken: the
/// TOML text's own content, the rows' tickets adding up to `block_size`,
/// no two rows with the same prizes, prizes that never fall from 5 to 8
/// tricks, the price and each row's prizes times `block_size` within
/// signed 64 bits ([`fits_the_ledger`]); and, unless the
/// server allows a non-regulation table, art. 2's price (300) and block
/// size (300 000).
#[derive(ToSchema)]
#[schema(as = PrizeTableInput)]
#[allow(dead_code)]
#[serde(untagged)]
pub enum TableDoc {
    /// The table's TOML text.
    Toml(TomlTable),
    /// The table as a JSON object.
    Json(JsonTable),
}

/// A prize table's TOML text, as `examples/prize-table.toml`.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct TomlTable(String);

/// `{"game", "code", "price_cents", "block_size", "schedule": [{"tickets", "prizes_cents": {"5", "6", "7", "8"}}]}`
#[derive(ToSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
pub struct JsonTable {
    /// The game's name as printed: not blank, no control character.
    #[schema(pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]*\\S[^\\u0000-\\u001F\\u007F-\\u009F]*$")]
    game: String,
    /// The game code printed in every serial: 2 to 6 upper-case letters or digits, a letter first.
    #[schema(pattern = "^[A-Z][A-Z0-9]{1,5}$")]
    code: String,
    /// The price of a ticket in cents (art. 2: 300).
    #[schema(minimum = 1)]
    price_cents: u64,
    /// Tickets per block (art. 2: 300 000), at most 999 999: the six digits of a serial's position.
    #[schema(minimum = 1, maximum = 999_999)]
    block_size: u32,
    /// The prize schedules, in order; their tickets add up to `block_size`.
    #[schema(min_items = 1)]
    schedule: Vec<JsonScheduleRow>,
}

/// `{"tickets": n, "prizes_cents": {"5": c, "6": c, "7": c, "8": c}}`
#[derive(ToSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
pub struct JsonScheduleRow {
    /// Tickets of a block that carry these prizes.
    #[schema(minimum = 1, maximum = 999_999)]
    tickets: u32,
    prizes_cents: JsonPrizes,
}

/// The prize for 5, 6, 7 and 8 tricks, in cents, each above zero, never
/// less for more tricks (art. 3.1, 3.2.3.3).
#[derive(ToSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
pub struct JsonPrizes {
    #[serde(rename = "5")]
    #[schema(minimum = 1)]
    five: u64,
    #[serde(rename = "6")]
    #[schema(minimum = 1)]
    six: u64,
    #[serde(rename = "7")]
    #[schema(minimum = 1)]
    seven: u64,
    #[serde(rename = "8")]
    #[schema(minimum = 1)]
    eight: u64,
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

/// Money is signed 64-bit cents in the ledger, and the stored table is TOML,
/// whose integers are signed 64-bit too: a table whose price, or one row's
/// prizes, times the block size passes `i64::MAX` is refused (the table's
/// own rule 12 bounds the same sums by unsigned 64 bits, which a JSON table
/// can reach).
pub fn fits_the_ledger(table: &PrizeTable) -> Result<(), String> {
    let (max, block) = (i128::from(i64::MAX), i128::from(table.block_size));
    if i128::from(table.price_cents) * block > max {
        return Err(format!(
            "price_cents {} × block_size {} passes {max} cents, the most the ledger holds",
            table.price_cents, table.block_size
        ));
    }
    for (i, row) in table.schedules.iter().enumerate() {
        let prizes: i128 = row.prizes.cents().iter().map(|&c| i128::from(c)).sum();
        if prizes * block > max {
            return Err(format!(
                "schedule row {}: its prizes ({prizes} cents) × block_size {} pass {max} cents, the most the ledger holds",
                i + 1,
                table.block_size
            ));
        }
    }
    Ok(())
}

pub(super) fn parse_table(value: &serde_json::Value) -> Result<PrizeTable, AppError> {
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
    request_body = NewEmission,
    responses((status = 201, description = "the new emission and its published blocks", body = EmissionCreated),
              (status = 400, description = "a body or a table the server does not take", body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 409, description = "the database holds 999 emissions, the most a serial can number", body = ErrorBody)))]
pub async fn create_emission(
    State(state): State<AppState>,
    _: Operator,
    RequiredJson(body): RequiredJson<NewEmission>,
) -> Result<Response, HttpError> {
    let table = parse_table(&body.table)?;
    fits_the_ledger(&table).map_err(AppError::BadRequest)?;
    accepted_table(&table, state.allow_non_regulation_table).map_err(AppError::BadRequest)?;
    let notice_ref = body.notice_ref.as_deref().map(|r| reference("notice_ref", r)).transpose()?;
    let store = state.store.clone();
    detached(async move { store.create_emission(table, body.channel, body.blocks, notice_ref).await })
        .await
        .map_err(HttpError)
}

/// Adds blocks to an emission, written and published (operator).
#[utoipa::path(post, path = "/api/admin/emissions/{id}/blocks", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number")),
    request_body = MoreBlocks,
    responses((status = 201, description = "the emission and its new published blocks", body = EmissionCreated),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody),
              (status = 409, description = "the emission's sale is closed (POST /api/admin/emissions/{id}/close), or it would pass \
                block 99 999, the most a serial can number", body = ErrorBody)))]
pub async fn add_blocks(
    State(state): State<AppState>,
    _: Operator,
    PathParam(id): PathParam<String>,
    RequiredJson(body): RequiredJson<MoreBlocks>,
) -> Result<Response, HttpError> {
    let id = path_number(&id, "emission")?;
    let store = state.store.clone();
    detached(async move { store.add_blocks(id, body.blocks).await }).await.map_err(HttpError)
}

/// `GET /api/admin/emissions`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Reports {
    pub emissions: Vec<EmissionReport>,
}

/// `GET /api/admin/version`: what runs, on what.
#[derive(Debug, Serialize, ToSchema)]
pub struct VersionInfo {
    /// The binary's version.
    #[schema(example = "0.1.0")]
    pub version: &'static str,
    /// The binary's schema version: its highest migration's number.
    #[schema(example = 6)]
    pub schema: i64,
    /// The database's schema version: its highest migration applied.
    #[schema(example = 6)]
    pub database_schema: i64,
}

/// The binary's version and schema version, and the database's (operator; docs/upgrading.md).
#[utoipa::path(get, path = "/api/admin/version", tag = "operator", security(("bearer" = [])),
    responses((status = 200, description = "the versions", body = VersionInfo),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn version(State(state): State<AppState>, _: Operator) -> Result<Json<VersionInfo>, HttpError> {
    let database_schema = state.store.database_schema().await?;
    Ok(Json(VersionInfo { version: crate::store::VERSION, schema: crate::store::schema_version(), database_schema }))
}

/// Figures of every emission, per block (operator).
#[utoipa::path(get, path = "/api/admin/emissions", tag = "operator", security(("bearer" = [])),
    responses((status = 200, description = "every emission's figures", body = Reports),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn list_emissions(State(state): State<AppState>, _: Operator) -> Result<Json<Reports>, HttpError> {
    Ok(Json(Reports { emissions: state.store.emission_reports(None).await? }))
}

/// Figures of one emission, per block: printed, sold, in play, won, lost, prizes won, paid and owed, return to player (operator).
#[utoipa::path(get, path = "/api/admin/emissions/{id}", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number")),
    responses((status = 200, body = EmissionReport),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_emission(
    State(state): State<AppState>,
    _: Operator,
    PathParam(id): PathParam<String>,
) -> Result<Json<EmissionReport>, HttpError> {
    let id = path_number(&id, "emission")?;
    let mut one = state.store.emission_reports(Some(id)).await?;
    one.pop().map(Json).ok_or_else(|| AppError::NotFound(format!("no emission {id}")).into())
}

/// `POST /api/admin/emissions/{id}/close` body, optional.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseBody {
    /// The date of the emission's closing notice, `YYYY-MM-DD` (Paris
    /// calendar); absent: today. The claim deadline is `claim_days` after
    /// it, moved to the next working day.
    #[schema(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    #[serde(default)]
    pub closing_notice_date: Option<String>,
    /// The closing notice's reference, 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    #[serde(default)]
    pub closing_notice_ref: Option<String>,
}
impl OptionalBody for CloseBody {}

/// Ends an emission's sale now: its tickets are no longer sold, and its
/// paper prizes are paid until `claim_days` after its closing notice's
/// date, then the next working day (operator). The notice's date may not
/// be before the emission's creation nor more than a year ahead.
#[utoipa::path(post, path = "/api/admin/emissions/{id}/close", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number")),
    request_body(content = Option<CloseBody>, description = "optional"),
    responses((status = 200, description = "the emission's figures, with sale_end_ms, closing_notice_date and claim_end_ms", body = EmissionReport),
              (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = 409, body = ErrorBody)))]
pub async fn close_emission(
    State(state): State<AppState>,
    _: Operator,
    PathParam(id): PathParam<String>,
    JsonBody(body): JsonBody<CloseBody>,
) -> Result<Json<EmissionReport>, HttpError> {
    let id = path_number(&id, "emission")?;
    let report = state.store.emission_reports(Some(id)).await?;
    let created = report.first().map_or(0, |r| r.created_ms);
    let now = crate::store::now_ms();
    let given = body.closing_notice_date.as_deref().map(domain::retail::parse_day).transpose()?;
    let notice = domain::deadline::closing_notice_day(given, created, now)?;
    let notice_ref = body.closing_notice_ref.as_deref().map(|r| reference("closing_notice_ref", r)).transpose()?;
    let close = domain::Close::new(i64::from(id), now, notice, notice_ref, state.claim_days);
    state.store.close_emission(close).await?;
    let mut one = state.store.emission_reports(Some(id)).await?;
    one.pop().map(Json).ok_or_else(|| AppError::NotFound(format!("no emission {id}")).into())
}

/// `GET /api/admin/emissions/{id}/blocks/{n}/print.csv` query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PrintQuery {
    /// `true` (the default): the file with the play codes, given only while
    /// no ticket of the block is sold (409 after); `false`: the `play_code`
    /// column left empty, given at any time.
    pub codes: Option<bool>,
}

/// A paper block's print file, `emit`'s CSV (operator). It holds every play
/// code of the block, and a code opens its ticket: with the codes it is
/// given only before any ticket of the block is sold (then 409: download it
/// with `codes=false`, the `play_code` column empty). Every download is
/// written to the audit log (the operator token, the address, whether the
/// codes were in it) and counted in the block's `print_downloads`
/// (docs/operating.md "The print file").
#[utoipa::path(get, path = "/api/admin/emissions/{id}/blocks/{n}/print.csv", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number"), ("n" = u32, Path, description = "the block's number"),
           PrintQuery),
    responses((status = 200, description = "text/csv", content_type = "text/csv"),
              (status = 400, description = "codes is not true or false", body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = 409, description = "an online emission (no print file), or the play codes asked for once a \
                ticket of the block is sold", body = ErrorBody)))]
pub async fn print_file(
    State(state): State<AppState>,
    operator: Operator,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    PathParam((id, n)): PathParam<(String, String)>,
    query: Result<Query<PrintQuery>, QueryRejection>,
) -> Result<Response, HttpError> {
    let (id, n) = (path_number(&id, "emission")?, path_number(&n, "block")?);
    let Query(q) = query.map_err(|e| AppError::BadRequest(format!("invalid query: {}", e.body_text())))?;
    let codes = q.codes.unwrap_or(true);
    let address = client_ip(&state, peer, &headers).to_string();
    let csv = state.store.print_file(id, n, codes, operator.token, address).await?;
    let name = format!("attachment; filename=\"emission-{id:03}-{}\"", emission::block_file_name(n));
    Ok(([(header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()), (header::CONTENT_DISPOSITION, name)], csv)
        .into_response())
}
