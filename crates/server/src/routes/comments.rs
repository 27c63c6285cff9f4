//! Human comments: write, edit, cancel, re-anchor, reply, resolve and reopen.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{patch, post};
use axum::{Json, Router};
use docreview_core::service::{NewComment, NewReply, Reanchor, StatusChange, TextEdit};
use serde::Deserialize;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, ApiQuery, Authorized, op};
use crate::routes::RevisionBody;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/reviews/{review_id}/comments", post(create))
        .route(
            "/api/reviews/{review_id}/comments/{comment_id}",
            patch(edit).delete(cancel),
        )
        .route(
            "/api/reviews/{review_id}/comments/{comment_id}/anchor",
            patch(reanchor),
        )
        .route(
            "/api/reviews/{review_id}/comments/{comment_id}/thread",
            post(reply),
        )
        .route(
            "/api/reviews/{review_id}/comments/{comment_id}/thread/{message_id}",
            patch(edit_reply).delete(cancel_reply),
        )
        .route(
            "/api/reviews/{review_id}/comments/{comment_id}/status-events",
            post(set_status),
        )
}

/// `DELETE` carries its optional base revision in the query.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BaseRevision {
    base_comments_revision: Option<i64>,
}

async fn create(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Comment>,
    ApiPath(review_id): ApiPath<String>,
    ApiJson(input): ApiJson<NewComment>,
) -> Result<Response, ApiError> {
    let written = state.service.add_comment(&actor, &review_id, input).await?;
    Ok((StatusCode::CREATED, Json(written)).into_response())
}

async fn edit(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Comment>,
    ApiPath((review_id, comment_id)): ApiPath<(String, String)>,
    ApiJson(input): ApiJson<TextEdit>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .edit_comment(&actor, &review_id, &comment_id, input)
        .await?;
    Ok(Json(written).into_response())
}

async fn cancel(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Comment>,
    ApiPath((review_id, comment_id)): ApiPath<(String, String)>,
    ApiQuery(query): ApiQuery<BaseRevision>,
) -> Result<Response, ApiError> {
    let revision = state
        .service
        .cancel_comment(
            &actor,
            &review_id,
            &comment_id,
            query.base_comments_revision,
        )
        .await?;
    Ok(Json(RevisionBody {
        comments_revision: revision,
    })
    .into_response())
}

async fn reanchor(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Comment>,
    ApiPath((review_id, comment_id)): ApiPath<(String, String)>,
    ApiJson(input): ApiJson<Reanchor>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .reanchor_comment(&actor, &review_id, &comment_id, input)
        .await?;
    Ok(Json(written).into_response())
}

async fn reply(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Comment>,
    ApiPath((review_id, comment_id)): ApiPath<(String, String)>,
    ApiJson(input): ApiJson<NewReply>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .reply(&actor, &review_id, &comment_id, input)
        .await?;
    Ok((StatusCode::CREATED, Json(written)).into_response())
}

async fn edit_reply(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Comment>,
    ApiPath((review_id, comment_id, message_id)): ApiPath<(String, String, String)>,
    ApiJson(input): ApiJson<TextEdit>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .edit_reply(&actor, &review_id, &comment_id, &message_id, input)
        .await?;
    Ok(Json(written).into_response())
}

async fn cancel_reply(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Comment>,
    ApiPath((review_id, comment_id, message_id)): ApiPath<(String, String, String)>,
    ApiQuery(query): ApiQuery<BaseRevision>,
) -> Result<Response, ApiError> {
    let revision = state
        .service
        .cancel_reply(
            &actor,
            &review_id,
            &comment_id,
            &message_id,
            query.base_comments_revision,
        )
        .await?;
    Ok(Json(RevisionBody {
        comments_revision: revision,
    })
    .into_response())
}

async fn set_status(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Comment>,
    ApiPath((review_id, comment_id)): ApiPath<(String, String)>,
    ApiJson(input): ApiJson<StatusChange>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .set_status(&actor, &review_id, &comment_id, input)
        .await?;
    Ok((StatusCode::CREATED, Json(written)).into_response())
}
