//! Extractors: they collect what the request carries and turn malformed input into clear 4xx.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use docreview_core::access::Actor;
use docreview_core::{AuthFailure, Error};
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// The authenticated caller. The route table has already checked that this kind of credential,
/// with its scopes, may perform the route's operation class (`routes::allow`).
pub struct Caller(pub Actor);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Actor>()
            .cloned()
            .map(Caller)
            .ok_or(ApiError::Core(Error::Unauthorized(AuthFailure::Missing)))
    }
}

/// A JSON body: 415 without `application/json`, 413 beyond the size limit, 400 when malformed.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let (value, bytes) = read_json(request, state).await?;
        if json_has_nul(&bytes) {
            return Err(ApiError::invalid(
                "text in the body must not contain NUL (\\u0000) characters",
            ));
        }
        Ok(ApiJson(value))
    }
}

/// A JSON body whose items are checked one by one (a batch of comments): as [`ApiJson`], except
/// that NUL is left to the core's check of each item, so that it fails that item alone.
pub struct ItemsJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ItemsJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        read_json(request, state)
            .await
            .map(|(value, _)| ItemsJson(value))
    }
}

/// The JSON body, and its bytes: 415 without `application/json`, 413 beyond the size limit, 400
/// when malformed.
async fn read_json<S: Send + Sync, T: DeserializeOwned>(
    request: Request,
    state: &S,
) -> Result<(T, Bytes), ApiError> {
    let is_json = request
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|mime| {
            let mime = mime.trim().to_ascii_lowercase();
            mime == "application/json"
                || (mime.starts_with("application/") && mime.ends_with("+json"))
        });
    if !is_json {
        return Err(unsupported_media_type(
            "send the body as JSON with Content-Type: application/json",
        ));
    }
    let bytes = Bytes::from_request(request, state)
        .await
        .map_err(body_error)?;
    let value = serde_json::from_slice(&bytes)
        .map_err(|error| ApiError::invalid(format!("invalid JSON body: {error}")))?;
    Ok((value, bytes))
}

#[allow(
    clippy::needless_pass_by_value,
    reason = "used as `.map_err(body_error)`"
)]
pub fn body_error(rejection: BytesRejection) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::BodyTooLarge("the request body is larger than this server accepts".into())
    } else {
        ApiError::invalid(format!("could not read the request body: {rejection}"))
    }
}

pub fn unsupported_media_type(message: &str) -> ApiError {
    ApiError::UnsupportedMediaType(message.to_string())
}

/// Query parameters; a malformed query is 400.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        if has_encoded_nul(query) {
            return Err(ApiError::invalid(
                "query parameters must not contain NUL characters",
            ));
        }
        serde_urlencoded::from_str(query)
            .map(ApiQuery)
            .map_err(|error| ApiError::invalid(format!("invalid query parameters: {error}")))
    }
}

/// Path parameters; a segment that is not valid UTF-8 is 400.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        // No identifier contains NUL, so such a path names nothing (and must not reach a
        // database that cannot even compare it).
        if has_encoded_nul(parts.uri.path()) {
            return Err(ApiError::Core(Error::NotFound("document")));
        }
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| ApiPath(value))
            .map_err(|rejection| ApiError::invalid(format!("invalid path: {rejection}")))
    }
}

/// Whether well-formed JSON text holds a NUL character in a string (only as the escape
/// `\u0000`: raw control characters are not JSON). No field of the API takes one, and
/// PostgreSQL cannot store or even compare one, so it is refused here, once, for every body.
fn json_has_nul(json: &[u8]) -> bool {
    let mut bytes = json.iter().enumerate();
    while let Some((at, &byte)) = bytes.next() {
        if byte == b'\\' {
            if json[at + 1..].starts_with(b"u0000") {
                return true;
            }
            // Skip the escaped character, so `\\u0000` (a backslash, then text) is not one.
            bytes.next();
        }
    }
    false
}

/// Whether a raw (still percent-encoded) URI part encodes a NUL character.
pub(crate) fn has_encoded_nul(raw: &str) -> bool {
    raw.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1] == b'0' && w[2] == b'0')
}

#[cfg(test)]
mod tests {
    use super::json_has_nul;

    #[test]
    fn finds_nul_escapes_in_json_strings_only() {
        assert!(json_has_nul(br#"{"runId":"run\u0000x"}"#));
        assert!(
            json_has_nul(br#"{"a":"\\\u0000"}"#),
            "an escaped backslash, then NUL"
        );
        assert!(
            !json_has_nul(br#"{"body":"write \\u0000 in JSON"}"#),
            "a backslash, then text"
        );
        assert!(!json_has_nul(br#"{"body":"\u0001 and \"quotes\""}"#));
        assert!(!json_has_nul(b"{}"));
        assert!(!json_has_nul(br#"{"trailing":"\"#));
    }
}
