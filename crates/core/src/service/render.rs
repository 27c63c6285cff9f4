//! Reading a review fast: each node caches the rendered JSON of recently read documents.
//!
//! A cached rendering is valid exactly while the document's `change_seq` and latest version id
//! (read with the head row that the visibility check loads anyway) are unchanged, so a node never
//! serves a stale review and nothing needs invalidating across nodes. (The version id tells a
//! document deleted and created again under the same id, whose `change_seq` starts over, from the
//! one cached.) A rendering depends on the caller only through
//! their `role` (three possible values) and, for an author inside the undo window, the
//! `provisional` flags of their own items; bodies are cached per role, and per author while the
//! window is open, and served without copying.

use docreview_api::views::{ProjectLinkView, ReviewView};
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;

use super::Service;
use crate::access::{self, Actor, Operation};
use crate::error::{Error, Result};
use crate::model::{Millis, ReviewRecord, ReviewState, Role};
use crate::view::{self, UNDO_WINDOW_MS, Viewer};

/// How much rendered JSON (plus the records behind it) a node keeps.
pub const RENDER_CACHE_BYTES: usize = 32 * 1024 * 1024;

/// Which state of a document a cache entry was made from.
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

/// A document's records as of one stamp, or one rendering of them.
pub enum Rendered {
    State {
        stamp: Stamp,
        state: Arc<ReviewState>,
    },
    Body {
        stamp: Stamp,
        valid_until: Millis,
        json: ReviewJson,
    },
}

/// A review's JSON as the API answers it, and its entity tag (a digest of those bytes, so every
/// node gives the same tag for the same answer).
#[derive(Clone)]
pub struct ReviewJson {
    pub body: Bytes,
    pub etag: String,
}

impl ReviewJson {
    fn new(body: Bytes) -> Self {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(&body);
        let etag = format!("\"{}\"", hex::encode(&digest[..16]));
        ReviewJson { body, etag }
    }
}

#[derive(Serialize)]
struct Envelope<'a> {
    review: &'a ReviewView,
}

fn render(
    state: &ReviewState,
    role: Role,
    project: Option<ProjectLinkView>,
    viewer: &Viewer<'_>,
) -> Result<Bytes> {
    let review = view::review_view(state, role, project, viewer);
    serde_json::to_vec(&Envelope { review: &review })
        .map(Bytes::from)
        .map_err(|error| Error::Internal(Box::new(error)))
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
    /// `GET /api/reviews/{id}`: the body `{ "review": Review }`, serialized.
    pub async fn review_json(
        &self,
        actor: &Actor,
        review_id: &str,
        include_deleted: bool,
    ) -> Result<ReviewJson> {
        access::permit(actor, Operation::Read)?;
        if include_deleted {
            let review = self.get_review(actor, review_id, true).await?;
            return serde_json::to_vec(&Envelope { review: &review })
                .map(|body| ReviewJson::new(Bytes::from(body)))
                .map_err(|error| Error::Internal(Box::new(error)));
        }
        let head = self
            .store
            .review_head(review_id)
            .await?
            .ok_or(Error::NotFound("document"))?;
        let (role, project_role) = self.access_of(actor, &head).await?;
        // The project record is read fresh: a snapshot import changes it without touching the
        // document, so it is part of the cache key rather than of the cached records.
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
        let state = match self.renders.get(review_id).as_deref() {
            Some(Rendered::State { stamp, state }) if *stamp == current => Arc::clone(state),
            _ => {
                let state = Arc::new(
                    self.store
                        .review_state(review_id)
                        .await?
                        .ok_or(Error::NotFound("document"))?,
                );
                // A rough estimate of the records' memory, for the cache's byte budget.
                let weight = 2048 + 400 * (state.comments.len() + state.messages.len());
                let entry = Rendered::State {
                    stamp: Stamp::of(&state.head.review),
                    state: Arc::clone(&state),
                };
                self.renders.insert(review_id, Arc::new(entry), weight);
                state
            }
        };
        let stamp = Stamp::of(&state.head.review);
        let window_ends = undo_window_ends(&state, actor.id(), now);
        let personal = window_ends > now;
        let mut key = format!("{review_id}\u{0}{role}");
        if let Some(project) = &project {
            // Everything `_project` shows, so a cached body never shows a stale project.
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
        if personal {
            key.push('\u{0}');
            key.push_str(actor.id());
        }
        if let Some(cached) = self.renders.get(&key)
            && let Rendered::Body {
                stamp: cached_stamp,
                valid_until,
                json,
            } = cached.as_ref()
            && *cached_stamp == stamp
            && now < *valid_until
        {
            return Ok(json.clone());
        }
        let viewer = Viewer {
            user_id: if personal { actor.id() } else { "" },
            now,
            include_deleted: false,
        };
        let json = ReviewJson::new(render(&state, role, project, &viewer)?);
        let valid_until = if personal { window_ends } else { Millis::MAX };
        let weight = json.body.len();
        self.renders.insert(
            &key,
            Arc::new(Rendered::Body {
                stamp,
                valid_until,
                json: json.clone(),
            }),
            weight,
        );
        Ok(json)
    }
}
