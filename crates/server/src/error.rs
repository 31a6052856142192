//! [`AppError`]: every refusal of the API, in the one shape of CONTRACT.md:
//! `{"error": code, "message": text}`. A refused request changes nothing
//! (guarantee 7): handlers and the writer refuse before they write, and a
//! refusal inside a group commit rolls back only its own savepoint.

use axum::extract::rejection::{BytesRejection, JsonRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// An error answer of the API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    /// 400 `bad_request`: malformed JSON, wrong content type, bad field.
    #[error("{0}")]
    BadRequest(String),
    /// 401 `unauthorized`: no token, or a token nobody holds.
    #[error("{0}")]
    Unauthorized(String),
    /// 402 `insufficient_funds`.
    #[error("a ticket costs {price} cents and your balance is {balance} cents")]
    InsufficientFunds { balance: i64, price: i64 },
    /// 404 `not_found`: also a ticket of another player.
    #[error("{0}")]
    NotFound(String),
    /// 405 `method_not_allowed`.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// 409 `conflict`: a stale or future `seq`, a different body for an
    /// applied `seq`, a reused Idempotency-Key, no ticket left.
    #[error("{0}")]
    Conflict(String),
    /// 413 `payload_too_large`.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// 422 `invalid_action`: the engine refused the action (engine::ActionError).
    #[error("{0}")]
    InvalidAction(String),
    /// 503 `timeout`: the request took longer than the configured limit.
    /// An action that reached the writer may still be applied: retrying
    /// the same request returns its answer (guarantee 4).
    #[error("{0}")]
    Timeout(String),
    /// 503 `unavailable`: the database cannot be reached or is shutting down.
    #[error("{0}")]
    Unavailable(String),
    /// 500 `internal`: a bug or a storage failure; details go to the log only.
    #[error("{0}")]
    Internal(String),
}

/// The JSON body of every error.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// `bad_request`, `unauthorized`, `insufficient_funds`, `not_found`,
    /// `conflict`, `payload_too_large`, `invalid_action`, ...
    pub error: &'static str,
    pub message: String,
}

impl AppError {
    pub fn status(&self) -> StatusCode {
        match self {
            AppError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AppError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            AppError::InsufficientFunds { .. } => StatusCode::PAYMENT_REQUIRED,
            AppError::NotFound(_) => StatusCode::NOT_FOUND,
            AppError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            AppError::Conflict(_) => StatusCode::CONFLICT,
            AppError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::InvalidAction(_) => StatusCode::UNPROCESSABLE_ENTITY,
            AppError::Timeout(_) | AppError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The machine-readable code of CONTRACT.md.
    pub fn code(&self) -> &'static str {
        match self {
            AppError::BadRequest(_) => "bad_request",
            AppError::Unauthorized(_) => "unauthorized",
            AppError::InsufficientFunds { .. } => "insufficient_funds",
            AppError::NotFound(_) => "not_found",
            AppError::MethodNotAllowed(_) => "method_not_allowed",
            AppError::Conflict(_) => "conflict",
            AppError::PayloadTooLarge(_) => "payload_too_large",
            AppError::InvalidAction(_) => "invalid_action",
            AppError::Timeout(_) => "timeout",
            AppError::Unavailable(_) => "unavailable",
            AppError::Internal(_) => "internal",
        }
    }

    pub fn body(&self) -> ErrorBody {
        let message = match self {
            // Never show internals to a client; the log has them.
            AppError::Internal(_) => "internal error; the request may be retried".to_string(),
            other => other.to_string(),
        };
        ErrorBody { error: self.code(), message }
    }

    /// A storage failure: logged with its details, answered as 500.
    pub fn internal(e: impl std::fmt::Display) -> AppError {
        tracing::error!(error = %e, "internal error");
        AppError::Internal(e.to_string())
    }

    pub fn ticket_not_found() -> AppError {
        AppError::NotFound("no such ticket".into())
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        (self.status(), axum::Json(self.body())).into_response()
    }
}

impl From<engine::ActionError> for AppError {
    fn from(e: engine::ActionError) -> AppError {
        AppError::InvalidAction(e.to_string())
    }
}

impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> AppError {
        match e {
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => {
                AppError::Unavailable(format!("database unavailable: {e}"))
            }
            e => AppError::internal(format!("database: {e}")),
        }
    }
}

/// axum's own refusals of a body come out in the same shape.
impl From<BytesRejection> for AppError {
    fn from(r: BytesRejection) -> AppError {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            AppError::PayloadTooLarge(r.body_text())
        } else {
            AppError::BadRequest(r.body_text())
        }
    }
}

impl From<JsonRejection> for AppError {
    fn from(r: JsonRejection) -> AppError {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            AppError::PayloadTooLarge(r.body_text())
        } else {
            AppError::BadRequest(r.body_text())
        }
    }
}
