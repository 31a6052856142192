//! Every write carries JSON (the second outside audit, finding 7; docs/limits.md "Cross-site
//! requests"). A page of another site can make its visitors' browsers send
//! a form (`application/x-www-form-urlencoded`, `multipart/form-data`,
//! `text/plain`) or a "simple" `fetch` without a content type, bodies
//! empty or not, to any URL, without asking the server first: each of
//! their visitors would start demo games and register players from their
//! own network. A request with `Content-Type: application/json` is not
//! simple: the browser first asks the server (a CORS preflight), which
//! allows no other site. So every POST, PUT, PATCH and DELETE of the
//! router must carry `Content-Type: application/json` (with
//! `; charset=utf-8` at most), empty body or not, or is refused with 415
//! `unsupported_media_type` before its handler runs ([`json_only`]).
//!
//! The OpenAPI document says it of each write ([`JsonWrites`]): a 415
//! answer, and a JSON body that is required (an operation that reads none
//! takes any JSON value, e.g. `{}`); `openapi`'s tests check it.

use super::answer::HttpError;
use axum::extract::Request;
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use domain::error::AppError;
use utoipa::openapi::path::Operation;
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ObjectBuilder, SchemaType};
use utoipa::openapi::{Content, ContentBuilder, Ref, Required, ResponseBuilder};

/// A method that writes: its request must carry JSON.
pub fn is_write(method: &Method) -> bool {
    matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE)
}

/// Whether the request says its body is `application/json`: one
/// `Content-Type` header, that media type (any case), and no parameter but
/// `charset=utf-8` (quoted or not, any case).
pub fn is_json(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    let (Some(value), None) = (values.next(), values.next()) else { return false };
    let Ok(value) = value.to_str() else { return false };
    let mut parts = value.split(';');
    if !parts.next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json")) {
        return false;
    }
    parts.all(|p| match p.split_once('=') {
        Some((name, v)) => {
            name.trim().eq_ignore_ascii_case("charset") && v.trim().trim_matches('"').eq_ignore_ascii_case("utf-8")
        }
        None => p.trim().is_empty(),
    })
}

/// Refuses a write without `Content-Type: application/json` with 415,
/// before its handler (and so before anything is read or written). Laid
/// on the router's routes only (`route_layer`): an unknown path stays 404
/// and a method a path does not take stays 405.
pub async fn json_only(req: Request, next: Next) -> Response {
    if is_write(req.method()) && !is_json(req.headers()) {
        let sent = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("none");
        return HttpError(AppError::UnsupportedMediaType(format!(
            "a {} must carry Content-Type: application/json (this one: {sent}), even with an empty body",
            req.method()
        )))
        .into_response();
    }
    next.run(req).await
}

/// The OpenAPI document's side of [`json_only`]: each write answers 415,
/// and its JSON body is required (one that reads none takes any JSON value).
pub struct JsonWrites;

impl utoipa::Modify for JsonWrites {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for op in [&mut item.post, &mut item.put, &mut item.patch, &mut item.delete].into_iter().flatten() {
                json_write(op);
            }
        }
    }
}

fn json_write(op: &mut Operation) {
    let refused = ResponseBuilder::new()
        .description(
            "unsupported_media_type: the request has no Content-Type: application/json (a form, text/plain, none)",
        )
        .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody"))).build())
        .build();
    op.responses.responses.insert("415".into(), refused.into());
    let any = ObjectBuilder::new().schema_type(SchemaType::AnyValue).build();
    let body = op.request_body.get_or_insert_with(|| {
        RequestBodyBuilder::new()
            .description(Some("none is read: any JSON value, e.g. {} (Content-Type: application/json is required)"))
            .content("application/json", Content::new(Some(any)))
            .build()
    });
    if body.required != Some(Required::True) {
        body.description = Some("may be empty or JSON null (Content-Type: application/json is required)".into());
        body.required = Some(Required::True);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(types: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for t in types {
            h.append(header::CONTENT_TYPE, t.parse().unwrap());
        }
        h
    }

    #[test]
    fn only_application_json_with_at_most_a_utf8_charset_is_json() {
        for ok in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            "application/json;charset=\"UTF-8\"",
            "application/json;",
        ] {
            assert!(is_json(&with(&[ok])), "{ok}");
        }
        for refused in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/json; charset=iso-8859-1",
            "application/json; boundary=x",
            "application/jsonx",
            "application/problem+json",
            "text/plain; application/json",
        ] {
            assert!(!is_json(&with(&[refused])), "{refused}");
        }
        assert!(!is_json(&with(&[])), "none");
        assert!(!is_json(&with(&["application/json", "text/plain"])), "two headers");
        assert!(
            is_write(&Method::DELETE)
                && is_write(&Method::PATCH)
                && !is_write(&Method::GET)
                && !is_write(&Method::HEAD)
        );
    }
}
