//! Route table: one module per resource.

mod account;
mod auth;
mod comments;
mod events;
mod imports;
mod manage;
mod notifications;
mod org;
mod projects;
mod reviews;
mod runs;
mod search;
mod webhooks;

use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::IntoResponse;
use docreview_api::{ReviewBody, RevisionBody, RunBody};
use docreview_core::access::{self, Actor, Operation};
use docreview_core::{AuthFailure, Error};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::openapi;

/// `{reviewId}` in a path.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct ReviewPath {
    /// The document's id.
    review_id: String,
}

/// `{reviewId}/…/{commentId}` in a path.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct CommentPath {
    /// The document's id.
    review_id: String,
    /// The comment's id.
    comment_id: String,
}

type Routes = UtoipaMethodRouter<AppState>;

/// Routes of one operation class (DESIGN.md §2): the caller's credential must allow
/// `operation` (checked here, before any extractor reads the request), and the contract lists
/// the credentials that do, from the same rule.
fn allow(operation: Operation, (schemas, mut paths, method_router): Routes) -> Routes {
    openapi::secure(&mut paths, operation);
    let method_router = method_router.route_layer(axum::middleware::from_fn(
        move |request: Request, next: Next| async move {
            let permitted = match request.extensions().get::<Actor>() {
                Some(actor) => access::permit(actor, operation),
                None => Err(Error::Unauthorized(AuthFailure::Missing)),
            };
            match permitted {
                Ok(()) => next.run(request).await,
                Err(error) => ApiError::Core(error).into_response(),
            }
        },
    ));
    (schemas, paths, method_router)
}

/// Endpoints that need no credentials: liveness (the process answers) and readiness (its
/// database answers too), for load balancers and orchestrators.
fn public() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
}

/// The process answers.
#[utoipa::path(get, path = "/healthz", tag = "health", operation_id = "healthz",
    responses((status = 200, description = "`ok`", body = String, content_type = "text/plain")))]
async fn healthz() -> &'static str {
    "ok"
}

/// The process and its database answer.
#[utoipa::path(get, path = "/readyz", tag = "health", operation_id = "readyz",
    responses((status = 200, description = "`ready`", body = String, content_type = "text/plain")))]
async fn readyz(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> axum::response::Response {
    match state.service.ready().await {
        Ok(()) => "ready".into_response(),
        Err(error) => ApiError::Core(error).into_response(),
    }
}

pub use auth::client_address;

/// The JSON API; every route is registered through `allow` with its operation class, except
/// the command-line code exchange, which takes no credentials.
fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(reviews::router())
        .merge(imports::router())
        .merge(runs::router())
        .merge(comments::router())
        .merge(events::router())
        .merge(manage::router())
        .merge(search::router())
        .merge(account::router())
        .merge(notifications::router())
        .merge(projects::router())
        .merge(org::router())
        .merge(webhooks::router())
}

/// Health endpoints, outside the credential layer.
pub fn public_router() -> Router<AppState> {
    public().split_for_parts().0
}

/// API endpoints that take no credentials: the command-line code exchange, the contract.
fn open_routes() -> OpenApiRouter<AppState> {
    auth::router().routes(routes!(openapi_json))
}

pub fn open_api() -> Router<AppState> {
    open_routes().split_for_parts().0
}

/// The API behind the credential layer.
pub fn api() -> Router<AppState> {
    api_routes()
        .split_for_parts()
        .0
        .method_not_allowed_fallback(crate::error::method_not_allowed)
}

/// The OpenAPI document of every route above.
pub fn contract() -> utoipa::openapi::OpenApi {
    let mut document = OpenApiRouter::with_openapi(openapi::base())
        .merge(public())
        .merge(open_routes())
        .merge(api_routes())
        .into_openapi();
    openapi::complete(&mut document);
    document
}

/// This document.
#[utoipa::path(get, path = "/api/openapi.json", tag = "health", operation_id = "openapi",
    responses((status = 200, description = "The OpenAPI 3.1 document", body = Object)))]
async fn openapi_json() -> axum::response::Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        openapi::DOCUMENT.as_str(),
    )
        .into_response()
}
