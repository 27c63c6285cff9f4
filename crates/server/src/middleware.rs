//! Cross-cutting layers: request ids, credentials, the interface version, oversized bodies and
//! heads, request logs and their metrics.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use docreview_core::access::{Actor, Credential};
use docreview_core::clock::rfc3339;
use docreview_core::{AuthFailure, Error};
use tracing::Instrument;

use crate::AppState;
use crate::error::{ApiError, error_response};
use crate::session;

/// The interface version this server speaks (reference §Versioning).
pub const API_VERSION: &str = "2026-10-02";
static API_VERSION_HEADER: HeaderName = HeaderName::from_static("x-cr-api-version");
static TOKEN_EXPIRES_HEADER: HeaderName = HeaderName::from_static("x-cr-token-expires-at");

static REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

tokio::task_local! {
    /// The id of the request being answered, for error bodies made deep inside it.
    static REQUEST_ID: String;
}

/// The request's id, as its log lines and `x-request-id` carry it.
#[derive(Clone)]
struct RequestId(String);

/// The id of the request this task is answering, if any.
pub fn current_request_id() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// Gives every request an id: the caller's `x-request-id` when it is a plain id (so ids follow
/// a request through a proxy), else a new random one. It is on the request's log span, on the
/// answer's `x-request-id`, and in the body of a 5xx, so a user's report of a failure finds its
/// log lines (the body never says more than the id).
pub async fn request_id(mut request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(&REQUEST_ID_HEADER)
        .and_then(|value| value.to_str().ok())
        .filter(|value| is_plain_request_id(value))
        .map_or_else(new_request_id, str::to_string);
    request.extensions_mut().insert(RequestId(id.clone()));
    let mut response = REQUEST_ID.scope(id.clone(), next.run(request)).await;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response
            .headers_mut()
            .insert(REQUEST_ID_HEADER.clone(), value);
    }
    response
}

/// What a caller's request id may be, to be logged and echoed: a UUID, or at most 31 letters,
/// digits, `-` and `.` (a hex trace id, a proxy's counter). Anything else is replaced rather than
/// cleaned, so nothing else a client sends there reaches the log: every secret the service
/// accepts is longer (shared tokens have at least 32 characters, personal tokens 53 with a `_`).
fn is_plain_request_id(value: &str) -> bool {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'.';
    let is_uuid = value.len() == 36
        && value.bytes().enumerate().all(|(at, b)| match at {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    is_uuid || ((1..32).contains(&value.len()) && value.bytes().all(plain))
}

fn new_request_id() -> String {
    let mut bytes = [0u8; 12];
    docreview_core::clock::random_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why a request's credentials were refused.
pub enum Refusal {
    /// The Bearer token is unusable (malformed, unknown, expired, revoked, suspended).
    Token(ApiError),
    /// The session cookie is unusable (signed out, expired, suspended).
    Session(Error),
    /// A cookie-authenticated write that passed no CSRF check.
    CrossSite,
}

/// Resolves a Bearer token, or else a session cookie, into an `Actor`: `None` when the request
/// carries neither. A bad credential is refused, never treated as none; a cookie-authenticated
/// write must also pass the CSRF check. The API and the web app share this one rule and differ
/// only in how they answer a refusal.
pub async fn resolve_actor(
    state: &AppState,
    method: &Method,
    headers: &HeaderMap,
) -> Result<Option<Actor>, Refusal> {
    match bearer(headers) {
        Err(error) => Err(Refusal::Token(error)),
        Ok(Some(value)) => match state.service.authenticate(value).await {
            Ok(actor) => Ok(Some(actor)),
            Err(error) => Err(Refusal::Token(ApiError::Core(error))),
        },
        Ok(None) => {
            let Some(cookie) = session::cookie_value(headers) else {
                return Ok(None);
            };
            let actor = state
                .service
                .authenticate_session(cookie)
                .await
                .map_err(Refusal::Session)?;
            if !state.web.passes_csrf(method, headers, cookie) {
                return Err(Refusal::CrossSite);
            }
            Ok(Some(actor))
        }
    }
}

/// The message of a refused cross-site write.
pub const CROSS_SITE_MESSAGE: &str =
    "cross-site request refused: send the session's X-CSRF-Token or call from this site's pages";

/// The API's credential layer: puts the `Actor` into the request for the handlers, answers a
/// refused credential with its JSON error at once, and announces personal-token expiry on the
/// response.
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let actor = match resolve_actor(&state, request.method(), request.headers()).await {
        // A session's cookie counts only for a script's request or a navigation, never for a
        // subresource (`<img src="/api/…">` in an uploaded document): there it is no credential.
        Ok(Some(actor))
            if matches!(actor.credential, Credential::Session { .. })
                && is_subresource(request.headers()) =>
        {
            None
        }
        Ok(actor) => actor,
        Err(Refusal::Token(error)) => return error.into_response(),
        Err(Refusal::Session(error)) => return ApiError::Core(error).into_response(),
        Err(Refusal::CrossSite) => {
            return ApiError::Core(Error::forbidden(CROSS_SITE_MESSAGE)).into_response();
        }
    };
    let expires_at = actor
        .as_ref()
        .and_then(docreview_core::access::Actor::token_expires_at);
    let principal = actor
        .as_ref()
        .map(|actor| Principal(actor.id().to_string()));
    if let Some(actor) = actor {
        if let Err(error) = crate::limits::per_credential(&state, request.method(), &actor) {
            return with_principal(error.into_response(), principal);
        }
        request.extensions_mut().insert(actor);
    }
    let mut response = with_principal(next.run(request).await, principal);
    if let Some(expires_at) = expires_at
        && let Ok(value) = HeaderValue::from_str(&rfc3339(expires_at))
    {
        response
            .headers_mut()
            .insert(TOKEN_EXPIRES_HEADER.clone(), value);
    }
    response
}

/// Who a request was answered for (the user or service principal id, never a credential), for
/// the request log: set on the response by the credential layers.
#[derive(Clone)]
pub struct Principal(pub String);

/// `response`, marked with the principal it was answered for.
pub fn with_principal(mut response: Response, principal: Option<Principal>) -> Response {
    if let Some(principal) = principal {
        response.extensions_mut().insert(principal);
    }
    response
}

/// Whether the browser says the request loads a subresource (an image, a style sheet, a
/// frame, …) rather than making a script's request (`empty`) or a navigation (`document`).
fn is_subresource(headers: &HeaderMap) -> bool {
    headers
        .get("sec-fetch-dest")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|dest| dest != "empty" && dest != "document")
}

/// The Bearer value of the `Authorization` header, if any.
fn bearer(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let malformed = || ApiError::Core(Error::Unauthorized(AuthFailure::Malformed));
    let value = value.to_str().map_err(|_| malformed())?;
    let (scheme, token) = value.trim().split_once(' ').ok_or_else(malformed)?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(malformed());
    }
    Ok(Some(token.trim()))
}

