//! The review workflow (DESIGN.md §8.4): reviewers, decisions, finalizing and reopening,
//! assigning a thread, reactions. Personal tokens need the `docs` scope for all of them.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use docreview_api::{
    ApplySuggestions, AssigneeChange, CommentWritten, DecisionWritten, NewDecision, NewReviewer,
    ReactionsBody, SuggestionsApplied, WorkflowBody,
};
use docreview_core::access::Operation;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ApiJson, ApiPath, Caller};
use crate::routes::{CommentPath, ReviewPath, allow};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::Workflow, routes!(add_reviewer)))
        .routes(allow(Operation::Workflow, routes!(remove_reviewer)))
        .routes(allow(Operation::Workflow, routes!(decide)))
        .routes(allow(Operation::Workflow, routes!(finalize)))
        .routes(allow(Operation::Workflow, routes!(reopen)))
        .routes(allow(Operation::Workflow, routes!(assign)))
        .routes(allow(Operation::Workflow, routes!(react, unreact)))
        .routes(allow(
            Operation::Workflow,
            routes!(react_reply, unreact_reply),
        ))
        .routes(allow(Operation::Deliver, routes!(apply_suggestions)))
}

/// `{reviewId}/reviewers/{userId}` in a path.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct ReviewerPath {
    /// The document's id.
    review_id: String,
    /// The reviewer's user id.
    user_id: String,
}

/// `{reviewId}/comments/{commentId}/reactions/{emoji}` in a path.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct CommentReactionPath {
    /// The document's id.
    review_id: String,
    /// The comment's id.
    comment_id: String,
    /// One of `+1 -1 laugh confused heart hooray rocket eyes`.
    emoji: String,
}

/// `{reviewId}/comments/{commentId}/thread/{messageId}/reactions/{emoji}` in a path.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct ReplyReactionPath {
    /// The document's id.
    review_id: String,
    /// The comment's id.
    comment_id: String,
    /// The reply's id.
    message_id: String,
    /// One of `+1 -1 laugh confused heart hooray rocket eyes`.
    emoji: String,
}

/// Ask someone to review the document (editor or owner). They must be able to read it; asking
/// again changes the due date. They are notified (`review_requested`).
#[utoipa::path(post, path = "/api/reviews/{review_id}/reviewers", tag = "workflow",
    operation_id = "addReviewer", params(ReviewPath), request_body = NewReviewer,
    responses(
        (status = 201, description = "Asked; the workflow after the change", body = WorkflowBody),
        (status = 400, description = "`invalid_request`: not an active member, cannot read the \
            document, or a malformed `dueAt`", body = ErrorBody),
    ))]
async fn add_reviewer(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiJson(input): ApiJson<NewReviewer>,
) -> Result<Response, ApiError> {
    let workflow = state
        .service
        .add_reviewer(&actor, &review_id, input)
        .await?;
    Ok((StatusCode::CREATED, Json(WorkflowBody { workflow })).into_response())
}

/// Take a review request back (editor or owner), or decline one's own.
#[utoipa::path(delete, path = "/api/reviews/{review_id}/reviewers/{user_id}", tag = "workflow",
    operation_id = "removeReviewer", params(ReviewerPath),
    responses(
        (status = 200, description = "Removed; the workflow after the change", body = WorkflowBody),
        (status = 404, description = "`not_found`: no such document, or not a reviewer", body = ErrorBody),
    ))]
async fn remove_reviewer(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewerPath { review_id, user_id }): ApiPath<ReviewerPath>,
) -> Result<Response, ApiError> {
    let workflow = state
        .service
        .remove_reviewer(&actor, &review_id, &user_id)
        .await?;
    Ok(Json(WorkflowBody { workflow }).into_response())
}

