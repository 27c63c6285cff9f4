//! A typed async client for the docreview API, on the wire types of `docreview-api`.
//!
//! ```no_run
//! # async fn example() -> Result<(), docreview_client::Error> {
//! use docreview_client::Client;
//! let client = Client::new("http://127.0.0.1:8080", Some("drp_…".into()))?;
//! let reviews = client.list_reviews(&Default::default()).await?;
//! # Ok(()) }
//! ```
//!
//! Refusals come back as [`Error::Api`] with the server's error body; the two revision
//! conflicts have their own variants carrying what a caller needs to retry. Idempotent calls
//! (`GET`, `PUT`, `DELETE`) are retried on 429 and 503, after `Retry-After` when the server sends
//! it. The token never appears in this crate's `Debug` output or errors.
//!
//! It speaks HTTP and HTTPS; HTTPS trusts what the operating system trusts (see [`tls`]).

mod events;
pub mod tls;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use docreview_api::secret::Secret;
use docreview_api::*;
use reqwest::{Method, RequestBuilder, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use docreview_api as api;
pub use events::EventStream;

/// How many times an idempotent call is sent at most.
const ATTEMPTS: u32 = 4;
/// The error codes of the two conflicts a caller resolves by reading again.
const REVISION_CONFLICT: &str = "comments revision conflict";
const STALE_VERSION: &str = "stale_target_version";
/// The longest wait between attempts, whatever `Retry-After` asks.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `409 comments revision conflict`: someone changed the comments since `base`.
    #[error("{message}")]
    RevisionConflict {
        current_revision: i64,
        message: String,
    },
    /// `409 stale_target_version`: the version is no longer the latest.
    #[error("{message}")]
    StaleVersion {
        latest_version_id: String,
        message: String,
    },
    /// Any other refusal, with the server's error body.
    #[error("{} ({}): {}", body.error, body.status, body.message)]
    Api { body: Box<ErrorBody> },
    /// The server could not be reached, or the connection failed.
    #[error("could not reach the server: {0}")]
    Transport(String),
    /// The answer was not what the API promises.
    #[error("unexpected answer from the server: {0}")]
    Decode(String),
    /// HTTPS cannot be used on this machine (no trusted certificates, typically).
    #[error(
        "cannot set up HTTPS: {0} (install the system's CA certificates, or name a PEM file of \
         trusted certificates in SSL_CERT_FILE)"
    )]
    Tls(String),
    /// The base URL is not usable.
    #[error("cannot use `{0}`: give the server's https:// or http:// address")]
    BaseUrl(String),
}

