//! Managing a document: delete, title, tags and archive flag, sharing, ownership.

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use docreview_api::{Deleted, MetaChange, OwnerChange, SharingChange, SharingView, TitleChange};
use docreview_core::access::Operation;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, Caller};
use crate::routes::{ReviewBody, ReviewPath, allow};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::Manage, routes!(delete_review)))
        .routes(allow(Operation::Manage, routes!(rename)))
        .routes(allow(Operation::Manage, routes!(change_meta)))
        .routes(allow(Operation::ReadSharing, routes!(sharing)))
        .routes(allow(Operation::ChangeSharing, routes!(change_sharing)))
        .routes(allow(Operation::Grant, routes!(transfer_owner)))
}

/// Delete a document with its versions, comments and runs.
#[utoipa::path(delete, path = "/api/reviews/{review_id}", tag = "manage", operation_id = "deleteReview",
    params(ReviewPath), responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete_review(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
) -> Result<Response, ApiError> {
    state.service.delete_review(&actor, &review_id).await?;
    Ok(Json(Deleted {
        review_id,
        deleted: true,
    })
    .into_response())
}

/// Change a document's title.
#[utoipa::path(patch, path = "/api/reviews/{review_id}/title", tag = "manage", operation_id = "renameReview",
    params(ReviewPath), request_body = TitleChange,
    responses((status = 200, description = "Changed", body = ReviewBody)))]
async fn rename(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiJson(change): ApiJson<TitleChange>,
) -> Result<Response, ApiError> {
    let review = state
        .service
        .rename_review(&actor, &review_id, change)
        .await?;
    Ok(Json(ReviewBody { review }).into_response())
}

/// Change a document's tags or archive state.
#[utoipa::path(patch, path = "/api/reviews/{review_id}/meta", tag = "manage", operation_id = "changeReviewMeta",
    params(ReviewPath), request_body = MetaChange,
    responses((status = 200, description = "Changed", body = ReviewBody)))]
async fn change_meta(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiJson(change): ApiJson<MetaChange>,
) -> Result<Response, ApiError> {
    let review = state
        .service
        .change_meta(&actor, &review_id, change)
        .await?;
    Ok(Json(ReviewBody { review }).into_response())
}

/// Read who a document is shared with, and its access mode.
#[utoipa::path(get, path = "/api/reviews/{review_id}/access", tag = "manage", operation_id = "readSharing",
    params(ReviewPath), responses((status = 200, description = "The sharing", body = SharingView)))]
async fn sharing(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
) -> Result<Response, ApiError> {
    let sharing = state.service.sharing(&actor, &review_id).await?;
    Ok(Json(sharing).into_response())
}

/// Change a document's access mode or its list of people and roles.
#[utoipa::path(patch, path = "/api/reviews/{review_id}/access", tag = "manage", operation_id = "changeSharing",
    params(ReviewPath), request_body = SharingChange,
    responses((status = 200, description = "Changed", body = SharingView)))]
async fn change_sharing(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiJson(change): ApiJson<SharingChange>,
) -> Result<Response, ApiError> {
    let sharing = state
        .service
        .change_sharing(&actor, &review_id, change)
        .await?;
    Ok(Json(sharing).into_response())
}

/// Give a document to another member.
#[utoipa::path(put, path = "/api/reviews/{review_id}/owner", tag = "manage", operation_id = "transferOwner",
    params(ReviewPath), request_body = OwnerChange,
    responses((status = 200, description = "Transferred", body = ReviewBody)))]
async fn transfer_owner(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiJson(change): ApiJson<OwnerChange>,
) -> Result<Response, ApiError> {
    let review = state
        .service
        .transfer_owner(&actor, &review_id, change)
        .await?;
    Ok(Json(ReviewBody { review }).into_response())
}
