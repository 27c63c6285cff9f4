//! Full-text search over the comments and documents the caller can see.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use docreview_core::service::{CommentSearchQuery, DocSearchQuery};

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiQuery, Authorized, op};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/search/comments", get(comments))
        .route("/api/search/docs", get(docs))
}

async fn comments(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Read>,
    ApiQuery(query): ApiQuery<CommentSearchQuery>,
) -> Result<Response, ApiError> {
    let results = state.service.search_comments(&actor, query).await?;
    Ok(Json(results).into_response())
}

async fn docs(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Read>,
    ApiQuery(query): ApiQuery<DocSearchQuery>,
) -> Result<Response, ApiError> {
    let results = state.service.search_docs(&actor, query).await?;
    Ok(Json(results).into_response())
}
