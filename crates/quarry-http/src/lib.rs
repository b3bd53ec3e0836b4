//! quarry-http: the HTTP API (`quarry serve`, axum). Thin: each route decodes its query
//! into the service's request type and returns the service's JSON. Loopback by default; any
//! other address needs `--allow-remote` and a token, and a token, once set, is checked on
//! every request. Without `--allow-remote`, a request whose `Host` is not a loopback name is
//! refused (DNS rebinding). Bodies and query strings are bounded, paths never leave a repo's root
//! (the service resolves them), and every error is JSON with a status code.

pub mod openapi;

use openapi::Health;

use anyhow::{bail, Context, Result};
use axum::body::Body;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{header, Request, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use quarry_engine::answer::{
    Answer, CommitSearch, FileList, FileSummary, SearchResponse, Status, SyncAnswer, Touches,
};
use quarry_engine::service::{is_bad_request, Service};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

/// Longest request target accepted (path and query string).
pub const MAX_URI_BYTES: usize = 16 * 1024;
/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

pub struct ServeOptions {
    pub addr: SocketAddr,
    /// Required of every request when set (`Authorization: Bearer TOKEN`).
    pub token: Option<String>,
    /// Binding a non-loopback address is refused without this.
    pub allow_remote: bool,
}

#[derive(Clone)]
struct App {
    service: Arc<Service>,
    token: Option<Arc<String>>,
    /// Serving loopback only: requests must name a loopback host.
    loopback_only: bool,
}

struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        let status = if is_bad_request(&e) {
            StatusCode::BAD_REQUEST
        } else if quarry_engine::is_lock_busy(&e) {
            StatusCode::CONFLICT
        } else {
            StatusCode::INTERNAL_SERVER_ERROR
        };
        ApiError(status, format!("{e:#}"))
    }
}

/// Turns query-string pairs into the service's request type: `repo=a,b` is the `repos`
/// list, numbers are numbers, switches are booleans; unknown names are refused by the type
/// itself.
fn decode<T: DeserializeOwned>(pairs: HashMap<String, String>) -> Result<T, ApiError> {
    let mut object = Map::new();
    for (key, value) in pairs {
        let decoded = match key.as_str() {
            "repo" | "repos" => Value::Array(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| Value::String(s.to_string()))
                    .collect(),
            ),
            "limit" => match value.parse::<u64>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::String(value),
            },
            // The switches of the request types (`explain=true`, `rerank=1`).
            "explain" | "rerank" => match value.as_str() {
                "true" | "1" | "yes" => Value::Bool(true),
                "false" | "0" | "no" => Value::Bool(false),
                _ => Value::String(value),
            },
            _ => Value::String(value),
        };
        let key = if key == "repo" {
            "repos".to_string()
        } else {
            key
        };
        object.insert(key, decoded);
    }
    serde_json::from_value(Value::Object(object))
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("bad parameters: {e}")))
}

/// Runs a blocking service call off the async workers; its typed answer is the body.
async fn blocking<T: Send + 'static>(
    app: &App,
    call: impl FnOnce(&Service) -> Result<T> + Send + 'static,
) -> Result<Json<T>, ApiError> {
    let service = app.service.clone();
    tokio::task::spawn_blocking(move || call(&service))
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map(Json)
        .map_err(ApiError::from)
}

type Pairs = Query<HashMap<String, String>>;

/// A route's reply: the service's typed answer (with freshness), or an error.
type Reply<T> = Result<Json<Answer<T>>, ApiError>;

async fn search_code(State(app): State<App>, Query(q): Pairs) -> Reply<SearchResponse> {
    let params = decode(q)?;
    blocking(&app, move |s| s.search_code(params)).await
}

/// The same search with a JSON body, for queries too long for a URL (a whole issue text).
async fn search_code_post(
    State(app): State<App>,
    body: Result<axum::body::Bytes, BytesRejection>,
) -> Reply<SearchResponse> {
    let body = body.map_err(|r| ApiError(r.status(), r.body_text()))?;
    let params = serde_json::from_slice(&body)
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("bad JSON body: {e}")))?;
    blocking(&app, move |s| s.search_code(params)).await
}

async fn search_commits(State(app): State<App>, Query(q): Pairs) -> Reply<CommitSearch> {
    let params = decode(q)?;
    blocking(&app, move |s| s.search_commits(params)).await
}

async fn touches(State(app): State<App>, Query(q): Pairs) -> Reply<Touches> {
    let params = decode(q)?;
    blocking(&app, move |s| s.touches(params)).await
}

async fn summary(State(app): State<App>, Query(q): Pairs) -> Reply<FileSummary> {
    let params = decode(q)?;
    blocking(&app, move |s| s.summary(params)).await
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RepoParam {
    repos: Option<Vec<String>>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SyncBody {
    repo: Option<String>,
}

fn repo_param(q: HashMap<String, String>) -> Result<Option<String>, ApiError> {
    let mut repos = decode::<RepoParam>(q)?.repos.unwrap_or_default();
    if repos.len() > 1 {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "one repo at a time (or none for all)".into(),
        ));
    }
    Ok(repos.pop())
}