/// Decide on the document (anyone who can read it): the caller's decision on the latest
/// version replaces their earlier one. The owner and editors are notified (`decision`).
#[utoipa::path(post, path = "/api/reviews/{review_id}/decisions", tag = "workflow",
    operation_id = "decide", params(ReviewPath), request_body = NewDecision,
    responses(
        (status = 201, description = "Recorded", body = DecisionWritten),
        (status = 409, description = "`stale_target_version` (with `latestVersionId`)", body = ErrorBody),
    ))]
async fn decide(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiJson(input): ApiJson<NewDecision>,
) -> Result<Response, ApiError> {
    let written = state.service.decide(&actor, &review_id, input).await?;
    Ok((StatusCode::CREATED, Json(written)).into_response())
}

/// Finalize the review (editor or owner): only with every comment closed. Until it is
/// reopened it refuses comments, replies, edits, status changes, assignment, runs and versions
/// with 409 `review_finalized`.
#[utoipa::path(post, path = "/api/reviews/{review_id}/finalize", tag = "workflow",
    operation_id = "finalizeReview", params(ReviewPath),
    responses(
        (status = 200, description = "Finalized", body = WorkflowBody),
        (status = 409, description = "`open_comments_remain` (with `openCount`), or \
            `invalid_transition` (already finalized)", body = ErrorBody),
    ))]
async fn finalize(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
) -> Result<Response, ApiError> {
    let workflow = state.service.finalize(&actor, &review_id).await?;
    Ok(Json(WorkflowBody { workflow }).into_response())
}

/// Reopen a finalized review (editor or owner).
#[utoipa::path(post, path = "/api/reviews/{review_id}/reopen", tag = "workflow",
    operation_id = "reopenReview", params(ReviewPath),
    responses(
        (status = 200, description = "Reopened", body = WorkflowBody),
        (status = 409, description = "`invalid_transition` (not finalized)", body = ErrorBody),
    ))]
async fn reopen(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
) -> Result<Response, ApiError> {
    let workflow = state.service.reopen(&actor, &review_id).await?;
    Ok(Json(WorkflowBody { workflow }).into_response())
}

/// Hand the thread to someone who can read the document, or to nobody (`{"email": null}`).
/// Raises `commentsRevision`; the assignee is notified (`assigned`).
#[utoipa::path(put, path = "/api/reviews/{review_id}/comments/{comment_id}/assignee",
    tag = "workflow", operation_id = "assignComment", params(CommentPath),
    request_body = AssigneeChange,
    responses(
        (status = 200, description = "Written", body = CommentWritten),
        (status = 400, description = "`invalid_request`: not an active member, or cannot read \
            the document", body = ErrorBody),
        (status = 409, description = "`comments revision conflict` (with `currentRevision`) or \
            `review_finalized`", body = ErrorBody),
    ))]
async fn assign(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(CommentPath {
        review_id,
        comment_id,
    }): ApiPath<CommentPath>,
    ApiJson(input): ApiJson<AssigneeChange>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .set_assignee(&actor, &review_id, &comment_id, input)
        .await?;
    Ok(Json(written).into_response())
}

/// Apply suggestions (editor or owner; DESIGN.md §8.5): one new version whose HTML is the base
/// version's bytes with exactly the named comments' passages changed. The applied comments are
/// closed (a status event with `reason: "applied"` and the `versionId`); the others are
/// re-anchored as for any new version. Nothing is written on a refusal.
#[utoipa::path(post, path = "/api/reviews/{review_id}/suggestions/apply", tag = "workflow",
    operation_id = "applySuggestions", params(ReviewPath), request_body = ApplySuggestions,
    responses(
        (status = 201, description = "The new version, with the document as it now stands",
            body = SuggestionsApplied),
        (status = 400, description = "`not_a_suggestion` (a comment carries none), or \
            `invalid_request` (a passage the splice cannot change in the source)", body = ErrorBody),
        (status = 404, description = "`not_found`: no such document or comment", body = ErrorBody),
        (status = 409, description = "`stale_target_version` (with `latestVersionId`), \
            `suggestion_outdated`, `suggestions_overlap`, `suggestion_closed` or \
            `review_finalized`", body = ErrorBody),
    ))]
