//! The HTTP layer: this module declares its files and builds the routers
//! ([`router`], [`ops_router`]); what the handlers share is in files of its
//! own, which import no handler:
//! - [`state`]: [`AppState`], what every handler can reach;
//! - [`answer`]: [`HttpError`](answer::HttpError), every refusal's answer;
//! - [`extract`]: what a request says (tokens, bodies, path, address);
//! - [`middleware`]: the metrics, the body's size and framing, the timeouts;
//! - [`writes`]: every write carries `Content-Type: application/json` (415);
//! - [`passwords`]: the players' password hashes, bounded;
//! - [`listener`]: the HTTP/1.1 connections themselves;
//!
//! and the handlers, one file per audience:
//! - [`game`]: online play (buy, tickets, actions, records);
//! - [`demo`]: the free demo game, without money or account;
//! - [`account`]: player accounts, logins, sessions, limits;
//! - [`retail`]: shops and paper tickets;
//! - [`admin`], [`desk`], [`desk_charts`], [`claims`]: the operator's desk;
//! - [`certification`]: the desk's download of an emission's certification report;
//! - [`operator`]: the operator mode's launch, session and rounds;
//! - [`public`]: odds, public emissions, health, metrics, the web page;
//! - [`openapi`]: the OpenAPI document, which lists the handlers.
//!
//! Handlers parse, call the [`Store`](crate::store::Store) (which runs the
//! core's use cases) and answer; no rule of money or of the game is decided here.

mod account;
mod admin;
mod answer;
mod certification;
mod claims;
mod demo;
mod desk;
mod desk_charts;
mod extract;
mod game;
pub mod listener;
mod middleware;
mod openapi;
mod operator;
mod passwords;
mod public;
mod retail;
mod state;
mod writes;

pub use admin::accepted_table;
pub use passwords::PasswordHashes;
pub use state::{AppState, Launcher, PerNetwork, Wallet};

use answer::HttpError;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::Method;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use domain::error::AppError;

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
        .layer(axum::middleware::from_fn_with_state(state.clone(), middleware::timeout))
        .with_state(state)
}

/// The whole application: API, operations endpoints and the web page.
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
        // Recovery without e-mail, closing one's account.
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
        .route("/api/openapi.json", get(openapi::document))
        .route("/healthz", get(public::healthz))
        .route("/metrics", get(public::metrics))
        .route("/", get(public::index))
        .route("/play", get(public::index))
        // After every route, before the fallbacks: a write to a route
        // without JSON is 415; an unknown path stays 404, a method the
        // path does not take 405 (docs/limits.md "Cross-site requests").
        .route_layer(axum::middleware::from_fn(writes::json_only))
        .fallback(public::asset_or_not_found)
        .method_not_allowed_fallback(method_not_allowed);
    api.layer(axum::middleware::from_fn_with_state(state.clone(), middleware::timeout))
        .layer(DefaultBodyLimit::max(state.body_limit))
        .layer(axum::middleware::from_fn_with_state(state.clone(), middleware::track))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_panic: Box<dyn std::any::Any + Send>| {
            HttpError(AppError::internal("a handler panicked")).into_response()
        }))
        .with_state(state)
}

/// A method the path does not take: 405 in the error shape.
async fn method_not_allowed(method: Method) -> HttpError {
    HttpError(AppError::MethodNotAllowed(format!("method {method} is not allowed here")))
}