/// How much of an oversized body we read and discard before answering 413, and for how long.
const DRAIN_LIMIT: u64 = 64 * 1024 * 1024;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// Answers 413 to a body whose declared length is over the limit — after reading the body.
/// Closing a connection while the client is still sending makes the kernel reset it, and the
/// client then never sees the 413; draining first lets every client read its answer.
pub async fn reject_oversized(
    State(limit): State<usize>,
    request: Request,
    next: Next,
) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    let Some(declared) = declared.filter(|length| *length > limit as u64) else {
        return next.run(request).await;
    };
    // Said as the configured document limit, which is what a client can act on (the body's
    // allowance above it is room for the other fields).
    let documents = limit.saturating_sub(crate::BODY_OVERHEAD);
    let mut response = ApiError::BodyTooLarge(format!(
        "the request body is {declared} bytes; this server accepts documents of at most \
         {documents} bytes (DOCREVIEW_MAX_HTML_BYTES)"
    ))
    .into_response();
    if declared > DRAIN_LIMIT || !drain(request.into_body()).await {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Reads and discards a body; `false` when it took too long or ended in an error.
async fn drain(body: axum::body::Body) -> bool {
    use futures_util::StreamExt;
    let mut stream = body.into_data_stream();
    let reading = async {
        while let Some(chunk) = stream.next().await {
            if chunk.is_err() {
                return false;
            }
        }
        true
    };
    tokio::time::timeout(DRAIN_TIME, reading)
        .await
        .unwrap_or(false)
}

/// Rejects unknown interface versions and stamps ours on every response.
pub async fn api_version(request: Request, next: Next) -> Response {
    let requested = request
        .headers()
        .get(&API_VERSION_HEADER)
        .map(|v| v.to_str().unwrap_or("").trim().to_string());
    let mut response = match requested {
        Some(version) if version != API_VERSION => error_response(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            &format!("unknown interface version; this server speaks {API_VERSION}"),
        ),
        _ => next.run(request).await,
    };
    response.headers_mut().insert(
        API_VERSION_HEADER.clone(),
        HeaderValue::from_static(API_VERSION),
    );
    response
}

/// Every error is the JSON error body (DESIGN.md §5), also the ones the HTTP layer makes
/// itself without a body: a method a path does not have (405, its `Allow` header kept) outside
/// the API router's own fallback, or an extractor's refusal. Answers that have a body (pages,
/// the API's errors) pass untouched.
pub async fn json_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_error = status.is_client_error() || status.is_server_error();
    if !is_error || response.headers().contains_key(header::CONTENT_TYPE) {
        return response;
    }
    let (code, message) = match status {
        StatusCode::METHOD_NOT_ALLOWED => (
            "method_not_allowed",
            "this endpoint does not accept this method",
        ),
        StatusCode::NOT_FOUND => ("not_found", "no such endpoint"),
        StatusCode::PAYLOAD_TOO_LARGE => (
            "payload_too_large",
            "the request body is larger than this server accepts",
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            "unsupported_media_type",
            "this endpoint does not accept this content type",
        ),
        status if status.is_server_error() => ("internal", "internal error"),
        _ => ("invalid_request", "the request could not be read"),
    };
    let (parts, _) = response.into_parts();
    let mut answer = error_response(status, code, message);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_LENGTH {
            answer.headers_mut().insert(name.clone(), value.clone());
        }
    }
    answer
}

