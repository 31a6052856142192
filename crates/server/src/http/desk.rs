//! The operator's desk page (`/desk`, `web/desk.html`) and what it reads
//! that the rest of the desk's API does not give: the system's health
//! (`GET /api/admin/health`). The page signs in with an operator token,
//! like every `/api/admin/...` request (none: 401; a player's: 403; a
//! shop's or any other: 401).

use super::admin::{fits_the_ledger, parse_table};
use super::answer::HttpError;
use super::extract::{Operator, PathParam, RequiredJson, path_number};
use super::state::AppState;
use crate::store::{CurrentKey, PlayersSummary, now_ms};
use axum::Json;
use axum::extract::State;
use axum::response::Response;
use domain::error::AppError;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use utoipa::ToSchema;

/// `GET /api/admin/health`: what the desk's "Health" screen shows.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeskHealth {
    /// The binary's version.
    pub version: &'static str,
    pub database: DatabaseHealth,
    pub server_key: CurrentKey,
    pub audit: AuditHealth,
    /// Sold tickets whose game is not finished, in the whole database.
    pub tickets_in_play: i64,
    pub players: PlayersSummary,
    pub wallet: WalletHealth,
    pub process: ProcessFigures,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DatabaseHealth {
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// The binary's schema version.
    pub schema: i64,
    /// The database's: its highest migration applied.
    pub database_schema: i64,
}

/// The audit chain's state: entries committed and not chained yet (on
/// PostgreSQL a sealer chains them just after commit; a count that stays
/// up means no process is sealing). `as-capone audit` checks the chain.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditHealth {
    pub unsealed: i64,
    /// The age of the oldest of them, in seconds (0: none).
    pub oldest_unsealed_age_s: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WalletHealth {
    /// `internal` (the server's own ledger) or `operator` (the operator's wallet).
    pub mode: &'static str,
    /// Operator mode: prizes and rollbacks not acknowledged by the wallet yet (0 in the internal mode).
    pub outbox_depth: i64,
    /// The age of the oldest of them, in seconds (0: none).
    pub outbox_oldest_age_s: i64,
    /// Operator mode: rounds whose debit is not settled or whose rollback
    /// is not acknowledged yet (0 in the internal mode). Reconcile a period
    /// once this and `outbox_depth` are 0 (as `/metrics` reads at the same
    /// moment).
    pub unresolved_rounds: i64,
}

/// This process's own figures since it started (each process of a
/// PostgreSQL deployment counts its own; `/metrics` has them all).
#[derive(Debug, Serialize, ToSchema)]
pub struct ProcessFigures {
    pub uptime_s: u64,
    /// HTTP requests answered.
    pub requests: u64,
    /// Game actions applied (`POST /api/tickets/{id}/actions` answered 200).
    pub actions: u64,
    /// An upper bound of the actions' p99 latency, in milliseconds (a
    /// bucket of the latency histogram; `null` before any action).
    pub action_p99_ms_at_most: Option<f64>,
}

const ACTIONS_ROUTE: &str = "/api/tickets/{id}/actions";

/// The system's health for the desk: database, key, audit chain, games in
/// play, players' settings in aggregate, wallet outbox, this process's figures (operator).
#[utoipa::path(get, path = "/api/admin/health", tag = "operator", security(("bearer" = [])),
    responses((status = 200, description = "the system's health", body = DeskHealth),
              (status = 401, body = domain::error::ErrorBody), (status = 403, body = domain::error::ErrorBody),
              (status = 503, body = domain::error::ErrorBody)))]
pub async fn health(State(state): State<AppState>, _: Operator) -> Result<Json<DeskHealth>, HttpError> {
    let store = &state.store;
    let m = &state.metrics;
    let read = async {
        let (unsealed, oldest_ms) = store.unsealed_audit().await?;
        // Read as /metrics reads them, and its gauges set to them.
        let figures = crate::operator::WalletFigures::read(store, m).await?;
        let (requests, actions) = m.requests_served(ACTIONS_ROUTE, "POST", "200");
        Ok::<_, AppError>(DeskHealth {
            version: crate::store::VERSION,
            database: DatabaseHealth {
                backend: store.backend(),
                schema: crate::store::schema_version(),
                database_schema: store.database_schema().await?,
            },
            server_key: store.current_key().await?,
            audit: AuditHealth { unsealed, oldest_unsealed_age_s: oldest_ms / 1000 },
            tickets_in_play: store.active_games().await?,
            players: store.players_summary(now_ms()).await?,
            wallet: WalletHealth {
                mode: if store.operator_wallet() { "operator" } else { "internal" },
                outbox_depth: figures.outbox_depth,
                outbox_oldest_age_s: figures.outbox_oldest_age_s,
                unresolved_rounds: figures.unresolved_rounds,
            },
            process: ProcessFigures {
                uptime_s: m.started.elapsed().as_secs(),
                requests,
                actions,
                action_p99_ms_at_most: m.latency_bound(ACTIONS_ROUTE, "POST", 0.99).map(|s| s * 1000.0),
            },
        })
    };
    let health = tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .map_err(|_| AppError::Unavailable("the database did not answer within 5 s".into()))??;
    Ok(Json(health))
}

