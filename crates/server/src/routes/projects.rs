//! Projects: list, roles, and linking documents to them.

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use docreview_api::{PageQuery, ProjectList, ProjectRoles, RolesChange};
use docreview_core::access::Operation;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Caller};
use crate::routes::{ReviewBody, allow};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::Account, routes!(list)))
        .routes(allow(Operation::Account, routes!(roles)))
        .routes(allow(Operation::Grant, routes!(change_roles)))
        .routes(allow(Operation::LinkProject, routes!(link, unlink)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct ProjectPath {
    /// The project's code.
    #[param(pattern = "^[A-Z0-9][A-Z0-9-]{0,31}$")]
    code: String,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct ProjectDocPath {
    /// The project's code.
    #[param(pattern = "^[A-Z0-9][A-Z0-9-]{0,31}$")]
    code: String,
    /// The document's id.
    review_id: String,
}

/// The projects the caller has a role in (every project, for an admin).
#[utoipa::path(get, path = "/api/projects", tag = "projects", operation_id = "listProjects",
    params(PageQuery), responses((status = 200, description = "A page of projects", body = ProjectList)))]
async fn list(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.list_projects(&actor, query).await?).into_response())
}

/// Who holds which role in a project.
#[utoipa::path(get, path = "/api/projects/{code}/roles", tag = "projects", operation_id = "projectRoles",
    params(ProjectPath), responses((status = 200, description = "The roles", body = ProjectRoles)))]
async fn roles(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ProjectPath { code }): ApiPath<ProjectPath>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.project_roles(&actor, &code).await?).into_response())
}

/// Grant and revoke roles in a project (its managers and admins).
#[utoipa::path(patch, path = "/api/projects/{code}/roles", tag = "projects", operation_id = "changeProjectRoles",
    params(ProjectPath), request_body = RolesChange,
    responses((status = 200, description = "The roles after the change", body = ProjectRoles)))]
async fn change_roles(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ProjectPath { code }): ApiPath<ProjectPath>,
    ApiJson(change): ApiJson<RolesChange>,
) -> Result<Response, ApiError> {
    let roles = state
        .service
        .change_project_roles(&actor, &code, change)
        .await?;
    Ok(Json(roles).into_response())
}

/// Link a document to a project.
#[utoipa::path(put, path = "/api/projects/{code}/docs/{review_id}", tag = "projects", operation_id = "linkProject",
    params(ProjectDocPath),
    responses(
        (status = 200, description = "Linked", body = ReviewBody),
        (status = 409, description = "`project_not_in_snapshot` or `project_conflict`", body = ErrorBody),
    ))]
async fn link(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ProjectDocPath { code, review_id }): ApiPath<ProjectDocPath>,
) -> Result<Response, ApiError> {
    let review = state
        .service
        .link_project(&actor, &code, &review_id)
        .await?;
    Ok(Json(ReviewBody { review }).into_response())
}

/// Unlink a document from a project.
#[utoipa::path(delete, path = "/api/projects/{code}/docs/{review_id}", tag = "projects", operation_id = "unlinkProject",
    params(ProjectDocPath),
    responses(
        (status = 200, description = "Unlinked", body = ReviewBody),
        (status = 409, description = "`project_conflict`: linked to another project", body = ErrorBody),
    ))]
async fn unlink(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ProjectDocPath { code, review_id }): ApiPath<ProjectDocPath>,
) -> Result<Response, ApiError> {
    let review = state
        .service
        .unlink_project(&actor, &code, &review_id)
        .await?;
    Ok(Json(ReviewBody { review }).into_response())
}
