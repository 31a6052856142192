//! The layers every request passes: [`track`] (the metrics by route, and
//! the refusal of a body too large or framed twice before it is read) and
//! [`timeout`] (the request-time limit).

use super::answer::HttpError;
use super::listener::FramedTwice;
use super::state::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use domain::error::AppError;
use std::time::Instant;

/// Counts requests by route, method and status and times them (`/metrics`).
/// Every label takes a bounded set of values: the route template (or
/// `unmatched`), a known method (or `other`), the status code; a client
/// inventing methods or paths cannot grow the metrics.
///
/// It also refuses at once, with 413, a body announced larger than the
/// limit (`Content-Length`), instead of waiting for a body that will be
/// refused anyway; the connection is then closed, since the body is unread.
/// A request with both `Content-Length` and `Transfer-Encoding` is refused
/// with 400 and its connection closed the same way.
pub async fn track(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let method = method_label(req.method());
    let started = Instant::now();
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    // A body framed both by its length and by chunks is read one way here
    // and perhaps the other way by a proxy in front: the way requests are
    // smuggled past it. Refused, and the connection closed, whatever follows.
    // hyper drops the length of such a request: the listener marks it.
    let framed_twice = req.extensions().get::<FramedTwice>().is_some()
        || (req.headers().contains_key(header::CONTENT_LENGTH)
            && req.headers().contains_key(header::TRANSFER_ENCODING));
    let response = match announced {
        _ if framed_twice => {
            let mut r = HttpError(AppError::BadRequest(
                "a request has Content-Length or Transfer-Encoding, not both: the body's length is ambiguous".into(),
            ))
            .into_response();
            r.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
            r
        }
        Some(n) if n > state.body_limit as u64 => {
            let mut r = HttpError(AppError::PayloadTooLarge(format!(
                "the body ({n} bytes) is larger than the limit of {} bytes",
                state.body_limit
            )))
            .into_response();
            r.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
            r
        }
        _ => next.run(req).await,
    };
    let m = &state.metrics;
    m.requests.with_label_values(&[route.as_str(), method, response.status().as_str()]).inc();
    m.latency.with_label_values(&[route.as_str(), method]).observe(started.elapsed().as_secs_f64());
    response
}

/// The metric label of a method: the standard ones, else `other`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::HEAD => "HEAD",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// The request-time limit, answered in the error shape. The operator's
/// desk is not under it: writing blocks takes seconds (and is finished even
/// when the client goes away, see `admin`).
pub async fn timeout(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if req.uri().path().starts_with("/api/admin/") {
        return next.run(req).await;
    }
    match tokio::time::timeout(state.request_timeout, next.run(req)).await {
        Ok(r) => r,
        Err(_) => HttpError(AppError::Timeout(format!(
            "the request took longer than {} ms; an action may have been applied: send the same request again to get its answer",
            state.request_timeout.as_millis()
        )))
        .into_response(),
    }
}
