//! The search page at `/`: one HTML document, its script and its style sheet, compiled into
//! the binary (no CDN, no font, nothing fetched from elsewhere). The page holds no data: it
//! asks the same API every client uses, with the token when the server has one (the page asks
//! for it and keeps it per tab), so the page and its assets are served without one.
//!
//! Every page answer carries a Content-Security-Policy that allows this origin's script and
//! style only, and nothing foreign: no inline script, no other host to connect to, no frame.

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

const INDEX_HTML: &str = include_str!("../page/index.html");
const APP_JS: &str = include_str!("../page/app.js");
const APP_CSS: &str = include_str!("../page/app.css");
const ICON_SVG: &str = include_str!("../page/icon.svg");

/// This origin's script, style and images; connections to this origin; nothing else.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Whether `path` is the page or one of its assets (served without the token).
pub fn is_page(path: &str) -> bool {
    path == "/" || path.starts_with("/assets/")
}

/// `body` as `content_type` under the page's policy (an SVG opened by itself runs nothing
/// either); the page's own files may be framed nowhere and are checked for changes each load.
fn page_response(body: impl IntoResponse, content_type: &'static str) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

pub async fn index() -> Response {
    page_response(INDEX_HTML, "text/html; charset=utf-8")
}

pub async fn asset(Path(name): Path<String>) -> Response {
    match name.as_str() {
        "app.js" => page_response(APP_JS, "text/javascript; charset=utf-8"),
        "app.css" => page_response(APP_CSS, "text/css; charset=utf-8"),
        "icon.svg" => page_response(ICON_SVG, "image/svg+xml"),
        _ => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}

/// An SVG drawing as an answer.
pub fn svg_response(svg: String) -> Response {
    page_response(svg, "image/svg+xml")
}
