//! quarry-http: the HTTP API (`quarry serve`, axum). Thin: each route decodes its query
//! into the service's request type and returns the service's JSON. Loopback by default; any
//! other address needs `--allow-remote` and a token, and a token, once set, is checked on
//! every request. Without `--allow-remote`, a request whose `Host` is not a loopback name is
//! refused (DNS rebinding). Bodies and query strings are bounded, paths never leave a repo's root
//! (the service resolves them), and every error is JSON with a status code.
//!
//! Bounded under load: at most `max_connections` connections are held — when full, the one
//! idle or stalled longest gives way to a new one, a connection at work never does, and one
//! nothing can make room for is answered 503 with `Retry-After` (connections.rs) — a client
//! that has not sent its headers within `header_timeout` is dropped (idle keep-alive
//! connections too), a body must come whole within the same time, and at most
//! `max_concurrent` requests do work at a time; a few more wait briefly for a turn, the rest
//! are answered 503 with `Retry-After` — so a flood of searches costs queue slots, not memory.

mod connections;
mod graph_svg;
pub mod openapi;
mod page;
mod peer;

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
    Answer, CommitSearch, FileList, FileSummary, FileView, SearchResponse, SliceAnswer, Status,
    SyncAnswer, Touches,
};
use quarry_engine::graph::Impact;
use quarry_engine::history::ShownCommit;
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
    /// Open the search page in the default browser once listening.
    pub open: bool,
    pub limits: Limits,
}

/// What one server holds at most.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once; another is closed when accepted.
    pub max_connections: usize,
    /// Time a connection may take to send a request's headers (and may sit idle between
    /// requests), and a request's body after them.
    pub header_timeout: std::time::Duration,
    /// Requests doing work at once (searches, summaries, syncs).
    pub max_concurrent: usize,
    /// Requests waiting for a turn; more are answered 503.
    pub max_queued: usize,
}

impl Default for Limits {
    /// 256 connections (a quarter of the usual 1,024 descriptors), 10 s for headers, two
    /// requests at work per CPU (each search is single-threaded and mostly CPU), 64 waiting.
    fn default() -> Self {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        Limits {
            max_connections: 256,
            header_timeout: std::time::Duration::from_secs(10),
            max_concurrent: 2 * cpus,
            max_queued: 64,
        }
    }
}

/// How long a request waits for a turn before it is answered 503.
const QUEUE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Clone)]
struct App {
    service: Arc<Service>,
    token: Option<Arc<String>>,
    /// Serving loopback only: requests must name a loopback host.
    loopback_only: bool,
    /// Turns at work, and how many requests wait for one.
    work: Arc<tokio::sync::Semaphore>,
    waiting: Arc<std::sync::atomic::AtomicUsize>,
    max_queued: usize,
    /// How long a request's body may take to come, whole.
    body_timeout: std::time::Duration,
}

struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.0, Json(json!({ "error": self.1 }))).into_response();
        if self.0 == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        }
        response
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        let status = if is_bad_request(&e) {
            StatusCode::BAD_REQUEST
        } else if quarry_engine::is_lock_busy(&e) {
            StatusCode::CONFLICT
        } else if quarry_engine::is_store_unavailable(&e) {
            // The store's server is down or recovering: Retry-After, not a fault.
            StatusCode::SERVICE_UNAVAILABLE
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
            "limit" | "depth" | "line" => match value.parse::<u64>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::String(value),
            },
            // The switches of the request types (`explain=true`, `rerank=1`, `colour=true`).
            "explain" | "rerank" | "colour" | "mentions" | "forward" => match value.as_str() {
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
    // The path names the parameter at fault (`limit: invalid type…`).
    serde_path_to_error::deserialize(Value::Object(object))
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("bad parameters: {e}")))
}

