//! The review screen's writes: new comments, replies, edits, undo, resolve and reopen. Each
//! calls the same core use case as the API and answers with an update of the panel
//! ([`crate::web::panel`]): the thread written as it now stands and the counts, never the
//! whole panel (a new version under a new comment is the one exception).
//!
//! Every form carries the revision its panel showed (`base`) and a fingerprint of its thread
//! (`seen`). When the core refuses with 409 `comments revision conflict`, the write is applied
//! again if the thread the person was looking at did not change (someone else's change
//! elsewhere does not make theirs wrong); otherwise the panel comes back with the person's
//! text re-offered next to what changed. A comment on a version that is no longer the latest
//! (409 `stale_target_version`) comes back to the composer, which finds the passage in the
//! new version.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::post;
use docreview_api::{CommentView, NewComment, NewReply, Position, Quote, StatusChange, TextEdit};
use docreview_core::Error;
use docreview_core::anchor::Locator;
use docreview_core::model::{Category, CommentStatus};
use serde::Deserialize;

use crate::AppState;
use crate::web::error::WebError;
use crate::web::extract::{CsrfForm, SignedIn, empty_as_none, is_htmx};
use crate::web::panel::{ScreenQuery, load_panel};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/reviews/{review_id}/comments", post(create))
        .route(
            "/reviews/{review_id}/comments/{comment_id}/replies",
            post(reply),
        )
        .route(
            "/reviews/{review_id}/comments/{comment_id}/status",
            post(status),
        )
        .route(
            "/reviews/{review_id}/comments/{comment_id}/edit",
            post(edit),
        )
        .route(
            "/reviews/{review_id}/comments/{comment_id}/cancel",
            post(cancel),
        )
        .route(
            "/reviews/{review_id}/comments/{comment_id}/replies/{message_id}/edit",
            post(edit_reply),
        )
        .route(
            "/reviews/{review_id}/comments/{comment_id}/replies/{message_id}/cancel",
            post(cancel_reply),
        )
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

/// A fingerprint of what a thread shows: its status, body and messages.
pub fn stamp_of(comment: &CommentView) -> String {
    let mut text = format!(
        "{}\u{0}{}\u{0}{:?}",
        comment.status, comment.body, comment.edited_ts
    );
    for message in &comment.thread {
        text.push_str(&format!(
            "\u{0}{}\u{0}{:?}\u{0}{}",
            message.id, message.edited_ts, message.body
        ));
    }
    docreview_core::identity::sha256(text.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

struct Context {
    state: AppState,
    signed_in: SignedIn,
    review_id: String,
    query: ScreenQuery,
    htmx: bool,
}

impl Context {
    fn new(state: AppState, signed_in: SignedIn, headers: &HeaderMap, review_id: String) -> Self {
        Context {
            state,
            signed_in,
            review_id,
            query: ScreenQuery::of_current_page(headers),
            htmx: is_htmx(headers),
        }
    }

    fn core(&self, error: Error) -> WebError {
        WebError::core(error, self.htmx)
    }

    /// The thread `comment_id` as it now stands, with the counts (after a write succeeded).
    async fn answer(self, comment_id: &str) -> Result<Response, WebError> {
        load_panel(
            &self.state,
            &self.signed_in,
            &self.review_id,
            self.query.holding([comment_id]),
            None,
            self.htmx,
        )
        .await?
        .update_of(&[comment_id], true)
        .respond(self.htmx)
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
            self.htmx,
        )
        .await?;
        let mut response = panel
            .update_of(&[comment_id.as_str()], true)
            .respond(self.htmx)?;
        *response.status_mut() = StatusCode::CONFLICT;
        Ok(response)
    }

    /// 409 with the whole panel and the new comment re-offered (the document has a new version).
    async fn reoffer_whole(self, offer: Offer) -> Result<Response, WebError> {
        let mut response = load_panel(
            &self.state,
            &self.signed_in,
            &self.review_id,
            self.query,
            Some(offer),
            self.htmx,
        )
        .await?
        .respond(self.htmx)?;
        *response.status_mut() = StatusCode::CONFLICT;
        Ok(response)
    }

    /// The thread as it stands now, if it still exists.
    async fn thread_now(&self, comment_id: &str) -> Result<Option<CommentView>, WebError> {
        let review = self
            .state
            .service
            .get_review(&self.signed_in.actor, &self.review_id, false)
            .await
            .map_err(|error| self.core(error))?;
        Ok(review.comments.into_iter().find(|c| c.id == comment_id))
    }

    /// Whether the thread still shows what the person saw when they wrote.
    async fn unchanged(&self, comment_id: &str, seen: &str) -> Result<bool, WebError> {
        Ok(self
            .thread_now(comment_id)
            .await?
            .is_some_and(|thread| stamp_of(&thread) == seen))
    }

    /// Runs a write on a thread with the page's base revision. When the revision moved but the
    /// thread still shows what the person saw (another thread changed), the write is applied to
    /// what is current; when the thread itself changed, the person decides again.
    async fn guarded<T, F>(
        &self,
        comment_id: &str,
        base: Option<i64>,
        seen: &str,
        write: impl Fn(Option<i64>) -> F,
    ) -> Result<Guarded<T>, WebError>
    where
        F: Future<Output = Result<T, Error>>,
    {
        match write(base).await {
            Err(Error::RevisionConflict { .. }) => {
                if self.unchanged(comment_id, seen).await? {
                    Ok(Guarded::Written(write(None).await))
                } else {
                    Ok(Guarded::ThreadChanged)
                }
            }
            outcome => Ok(Guarded::Written(outcome)),
        }
    }
}

/// The outcome of [`Context::guarded`].
enum Guarded<T> {
    Written(Result<T, Error>),
    ThreadChanged,
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
        })
    }
}

