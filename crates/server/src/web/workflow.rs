//! The review bar at the top of the review screen (DESIGN.md §8.4): the outcome, the people
//! asked to review with their due dates and decisions (a stale one marked), the caller's own
//! decision with an optional note, asking someone to review (editors), and finalizing or
//! reopening (editors). Each write calls the core's workflow use case, which decides
//! everything, and answers with the bar as it now stands; a refusal (409
//! `open_comments_remain` with how many, a person who cannot read the document, …) is said
//! inside the bar, next to the form it was for. Finalizing and reopening change the whole
//! screen (the banner, the composer), so they reload the page instead.

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use docreview_api::{
    DecisionKind, NewDecision, NewReviewer, Outcome, ReviewView, WorkflowState, WorkflowView,
};
use docreview_core::access::{self, Actor, DocumentAction};
use serde::Deserialize;

use crate::AppState;
use crate::web::error::WebError;
use crate::web::extract::{CsrfForm, OnReview};
use crate::web::htmx::HxRedirect;
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::review_bar, get(bar))
        .route(paths::route::review_decisions, post(decide))
        .route(paths::route::review_reviewers, post(request_reviewer))
        .route(paths::route::review_finalize, post(finalize))
        .route(paths::route::review_reopen, post(reopen))
}

/// The bar, as the page and every write of the bar render it.
#[derive(Template)]
#[template(path = "review/bar.html")]
pub struct ReviewBar {
    review_id: String,
    workflow: WorkflowView,
    /// The caller's own current decision, to show it chosen.
    mine: Option<DecisionKind>,
    may_request: bool,
    may_finalize: bool,
    /// A refused write: which form (`decide`, `request`, `finalize`) and what the core said.
    refusal: Option<(&'static str, String)>,
}

impl ReviewBar {
    pub fn of(actor: &Actor, review: &ReviewView) -> ReviewBar {
        let mine = review
            .workflow
            .decisions
            .iter()
            .find(|decision| decision.user.id == actor.id())
            .map(|decision| decision.decision);
        ReviewBar {
            review_id: review.review_id.clone(),
            workflow: review.workflow.clone(),
            mine,
            may_request: access::may(actor, review.role, DocumentAction::RequestReview),
            may_finalize: access::may(actor, review.role, DocumentAction::Finalize),
            refusal: None,
        }
    }

    pub fn may_finalize(&self) -> bool {
        self.may_finalize
    }

    pub fn finalized(&self) -> bool {
        self.workflow.state == WorkflowState::Finalized
    }

    fn outcome(&self) -> &'static str {
        match self.workflow.outcome {
            Outcome::ChangesRequested => "Changes requested",
            Outcome::ApprovedWithChanges => "Approved with changes",
            Outcome::Approved => "Approved",
            Outcome::NotRelevant => "Not relevant",
            Outcome::Pending => "Pending",
        }
    }

    fn outcome_word(&self) -> &'static str {
        self.workflow.outcome.as_str()
    }

    #[allow(
        clippy::unused_self,
        clippy::trivially_copy_pass_by_ref,
        reason = "called by the askama template, which passes its values by reference"
    )]
    fn label(&self, kind: &DecisionKind) -> &'static str {
        match kind {
            DecisionKind::Approved => "Approved",
            DecisionKind::ApprovedWithChanges => "Approved with changes",
            DecisionKind::ChangesRequested => "Changes requested",
            DecisionKind::NotRelevant => "Not relevant",
        }
    }

    #[allow(
        clippy::unused_self,
        reason = "called by the askama template as a method of its context"
    )]
    fn kinds(&self) -> &'static [DecisionKind] {
        DecisionKind::ALL
    }

    #[allow(
        clippy::trivially_copy_pass_by_ref,
        reason = "called by the askama template, which passes its values by reference"
    )]
    fn is_mine(&self, kind: &DecisionKind) -> bool {
        self.mine == Some(*kind)
    }

    #[allow(
        clippy::unused_self,
        reason = "called by the askama template as a method of its context"
    )]
    fn day(&self, at: &str) -> String {
        at.get(..10).unwrap_or(at).to_string()
    }

    /// The decisions of people nobody asked to review (the reviewers' are on their rows).
    fn others(&self) -> Vec<&docreview_api::DecisionView> {
        self.workflow
            .decisions
            .iter()
            .filter(|decision| {
                !self
                    .workflow
                    .reviewers
                    .iter()
                    .any(|reviewer| reviewer.user.id == decision.user.id)
            })
            .collect()
    }

    fn refused(&self, form: &str) -> Option<&str> {
        self.refusal
            .as_ref()
            .filter(|(which, _)| *which == form)
            .map(|(_, message)| message.as_str())
    }
}

