//! What anyone may read, without an account: the exact odds, the public
//! list of emissions, the health probe, the metrics and the browser game's
//! files (the OpenAPI document is `openapi`'s).
//!
//! `GET /api/odds`: the exact odds and the prize table on sale online, for
//! the player's "Chances et gains" page (docs/player-api.md). The figures
//! are the math crate's exact fractions, the same strings as `as-capone
//! odds --json`. The answer is computed once per table (about a tenth of a
//! second, most of it the block's risk) and cached by the table's digest.
//!
//! The browser game: the files of the repository's `web/` folder, embedded
//! in the binary (rust-embed), with `web/index.html` served at `/`.

use super::answer::HttpError;
use super::state::AppState;
use crate::store::PublicEmission;
use axum::Json;
use axum::extract::State;
use axum::http::{Method, Uri, header};
use axum::response::{IntoResponse, Response};
use domain::error::{AppError, ErrorBody};
use math::fraction::{approx, ratio, to_string};
use math::{FinalOutcome, Odds, Payout, PrizeTable};
use num_rational::BigRational;
use num_traits::{One, Zero};
use serde::Serialize;
use serde_json::{Value, json};
use std::time::Duration;
use utoipa::ToSchema;

/// "1 chance in X": 1 / chance with two decimals ("2.83"); `null` for a
/// chance of zero.
fn one_in(chance: &BigRational) -> Value {
    if chance.is_zero() { Value::Null } else { Value::String(format!("{:.2}", approx(&(BigRational::one() / chance)))) }
}

/// The figures of `table`: the game's exact odds and the table's payout
/// figures (the math crate's [`Payout`], as `odds --table` prints them),
/// and per schedule its share of a block, its chance of winning and its
/// return to player.
pub fn figures(table: &PrizeTable) -> Value {
    let odds = Odds::exact();
    let payout = Payout::compute(table, &odds);
    let finals = odds.final_chances();
    let schedules: Vec<Value> = table
        .schedules
        .iter()
        .map(|row| {
            let mut win = BigRational::zero();
            for o in FinalOutcome::ALL {
                let FinalOutcome::Tricks(t) = o else { continue };
                if row.prizes.for_tricks(t) > 0 {
                    win += &finals[o.index()];
                }
            }
            json!({
                "prizes_cents": row.prizes,
                "tickets": row.tickets,
                "share": to_string(&ratio(row.tickets, table.block_size)),
                "win_chance": to_string(&win),
                "one_in": one_in(&win),
                "rtp": to_string(&Payout::row_rtp(table, row, &odds)),
            })
        })
        .collect();
    let mut out = odds.to_json();
    out["table"] = json!({
        "price_cents": table.price_cents,
        "expected_payout_cents": to_string(&payout.expected_payout_cents),
        "rtp": to_string(&payout.rtp),
        "hit_rate": to_string(&payout.hit_rate),
        "one_in": one_in(&payout.hit_rate),
        "top_prize_cents": payout.largest_prize_cents,
    });
    out["schedules"] = Value::Array(schedules);
    out
}

/// `GET /api/odds` answer (documentation only: the answer is built once
/// per table by [`figures`] and cached as text). Every figure is an exact
/// fraction as text (`"p/q"` or a whole number), as `as-capone odds --json`
/// prints it.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct OddsAnswer {
    /// The chance of each number of ties in a game.
    per_round: std::collections::BTreeMap<String, String>,
    /// The chance of an Extra duel.
    extra_per_round: String,
    /// The chance of each final outcome of a ticket.
    #[serde(rename = "final")]
    final_: std::collections::BTreeMap<String, String>,
    table: OddsTable,
    /// Per schedule row of the table.
    schedules: Vec<OddsSchedule>,
}

/// The table's payout figures.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct OddsTable {
    price_cents: u64,
    expected_payout_cents: String,
    /// The return to player.
    rtp: String,
    /// The chance that a ticket wins a prize.
    hit_rate: String,
    /// "1 chance in X", two decimals; `null` when nothing is won.
    one_in: Option<String>,
    /// The largest prize of the table, in cents (the lobby's "jusqu'à …").
    top_prize_cents: u64,
}