impl Error {
    /// The HTTP status of a refusal.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::RevisionConflict { .. } | Error::StaleVersion { .. } => Some(409),
            Error::Api { body } => Some(body.status),
            _ => None,
        }
    }

    /// The error code of a refusal (`not_found`, `unauthorized`, …).
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::RevisionConflict { .. } => Some(REVISION_CONFLICT),
            Error::StaleVersion { .. } => Some(STALE_VERSION),
            Error::Api { body } => Some(&body.error),
            _ => None,
        }
    }

    fn transport(error: reqwest::Error) -> Self {
        // `without_url`: the URL names no secret, but keep errors to what the caller needs.
        // The causes say what went wrong ("connection refused", "invalid peer certificate:
        // UnknownIssuer"); reqwest's own message alone is "error sending request".
        let error = error.without_url();
        let mut message = error.to_string();
        let mut cause = std::error::Error::source(&error);
        while let Some(inner) = cause {
            let text = inner.to_string();
            if !message.contains(&text) {
                message = format!("{message}: {text}");
            }
            cause = inner.source();
        }
        Error::Transport(message)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A client of one server, acting with one credential (or none).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<Secret>,
    /// The body of the last successful JSON answer, when [`Client::keeping_answers`] asked for
    /// it (shared by the client's clones).
    answers: Option<Arc<Mutex<Option<Vec<u8>>>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BaseRevision {
    #[serde(skip_serializing_if = "Option::is_none")]
    base_comments_revision: Option<i64>,
}

/// A file to upload as HTML.
#[derive(Debug, Clone)]
pub struct HtmlFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The fields of a new document's upload besides its file.
#[derive(Debug, Clone, Default)]
pub struct DocumentUpload {
    pub title: Option<String>,
    pub label: Option<String>,
    pub project: Option<String>,
    pub tags: Vec<String>,
}

/// The fields of a version upload besides its file.
#[derive(Debug, Clone)]
pub struct VersionUpload {
    pub mode: VersionMode,
    pub label: Option<String>,
    pub base_version_id: Option<String>,
}

impl Client {
    /// A client of the server at `base` (e.g. `http://127.0.0.1:8080`).
    pub fn new(base: &str, token: Option<Secret>) -> Result<Self> {
        let base = base.trim_end_matches('/').to_string();
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Err(Error::BaseUrl(base));
        }
        let tls = tls::client_config(base.starts_with("https://"))
            .map_err(|error| Error::Tls(error.to_string()))?;
        let http = reqwest::Client::builder()
            .user_agent(concat!("docreview-client/", env!("CARGO_PKG_VERSION")))
            .tls_backend_preconfigured(tls)
            .build()
            .map_err(Error::transport)?;
        Ok(Client {
            http,
            base,
            token,
            answers: None,
        })
    }

    /// This client, keeping the body of each successful JSON answer as the server sent it until
    /// [`Client::take_answer`] takes it: for a caller that shows the API's own JSON (the CLI's
    /// `--json`), with fields the typed views may not carry. One slot, for one call at a time.
    #[must_use]
    pub fn keeping_answers(mut self) -> Self {
        self.answers = Some(Arc::new(Mutex::new(None)));
        self
    }

    /// The body of the last successful JSON answer, as the server sent it (once; `None` when
    /// none was kept since).
    pub fn take_answer(&self) -> Option<Vec<u8>> {
        self.answers
            .as_ref()?
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The page where a signed-in person approves a command-line login for the PKCE
    /// `challenge`, naming the client and the scopes it asks for.
    pub fn cli_login_url(&self, challenge: &str, name: &str, scopes: &str) -> String {
        let page = format!("{}/cli-login", self.base);
        let query = [("challenge", challenge), ("name", name), ("scopes", scopes)];
        reqwest::Url::parse_with_params(&page, query).map_or(page, String::from)
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let builder = self.http.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(token) => builder.bearer_auth(token.expose()),
            None => builder,
        }
    }

    /// Sends a request (again, for idempotent methods, after 429 and 503) and reads the answer.
    async fn send<T: DeserializeOwned>(
        &self,
        make: impl Fn() -> RequestBuilder,
        method: &Method,
    ) -> Result<T> {
        let idempotent = matches!(*method, Method::GET | Method::PUT | Method::DELETE);
        let mut attempt = 1;
        loop {
            let response = make().send().await.map_err(Error::transport)?;
            let status = response.status();
            let retryable = status == StatusCode::TOO_MANY_REQUESTS
                || status == StatusCode::SERVICE_UNAVAILABLE;
            if idempotent && retryable && attempt < ATTEMPTS {
                let wait = retry_after(&response).unwrap_or(Duration::from_millis(200 << attempt));
                tokio::time::sleep(wait.min(MAX_BACKOFF)).await;
                attempt += 1;
                continue;
            }
            let bytes = response.bytes().await.map_err(Error::transport)?;
            if status.is_success() {
                // An answer without a body (204, 202) reads as `null`: `()` for the caller.
                let body: &[u8] = if bytes.is_empty() { b"null" } else { &bytes };
                let value = serde_json::from_slice(body)
                    .map_err(|error| Error::Decode(error.to_string()))?;
                if let Some(slot) = &self.answers {
                    *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(bytes.to_vec());
                }
                return Ok(value);
            }
            return Err(refusal(status, &bytes));
        }
    }

    async fn call<T: DeserializeOwned>(&self, method: Method, path: &str) -> Result<T> {
        self.send(|| self.request(method.clone(), path), &method)
            .await
    }

    async fn call_json<T: DeserializeOwned, B: Serialize>(
        &self,
        method: Method,
        path: &str,
        body: &B,
    ) -> Result<T> {
        self.send(|| self.request(method.clone(), path).json(body), &method)
            .await
    }

    async fn call_query<T: DeserializeOwned, Q: Serialize>(
        &self,
        method: Method,
        path: &str,
        query: &Q,
    ) -> Result<T> {
        self.send(|| self.request(method.clone(), path).query(query), &method)
            .await
    }

    // --- documents ---------------------------------------------------------------------------

    pub async fn list_reviews(&self, query: &ListQuery) -> Result<ReviewList> {
        self.call_query(Method::GET, "/api/reviews", query).await
    }

    pub async fn create_review(&self, input: &CreateReview) -> Result<ReviewView> {
        let body: ReviewBody = self.call_json(Method::POST, "/api/reviews", input).await?;
        Ok(body.review)
    }

    pub async fn review(&self, review_id: &str, include_deleted: bool) -> Result<ReviewView> {
        let path = format!("/api/reviews/{}", segment(review_id));
        let body: ReviewBody = self
            .call_query(Method::GET, &path, &[("includeDeleted", include_deleted)])
            .await?;
        Ok(body.review)
    }

    pub async fn dom_context(
        &self,
        review_id: &str,
        version_id: Option<&str>,
    ) -> Result<DomContext> {
        let path = format!("/api/reviews/{}/dom-context", segment(review_id));
        self.call_query(Method::GET, &path, &[("versionId", version_id)])
            .await
    }

    /// A phrase's occurrences in a version's text, a page at a time.
    pub async fn find(&self, review_id: &str, query: &FindQuery) -> Result<FindResults> {
        let path = format!("/api/reviews/{}/find", segment(review_id));
        self.call_query(Method::GET, &path, query).await
    }

    /// A version's HTML, as uploaded.
    pub async fn bundle(&self, review_id: &str, version_id: &str) -> Result<String> {
        let path = format!(
            "/api/reviews/{}/versions/{}/bundle",
            segment(review_id),
            segment(version_id)
        );
        let bytes = self.get_bytes(&path).await?;
        String::from_utf8(bytes).map_err(|error| Error::Decode(error.to_string()))
    }

    /// The review written out in `format` (`w3c`, `native`, `csv` or `markdown`): the file's
    /// bytes, as served.
    pub async fn export_review(&self, review_id: &str, format: ExportFormat) -> Result<Vec<u8>> {
        let path = format!(
            "/api/reviews/{}/export?format={}",
            segment(review_id),
            format.as_str()
        );
        self.get_bytes(&path).await
    }

    /// A `GET` whose answer is a file, not JSON: its bytes as served.
    async fn get_bytes(&self, path: &str) -> Result<Vec<u8>> {
        let response = self
            .request(Method::GET, path)
            .send()
            .await
            .map_err(Error::transport)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(Error::transport)?;
        if !status.is_success() {
            return Err(refusal(status, &bytes));
        }
        Ok(bytes.to_vec())
    }

    /// Writes in annotations made elsewhere (a W3C Web Annotation file or a Hypothesis
    /// export); the report says what was written and what was not.
    pub async fn import_annotations(
        &self,
        review_id: &str,
        file: &serde_json::Value,
    ) -> Result<AnnotationImport> {
        let path = format!("/api/reviews/{}/import-annotations", segment(review_id));
        self.call_json(Method::POST, &path, file).await
    }

    /// Uploads an HTML file as a new document.
    pub async fn import_html(
        &self,
        file: &HtmlFile,
        fields: &DocumentUpload,
    ) -> Result<ReviewView> {
        let make = || {
            let mut form = reqwest::multipart::Form::new().part("file", html_part(file));
            for (name, value) in [
                ("title", &fields.title),
                ("label", &fields.label),
                ("project", &fields.project),
            ] {
                if let Some(value) = value {
                    form = form.text(name, value.clone());
                }
            }
            if !fields.tags.is_empty() {
                form = form.text("tags", fields.tags.join(","));
            }
            self.request(Method::POST, "/api/reviews/import-html")
                .multipart(form)
        };
        let body: ReviewBody = self.send(make, &Method::POST).await?;
        Ok(body.review)
    }

    /// Uploads an HTML file as a new version of a document, or the latest version's new body.
    pub async fn import_version(
        &self,
        review_id: &str,
        file: &HtmlFile,
        upload: &VersionUpload,
    ) -> Result<ReviewView> {
        let path = format!("/api/reviews/{}/import-html", segment(review_id));
        let make = || {
            let mut form = reqwest::multipart::Form::new()
                .part("file", html_part(file))
                .text("mode", upload.mode.as_str());
            if let Some(label) = &upload.label {
                form = form.text("label", label.clone());
            }
            if let Some(base) = &upload.base_version_id {
                form = form.text("baseVersionId", base.clone());
            }
            self.request(Method::POST, &path).multipart(form)
        };
        let body: ReviewBody = self.send(make, &Method::POST).await?;
        Ok(body.review)
    }

    /// The document's changes as they are committed; see [`EventStream`].
    pub async fn events(&self, review_id: &str) -> Result<EventStream> {
        let path = format!("/api/reviews/{}/events", segment(review_id));
        let response = self
            .request(Method::GET, &path)
            .header("accept", "text/event-stream")
            .send()
            .await
            .map_err(Error::transport)?;
        let status = response.status();
        if !status.is_success() {
            let bytes = response.bytes().await.map_err(Error::transport)?;
            return Err(refusal(status, &bytes));
        }
        Ok(EventStream::new(response))
    }

    // --- managing a document -----------------------------------------------------------------

    pub async fn delete_review(&self, review_id: &str) -> Result<Deleted> {
        let path = format!("/api/reviews/{}", segment(review_id));
        self.call(Method::DELETE, &path).await
    }

    pub async fn rename_review(&self, review_id: &str, change: &TitleChange) -> Result<ReviewView> {
        let path = format!("/api/reviews/{}/title", segment(review_id));
        let body: ReviewBody = self.call_json(Method::PATCH, &path, change).await?;
        Ok(body.review)
    }

    pub async fn change_meta(&self, review_id: &str, change: &MetaChange) -> Result<ReviewView> {
        let path = format!("/api/reviews/{}/meta", segment(review_id));
        let body: ReviewBody = self.call_json(Method::PATCH, &path, change).await?;
        Ok(body.review)
    }

    pub async fn sharing(&self, review_id: &str) -> Result<SharingView> {
        self.call(
            Method::GET,
            &format!("/api/reviews/{}/access", segment(review_id)),
        )
        .await
    }

    pub async fn change_sharing(
        &self,
        review_id: &str,
        change: &SharingChange,
    ) -> Result<SharingView> {
        let path = format!("/api/reviews/{}/access", segment(review_id));
        self.call_json(Method::PATCH, &path, change).await
    }

    pub async fn transfer_owner(
        &self,
        review_id: &str,
        change: &OwnerChange,
    ) -> Result<ReviewView> {
        let path = format!("/api/reviews/{}/owner", segment(review_id));
        let body: ReviewBody = self.call_json(Method::PUT, &path, change).await?;
        Ok(body.review)
    }

    // --- comments ----------------------------------------------------------------------------

    pub async fn add_comment(&self, review_id: &str, input: &NewComment) -> Result<CommentWritten> {
        let path = format!("/api/reviews/{}/comments", segment(review_id));
        self.call_json(Method::POST, &path, input).await
    }

    pub async fn edit_comment(
        &self,
        review_id: &str,
        comment_id: &str,
        edit: &TextEdit,
    ) -> Result<CommentWritten> {
        self.call_json(
            Method::PATCH,
            &comment_path(review_id, comment_id, ""),
            edit,
        )
        .await
    }

    /// Cancels a provisional comment; answers the new `commentsRevision`.
    pub async fn cancel_comment(
        &self,
        review_id: &str,
        comment_id: &str,
        base: Option<i64>,
    ) -> Result<i64> {
        let path = comment_path(review_id, comment_id, "");
        let body: RevisionBody = self
            .call_query(
                Method::DELETE,
                &path,
                &BaseRevision {
                    base_comments_revision: base,
                },
            )
            .await?;
        Ok(body.comments_revision)
    }

    pub async fn reanchor_comment(
        &self,
        review_id: &str,
        comment_id: &str,
        input: &Reanchor,
    ) -> Result<CommentWritten> {
        self.call_json(
            Method::PATCH,
            &comment_path(review_id, comment_id, "/anchor"),
            input,
        )
        .await
    }

    pub async fn reply(
        &self,
        review_id: &str,
        comment_id: &str,
        input: &NewReply,
    ) -> Result<ReplyWritten> {
        self.call_json(
            Method::POST,
            &comment_path(review_id, comment_id, "/thread"),
            input,
        )
        .await
    }

    pub async fn edit_reply(
        &self,
        review_id: &str,
        comment_id: &str,
        message_id: &str,
        edit: &TextEdit,
    ) -> Result<ReplyWritten> {
        let path = comment_path(
            review_id,
            comment_id,
            &format!("/thread/{}", segment(message_id)),
        );
        self.call_json(Method::PATCH, &path, edit).await
    }

    /// Cancels a provisional reply; answers the new `commentsRevision`.
    pub async fn cancel_reply(
        &self,
        review_id: &str,
        comment_id: &str,
        message_id: &str,
        base: Option<i64>,
    ) -> Result<i64> {
        let path = comment_path(
            review_id,
            comment_id,
            &format!("/thread/{}", segment(message_id)),
        );
        let body: RevisionBody = self
            .call_query(
                Method::DELETE,
                &path,
                &BaseRevision {
                    base_comments_revision: base,
                },
            )
            .await?;
        Ok(body.comments_revision)
    }

    /// Resolves (`closed`) or reopens (`open`) a comment.
    pub async fn set_status(
        &self,
        review_id: &str,
        comment_id: &str,
        change: &StatusChange,
    ) -> Result<StatusWritten> {
        self.call_json(
            Method::POST,
            &comment_path(review_id, comment_id, "/status-events"),
            change,
        )
        .await
    }

    // --- review workflow (DESIGN.md §8.4) ----------------------------------------------------

    /// Asks someone to review the document (editor or owner); answers the workflow.
    pub async fn add_reviewer(&self, review_id: &str, input: &NewReviewer) -> Result<WorkflowView> {
        let path = format!("/api/reviews/{}/reviewers", segment(review_id));
        let body: WorkflowBody = self.call_json(Method::POST, &path, input).await?;
        Ok(body.workflow)
    }

    /// Takes a review request back (or declines one's own); answers the workflow.
    pub async fn remove_reviewer(&self, review_id: &str, user_id: &str) -> Result<WorkflowView> {
        let path = format!(
            "/api/reviews/{}/reviewers/{}",
            segment(review_id),
            segment(user_id)
        );
        let body: WorkflowBody = self.call(Method::DELETE, &path).await?;
        Ok(body.workflow)
    }

    /// Records the caller's decision, replacing their earlier one.
    pub async fn decide(&self, review_id: &str, input: &NewDecision) -> Result<DecisionWritten> {
        let path = format!("/api/reviews/{}/decisions", segment(review_id));
        self.call_json(Method::POST, &path, input).await
    }

    /// Finalizes the review (every comment must be closed).
    pub async fn finalize_review(&self, review_id: &str) -> Result<WorkflowView> {
        let path = format!("/api/reviews/{}/finalize", segment(review_id));
        let body: WorkflowBody = self.call(Method::POST, &path).await?;
        Ok(body.workflow)
    }

    /// Reopens a finalized review.
    pub async fn reopen_review(&self, review_id: &str) -> Result<WorkflowView> {
        let path = format!("/api/reviews/{}/reopen", segment(review_id));
        let body: WorkflowBody = self.call(Method::POST, &path).await?;
        Ok(body.workflow)
    }

    /// Hands a thread to someone (`email: None` unassigns).
    pub async fn assign_comment(
        &self,
        review_id: &str,
        comment_id: &str,
        change: &AssigneeChange,
    ) -> Result<CommentWritten> {
        self.call_json(
            Method::PUT,
            &comment_path(review_id, comment_id, "/assignee"),
            change,
        )
        .await
    }

    /// Adds (`on`) or takes back a reaction on a comment, or on one of its replies
    /// (`message_id`); answers the item's reactions.
    pub async fn react(
        &self,
        review_id: &str,
        comment_id: &str,
        message_id: Option<&str>,
        emoji: &str,
        on: bool,
    ) -> Result<Vec<ReactionView>> {
        let thread = message_id
            .map(|id| format!("/thread/{}", segment(id)))
            .unwrap_or_default();
        let path = comment_path(
            review_id,
            comment_id,
            &format!("{thread}/reactions/{}", segment(emoji)),
        );
        let method = if on { Method::PUT } else { Method::DELETE };
        let body: ReactionsBody = self.call(method, &path).await?;
        Ok(body.reactions)
    }

    /// Applies the suggestions of `input.comment_ids` as one new version (DESIGN.md §8.5).
    pub async fn apply_suggestions(
        &self,
        review_id: &str,
        input: &ApplySuggestions,
    ) -> Result<SuggestionsApplied> {
        let path = format!("/api/reviews/{}/suggestions/apply", segment(review_id));
        self.call_json(Method::POST, &path, input).await
    }

    // --- runs --------------------------------------------------------------------------------

    pub async fn start_run(&self, review_id: &str, input: &StartRun) -> Result<RunView> {
        let path = format!("/api/reviews/{}/ai-review-runs", segment(review_id));
        let body: RunBody = self.call_json(Method::POST, &path, input).await?;
        Ok(body.run)
    }

    pub async fn finish_run(
        &self,
        review_id: &str,
        run_id: &str,
        input: &FinishRun,
    ) -> Result<RunView> {
        let path = format!(
            "/api/reviews/{}/ai-review-runs/{}",
            segment(review_id),
            segment(run_id)
        );
        let body: RunBody = self.call_json(Method::PATCH, &path, input).await?;
        Ok(body.run)
    }

    pub async fn add_run_comment(
        &self,
        review_id: &str,
        run_id: &str,
        input: &NewComment,
    ) -> Result<CommentWritten> {
        let path = format!(
            "/api/reviews/{}/ai-review-runs/{}/comments",
            segment(review_id),
            segment(run_id)
        );
        self.call_json(Method::POST, &path, input).await
    }

    /// Writes up to 200 comments in a run in one step; the answer lists what was written and
    /// what failed (with `atomic`, a failure is an [`Error::Api`] whose body's `failed` says why).
    pub async fn add_run_comments(
        &self,
        review_id: &str,
        run_id: &str,
        input: &NewRunComments,
    ) -> Result<RunCommentsWritten> {
        let path = format!(
            "/api/reviews/{}/ai-review-runs/{}/comments/batch",
            segment(review_id),
            segment(run_id)
        );
        self.call_json(Method::POST, &path, input).await
    }

    // --- search ------------------------------------------------------------------------------

    pub async fn search_comments(&self, query: &CommentSearchQuery) -> Result<CommentResults> {
        self.call_query(Method::GET, "/api/search/comments", query)
            .await
    }

    pub async fn search_docs(&self, query: &DocSearchQuery) -> Result<DocResults> {
        self.call_query(Method::GET, "/api/search/docs", query)
            .await
    }

    // --- the caller's account ----------------------------------------------------------------

    pub async fn me(&self) -> Result<MeView> {
        self.call(Method::GET, "/api/me").await
    }

    /// `PATCH /api/me`: a new handle or display name (409 `already_exists` for a taken handle).
    pub async fn update_me(&self, change: &ProfileChange) -> Result<MeView> {
        self.call_json(Method::PATCH, "/api/me", change).await
    }

    // --- notifications -----------------------------------------------------------------------

    pub async fn notifications(&self, query: &NotificationQuery) -> Result<NotificationList> {
        self.call_query(Method::GET, "/api/notifications", query)
            .await
    }

    /// Marks the named notifications read (`ids`), or all (`all: Some(true)`).
    pub async fn mark_notifications_read(&self, read: &NotificationsRead) -> Result<UnreadCount> {
        self.call_json(Method::POST, "/api/notifications/read", read)
            .await
    }

    pub async fn notification_settings(&self) -> Result<NotificationSettings> {
        self.call(Method::GET, "/api/me/notification-settings")
            .await
    }

    pub async fn set_notification_settings(
        &self,
        settings: &NotificationSettings,
    ) -> Result<NotificationSettings> {
        self.call_json(Method::PATCH, "/api/me/notification-settings", settings)
            .await
    }

    pub async fn my_tokens(&self, page: &PageQuery) -> Result<TokenList> {
        self.call_query(Method::GET, "/api/me/tokens", page).await
    }

    pub async fn revoke_my_token(&self, token_id: &str) -> Result<TokenView> {
        let body: Revoked = self
            .call(
                Method::DELETE,
                &format!("/api/me/tokens/{}", segment(token_id)),
            )
            .await?;
        Ok(body.token)
    }

    /// Exchanges a command-line login code and its PKCE verifier for a personal token (needs no
    /// credentials).
    pub async fn exchange_cli_code(&self, exchange: &CodeExchange) -> Result<ExchangedToken> {
        self.call_json(Method::POST, "/api/auth/cli/token", exchange)
            .await
    }

    // --- projects and the organization -------------------------------------------------------

    pub async fn projects(&self, page: &PageQuery) -> Result<ProjectList> {
        self.call_query(Method::GET, "/api/projects", page).await
    }

    pub async fn project_roles(&self, code: &str) -> Result<ProjectRoles> {
        self.call(
            Method::GET,
            &format!("/api/projects/{}/roles", segment(code)),
        )
        .await
    }

    pub async fn change_project_roles(
        &self,
        code: &str,
        change: &RolesChange,
    ) -> Result<ProjectRoles> {
        let path = format!("/api/projects/{}/roles", segment(code));
        self.call_json(Method::PATCH, &path, change).await
    }

    pub async fn link_project(&self, code: &str, review_id: &str) -> Result<ReviewView> {
        let path = format!(
            "/api/projects/{}/docs/{}",
            segment(code),
            segment(review_id)
        );
        let body: ReviewBody = self.call(Method::PUT, &path).await?;
        Ok(body.review)
    }

    pub async fn unlink_project(&self, code: &str, review_id: &str) -> Result<ReviewView> {
        let path = format!(
            "/api/projects/{}/docs/{}",
            segment(code),
            segment(review_id)
        );
        let body: ReviewBody = self.call(Method::DELETE, &path).await?;
        Ok(body.review)
    }

    pub async fn members(&self, page: &PageQuery) -> Result<MemberList> {
        self.call_query(Method::GET, "/api/org/members", page).await
    }

    /// Invites someone to join (org admins); the answer's `acceptUrl` is shown this once.
    pub async fn invite(&self, new: &NewInvitation) -> Result<InvitationView> {
        let body: InvitationBody = self
            .call_json(Method::POST, "/api/org/invitations", new)
            .await?;
        Ok(body.invitation)
    }

    /// The pending invitations, newest first (org admins).
    pub async fn invitations(&self) -> Result<Vec<InvitationView>> {
        let body: InvitationList = self.call(Method::GET, "/api/org/invitations").await?;
        Ok(body.invitations)
    }

    /// Revokes a pending invitation (org admins).
    pub async fn revoke_invitation(&self, invitation_id: &str) -> Result<()> {
        let path = format!("/api/org/invitations/{}", segment(invitation_id));
        self.call(Method::DELETE, &path).await
    }

    /// Asks for a password reset mail; the answer is the same whatever the email.
    pub async fn request_password_reset(&self, email: &str) -> Result<()> {
        self.call_json(
            Method::POST,
            "/api/auth/password-reset",
            &PasswordResetRequest {
                email: email.to_string(),
            },
        )
        .await
    }

    pub async fn register_member(&self, new: &NewMember) -> Result<MemberView> {
        let body: MemberBody = self
            .call_json(Method::POST, "/api/org/members", new)
            .await?;
        Ok(body.member)
    }

    pub async fn update_member(&self, change: &MemberChange) -> Result<MemberView> {
        let body: MemberBody = self
            .call_json(Method::PATCH, "/api/org/members", change)
            .await?;
        Ok(body.member)
    }

    pub async fn remove_member(&self, member: &MemberRef) -> Result<MemberView> {
        let body: MemberBody = self
            .call_json(Method::DELETE, "/api/org/members", member)
            .await?;
        Ok(body.member)
    }

    /// `GET /api/webhooks`.
    pub async fn webhooks(&self) -> Result<WebhookList> {
        self.call(Method::GET, "/api/webhooks").await
    }

    /// `POST /api/webhooks`: the answer holds the secret, shown only here.
    pub async fn create_webhook(&self, new: &NewWebhook) -> Result<WebhookView> {
        let body: WebhookBody = self.call_json(Method::POST, "/api/webhooks", new).await?;
        Ok(body.webhook)
    }

    pub async fn webhook(&self, webhook_id: &str) -> Result<WebhookView> {
        let path = format!("/api/webhooks/{}", segment(webhook_id));
        let body: WebhookBody = self.call(Method::GET, &path).await?;
        Ok(body.webhook)
    }

    pub async fn update_webhook(
        &self,
        webhook_id: &str,
        change: &WebhookChange,
    ) -> Result<WebhookView> {
        let path = format!("/api/webhooks/{}", segment(webhook_id));
        let body: WebhookBody = self.call_json(Method::PATCH, &path, change).await?;
        Ok(body.webhook)
    }

    pub async fn delete_webhook(&self, webhook_id: &str) -> Result<WebhookView> {
        let path = format!("/api/webhooks/{}", segment(webhook_id));
        let body: WebhookBody = self.call(Method::DELETE, &path).await?;
        Ok(body.webhook)
    }

    /// Queues a `ping` to the webhook; answers its delivery.
    pub async fn ping_webhook(&self, webhook_id: &str) -> Result<DeliveryView> {
        let path = format!("/api/webhooks/{}/ping", segment(webhook_id));
        let body: DeliveryBody = self.call(Method::POST, &path).await?;
        Ok(body.delivery)
    }

    /// A new secret (in the answer, shown only here); the old one signs 24 more hours.
    pub async fn rotate_webhook_secret(&self, webhook_id: &str) -> Result<WebhookView> {
        let path = format!("/api/webhooks/{}/rotate-secret", segment(webhook_id));
        let body: WebhookBody = self.call(Method::POST, &path).await?;
        Ok(body.webhook)
    }

    pub async fn webhook_deliveries(
        &self,
        webhook_id: &str,
        page: &PageQuery,
    ) -> Result<DeliveryList> {
        let path = format!("/api/webhooks/{}/deliveries", segment(webhook_id));
        self.call_query(Method::GET, &path, page).await
    }

    /// Queues the delivery's event again (same body, same `webhook-id`); answers the new one.
    pub async fn redeliver(&self, webhook_id: &str, delivery_id: &str) -> Result<DeliveryView> {
        let path = format!(
            "/api/webhooks/{}/deliveries/{}/redeliver",
            segment(webhook_id),
            segment(delivery_id)
        );
        let body: DeliveryBody = self.call(Method::POST, &path).await?;
        Ok(body.delivery)
    }

    pub async fn admins(&self, page: &PageQuery) -> Result<AdminList> {
        self.call_query(Method::GET, "/api/org/admins", page).await
    }

    pub async fn add_admin(&self, member: &MemberRef) -> Result<MemberView> {
        let body: AdminBody = self
            .call_json(Method::PUT, "/api/org/admins", member)
            .await?;
        Ok(body.admin)
    }

    pub async fn remove_admin(&self, member: &MemberRef) -> Result<MemberView> {
        let body: AdminBody = self
            .call_json(Method::DELETE, "/api/org/admins", member)
            .await?;
        Ok(body.admin)
    }
}

