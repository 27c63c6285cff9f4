//! The one place where errors become HTTP: `{ "error", "status", "message", …extra }`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
pub use docreview_api::ErrorBody;
use docreview_core::{AuthFailure, Error};

/// A refusal on its way to becoming a response: what a use case said, or what only HTTP knows.
#[derive(Debug)]
pub enum ApiError {
    Core(Error),
    /// The request body is over the size the server reads.
    BodyTooLarge(String),
    /// The body is not of the media type the endpoint reads.
    UnsupportedMediaType(String),
    /// The event-stream caps are full (the listener's, apart from connections).
    TooManyStreams,
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        ApiError::Core(error)
    }
}

impl ApiError {
    pub fn invalid(message: impl Into<String>) -> Self {
        ApiError::Core(Error::invalid(message))
    }
}

/// An error body for `status`; a 5xx names the request it answers (`requestId`).
pub fn error_body(status: StatusCode, error: &str, message: impl Into<String>) -> ErrorBody {
    ErrorBody {
        error: error.to_string(),
        status: status.as_u16(),
        message: message.into(),
        reason: None,
        current_revision: None,
        current_thread_revision: None,
        latest_version_id: None,
        failed: None,
        candidates: None,
        open_count: None,
        request_id: if status.is_server_error() {
            crate::middleware::current_request_id()
        } else {
            None
        },
    }
}

fn respond(body: ErrorBody) -> Response {
    let status = StatusCode::from_u16(body.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(body)).into_response()
}

/// An error that the core does not know about (routing, media types).
pub fn error_response(status: StatusCode, code: &str, message: &str) -> Response {
    respond(error_body(status, code, message))
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let error = match self {
            ApiError::Core(error) => error,
            ApiError::BodyTooLarge(message) => {
                return error_response(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "payload_too_large",
                    &message,
                );
            }
            ApiError::UnsupportedMediaType(message) => {
                return error_response(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    &message,
                );
            }
            ApiError::TooManyStreams => {
                let mut response = error_response(
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    "too many event streams are open from this address; close some pages, \
                     then try again",
                );
                response.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    axum::http::HeaderValue::from_static("10"),
                );
                return response;
            }
        };
        let (status, code) = match &error {
            Error::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "unauthorized"),
            Error::InsufficientScope(_) => (StatusCode::FORBIDDEN, "insufficient_scope"),
            Error::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            Error::InvalidRequest(_) | Error::BatchRejected(_) | Error::QuoteNotFound { .. } => {
                (StatusCode::BAD_REQUEST, "invalid_request")
            }
            Error::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            Error::RevisionConflict { .. } => (StatusCode::CONFLICT, "comments revision conflict"),
            Error::ThreadConflict { .. } => (StatusCode::CONFLICT, "thread revision conflict"),
            Error::StaleVersion { .. } => (StatusCode::CONFLICT, "stale_target_version"),
            Error::AlreadyExists(_) => (StatusCode::CONFLICT, "already_exists"),
            Error::InvalidTransition(_) => (StatusCode::CONFLICT, "invalid_transition"),
            Error::ReviewFinalized => (StatusCode::CONFLICT, "review_finalized"),
            Error::OpenCommentsRemain(_) => (StatusCode::CONFLICT, "open_comments_remain"),
            Error::NotASuggestion(_) => (StatusCode::BAD_REQUEST, "not_a_suggestion"),
            Error::SuggestionOutdated(_) => (StatusCode::CONFLICT, "suggestion_outdated"),
            Error::SuggestionsOverlap(_) => (StatusCode::CONFLICT, "suggestions_overlap"),
            Error::SuggestionClosed(_) => (StatusCode::CONFLICT, "suggestion_closed"),
            Error::ProjectRequired => (StatusCode::FORBIDDEN, "project_required"),
            Error::ProjectRoleRequired => (StatusCode::FORBIDDEN, "project_role_required"),
            Error::ProjectNotFound => (StatusCode::NOT_FOUND, "project_not_found"),
            Error::ProjectNotInSnapshot => (StatusCode::CONFLICT, "project_not_in_snapshot"),
            Error::ProjectConflict => (StatusCode::CONFLICT, "project_conflict"),
            Error::RateLimited { .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            Error::DocumentTooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            Error::Unavailable(source) => {
                tracing::error!(error = %source, "service unavailable");
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
            }
            Error::Internal(source) => {
                tracing::error!(error = %source, "internal error");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal")
            }
        };
        let retry_after = match &error {
            Error::RateLimited { retry_after_secs } => Some(*retry_after_secs),
            Error::Unavailable(_) => Some(1),
            _ => None,
        };
        let mut body = error_body(status, code, error.to_string());
        match &error {
            Error::Unauthorized(failure) => body.reason = Some(failure.as_str().to_string()),
            Error::RevisionConflict { current } => body.current_revision = Some(*current),
            Error::ThreadConflict { current } => body.current_thread_revision = Some(*current),
            Error::StaleVersion { latest } => body.latest_version_id = Some(latest.clone()),
            Error::BatchRejected(failed) => body.failed = Some(failed.clone()),
            Error::OpenCommentsRemain(count) => body.open_count = Some(*count),
            Error::QuoteNotFound { candidates, .. } => {
                body.candidates = Some(candidates.clone());
            }
            _ => {}
        }
        let mut response = respond(body);
        if let Error::Unauthorized(failure) = &error {
            // RFC 6750 §3: no error code when no credential was sent at all.
            let challenge = if *failure == AuthFailure::Missing {
                "Bearer"
            } else {
                "Bearer error=\"invalid_token\""
            };
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static(challenge),
            );
        }
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(seconds),
            );
        }
        response
    }
}

pub async fn not_found() -> Response {
    error_response(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

pub async fn method_not_allowed() -> Response {
    error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not accept this method",
    )
}

/// A panic is a bug: answer 500 without details and keep the connection.
pub fn panic_response(_panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("a request handler panicked");
    error_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "internal error",
    )
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;

    use super::error_body;

    #[tokio::test]
    async fn only_server_errors_carry_the_request_id() {
        let (failed, refused) = crate::middleware::tests::in_request("req-1", async {
            (
                error_body(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "internal error",
                ),
                error_body(StatusCode::BAD_REQUEST, "invalid_request", "bad"),
            )
        })
        .await;
        assert_eq!(failed.request_id.as_deref(), Some("req-1"));
        assert_eq!(refused.request_id, None);
        let json = serde_json::to_value(&failed).expect("json");
        assert_eq!(json["requestId"], "req-1");
        assert!(json.get("reason").is_none());
    }
}
