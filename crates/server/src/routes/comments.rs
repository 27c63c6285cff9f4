//! Human comments: write, edit, cancel, re-anchor, reply, resolve and reopen.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use docreview_api::{
    AnnotationImport, CommentWritten, NewComment, NewReply, Reanchor, ReplyWritten, StatusChange,
    StatusWritten, TextEdit,
};
use docreview_core::access::Operation;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Caller};
use crate::routes::{CommentPath, ReviewPath, RevisionBody, allow};
use docreview_core::service::WriteBase;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::Comment, routes!(create)))
        .routes(allow(Operation::Comment, routes!(edit, cancel)))
        .routes(allow(Operation::Comment, routes!(reanchor)))
        .routes(allow(Operation::Comment, routes!(reply)))
        .routes(allow(Operation::Comment, routes!(edit_reply, cancel_reply)))
        .routes(allow(Operation::Comment, routes!(set_status)))
        .routes(allow(Operation::Comment, routes!(import_annotations)))
}

/// Write in annotations made elsewhere: a W3C Web Annotation collection, page, list or
/// annotation (as `export?format=w3c` writes), or a Hypothesis export (`{ annotations }`, the
/// search API's `{ rows }`, or a list). Each becomes the caller's comment on the latest version
/// (or a reply in its thread), anchored by its quote, with who wrote it and when at the end of
/// its body; each one that cannot be written is reported by its place in the file, and the rest
/// are written.
#[utoipa::path(post, path = "/api/reviews/{review_id}/import-annotations", tag = "comments",
    operation_id = "importAnnotations", params(ReviewPath),
    request_body(content = serde_json::Value, description = "The annotations file: a JSON object or list (at most 2,000 annotations)"),
    responses(
        (status = 200, description = "What was written, and each annotation that was not", body = AnnotationImport),
        (status = 400, description = "`invalid_request`: not an annotations file, or over 2,000 annotations", body = ErrorBody),
    ))]
async fn import_annotations(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiJson(file): ApiJson<serde_json::Value>,
) -> Result<Response, ApiError> {
    let report = state
        .service
        .import_annotations(&actor, &review_id, &file)
        .await?;
    Ok(Json(report).into_response())
}

/// `DELETE` carries its optional base revision in the query.
#[derive(Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct BaseRevision {
    /// The `commentsRevision` the client last read; another gives 409.
    base_comments_revision: Option<i64>,
    /// The comment's `threadRevision` the client last read; another gives 409
    /// `thread revision conflict`.
    base_thread_revision: Option<i64>,
}

/// `{reviewId}/comments/{commentId}/thread/{messageId}` in a path.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(
    clippy::struct_field_names,
    reason = "named after the path's segments, which are ids"
)]
struct MessagePath {
    /// The document's id.
    review_id: String,
    /// The comment's id.
    comment_id: String,
    /// The reply's id.
    message_id: String,
}

/// Add a comment, anchored by its locator to the latest version.
#[utoipa::path(post, path = "/api/reviews/{review_id}/comments", tag = "comments",
    operation_id = "addComment", params(ReviewPath), request_body = NewComment,
    responses(
        (status = 201, description = "Written", body = CommentWritten),
        (status = 409, description = "`comments revision conflict` (with `currentRevision`) or \
            `stale_target_version` (with `latestVersionId`)", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiJson(input): ApiJson<NewComment>,
) -> Result<Response, ApiError> {
    let written = state.service.add_comment(&actor, &review_id, input).await?;
    Ok((StatusCode::CREATED, Json(written)).into_response())
}

/// Change a comment's body (its author only).
#[utoipa::path(patch, path = "/api/reviews/{review_id}/comments/{comment_id}", tag = "comments",
    operation_id = "editComment", params(CommentPath), request_body = TextEdit,
    responses(
        (status = 200, description = "Written", body = CommentWritten),
        (status = 409, description = "`comments revision conflict` (with `currentRevision`), \
            `thread revision conflict` (with `currentThreadRevision`)", body = ErrorBody),
    ))]
async fn edit(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(CommentPath {
        review_id,
        comment_id,
    }): ApiPath<CommentPath>,
    ApiJson(input): ApiJson<TextEdit>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .edit_comment(&actor, &review_id, &comment_id, input)
        .await?;
    Ok(Json(written).into_response())
}

/// Cancel a comment while it is provisional (its author, within the undo window).
#[utoipa::path(delete, path = "/api/reviews/{review_id}/comments/{comment_id}", tag = "comments",
    operation_id = "cancelComment", params(CommentPath, BaseRevision),
    responses(
        (status = 200, description = "Cancelled", body = RevisionBody),
        (status = 409, description = "`comments revision conflict` (with `currentRevision`), \
            `thread revision conflict` (with `currentThreadRevision`) or \
            `invalid_transition` (no longer provisional)", body = ErrorBody),
    ))]
