//! The browser game: the files of the repository's `web/` folder, embedded
//! in the binary (rust-embed), with `web/index.html` served at `/`.

use crate::error::AppError;
use axum::http::{Method, Uri, header};
use axum::response::{IntoResponse, Response};

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
        .unwrap_or_else(|| AppError::NotFound("the web page is not built in".into()).into_response())
}

/// `GET /` and `GET /play` (a paper ticket's QR code: `/play?code=...`): the game page.
pub async fn index() -> Response {
    serve("index.html").unwrap_or_else(|| AppError::NotFound("the web page is not built in".into()).into_response())
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
    AppError::NotFound(format!("no route for {method} {}", uri.path())).into_response()
}
