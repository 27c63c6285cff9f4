//! The review screen's comments panel, in one place: which threads it shows for a version and
//! filters ([`ScreenQuery`]), grouped and ordered as the screen shows them ([`build_panel`]), and
//! rendered either whole (the page, a filter change, a new version) or as an update: the threads
//! that changed, those that went, and the counts beside them. A write answers with an update of
//! its own thread; a live change asks for the threads whose stamp differs from what the page
//! holds (`POST /reviews/{id}/threads/sync`); one thread alone is `GET /reviews/{id}/threads/{commentId}`.
//!
//! Nothing here decides what the core decides: the threads, their status and anchors come from
//! the core's review view; this module only picks, orders and renders them.

use std::collections::{HashMap, HashSet};

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use axum::routing::{get, post};
use docreview_api::{CommentView, Emoji, ReviewView, RunView, VersionView};
use docreview_core::clock::millis_of;
use docreview_core::model::{AnchorState, Category, CommentStatus, Millis, Section};
use docreview_core::view::UNDO_WINDOW_MS;
use serde::Deserialize;

use crate::AppState;
use crate::web::error::WebError;
use crate::web::extract::{CsrfForm, OnReview, SignedIn};
use crate::web::htmx::Htmx;
use crate::web::paths;
use crate::web::threads::Offer;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::panel, get(whole))
        .route(paths::route::threads, get(some))
        .route(paths::route::threads_sync, post(sync))
        .route(paths::route::thread, get(one))
}

/// What the page shows: a version (the latest by default) and filters on the comments. The
/// same words travel in the page's URL, so a panel refresh reads them from `HX-Current-URL`.
/// Without a `status`, the panel shows the open threads (`status=all` shows every one).
#[derive(Debug, Default, Clone, Deserialize)]
pub struct ScreenQuery {
    pub version: Option<String>,
    pub status: Option<String>,
    pub category: Option<String>,
    pub author: Option<String>,
    /// Threads the page already holds: the status filter does not take them away, so a thread
    /// resolved on screen stays there, folded to one line, until the filters change or the page
    /// is loaded again (Reopen stays one click away).
    #[serde(skip)]
    pub held: HashSet<String>,
}

impl ScreenQuery {
    /// The query of the page an htmx request was made from.
    pub fn of_current_page(htmx: &Htmx) -> ScreenQuery {
        htmx.current_query()
            .and_then(|query| serde_urlencoded::from_str(query).ok())
            .unwrap_or_default()
    }

    /// The review screen's address with this version and these filters (those not set left out).
    pub fn page_url(&self, review_id: &str) -> String {
        let words = [
            ("version", &self.version),
            ("status", &self.status),
            ("category", &self.category),
            ("author", &self.author),
        ];
        let set: Vec<(&str, &str)> = words
            .iter()
            .filter_map(|(name, value)| {
                value
                    .as_deref()
                    .filter(|v| !v.is_empty())
                    .map(|value| (*name, value))
            })
            .collect();
        let query = serde_urlencoded::to_string(set).unwrap_or_default();
        if query.is_empty() {
            paths::review(review_id)
        } else {
            format!("{}?{query}", paths::review(review_id))
        }
    }

    /// The status the panel shows: `open` (the default), `closed` or `all`.
    pub fn status_shown(&self) -> &'static str {
        match self.status.as_deref() {
            None | Some("open") => "open",
            Some("closed") => "closed",
            Some(_) => "all",
        }
    }

    /// The same query holding the threads `ids` (see [`ScreenQuery::held`]).
    pub fn holding<'a>(mut self, ids: impl IntoIterator<Item = &'a str>) -> ScreenQuery {
        self.held.extend(ids.into_iter().map(str::to_string));
        self
    }

    fn keeps(&self, comment: &CommentView) -> bool {
        let status_ok = match self.status_shown() {
            "open" => comment.status == CommentStatus::Open,
            "closed" => comment.status == CommentStatus::Closed,
            _ => true,
        } || self.held.contains(&comment.id);
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

    /// Whether the request names a version or a filter itself (else it is the page's).
    fn names_anything(&self) -> bool {
        self.version.is_some()
            || self.status.is_some()
            || self.category.is_some()
            || self.author.is_some()
    }
}

/// One comment thread as the panel shows it.
pub struct Thread {
    pub comment: CommentView,
    /// Where the thread sits in document order (code points; sections at their start).
    pub order: usize,
    /// The heading text of a section-level comment's section.
    pub section_text: Option<String>,
    /// A fingerprint of everything its card shows (anchor and drafts too), which the page keeps
    /// to ask for the threads that changed.
    pub view: String,
    /// Its group: `document`, `anchored` or `orphaned`.
    pub group: &'static str,
    /// Rendered in short (what the highlights and the layout need, no words): the page loads
    /// the card as the reader comes close.
    pub stub: bool,
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

