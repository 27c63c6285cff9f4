//! Managing a document: delete, title, tags and archive flag, sharing, ownership.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, put};
use axum::{Json, Router};
use docreview_core::service::{MetaChange, OwnerChange, SharingChange, TitleChange};
use serde::Serialize;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, Authorized, op};
use crate::routes::ReviewBody;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/api/reviews/{review_id}",
            axum::routing::delete(delete_review),
        )
        .route("/api/reviews/{review_id}/title", patch(rename))
        .route("/api/reviews/{review_id}/meta", patch(change_meta))
        .route(
            "/api/reviews/{review_id}/access",
            get(sharing).patch(change_sharing),
        )
        .route("/api/reviews/{review_id}/owner", put(transfer_owner))
}

/// The answer to a deletion.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Deleted {
    review_id: String,
    deleted: bool,
}

async fn delete_review(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Manage>,
    ApiPath(review_id): ApiPath<String>,
) -> Result<Response, ApiError> {
    state.service.delete_review(&actor, &review_id).await?;
    Ok(Json(Deleted {
        review_id,
        deleted: true,
    })
    .into_response())
}

async fn rename(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Manage>,
    ApiPath(review_id): ApiPath<String>,
    ApiJson(change): ApiJson<TitleChange>,
) -> Result<Response, ApiError> {
    let review = state
        .service
        .rename_review(&actor, &review_id, change)
        .await?;
    Ok(Json(ReviewBody { review }).into_response())
}

async fn change_meta(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Manage>,
    ApiPath(review_id): ApiPath<String>,
    ApiJson(change): ApiJson<MetaChange>,
) -> Result<Response, ApiError> {
    let review = state
        .service
        .change_meta(&actor, &review_id, change)
        .await?;
    Ok(Json(ReviewBody { review }).into_response())
}

async fn sharing(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::ReadSharing>,
    ApiPath(review_id): ApiPath<String>,
) -> Result<Response, ApiError> {
    let sharing = state.service.sharing(&actor, &review_id).await?;
    Ok(Json(sharing).into_response())
}

async fn change_sharing(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::ChangeSharing>,
    ApiPath(review_id): ApiPath<String>,
    ApiJson(change): ApiJson<SharingChange>,
) -> Result<Response, ApiError> {
    let sharing = state
        .service
        .change_sharing(&actor, &review_id, change)
        .await?;
    Ok(Json(sharing).into_response())
}

async fn transfer_owner(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Grant>,
    ApiPath(review_id): ApiPath<String>,
    ApiJson(change): ApiJson<OwnerChange>,
) -> Result<Response, ApiError> {
    let review = state
        .service
        .transfer_owner(&actor, &review_id, change)
        .await?;
    Ok(Json(ReviewBody { review }).into_response())
}