/// One schedule row: its share of a block, its chance of winning and its return to player.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct OddsSchedule {
    /// `{"5": cents, "6": cents, "7": cents, "8": cents}`
    #[schema(value_type = Object)]
    prizes_cents: (),
    tickets: u32,
    share: String,
    win_chance: String,
    one_in: Option<String>,
    rtp: String,
}

/// The exact odds and the prize table of the tickets on sale online.
#[utoipa::path(get, path = "/api/odds", tag = "tickets",
    responses((status = 200, description = "exact odds and the prize table on sale (docs/player-api.md)", body = OddsAnswer),
              (status = 503, body = ErrorBody)))]
pub async fn odds(State(state): State<AppState>) -> Result<Response, HttpError> {
    let (digest, toml) = state
        .store
        .online_table()
        .await?
        .ok_or_else(|| AppError::SoldOut("no online emission: no prize table on sale".into()))?;
    let cached = state.odds.lock().expect("odds cache").get(&digest).cloned();
    let answer = match cached {
        Some(a) => a,
        None => {
            let table = PrizeTable::parse_toml(&toml)
                .map_err(|e| AppError::internal(format!("an emission's stored table is refused: {e}")))?;
            let answer = tokio::task::spawn_blocking(move || figures(&table).to_string())
                .await
                .map_err(|e| AppError::internal(format!("odds task: {e}")))?;
            state.odds.lock().expect("odds cache").insert(digest, answer.clone());
            answer
        }
    };
    Ok(([(header::CONTENT_TYPE, "application/json")], answer).into_response())
}

/// `GET /api/emissions`: every emission and its published blocks' roots.
#[derive(Debug, Serialize, ToSchema)]
pub struct Emissions {
    pub emissions: Vec<PublicEmission>,
}

/// Every emission and its published blocks: the roots a player's record is checked against.
#[utoipa::path(get, path = "/api/emissions", tag = "emissions",
    responses((status = 200, description = "every emission, its table and its published blocks", body = Emissions)))]
pub async fn public_emissions(State(state): State<AppState>) -> Result<Json<Emissions>, HttpError> {
    Ok(Json(Emissions { emissions: state.store.public_emissions().await? }))
}

/// `GET /healthz`: the server answers and reaches its database.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// Always `"ok"` (a failing check answers 503 with an error body).
    #[schema(example = "ok")]
    pub status: &'static str,
    /// The binary's version (docs/upgrading.md).
    #[schema(example = "0.1.0")]
    pub version: &'static str,
    /// The binary's schema version: its highest migration's number.
    #[schema(example = 6)]
    pub schema: i64,
}

/// 200 when the database answers (within two seconds), with the binary's
/// version and schema version; 503 otherwise.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "ok, with the binary's version and schema version", body = Health),
              (status = 503, body = ErrorBody)))]
pub async fn healthz(State(state): State<AppState>) -> Result<Json<Health>, HttpError> {
    match tokio::time::timeout(Duration::from_secs(2), state.store.health()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::warn!(error = %domain::error::error_chain(&e), "health check: the database does not answer");
            return Err(AppError::Unavailable("the database does not answer".into()).into());
        }
        Err(_) => return Err(AppError::Unavailable("the database did not answer within 2 s".into()).into()),
    }
    Ok(Json(Health { status: "ok", version: crate::store::VERSION, schema: crate::store::schema_version() }))
}

/// Prometheus text format.
#[utoipa::path(get, path = "/metrics", tag = "operations", responses((status = 200, description = "Prometheus text")))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    // Games in play, whichever process sold them.
    match state.store.active_games().await {
        Ok(n) => state.metrics.active_games.set(n),
        Err(e) => tracing::warn!(error = %domain::error::error_chain(&e), "counting the active games"),
    }
    match state.store.unsealed_audit().await {
        Ok((count, age_ms)) => {
            state.metrics.audit_unsealed.set(count);
            state.metrics.audit_unsealed_oldest_age_seconds.set(age_ms / 1000);
        }
        Err(e) => tracing::warn!(error = %domain::error::error_chain(&e), "counting the unsealed audit entries"),
    }
    // The newest scheduled backup's age, when backup_dir is set.
    state.metrics.read_backups();
    // The operator mode's outbox and rounds in flight, read now, as the desk's health reads them.
    if let Err(e) = crate::operator::WalletFigures::read(&state.store, &state.metrics).await {
        tracing::warn!(error = %domain::error::error_chain(&e), "reading the wallet's outbox");
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], state.metrics.render()).into_response()
}

