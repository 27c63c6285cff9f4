//! What web handlers take from a request: the signed-in person (or a way to sign in), and
//! forms that carry the session's CSRF token.

use axum::body::Bytes;
use std::collections::HashMap;

use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::Method;
use axum::http::request::Parts;
use docreview_core::access::Actor;
use docreview_core::identity;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use crate::session::{CSRF_HEADER, cookie_value};
use crate::web::error::WebError;
use crate::web::htmx::Htmx;
use crate::web::session::CsrfToken;

/// The path (and query) a person asked for, to come back to after signing in. For htmx
/// requests, the page they were on.
fn asked_for(parts: &Parts) -> String {
    let htmx = Htmx::of(&parts.headers);
    if htmx.request {
        return htmx.current_page().unwrap_or("/").to_string();
    }
    if parts.method == Method::GET {
        parts
            .uri
            .path_and_query()
            .map_or_else(|| "/".into(), |p| p.as_str().to_string())
    } else {
        "/".into()
    }
}

/// The signed-in person and their session's CSRF token. Without one, a page redirects to the
/// sign-in page (and back here afterwards); an htmx request gets a 401 the app explains.
pub struct SignedIn {
    pub actor: Actor,
    pub csrf: String,
}

impl<S: Send + Sync> FromRequestParts<S> for SignedIn {
    type Rejection = WebError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let Some(actor) = parts.extensions.get::<Actor>().cloned() else {
            return Err(WebError::SignIn {
                next: asked_for(parts),
                htmx: Htmx::of(&parts.headers).request,
            });
        };
        let csrf = parts
            .extensions
            .get::<CsrfToken>()
            .map(|token| token.0.clone())
            .unwrap_or_default();
        Ok(SignedIn { actor, csrf })
    }
}

/// What a request about one document carries: the signed-in person, what htmx says, and the
/// document (the path's `review_id`). The screens' request contexts start from it.
pub struct OnReview {
    pub signed_in: SignedIn,
    pub htmx: Htmx,
    pub review_id: String,
}

impl<S: Send + Sync> FromRequestParts<S> for OnReview {
    type Rejection = WebError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let signed_in = SignedIn::from_request_parts(parts, state).await?;
        let htmx = Htmx::of(&parts.headers);
        let review_id = Path::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .ok()
            .and_then(|Path(mut params)| params.remove("review_id"))
            .ok_or_else(|| htmx.core(docreview_core::Error::NotFound("review")))?;
        Ok(OnReview {
            signed_in,
            htmx,
            review_id,
        })
    }
}

/// The signed-in person, if any (pages anyone may see, like the sign-in page).
pub struct MaybeSignedIn(pub Option<SignedIn>);

impl<S: Send + Sync> FromRequestParts<S> for MaybeSignedIn {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Ok(MaybeSignedIn(
            SignedIn::from_request_parts(parts, state).await.ok(),
        ))
    }
}

/// A URL-encoded form posted by a signed-in person's page, checked against the session's CSRF
/// token: in the form's `csrf` field (plain forms) or the `X-CSRF-Token` header (htmx).
pub struct CsrfForm<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for CsrfForm<T> {
    type Rejection = WebError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let headers = request.headers().clone();
        let htmx = Htmx::of(&headers).request;
        let Some(cookie) = cookie_value(&headers).map(str::to_string) else {
            return Err(WebError::CrossSite { htmx });
        };
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|_| WebError::bad_form("The form could not be read.", htmx))?;
        let from_header = headers
            .get(CSRF_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        let from_field = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&bytes)
            .ok()
            .and_then(|pairs| {
                pairs
                    .into_iter()
                    .find(|(name, _)| name == "csrf")
                    .map(|(_, value)| value)
            });
        let presented = from_header.or(from_field).unwrap_or_default();
        if !identity::csrf_matches(&cookie, &presented) {
            return Err(WebError::CrossSite { htmx });
        }
        // No field takes NUL (and a database could not even compare it): refused here, once.
        if bytes.contains(&0) || crate::extract::has_encoded_nul(&String::from_utf8_lossy(&bytes)) {
            return Err(WebError::bad_form(
                "The form holds a NUL character, which no field accepts.",
                htmx,
            ));
        }
        serde_urlencoded::from_bytes(&bytes)
            .map(CsrfForm)
            .map_err(|error| WebError::bad_form(&format!("The form is incomplete: {error}."), htmx))
    }
}

/// A form number that may be sent empty (`start=`, as a form's unused hidden field is): empty
/// is absent, anything else must parse. For `#[serde(default, deserialize_with = "…")]`.
pub fn empty_as_none<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    match Option::<String>::deserialize(deserializer)?
        .as_deref()
        .map(str::trim)
    {
        None | Some("") => Ok(None),
        Some(text) => text.parse().map(Some).map_err(serde::de::Error::custom),
    }
}
