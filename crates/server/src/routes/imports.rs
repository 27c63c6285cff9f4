//! HTML uploads (multipart): a new document, or a new or replaced version of one.

use axum::Json;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use docreview_core::access::Operation;
use docreview_core::service::{HtmlUpload, VersionMode, VersionUpload};

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ApiPath, Caller, unsupported_media_type};
use crate::routes::{ReviewBody, ReviewPath, allow};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::Deliver, routes!(import_document)))
        .routes(allow(Operation::Deliver, routes!(import_version)))
}

/// The form of a new document's upload.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // Describes the multipart form `Form` reads.
struct DocumentUpload {
    /// The HTML file.
    #[schema(value_type = String, format = Binary, content_media_type = "text/html")]
    file: Vec<u8>,
    /// The title (default: the HTML's `<title>`, else its first `<h1>`, else the file name).
    title: Option<String>,
    /// The first version's label.
    label: Option<String>,
    /// A project code to link the document to (required for external members).
    project: Option<String>,
    /// Tags, comma-separated (the field may repeat).
    tags: Option<String>,
}

/// The form of a new or replaced version.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // Describes the multipart form `Form` reads.
struct VersionUploadForm {
    /// The HTML file.
    #[schema(value_type = String, format = Binary, content_media_type = "text/html")]
    file: Vec<u8>,
    /// The version's label.
    label: Option<String>,
    /// `add_version` (default) or `replace` (the latest version's body).
    #[schema(pattern = "^(add_version|replace)$")]
    mode: Option<String>,
    /// The version the client last read; another latest version gives 409 `stale_target_version`.
    base_version_id: Option<String>,
}

const DOCUMENT_FIELDS: &[&str] = &["file", "title", "label", "project", "tags"];
const VERSION_FIELDS: &[&str] = &["file", "label", "mode", "baseVersionId"];

/// Upload an HTML file as a new document.
#[utoipa::path(post, path = "/api/reviews/import-html", tag = "reviews", operation_id = "importHtml",
    request_body(content = DocumentUpload, content_type = "multipart/form-data"),
    responses(
        (status = 201, description = "Created", body = ReviewBody, links(
            ("read" = (operation_id = "readReview", parameters(("review_id" = "$response.body#/review/reviewId")))),
        )),
        (status = 409, description = "`project_not_in_snapshot` or `project_conflict`", body = ErrorBody),
    ))]
async fn import_document(
    State(state): State<AppState>,
    Caller(actor): Caller,
    request: Request,
) -> Result<Response, ApiError> {
    let mut form = Form::read(request, DOCUMENT_FIELDS).await?;
    let (html, file_name) = form.take_file()?;
    let tags = form
        .all("tags")
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|tag| !tag.is_empty())
        .map(str::to_string)
        .collect();
    let upload = HtmlUpload {
        html,
        file_name,
        title: form.text("title"),
        label: form.text("label"),
        project: form.text("project"),
        tags,
    };
    let review = state.service.import_html(&actor, upload).await?;
    Ok((StatusCode::CREATED, Json(ReviewBody { review })).into_response())
}

/// Upload an HTML file as a new version of a document, or as the latest version's new body;
/// comments are carried onto it.
#[utoipa::path(post, path = "/api/reviews/{review_id}/import-html", tag = "reviews", operation_id = "importVersion",
    params(ReviewPath),
    request_body(content = VersionUploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 201, description = "A version was added", body = ReviewBody),
        (status = 200, description = "The latest version's body was replaced", body = ReviewBody),
        (status = 409, description = "`stale_target_version` (with `latestVersionId`)", body = ErrorBody),
    ))]
async fn import_version(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    request: Request,
) -> Result<Response, ApiError> {
    let mut form = Form::read(request, VERSION_FIELDS).await?;
    let mode = match form.text("mode") {
        None => VersionMode::AddVersion,
        Some(text) => VersionMode::parse(&text).ok_or_else(|| {
            ApiError::invalid(format!("mode must be add_version or replace, not `{text}`"))
        })?,
    };
    let (html, _) = form.take_file()?;
    let upload = VersionUpload {
        html,
        label: form.text("label"),
        mode,
        base_version_id: form.text("baseVersionId"),
    };
    let review = state
        .service
        .import_version(&actor, &review_id, upload)
        .await?;
    let status = if mode == VersionMode::AddVersion {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(ReviewBody { review })).into_response())
}

/// A parsed multipart form: the file's bytes and the text fields.
struct Form {
    file: Option<(Vec<u8>, Option<String>)>,
    fields: Vec<(String, String)>,
}

impl Form {
    async fn read(request: Request, allowed: &[&str]) -> Result<Form, ApiError> {
        let mut multipart = Multipart::from_request(request, &()).await.map_err(|_| {
            unsupported_media_type("send the upload as multipart/form-data with a `file` field")
        })?;
        let mut form = Form {
            file: None,
            fields: Vec::new(),
        };
        loop {
            let field = match multipart.next_field().await {
                Ok(Some(field)) => field,
                Ok(None) => break,
                Err(error) => return Err(multipart_error(&error)),
            };
            let name = field.name().unwrap_or_default().to_string();
            if !allowed.contains(&name.as_str()) {
                return Err(ApiError::invalid(format!(
                    "unknown form field `{name}`; this endpoint accepts {}",
                    allowed.join(", ")
                )));
            }
            if name == "file" {
                if form.file.is_some() {
                    return Err(ApiError::invalid("send exactly one `file` field"));
                }
                let file_name = field.file_name().map(str::to_string);
                let bytes = field
                    .bytes()
                    .await
                    .map_err(|error| multipart_error(&error))?;
                form.file = Some((bytes.to_vec(), file_name));
            } else {
                let bytes = field
                    .bytes()
                    .await
                    .map_err(|error| multipart_error(&error))?;
                let text = String::from_utf8(bytes.to_vec()).map_err(|_| {
                    ApiError::invalid(format!("form field `{name}` must be UTF-8 text"))
                })?;
                form.fields.push((name, text));
            }
        }
        Ok(form)
    }

    /// Takes the uploaded file out of the form (it may be megabytes; never copied).
    fn take_file(&mut self) -> Result<(Vec<u8>, Option<String>), ApiError> {
        self.file
            .take()
            .ok_or_else(|| ApiError::invalid("the form must include a `file` field with the HTML"))
    }

    /// The last non-empty value of a text field.
    fn text(&self, name: &str) -> Option<String> {
        self.all(name)
            .filter(|value| !value.trim().is_empty())
            .last()
            .map(str::to_string)
    }

    fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.fields
            .iter()
            .filter(move |(field, _)| field == name)
            .map(|(_, value)| value.as_str())
    }
}

fn multipart_error(error: &axum::extract::multipart::MultipartError) -> ApiError {
    if error.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::BodyTooLarge("the upload is larger than this server accepts".into())
    } else {
        ApiError::invalid(format!("malformed multipart body: {}", error.body_text()))
    }
}
