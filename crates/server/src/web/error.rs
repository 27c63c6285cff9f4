//! How the web app answers when something goes wrong: a page in the app's look for a
//! navigation, a short notice for an htmx request (shown by the app as a toast), a redirect to
//! the sign-in page when the person must sign in.

use askama::Template;
use askama_web::WebTemplate;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use docreview_core::Error;

use crate::web::htmx::{HxReswap, HxRetarget};
use crate::web::layout::{Layout, Nav};
use crate::web::paths;

#[derive(Debug)]
pub enum WebError {
    /// Nobody is signed in (or the session ended): sign in, then come back to `next`.
    SignIn { next: String, htmx: bool },
    /// A write without the session's CSRF token.
    CrossSite { htmx: bool },
    /// A form that could not be read.
    BadForm { message: String, htmx: bool },
    /// What the core said.
    Core { error: Error, htmx: bool },
}

impl WebError {
    pub fn bad_form(message: &str, htmx: bool) -> Self {
        WebError::BadForm {
            message: message.to_string(),
            htmx,
        }
    }

    pub fn core(error: Error, htmx: bool) -> Self {
        WebError::Core { error, htmx }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "message.html")]
pub struct MessagePage {
    pub layout: Layout,
    pub heading: String,
    pub message: String,
    /// The id of the request refused, which finds its log lines when a person reports it.
    pub request_id: Option<String>,
}

#[derive(Template)]
#[template(path = "partials/toast.html")]
struct Toast<'a> {
    message: &'a str,
    sign_in: Option<&'a str>,
    request_id: Option<String>,
}

/// A full page with a heading, one paragraph and the request's id.
pub fn message_page(status: StatusCode, heading: &str, message: &str) -> Response {
    let page = MessagePage {
        layout: Layout::anonymous(heading, Nav::None),
        heading: heading.to_string(),
        message: message.to_string(),
        request_id: crate::middleware::current_request_id(),
    };
    (status, page).into_response()
}

/// A notice for an htmx request, placed into the page's toast area whatever the request's target,
/// with the request's id.
pub fn toast(status: StatusCode, message: &str, sign_in: Option<&str>) -> Response {
    let html = Toast {
        message,
        sign_in,
        request_id: crate::middleware::current_request_id(),
    }
    .render()
    .unwrap_or_else(|_| String::new());
    (
        status,
        HxRetarget("#toasts"),
        HxReswap("beforeend"),
        axum::response::Html(html),
    )
        .into_response()
}

fn sign_in_url(next: &str) -> String {
    format!(
        "{}?next={}",
        paths::login(),
        form_urlencoded_component(if next.is_empty() { "/" } else { next })
    )
}

/// Percent-encodes a path for a query value (`/` kept, so `next=/reviews/x` stays readable).
pub fn form_urlencoded_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3 / 2);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Status, heading and words for a core error, as a person should read them.
pub fn describe(error: &Error) -> (StatusCode, &'static str, String) {
    match error {
        Error::NotFound(_) => (
            StatusCode::NOT_FOUND,
            "Not found",
            "There is nothing here, or it is not shared with you.".into(),
        ),
        Error::Forbidden(message) => (
            StatusCode::FORBIDDEN,
            "Not allowed",
            format!("You may not do this: {message}."),
        ),
        Error::BatchRejected(_) | Error::QuoteNotFound { .. } => (
            StatusCode::BAD_REQUEST,
            "Cannot do that",
            capitalized(&error.to_string()),
        ),
        Error::InsufficientScope(_) | Error::ProjectRequired | Error::ProjectRoleRequired => (
            StatusCode::FORBIDDEN,
            "Not allowed",
            capitalized(&error.to_string()),
        ),
        Error::InvalidRequest(message) => (
            StatusCode::BAD_REQUEST,
            "Cannot do that",
            capitalized(message),
        ),
        Error::RevisionConflict { .. } | Error::StaleVersion { .. } => (
            StatusCode::CONFLICT,
            "Changed meanwhile",
            "Someone changed this document meanwhile. Reload to see the latest state.".into(),
        ),
        Error::InvalidTransition(message) | Error::AlreadyExists(message) => {
            (StatusCode::CONFLICT, "Cannot do that", capitalized(message))
        }
        Error::RateLimited { retry_after_secs } => (
            StatusCode::TOO_MANY_REQUESTS,
            "Too many attempts",
            format!("Try again in {retry_after_secs} seconds."),
        ),
        Error::DocumentTooLarge { .. } => (
            StatusCode::PAYLOAD_TOO_LARGE,
            "Too large",
            capitalized(&error.to_string()),
        ),
        Error::Unavailable(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "Unavailable",
            "The service is busy or its database is unreachable. Try again in a moment.".into(),
        ),
        Error::Unauthorized(_) => (
            StatusCode::UNAUTHORIZED,
            "Sign in",
            "Sign in to continue.".into(),
        ),
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            "The service could not complete this step. Try again in a moment.".into(),
        ),
    }
}

fn capitalized(message: &str) -> String {
    let mut chars = message.chars();
    let mut out: String = chars
        .next()
        .map(|c| c.to_uppercase().collect())
        .unwrap_or_default();
    out.push_str(chars.as_str());
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        match self {
            WebError::SignIn { next, htmx: false } => {
                let mut response = StatusCode::SEE_OTHER.into_response();
                if let Ok(location) = HeaderValue::from_str(&sign_in_url(&next)) {
                    response.headers_mut().insert(header::LOCATION, location);
                }
                response
            }
            WebError::SignIn { next, htmx: true } => toast(
                StatusCode::UNAUTHORIZED,
                "Your session has ended. Sign in again; what you typed is kept in this browser.",
                Some(&sign_in_url(&next)),
            ),
            WebError::CrossSite { htmx } => {
                let message = "This request did not carry this site's form token, so it was not \
                               carried out. Reload the page and try again.";
                if htmx {
                    toast(StatusCode::FORBIDDEN, message, None)
                } else {
                    message_page(StatusCode::FORBIDDEN, "Request refused", message)
                }
            }
            WebError::BadForm { message, htmx } => {
                if htmx {
                    toast(StatusCode::BAD_REQUEST, &message, None)
                } else {
                    message_page(StatusCode::BAD_REQUEST, "Cannot do that", &message)
                }
            }
            WebError::Core { error, htmx } => {
                if matches!(error, Error::Internal(_) | Error::Unavailable(_)) {
                    tracing::error!(error = error.detail(), "a web page failed");
                }
                let (status, heading, message) = describe(&error);
                if htmx {
                    toast(status, &message, None)
                } else {
                    message_page(status, heading, &message)
                }
            }
        }
    }
}
