//! Comments with their replies and status history, and agent runs.

use crate::model::{
    CommentRecord, CommentThread, MessageRecord, Millis, RunRecord, StatusEventRecord, User,
};

use super::StoreResult;
use crate::outbox::OutboxEntry;

/// One atomic change to a document's comments, guarded by its `commentsRevision` (or, for a
/// new comment, by its latest version). The store bumps the revision by exactly one and writes
/// every row, or writes nothing.
#[derive(Debug, Clone, Default)]
pub struct CommentsWrite {
    pub expected_revision: i64,
    /// When set, the write needs only that this is still the document's latest version,
    /// whatever its revision: a new comment's anchor depends on the version it was resolved on,
    /// not on the other comments, so writers who sent no base revision never conflict with each
    /// other (DESIGN.md §4.4).
    pub on_latest_version: Option<String>,
    /// When set, that run of the document must still be `running` when the write applies
    /// (checked in the same transaction), else `StoreError::RunNotRunning` and nothing is
    /// written: so a run's comments need no revision guard either.
    pub in_running_run: Option<String>,
    /// When set, that comment of the document must still exist and not be deleted when the
    /// write applies (checked in the same transaction), else `StoreError::NotFound` and nothing
    /// is written: so a reply needs no revision guard against a concurrent cancel.
    pub on_live_comment: Option<String>,
    /// When set, that comment's thread must still be at the revision it was read at (checked
    /// in the same transaction), else `RevisionConflict` and nothing is written: so a write to
    /// one comment sent without a base revision conflicts only with writes to that same thread,
    /// not with the whole document.
    pub unchanged_thread: Option<ThreadGuard>,
    /// Applies even to a finalized review. Otherwise a finalized review refuses the write
    /// (`StoreError::ReviewFinalized`, checked in the same transaction): only a run finishing,
    /// which was started before, may still change its own items.
    pub even_if_finalized: bool,
    pub at: Millis,
    /// Inserted, or their changeable fields (category, status, body, anchor, edit and delete
    /// times) updated.
    pub comments: Vec<CommentRecord>,
    /// Inserted, or their body and edit and delete times updated.
    pub messages: Vec<MessageRecord>,
    /// Appended.
    pub events: Vec<StatusEventRecord>,
    /// Replaced whole (finishing a run changes its comments in the same step).
    pub runs: Vec<RunRecord>,
    /// Added to the outbox with the change (`crate::outbox`).
    pub outbox: Vec<OutboxEntry>,
}

/// The thread a write to one comment was decided on (see `CommentsWrite::unchanged_thread`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadGuard {
    pub comment_id: String,
    pub thread_revision: i64,
}

impl CommentsWrite {
    /// The comments whose thread this write changes: each one's `thread_revision` rises by one.
    pub fn changed_threads(&self) -> std::collections::BTreeSet<&str> {
        self.comments
            .iter()
            .map(|c| c.id.as_str())
            .chain(self.messages.iter().map(|m| m.comment_id.as_str()))
            .chain(self.events.iter().map(|e| e.comment_id.as_str()))
            .collect()
    }
}

#[async_trait::async_trait]
pub trait CommentStore: Send + Sync {
    async fn comment_thread(
        &self,
        review_id: &str,
        comment_id: &str,
    ) -> StoreResult<Option<CommentThread>>;
    /// Every comment of the document that is not deleted (for re-anchoring).
    async fn live_comments(&self, review_id: &str) -> StoreResult<Vec<CommentRecord>>;
    /// The users of `ids` that exist, in the order asked.
    async fn users(&self, ids: &[String]) -> StoreResult<Vec<User>>;
    /// Applies `write` if the document is still at `expected_revision` (or, with
    /// `on_latest_version`, still at that version); raises `commentsRevision` and `change_seq`
    /// by one and sets `updated_at`. Returns the new revision.
    async fn write_comments(&self, review_id: &str, write: CommentsWrite) -> StoreResult<i64>;

    /// Inserts a run and counts it as a change of its document (`change_seq`, `updated_at`).
    async fn insert_run(&self, run: RunRecord) -> StoreResult<()>;
    async fn run(&self, review_id: &str, run_id: &str) -> StoreResult<Option<RunRecord>>;
    /// Comments and replies written in a run, deleted or not.
    async fn run_items(
        &self,
        review_id: &str,
        run_id: &str,
    ) -> StoreResult<(Vec<CommentRecord>, Vec<MessageRecord>)>;
    /// Runs still `running` that started before `cutoff`, as `(review_id, run_id)`.
    async fn running_runs_before(&self, cutoff: Millis) -> StoreResult<Vec<(String, String)>>;
}
