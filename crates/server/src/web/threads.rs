//! The review screen's writes: new comments, replies, edits, undo, resolve and reopen. Each
//! calls the same core use case as the API and answers with an update of the panel
//! ([`crate::web::panel`]): the thread written as it now stands and the counts, never the
//! whole panel (a new version under a new comment is the one exception).
//!
//! A form on a thread carries the thread's revision as its card showed it (`thread`), which
//! the core checks inside the write (the API's `baseThreadRevision`): someone else's change
//! elsewhere does not make the person's write wrong, but a change to that thread comes back
//! (409 `thread revision conflict`) as the panel with the person's text re-offered next to
//! what changed. A new comment carries the revision its panel showed (`base`); one on a
//! version that is no longer the latest (409 `stale_target_version`) comes back to the
//! composer, which finds the passage in the new version.

use axum::Router;
use axum::extract::{FromRequestParts, Path};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use docreview_api::{NewComment, NewReply, Position, Quote, StatusChange, TextEdit};
use docreview_core::Error;
use docreview_core::anchor::Locator;
use docreview_core::model::{Category, CommentStatus};
use docreview_core::service::WriteBase;
use serde::Deserialize;

use crate::AppState;
use crate::web::error::WebError;
use crate::web::extract::{CsrfForm, OnReview, SignedIn, empty_as_none};
use crate::web::htmx::{Htmx, HxTrigger};
use crate::web::panel::{ScreenQuery, load_panel};
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::comments, post(create))
        .route(paths::route::comment_replies, post(reply))
        .route(paths::route::comment_status, post(status))
        .route(paths::route::comment_edit, post(edit))
        .route(paths::route::comment_cancel, post(cancel))
        .route(paths::route::reply_edit, post(edit_reply))
        .route(paths::route::reply_cancel, post(cancel_reply))
        .route(paths::route::comment_apply, post(apply))
        .route(paths::route::comment_reactions, post(react))
        .route(paths::route::reply_reactions, post(react_to_reply))
}

/// A refused write, offered again: the thread it was for, which form, the text typed, and why.
#[derive(Debug, Clone)]
pub struct Offer {
    pub comment_id: String,
    /// `reply`, `edit`, `status` or `cancel`.
    pub kind: &'static str,
    /// The reply it was for (an edit of a reply), else the comment itself.
    pub message_id: Option<String>,
    pub text: String,
    pub notice: String,
}

impl Offer {
    /// An edit of the comment (`message_id` none) or of one of its replies, made again.
    fn edit(comment_id: String, message_id: Option<String>, text: String) -> Offer {
        Offer {
            comment_id,
            message_id,
            kind: "edit",
            text,
            notice: "This thread changed while you edited. Check it, then save your edit again."
                .into(),
        }
    }
}

struct Context {
    state: AppState,
    signed_in: SignedIn,
    review_id: String,
    query: ScreenQuery,
    htmx: Htmx,
}

impl FromRequestParts<AppState> for Context {
    type Rejection = WebError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let on = OnReview::from_request_parts(parts, state).await?;
        Ok(Context {
            state: state.clone(),
            signed_in: on.signed_in,
            review_id: on.review_id,
            query: ScreenQuery::of_current_page(&on.htmx),
            htmx: on.htmx,
        })
    }
}

impl Context {
    fn core(&self, error: Error) -> WebError {
        self.htmx.core(error)
    }

    /// The thread `comment_id` as it now stands, with the counts (after a write succeeded).
    async fn answer(self, comment_id: &str) -> Result<Response, WebError> {
        let panel = load_panel(
            &self.state,
            &self.signed_in,
            &self.review_id,
            self.query.holding([comment_id]),
            None,
            &self.htmx,
        )
        .await?;
        self.htmx.fragment(&panel.update_of(&[comment_id], true))
    }