/// The bar as it now stands, with the refusal of a write if there was one.
async fn answer(
    state: &AppState,
    on: &OnReview,
    refusal: Option<(&'static str, docreview_core::Error)>,
) -> Result<Response, WebError> {
    let review = state
        .service
        .get_review(&on.signed_in.actor, &on.review_id, false)
        .await
        .map_err(|error| on.htmx.core(error))?;
    let mut bar = ReviewBar::of(&on.signed_in.actor, &review);
    bar.refusal = refusal.map(|(form, error)| (form, refusal_text(&error)));
    on.htmx.fragment(&bar)
}

fn refusal_text(error: &docreview_core::Error) -> String {
    use docreview_core::Error as E;
    match error {
        E::OpenCommentsRemain(1) => {
            "1 comment is still open. Resolve it before finalizing.".to_string()
        }
        E::OpenCommentsRemain(count) => {
            format!("{count} comments are still open. Resolve them before finalizing.")
        }
        other => {
            let text = other.to_string();
            let mut chars = text.chars();
            chars.next().map_or_else(String::new, |first| {
                format!(
                    "{}{}.",
                    first.to_uppercase(),
                    chars.as_str().trim_end_matches('.')
                )
            })
        }
    }
}

/// Whether a core error is said inside the bar (a refusal the person can act on) rather than
/// as the app's notice (signed out, gone, the service down).
fn in_place(error: &docreview_core::Error) -> bool {
    use docreview_core::Error as E;
    !matches!(error, E::NotFound(_) | E::Internal(_) | E::Unavailable(_))
}

async fn bar(State(state): State<AppState>, on: OnReview) -> Result<Response, WebError> {
    answer(&state, &on, None).await
}

#[derive(Deserialize)]
struct DecisionForm {
    #[serde(default)]
    decision: String,
    #[serde(default)]
    note: String,
}

async fn decide(
    State(state): State<AppState>,
    on: OnReview,
    CsrfForm(form): CsrfForm<DecisionForm>,
) -> Result<Response, WebError> {
    let Some(decision) = DecisionKind::parse(&form.decision) else {
        let error = docreview_core::Error::InvalidRequest("choose a decision".into());
        return answer(&state, &on, Some(("decide", error))).await;
    };
    let input = NewDecision {
        decision,
        version_id: None,
        body: Some(form.note).filter(|note| !note.trim().is_empty()),
    };
    match state
        .service
        .decide(&on.signed_in.actor, &on.review_id, input)
        .await
    {
        Ok(_) => answer(&state, &on, None).await,
        Err(error) if in_place(&error) => answer(&state, &on, Some(("decide", error))).await,
        Err(error) => Err(on.htmx.core(error)),
    }
}

#[derive(Deserialize)]
struct ReviewerForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    due: String,
}

async fn request_reviewer(
    State(state): State<AppState>,
    on: OnReview,
    CsrfForm(form): CsrfForm<ReviewerForm>,
) -> Result<Response, WebError> {
    let input = NewReviewer {
        email: form.email.trim().to_string(),
        due_at: Some(form.due.trim().to_string()).filter(|due| !due.is_empty()),
    };
    match state
        .service
        .add_reviewer(&on.signed_in.actor, &on.review_id, input)
        .await
    {
        Ok(_) => answer(&state, &on, None).await,
        Err(error) if in_place(&error) => answer(&state, &on, Some(("request", error))).await,
        Err(error) => Err(on.htmx.core(error)),
    }
}

/// Finalizing or reopening: the page again (its banner and composer change with the state),
/// or the refusal in the bar.
async fn set_finalized(
    state: &AppState,
    on: &OnReview,
    finalize: bool,
) -> Result<Response, WebError> {
    let actor = &on.signed_in.actor;
    let done = if finalize {
        state.service.finalize(actor, &on.review_id).await
    } else {
        state.service.reopen(actor, &on.review_id).await
    };
    match done {
        Ok(_) => {
            let page = on
                .htmx
                .current_page()
                .map_or_else(|| paths::review(&on.review_id), str::to_string);
            Ok((HxRedirect(page), "").into_response())
        }
        Err(error) if in_place(&error) => answer(state, on, Some(("finalize", error))).await,
        Err(error) => Err(on.htmx.core(error)),
    }
}

#[derive(Deserialize)]
struct Empty {}

async fn finalize(
    State(state): State<AppState>,
    on: OnReview,
    CsrfForm(_): CsrfForm<Empty>,
) -> Result<Response, WebError> {
    set_finalized(&state, &on, true).await
}

async fn reopen(
    State(state): State<AppState>,
    on: OnReview,
    CsrfForm(_): CsrfForm<Empty>,
) -> Result<Response, WebError> {
    set_finalized(&state, &on, false).await
}
