//! The web app's credential layer: the API's rule (`middleware::resolve_actor`), answered the way
//! a browser needs. A session that ended is no actor (pages then ask to sign in again, and the
//! stale cookie is cleared); a cross-site write is refused with a page.

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use docreview_core::identity;

use crate::AppState;
use crate::middleware::{Principal, Refusal, resolve_actor, with_principal};
use crate::session as cookies;
use crate::web::error::message_page;

/// The session's CSRF token, for pages to embed (forms, and the meta tag htmx reads).
#[derive(Clone)]
pub struct CsrfToken(pub String);

/// Marks a request whose session cookie no longer works (signed out elsewhere, expired).
#[derive(Clone, Copy)]
pub struct SessionEnded;

pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let mut ended = false;
    let mut principal = None;
    match resolve_actor(&state, request.method(), request.headers()).await {
        Ok(Some(actor)) => {
            principal = Some(Principal(actor.id().to_string()));
            if crate::limits::per_credential(&state, request.method(), &actor).is_err() {
                return with_principal(
                    message_page(
                        StatusCode::TOO_MANY_REQUESTS,
                        "Too many changes",
                        "You made more changes in the last minute than this server allows. Wait a moment and try again.",
                    ),
                    principal,
                );
            }
            if let Some(cookie) = cookies::cookie_value(request.headers()) {
                let token = identity::csrf_token(cookie);
                request.extensions_mut().insert(CsrfToken(token));
            }
            request.extensions_mut().insert(actor);
        }
        Ok(None) => {}
        Err(Refusal::Session(_)) => {
            ended = true;
            request.extensions_mut().insert(SessionEnded);
        }
        Err(Refusal::Token(error)) => return error.into_response(),
        Err(Refusal::CrossSite) => {
            return message_page(
                StatusCode::FORBIDDEN,
                "Request refused",
                "This request did not come from this site's pages, so it was not carried out.",
            );
        }
    }
    let mut response = with_principal(next.run(request).await, principal);
    // Clear the dead cookie, unless this very response sets a new one (a sign-in).
    if ended && !response.headers().contains_key(header::SET_COOKIE) {
        response
            .headers_mut()
            .append(header::SET_COOKIE, state.web.cleared_cookie());
    }
    response
}
