//! The review screen (`/reviews/{reviewId}`): the chosen version in a sandboxed frame on the
//! left, its comments on the right, and the fragments htmx refreshes (the comments panel, the
//! versions with their anchor counts, the changes since the previous version).
//!
//! The document itself comes from the view endpoint with the frame's policy
//! ([`Policy::DocumentView`]): the page can reach its DOM to draw highlights; its scripts never
//! run, also when the URL is opened directly.

use docreview_api::{CommentView, ReviewView, RunView, VersionView};
use std::collections::HashMap;

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use docreview_core::clock::millis_of;
use docreview_core::model::{AnchorState, CommentStatus, Millis, RunStatus, Section};
use docreview_core::service::{TextChange, TextChangeKind, VersionCounts};
use docreview_core::view::UNDO_WINDOW_MS;
use serde::Deserialize;

use crate::AppState;
use crate::headers::Policy;
use crate::web::error::WebError;
use crate::web::extract::{SignedIn, is_htmx};
use crate::web::layout::{Layout, Nav};
use crate::web::settings::Offered;
use crate::web::threads::{self, Offer};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/reviews/{review_id}", get(page))
        .route("/reviews/{review_id}/panel", get(panel))
        .route("/reviews/{review_id}/versions", get(versions))
        .route(
            "/reviews/{review_id}/versions/{version_id}/view",
            get(document_view),
        )
        .route(
            "/reviews/{review_id}/versions/{version_id}/changes",
            get(changes),
        )
        .merge(threads::router())
}

/// What the page shows: a version (the latest by default) and filters on the comments. The
/// same words travel in the page's URL, so a panel refresh reads them from `HX-Current-URL`.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct ScreenQuery {
    pub version: Option<String>,
    pub status: Option<String>,
    pub category: Option<String>,
    pub author: Option<String>,
}

impl ScreenQuery {
    /// The query of the page an htmx request was made from.
    pub fn of_current_page(headers: &HeaderMap) -> ScreenQuery {
        headers
            .get("hx-current-url")
            .and_then(|value| value.to_str().ok())
            .and_then(|url| url.split_once('?').map(|(_, query)| query.to_string()))
            .and_then(|query| serde_urlencoded::from_str(&query).ok())
            .unwrap_or_default()
    }

    fn keeps(&self, comment: &CommentView) -> bool {
        let status_ok = match self.status.as_deref() {
            Some("open") => comment.status == CommentStatus::Open,
            Some("closed") => comment.status == CommentStatus::Closed,
            _ => true,
        };
        let category_ok = match self.category.as_deref().filter(|c| !c.is_empty()) {
            Some(category) => comment.category.as_str() == category,
            None => true,
        };
        let author_ok = match self.author.as_deref().filter(|a| !a.is_empty()) {
            Some(author) => comment.author.id == author,
            None => true,
        };
        status_ok && category_ok && author_ok
    }

    fn is_filtered(&self) -> bool {
        self.status
            .as_deref()
            .is_some_and(|s| s == "open" || s == "closed")
            || self.category.as_deref().is_some_and(|c| !c.is_empty())
            || self.author.as_deref().is_some_and(|a| !a.is_empty())
    }
}

/// One comment thread as the panel shows it.
pub struct Thread {
    pub comment: CommentView,
    /// Written by the person looking.
    pub own: bool,
    /// Where the thread sits in document order (code points; sections at their start).
    pub order: usize,
    /// The heading text of a section-level comment's section.
    pub section_text: Option<String>,
    /// A short fingerprint of what the thread shows, to tell whether it changed under a form.
    pub stamp: String,
}

impl Thread {
    pub fn is_open(&self) -> bool {
        self.comment.status == CommentStatus::Open
    }

    pub fn state(&self) -> &'static str {
        self.comment.anchor.state.as_str()
    }

    pub fn is_fuzzy(&self) -> bool {
        self.comment.anchor.state == AnchorState::Fuzzy
    }

    pub fn start(&self) -> String {
        self.comment
            .anchor
            .position
            .as_ref()
            .map_or_else(String::new, |p| p.start.to_string())
    }

    pub fn end(&self) -> String {
        self.comment
            .anchor
            .position
            .as_ref()
            .map_or_else(String::new, |p| p.end.to_string())
    }

    pub fn quote(&self) -> &str {
        self.comment
            .anchor
            .quote
            .as_ref()
            .map_or("", |q| q.exact.as_str())
    }

    pub fn section_id(&self) -> &str {
        self.comment.anchor.section_id.as_deref().unwrap_or("")
    }

    pub fn category_label(&self) -> &'static str {
        category_label(self.comment.category.as_str())
    }
}