    /// The comment's suggestion as a change to show: the text taken out and the text put in
    /// (a `revise` replaces the passage, an `add` inserts after it, a `delete` takes it out).
    pub fn suggested(&self) -> Option<(&str, &str)> {
        let text = self.comment.suggestion.as_ref()?.text.as_str();
        Some(match self.comment.category {
            Category::Add => ("", text),
            _ => (self.quote(), text),
        })
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
        category_label(self.comment.category)
    }

    /// Its place in document order when that is not its passage's start (the page reads the
    /// start otherwise).
    pub fn explicit_order(&self) -> Option<usize> {
        match &self.comment.anchor.position {
            Some(position) if position.start == self.order => None,
            _ => Some(self.order),
        }
    }

    /// The first words of the body, for the one line a resolved thread collapses to.
    pub fn snippet(&self) -> String {
        let line = self
            .comment
            .body
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let mut snippet: String = line.trim().chars().take(120).collect();
        if snippet.len() < line.trim().len() {
            snippet.push('…');
        }
        snippet
    }
}

/// A fingerprint of everything a thread's card shows.
fn view_stamp(comment: &CommentView) -> String {
    let json = serde_json::to_vec(comment).unwrap_or_default();
    docreview_core::identity::sha256(&json)[..5]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A category's words for people.
pub fn category_label(category: Category) -> &'static str {
    match category {
        Category::Note => "Note",
        Category::Revise => "Revise",
        Category::Add => "Add",
        Category::Delete => "Delete",
        Category::NeedsReview => "Needs review",
        Category::Consult => "Consult",
        Category::None => "No category",
    }
}

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
    /// The person looking (what they wrote, they may edit).
    pub viewer_id: String,
    /// The service's clock when the panel was made (for the undo windows it shows).
    pub now: Millis,
    /// Set when only part of the panel is rendered (an update), else the whole panel.
    pub update: Option<Update>,
    /// The person may apply suggestions here: an editor, on the latest version of a review not
    /// finalized (the core decides again when they do).
    pub may_apply: bool,
}

/// Part of the panel: threads to put in place (new or changed), threads to take away, and
/// whether the counts and filters beside them come too.
pub struct Update {
    pub threads: Vec<Thread>,
    pub removed: Vec<String>,
    pub summary: bool,
}

