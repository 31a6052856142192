//! The claims on the desk: the paper prizes above a shop's payout ceiling,
//! listed, and their payment by the operator's payment centre recorded
//! once (operator; docs/shops.md "Claims and the payout ceiling").

use super::answer::HttpError;
use super::extract::{Operator, RequiredJson};
use super::state::AppState;
use crate::store::Claims;
use axum::Json;
use axum::extract::State;
use axum::response::Response;
use domain::claims::reference;
use domain::error::ErrorBody;
use domain::retail::RetailAnswer;
use serde::Deserialize;
use utoipa::ToSchema;

/// The won paper tickets above the payout ceiling of the shop that sold
/// them: owed, paid (by the payment centre, or by a shop whose ceiling is
/// higher where any shop pays: `paid_by`), or expired (operator).
#[utoipa::path(get, path = "/api/admin/claims", tag = "operator", security(("bearer" = [])),
    responses((status = 200, description = "the claims, the latest won first (at most 1 000)", body = Claims),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn list(State(state): State<AppState>, _: Operator) -> Result<Json<Claims>, HttpError> {
    Ok(Json(state.store.claims(&state.payout_ceilings).await?))
}

/// `POST /api/admin/claims/pay` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimPayBody {
    /// The ticket's serial, as printed: the same text as a shop's
    /// (`SerialBody`): either case, with or without its dashes; wrong check
    /// digits, which a pattern cannot express, are refused with 400.
    #[schema(
        example = "ASC-001-00001-000042-81",
        pattern = "^[A-Za-z][A-Za-z0-9]{1,5}(-(00[1-9]|0[1-9][0-9]|[1-9][0-9]{2})-(0000[1-9]|000[1-9][0-9]|00[1-9][0-9]{2}|0[1-9][0-9]{3}|[1-9][0-9]{4})-(00000[1-9]|0000[1-9][0-9]|000[1-9][0-9]{2}|00[1-9][0-9]{3}|0[1-9][0-9]{4}|[1-9][0-9]{5})-|(00[1-9]|0[1-9][0-9]|[1-9][0-9]{2})(0000[1-9]|000[1-9][0-9]|00[1-9][0-9]{2}|0[1-9][0-9]{3}|[1-9][0-9]{4})(00000[1-9]|0000[1-9][0-9]|000[1-9][0-9]{2}|00[1-9][0-9]{3}|0[1-9][0-9]{4}|[1-9][0-9]{5}))[0-9]{2}$"
    )]
    pub serial: String,
    /// The payment's reference (a cheque's or a transfer's number), 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200, example = "VIR-2026-000123")]
    pub reference: String,
}

/// Records the payment of a claim by the operator's payment centre, once
/// (operator): the prize moves from the house's prizes to the payment
/// centre's account, the ticket becomes paid and the audit log says so.
/// The same serial and reference again (the answer was lost) gets the same
/// answer, with `Idempotent-Replayed: true`, and nothing is paid twice.
#[utoipa::path(post, path = "/api/admin/claims/pay", operation_id = "pay_claim", tag = "operator", security(("bearer" = [])),
    request_body = ClaimPayBody,
    responses((status = 200, description = "the ticket, paid", body = RetailAnswer),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody),
              (status = 409, description = "not a claim: not won, paid already (another reference, or by a shop), \
                within the shop's ceiling, or past its deadline", body = ErrorBody)))]
pub async fn pay(
    State(state): State<AppState>,
    _: Operator,
    RequiredJson(body): RequiredJson<ClaimPayBody>,
) -> Result<Response, HttpError> {
    let payment = reference("reference", &body.reference)?;
    let (answer, replayed) = state.store.pay_claim(&body.serial, payment, state.payout_ceilings.clone()).await?;
    Ok(super::retail::shop_answer(answer, replayed))
}