/// A category's words for people.
pub fn category_label(category: &str) -> &'static str {
    match category {
        "note" => "Note",
        "revise" => "Revise",
        "add" => "Add",
        "delete" => "Delete",
        "needs_review" => "Needs review",
        "consult" => "Consult",
        _ => "No category",
    }
}

/// The seven categories, in the composer's order.
pub const CATEGORIES: [&str; 7] = [
    "note",
    "revise",
    "add",
    "delete",
    "needs_review",
    "consult",
    "none",
];

/// The comments panel: threads grouped as the screen shows them.
#[derive(Template)]
#[template(path = "review/panel.html")]
pub struct Panel {
    pub review_id: String,
    pub revision: i64,
    pub version_id: String,
    pub is_latest: bool,
    pub query: ScreenQuery,
    /// Everyone who wrote a comment, for the author filter.
    pub authors: Vec<(String, String)>,
    pub document: Vec<Thread>,
    pub anchored: Vec<Thread>,
    pub orphaned: Vec<Thread>,
    pub total: usize,
    pub shown: usize,
    pub runs: Vec<RunView>,
    pub offer: Option<Offer>,
    /// The service's clock when the panel was made (for the undo windows it shows).
    pub now: Millis,
}

#[allow(
    clippy::unused_self,
    reason = "called by the askama template as a method of its context"
)]
impl Panel {
    pub fn categories(&self) -> [&'static str; 7] {
        CATEGORIES
    }

    pub fn label(&self, category: &str) -> &'static str {
        category_label(category)
    }

    pub fn selected(&self, value: Option<&String>, option: &str) -> bool {
        value.map(String::as_str).unwrap_or_default() == option
    }

    /// The offer (a refused write's text, re-offered) for this thread and kind of form.
    pub fn offer_for(&self, comment_id: &str, kind: &str) -> Option<&Offer> {
        self.offer
            .as_ref()
            .filter(|offer| offer.comment_id == comment_id && offer.kind == kind)
    }

    /// When the undo window of an item written at `created_ts` ends (milliseconds).
    pub fn undo_until(&self, created_ts: &str) -> Millis {
        millis_of(created_ts).unwrap_or(self.now) + UNDO_WINDOW_MS
    }

    /// Whole minutes left to undo an item written at `created_ts`, rounded up.
    pub fn undo_minutes(&self, created_ts: &str) -> Millis {
        ((self.undo_until(created_ts) - self.now).max(0) + 59_999) / 60_000
    }

    #[allow(
        clippy::ref_option,
        reason = "the template passes the field itself: run_title(c.run_id)"
    )]
    pub fn run_title(&self, run_id: &Option<String>) -> String {
        run_id
            .as_ref()
            .and_then(|id| self.runs.iter().find(|run| &run.id == id))
            .map(|run| run.title.clone())
            .unwrap_or_default()
    }
}

/// Builds the panel for `review` seen on `version_id` by `signed_in`.
pub async fn build_panel(
    state: &AppState,
    signed_in: &SignedIn,
    review: &ReviewView,
    version_id: &str,
    query: ScreenQuery,
    sections: &[Section],
    offer: Option<Offer>,
) -> Result<Panel, WebError> {
    let actor = &signed_in.actor;
    let is_latest = version_id == review.latest_version_id;
    let mut anchors: HashMap<String, docreview_core::model::Anchor> = if is_latest {
        HashMap::new()
    } else {
        state
            .service
            .anchors_on_version(actor, &review.review_id, version_id)
            .await
            .map_err(|error| WebError::core(error, false))?
            .into_iter()
            .collect()
    };
    let mut authors: Vec<(String, String)> = Vec::new();
    let mut document = Vec::new();
    let mut anchored = Vec::new();
    let mut orphaned = Vec::new();
    let total = review.comments.len();
    for comment in &review.comments {
        if !authors.iter().any(|(id, _)| *id == comment.author.id) {
            authors.push((
                comment.author.id.clone(),
                comment.author.display_name.clone(),
            ));
        }
        if !query.keeps(comment) {
            continue;
        }
        let mut comment = comment.clone();
        if let Some(anchor) = anchors.remove(&comment.id) {
            comment.anchor = (&anchor).into();
        }
        let section = comment
            .anchor
            .section_id
            .as_ref()
            .and_then(|id| sections.iter().find(|s| &s.id == id));
        let order = comment
            .anchor
            .position
            .as_ref()
            .map(|p| p.start)
            .or(section.map(|s| s.start))
            .unwrap_or(0);
        let thread = Thread {
            own: comment.author.id == actor.id(),
            order,
            section_text: section.map(|s| s.text.clone()),
            stamp: threads::stamp_of(&comment),
            comment,
        };
        if thread.comment.anchor.state == AnchorState::Orphaned {
            orphaned.push(thread);
        } else if thread.comment.anchor.position.is_some() || thread.section_text.is_some() {
            anchored.push(thread);
        } else {
            document.push(thread);
        }
    }
    anchored.sort_by_key(|thread| thread.order);
    authors.sort_by(|a, b| a.1.cmp(&b.1));
    let shown = document.len() + anchored.len() + orphaned.len();
    Ok(Panel {
        review_id: review.review_id.clone(),
        revision: review.comments_revision,
        version_id: version_id.to_string(),
        is_latest,
        query,
        authors,
        document,
        anchored,
        orphaned,
        total,
        shown,
        runs: review.ai_review_runs.clone(),
        offer,
        now: state.service.now(),
    })
}

