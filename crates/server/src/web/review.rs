//! The review screen (`/reviews/{reviewId}`): the chosen version in a sandboxed frame on the
//! left, its comments on the right (the panel, `panel.rs`), and the fragments htmx loads (the
//! versions with their anchor counts, the changes since the previous version).
//!
//! The document itself comes from the view endpoint with the frame's policy
//! ([`Policy::DocumentView`]): the page can reach its DOM to draw highlights; its scripts never
//! run, also when the URL is opened directly.

use docreview_api::{FinishRun, ReviewView, RunView, VersionView};

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use docreview_core::model::{RunStatus, Section};
use docreview_core::service::{TextChange, TextChangeKind, VersionCounts};

use crate::AppState;
use crate::headers::Policy;
use crate::web::error::WebError;
use crate::web::extract::{CsrfForm, OnReview, SignedIn};
use crate::web::htmx::Htmx;
use crate::web::layout::{Layout, Nav};
use crate::web::panel::{self, Panel, ScreenQuery, build_panel, chosen_version};
use crate::web::paths;
use crate::web::settings::Offered;
use crate::web::threads;
use crate::web::workflow::ReviewBar;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::review, get(page))
        .route(paths::route::review_versions, get(versions))
        .route(paths::route::version_view, get(document_view))
        .route(paths::route::version_changes, get(changes))
        .route(paths::route::runs_menu, get(runs_menu))
        .route(paths::route::run_cancel, post(cancel_run))
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
    runs: RunsMenu,
    images: ImagesNotice,
    /// What the Settings and Share dialogs offer the caller.
    manage: Offered,
    /// The review bar (outcome, reviewers, decisions, finalizing).
    bar: ReviewBar,
    /// Whether the caller may finalize or reopen (the finalized banner says how to write again).
    manage_finalize: bool,
    /// Comments can be written here: the latest version of a review not finalized.
    writable: bool,
}

/// The images of the version shown that its readers will not see, said once above the document
/// with what to do (`docs/web.md`, "Images").
struct ImagesNotice {
    /// Paths to files that were not uploaded with the HTML.
    missing: Vec<String>,
    /// Pictures on other sites.
    elsewhere: Vec<String>,
}

impl ImagesNotice {
    fn of(images: Vec<docreview_core::texts::UnshownImage>) -> ImagesNotice {
        let (elsewhere, missing) = images.into_iter().partition::<Vec<_>, _>(|i| i.elsewhere);
        ImagesNotice {
            missing: missing.into_iter().map(|i| i.src).collect(),
            elsewhere: elsewhere.into_iter().map(|i| i.src).collect(),
        }
    }

    fn count(&self) -> usize {
        self.missing.len() + self.elsewhere.len()
    }
}

/// The Runs menu: each run with its state, and "Cancel run" on a running one.
#[derive(Template)]
#[template(path = "review/runs_menu.html")]
struct RunsMenu {
    review_id: String,
    runs: Vec<RunView>,
}

#[allow(
    clippy::unused_self,
    reason = "called by the askama template as a method of its context"
)]
impl RunsMenu {
    fn is_running(&self, run: &RunView) -> bool {
        run.status == RunStatus::Running
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
    let images = ImagesNotice::of(
        state
            .service
            .unshown_images(&signed_in.actor, &review_id, &version.version_id)
            .await
            .map_err(core)?,
    );
    let previous_label = index
        .checked_sub(1)
        .map(|at| review.source.versions[at].label.clone());
    let bar = ReviewBar::of(&signed_in.actor, &review);
    let page = ReviewPage {
        writable: panel.is_latest && !bar.finalized(),
        manage_finalize: bar.may_finalize(),
        bar,
        layout: Layout::for_user(&review.title, Nav::Documents, &signed_in)
            .with_body_class("review-screen"),
        manage: Offered::of(&signed_in.actor, review.role),
        version_number: index + 1,
        images,
        runs: RunsMenu {
            review_id: review.review_id.clone(),
            runs: review.ai_review_runs.clone(),
        },
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
    /// The page's filters, which a version's link keeps.
    query: ScreenQuery,
}

impl VersionsFragment {
    fn version_url(&self, version_id: &str) -> String {
        ScreenQuery {
            version: (version_id != self.latest).then(|| version_id.to_string()),
            ..self.query.clone()
        }
        .page_url(&self.review_id)
    }
}

/// The versions with how many comments each holds exactly, approximately or not at all.
async fn versions(
    State(state): State<AppState>,
    OnReview {
        signed_in,
        htmx,
        review_id,
    }: OnReview,
) -> Result<Response, WebError> {
    let core = |error| htmx.core(error);
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
    let query = ScreenQuery::of_current_page(&htmx);
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
    let fragment = VersionsFragment {
        review_id,
        current,
        rows,
        latest: review.latest_version_id,
        query,
    };
    htmx.fragment(&fragment)
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
    OnReview {
        signed_in,
        htmx,
        review_id,
    }: OnReview,
    Path((_, version_id)): Path<(String, String)>,
) -> Result<Response, WebError> {
    let changes = state
        .service
        .version_changes(&signed_in.actor, &review_id, &version_id)
        .await
        .map_err(|error| htmx.core(error))?;
    let fragment = ChangesFragment {
        changes: ShownChange::list(changes),
    };
    htmx.fragment(&fragment)
}

/// Cancels a running run from the Runs menu (the core decides who may); answers the menu as it
/// now stands. Its draft comments leave the panel through the live update every change brings.
async fn cancel_run(
    State(state): State<AppState>,
    OnReview {
        signed_in,
        htmx,
        review_id,
    }: OnReview,
    Path((_, run_id)): Path<(String, String)>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> Result<Response, WebError> {
    let core = |error| htmx.core(error);
    let cancel = FinishRun {
        status: RunStatus::Cancelled,
        summary: None,
        base_comments_revision: None,
    };
    state
        .service
        .finish_run(&signed_in.actor, &review_id, &run_id, cancel)
        .await
        .map_err(core)?;
    runs_menu_of(&state, &signed_in, review_id, &htmx).await
}

/// The Runs menu as it stands.
async fn runs_menu(
    State(state): State<AppState>,
    OnReview {
        signed_in,
        htmx,
        review_id,
    }: OnReview,
) -> Result<Response, WebError> {
    runs_menu_of(&state, &signed_in, review_id, &htmx).await
}

async fn runs_menu_of(
    state: &AppState,
    signed_in: &SignedIn,
    review_id: String,
    htmx: &Htmx,
) -> Result<Response, WebError> {
    let review = state
        .service
        .get_review(&signed_in.actor, &review_id, false)
        .await
        .map_err(|error| htmx.core(error))?;
    htmx.fragment(&RunsMenu {
        review_id,
        runs: review.ai_review_runs,
    })
}