/// `POST /api/admin/tables/check` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TableCheckBody {
    /// The prize table: its TOML text, or the same as a JSON object.
    #[schema(value_type = super::admin::TableDoc)]
    pub table: serde_json::Value,
}

/// What the desk shows of a prize table before an emission is made of it.
#[derive(Debug, Serialize, ToSchema)]
pub struct TableCheck {
    /// The table's digest: what an emission of it records and publishes.
    pub digest: String,
    pub game: String,
    pub code: String,
    pub price_cents: u64,
    pub block_size: u32,
    /// This server would make an emission of it (`POST /api/admin/emissions`).
    pub accepted: bool,
    /// Why not, in words (empty when accepted).
    pub refusals: Vec<String>,
    /// The rules of art. 2 (price, block size) the table breaks, whether or
    /// not this server's configuration allows a non-regulation table.
    pub deviations: Vec<String>,
    /// The exact figures of `as-capone odds --table --json`'s `table` object:
    /// expected prize, return to player and hit rate as fractions `"p/q"`,
    /// the variance, the largest prize, each prize's chance, and a block's risk.
    #[schema(value_type = Object)]
    pub figures: serde_json::Value,
}

/// Reads a prize table and gives its exact odds, return to player, hit
/// rate and block risk, and whether this server would make an emission of
/// it (and why not), without writing anything (operator). A table the
/// regulation's art. 3.1 forbids, or whose sums over a block the ledger
/// cannot hold, is refused with 400 and the rule it breaks.
#[utoipa::path(post, path = "/api/admin/tables/check", tag = "operator", security(("bearer" = [])),
    request_body = TableCheckBody,
    responses((status = 200, description = "the table's figures and whether it is accepted", body = TableCheck),
              (status = 400, description = "not a prize table, one art. 3.1 forbids, or one the ledger cannot hold", body = domain::error::ErrorBody),
              (status = 401, body = domain::error::ErrorBody), (status = 403, body = domain::error::ErrorBody)))]
pub async fn check_table(
    State(state): State<AppState>,
    _: Operator,
    RequiredJson(body): RequiredJson<TableCheckBody>,
) -> Result<Json<TableCheck>, HttpError> {
    // A table the ledger cannot hold is no table at all, here as at the
    // emission's creation: 400, as for one the table's own rules forbid.
    let table = parse_table(&body.table)?;
    fits_the_ledger(&table).map_err(AppError::BadRequest)?;
    let mut refusals = Vec::new();
    if let Err(why) = super::admin::accepted_table(&table, state.allow_non_regulation_table) {
        refusals.push(why);
    }
    let deviations = table.regulation_deviations().iter().map(|d| d.to_string()).collect();
    // The block's risk takes up to a tenth of a second of CPU: off the runtime's threads.
    let figures = tokio::task::spawn_blocking({
        let table = table.clone();
        move || math::Payout::compute(&table, &math::Odds::exact()).to_json()
    })
    .await
    .map_err(|e| AppError::internal(format!("the table's figures: {e}")))?;
    Ok(Json(TableCheck {
        digest: table.digest(),
        game: table.game.clone(),
        code: table.code.clone(),
        price_cents: table.price_cents,
        block_size: table.block_size,
        accepted: refusals.is_empty(),
        refusals,
        deviations,
        figures,
    }))
}

/// `GET /api/admin/emissions/{id}/risk`: the desk's chart of a block's risk.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RiskChart {
    pub emission: u32,
    /// A whole block's sales: price × tickets per block.
    pub block_sales_cents: i64,
    /// A whole block's total prizes, exactly computed (`math`): their mean,
    /// 99th percentile and the chance they exceed the block's sales.
    pub mean_cents: f64,
    pub p99_cents: f64,
    pub p_prizes_exceed_sales: f64,
    /// The distribution of a whole block's total prizes in bins of
    /// `bin_cents`, the first starting at `first_cents`: the chance of each
    /// (the tails beyond 1e-6 of chance on either side left out).
    pub first_cents: u64,
    pub bin_cents: u64,
    pub bins: Vec<f64>,
    /// Each block's running figure: its finished tickets and their prizes.
    pub blocks: Vec<BlockRunning>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BlockRunning {
    pub block: u32,
    pub printed: i64,
    pub finished: i64,
    pub prizes_won_cents: i64,
}