#[derive(Template, WebTemplate)]
#[template(path = "review/page.html")]
struct ReviewPage {
    layout: Layout,
    review: ReviewView,
    version: VersionView,
    version_number: usize,
    previous_label: Option<String>,
    sections: Vec<Section>,
    panel: Panel,
    /// What the Settings and Share dialogs offer the caller.
    manage: Offered,
}

#[allow(
    clippy::unused_self,
    reason = "called by the askama template as a method of its context"
)]
impl ReviewPage {
    fn run_state(&self, run: &RunView) -> &'static str {
        match run.status {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    fn draft_count(&self, run: &RunView) -> usize {
        if run.status == RunStatus::Running {
            run.comment_ids.len()
        } else {
            0
        }
    }
}

/// The version `query` names, else the latest; 404 for one the document does not have.
fn chosen_version(
    review: &ReviewView,
    query: &ScreenQuery,
) -> Result<(usize, VersionView), WebError> {
    let wanted = query
        .version
        .as_deref()
        .filter(|v| !v.is_empty())
        .unwrap_or(&review.latest_version_id);
    review
        .source
        .versions
        .iter()
        .position(|v| v.version_id == wanted)
        .map(|at| {
            let v = &review.source.versions[at];
            (
                at,
                VersionView {
                    version_id: v.version_id.clone(),
                    label: v.label.clone(),
                    created_at: v.created_at,
                    source_hash: v.source_hash.clone(),
                },
            )
        })
        .ok_or_else(|| WebError::core(docreview_core::Error::NotFound("version"), false))
}

async fn page(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Path(review_id): Path<String>,
    Query(query): Query<ScreenQuery>,
) -> Result<Response, WebError> {
    let core = |error| WebError::core(error, false);
    let review = state
        .service
        .get_review(&signed_in.actor, &review_id, false)
        .await
        .map_err(core)?;
    let (index, version) = chosen_version(&review, &query)?;
    let sections = state
        .service
        .dom_context(&signed_in.actor, &review_id, Some(&version.version_id))
        .await
        .map_err(core)?
        .sections;
    let panel = build_panel(
        &state,
        &signed_in,
        &review,
        &version.version_id,
        query,
        &sections,
        None,
    )
    .await?;
    let previous_label = index
        .checked_sub(1)
        .map(|at| review.source.versions[at].label.clone());
    let page = ReviewPage {
        layout: Layout::for_user(&review.title, Nav::Documents, &signed_in)
            .with_body_class("review-screen"),
        manage: Offered::of(&signed_in.actor, review.role),
        version_number: index + 1,
        previous_label,
        version,
        sections,
        panel,
        review,
    };
    Ok(page.into_response())
}

/// The comments panel alone (htmx refreshes it on live changes and filter changes).
async fn panel(
    State(state): State<AppState>,
    signed_in: SignedIn,
    headers: HeaderMap,
    Path(review_id): Path<String>,
    Query(query): Query<ScreenQuery>,
) -> Result<Response, WebError> {
    let htmx = is_htmx(&headers);
    let query = if query.version.is_some() || query.is_filtered() {
        query
    } else {
        ScreenQuery::of_current_page(&headers)
    };
    render_panel(&state, &signed_in, &review_id, query, None, htmx).await
}

/// Renders the panel as it stands now, with `offer` re-offered when a write was refused.
pub async fn render_panel(
    state: &AppState,
    signed_in: &SignedIn,
    review_id: &str,
    query: ScreenQuery,
    offer: Option<Offer>,
    htmx: bool,
) -> Result<Response, WebError> {
    let core = |error| WebError::core(error, htmx);
    let review = state
        .service
        .get_review(&signed_in.actor, review_id, false)
        .await
        .map_err(core)?;
    let (_, version) = chosen_version(&review, &query)
        .map_err(|_| WebError::core(docreview_core::Error::NotFound("version"), htmx))?;
    let sections = state
        .service
        .dom_context(&signed_in.actor, review_id, Some(&version.version_id))
        .await
        .map_err(core)?
        .sections;
    let panel = build_panel(
        state,
        signed_in,
        &review,
        &version.version_id,
        query,
        &sections,
        offer,
    )
    .await?;
    let html = panel
        .render()
        .map_err(|error| WebError::core(docreview_core::Error::Internal(Box::new(error)), htmx))?;
    Ok(axum::response::Html(html).into_response())
}

/// The version's HTML for the review screen's frame, byte for byte as uploaded.
async fn document_view(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Path((review_id, version_id)): Path<(String, String)>,
) -> Result<Response, WebError> {
    let html = state
        .service
        .bundle(&signed_in.actor, &review_id, &version_id)
        .await
        .map_err(|error| WebError::core(error, false))?;
    let mut response = html.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response.extensions_mut().insert(Policy::DocumentView);
    Ok(response)
}

#[derive(Template)]
#[template(path = "review/versions.html")]
struct VersionsFragment {
    review_id: String,
    current: String,
    rows: Vec<(VersionView, VersionCounts)>,
    latest: String,
}

/// The versions with how many comments each holds exactly, approximately or not at all.
async fn versions(
    State(state): State<AppState>,
    signed_in: SignedIn,
    headers: HeaderMap,
    Path(review_id): Path<String>,
) -> Result<Response, WebError> {
    let htmx = is_htmx(&headers);
    let core = |error| WebError::core(error, htmx);
    let review = state
        .service
        .get_review(&signed_in.actor, &review_id, false)
        .await
        .map_err(core)?;
    let counts = state
        .service
        .anchor_counts(&signed_in.actor, &review_id)
        .await
        .map_err(core)?;
    let query = ScreenQuery::of_current_page(&headers);
    let current = query
        .version
        .clone()
        .unwrap_or_else(|| review.latest_version_id.clone());
    let rows = review
        .source
        .versions
        .into_iter()
        .zip(counts)
        .rev()
        .collect();
    let html = VersionsFragment {
        review_id,
        current,
        rows,
        latest: review.latest_version_id,
    }
    .render()
    .map_err(|error| WebError::core(docreview_core::Error::Internal(Box::new(error)), htmx))?;
    Ok(axum::response::Html(html).into_response())
}

#[derive(Template)]
#[template(path = "review/changes.html")]
struct ChangesFragment {
    changes: Vec<ShownChange>,
}

/// One stretch of the changes view: `same`, `added`, `removed` or `skipped`, and whether it is
/// an addition right after a removal (shown apart, so the two runs never read as one word).
struct ShownChange {
    kind: &'static str,
    text: String,
    replaces: bool,
}

impl ShownChange {
    fn list(changes: Vec<TextChange>) -> Vec<ShownChange> {
        let mut previous = TextChangeKind::Same;
        changes
            .into_iter()
            .map(|change| {
                let shown = ShownChange {
                    kind: match change.kind {
                        TextChangeKind::Same => "same",
                        TextChangeKind::Added => "added",
                        TextChangeKind::Removed => "removed",
                        TextChangeKind::Skipped => "skipped",
                    },
                    replaces: change.kind == TextChangeKind::Added
                        && previous == TextChangeKind::Removed,
                    text: change.text,
                };
                previous = change.kind;
                shown
            })
            .collect()
    }
}

/// What changed in the text since the previous version.
async fn changes(
    State(state): State<AppState>,
    signed_in: SignedIn,
    headers: HeaderMap,
    Path((review_id, version_id)): Path<(String, String)>,
) -> Result<Response, WebError> {
    let htmx = is_htmx(&headers);
    let changes = state
        .service
        .version_changes(&signed_in.actor, &review_id, &version_id)
        .await
        .map_err(|error| WebError::core(error, htmx))?;
    let html = ChangesFragment {
        changes: ShownChange::list(changes),
    }
    .render()
    .map_err(|error| WebError::core(docreview_core::Error::Internal(Box::new(error)), htmx))?;
    Ok(axum::response::Html(html).into_response())
}