async fn list_files(State(app): State<App>, Query(q): Pairs) -> Reply<FileList> {
    let repo = repo_param(q)?;
    blocking(&app, move |s| s.list_files(repo.as_deref())).await
}

/// The repo may also come as a JSON body, `{"repo": "NAME"}`.
async fn sync_files(
    State(app): State<App>,
    Query(q): Pairs,
    body: Result<axum::body::Bytes, BytesRejection>,
) -> Reply<SyncAnswer> {
    let body = body.map_err(|r| ApiError(r.status(), r.body_text()))?;
    let mut repo = repo_param(q)?;
    if !body.iter().all(u8::is_ascii_whitespace) {
        let asked: SyncBody = serde_json::from_slice(&body)
            .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("bad JSON body: {e}")))?;
        repo = repo.or(asked.repo);
    }
    blocking(&app, move |s| s.sync_files(repo.as_deref())).await
}

async fn status(State(app): State<App>) -> Reply<Status> {
    blocking(&app, |s| s.status()).await
}

async fn healthz() -> Json<Health> {
    Json(Health { ok: true })
}

async fn openapi_json() -> Json<Value> {
    Json(openapi::document())
}

async fn not_found(request: Request<Body>) -> ApiError {
    ApiError(
        StatusCode::NOT_FOUND,
        format!(
            "no route {} {} (see /api/openapi.json)",
            request.method(),
            request.uri().path()
        ),
    )
}

/// Byte comparison whose time does not depend on where the first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn guard(State(app): State<App>, request: Request<Body>, next: Next) -> Response {
    if request.uri().to_string().len() > MAX_URI_BYTES {
        return ApiError(
            StatusCode::URI_TOO_LONG,
            format!("the request target is longer than {MAX_URI_BYTES} bytes"),
        )
        .into_response();
    }
    if app.loopback_only {
        // DNS rebinding: a web page on evil.example whose name now resolves to 127.0.0.1
        // reaches this server from the user's browser with `Host: evil.example`.
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("localhost");
        if !is_loopback_host(host) {
            return ApiError(
                StatusCode::FORBIDDEN,
                format!("Host `{host}` does not name this loopback server: use http://127.0.0.1:PORT (or serve with --allow-remote and a --token)"),
            )
            .into_response();
        }
    }
    if let Some(token) = &app.token {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if !same_secret(given.as_bytes(), token.as_bytes()) {
            return ApiError(
                StatusCode::UNAUTHORIZED,
                "missing or wrong token: send `Authorization: Bearer TOKEN`".into(),
            )
            .into_response();
        }
    }
    next.run(request).await
}

/// `localhost`, `127.0.0.1`, `[::1]` (and other loopback addresses), with or without a port.
fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                name
            } else {
                host
            }
        })
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The routes, for `serve` and for tests that run the server in-process. `loopback_only`
/// refuses requests whose `Host` is not a loopback name.
pub fn router(service: Arc<Service>, token: Option<String>, loopback_only: bool) -> Router {
    let app = App {
        service,
        token: token.map(Arc::new),
        loopback_only,
    };
    Router::new()
        .route("/healthz", get(healthz))
        .route("/api/status", get(status))
        .route("/api/search/code", get(search_code).post(search_code_post))
        .route("/api/search/commits", get(search_commits))
        .route("/api/touches", get(touches))
        .route("/api/summary", get(summary))
        .route("/api/code-files/list", get(list_files))
        .route("/api/code-files/sync", post(sync_files))
        .route("/api/openapi.json", get(openapi_json))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app)
}

/// Serves the API until Ctrl-C. Prints the address it listens on to stderr.
pub fn serve(dir: &Path, opts: ServeOptions) -> Result<()> {
    if !opts.addr.ip().is_loopback() {
        if !opts.allow_remote {
            bail!(
                "{} is reachable from other machines: pass --allow-remote (and a --token) to serve it, or bind 127.0.0.1",
                opts.addr
            );
        }
        if opts.token.as_deref().is_none_or(str::is_empty) {
            bail!(
                "serving {} to other machines needs a token: --token or $QUARRY_TOKEN",
                opts.addr
            );
        }
    }
    let service = Arc::new(Service::new(dir));
    // Opening the workspace once up front turns a missing index into an error now.
    service.workspace()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(opts.addr)
            .await
            .with_context(|| format!("cannot listen on {}", opts.addr))?;
        eprintln!("quarry: serving http://{}", listener.local_addr()?);
        let loopback_only = !opts.allow_remote;
        axum::serve(listener, router(service, opts.token, loopback_only))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok(())
    })
}
