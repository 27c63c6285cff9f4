//! Reading a review fast: each node keeps the records of recently read documents, and tells
//! its caller (the server, which caches the rendered answers) exactly what a rendering depends
//! on.
//!
//! Records are valid exactly while the document's `change_seq` and latest version id (read with
//! the head row that the visibility check loads anyway) are unchanged, so a node never serves a
//! stale review and nothing needs invalidating across nodes. (The version id tells a document
//! deleted and created again under the same id, whose `change_seq` starts over, from the one
//! kept.) What a caller is shown depends on them only through their `role` (three possible
//! values), the project link, and, for an author inside the undo window, the `provisional` flags
//! of their own items, and `reactedByMe` where they reacted: [`ReviewReading::key`] names
//! exactly those, and
//! [`ReviewReading::valid_until`] says when the undo window ends.

use std::sync::Arc;

use docreview_api::views::{ProjectLinkView, ReviewView};

use super::Service;
use crate::access::{self, Actor, Operation};
use crate::error::{Error, Result};
use crate::model::{Millis, ReviewRecord, ReviewState, Role};
use crate::view::{self, UNDO_WINDOW_MS, Viewer};

/// How much of documents' records a node keeps for reads.
pub const STATE_CACHE_BYTES: usize = 16 * 1024 * 1024;

/// Which state of a document records (and anything rendered from them) were made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    change_seq: i64,
    latest_version_id: String,
}

impl Stamp {
    fn of(review: &ReviewRecord) -> Self {
        Stamp {
            change_seq: review.change_seq,
            latest_version_id: review.latest_version_id.clone(),
        }
    }
}

/// A document's records as of one stamp.
pub struct KeptState {
    stamp: Stamp,
    state: Arc<ReviewState>,
}

/// One caller's reading of a document: the records as of [`Self::stamp`], and what of them the
/// caller is shown. Two readings with the same key and stamp, both before `valid_until`, show
/// the same review.
pub struct ReviewReading {
    pub key: String,
    pub stamp: Stamp,
    /// When the caller's own items leave the undo window (`Millis::MAX` when there are none).
    pub valid_until: Millis,
    /// The service's clock when the document was read.
    pub now: Millis,
    state: Arc<ReviewState>,
    role: Role,
    project: Option<ProjectLinkView>,
    /// The caller, while their own items are still inside the undo window.
    personal: Option<String>,
    /// The caller, when they reacted to something here (their `reactedByMe` flags).
    reactor: Option<String>,
}

impl ReviewReading {
    /// The review as this caller is shown it.
    pub fn view(&self) -> ReviewView {
        let viewer = Viewer {
            user_id: self.personal.as_deref().unwrap_or(""),
            reactor: self.reactor.as_deref().unwrap_or(""),
            now: self.now,
            include_deleted: false,
        };
        view::review_view(&self.state, self.role, self.project.clone(), &viewer)
    }
}

/// When the earliest of `user_id`'s live human items still inside the undo window leaves it;
/// `now` when there is none (the caller then sees what everyone sees).
fn undo_window_ends(state: &ReviewState, user_id: &str, now: Millis) -> Millis {
    let own_recent = |author: &str,
                      run: &Option<String>,
                      created: Millis,
                      deleted: &Option<Millis>| {
        (author == user_id && run.is_none() && deleted.is_none() && now - created < UNDO_WINDOW_MS)
            .then_some(created + UNDO_WINDOW_MS)
    };
    let comments = state
        .comments
        .iter()
        .filter_map(|c| own_recent(&c.author_id, &c.run_id, c.created_at, &c.deleted_at));
    let messages = state
        .messages
        .iter()
        .filter_map(|m| own_recent(&m.author_id, &m.run_id, m.created_at, &m.deleted_at));
    comments.chain(messages).min().unwrap_or(now)
}

impl Service {
    /// `GET /api/reviews/{id}` (without cancelled items): the caller's reading of the document.
    pub async fn review_reading(&self, actor: &Actor, review_id: &str) -> Result<ReviewReading> {
        access::permit(actor, Operation::Read)?;
        let head = self
            .store
            .review_head(review_id)
            .await?
            .ok_or(Error::NotFound("document"))?;
        let (role, project_role) = self.access_of(actor, &head).await?;
        // The project record is read fresh: a snapshot import changes it without touching the
        // document, so it is part of the key rather than of the kept records.
        let project = match &head.review.project_code {
            Some(code) => self
                .store
                .project(code)
                .await?
                .map(|project| view::project_link(&project, project_role)),
            None => None,
        };
        let current = Stamp::of(&head.review);
        let now = self.clock.now();
        let state = match self.states.get(review_id).as_deref() {
            Some(KeptState { stamp, state }) if *stamp == current => Arc::clone(state),
            _ => {
                let state = Arc::new(
                    self.store
                        .review_state(review_id)
                        .await?
                        .ok_or(Error::NotFound("document"))?,
                );
                // A rough estimate of the records' memory, for the cache's byte budget.
                let weight = 2048 + 400 * (state.comments.len() + state.messages.len());
                let kept = KeptState {
                    stamp: Stamp::of(&state.head.review),
                    state: Arc::clone(&state),
                };
                self.states.insert(review_id, Arc::new(kept), weight);
                state
            }
        };
        let stamp = Stamp::of(&state.head.review);
        let window_ends = undo_window_ends(&state, actor.id(), now);
        let personal = (window_ends > now).then(|| actor.id().to_string());
        let mut key = format!("{review_id}\u{0}{role}");
        if let Some(project) = &project {
            // Everything `_project` shows, so a kept rendering never shows a stale project.
            key.push_str(&format!(
                "\u{0}{}\u{0}{:?}\u{0}{:?}\u{0}{}\u{0}{}\u{0}{:?}",
                project.code,
                project.name,
                project.company,
                project.status,
                project.in_snapshot,
                project.role
            ));
        }
        if let Some(user) = &personal {
            key.push('\u{0}');
            key.push_str(user);
        }
        // `reactedByMe` is the caller's own only where they reacted; everyone else who reacted
        // to nothing here shares one rendering.
        let reactor = state
            .reactions
            .iter()
            .any(|reaction| reaction.user_id == actor.id())
            .then(|| actor.id().to_string());
        if let Some(user) = &reactor {
            key.push_str("\u{0}r\u{0}");
            key.push_str(user);
        }
        Ok(ReviewReading {
            key,
            stamp,
            valid_until: if personal.is_some() {
                window_ends
            } else {
                Millis::MAX
            },
            now,
            state,
            role,
            project,
            personal,
            reactor,
        })
    }
}