#[allow(
    clippy::unused_self,
    reason = "called by the askama template as a method of its context"
)]
impl Panel {
    /// The categories, in the composer's order.
    pub fn categories(&self) -> &'static [Category] {
        Category::ALL
    }

    #[allow(
        clippy::trivially_copy_pass_by_ref,
        reason = "the template's loop gives a reference"
    )]
    pub fn label(&self, category: &Category) -> &'static str {
        category_label(*category)
    }

    pub fn selected(&self, value: Option<&String>, option: &str) -> bool {
        value.map(String::as_str).unwrap_or_default() == option
    }

    /// The page with every thread of its version shown (what "Clear filters" opens).
    pub fn clear_filters_url(&self) -> String {
        ScreenQuery {
            version: self.query.version.clone(),
            status: Some("all".into()),
            ..ScreenQuery::default()
        }
        .page_url(&self.review_id)
    }

    /// The reactions one can add (DESIGN.md §8.4), in the picker's order.
    pub fn emojis(&self) -> &'static [Emoji] {
        Emoji::ALL
    }

    /// An emoji as it shows.
    #[allow(
        clippy::trivially_copy_pass_by_ref,
        reason = "the template's loop gives a reference"
    )]
    pub fn glyph(&self, emoji: &Emoji) -> &'static str {
        match emoji {
            Emoji::PlusOne => "👍",
            Emoji::MinusOne => "👎",
            Emoji::Laugh => "😄",
            Emoji::Confused => "😕",
            Emoji::Heart => "❤️",
            Emoji::Hooray => "🎉",
            Emoji::Rocket => "🚀",
            Emoji::Eyes => "👀",
        }
    }

    /// An emoji's name, for a screen reader and the tooltip.
    #[allow(
        clippy::trivially_copy_pass_by_ref,
        reason = "the template's loop gives a reference"
    )]
    pub fn emoji_name(&self, emoji: &Emoji) -> &'static str {
        match emoji {
            Emoji::PlusOne => "thumbs up",
            Emoji::MinusOne => "thumbs down",
            Emoji::Laugh => "laugh",
            Emoji::Confused => "confused",
            Emoji::Heart => "heart",
            Emoji::Hooray => "hooray",
            Emoji::Rocket => "rocket",
            Emoji::Eyes => "eyes",
        }
    }

    /// Whether the person looking wrote what `author_id` wrote (they may edit it).
    pub fn owns(&self, author_id: &str) -> bool {
        author_id == self.viewer_id
    }

    /// The offer (a refused write's text, re-offered) for this thread and kind of form.
    pub fn offer_for(&self, comment_id: &str, kind: &str) -> Option<&Offer> {
        self.offer.as_ref().filter(|offer| {
            offer.comment_id == comment_id && offer.kind == kind && offer.message_id.is_none()
        })
    }

    /// The offer for the edit form of the reply `message_id`.
    pub fn offer_for_reply(&self, message_id: &str) -> Option<&Offer> {
        self.offer
            .as_ref()
            .filter(|offer| offer.message_id.as_deref() == Some(message_id))
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

/// How many threads the whole panel renders as cards, in its order (the top of the document,
/// where a reader starts); the others come in short and are loaded as the reader comes close,
/// which keeps the page small at a thousand comments.
pub const WHOLE_CARDS: usize = 30;

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
            order,
            section_text: section.map(|s| s.text.clone()),
            view: view_stamp(&comment),
            group: "anchored",
            stub: false,
            comment,
        };
        let mut thread = thread;
        if thread.comment.anchor.state == AnchorState::Orphaned {
            thread.group = "orphaned";
            orphaned.push(thread);
        } else if thread.comment.anchor.position.is_some() || thread.section_text.is_some() {
            anchored.push(thread);
        } else {
            thread.group = "document";
            document.push(thread);
        }
    }
    anchored.sort_by(|a, b| {
        a.order
            .cmp(&b.order)
            .then_with(|| a.comment.id.cmp(&b.comment.id))
    });
    // The page holds the first threads whole and the rest in short (see `Thread::stub`).
    for thread in document
        .iter_mut()
        .chain(anchored.iter_mut())
        .chain(orphaned.iter_mut())
        .skip(WHOLE_CARDS)
    {
        thread.stub = true;
    }
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
        viewer_id: actor.id().to_string(),
        now: state.service.now(),
        update: None,
        may_apply: is_latest
            && review.workflow.state == docreview_api::WorkflowState::Open
            && docreview_core::access::may(
                actor,
                review.role,
                docreview_core::access::DocumentAction::AddVersion,
            ),
    })
}