/// Runs a blocking service call off the async workers, when its turn comes; its typed
/// answer is the body.
async fn blocking<T: Send + 'static>(
    app: &App,
    call: impl FnOnce(&Service) -> Result<T> + Send + 'static,
) -> Result<Json<T>, ApiError> {
    let permit = turn(app).await?;
    let service = app.service.clone();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        call(&service)
    })
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
    let bad =
        |e: serde_json::Error| ApiError(StatusCode::BAD_REQUEST, format!("bad JSON body: {e}"));
    let mut body: Value = serde_json::from_slice(&body).map_err(bad)?;
    repo_as_repos(&mut body);
    let params = serde_json::from_value(body).map_err(bad)?;
    blocking(&app, move |s| s.search_code(params)).await
}

/// A body may name its repos as a GET's query string does: `"repo": "a"` or `"repo": "a,b"`
/// (or a list) stands for `"repos": [...]`, the body's documented field.
fn repo_as_repos(body: &mut Value) {
    let Some(object) = body.as_object_mut() else {
        return;
    };
    if object.contains_key("repos") {
        return;
    }
    let Some(repo) = object.remove("repo") else {
        return;
    };
    let repos = match repo {
        Value::String(names) => Value::Array(
            names
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.to_string()))
                .collect(),
        ),
        other => other,
    };
    object.insert("repos".into(), repos);
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

async fn slice(State(app): State<App>, Query(q): Pairs) -> Reply<SliceAnswer> {
    let params = decode(q)?;
    blocking(&app, move |s| s.slice(params)).await
}

async fn file_view(State(app): State<App>, Query(q): Pairs) -> Reply<FileView> {
    let params = decode(q)?;
    blocking(&app, move |s| s.file_view(params)).await
}

async fn show_commit(State(app): State<App>, Query(q): Pairs) -> Reply<ShownCommit> {
    let params = decode(q)?;
    blocking(&app, move |s| s.show_commit(params)).await
}

async fn impact(State(app): State<App>, Query(q): Pairs) -> Reply<Impact> {
    let params = decode(q)?;
    blocking(&app, move |s| s.impact(params)).await
}

