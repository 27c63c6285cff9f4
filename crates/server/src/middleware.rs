//! Cross-cutting layers: credentials, the interface version, security headers, request logs.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use docreview_core::Error;
use docreview_core::clock::rfc3339;
use serde_json::Map;
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::trace::TraceLayer;

use crate::AppState;
use crate::error::{ApiError, error_response};
use crate::session;

/// The interface version this server speaks (reference §Versioning).
pub const API_VERSION: &str = "2026-10-02";
static API_VERSION_HEADER: HeaderName = HeaderName::from_static("x-cr-api-version");
static TOKEN_EXPIRES_HEADER: HeaderName = HeaderName::from_static("x-cr-token-expires-at");

/// Resolves a Bearer token, or else a session cookie, into an `Actor` for the handlers, and
/// announces personal-token expiry on the response. An unusable credential is 401 at once: a bad
/// credential is never treated as none. A cookie-authenticated write must also pass the CSRF
/// check (403 otherwise).
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let actor = match bearer(request.headers()) {
        Ok(None) => match session::cookie_value(request.headers()) {
            None => None,
            Some(cookie) => match state.service.authenticate_session(cookie).await {
                Ok(_)
                    if !state
                        .web
                        .passes_csrf(request.method(), request.headers(), cookie) =>
                {
                    return ApiError(Error::forbidden(
                        "cross-site request refused: send the session's X-CSRF-Token or call \
                         from this site's pages",
                    ))
                    .into_response();
                }
                Ok(actor) => Some(actor),
                Err(error) => return ApiError(error).into_response(),
            },
        },
        Ok(Some(value)) => match state.service.authenticate(value).await {
            Ok(actor) => Some(actor),
            Err(error) => return ApiError(error).into_response(),
        },
        Err(error) => return error.into_response(),
    };
    let expires_at = actor.as_ref().and_then(|actor| actor.token_expires_at());
    if let Some(actor) = actor {
        request.extensions_mut().insert(actor);
    }
    let mut response = next.run(request).await;
    if let Some(expires_at) = expires_at
        && let Ok(value) = HeaderValue::from_str(&rfc3339(expires_at))
    {
        response
            .headers_mut()
            .insert(TOKEN_EXPIRES_HEADER.clone(), value);
    }
    response
}

/// The Bearer value of the `Authorization` header, if any.
fn bearer(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let value = value.to_str().map_err(|_| ApiError(Error::Unauthorized))?;
    let (scheme, token) = value
        .trim()
        .split_once(' ')
        .ok_or(ApiError(Error::Unauthorized))?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(ApiError(Error::Unauthorized));
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
    let mut response = ApiError(Error::PayloadTooLarge(format!(
        "the request body is {declared} bytes; this server accepts at most {limit}"
    )))
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
            Map::new(),
        ),
        _ => next.run(request).await,
    };
    response.headers_mut().insert(
        API_VERSION_HEADER.clone(),
        HeaderValue::from_static(API_VERSION),
    );
    response
}

/// API answers are private and never rendered as pages; HTML bundles set their own policy.
pub async fn api_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    headers
        .entry(header::X_FRAME_OPTIONS)
        .or_insert(HeaderValue::from_static("DENY"));
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(
            "default-src 'none'; frame-ancestors 'none'",
        ));
    response
}

/// Request logs: method, path and status; never headers, so credentials stay out of logs.
pub fn trace_layer() -> TraceLayer<SharedClassifier<ServerErrorsAsFailures>> {
    TraceLayer::new_for_http()
}