    /// 409 with the thread as it now stands and the person's action re-offered.
    async fn reoffer(self, offer: Offer) -> Result<Response, WebError> {
        let comment_id = offer.comment_id.clone();
        let panel = load_panel(
            &self.state,
            &self.signed_in,
            &self.review_id,
            self.query.holding([comment_id.as_str()]),
            Some(offer),
            &self.htmx,
        )
        .await?;
        let mut response = self
            .htmx
            .fragment(&panel.update_of(&[comment_id.as_str()], true))?;
        *response.status_mut() = StatusCode::CONFLICT;
        Ok(response)
    }

    /// The answer to a write on a thread: the thread as it now stands, or, when the thread
    /// changed under the person (409 `thread revision conflict`), `offer` made again beside it.
    async fn settle<T>(
        self,
        outcome: Result<T, Error>,
        offer: Offer,
    ) -> Result<Response, WebError> {
        match outcome {
            Ok(_) => self.answer(&offer.comment_id).await,
            Err(Error::ThreadConflict { .. }) => self.reoffer(offer).await,
            Err(error) => Err(self.core(error)),
        }
    }

    /// 409 with the whole panel and the new comment re-offered (the document has a new version).
    async fn reoffer_whole(self, offer: Offer) -> Result<Response, WebError> {
        let panel = load_panel(
            &self.state,
            &self.signed_in,
            &self.review_id,
            self.query,
            Some(offer),
            &self.htmx,
        )
        .await?;
        let mut response = self.htmx.fragment(&panel)?;
        *response.status_mut() = StatusCode::CONFLICT;
        Ok(response)
    }
}

/// A form field that may be sent empty.
fn present(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}

#[derive(Deserialize)]
struct CommentForm {
    body: String,
    category: Option<String>,
    exact: Option<String>,
    prefix: Option<String>,
    suffix: Option<String>,
    #[serde(default, deserialize_with = "empty_as_none")]
    start: Option<usize>,
    #[serde(default, deserialize_with = "empty_as_none")]
    end: Option<usize>,
    version: Option<String>,
    section: Option<String>,
    #[serde(default, deserialize_with = "empty_as_none")]
    base: Option<i64>,
}

impl CommentForm {
    fn locator(&self) -> Option<Locator> {
        let quote = present(self.exact.clone()).map(|exact| Quote {
            exact,
            prefix: self.prefix.clone().unwrap_or_default(),
            suffix: self.suffix.clone().unwrap_or_default(),
        });
        let position = match (self.start, self.end) {
            (Some(start), Some(end)) if quote.is_some() => Some(Position { start, end }),
            _ => None,
        };
        let section_id = present(self.section.clone());
        if quote.is_none() && section_id.is_none() {
            return None;
        }
        Some(Locator {
            version_id: present(self.version.clone()),
            section_id,
            quote,
            position,
        })
    }

    fn new_comment(&self, base: Option<i64>) -> Result<NewComment, Error> {
        let category = match self.category.as_deref().filter(|c| !c.is_empty()) {
            Some(word) => Some(Category::from_word(word).map_err(Error::invalid)?),
            None => None,
        };
        Ok(NewComment {
            body: self.body.clone(),
            category,
            locator: self.locator(),
            base_comments_revision: base,
            suggestion: None,
        })
    }
}

async fn create(
    mut context: Context,
    CsrfForm(form): CsrfForm<CommentForm>,
) -> Result<Response, WebError> {
    let service = &context.state.service;
    let actor = &context.signed_in.actor;
    let first = form.new_comment(form.base).map_err(|e| context.core(e))?;
    let outcome = match service.add_comment(actor, &context.review_id, first).await {
        // A new thread cannot overwrite anything written meanwhile: apply it to what is current.
        Err(Error::RevisionConflict { .. }) => {
            let again = form.new_comment(None).map_err(|e| context.core(e))?;
            service.add_comment(actor, &context.review_id, again).await
        }
        other => other,
    };
    match outcome {
        Ok(written) => context.answer(&written.comment.id).await,
        Err(Error::StaleVersion { latest }) => {
            // Back to the composer: the panel of the latest version, and where it is.
            context.query.version = None;
            let response = context
                .reoffer_whole(Offer {
                    comment_id: String::new(),
                    message_id: None,
                    kind: "composer",
                    text: form.body,
                    notice: String::new(),
                })
                .await?;
            let trigger = serde_json::json!({ "stale-version": { "latest": latest } });
            Ok((HxTrigger(trigger), response).into_response())
        }
        Err(error) => Err(context.core(error)),
    }
}