/// The impact answer drawn as SVG (graph_svg.rs), for the page.
async fn impact_svg(State(app): State<App>, Query(q): Pairs) -> Result<Response, ApiError> {
    let params = decode(q)?;
    let Json(answer) = blocking(&app, move |s| s.impact(params)).await?;
    Ok(page::svg_response(graph_svg::render(&answer.body)))
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

/// A turn at work: at once, or after waiting up to [`QUEUE_WAIT`] behind the others; a 503
/// with `Retry-After` when the queue is full or the wait ran out.
async fn turn(app: &App) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
    use std::sync::atomic::Ordering;
    if let Ok(permit) = app.work.clone().try_acquire_owned() {
        return Ok(permit);
    }
    let busy = || {
        ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many requests at once: retry in a second".into(),
        )
    };
    if app.waiting.fetch_add(1, Ordering::SeqCst) >= app.max_queued {
        app.waiting.fetch_sub(1, Ordering::SeqCst);
        return Err(busy());
    }
    let waited = tokio::time::timeout(QUEUE_WAIT, app.work.clone().acquire_owned()).await;
    app.waiting.fetch_sub(1, Ordering::SeqCst);
    match waited {
        Ok(Ok(permit)) => Ok(permit),
        _ => Err(busy()),
    }
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
    if let Some(refused) = refuse_foreign(&app, &request) {
        return refused.into_response();
    }
    if app.loopback_only {
        // DNS rebinding: a web page on evil.example whose name now resolves to 127.0.0.1
        // reaches this server from the user's browser with `Host: evil.example`. Exactly one
        // Host header, naming a loopback host (HTTP/1.1 requires it; two are a smuggling
        // attempt).
        let mut hosts = request.headers().get_all(header::HOST).iter();
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return ApiError(
                StatusCode::BAD_REQUEST,
                "a request needs exactly one Host header".into(),
            )
            .into_response();
        };
        let host = host.to_str().unwrap_or("");
        if !is_loopback_host(host) {
            return ApiError(
                StatusCode::FORBIDDEN,
                format!("Host `{host}` does not name this loopback server: use http://127.0.0.1:PORT (or serve with --allow-remote and a --token)"),
            )
            .into_response();
        }
    }
    // The page and its assets hold no data: a browser loads them before it has the token.
    if let Some(token) = app
        .token
        .as_ref()
        .filter(|_| !page::is_page(request.uri().path()))
    {
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
    // The body, whole, within its time (a client trickling it is dropped, not waited for);
    // then the request is at work, and its connection no longer gives way to another.
    let place = request.extensions().get::<connections::Place>().cloned();
    let (parts, body) = request.into_parts();
    let within = app.body_timeout;
    let bytes = match tokio::time::timeout(within, axum::body::to_bytes(body, MAX_BODY_BYTES)).await
    {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return ApiError(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request body is larger than {MAX_BODY_BYTES} bytes"),
            )
            .into_response()
        }
        Err(_) => {
            return ApiError(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not come within {:.1} s",
                    within.as_secs_f64()
                ),
            )
            .into_response()
        }
    };
    if let Some(place) = &place {
        place.doing(connections::Doing::Working);
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// A loopback connection's owner, when the kernel named one other than the serving user
/// (peer.rs): such a client is answered only with the token.
#[derive(Clone, Copy)]
struct ForeignUser(u32);

/// What no request may do whatever its route: come from another local user without the
/// token (peer.rs), name a foreign host in an absolute-form request line
/// (`GET http://evil.example/… HTTP/1.1`), or write from another origin. A browser sends a
/// cross-origin POST with `Content-Type: text/plain` and no preflight (`mode: 'no-cors'`): it
/// cannot read the answer, but the write happens. So a write (any method but GET and HEAD)
/// must carry a JSON content type — which a page can only send after a CORS preflight this
/// server never grants — and no foreign `Origin` or `Sec-Fetch-Site`, unless it carries the
/// token (an `Authorization` header needs a preflight too).
fn refuse_foreign(app: &App, request: &Request<Body>) -> Option<ApiError> {
    let forbidden = |why: String| Some(ApiError(StatusCode::FORBIDDEN, why));
    if let Some(ForeignUser(uid)) = request.extensions().get::<ForeignUser>() {
        if app.token.is_none() {
            return forbidden(format!(
                "this server answers only the user who started it; the connection is user {uid}'s: start `quarry serve --token T` and send `Authorization: Bearer T` to share it"
            ));
        }
    }
    if let Some(authority) = request.uri().authority() {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok());
        if (app.loopback_only && !is_loopback_host(authority.as_str()))
            || host.is_some_and(|h| !h.eq_ignore_ascii_case(authority.as_str()))
        {
            return forbidden(format!(
                "the request line names `{authority}`, which is not this server: send the path alone (`GET /api/...`)"
            ));
        }
    }
    let method = request.method();
    if method == axum::http::Method::GET || method == axum::http::Method::HEAD {
        return None;
    }
    let headers = request.headers();
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = text(header::HeaderName::from_static("sec-fetch-site")) {
        if !matches!(site, "same-origin" | "none") {
            return forbidden(format!(
                "a write from another site (Sec-Fetch-Site: {site}) is refused: only the search page and local clients may write"
            ));
        }
    }
    if let Some(origin) = text(header::ORIGIN) {
        let host = text(header::HOST).unwrap_or("");
        let own = ["http://", "https://"].iter().any(|scheme| {
            origin
                .strip_prefix(scheme)
                .is_some_and(|o| o.eq_ignore_ascii_case(host))
        });
        if !own {
            return forbidden(format!(
                "a write from origin `{origin}` is refused: only pages this server serves may write"
            ));
        }
    }
    let json = text(header::CONTENT_TYPE).is_some_and(|t| {
        let essence = t.split(';').next().unwrap_or("").trim();
        essence.eq_ignore_ascii_case("application/json")
    });
    if !json && app.token.is_none() {
        return Some(ApiError(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a write needs `Content-Type: application/json` (a page on another site cannot send one without permission this server never gives)".into(),
        ));
    }
    None
}

