//! Projects: list, roles, and linking documents to them.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use axum::{Json, Router};
use docreview_core::service::{PageQuery, RolesChange};

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, ApiQuery, Authorized, op};
use crate::routes::ReviewBody;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/projects", get(list))
        .route("/api/projects/{code}/roles", get(roles).patch(change_roles))
        .route(
            "/api/projects/{code}/docs/{review_id}",
            put(link).delete(unlink),
        )
}

async fn list(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Account>,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.list_projects(&actor, query).await?).into_response())
}

async fn roles(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Account>,
    ApiPath(code): ApiPath<String>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.project_roles(&actor, &code).await?).into_response())
}

async fn change_roles(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Grant>,
    ApiPath(code): ApiPath<String>,
    ApiJson(change): ApiJson<RolesChange>,
) -> Result<Response, ApiError> {
    let roles = state
        .service
        .change_project_roles(&actor, &code, change)
        .await?;
    Ok(Json(roles).into_response())
}

async fn link(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::LinkProject>,
    ApiPath((code, review_id)): ApiPath<(String, String)>,
) -> Result<Response, ApiError> {
    let review = state
        .service
        .link_project(&actor, &code, &review_id)
        .await?;
    Ok(Json(ReviewBody { review }).into_response())
}

async fn unlink(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::LinkProject>,
    ApiPath((code, review_id)): ApiPath<(String, String)>,
) -> Result<Response, ApiError> {
    let review = state
        .service
        .unlink_project(&actor, &code, &review_id)
        .await?;
    Ok(Json(ReviewBody { review }).into_response())
}