/// A reply or an edit: the text, and the thread's revision as its card showed it.
#[derive(Deserialize)]
struct TextForm {
    body: String,
    #[serde(default, deserialize_with = "empty_as_none")]
    thread: Option<i64>,
}

async fn reply(
    context: Context,
    Path((_, comment_id)): Path<(String, String)>,
    CsrfForm(form): CsrfForm<TextForm>,
) -> Result<Response, WebError> {
    let input = NewReply {
        body: form.body.clone(),
        run_id: None,
        base_comments_revision: None,
        base_thread_revision: form.thread,
    };
    let outcome = context
        .state
        .service
        .reply(
            &context.signed_in.actor,
            &context.review_id,
            &comment_id,
            input,
        )
        .await;
    let offer = Offer {
        comment_id,
        message_id: None,
        kind: "reply",
        text: form.body,
        notice: "This thread changed while you wrote. Read what is new, then send \
                  your reply again."
            .into(),
    };
    context.settle(outcome, offer).await
}

#[derive(Deserialize)]
struct StatusForm {
    status: String,
    #[serde(default, deserialize_with = "empty_as_none")]
    thread: Option<i64>,
}

async fn status(
    context: Context,
    Path((_, comment_id)): Path<(String, String)>,
    CsrfForm(form): CsrfForm<StatusForm>,
) -> Result<Response, WebError> {
    let target = CommentStatus::parse(&form.status)
        .ok_or_else(|| context.core(Error::invalid("status must be open or closed")))?;
    let input = StatusChange {
        status: target,
        base_comments_revision: None,
        base_thread_revision: form.thread,
    };
    let outcome = context
        .state
        .service
        .set_status(
            &context.signed_in.actor,
            &context.review_id,
            &comment_id,
            input,
        )
        .await;
    let (resolve, resolved) = if target == CommentStatus::Closed {
        ("resolve", "resolved")
    } else {
        ("reopen", "open")
    };
    let notice = match outcome {
        Ok(_) => return context.answer(&comment_id).await,
        Err(Error::ThreadConflict { .. }) => format!(
            "This thread changed while you looked at it. Read what is new, then {resolve} it \
             again if you still want to."
        ),
        Err(Error::InvalidTransition(_)) => {
            format!("Someone else already made this thread {resolved}.")
        }
        Err(error) => return Err(context.core(error)),
    };
    context
        .reoffer(Offer {
            comment_id,
            message_id: None,
            kind: "status",
            text: String::new(),
            notice,
        })
        .await
}

async fn edit(
    context: Context,
    Path((_, comment_id)): Path<(String, String)>,
    CsrfForm(form): CsrfForm<TextForm>,
) -> Result<Response, WebError> {
    let input = TextEdit {
        body: form.body.clone(),
        base_comments_revision: None,
        base_thread_revision: form.thread,
    };
    let outcome = context
        .state
        .service
        .edit_comment(
            &context.signed_in.actor,
            &context.review_id,
            &comment_id,
            input,
        )
        .await;
    context
        .settle(outcome, Offer::edit(comment_id, None, form.body))
        .await
}

