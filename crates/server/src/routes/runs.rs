//! Agent runs and the comments written in them.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{patch, post};
use axum::{Json, Router};
use docreview_core::service::{FinishRun, NewComment, StartRun};

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, Authorized, op};
use crate::routes::RunBody;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/reviews/{review_id}/ai-review-runs", post(start))
        .route(
            "/api/reviews/{review_id}/ai-review-runs/{run_id}",
            patch(finish),
        )
        .route(
            "/api/reviews/{review_id}/ai-review-runs/{run_id}/comments",
            post(comment),
        )
}

async fn start(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Run>,
    ApiPath(review_id): ApiPath<String>,
    ApiJson(input): ApiJson<StartRun>,
) -> Result<Response, ApiError> {
    let run = state.service.start_run(&actor, &review_id, input).await?;
    Ok((StatusCode::CREATED, Json(RunBody { run })).into_response())
}

async fn finish(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Run>,
    ApiPath((review_id, run_id)): ApiPath<(String, String)>,
    ApiJson(input): ApiJson<FinishRun>,
) -> Result<Response, ApiError> {
    let run = state
        .service
        .finish_run(&actor, &review_id, &run_id, input)
        .await?;
    Ok(Json(RunBody { run }).into_response())
}

async fn comment(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Run>,
    ApiPath((review_id, run_id)): ApiPath<(String, String)>,
    ApiJson(input): ApiJson<NewComment>,
) -> Result<Response, ApiError> {
    let written = state
        .service
        .add_run_comment(&actor, &review_id, &run_id, input)
        .await?;
    Ok((StatusCode::CREATED, Json(written)).into_response())
}