async fn create(
    State(state): State<AppState>,
    signed_in: SignedIn,
    headers: HeaderMap,
    Path(review_id): Path<String>,
    CsrfForm(form): CsrfForm<CommentForm>,
) -> Result<Response, WebError> {
    let mut context = Context::new(state, signed_in, &headers, review_id);
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
            let mut response = context
                .reoffer_whole(Offer {
                    comment_id: String::new(),
                    message_id: None,
                    kind: "composer",
                    text: form.body,
                    notice: String::new(),
                })
                .await?;
            let trigger = serde_json::json!({ "stale-version": { "latest": latest } });
            if let Ok(value) = HeaderValue::from_str(&trigger.to_string()) {
                response.headers_mut().insert("hx-trigger", value);
            }
            Ok(response)
        }
        Err(error) => Err(context.core(error)),
    }
}

/// A reply or an edit: the text, the revision the page showed, and the thread's stamp.
#[derive(Deserialize)]
struct TextForm {
    body: String,
    #[serde(default, deserialize_with = "empty_as_none")]
    base: Option<i64>,
    #[serde(default)]
    seen: String,
}

async fn reply(
    State(state): State<AppState>,
    signed_in: SignedIn,
    headers: HeaderMap,
    Path((review_id, comment_id)): Path<(String, String)>,
    CsrfForm(form): CsrfForm<TextForm>,
) -> Result<Response, WebError> {
    let context = Context::new(state, signed_in, &headers, review_id);
    let write = |base| NewReply {
        body: form.body.clone(),
        run_id: None,
        base_comments_revision: base,
    };
    let service = &context.state.service;
    let actor = &context.signed_in.actor;
    let (review_id, comment, write) = (&context.review_id, comment_id.as_str(), &write);
    let reply = move |base| service.reply(actor, review_id, comment, write(base));
    match context
        .guarded(&comment_id, form.base, &form.seen, reply)
        .await?
    {
        Guarded::Written(outcome) => outcome.map_err(|error| context.core(error))?,
        Guarded::ThreadChanged => {
            return context
                .reoffer(Offer {
                    comment_id,
                    message_id: None,
                    kind: "reply",
                    text: form.body,
                    notice: "This thread changed while you wrote. Read what is new, then send \
                             your reply again."
                        .into(),
                })
                .await;
        }
    };
    context.answer(&comment_id).await
}

#[derive(Deserialize)]
struct StatusForm {
    status: String,
    #[serde(default, deserialize_with = "empty_as_none")]
    base: Option<i64>,
    #[serde(default)]
    seen: String,
}

async fn status(
    State(state): State<AppState>,
    signed_in: SignedIn,
    headers: HeaderMap,
    Path((review_id, comment_id)): Path<(String, String)>,
    CsrfForm(form): CsrfForm<StatusForm>,
) -> Result<Response, WebError> {
    let context = Context::new(state, signed_in, &headers, review_id);
    let target = CommentStatus::parse(&form.status)
        .ok_or_else(|| context.core(Error::invalid("status must be open or closed")))?;
    let write = |base| StatusChange {
        status: target,
        base_comments_revision: base,
    };
    let service = &context.state.service;
    let actor = &context.signed_in.actor;
    let (review_id, comment, write) = (&context.review_id, comment_id.as_str(), &write);
    let set = move |base| service.set_status(actor, review_id, comment, write(base));
    let outcome = match context
        .guarded(&comment_id, form.base, &form.seen, set)
        .await?
    {
        Guarded::Written(outcome) => outcome,
        Guarded::ThreadChanged => {
            let verb = if target == CommentStatus::Closed {
                "resolve"
            } else {
                "reopen"
            };
            return context
                .reoffer(Offer {
                    comment_id,
                    message_id: None,
                    kind: "status",
                    text: String::new(),
                    notice: format!(
                        "This thread changed while you looked at it. Read what is new, then \
                         {verb} it again if you still want to."
                    ),
                })
                .await;
        }
    };
    match outcome {
        Ok(_) => context.answer(&comment_id).await,
        Err(Error::InvalidTransition(_)) => {
            let word = if target == CommentStatus::Closed {
                "resolved"
            } else {
                "open"
            };
            context
                .reoffer(Offer {
                    comment_id,
                    message_id: None,
                    kind: "status",
                    text: String::new(),
                    notice: format!("Someone else already made this thread {word}."),
                })
                .await
        }
        Err(error) => Err(context.core(error)),
    }
}

