//! Agent runs and the comments written in them.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use docreview_api::{
    CommentWritten, FinishRun, NewComment, NewRunComments, RunCommentsWritten, StartRun,
};
use docreview_core::access::Operation;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ApiJson, ApiPath, Caller, ItemsJson};
use crate::routes::{ReviewPath, RunBody, allow};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::Run, routes!(start)))
        .routes(allow(Operation::Run, routes!(finish)))
        .routes(allow(Operation::Run, routes!(comment)))
        .routes(allow(Operation::Run, routes!(comment_batch)))
}

/// `{reviewId}/ai-review-runs/{runId}` in a path.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct RunPath {
    /// The document's id.
    review_id: String,
    /// The run's id.
    run_id: String,
}

/// Start a review run on the latest version; its comments stay provisional until it completes.
#[utoipa::path(post, path = "/api/reviews/{review_id}/ai-review-runs", tag = "runs",
    operation_id = "startRun", params(ReviewPath), request_body = StartRun,
    responses(
        (status = 201, description = "Started", body = RunBody),
        (status = 409, description = "`stale_target_version` (with `latestVersionId`)", body = ErrorBody),
    ))]

async fn start(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiJson(input): ApiJson<StartRun>,
) -> Result<Response, ApiError> {
    let run = state.service.start_run(&actor, &review_id, input).await?;
    Ok((StatusCode::CREATED, Json(RunBody { run })).into_response())
}

/// Complete (with a summary), fail or cancel a run.
#[utoipa::path(patch, path = "/api/reviews/{review_id}/ai-review-runs/{run_id}", tag = "runs",
    operation_id = "finishRun", params(RunPath), request_body = FinishRun,
    responses(
        (status = 200, description = "Finished", body = RunBody),
        (status = 409, description = "`invalid_transition`: the run is not running", body = ErrorBody),
    ))]
async fn finish(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(RunPath { review_id, run_id }): ApiPath<RunPath>,
    ApiJson(input): ApiJson<FinishRun>,
) -> Result<Response, ApiError> {
    let run = state
        .service
        .finish_run(&actor, &review_id, &run_id, input)
        .await?;
    Ok(Json(RunBody { run }).into_response())
}

/// Write a comment in a run; it is provisional until the run completes.
#[utoipa::path(post, path = "/api/reviews/{review_id}/ai-review-runs/{run_id}/comments", tag = "runs",
    operation_id = "addRunComment", params(RunPath), request_body = NewComment,
    responses(
        (status = 201, description = "Written", body = CommentWritten),
        (status = 409, description = "`comments revision conflict` (with `currentRevision`), \
            `stale_target_version` (with `latestVersionId`) or `invalid_transition` (the run is \
            not running)", body = ErrorBody),
    ))]
async fn comment(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(RunPath { review_id, run_id }): ApiPath<RunPath>,
    ApiJson(input): ApiJson<NewComment>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .add_run_comment(&actor, &review_id, &run_id, input)
        .await?;
    Ok((StatusCode::CREATED, Json(written)).into_response())
}

/// Write up to 200 comments in a run in one step (one `commentsRevision` bump). Items that fail
/// (a quote not found or occurring more than once with nothing to say which, a bad category or
/// body, NUL in any text, an item that is not a comment at all) come back in `failed`, by index,
/// with the passages a quote may have meant; the others are written, unless `atomic` is set.
#[utoipa::path(post, path = "/api/reviews/{review_id}/ai-review-runs/{run_id}/comments/batch",
    tag = "runs", operation_id = "addRunComments", params(RunPath), request_body = NewRunComments,
    responses(
        (status = 201, description = "At least one comment written", body = RunCommentsWritten),
        (status = 200, description = "Nothing written: every item failed", body = RunCommentsWritten),
        (status = 400, description = "`invalid_request`; with `atomic`, the failed items are in \
            `failed` and nothing was written", body = ErrorBody),
        (status = 409, description = "`comments revision conflict` (with `currentRevision`), \
            `stale_target_version` (with `latestVersionId`) or `invalid_transition` (the run is \
            not running)", body = ErrorBody),
    ))]
async fn comment_batch(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(RunPath { review_id, run_id }): ApiPath<RunPath>,
    ItemsJson(input): ItemsJson<NewRunComments>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .add_run_comments(&actor, &review_id, &run_id, input)
        .await?;
    let status = if written.written.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((status, Json(written)).into_response())
}
