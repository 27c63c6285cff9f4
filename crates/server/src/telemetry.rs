//! `/metrics` in Prometheus text format: requests by route template and status, their latency,
//! the SQLite group commit's batch sizes, the database pool, live event subscribers, and the
//! outbox (what waits in each sink, how old it is, attempts and failures).
//!
//! We chose the `metrics` facade with its Prometheus recorder: the store and core crates count
//! what they see (a commit batch, a retried write) through a macro without knowing about HTTP
//! or Prometheus, and the server alone installs the recorder and renders it. The page is never
//! on the public listener unprotected: either on a separate (loopback) listener, or behind a
//! bearer token of its own.

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use docreview_core::Service;
use docreview_core::identity::Secret;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use subtle::ConstantTimeEq;

use crate::error::error_response;

/// Request latency buckets, in seconds: fine below 5 ms, where the reads should be.
const LATENCY_BUCKETS: [f64; 14] = [
    0.000_5, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];
/// Writes per group commit (at most the writer's batch limit).
const BATCH_BUCKETS: [f64; 10] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];

static RECORDER: OnceLock<Result<PrometheusHandle, String>> = OnceLock::new();

/// Installs the process-wide recorder (once); every `metrics::…!` call from then on counts.
pub fn install() -> Result<PrometheusHandle, String> {
    RECORDER
        .get_or_init(|| {
            PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".to_string()), &LATENCY_BUCKETS)
                .and_then(|builder| {
                    builder.set_buckets_for_metric(
                        Matcher::Full("docreview_sqlite_commit_batch_size".to_string()),
                        &BATCH_BUCKETS,
                    )
                })
                .and_then(PrometheusBuilder::install_recorder)
                .map_err(|error| error.to_string())
        })
        .clone()
}

/// Whether a recorder is installed (else recording is skipped where labels would cost).
pub fn enabled() -> bool {
    RECORDER.get().is_some_and(Result::is_ok)
}

/// Where `/metrics` is served, and how it is guarded.
#[derive(Clone)]
pub struct MetricsPage {
    pub handle: PrometheusHandle,
    /// When set, `/metrics` on the public listener answers only to `Authorization: Bearer
    /// <token>`; unset, the public listener has no `/metrics` (see `router` for the separate
    /// listener).
    pub token: Option<Arc<Secret>>,
}

#[derive(Clone)]
struct PageState {
    service: Arc<Service>,
    page: MetricsPage,
}

/// The whole app of the separate metrics listener: `/metrics` and nothing else.
pub fn router(service: Arc<Service>, handle: PrometheusHandle) -> Router {
    let state = PageState {
        service,
        page: MetricsPage {
            handle,
            token: None,
        },
    };
    Router::new()
        .route("/metrics", get(render))
        .fallback(crate::error::not_found)
        .layer(axum::middleware::from_fn(crate::middleware::json_errors))
        .with_state(state)
}

/// `/metrics` on the public listener, behind its token.
pub(crate) fn guarded_route<S>(service: Arc<Service>, page: MetricsPage) -> Router<S> {
    Router::new()
        .route("/metrics", get(render))
        .with_state(PageState { service, page })
}

async fn render(State(state): State<PageState>, headers: HeaderMap) -> Response {
    if let Some(token) = &state.page.token
        && !presents(&headers, token)
    {
        let mut response = error_response(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "/metrics needs the metrics token (DOCREVIEW_METRICS_TOKEN) as a Bearer token",
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    // The pool is sampled when scraped: it has no events of its own to count.
    let pool = state.service.pool_usage();
    #[allow(clippy::cast_precision_loss)] // connection counts are small
    {
        metrics::gauge!("docreview_db_pool_connections", "state" => "busy")
            .set(pool.open.saturating_sub(pool.idle) as f64);
        metrics::gauge!("docreview_db_pool_connections", "state" => "idle").set(pool.idle as f64);
        metrics::gauge!("docreview_db_pool_max_connections").set(pool.max as f64);
    }
    // The outbox too: what waits is state in the database, shared by every node.
    match state.service.outbox_depths().await {
        Ok(depths) => {
            let now = state.service.now();
            for sink in docreview_core::outbox::Sink::ALL {
                let depth = depths.iter().find(|depth| depth.sink == sink);
                let pending = depth.map_or(0, |depth| depth.pending);
                let oldest = depth
                    .and_then(|depth| depth.oldest_created_at)
                    .map_or(0.0, |at| (now - at).max(0) as f64 / 1000.0);
                #[allow(clippy::cast_precision_loss)] // queue depths are far below 2^52
                metrics::gauge!("docreview_outbox_pending", "sink" => sink.as_str())
                    .set(pending as f64);
                metrics::gauge!("docreview_outbox_oldest_age_seconds", "sink" => sink.as_str())
                    .set(oldest);
            }
        }
        Err(error) => tracing::warn!(error = error.detail(), "could not read the outbox's depth"),
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        state.page.handle.render(),
    )
        .into_response()
}

/// Whether the request carries `token` as its Bearer token (compared in constant time).
fn presents(headers: &HeaderMap, token: &Secret) -> bool {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, value)| value.trim());
    // Constant time in the contents (only the length may show).
    presented.is_some_and(|value| bool::from(value.as_bytes().ct_eq(token.expose().as_bytes())))
}

/// Counts a live event subscriber while it lives.
pub(crate) struct Subscriber;

impl Subscriber {
    pub(crate) fn new() -> Subscriber {
        metrics::gauge!("docreview_sse_subscribers").increment(1.0);
        Subscriber
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        metrics::gauge!("docreview_sse_subscribers").decrement(1.0);
    }
}
