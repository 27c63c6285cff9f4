//! The outbox (`crate::outbox`): rows added with the changes they come from, claimed by one
//! node at a time, completed with what follows from them.

use crate::model::{EmailFrequency, Millis};
use crate::outbox::{Completion, NotificationRecord, OutboxEntry, OutboxRow, Sink, SinkDepth};

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

    /// A person's notifications, newest first (by creation time, then id, both descending),
    /// after the `(created_at, id)` key `after` when given; only unread ones if `unread_only`.
    async fn notifications_of(
        &self,
        user_id: &str,
        unread_only: bool,
        after: Option<(Millis, String)>,
        limit: usize,
    ) -> StoreResult<Vec<NotificationRecord>>;

    /// A person's unread notifications counted per document (`None`: about no document).
    async fn unread_notifications(&self, user_id: &str) -> StoreResult<Vec<(Option<String>, i64)>>;

    /// Marks a person's notifications read at `at`: those of `ids` (others' ids are passed
    /// over), or all with `None`; those read already keep their time. Tells the person's
    /// watchers (`Store::subscribe_people`) when any changed. Answers how many changed.
    async fn mark_notifications_read(
        &self,
        user_id: &str,
        ids: Option<Vec<String>>,
        at: Millis,
    ) -> StoreResult<u64>;

    /// How a person's notifications reach them by mail; `None` when there is no such person.
    async fn email_frequency(&self, user_id: &str) -> StoreResult<Option<EmailFrequency>>;

    /// Sets it; `false` when there is no such person.
    async fn set_email_frequency(
        &self,
        user_id: &str,
        frequency: EmailFrequency,
    ) -> StoreResult<bool>;

    /// The installation's key named `name` (e.g. the one that signs unsubscribe links): the
    /// stored one, or `candidate`, stored at `at`, when there is none yet. Every node answers
    /// the same key, whichever stored it first.
    async fn instance_key(
        &self,
        name: &str,
        candidate: Vec<u8>,
        at: Millis,
    ) -> StoreResult<Vec<u8>>;

    /// The active people whose notifications reach them by a daily digest, each with the end
    /// of the period their last digest covered.
    async fn digest_people(&self) -> StoreResult<Vec<(String, Option<Millis>)>>;

    /// Records that a person's digests cover everything up to `until` (never moved back).
    async fn set_digest_until(&self, user_id: &str, until: Millis) -> StoreResult<()>;

    /// Deletes the rows of `sink` that finished (succeeded or failed) before `before`; answers
    /// how many.
    async fn prune_outbox(&self, sink: Sink, before: Millis) -> StoreResult<u64>;
}