/// The version `query` names, else the latest; 404 for one the document does not have.
pub fn chosen_version(
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

/// The panel of `review_id` as `signed_in` sees it now with `query`.
pub async fn load_panel(
    state: &AppState,
    signed_in: &SignedIn,
    review_id: &str,
    query: ScreenQuery,
    offer: Option<Offer>,
    htmx: &Htmx,
) -> Result<Panel, WebError> {
    let core = |error| htmx.core(error);
    let review = state
        .service
        .get_review(&signed_in.actor, review_id, false)
        .await
        .map_err(core)?;
    let (_, version) = chosen_version(&review, &query)
        .map_err(|_| htmx.core(docreview_core::Error::NotFound("version")))?;
    let sections = state
        .service
        .dom_context(&signed_in.actor, review_id, Some(&version.version_id))
        .await
        .map_err(core)?
        .sections;
    build_panel(
        state,
        signed_in,
        &review,
        &version.version_id,
        query,
        &sections,
        offer,
    )
    .await
}

impl Panel {
    /// Every thread shown, in the panel's order.
    fn threads(&self) -> impl Iterator<Item = &Thread> {
        self.document
            .iter()
            .chain(&self.anchored)
            .chain(&self.orphaned)
    }

    /// Turns the panel into an update holding the threads `wanted` keeps, and taking away
    /// `removed` (ids the page holds that the panel no longer shows).
    fn into_update(
        mut self,
        mut wanted: impl FnMut(&Thread) -> bool,
        removed: Vec<String>,
        summary: bool,
    ) -> Panel {
        let mut threads = Vec::new();
        for group in [&mut self.document, &mut self.anchored, &mut self.orphaned] {
            let (keep, rest): (Vec<Thread>, Vec<Thread>) =
                std::mem::take(group).into_iter().partition(&mut wanted);
            // An update always brings whole cards.
            threads.extend(keep.into_iter().map(|thread| Thread {
                stub: false,
                ..thread
            }));
            // The counts are made from what stays; nothing else is rendered.
            *group = rest;
        }
        self.update = Some(Update {
            threads,
            removed,
            summary,
        });
        self
    }

    /// An update of the threads `ids` (those not shown, because they are gone or filtered out,
    /// are taken away), with the counts.
    pub fn update_of(self, ids: &[&str], summary: bool) -> Panel {
        let shown: HashSet<&str> = self.threads().map(|t| t.comment.id.as_str()).collect();
        let removed = ids
            .iter()
            .filter(|id| !shown.contains(**id))
            .map(|id| (*id).to_string())
            .collect();
        let ids: HashSet<String> = ids.iter().map(|id| (*id).to_string()).collect();
        self.into_update(|t| ids.contains(&t.comment.id), removed, summary)
    }

    /// How many threads the panel shows in its group `group`.
    pub fn orphaned_count(&self) -> usize {
        self.orphaned.len()
            + self.update.as_ref().map_or(0, |u| {
                u.threads.iter().filter(|t| t.group == "orphaned").count()
            })
    }
}

/// The query of the request, or else of the page it was made from.
fn query_of(query: ScreenQuery, htmx: &Htmx) -> ScreenQuery {
    if query.names_anything() {
        query
    } else {
        ScreenQuery::of_current_page(htmx)
    }
}

/// The whole panel (a filter changed, a new version arrived).
async fn whole(
    State(state): State<AppState>,
    OnReview {
        signed_in,
        htmx,
        review_id,
    }: OnReview,
    Query(query): Query<ScreenQuery>,
) -> Result<Response, WebError> {
    let query = query_of(query, &htmx);
    let panel = load_panel(&state, &signed_in, &review_id, query, None, &htmx).await?;
    htmx.fragment(&panel)
}

/// One thread as it stands now (taken away if it is gone or filtered out).
async fn one(
    State(state): State<AppState>,
    OnReview {
        signed_in,
        htmx,
        review_id,
    }: OnReview,
    Path((_, comment_id)): Path<(String, String)>,
) -> Result<Response, WebError> {
    let query = ScreenQuery::of_current_page(&htmx).holding([comment_id.as_str()]);
    let panel = load_panel(&state, &signed_in, &review_id, query, None, &htmx).await?;
    htmx.fragment(&panel.update_of(&[comment_id.as_str()], false))
}

/// How many threads one request may ask for by id.
const MAX_IDS: usize = 200;

#[derive(Deserialize)]
struct IdsQuery {
    #[serde(default)]
    ids: String,
}

/// Several threads by id (`?ids=a,b,c`), as the page loads them when the reader comes close.
async fn some(
    State(state): State<AppState>,
    OnReview {
        signed_in,
        htmx,
        review_id,
    }: OnReview,
    Query(query): Query<IdsQuery>,
) -> Result<Response, WebError> {
    let ids: Vec<&str> = query
        .ids
        .split(',')
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .collect();
    if ids.len() > MAX_IDS {
        return Err(WebError::bad_form(
            &format!("Ask for at most {MAX_IDS} threads at a time."),
            htmx.request,
        ));
    }
    let screen = ScreenQuery::of_current_page(&htmx).holding(ids.iter().copied());
    let panel = load_panel(&state, &signed_in, &review_id, screen, None, &htmx).await?;
    htmx.fragment(&panel.update_of(&ids, false))
}

/// What the page holds: `id:stamp` for each thread it shows, separated by spaces.
#[derive(Deserialize)]
struct SyncForm {
    #[serde(default)]
    seen: String,
}

/// The threads that changed since the page got them: new ones and those whose stamp differs,
/// the ids it holds that are no longer shown, and the counts. What a live change asks for.
async fn sync(
    State(state): State<AppState>,
    OnReview {
        signed_in,
        htmx,
        review_id,
    }: OnReview,
    CsrfForm(form): CsrfForm<SyncForm>,
) -> Result<Response, WebError> {
    let seen: HashMap<&str, &str> = form
        .seen
        .split_whitespace()
        .map(|item| item.split_once(':').unwrap_or((item, "")))
        .collect();
    let query = ScreenQuery::of_current_page(&htmx).holding(seen.keys().copied());
    let panel = load_panel(&state, &signed_in, &review_id, query, None, &htmx).await?;
    let shown: HashSet<&str> = panel.threads().map(|t| t.comment.id.as_str()).collect();
    let removed = seen
        .keys()
        .filter(|id| !shown.contains(**id))
        .map(|id| (*id).to_string())
        .collect();
    let changed: HashSet<String> = panel
        .threads()
        .filter(|t| seen.get(t.comment.id.as_str()) != Some(&t.view.as_str()))
        .map(|t| t.comment.id.clone())
        .collect();
    htmx.fragment(&panel.into_update(|t| changed.contains(&t.comment.id), removed, true))
}