async fn edit(
    State(state): State<AppState>,
    signed_in: SignedIn,
    headers: HeaderMap,
    Path((review_id, comment_id)): Path<(String, String)>,
    CsrfForm(form): CsrfForm<TextForm>,
) -> Result<Response, WebError> {
    let context = Context::new(state, signed_in, &headers, review_id);
    let write = |base| TextEdit {
        body: form.body.clone(),
        base_comments_revision: base,
    };
    let service = &context.state.service;
    let actor = &context.signed_in.actor;
    let (review_id, comment, write) = (&context.review_id, comment_id.as_str(), &write);
    let edit = move |base| service.edit_comment(actor, review_id, comment, write(base));
    match context
        .guarded(&comment_id, form.base, &form.seen, edit)
        .await?
    {
        Guarded::Written(outcome) => outcome.map_err(|error| context.core(error))?,
        Guarded::ThreadChanged => {
            return context
                .reoffer(Offer {
                    comment_id,
                    message_id: None,
                    kind: "edit",
                    text: form.body,
                    notice: "This thread changed while you edited. Check it, then save your \
                             edit again."
                        .into(),
                })
                .await;
        }
    };
    context.answer(&comment_id).await
}

/// Undo: cancels a provisional comment of one's own (the core refuses a final one).
async fn cancel(
    State(state): State<AppState>,
    signed_in: SignedIn,
    headers: HeaderMap,
    Path((review_id, comment_id)): Path<(String, String)>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> Result<Response, WebError> {
    let context = Context::new(state, signed_in, &headers, review_id);
    context
        .state
        .service
        .cancel_comment(
            &context.signed_in.actor,
            &context.review_id,
            &comment_id,
            None,
        )
        .await
        .map_err(|error| context.core(error))?;
    context.answer(&comment_id).await
}

/// An edit of one's own reply, guarded like an edit of the comment (see [`Context::guarded`]).
async fn edit_reply(
    State(state): State<AppState>,
    signed_in: SignedIn,
    headers: HeaderMap,
    Path((review_id, comment_id, message_id)): Path<(String, String, String)>,
    CsrfForm(form): CsrfForm<TextForm>,
) -> Result<Response, WebError> {
    let context = Context::new(state, signed_in, &headers, review_id);
    let write = |base| TextEdit {
        body: form.body.clone(),
        base_comments_revision: base,
    };
    let service = &context.state.service;
    let actor = &context.signed_in.actor;
    let (review_id, comment, message, write) = (
        &context.review_id,
        comment_id.as_str(),
        message_id.as_str(),
        &write,
    );
    let edit = move |base| service.edit_reply(actor, review_id, comment, message, write(base));
    match context
        .guarded(&comment_id, form.base, &form.seen, edit)
        .await?
    {
        Guarded::Written(outcome) => outcome.map_err(|error| context.core(error))?,
        Guarded::ThreadChanged => {
            return context
                .reoffer(Offer {
                    comment_id,
                    kind: "edit",
                    message_id: Some(message_id),
                    text: form.body,
                    notice: "This thread changed while you edited. Check it, then save your \
                             edit again."
                        .into(),
                })
                .await;
        }
    };
    context.answer(&comment_id).await
}

async fn cancel_reply(
    State(state): State<AppState>,
    signed_in: SignedIn,
    headers: HeaderMap,
    Path((review_id, comment_id, message_id)): Path<(String, String, String)>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> Result<Response, WebError> {
    let context = Context::new(state, signed_in, &headers, review_id);
    context
        .state
        .service
        .cancel_reply(
            &context.signed_in.actor,
            &context.review_id,
            &comment_id,
            &message_id,
            None,
        )
        .await
        .map_err(|error| context.core(error))?;
    context.answer(&comment_id).await
}
