//! Reading a review fast: each node caches the rendered JSON of recently read documents.
//!
//! A cached rendering is valid exactly while the document's `change_seq` (read with the head row
//! that the visibility check loads anyway) is unchanged, so a node never serves a stale review
//! and nothing needs invalidating across nodes. A rendering depends on the caller only through
//! their `role` (three possible values) and, for an author inside the undo window, the
//! `provisional` flags of their own items; bodies are cached per role, and per author while the
//! window is open, and served without copying.

use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;

use super::Service;
use crate::access::{self, Actor, Operation};
use crate::error::{Error, Result};
use crate::model::{Millis, ReviewState, Role};
use crate::view::{self, ReviewView, UNDO_WINDOW_MS, Viewer};

/// How much rendered JSON (plus the records behind it) a node keeps.
pub const RENDER_CACHE_BYTES: usize = 32 * 1024 * 1024;

/// A document's records as of one `change_seq`, or one rendering of them.
pub enum Rendered {
    State {
        change_seq: i64,
        state: Arc<ReviewState>,
    },
    Body {
        change_seq: i64,
        valid_until: Millis,
        body: Bytes,
    },
}

impl Rendered {
    fn is_current(&self, seq: i64, now: Millis) -> bool {
        match self {
            Rendered::State { change_seq, .. } => *change_seq == seq,
            Rendered::Body {
                change_seq,
                valid_until,
                ..
            } => *change_seq == seq && now < *valid_until,
        }
    }
}

#[derive(Serialize)]
struct Envelope<'a> {
    review: &'a ReviewView,
}

fn render(state: &ReviewState, role: Role, viewer: &Viewer<'_>) -> Result<Bytes> {
    let review = view::review_view(state, role, viewer);
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
    ) -> Result<Bytes> {
        access::permit(actor, Operation::Read)?;
        if include_deleted {
            let review = self.get_review(actor, review_id, true).await?;
            return serde_json::to_vec(&Envelope { review: &review })
                .map(Bytes::from)
                .map_err(|error| Error::Internal(Box::new(error)));
        }
        let (head, role) = self.visible(actor, review_id).await?;
        let change_seq = head.review.change_seq;
        let now = self.clock.now();
        let state = match self.renders.get(review_id).as_deref() {
            Some(Rendered::State {
                change_seq: seq,
                state,
                ..
            }) if *seq == change_seq => Arc::clone(state),
            _ => {
                let state = Arc::new(
                    self.store
                        .review_state(review_id)
                        .await?
                        .ok_or(Error::NotFound("document"))?,
                );
                let seq = state.head.review.change_seq;
                // A rough estimate of the records' memory, for the cache's byte budget.
                let weight = 2048 + 400 * (state.comments.len() + state.messages.len());
                let entry = Rendered::State {
                    change_seq: seq,
                    state: Arc::clone(&state),
                };
                self.renders.insert(review_id, Arc::new(entry), weight);
                state
            }
        };
        let seq = state.head.review.change_seq;
        let window_ends = undo_window_ends(&state, actor.id(), now);
        let personal = window_ends > now;
        let key = if personal {
            format!("{review_id}\u{0}{role}\u{0}{}", actor.id())
        } else {
            format!("{review_id}\u{0}{role}")
        };
        if let Some(cached) = self.renders.get(&key)
            && cached.is_current(seq, now)
            && let Rendered::Body { body, .. } = cached.as_ref()
        {
            return Ok(body.clone());
        }
        let viewer = Viewer {
            user_id: if personal { actor.id() } else { "" },
            now,
            include_deleted: false,
        };
        let body = render(&state, role, &viewer)?;
        let valid_until = if personal { window_ends } else { Millis::MAX };
        let weight = body.len();
        self.renders.insert(
            &key,
            Arc::new(Rendered::Body {
                change_seq: seq,
                valid_until,
                body: body.clone(),
            }),
            weight,
        );
        Ok(body)
    }
}
