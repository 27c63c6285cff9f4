//! The outbox (`crate::outbox`): rows added with the changes they come from, claimed by one
//! node at a time, completed with what follows from them.

use crate::model::Millis;
use crate::outbox::{Completion, OutboxEntry, OutboxRow, Sink, SinkDepth};

use super::StoreResult;

#[async_trait::async_trait]
pub trait OutboxStore: Send + Sync {
    /// Adds rows that belong to no other write (a ping, a redelivery, a digest). An entry whose
    /// `dedupe_key` another row holds is skipped. Answers how many were added.
    async fn add_outbox(&self, entries: Vec<OutboxEntry>) -> StoreResult<usize>;

    /// Claims up to `limit` rows of `sink` that are pending and due at `now` (oldest due
    /// first) for `claim` until `lease_until`: each gets one more attempt, `claim` as its
    /// claimant, and `lease_until` as its next attempt, so it is due again only if its claimant
    /// never completes it. However many nodes claim at once, a row goes to one of them.
    async fn claim_outbox(
        &self,
        sink: Sink,
        claim: &str,
        now: Millis,
        lease_until: Millis,
        limit: usize,
    ) -> StoreResult<Vec<OutboxRow>>;

    /// Records each completion, with the notifications and rows that follow from it, in one
    /// transaction; a completion whose row is no longer pending under its claimant (its lease
    /// ran out and another claim took it) writes nothing. Answers the ids of the rows completed.
    async fn complete_outbox(&self, completions: Vec<Completion>) -> StoreResult<Vec<String>>;

    /// What is pending in each sink.
    async fn outbox_depths(&self) -> StoreResult<Vec<SinkDepth>>;

    /// Deletes the rows of `sink` that finished (succeeded or failed) before `before`; answers
    /// how many.
    async fn prune_outbox(&self, sink: Sink, before: Millis) -> StoreResult<u64>;
}
