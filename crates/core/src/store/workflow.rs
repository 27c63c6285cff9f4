//! The review workflow (DESIGN.md §8.4): reviewers, decisions, finalizing, and reactions.
//!
//! Every write here raises the document's `change_seq` (so kept renderings are stale) and never
//! its `commentsRevision`: none of them changes the discussion, so none may conflict with it.

use crate::model::{DecisionRecord, Millis, ReactionRecord, ReviewerRecord};
use crate::outbox::OutboxEntry;

use super::StoreResult;

#[async_trait::async_trait]
pub trait WorkflowStore: Send + Sync {
    /// Adds a reviewer, or replaces their due date and who asked; `NotFound` when the document
    /// is gone. Announces a `review` event.
    async fn put_reviewer(
        &self,
        reviewer: ReviewerRecord,
        outbox: Vec<OutboxEntry>,
    ) -> StoreResult<()>;
    /// Removes a reviewer; `false` when they were not one. Announces a `review` event.
    async fn remove_reviewer(
        &self,
        review_id: &str,
        user_id: &str,
        at: Millis,
    ) -> StoreResult<bool>;
    /// Records a decision, replacing the person's earlier one, if its version is still the
    /// document's latest (else `StaleVersion`, nothing written). Announces a `review` event.
    async fn put_decision(
        &self,
        decision: DecisionRecord,
        outbox: Vec<OutboxEntry>,
    ) -> StoreResult<()>;
    /// Finalizes the document (`finalized` = `(at, by)`), or reopens it (`None`). Finalizing
    /// needs every live comment closed, checked with the document locked against comment
    /// writes (else `OpenComments` with how many are open). `false` when the document already
    /// was in that state (nothing written). Announces a `review` event.
    async fn set_finalized(
        &self,
        review_id: &str,
        finalized: Option<(Millis, String)>,
        at: Millis,
        outbox: Vec<OutboxEntry>,
    ) -> StoreResult<bool>;
    /// Adds (`on`) or takes away a reaction; `false` when there was nothing to change. The
    /// comment (and the reply, for a reply's reaction) must be live, else `NotFound`. Announces
    /// a `reactions` event when something changed.
    async fn set_reaction(&self, reaction: ReactionRecord, on: bool) -> StoreResult<bool>;
}
