//! The `Store` port: the narrow, use-case-named interface every database backend implements.
//!
//! Rules live above this trait. A backend only persists and loads records, and guarantees
//! atomicity: each write method either applies whole or not at all, and writes guarded by a
//! revision (compare-and-swap) fail with `RevisionConflict` instead of overwriting.

use crate::model::{
    AccessGrant, Account, Anchor, CommentRecord, CommentThread, MessageRecord, Millis,
    ProjectRecord, ReviewHead, ReviewRecord, ReviewState, ReviewSummaryRecord, RunRecord,
    StatusEventRecord, TokenRecord, User, VersionRecord,
};

pub type StoreResult<T> = std::result::Result<T, StoreError>;
type Source = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The guarded revision moved on; nothing was written.
    #[error("comments revision conflict (current {current})")]
    RevisionConflict { current: i64 },
    /// The guarded latest version moved on; nothing was written.
    #[error("stale target version (latest {latest})")]
    StaleVersion { latest: String },
    /// A unique key (named here) is taken.
    #[error("{0} already exists")]
    AlreadyExists(&'static str),
    /// The record a write refers to is gone.
    #[error("not found")]
    NotFound,
    #[error("database unavailable: {0}")]
    Unavailable(Source),
    #[error("database error: {0}")]
    Internal(Source),
}

/// Who is asking for a list, expressed so a backend can filter in its query.
#[derive(Debug, Clone)]
pub enum Visibility {
    /// Shared-token principals and org admins see every document.
    All,
    /// A member sees what they own and, if internal, what is shared with them and link-mode
    /// documents (external members act only inside their projects).
    Member {
        user_id: String,
        email: String,
        internal: bool,
    },
}

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
}

/// One atomic change to a document's comments, guarded by its `commentsRevision`.
/// The store bumps the revision by exactly one and writes every row, or writes nothing.
#[derive(Debug, Clone, Default)]
pub struct CommentsWrite {
    pub expected_revision: i64,
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
}

/// The result of a successful version write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revisions {
    pub comments: i64,
    pub structure: i64,
}

#[async_trait::async_trait]
pub trait Store: Send + Sync + 'static {
    /// Answers once the database can serve a query (readiness).
    async fn ping(&self) -> StoreResult<()>;

    /// Every document change committed from now on, through any node sharing this database.
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<crate::events::ReviewEvent>;

    // Accounts and tokens.
    async fn create_account(
        &self,
        account: Account,
        password_hash: Option<String>,
    ) -> StoreResult<()>;
    /// Creates the account or, if its id exists, leaves it as it is (service principals).
    async fn ensure_account(&self, account: Account) -> StoreResult<()>;
    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>>;
    async fn account_by_id(&self, id: &str) -> StoreResult<Option<Account>>;
    async fn insert_token(&self, token: TokenRecord) -> StoreResult<()>;
    async fn token_by_hash(&self, hash: &[u8; 32]) -> StoreResult<Option<(TokenRecord, Account)>>;
    async fn touch_token(&self, token_id: &str, at: Millis) -> StoreResult<()>;

    // Documents.
    async fn create_review(&self, review: NewReview) -> StoreResult<()>;
    async fn review_head(&self, review_id: &str) -> StoreResult<Option<ReviewHead>>;
    async fn review_state(&self, review_id: &str) -> StoreResult<Option<ReviewState>>;
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
    async fn project(&self, code: &str) -> StoreResult<Option<ProjectRecord>>;

    // Comments and runs.
    async fn comment_thread(
        &self,
        review_id: &str,
        comment_id: &str,
    ) -> StoreResult<Option<CommentThread>>;
    /// Every comment of the document that is not deleted (for re-anchoring).
    async fn live_comments(&self, review_id: &str) -> StoreResult<Vec<CommentRecord>>;
    async fn users(&self, ids: &[String]) -> StoreResult<Vec<User>>;
    /// Applies `write` if the document is still at `expected_revision`; raises `commentsRevision`
    /// and `change_seq` by one and sets `updated_at`.
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