/// At most this many bins in a chart.
const RISK_BINS: usize = 200;
/// The chance left out of a chart on either side.
const TAIL: f64 = 1e-6;

/// A table's distribution in bins, computed once per table digest by this
/// process (about a tenth of a second of CPU for a block of 300 000).
type RiskShape = (u64, u64, Vec<f64>, math::BlockRisk);
static RISK_SHAPES: std::sync::Mutex<Vec<(String, std::sync::Arc<RiskShape>)>> = std::sync::Mutex::new(Vec::new());

fn risk_shape(table: &math::PrizeTable) -> std::sync::Arc<RiskShape> {
    let digest = table.digest();
    if let Some((_, shape)) = RISK_SHAPES.lock().expect("risk shapes").iter().find(|(d, _)| *d == digest) {
        return shape.clone();
    }
    let odds = math::Odds::exact();
    let (w, probs) = math::block_distribution(table, &odds);
    let risk = math::risk_of_distribution(table, w, &probs);
    // The range that holds all but 1e-6 of the chance on either side: what
    // a chart can show (the chance of the far tail is in `p_prizes_exceed_sales`).
    let (mut lo, mut hi, mut acc) = (0, probs.len().saturating_sub(1), 0.0);
    for (i, p) in probs.iter().enumerate() {
        acc += p.max(0.0);
        if acc > TAIL {
            lo = i;
            break;
        }
    }
    acc = 0.0;
    for (i, p) in probs.iter().enumerate().rev() {
        acc += p.max(0.0);
        if acc > TAIL {
            hi = i;
            break;
        }
    }
    let hi = hi.max(lo);
    let per_bin = (hi - lo + 1).div_ceil(RISK_BINS);
    let bins: Vec<f64> = probs[lo..=hi].chunks(per_bin).map(|c| c.iter().map(|p| p.max(0.0)).sum()).collect();
    let shape = std::sync::Arc::new((lo as u64 * w, per_bin as u64 * w, bins, risk));
    let mut shapes = RISK_SHAPES.lock().expect("risk shapes");
    if shapes.len() >= 64 {
        shapes.remove(0);
    }
    shapes.push((digest, shape.clone()));
    shape
}

/// The distribution of a whole block's total prizes from the exact
/// computation, and each block's prizes won so far, for the desk's chart (operator).
#[utoipa::path(get, path = "/api/admin/emissions/{id}/risk", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number")),
    responses((status = 200, description = "the chart's data", body = RiskChart),
              (status = 401, body = domain::error::ErrorBody), (status = 403, body = domain::error::ErrorBody),
              (status = 404, body = domain::error::ErrorBody)))]
pub async fn risk(
    State(state): State<AppState>,
    _: Operator,
    PathParam(id): PathParam<String>,
) -> Result<Json<RiskChart>, HttpError> {
    let emission = path_number(&id, "emission")?;
    let table = state
        .store
        .emission_table(emission)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("no emission {emission}")))?;
    let running = state.store.blocks_running(emission).await?;
    let block_sales_cents = table.price_cents as i64 * i64::from(table.block_size);
    let shape = tokio::task::spawn_blocking(move || risk_shape(&table))
        .await
        .map_err(|e| AppError::internal(format!("a block's risk: {e}")))?;
    let (first_cents, bin_cents, bins, risk) = &*shape;
    Ok(Json(RiskChart {
        emission,
        block_sales_cents,
        mean_cents: risk.mean_cents,
        p99_cents: risk.p99_cents,
        p_prizes_exceed_sales: risk.p_prizes_exceed_sales,
        first_cents: *first_cents,
        bin_cents: *bin_cents,
        bins: bins.clone(),
        blocks: running
            .into_iter()
            .map(|(block, printed, finished, prizes_won_cents)| {
                let block = u32::try_from(block).map_err(|_| AppError::internal("a block number"))?;
                Ok(BlockRunning { block, printed, finished, prizes_won_cents })
            })
            .collect::<Result<_, HttpError>>()?,
    }))
}

/// `GET /desk`: the operator's desk page.
pub async fn page() -> Response {
    super::public::page("desk.html")
}
