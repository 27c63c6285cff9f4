//! The HTTP adapter: axum routes, credential extraction, and the one error-to-HTTP table.
//! Handlers are thin: extract, call one `Service` method, wrap the answer.

mod deadlines;
pub mod error;
pub mod extract;
pub mod headers;
pub mod limits;
mod listener;
mod middleware;
mod open_files;
mod openapi;
mod refusals;
pub mod rendered;
mod routes;
pub mod session;
pub mod telemetry;
mod web;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use docreview_core::Service;
use tokio_util::sync::CancellationToken;

pub use limits::{RateLimits, TrustedProxies};
pub use listener::{ConnectionLimits, serve};
pub use middleware::API_VERSION;
pub use session::WebSettings;
pub use telemetry::MetricsPage;

/// How the server is run, beyond what the use cases need: rate limits, the proxies whose
/// `X-Forwarded-For` counts, and `/metrics` on the public listener.
#[derive(Clone, Default)]
pub struct Operations {
    pub rate_limits: RateLimits,
    pub trusted_proxies: TrustedProxies,
    /// `/metrics` on this listener, behind its token (`MetricsPage::token`); `None` leaves it
    /// off this listener (see `telemetry::router` for a separate one).
    pub metrics: Option<MetricsPage>,
}

/// Shared by every handler.
#[derive(Clone)]
pub struct AppState {
    pub service: Arc<Service>,
    /// Cancelled when the server shuts down, so long-lived event streams end and let it.
    pub shutdown: CancellationToken,
    /// Cookies and origin checks for browser sessions.
    pub web: WebSettings,
    /// Write rate limits of this node.
    pub limits: Arc<limits::WriteLimiter>,
    /// Rendered answers of recent review reads.
    reviews: Arc<rendered::RenderedReviews>,
}

/// Extra room above the HTML limit for the rest of a multipart or JSON body.
pub(crate) const BODY_OVERHEAD: usize = 1024 * 1024;

/// The whole HTTP surface.
pub fn app(
    service: Arc<Service>,
    shutdown: CancellationToken,
    web: WebSettings,
    operations: Operations,
) -> Router {
    let body_limit = service.max_html_bytes() + BODY_OVERHEAD;
    let metrics = operations
        .metrics
        .map(|page| telemetry::guarded_route(Arc::clone(&service), page));
    let limiter = Arc::new(limits::WriteLimiter::new(
        operations.rate_limits,
        operations.trusted_proxies,
    ));
    // With PostgreSQL, nodes share their counts (a no-op on SQLite). Outside a runtime (a
    // test building the router alone) there is nothing to share with.
    if tokio::runtime::Handle::try_current().is_ok() {
        tokio::spawn(limits::share_counts(
            Arc::clone(&limiter),
            Arc::clone(&service),
            shutdown.clone(),
        ));
    }
    let state = AppState {
        service,
        shutdown,
        web,
        limits: limiter,
        reviews: Arc::default(),
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
        .merge(metrics.unwrap_or_default())
        .merge(routes::public_router())
        .merge(web::router(state.clone()))
        // Endpoints of the API that take no credentials (the command-line code exchange, the
        // contract).
        .merge(routes::open_api())
        .merge(api)
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn_with_state(
            body_limit,
            middleware::reject_oversized,
        ))
        // Finds the client's address for everything inside, and counts its writes.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            limits::per_address,
        ))
        // Before anything else looks at a request line or header block that is too long.
        .layer(axum::middleware::from_fn(middleware::reject_oversized_head))
        .layer(axum::middleware::from_fn(middleware::api_version))
        .layer(axum::middleware::from_fn(middleware::json_errors))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            error::panic_response,
        ))
        .layer(axum::middleware::from_fn(headers::security_headers))
        .layer(axum::middleware::from_fn(middleware::access_log))
        .layer(axum::middleware::from_fn(middleware::request_id))
        .with_state(state)
}
