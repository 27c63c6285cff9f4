//! Reviews: list, create, read, heading structure, version bundles.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use docreview_api::{
    CreateReview, DomContext, ExportQuery, FindQuery, FindResults, ListQuery, ReviewList,
};
use docreview_core::access::Operation;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Caller};
use crate::headers::Policy;
use crate::rendered::ReviewJson;
use crate::routes::{ReviewBody, ReviewPath, allow};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::Read, routes!(list)))
        .routes(allow(Operation::Deliver, routes!(create)))
        .routes(allow(Operation::Read, routes!(read)))
        .routes(allow(Operation::Read, routes!(dom_context)))
        .routes(allow(Operation::Read, routes!(find)))
        .routes(allow(Operation::Read, routes!(bundle)))
        .routes(allow(Operation::Read, routes!(export)))
}

/// List the documents the caller can see, newest activity first.
#[utoipa::path(get, path = "/api/reviews", tag = "reviews", operation_id = "listReviews",
    params(ListQuery),
    responses((status = 200, description = "A page of documents", body = ReviewList)))]
async fn list(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Response, ApiError> {
    let list = state.service.list_reviews(&actor, query).await?;
    Ok(Json(list).into_response())
}

/// Create a document from JSON.
#[utoipa::path(post, path = "/api/reviews", tag = "reviews", operation_id = "createReview",
    request_body = CreateReview,
    responses(
        (status = 201, description = "Created", body = ReviewBody, links(
            ("read" = (operation_id = "readReview", parameters(("review_id" = "$response.body#/review/reviewId")))),
        )),
        (status = 409, description = "`project_not_in_snapshot`, `project_conflict` or `already_exists`", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiJson(input): ApiJson<CreateReview>,
) -> Result<Response, ApiError> {
    let review = state.service.create_review(&actor, input).await?;
    Ok((StatusCode::CREATED, Json(ReviewBody { review })).into_response())
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ReadQuery {
    /// Include cancelled comments and replies (with `deletedTs`).
    #[serde(default)]
    include_deleted: bool,
}

/// Read a document with its versions, comments and runs. The answer carries an `ETag`; sent
/// back in `If-None-Match`, an unchanged document answers 304 without a body.
#[utoipa::path(get, path = "/api/reviews/{review_id}", tag = "reviews", operation_id = "readReview",
    params(ReviewPath, ReadQuery,
        ("If-None-Match" = Option<String>, Header, description = "The `ETag` of an earlier answer")),
    responses(
        (status = 200, description = "The document", body = ReviewBody,
            headers(("ETag" = String, description = "This answer's entity tag"))),
        (status = 304, description = "Unchanged since the answer whose `ETag` was sent",
            headers(("ETag" = String, description = "The current entity tag"))),
    ))]
async fn read(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiQuery(query): ApiQuery<ReadQuery>,
    request: HeaderMap,
) -> Result<Response, ApiError> {
    let json = if query.include_deleted {
        // Cancelled items are shown to few callers, rarely: rendered each time, not kept.
        let review = state.service.get_review(&actor, &review_id, true).await?;
        ReviewJson::of(review)
    } else {
        let reading = state.service.review_reading(&actor, &review_id).await?;
        state.reviews.answer(&reading)
    }
    .map_err(|error| ApiError::from(docreview_core::Error::Internal(Box::new(error))))?;
    let mut response = if matches_etag(&request, &json.etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let json_type = HeaderValue::from_static("application/json");
        ([(header::CONTENT_TYPE, json_type)], json.body).into_response()
    };
    let headers = response.headers_mut();
    if let Ok(etag) = HeaderValue::from_str(&json.etag) {
        headers.insert(header::ETAG, etag);
    }
    // Clients may keep it, but must ask again (with the tag) before using it.
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache"),
    );
    Ok(response)
}

/// Whether `If-None-Match` names `etag` (weak comparison, RFC 9110 §13.1.2) or is `*`.
fn matches_etag(request: &HeaderMap, etag: &str) -> bool {
    request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.trim_start_matches("W/") == etag)
}

/// A phrase's occurrences in a version's text (case and white space not compared), in text
/// order, each with its section, the text around it, and a locator (`quote`, `position`,
/// `sectionId`) that anchors a comment to exactly it.
#[utoipa::path(get, path = "/api/reviews/{review_id}/find", tag = "reviews",
    operation_id = "findInReview", params(ReviewPath, FindQuery),
    responses(
        (status = 200, description = "A page of occurrences", body = FindResults),
        (status = 414, description = "`uri_too_long`: a request target over 16 KiB (longer than any valid query)", body = ErrorBody),
    ))]
async fn find(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiQuery(query): ApiQuery<FindQuery>,
) -> Result<Response, ApiError> {
    let found = state.service.find(&actor, &review_id, query).await?;
    Ok(Json(found).into_response())
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct DomContextQuery {
    /// A version of the document (default: the latest).
    version_id: Option<String>,
}

/// The heading sections of a version, with their text ranges.
#[utoipa::path(get, path = "/api/reviews/{review_id}/dom-context", tag = "reviews",
    operation_id = "domContext", params(ReviewPath, DomContextQuery),
    responses((status = 200, description = "The sections", body = DomContext)))]
async fn dom_context(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiQuery(query): ApiQuery<DomContextQuery>,
) -> Result<Response, ApiError> {
    let context = state
        .service
        .dom_context(&actor, &review_id, query.version_id.as_deref())
        .await?;
    Ok(Json(context).into_response())
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct VersionPath {
    /// The document's id.
    review_id: String,
    /// The version's id.
    version_id: String,
}

/// The uploaded HTML, byte for byte, sandboxed: its scripts never run with our origin.
#[utoipa::path(get, path = "/api/reviews/{review_id}/versions/{version_id}/bundle", tag = "reviews",
    operation_id = "versionBundle", params(VersionPath),
    responses((status = 200, description = "The version's HTML, served with `Content-Security-Policy: sandbox`",
        body = String, content_type = "text/html")))]
async fn bundle(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(VersionPath {
        review_id,
        version_id,
    }): ApiPath<VersionPath>,
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

/// The review written out: `w3c` (a W3C Web Annotation `AnnotationCollection`), `native`
/// (`docreview-export/1`, lossless: every version's HTML and the discussion with authors by
/// email; editors and owners only), `csv` (a row per comment and reply in document order) or
/// `markdown` (a readable report). Served as an attachment.
#[utoipa::path(get, path = "/api/reviews/{review_id}/export", tag = "reviews",
    operation_id = "exportReview", params(ReviewPath, ExportQuery),
    responses(
        (status = 200, description = "The export", content(
            (serde_json::Value = "application/ld+json"), (serde_json::Value = "application/json"),
            (String = "text/csv"), (String = "text/markdown"))),
        (status = 400, description = "`invalid_request`: no format, or an unknown one", body = ErrorBody),
        (status = 403, description = "`forbidden`: `native` needs the editor role", body = ErrorBody),
    ))]
async fn export(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    ApiQuery(query): ApiQuery<ExportQuery>,
) -> Result<Response, ApiError> {
    let export = state
        .service
        .export_review(&actor, &review_id, query.format.as_deref())
        .await?;
    let mut response = export.body.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(export.content_type),
    );
    // The file name is the review's id and an extension: ASCII, no quotes.
    if let Ok(value) =
        HeaderValue::from_str(&format!("attachment; filename=\"{}\"", export.file_name))
    {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    Ok(response)
}