#[derive(rust_embed::Embed)]
#[folder = "../../web/"]
struct WebAssets;

fn serve(path: &str) -> Option<Response> {
    let file = WebAssets::get(path)?;
    let mime = file.metadata.mimetype().to_string();
    // no-cache: a new binary's page and modules are never mixed with old ones.
    // The page makes no request outside its own origin (CSP).
    let headers = [
        (header::CONTENT_TYPE, mime),
        (header::CACHE_CONTROL, "no-cache".to_string()),
        (header::CONTENT_SECURITY_POLICY, CSP.to_string()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
    ];
    Some((headers, file.data.into_owned()).into_response())
}

const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; \
                   connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// `GET /shop`: the retailer's page, `shop.html` (the game's page while there is none).
pub async fn shop() -> Response {
    serve("shop.html")
        .or_else(|| serve("index.html"))
        .unwrap_or_else(|| HttpError(AppError::NotFound("the web page is not built in".into())).into_response())
}

/// A page of `web/`, or 404 in the error shape when the binary has none.
pub(super) fn page(name: &str) -> Response {
    serve(name).unwrap_or_else(|| HttpError(AppError::NotFound("the web page is not built in".into())).into_response())
}

/// `GET /` and `GET /play` (a paper ticket's QR code: `/play?code=...`): the game page.
pub async fn index() -> Response {
    serve("index.html")
        .unwrap_or_else(|| HttpError(AppError::NotFound("the web page is not built in".into())).into_response())
}

/// Any other path: a file of `web/` (GET, or HEAD: hyper sends no body for
/// HEAD), or 404 in the error shape.
pub async fn asset_or_not_found(method: Method, uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    if (method == Method::GET || method == Method::HEAD)
        && !path.starts_with("api/")
        && !path.contains("..")
        && let Some(r) = serve(path)
    {
        return r;
    }
    HttpError(AppError::NotFound(format!("no route for {method} {}", uri.path()))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figures_are_the_math_crates_exact_fractions() {
        let table = PrizeTable::example();
        let f = figures(&table);
        let odds = Odds::exact();
        assert_eq!(f["final"], odds.to_json()["final"]);
        let payout = Payout::compute(&table, &odds).to_json();
        for key in ["rtp", "hit_rate", "expected_payout_cents"] {
            assert_eq!(f["table"][key], payout[key], "{key}");
        }
        assert_eq!(f["table"]["top_prize_cents"], payout["largest_prize_cents"]);
        assert!(f["table"]["top_prize_cents"].as_u64().unwrap() > 0);
        let rows = f["schedules"].as_array().unwrap();
        assert_eq!(rows.len(), table.schedules.len());
        // The schedules' shares add up to the block, and their chances,
        // weighted by the shares, to the table's hit rate.
        let sum = |k: &str| -> BigRational {
            rows.iter()
                .map(|r| {
                    let share = math::fraction::parse(r["share"].as_str().unwrap()).unwrap();
                    if k == "share" { share } else { share * math::fraction::parse(r[k].as_str().unwrap()).unwrap() }
                })
                .sum()
        };
        assert_eq!(sum("share"), BigRational::one());
        assert_eq!(to_string(&sum("win_chance")), f["table"]["hit_rate"].as_str().unwrap());
        assert_eq!(to_string(&sum("rtp")), f["table"]["rtp"].as_str().unwrap());
        let one_in: f64 = f["table"]["one_in"].as_str().unwrap().parse().unwrap();
        assert!(
            (one_in - 1.0 / approx(&math::fraction::parse(f["table"]["hit_rate"].as_str().unwrap()).unwrap())).abs()
                < 0.005
        );
    }
}
