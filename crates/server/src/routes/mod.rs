//! Route table: one module per resource.

mod account;
mod auth;
mod comments;
mod events;
mod imports;
mod manage;
mod org;
mod projects;
mod reviews;
mod runs;
mod search;

use axum::Router;
use axum::routing::get;

use crate::AppState;
use docreview_core::view::{ReviewView, RunView};
use serde::Serialize;

/// `{ "review": Review }`, serialized straight from the view (no intermediate JSON tree).
#[derive(Serialize)]
struct ReviewBody {
    review: ReviewView,
}

/// `{ "run": Run }`.
#[derive(Serialize)]
struct RunBody {
    run: RunView,
}

/// `{ "commentsRevision": N }`, the answer to a cancel.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RevisionBody {
    comments_revision: i64,
}

/// Endpoints that need no credentials: liveness (the process answers) and readiness (its
/// database answers too), for load balancers and orchestrators.
pub fn public() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
}

async fn readyz(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    match state.service.ready().await {
        Ok(()) => "ready".into_response(),
        Err(error) => crate::error::ApiError(error).into_response(),
    }
}

pub use auth::client_address;

/// API endpoints that take no credentials.
pub fn open_api() -> Router<AppState> {
    auth::router()
}

/// The JSON API; every handler here takes an `Authorized<_>` extractor.
pub fn api() -> Router<AppState> {
    Router::new()
        .merge(reviews::router())
        .merge(imports::router())
        .merge(runs::router())
        .merge(comments::router())
        .merge(events::router())
        .merge(manage::router())
        .merge(search::router())
        .merge(account::router())
        .merge(projects::router())
        .merge(org::router())
        .method_not_allowed_fallback(crate::error::method_not_allowed)
}
