//! Full-text search over the comments and documents the caller can see.

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use docreview_api::{CommentResults, CommentSearchQuery, DocResults, DocSearchQuery};
use docreview_core::access::Operation;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiQuery, Caller};
use crate::routes::allow;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::Read, routes!(comments)))
        .routes(allow(Operation::Read, routes!(docs)))
}

/// Search the comments and replies of every document the caller can see.
#[utoipa::path(get, path = "/api/search/comments", tag = "search", operation_id = "searchComments",
    params(CommentSearchQuery),
    responses((status = 200, description = "Matches, best first, with marked snippets", body = CommentResults)))]
async fn comments(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiQuery(query): ApiQuery<CommentSearchQuery>,
) -> Result<Response, ApiError> {
    let results = state.service.search_comments(&actor, query).await?;
    Ok(Json(results).into_response())
}

/// Search the titles and text of every document the caller can see.
#[utoipa::path(get, path = "/api/search/docs", tag = "search", operation_id = "searchDocs",
    params(DocSearchQuery),
    responses((status = 200, description = "Matches, best first, with marked snippets", body = DocResults)))]
async fn docs(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiQuery(query): ApiQuery<DocSearchQuery>,
) -> Result<Response, ApiError> {
    let results = state.service.search_docs(&actor, query).await?;
    Ok(Json(results).into_response())
}
