//! Documents ("reviews"): creation, their heads and whole state, lists, versions and bodies,
//! and changes to their own fields.

use crate::model::{
    AccessGrant, AccessMode, Anchor, Millis, ReviewHead, ReviewRecord, ReviewState,
    ReviewSummaryRecord, StatusEventRecord, VersionRecord,
};

use super::{StoreError, StoreResult, Visibility};
use crate::outbox::OutboxEntry;

#[derive(Debug, Clone)]
pub struct ReviewQuery {
    pub visibility: Visibility,
    /// Case-insensitive substring of the title.
    pub title_contains: Option<String>,
    pub tag: Option<String>,
    pub archived: Option<bool>,
    pub project: Option<String>,
    pub owner_id: Option<String>,
    /// Continue after this `(updated_at, id)` key, newest first.
    pub after: Option<(Millis, String)>,
    pub limit: usize,
}

/// A new document with its first version.
#[derive(Debug, Clone)]
pub struct NewReview {
    pub review: ReviewRecord,
    pub grants: Vec<AccessGrant>,
    pub version: VersionRecord,
    pub html: Vec<u8>,
    /// The version's text, for full-text search of documents (already cut to
    /// `SEARCH_TEXT_MAX_CHARS`).
    pub search_text: String,
    /// Added to the outbox with the document (`crate::outbox`).
    pub outbox: Vec<OutboxEntry>,
}

/// A new or replaced body, guarded by both the latest version and the comments revision,
/// carrying the re-computed anchors of every live comment.
#[derive(Debug, Clone)]
pub struct VersionWrite {
    pub review_id: String,
    pub expected_latest_version_id: String,
    pub expected_comments_revision: i64,
    pub version: VersionRecord,
    pub html: Vec<u8>,
    /// `true`: a new latest version; `false`: the latest version's body is rewritten in place.
    pub append: bool,
    pub anchors: Vec<(String, Anchor)>,
    pub structure_changed: bool,
    pub at: Millis,
    /// The new body's text, replacing the document's search text.
    pub search_text: String,
    /// Added to the outbox with the version (`crate::outbox`).
    pub outbox: Vec<OutboxEntry>,
    /// Comments closed by this version (suggestions applied, DESIGN.md §8.5): each comment
    /// takes the event's status and the event is recorded, in the same transaction.
    pub closed: Vec<StatusEventRecord>,
}

/// A change to a document's own fields (title, tags, archive flag, sharing, owner). Fields left
/// `None` stay as they are; `grants` replaces the whole sharing list. Raises `change_seq`, sets
/// `updated_at` and announces a `review` event.
#[derive(Debug, Clone, Default)]
pub struct ReviewUpdate {
    pub review_id: String,
    pub at: Millis,
    pub title: Option<String>,
    pub tags: Option<Vec<String>>,
    pub archived: Option<bool>,
    pub access_mode: Option<AccessMode>,
    pub grants: Option<Vec<AccessGrant>>,
    pub owner_id: Option<String>,
}

impl VersionWrite {
    /// Checks the write's guards against the document as the write finds it, inside the write's
    /// transaction: `StaleVersion` when its latest version moved on, `RevisionConflict` when its
    /// comments did; else the revisions the write leaves.
    pub fn revisions_after(
        &self,
        latest_version_id: String,
        comments_revision: i64,
        structure_revision: i64,
    ) -> StoreResult<Revisions> {
        if latest_version_id != self.expected_latest_version_id {
            return Err(StoreError::StaleVersion {
                latest: latest_version_id,
            });
        }
        if comments_revision != self.expected_comments_revision {
            return Err(StoreError::RevisionConflict {
                current: comments_revision,
            });
        }
        Ok(Revisions {
            comments: comments_revision + 1,
            structure: structure_revision + i64::from(self.structure_changed),
        })
    }
}

/// The result of a successful version write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revisions {
    pub comments: i64,
    pub structure: i64,
}

#[async_trait::async_trait]
pub trait ReviewStore: Send + Sync {
    async fn create_review(&self, review: NewReview) -> StoreResult<()>;
    async fn review_head(&self, review_id: &str) -> StoreResult<Option<ReviewHead>>;
    async fn review_state(&self, review_id: &str) -> StoreResult<Option<ReviewState>>;
    /// The documents `query.visibility` admits, newest first; each row carries the caller's
    /// grant and project role, from which the core computes their role.
    async fn list_reviews(&self, query: ReviewQuery) -> StoreResult<Vec<ReviewSummaryRecord>>;
    /// Versions oldest first.
    async fn versions(&self, review_id: &str) -> StoreResult<Vec<VersionRecord>>;
    async fn version(
        &self,
        review_id: &str,
        version_id: &str,
    ) -> StoreResult<Option<VersionRecord>>;
    async fn version_html(
        &self,
        review_id: &str,
        version_id: &str,
    ) -> StoreResult<Option<(VersionRecord, Vec<u8>)>>;
    async fn write_version(&self, write: VersionWrite) -> StoreResult<Revisions>;
    /// Changes a document's own fields; `NotFound` when it is gone.
    async fn update_review(&self, update: ReviewUpdate) -> StoreResult<()>;
    /// Deletes a document with everything it holds (versions, comments, runs, sharing, search
    /// entries), adds `outbox` to the outbox, and announces a last `review` event; `NotFound`
    /// (and nothing written) when it is gone.
    async fn delete_review(&self, review_id: &str, outbox: Vec<OutboxEntry>) -> StoreResult<()>;
}
