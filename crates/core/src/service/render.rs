//! Reading a review fast: each node caches the rendered JSON of recently read documents.
//!
//! A cached rendering is valid exactly while the document's `change_seq` (read with the head row
//! that the visibility check loads anyway) is unchanged, so a node never serves a stale review
//! and nothing needs invalidating across nodes. The cached rendering is the same for every
//! caller: it holds a placeholder `role` (spliced per request) and no human item marked
//! provisional. Those are provisional only for their author during the undo window, so such an
//! author gets a rendering of their own, valid until the first of their items leaves the window.

use std::sync::Arc;

use serde::Serialize;

use super::Service;
use crate::access::{self, Actor, Operation};
use crate::error::{Error, Result};
use crate::model::{Millis, ReviewState, Role};
use crate::view::{self, ReviewView, UNDO_WINDOW_MS, Viewer};

/// How much rendered JSON (plus the records behind it) a node keeps.
pub const RENDER_CACHE_BYTES: usize = 32 * 1024 * 1024;

/// What a cached rendering starts with; the caller's role replaces the placeholder.
const PLACEHOLDER_PREFIX: &[u8] = br#"{"role":"viewer""#;

pub struct RenderedReview {
    change_seq: i64,
    /// The rendering is exact until this instant (a provisional flag flips then).
    valid_until: Millis,
    state: Arc<ReviewState>,
    /// The review rendered with role `viewer`.
    json: Vec<u8>,
}

impl RenderedReview {
    /// Renders for `user_id`, or for a caller who authored nothing when `None`.
    fn new(state: Arc<ReviewState>, user_id: Option<&str>, now: Millis) -> Result<Self> {
        // Nobody's id is empty, so the neutral rendering marks no human item provisional; run
        // items depend only on their run's status, which is part of the state.
        let viewer = Viewer {
            user_id: user_id.unwrap_or(""),
            now,
            include_deleted: false,
        };
        let json = serde_json::to_vec(&view::review_view(&state, Role::Viewer, &viewer))
            .map_err(|error| Error::Internal(Box::new(error)))?;
        let valid_until = user_id.map_or(Millis::MAX, |user_id| {
            undo_window_ends(&state, user_id, now)
        });
        Ok(RenderedReview {
            change_seq: state.head.review.change_seq,
            valid_until,
            state,
            json,
        })
    }

    fn is_current(&self, change_seq: i64, now: Millis) -> bool {
        self.change_seq == change_seq && now < self.valid_until
    }

    fn weight(&self, with_records: bool) -> usize {
        // The records behind a rendering take roughly as much memory as its JSON.
        if with_records {
            self.json.len() * 2
        } else {
            self.json.len()
        }
    }

    /// `{ "review": … }` with the caller's role in place of the placeholder.
    fn body_for(&self, role: Role) -> Result<Vec<u8>> {
        let rest = self.json.strip_prefix(PLACEHOLDER_PREFIX).ok_or_else(|| {
            Error::Internal("a cached rendering lacks its role placeholder".into())
        })?;
        let mut body = Vec::with_capacity(self.json.len() + 32);
        body.extend_from_slice(br#"{"review":{"role":""#);
        body.extend_from_slice(role.as_str().as_bytes());
        body.push(b'"');
        body.extend_from_slice(rest);
        body.push(b'}');
        Ok(body)
    }
}

#[derive(Serialize)]
struct Envelope<'a> {
    review: &'a ReviewView,
}

/// When the earliest of `user_id`'s live human items still inside the undo window leaves it;
/// `now` when there is none (the caller then needs no rendering of their own).
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
    ) -> Result<Vec<u8>> {
        access::permit(actor, Operation::Read)?;
        if include_deleted {
            let review = self.get_review(actor, review_id, true).await?;
            return serde_json::to_vec(&Envelope { review: &review })
                .map_err(|error| Error::Internal(Box::new(error)));
        }
        let (head, role) = self.visible(actor, review_id).await?;
        let now = self.clock.now();
        let shared = match self.renders.get(review_id) {
            Some(cached) if cached.is_current(head.review.change_seq, now) => cached,
            _ => {
                let state = self
                    .store
                    .review_state(review_id)
                    .await?
                    .ok_or(Error::NotFound("document"))?;
                let rendered = Arc::new(RenderedReview::new(Arc::new(state), None, now)?);
                self.renders
                    .insert(review_id, Arc::clone(&rendered), rendered.weight(true));
                rendered
            }
        };
        if undo_window_ends(&shared.state, actor.id(), now) <= now {
            return shared.body_for(role);
        }
        // The caller has items only they see as provisional: a rendering of their own.
        let key = format!("{review_id}\u{0}{}", actor.id());
        let personal = match self.renders.get(&key) {
            Some(cached) if cached.is_current(shared.change_seq, now) => cached,
            _ => {
                let rendered = Arc::new(RenderedReview::new(
                    Arc::clone(&shared.state),
                    Some(actor.id()),
                    now,
                )?);
                self.renders
                    .insert(&key, Arc::clone(&rendered), rendered.weight(false));
                rendered
            }
        };
        personal.body_for(role)
    }
}

#[cfg(test)]
mod tests {
    use super::PLACEHOLDER_PREFIX;

    #[test]
    fn the_placeholder_matches_how_serde_writes_the_first_field() {
        let json = serde_json::to_vec(&serde_json::json!({ "role": "viewer" })).unwrap_or_default();
        assert!(json.starts_with(PLACEHOLDER_PREFIX));
    }
}