/// The longest request target we read (a longer one is 414). Above the longest valid query
/// (`find`'s phrase of 1,000 characters, percent-encoded four-byte UTF-8: 12,000 bytes), far
/// below hyper's own limit (64 KiB), which answers with an empty body, so clients see the JSON
/// error body here.
const MAX_URI_BYTES: usize = 16 * 1024;
/// The most header lines, and header bytes, we read (beyond, 431). hyper's own limits (which
/// answer with an empty body) are set above these in `listener`.
pub(crate) const MAX_HEADERS: usize = 100;
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// Answers 414 to a request target, and 431 to a header block, larger than we read, with the
/// JSON error body.
pub async fn reject_oversized_head(request: Request, next: Next) -> Response {
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |target| target.as_str().len());
    if target > MAX_URI_BYTES {
        return error_response(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            &format!(
                "the request target is {target} bytes; this server reads at most {MAX_URI_BYTES}"
            ),
        );
    }
    let headers = request.headers();
    let bytes: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    if headers.len() > MAX_HEADERS || bytes > MAX_HEADER_BYTES {
        return error_response(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large",
            &format!(
                "the request has {} header lines of {bytes} bytes; this server reads at most \
                 {MAX_HEADERS} lines of {MAX_HEADER_BYTES} bytes",
                headers.len()
            ),
        );
    }
    next.run(request).await
}

fn latency_ms(latency: std::time::Duration) -> f64 {
    let micros = u32::try_from(latency.as_micros()).unwrap_or(u32::MAX);
    f64::from(micros) / 1000.0
}

/// How a request's method is logged and counted: a method HTTP defines by its name, any other
/// as `other`. A method is the client's to choose (any token, of any length): written as sent,
/// a secret pasted there would reach the log, and each made-up one would add metric series.
fn method_label(method: &Method) -> &'static str {
    const KNOWN: [Method; 9] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::OPTIONS,
        Method::CONNECT,
        Method::TRACE,
    ];
    KNOWN
        .iter()
        .find(|known| *known == method)
        .map_or("other", Method::as_str)
}

/// The request log, one line a request at info level: method, route template, status,
/// latency, request id and principal id; and the same as metrics. Never the raw path or the
/// query string (a client may put a token there, e.g. `?access_token=…`), nor headers.
pub async fn access_log(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    // The template (`/api/reviews/{review_id}`), so ids in paths neither reach the log nor
    // multiply the metrics' series; a path no route matched is "unmatched".
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |path| path.as_str().to_string());
    let id = request
        .extensions()
        .get::<RequestId>()
        .map_or_else(String::new, |RequestId(id)| id.clone());
    // At info level, so errors logged while answering carry the request's id and route.
    let span = tracing::info_span!("request", request_id = %id, method = %method, route = %route);
    let response = next.run(request).instrument(span).await;
    let latency = started.elapsed();
    let status = response.status().as_u16();
    let principal = response
        .extensions()
        .get::<Principal>()
        .map_or("-", |Principal(id)| id.as_str());
    // Outside the span: the line carries every field itself, and is formatted once.
    tracing::info!(
        target: "docreview::access",
        method = %method,
        route = %route,
        status,
        // Microseconds as a decimal of milliseconds (1.592), not a float's tail digits.
        latency_ms = latency_ms(latency),
        request_id = %id,
        principal = %principal,
        "request"
    );
    if !crate::telemetry::enabled() {
        // Labels cost allocations even when no recorder listens.
        return response;
    }
    let method = method.to_string();
    metrics::counter!(
        "docreview_http_requests_total",
        "method" => method.clone(),
        "route" => route.clone(),
        "status" => status.to_string()
    )
    .increment(1);
    metrics::histogram!(
        "docreview_http_request_duration_seconds",
        "method" => method,
        "route" => route
    )
    .record(latency.as_secs_f64());
    response
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::{Arc, Mutex};

    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use tower::ServiceExt;

    use super::{REQUEST_ID, access_log};

    /// Runs `work` as if answering request `id`.
    pub(crate) async fn in_request<T>(id: &str, work: impl Future<Output = T>) -> T {
        REQUEST_ID.scope(id.to_string(), work).await
    }

    /// Collects what the log writes.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn request_logs_leave_out_the_query_string() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let app = Router::new()
            .route("/api/me", get(|| async { "ok" }))
            .layer(axum::middleware::from_fn(access_log));
        let request = axum::http::Request::get("/api/me?access_token=drp_secretvalue")
            .body(Body::empty())
            .expect("request");
        let response = app.oneshot(request).await.expect("response");
        assert_eq!(response.status(), 200);
        let logged = String::from_utf8(captured.0.lock().expect("lock").clone()).expect("utf8");
        assert!(
            logged.contains("/api/me") && logged.contains("status=200"),
            "the request is logged: {logged}"
        );
        assert!(!logged.contains("drp_secretvalue"), "{logged}");
        assert!(!logged.contains("access_token"), "{logged}");
    }
}