/// Undo: cancels a provisional comment of one's own (the core refuses a final one).
async fn cancel(
    context: Context,
    Path((_, comment_id)): Path<(String, String)>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> Result<Response, WebError> {
    context
        .state
        .service
        .cancel_comment(
            &context.signed_in.actor,
            &context.review_id,
            &comment_id,
            WriteBase::default(),
        )
        .await
        .map_err(|error| context.core(error))?;
    context.answer(&comment_id).await
}

/// An edit of one's own reply, checked against its thread like an edit of the comment.
async fn edit_reply(
    context: Context,
    Path((_, comment_id, message_id)): Path<(String, String, String)>,
    CsrfForm(form): CsrfForm<TextForm>,
) -> Result<Response, WebError> {
    let edit = TextEdit {
        body: form.body.clone(),
        base_comments_revision: None,
        base_thread_revision: form.thread,
    };
    let outcome = context
        .state
        .service
        .edit_reply(
            &context.signed_in.actor,
            &context.review_id,
            &comment_id,
            &message_id,
            edit,
        )
        .await;
    let offer = Offer::edit(comment_id, Some(message_id), form.body);
    context.settle(outcome, offer).await
}

async fn cancel_reply(
    context: Context,
    Path((_, comment_id, message_id)): Path<(String, String, String)>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> Result<Response, WebError> {
    context
        .state
        .service
        .cancel_reply(
            &context.signed_in.actor,
            &context.review_id,
            &comment_id,
            &message_id,
            WriteBase::default(),
        )
        .await
        .map_err(|error| context.core(error))?;
    context.answer(&comment_id).await
}

/// A reaction button: `react` is the emoji's word and whether to add or take it back
/// (`+1 on`, `heart off`), so pressing twice never toggles twice.
#[derive(Deserialize)]
struct ReactionForm {
    #[serde(default)]
    react: String,
}

async fn react(
    context: Context,
    Path((_, comment_id)): Path<(String, String)>,
    CsrfForm(form): CsrfForm<ReactionForm>,
) -> Result<Response, WebError> {
    reaction(context, comment_id, None, &form.react).await
}

async fn react_to_reply(
    context: Context,
    Path((_, comment_id, message_id)): Path<(String, String, String)>,
    CsrfForm(form): CsrfForm<ReactionForm>,
) -> Result<Response, WebError> {
    reaction(context, comment_id, Some(message_id), &form.react).await
}

/// Adds or takes back a reaction (the core checks the emoji and the item), then answers with
/// the thread as it now stands, like every write of the panel.
async fn reaction(
    context: Context,
    comment_id: String,
    message_id: Option<String>,
    react: &str,
) -> Result<Response, WebError> {
    let (emoji, on) = match react.rsplit_once(' ') {
        Some((emoji, "on")) => (emoji, true),
        Some((emoji, "off")) => (emoji, false),
        _ => {
            return Err(context.core(Error::invalid(
                "a reaction is an emoji's word and on or off",
            )));
        }
    };
    let outcome = context
        .state
        .service
        .react(
            &context.signed_in.actor,
            &context.review_id,
            &comment_id,
            message_id.as_deref(),
            emoji,
            on,
        )
        .await;
    match outcome {
        Ok(_) => context.answer(&comment_id).await,
        Err(error) => Err(context.core(error)),
    }
}

#[derive(Deserialize)]
struct ApplyForm {
    /// The version the panel showed (the latest, or the core refuses with 409).
    #[serde(default)]
    base: String,
}

/// "Apply" on a suggestion: the core makes a new version with it (and closes the thread); the
/// screen goes to that version. A refusal (not an editor, the passage changed, a newer
/// version) comes back as the app's notice.
async fn apply(
    context: Context,
    Path((_, comment_id)): Path<(String, String)>,
    CsrfForm(form): CsrfForm<ApplyForm>,
) -> Result<Response, WebError> {
    let input = docreview_api::ApplySuggestions {
        comment_ids: vec![comment_id],
        base_version_id: form.base,
        label: None,
    };
    match context
        .state
        .service
        .apply_suggestions(&context.signed_in.actor, &context.review_id, input)
        .await
    {
        Ok(applied) => Ok((
            crate::web::htmx::HxRedirect(paths::review(&applied.review.review_id)),
            "",
        )
            .into_response()),
        Err(error) => Err(context.core(error)),
    }
}
