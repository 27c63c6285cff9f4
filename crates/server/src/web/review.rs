//! The review screen (`/reviews/{reviewId}`): the chosen version in a sandboxed frame on the
//! left, its comments on the right (the panel, `panel.rs`), and the fragments htmx loads (the
//! versions with their anchor counts, the changes since the previous version).
//!
//! The document itself comes from the view endpoint with the frame's policy
//! ([`Policy::DocumentView`]): the page can reach its DOM to draw highlights; its scripts never
//! run, also when the URL is opened directly.

use docreview_api::{ReviewView, RunView, VersionView};

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use docreview_core::model::{RunStatus, Section};
use docreview_core::service::{TextChange, TextChangeKind, VersionCounts};

use crate::AppState;
use crate::headers::Policy;
use crate::web::error::WebError;
use crate::web::extract::{SignedIn, is_htmx};
use crate::web::layout::{Layout, Nav};
use crate::web::panel::{self, Panel, ScreenQuery, build_panel, chosen_version};
use crate::web::settings::Offered;
use crate::web::threads;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/reviews/{review_id}", get(page))
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
        .merge(panel::router())
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
