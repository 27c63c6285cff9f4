//! The HTTP adapter: axum routes, credential extraction, and the one error-to-HTTP table.
//! Handlers are thin: extract, call one `Service` method, wrap the answer.

pub mod error;
pub mod extract;
mod middleware;
mod pages;
mod routes;
pub mod session;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use docreview_core::Service;
use tokio_util::sync::CancellationToken;

pub use middleware::API_VERSION;
pub use session::WebSettings;

/// Shared by every handler.
#[derive(Clone)]
pub struct AppState {
    pub service: Arc<Service>,
    /// Cancelled when the server shuts down, so long-lived event streams end and let it.
    pub shutdown: CancellationToken,
    /// Cookies and origin checks for browser sessions.
    pub web: WebSettings,
}

/// Extra room above the HTML limit for the rest of a multipart or JSON body.
const BODY_OVERHEAD: usize = 1024 * 1024;

/// The whole HTTP surface.
pub fn app(service: Arc<Service>, shutdown: CancellationToken, web: WebSettings) -> Router {
    let body_limit = service.max_html_bytes() + BODY_OVERHEAD;
    let state = AppState {
        service,
        shutdown,
        web,
    };
    // The fallback sits inside the credential layer, so an unknown path answered to a personal
    // token carries its expiry header like every other answer.
    let api = routes::api()
        .fallback(error::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::authenticate,
        ))
        .layer(axum::middleware::from_fn(middleware::api_headers));
    // Endpoints of the API that take no credentials (the command-line code exchange).
    let open_api = routes::open_api().layer(axum::middleware::from_fn(middleware::api_headers));
    Router::new()
        .merge(routes::public())
        .merge(pages::router())
        .merge(open_api)
        .merge(api)
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn_with_state(
            body_limit,
            middleware::reject_oversized,
        ))
        .layer(axum::middleware::from_fn(middleware::api_version))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            error::panic_response,
        ))
        .layer(middleware::trace_layer())
        .with_state(state)
}
