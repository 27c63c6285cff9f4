//! The HTTP adapter: axum routes, credential extraction, and the one error-to-HTTP table.
//! Handlers are thin: extract, call one `Service` method, wrap the answer.

pub mod error;
pub mod extract;
pub mod headers;
mod listener;
mod middleware;
mod openapi;
mod routes;
pub mod session;
mod web;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use docreview_core::Service;
use tokio_util::sync::CancellationToken;

pub use listener::{ConnectionLimits, serve};
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
pub(crate) const BODY_OVERHEAD: usize = 1024 * 1024;

/// How long reading a request's body may take (a 10 MiB upload over a slow line fits).
const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

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
        ));
    Router::new()
        .merge(routes::public_router())
        .merge(web::router(state.clone()))
        // Endpoints of the API that take no credentials (the command-line code exchange, the
        // contract).
        .merge(routes::open_api())
        .merge(api)
        .layer(DefaultBodyLimit::max(body_limit))
        // A body that trickles in is cut off (its extractor then answers 400).
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
            BODY_READ_TIMEOUT,
        ))
        .layer(axum::middleware::from_fn_with_state(
            body_limit,
            middleware::reject_oversized,
        ))
        .layer(axum::middleware::from_fn(middleware::api_version))
        .layer(axum::middleware::from_fn(middleware::json_errors))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            error::panic_response,
        ))
        .layer(axum::middleware::from_fn(headers::security_headers))
        .layer(middleware::trace_layer())
        .layer(axum::middleware::from_fn(middleware::request_id))
        .with_state(state)
}