async fn cancel(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(CommentPath {
        review_id,
        comment_id,
    }): ApiPath<CommentPath>,
    ApiQuery(query): ApiQuery<BaseRevision>,
) -> Result<Response, ApiError> {
    let revision = state
        .service
        .cancel_comment(
            &actor,
            &review_id,
            &comment_id,
            WriteBase::of(query.base_comments_revision, query.base_thread_revision),
        )
        .await?;
    Ok(Json(RevisionBody {
        comments_revision: revision,
    })
    .into_response())
}

/// Move a comment's anchor to another place in the latest version.
#[utoipa::path(patch, path = "/api/reviews/{review_id}/comments/{comment_id}/anchor", tag = "comments",
    operation_id = "reanchorComment", params(CommentPath), request_body = Reanchor,
    responses(
        (status = 200, description = "Written", body = CommentWritten),
        (status = 409, description = "`comments revision conflict` (with `currentRevision`), \
            `thread revision conflict` (with `currentThreadRevision`) or \
            `stale_target_version` (with `latestVersionId`)", body = ErrorBody),
    ))]
async fn reanchor(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(CommentPath {
        review_id,
        comment_id,
    }): ApiPath<CommentPath>,
    ApiJson(input): ApiJson<Reanchor>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .reanchor_comment(&actor, &review_id, &comment_id, input)
        .await?;
    Ok(Json(written).into_response())
}

/// Reply to a comment.
#[utoipa::path(post, path = "/api/reviews/{review_id}/comments/{comment_id}/thread", tag = "comments",
    operation_id = "reply", params(CommentPath), request_body = NewReply,
    responses(
        (status = 201, description = "Written", body = ReplyWritten),
        (status = 409, description = "`comments revision conflict` (with `currentRevision`), \
            `thread revision conflict` (with `currentThreadRevision`)", body = ErrorBody),
    ))]
async fn reply(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(CommentPath {
        review_id,
        comment_id,
    }): ApiPath<CommentPath>,
    ApiJson(input): ApiJson<NewReply>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .reply(&actor, &review_id, &comment_id, input)
        .await?;
    Ok((StatusCode::CREATED, Json(written)).into_response())
}

/// Change a reply's body (its author only).
#[utoipa::path(patch, path = "/api/reviews/{review_id}/comments/{comment_id}/thread/{message_id}",
    tag = "comments", operation_id = "editReply", params(MessagePath), request_body = TextEdit,
    responses(
        (status = 200, description = "Written", body = ReplyWritten),
        (status = 409, description = "`comments revision conflict` (with `currentRevision`), \
            `thread revision conflict` (with `currentThreadRevision`)", body = ErrorBody),
    ))]
async fn edit_reply(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(MessagePath {
        review_id,
        comment_id,
        message_id,
    }): ApiPath<MessagePath>,
    ApiJson(input): ApiJson<TextEdit>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .edit_reply(&actor, &review_id, &comment_id, &message_id, input)
        .await?;
    Ok(Json(written).into_response())
}

/// Cancel a reply while it is provisional (its author, within the undo window).
#[utoipa::path(delete, path = "/api/reviews/{review_id}/comments/{comment_id}/thread/{message_id}",
    tag = "comments", operation_id = "cancelReply", params(MessagePath, BaseRevision),
    responses(
        (status = 200, description = "Cancelled", body = RevisionBody),
        (status = 409, description = "`comments revision conflict` (with `currentRevision`), \
            `thread revision conflict` (with `currentThreadRevision`) or \
            `invalid_transition` (no longer provisional)", body = ErrorBody),
    ))]
async fn cancel_reply(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(MessagePath {
        review_id,
        comment_id,
        message_id,
    }): ApiPath<MessagePath>,
    ApiQuery(query): ApiQuery<BaseRevision>,
) -> Result<Response, ApiError> {
    let revision = state
        .service
        .cancel_reply(
            &actor,
            &review_id,
            &comment_id,
            &message_id,
            WriteBase::of(query.base_comments_revision, query.base_thread_revision),
        )
        .await?;
    Ok(Json(RevisionBody {
        comments_revision: revision,
    })
    .into_response())
}

/// Resolve (`closed`) or reopen (`open`) a comment; the change joins its `statusEvents`.
#[utoipa::path(post, path = "/api/reviews/{review_id}/comments/{comment_id}/status-events",
    tag = "comments", operation_id = "setCommentStatus", params(CommentPath), request_body = StatusChange,
    responses(
        (status = 201, description = "Written", body = StatusWritten),
        (status = 409, description = "`comments revision conflict` (with `currentRevision`), \
            `thread revision conflict` (with `currentThreadRevision`) or \
            `invalid_transition` (already in that status)", body = ErrorBody),
    ))]
async fn set_status(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(CommentPath {
        review_id,
        comment_id,
    }): ApiPath<CommentPath>,
    ApiJson(input): ApiJson<StatusChange>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .set_status(&actor, &review_id, &comment_id, input)
        .await?;
    Ok((StatusCode::CREATED, Json(written)).into_response())
}