async fn apply_suggestions(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiJson(input): ApiJson<ApplySuggestions>,
) -> Result<Response, ApiError> {
    let applied = state
        .service
        .apply_suggestions(&actor, &review_id, input)
        .await?;
    Ok((StatusCode::CREATED, Json(applied)).into_response())
}

/// React to a comment (idempotent). Does not raise `commentsRevision`; sent live as a
/// `reactions` event.
#[utoipa::path(put, path = "/api/reviews/{review_id}/comments/{comment_id}/reactions/{emoji}",
    tag = "workflow", operation_id = "reactToComment", params(CommentReactionPath),
    responses(
        (status = 200, description = "The comment's reactions", body = ReactionsBody),
        (status = 400, description = "`invalid_request`: not one of the eight emoji", body = ErrorBody),
    ))]
async fn react(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(path): ApiPath<CommentReactionPath>,
) -> Result<Response, ApiError> {
    comment_reaction(&state, &actor, path, true).await
}

/// Take one's reaction back from a comment (idempotent).
#[utoipa::path(delete, path = "/api/reviews/{review_id}/comments/{comment_id}/reactions/{emoji}",
    tag = "workflow", operation_id = "unreactToComment", params(CommentReactionPath),
    responses(
        (status = 200, description = "The comment's reactions", body = ReactionsBody),
        (status = 400, description = "`invalid_request`: not one of the eight emoji", body = ErrorBody),
    ))]
async fn unreact(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(path): ApiPath<CommentReactionPath>,
) -> Result<Response, ApiError> {
    comment_reaction(&state, &actor, path, false).await
}

async fn comment_reaction(
    state: &AppState,
    actor: &docreview_core::access::Actor,
    path: CommentReactionPath,
    on: bool,
) -> Result<Response, ApiError> {
    let reactions = state
        .service
        .react(
            actor,
            &path.review_id,
            &path.comment_id,
            None,
            &path.emoji,
            on,
        )
        .await?;
    Ok(Json(reactions).into_response())
}

/// React to a reply (idempotent). Does not raise `commentsRevision`; sent live as a
/// `reactions` event.
#[utoipa::path(put,
    path = "/api/reviews/{review_id}/comments/{comment_id}/thread/{message_id}/reactions/{emoji}",
    tag = "workflow", operation_id = "reactToReply", params(ReplyReactionPath),
    responses(
        (status = 200, description = "The reply's reactions", body = ReactionsBody),
        (status = 400, description = "`invalid_request`: not one of the eight emoji", body = ErrorBody),
    ))]
async fn react_reply(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(path): ApiPath<ReplyReactionPath>,
) -> Result<Response, ApiError> {
    reply_reaction(&state, &actor, path, true).await
}

/// Take one's reaction back from a reply (idempotent).
#[utoipa::path(delete,
    path = "/api/reviews/{review_id}/comments/{comment_id}/thread/{message_id}/reactions/{emoji}",
    tag = "workflow", operation_id = "unreactToReply", params(ReplyReactionPath),
    responses(
        (status = 200, description = "The reply's reactions", body = ReactionsBody),
        (status = 400, description = "`invalid_request`: not one of the eight emoji", body = ErrorBody),
    ))]
async fn unreact_reply(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(path): ApiPath<ReplyReactionPath>,
) -> Result<Response, ApiError> {
    reply_reaction(&state, &actor, path, false).await
}

async fn reply_reaction(
    state: &AppState,
    actor: &docreview_core::access::Actor,
    path: ReplyReactionPath,
    on: bool,
) -> Result<Response, ApiError> {
    let reactions = state
        .service
        .react(
            actor,
            &path.review_id,
            &path.comment_id,
            Some(&path.message_id),
            &path.emoji,
            on,
        )
        .await?;
    Ok(Json(reactions).into_response())
}