/// Where a new comment goes, as a person or an agent names it: a quote (with context when it
/// occurs more than once), a section, or neither (the whole document).
#[derive(Debug, Clone, Default)]
pub struct Place {
    pub quote: Option<String>,
    pub prefix: Option<String>,
    pub suffix: Option<String>,
    pub section_id: Option<String>,
}

impl Place {
    /// The locator that names this place.
    pub fn locator(self) -> Locator {
        let quote = self.quote.map(|exact| Quote {
            exact,
            prefix: self.prefix.unwrap_or_default(),
            suffix: self.suffix.unwrap_or_default(),
        });
        Locator {
            section_id: self.section_id,
            quote,
            ..Locator::default()
        }
    }
}

/// A new comment (without a base revision: it applies to whatever is current) from its text,
/// its category's word (`None`: a note) and its place; an unknown word is refused with the list.
pub fn new_comment(
    body: String,
    category: Option<&str>,
    place: Place,
) -> Result<NewComment, String> {
    let category = match category {
        None => Category::Note,
        Some(word) => Category::from_word(word)?,
    };
    Ok(NewComment {
        body,
        category: Some(category),
        locator: Some(place.locator()),
        base_comments_revision: None,
        suggestion: None,
    })
}

/// A path segment with the characters a URL path cannot carry as they are escaped.
fn segment(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn comment_path(review_id: &str, comment_id: &str, rest: &str) -> String {
    format!(
        "/api/reviews/{}/comments/{}{rest}",
        segment(review_id),
        segment(comment_id)
    )
}

fn html_part(file: &HtmlFile) -> reqwest::multipart::Part {
    reqwest::multipart::Part::bytes(file.bytes.clone())
        .file_name(file.name.clone())
        .mime_str("text/html")
        .unwrap_or_else(|_| reqwest::multipart::Part::bytes(file.bytes.clone()))
}

/// `Retry-After` in seconds, when the server sent it.
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    response
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// The error a refusal's body describes. A body that is not the error body, or whose `status`
/// is not the answer's, is not what the API promises.
fn refusal(status: StatusCode, bytes: &[u8]) -> Error {
    let body = match serde_json::from_slice::<ErrorBody>(bytes) {
        Ok(body) if body.status == status.as_u16() => body,
        _ => {
            return Error::Decode(format!(
                "{status} without its JSON error body: {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            ));
        }
    };
    match (
        body.error.as_str(),
        &body.current_revision,
        &body.latest_version_id,
    ) {
        (REVISION_CONFLICT, Some(current_revision), _) => Error::RevisionConflict {
            current_revision: *current_revision,
            message: body.message,
        },
        (STALE_VERSION, _, Some(latest_version_id)) => Error::StaleVersion {
            latest_version_id: latest_version_id.clone(),
            message: body.message,
        },
        _ => Error::Api {
            body: Box::new(body),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_never_shows_in_debug() {
        let client = Client::new(
            "http://127.0.0.1:1",
            Some(Secret::new("drp_supersecret".into())),
        )
        .expect("client");
        let shown = format!("{client:?}");
        assert!(!shown.contains("supersecret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }

    #[test]
    fn a_refusal_must_carry_its_own_status_and_the_conflict_codes() {
        // The body says 400 on a 409: not the API's error body.
        let mismatched = refusal(
            StatusCode::CONFLICT,
            br#"{"error":"invalid_request","status":400,"message":"m"}"#,
        );
        assert!(matches!(mismatched, Error::Decode(_)), "{mismatched:?}");
        // A 409 of another kind stays a plain refusal with its own code, even with a revision.
        let other = refusal(
            StatusCode::CONFLICT,
            br#"{"error":"invalid_transition","status":409,"message":"m","currentRevision":3}"#,
        );
        assert_eq!(other.code(), Some("invalid_transition"), "{other:?}");
    }

    #[test]
    fn conflicts_become_their_own_errors() {
        let revision = refusal(
            StatusCode::CONFLICT,
            br#"{"error":"comments revision conflict","status":409,"message":"m","currentRevision":7}"#,
        );
        assert!(matches!(
            revision,
            Error::RevisionConflict {
                current_revision: 7,
                ..
            }
        ));
        let stale = refusal(
            StatusCode::CONFLICT,
            br#"{"error":"stale_target_version","status":409,"message":"m","latestVersionId":"ver_2"}"#,
        );
        assert!(
            matches!(stale, Error::StaleVersion { ref latest_version_id, .. } if latest_version_id == "ver_2")
        );
        let other = refusal(
            StatusCode::NOT_FOUND,
            br#"{"error":"not_found","status":404,"message":"m"}"#,
        );
        assert_eq!(other.code(), Some("not_found"));
        let garbage = refusal(StatusCode::BAD_GATEWAY, b"<html>");
        assert!(matches!(garbage, Error::Decode(_)));
    }

    /// A server answering each connection with the next of `answers` (raw HTTP), counting them.
    async fn scripted(
        answers: Vec<String>,
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let seen = std::sync::Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        tokio::spawn(async move {
            for answer in answers {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                counter.fetch_add(1, Ordering::SeqCst);
                let _ = socket.write_all(answer.as_bytes()).await;
            }
        });
        (base, seen)
    }

    /// A raw HTTP answer with a JSON body.
    fn answer(status: &str, headers: &str, body: &str) -> String {
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\nconnection: close\r\n\
             {headers}content-length: {}\r\n\r\n{body}",
            body.len()
        )
    }

    fn busy() -> String {
        let body = r#"{"error":"unavailable","status":503,"message":"busy now"}"#;
        answer("503 Service Unavailable", "retry-after: 0\r\n", body)
    }

    fn me() -> String {
        let body = r#"{"user":{"id":"usr_1","provider":"local","displayName":"Ada","handle":"ada","email":"ada@example.com","membership":"internal","status":"active","isAdmin":false,"createdAt":"x"}}"#;
        answer("200 OK", "", body)
    }

    #[tokio::test]
    async fn idempotent_calls_are_retried_after_503_and_others_are_not() {
        use std::sync::atomic::Ordering;
        let (base, seen) = scripted(vec![busy(), me()]).await;
        let client = Client::new(&base, None).expect("client");
        let me = client.me().await.expect("answered on the second try");
        assert_eq!(me.user.email, "ada@example.com");
        assert_eq!(seen.load(Ordering::SeqCst), 2);

        let (base, seen) = scripted(vec![busy(), busy()]).await;
        let client = Client::new(&base, None).expect("client");
        let refused = client
            .start_run("rv_1", &StartRun::default())
            .await
            .expect_err("a POST is not repeated");
        assert_eq!(refused.status(), Some(503));
        assert_eq!(seen.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn answers_are_kept_as_sent_only_when_asked_and_taken_once() {
        let (base, _) = scripted(vec![me(), me()]).await;
        let plain = Client::new(&base, None).expect("client");
        plain.me().await.expect("answered");
        assert!(plain.take_answer().is_none(), "nothing kept unless asked");
        let keeping = plain.clone().keeping_answers();
        keeping.me().await.expect("answered");
        let kept = keeping.take_answer().expect("kept");
        let sent = me();
        let body = sent.split("\r\n\r\n").nth(1).expect("a body");
        assert_eq!(kept, body.as_bytes(), "byte for byte");
        assert!(keeping.take_answer().is_none(), "taken once");
    }

    #[test]
    fn path_segments_are_escaped() {
        assert_eq!(segment("rv_1"), "rv_1");
        assert_eq!(segment("a/b c"), "a%2Fb%20c");
        assert!(Client::new("ftp://x", None).is_err());
    }
}
