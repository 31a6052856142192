//! The edge's one type of error answer, [`HttpError`]: an [`AppError`] on
//! its way out, in the shape of docs/contract.md, and the one place a
//! server-side failure is logged.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use domain::error::{AppError, error_chain};

/// An [`AppError`] on its way out: the edge's one type of error answer, in
/// the shape of docs/contract.md. Handlers return it; `?` makes one of any
/// [`AppError`] or [`StoreError`](domain::error::StoreError).
#[derive(Debug)]
pub struct HttpError(pub AppError);

impl<E: Into<AppError>> From<E> for HttpError {
    fn from(e: E) -> HttpError {
        HttpError(e.into())
    }
}

impl IntoResponse for HttpError {
    /// The edge: a server-side failure (5xx) is logged here with its causes.
    fn into_response(self) -> Response {
        let HttpError(error) = self;
        let status = StatusCode::from_u16(error.status()).expect("a refusal's status is a valid HTTP status");
        if status.is_server_error()
            // An unconfirmed debit is the operator's network, logged with its
            // reason by the wallet's client (WARN), not a failure of ours.
            && !matches!(
                error.inner(),
                AppError::SoldOut(_) | AppError::Timeout(_) | AppError::Busy { .. } | AppError::WalletUnavailable(_)
            )
        {
            tracing::error!(status = status.as_u16(), error = %error_chain(&error), "request failed");
        }
        if let Some(retry_after_s) = error.retry_after_s() {
            let retry = retry_after_s.to_string();
            return (status, [(axum::http::header::RETRY_AFTER, retry)], axum::Json(error.body())).into_response();
        }
        (status, axum::Json(error.body())).into_response()
    }
}
