//! Reviews: list, create, read, heading structure, version bundles.

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use docreview_core::service::{CreateReview, ListQuery};
use serde::Deserialize;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, ApiQuery, Authorized, op};
use crate::headers::Policy;
use crate::routes::ReviewBody;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/reviews", get(list).post(create))
        .route("/api/reviews/{review_id}", get(read))
        .route("/api/reviews/{review_id}/dom-context", get(dom_context))
        .route(
            "/api/reviews/{review_id}/versions/{version_id}/bundle",
            get(bundle),
        )
}

async fn list(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Read>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Response, ApiError> {
    let list = state.service.list_reviews(&actor, query).await?;
    Ok(Json(list).into_response())
}

async fn create(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Deliver>,
    ApiJson(input): ApiJson<CreateReview>,
) -> Result<Response, ApiError> {
    let review = state.service.create_review(&actor, input).await?;
    Ok((StatusCode::CREATED, Json(ReviewBody { review })).into_response())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReadQuery {
    #[serde(default)]
    include_deleted: bool,
}

async fn read(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Read>,
    ApiPath(review_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<ReadQuery>,
) -> Result<Response, ApiError> {
    let body = state
        .service
        .review_json(&actor, &review_id, query.include_deleted)
        .await?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DomContextQuery {
    version_id: Option<String>,
}

async fn dom_context(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Read>,
    ApiPath(review_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<DomContextQuery>,
) -> Result<Response, ApiError> {
    let context = state
        .service
        .dom_context(&actor, &review_id, query.version_id.as_deref())
        .await?;
    Ok(Json(context).into_response())
}

/// The uploaded HTML, byte for byte, sandboxed: its scripts never run with our origin.
async fn bundle(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Read>,
    ApiPath((review_id, version_id)): ApiPath<(String, String)>,
) -> Result<Response, ApiError> {
    let html = state
        .service
        .bundle(&actor, &review_id, &version_id)
        .await?;
    let mut response = html.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response.extensions_mut().insert(Policy::Bundle);
    Ok(response)
}
