//! The htmx protocol in one place: what a request tells (whether htmx made it, and from which
//! page) and what an answer asks of the page (another target, another swap, an event, another
//! page), with the one way a fragment is rendered. No other web module spells an htmx header.

use std::convert::Infallible;

use askama::Template;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::{Html, IntoResponse, IntoResponseParts, Response, ResponseParts};

use crate::web::error::WebError;

const REQUEST: HeaderName = HeaderName::from_static("hx-request");
const CURRENT_URL: HeaderName = HeaderName::from_static("hx-current-url");
const RETARGET: HeaderName = HeaderName::from_static("hx-retarget");
const RESWAP: HeaderName = HeaderName::from_static("hx-reswap");
const TRIGGER: HeaderName = HeaderName::from_static("hx-trigger");
const REDIRECT: HeaderName = HeaderName::from_static("hx-redirect");

/// What htmx says about a request.
#[derive(Debug, Clone, Default)]
pub struct Htmx {
    /// Made by htmx: it is answered with fragments, and a refusal with a toast.
    pub request: bool,
    /// The path and query of the page the request was made from (`HX-Current-URL`).
    current_page: Option<String>,
}

impl Htmx {
    pub fn of(headers: &HeaderMap) -> Htmx {
        let request = headers.contains_key(REQUEST);
        let current_page = request
            .then(|| headers.get(CURRENT_URL)?.to_str().ok())
            .flatten()
            .and_then(|url| url.split_once("://").map(|(_, rest)| rest))
            .and_then(|rest| rest.find('/').map(|at| rest[at..].to_string()));
        Htmx {
            request,
            current_page,
        }
    }

    /// The path and query of the page the request was made from, if htmx made it.
    pub fn current_page(&self) -> Option<&str> {
        self.current_page.as_deref()
    }

    /// The query of the page the request was made from.
    pub fn current_query(&self) -> Option<&str> {
        self.current_page()?.split_once('?').map(|(_, query)| query)
    }

    /// A core error, answered the way this request is (a toast for htmx, else a page).
    pub fn core(&self, error: docreview_core::Error) -> WebError {
        WebError::core(error, self.request)
    }

    /// A fragment as the answer. A template that cannot render is an internal error, logged once
    /// like any other.
    pub fn fragment(&self, fragment: &impl Template) -> Result<Response, WebError> {
        fragment
            .render()
            .map(|html| Html(html).into_response())
            .map_err(|error| self.core(docreview_core::Error::Internal(Box::new(error))))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Htmx {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Htmx::of(&parts.headers))
    }
}

/// Swap the answer into this element instead of the request's target.
pub struct HxRetarget(pub &'static str);

/// Swap the answer this way instead of the request's.
pub struct HxReswap(pub &'static str);

/// Events the page fires when the answer arrives (`{"name": detail}`).
pub struct HxTrigger(pub serde_json::Value);

/// Go to this page instead of swapping anything.
pub struct HxRedirect(pub String);

fn set(mut parts: ResponseParts, name: HeaderName, value: HeaderValue) -> ResponseParts {
    parts.headers_mut().insert(name, value);
    parts
}

impl IntoResponseParts for HxRetarget {
    type Error = Infallible;

    fn into_response_parts(self, parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        Ok(set(parts, RETARGET, HeaderValue::from_static(self.0)))
    }
}

impl IntoResponseParts for HxReswap {
    type Error = Infallible;

    fn into_response_parts(self, parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        Ok(set(parts, RESWAP, HeaderValue::from_static(self.0)))
    }
}

impl IntoResponseParts for HxRedirect {
    type Error = Infallible;

    fn into_response_parts(self, parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        Ok(match HeaderValue::from_str(&self.0) {
            Ok(value) => set(parts, REDIRECT, value),
            Err(_) => parts,
        })
    }
}

impl IntoResponseParts for HxTrigger {
    type Error = Infallible;

    fn into_response_parts(self, parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        // JSON text is always a valid header value once non-ASCII is escaped, which
        // `serde_json` does not do: such a value (never ours) is left out rather than sent broken.
        Ok(match HeaderValue::from_str(&self.0.to_string()) {
            Ok(value) => set(parts, TRIGGER, value),
            Err(_) => parts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn the_page_a_request_came_from_is_its_path_and_query() {
        let htmx = Htmx::of(&headers(&[
            ("hx-request", "true"),
            (
                "hx-current-url",
                "http://127.0.0.1:8080/reviews/r1?status=all",
            ),
        ]));
        assert!(htmx.request);
        assert_eq!(htmx.current_page(), Some("/reviews/r1?status=all"));
        assert_eq!(htmx.current_query(), Some("status=all"));
    }

    #[test]
    fn without_htmx_there_is_no_current_page() {
        let htmx = Htmx::of(&headers(&[("hx-current-url", "http://h/reviews/r1")]));
        assert!(!htmx.request);
        assert_eq!(htmx.current_page(), None);
        let bare = Htmx::of(&headers(&[
            ("hx-request", "true"),
            ("hx-current-url", "nonsense"),
        ]));
        assert_eq!(bare.current_page(), None);
        assert_eq!(bare.current_query(), None);
    }
}
