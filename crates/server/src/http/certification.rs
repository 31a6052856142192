//! `GET /api/admin/emissions/{id}/certification?games=N`: the certification
//! report of an emission's prize table (crates/certify,
//! docs/certification.md), as the self-contained HTML page that
//! `as-capone report --table FILE --games N --out report.html` writes, for
//! the desk's "Certification report" button (docs/operating.md).
//!
//! The table is the emission's exact TOML text from the database, and the
//! report's table digest is checked against the emission's `table_digest`
//! before anything is played. The run is CPU work of seconds: it runs on a
//! blocking thread (never on the async runtime), on half the cores, and one
//! at a time per process: a second request meanwhile is refused with 503
//! `unavailable` and `Retry-After`. It changes nothing.
//!
//! It answers within the server's request time limit (`request_timeout_ms`,
//! which a proxy in front is set to wait for: deploy/nginx): how many games
//! fit in it depends on the machine, so the run has that limit as its
//! deadline; a report not written by then is stopped (within a chunk of
//! tickets, a fraction of a second) and answered 503 `timeout`, with how
//! far it went and what to do: fewer games, or the CLI, which has no limit.

use super::answer::HttpError;
use super::extract::{Operator, PathParam, path_number};
use super::state::{AppState, Certifying};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use domain::error::AppError;
use serde::Deserialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Tickets per draw stream when `games` is not given.
pub const DEFAULT_GAMES: u64 = 100_000;
/// The most tickets per draw stream the desk may ask for (about ten times
/// the default's time; the CLI has no bound).
pub const MAX_GAMES: u64 = 1_000_000;
/// The run's seed: the CLI's default, so that `as-capone report --table
/// FILE --games N` on the emission's table gives the same figures.
pub const SEED: u64 = 2026;
/// `Retry-After` of a request refused while a report is being written.
const RETRY_AFTER_S: u64 = 10;

/// `?games=N` of the certification report.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct CertificationQuery {
    /// Tickets played on each of the two draw streams (default 100 000, at most 1 000 000).
    #[param(minimum = 1, maximum = 1_000_000)]
    pub games: Option<u64>,
}

/// Clears the flag when the run ends, however it ends.
struct Running(Certifying);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// The run's progress as the request sees it: the tickets played, and the
/// request's word to stop once its deadline has passed.
#[derive(Default)]
struct Deadline {
    played: AtomicU64,
    passed: AtomicBool,
}

impl certify::Progress for Deadline {
    fn tickets(&self, n: u64) {
        self.played.fetch_add(n, Ordering::Relaxed);
    }

    fn stopped(&self) -> bool {
        self.passed.load(Ordering::Relaxed)
    }
}

/// The refusal of a report that did not fit in the request time limit.
fn too_slow(games: u64, played: u64, limit: Duration) -> AppError {
    AppError::Timeout(format!(
        "the certification report of {games} tickets per draw stream was not written within this server's request \
         time limit of {} ms ({played} of its {} tickets were played), and was stopped: ask for fewer games, or \
         write it with `as-capone report --table FILE --games {games}` (docs/certification.md), which has no time limit",
        limit.as_millis(),
        2 * games
    ))
}

/// The certification report of an emission's prize table: tickets played
/// through the engine on the simulation and the fair draw streams, the
/// exact figures, the checks and their verdicts, as one HTML file with no
/// outside resource (operator). Takes seconds: about 2 s for the default
/// 100 000 tickets per stream on one core (docs/operating.md).
#[utoipa::path(get, path = "/api/admin/emissions/{id}/certification", tag = "operator", security(("bearer" = [])),
    params(("id" = u32, Path, description = "the emission's number"), CertificationQuery),
    responses((status = 200, description = "the report, text/html, as an attachment", content_type = "text/html"),
              (status = 400, description = "games out of 1 to 1 000 000, or not a number", body = domain::error::ErrorBody),
              (status = 401, body = domain::error::ErrorBody), (status = 403, body = domain::error::ErrorBody),
              (status = 404, body = domain::error::ErrorBody),
              (status = 503, description = "unavailable: another report is being written, with Retry-After; timeout: the \
                report was not written within the server's request time limit (request_timeout_ms), and was stopped: \
                ask for fewer games", body = domain::error::ErrorBody)))]
pub async fn certification(
    State(state): State<AppState>,
    _: Operator,
    PathParam(id): PathParam<String>,
    query: Result<Query<CertificationQuery>, QueryRejection>,
) -> Result<Response, HttpError> {
    let emission = path_number(&id, "emission")?;
    let Query(q) = query.map_err(|e| AppError::BadRequest(e.body_text()))?;
    let games = q.games.unwrap_or(DEFAULT_GAMES);
    if !(1..=MAX_GAMES).contains(&games) {
        return Err(AppError::BadRequest(format!(
            "games must be between 1 and {MAX_GAMES} tickets per draw stream, not {games}; \
             for more, run `as-capone report --table FILE --games N` (docs/certification.md)"
        ))
        .into());
    }
    let (digest, toml) = state
        .store
        .emission_table_text(emission)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("no emission {emission}")))?;
    let table = math::PrizeTable::parse_toml(&toml)
        .map_err(|e| AppError::internal(format!("emission {emission}'s stored table does not read: {e}")))?;
    if table.digest() != digest {
        return Err(AppError::internal(format!(
            "emission {emission}'s stored table has digest {}, not its recorded {digest}",
            table.digest()
        ))
        .into());
    }
    if state.certifying.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return Err(AppError::Busy {
            message: "a certification report is being written; one is written at a time: try again in a few seconds"
                .into(),
            retry_after_s: RETRY_AFTER_S,
        }
        .into());
    }
    let running = Running(state.certifying.clone());
    let threads = std::thread::available_parallelism().map(|n| n.get() / 2).unwrap_or(1).max(1);
    let options = certify::Options {
        table,
        table_name: format!("emission {emission}'s table, as stored in the database"),
        table_bytes: toml.into_bytes(),
        tickets: games,
        seed: SEED,
        threads,
        dieharder: Vec::new(),
        command: format!(
            "GET /api/admin/emissions/{emission}/certification?games={games} (the desk); the same figures: \
             as-capone report --table TABLE.toml --games {games} --seed {SEED}"
        ),
        build: certify::BuildInfo::registered(),
    };
    // The run goes on if the client leaves, up to its deadline; the flag is
    // cleared when it ends.
    let deadline = Arc::new(Deadline::default());
    let run = tokio::task::spawn_blocking({
        let deadline = deadline.clone();
        move || {
            let _running = running;
            certify::build(&options, &*deadline).map(|r| certify::render_html(&r))
        }
    });
    let built = match tokio::time::timeout(state.request_timeout, run).await {
        Ok(built) => built.map_err(|e| AppError::internal(format!("the certification report: {e}")))?,
        Err(_) => {
            deadline.passed.store(true, Ordering::Relaxed);
            return Err(too_slow(games, deadline.played.load(Ordering::Relaxed), state.request_timeout).into());
        }
    };
    let page = built.map_err(|e| AppError::internal(format!("the certification report: {e:#}")))?;
    let name = format!("attachment; filename=\"certification-emission-{emission:03}-{games}.html\"");
    Ok(([(header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()), (header::CONTENT_DISPOSITION, name)], page)
        .into_response())
}
