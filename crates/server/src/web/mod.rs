//! The web app: pages rendered on the server (askama templates in `templates/`), partial updates
//! with htmx, and a few ES modules (`assets/js/`) for what only a browser can do (selection,
//! highlights, keyboard). One module per screen, each with `fn router()`.
//!
//! Pages pass through the same credential rule as the API ([`session::authenticate`] wraps
//! `middleware::resolve_actor`) and call the same core use cases; they decide nothing the core
//! decides. Every write a page makes carries the session's CSRF token ([`extract::CsrfForm`]).

mod account;
mod api_docs;
pub mod assets;
mod auth;
mod cli_login;
mod documents;
mod error;
mod extract;
mod htmx;
mod inbox;
mod invitations;
mod layout;
mod markdown;
mod org;
mod panel;
mod paths;
mod review;
mod session;
mod settings;
mod threads;
mod unsubscribe;
mod webhooks;
mod workflow;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

use crate::AppState;
use crate::headers::{self, Policy};

/// Every page and asset of the web app.
pub fn router(state: AppState) -> Router<AppState> {
    let pages = Router::new()
        .merge(auth::router())
        .merge(cli_login::router())
        .merge(documents::router())
        .merge(account::router())
        .merge(inbox::router())
        .merge(org::router())
        .merge(webhooks::router())
        .merge(review::router())
        .merge(markdown::router())
        .merge(settings::router())
        .merge(workflow::router())
        .merge(api_docs::router())
        .merge(unsubscribe::router())
        .merge(invitations::router())
        .layer(axum::middleware::from_fn_with_state(
            state,
            session::authenticate,
        ))
        .layer(axum::middleware::from_fn(refuse_nul))
        .layer(axum::middleware::from_fn(|request, next| {
            headers::tag(Policy::Page, request, next)
        }));
    Router::new().merge(pages).merge(assets::router())
}

/// No page's path or query holds NUL (no identifier does, and a database could not even
/// compare one): such a request is answered here, before anything reaches a store.
async fn refuse_nul(request: Request, next: Next) -> Response {
    let uri = request.uri();
    if crate::extract::has_encoded_nul(uri.path()) {
        return error::message_page(StatusCode::NOT_FOUND, "Not found", "There is no such page.");
    }
    if crate::extract::has_encoded_nul(uri.query().unwrap_or_default()) {
        return error::message_page(
            StatusCode::BAD_REQUEST,
            "Bad link",
            "The link's parameters hold a character no search or filter can use.",
        );
    }
    next.run(request).await
}