/// `localhost`, `127.0.0.1`, `[::1]` (and other loopback addresses), with or without a port.
fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        // `[::1]` or `[::1]:PORT`, nothing else after the bracket (`[::1]evil.example`).
        let Some((name, after)) = rest.split_once(']') else {
            return false;
        };
        let port_only = after.is_empty()
            || after
                .strip_prefix(':')
                .is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
        if !port_only {
            return false;
        }
        name
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
pub fn router(
    service: Arc<Service>,
    token: Option<String>,
    loopback_only: bool,
    limits: Limits,
) -> Router {
    let app = App {
        service,
        token: token.map(Arc::new),
        loopback_only,
        work: Arc::new(tokio::sync::Semaphore::new(limits.max_concurrent.max(1))),
        waiting: Arc::default(),
        max_queued: limits.max_queued,
        body_timeout: limits.header_timeout,
    };
    Router::new()
        .route("/", get(page::index))
        .route("/assets/{name}", get(page::asset))
        .route("/healthz", get(healthz))
        .route("/api/status", get(status))
        .route("/api/search/code", get(search_code).post(search_code_post))
        .route("/api/search/commits", get(search_commits))
        .route("/api/touches", get(touches))
        .route("/api/summary", get(summary))
        .route("/api/slice", get(slice))
        .route("/api/file", get(file_view))
        .route("/api/commit", get(show_commit))
        .route("/api/impact", get(impact))
        .route("/api/impact.svg", get(impact_svg))
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
        let address = listener.local_addr()?;
        eprintln!("quarry: serving http://{address}");
        if opts.open {
            open_browser(&format!("http://{address}/"));
        }
        let loopback_only = !opts.allow_remote;
        let app = router(service, opts.token, loopback_only, opts.limits);
        accept(listener, app, opts.limits).await
    })
}

/// Opens `url` with the desktop's opener (`xdg-open`, `open` on macOS), or says to.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let opened = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .is_ok();
    if !opened {
        eprintln!("quarry: no `{opener}` here to open a browser with: open {url}");
    }
}

/// Serves connections until Ctrl-C, each bounded as `limits` says. axum's own `serve` has no
/// header-read timeout and no connection cap, so connections are served with hyper's
/// builder directly; which connection gives way at the cap is connections.rs's.
async fn accept(listener: tokio::net::TcpListener, app: Router, limits: Limits) -> Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let held = connections::Registry::new(limits.max_connections);
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of descriptors, most often: wait for connections to close.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stop => return Ok(()),
        };
        let Some((place, give_way)) = held.admit(peer.ip()) else {
            // Full of connections at work: told so, to come back.
            tokio::spawn(refuse(stream));
            continue;
        };
        let app = app.clone();
        let server = stream.local_addr().ok();
        tokio::spawn(async move {
            let leave = connections::Leave(place.clone());
            let foreign = server
                .filter(|_| peer.ip().is_loopback())
                .and_then(|server| peer::owner_uid(peer, server))
                .filter(|uid| peer::own_uid().is_some_and(|own| own != *uid))
                .map(ForeignUser);
            let service =
                hyper::service::service_fn(move |mut request: Request<hyper::body::Incoming>| {
                    place.doing(connections::Doing::Reading);
                    request.extensions_mut().insert(place.clone());
                    if let Some(foreign) = foreign {
                        request.extensions_mut().insert(foreign);
                    }
                    let place = place.clone();
                    let answered = tower::ServiceExt::oneshot(app.clone(), request);
                    async move {
                        let response = answered.await;
                        place.doing(connections::Doing::Idle);
                        response
                    }
                });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = give_way.notified() => {
                    // Idle or stalled, and another connection needs the place.
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), connection).await;
                }
            }
            drop(leave);
        });
    }
}

/// Answers a connection the server has no place for: 503 with `Retry-After`, then closes.
async fn refuse(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let body = json!({"error": "the server holds as many connections as it may, all at work: retry in a moment"})
        .to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        stream.write_all(response.as_bytes()),
    )
    .await;
    let _ = stream.shutdown().await;
}
