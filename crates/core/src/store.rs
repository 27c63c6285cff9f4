//! The `Store` port: the narrow, use-case-named interface every database backend implements.
//!
//! Rules live above this trait. A backend only persists and loads records, and guarantees
//! atomicity: each write method either applies whole or not at all, and writes guarded by a
//! revision (compare-and-swap) fail with `RevisionConflict` instead of overwriting.

use crate::model::{
    AccessGrant, AccessMode, Account, Anchor, Category, CommentRecord, CommentStatus,
    CommentThread, LoginCodeRecord, MessageRecord, Millis, ProjectMember, ProjectRecord,
    ProjectRole, ReviewHead, ReviewRecord, ReviewState, ReviewSummaryRecord, RunRecord,
    SessionRecord, StatusEventRecord, TokenRecord, User, VersionRecord,
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

/// Who is asking for a list, expressed so a backend can filter in its query (DESIGN.md §3).
#[derive(Debug, Clone)]
pub enum Visibility {
    /// Shared-token principals and org admins see every document. `user_id` still names the
    /// caller, for their project role in `_project`.
    All { user_id: String },
    /// A member sees what they own, documents linked to a project where they hold a role, and,
    /// if internal, what is shared with them (by email) and link-mode documents. External
    /// members act only inside their projects.
    Member {
        user_id: String,
        email: String,
        internal: bool,
    },
}

impl Visibility {
    /// The caller, whose grant and project role the rows carry.
    pub fn user_id(&self) -> &str {
        match self {
            Visibility::All { user_id } | Visibility::Member { user_id, .. } => user_id,
        }
    }
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
    /// The version's text, for full-text search of documents (already cut to
    /// `SEARCH_TEXT_MAX_CHARS`).
    pub search_text: String,
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
    /// The new body's text, replacing the document's search text.
    pub search_text: String,
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

/// What `import_projects` changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProjectImport {
    /// Codes not seen before.
    pub added: usize,
    /// Codes already known (their name, company and status are overwritten).
    pub updated: usize,
    /// Codes in the store but not in this snapshot: now `in_snapshot = false`.
    pub dropped: usize,
}

#[derive(Debug, Clone)]
pub struct ProjectQuery {
    /// The caller, whose role each row carries.
    pub user_id: String,
    /// Only projects where the caller holds a role (external members see no others).
    pub only_mine: bool,
    /// Continue after this code (ascending order).
    pub after: Option<String>,
    pub limit: usize,
}

/// Organization members, ordered by email.
#[derive(Debug, Clone)]
pub struct MemberQuery {
    /// Only org administrators.
    pub admins_only: bool,
    /// Continue after this email.
    pub after: Option<String>,
    pub limit: usize,
}

/// Search ranks the newest this many comment and reply matches the caller may see (after the
/// filters), and pages reach this deep. Ranking every match of a word found in most of a million
/// comments costs seconds on either backend; a window keeps every search within tens of
/// milliseconds. Queries with fewer matches are ranked whole.
pub const SEARCH_COMMENT_WINDOW: usize = 1000;
/// The same for documents (the most recently updated matches).
pub const SEARCH_DOCUMENT_WINDOW: usize = 500;

/// Documents' text is searchable up to this many characters (PostgreSQL's `tsvector` is
/// bounded, and one rule for both backends keeps results alike).
pub const SEARCH_TEXT_MAX_CHARS: usize = 200_000;

/// Marks the start and end of a matched term inside a search snippet. Private-use characters, so
/// they cannot collide with text; the core turns them into `<mark>` after escaping the rest.
pub const MATCH_START: char = '\u{E000}';
pub const MATCH_END: char = '\u{E001}';
/// Stands for text left out of a snippet.
pub const SNIPPET_ELLIPSIS: &str = "…";

/// A parsed full-text query: every term must match (AND).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    pub terms: Vec<SearchTerm>,
}

/// Words are lower-case runs of letters and digits (Unicode), safe to place in any backend's
/// query syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchTerm {
    /// Matches any token starting with the word (`deploy` finds `deployment`).
    Prefix(String),
    /// The words in this order, next to each other, each matched whole.
    Phrase(Vec<String>),
}

/// `GET /api/search/comments`: comment and reply bodies of documents the caller can see.
#[derive(Debug, Clone)]
pub struct CommentSearch {
    pub visibility: Visibility,
    pub query: SearchQuery,
    /// Of the comment (for a reply: of its comment).
    pub status: Option<CommentStatus>,
    pub category: Option<Category>,
    pub review_id: Option<String>,
    pub offset: usize,
    pub limit: usize,
}

/// One matching comment or reply, best match first, ties newest first. Deleted items, and
/// replies of deleted comments, are never found.
#[derive(Debug, Clone)]
pub struct CommentHit {
    pub review_id: String,
    pub review_title: String,
    pub comment_id: String,
    /// Set when the match is in a reply.
    pub message_id: Option<String>,
    pub author: User,
    /// Of the comment.
    pub category: Category,
    pub status: CommentStatus,
    pub created_at: Millis,
    /// The matching body's text around the match, terms wrapped in `MATCH_START`/`MATCH_END`.
    pub snippet: String,
}

/// `GET /api/search/docs`: titles and latest-version text of documents the caller can see.
#[derive(Debug, Clone)]
pub struct ReviewSearch {
    pub visibility: Visibility,
    pub query: SearchQuery,
    pub offset: usize,
    pub limit: usize,
}

/// One matching document, best match first, ties most recently updated first.
#[derive(Debug, Clone)]
pub struct ReviewHit {
    pub summary: ReviewSummaryRecord,
    /// Text around the match in the document's text (or its title when only the title matches),
    /// terms wrapped in `MATCH_START`/`MATCH_END`.
    pub snippet: String,
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
    /// The user's tokens that are not revoked (expired ones included), newest first.
    async fn tokens_of(&self, user_id: &str) -> StoreResult<Vec<TokenRecord>>;
    /// Revokes the user's token; `false` when they have no such unrevoked token.
    async fn revoke_token(&self, user_id: &str, token_id: &str, at: Millis) -> StoreResult<bool>;
    /// The argon2id PHC string of a local account's password, if it has one.
    async fn password_hash(&self, user_id: &str) -> StoreResult<Option<String>>;

    // Organization.
    /// Members (never service principals, never removed accounts).
    async fn list_accounts(&self, query: MemberQuery) -> StoreResult<Vec<Account>>;
    /// Overwrites the changeable fields of an account (display name, membership, status, admin
    /// flag), found by id; `NotFound` when there is none.
    async fn update_account(&self, account: Account) -> StoreResult<()>;
    /// Marks the account removed and, in the same transaction, revokes its tokens, deletes its
    /// sessions and login codes, drops its admin flag and its project roles.
    async fn remove_account(&self, user_id: &str, at: Millis) -> StoreResult<()>;

    // Browser sessions and command-line login codes.
    async fn insert_session(&self, session: SessionRecord) -> StoreResult<()>;
    async fn session_by_hash(
        &self,
        hash: &[u8; 32],
    ) -> StoreResult<Option<(SessionRecord, Account)>>;
    async fn delete_session(&self, hash: &[u8; 32]) -> StoreResult<()>;
    async fn insert_login_code(&self, code: LoginCodeRecord) -> StoreResult<()>;
    async fn login_code(&self, hash: &[u8; 32]) -> StoreResult<Option<LoginCodeRecord>>;
    /// Marks the code used at `at` and inserts `token`, both or neither, if the code is still
    /// unused; `false` (nothing written) when it was used already or does not exist.
    async fn redeem_login_code(
        &self,
        hash: &[u8; 32],
        at: Millis,
        token: TokenRecord,
    ) -> StoreResult<bool>;

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
    /// Changes a document's own fields; `NotFound` when it is gone.
    async fn update_review(&self, update: ReviewUpdate) -> StoreResult<()>;
    /// Deletes a document with everything it holds (versions, comments, runs, sharing, search
    /// entries), and announces a last `review` event; `NotFound` when it is gone.
    async fn delete_review(&self, review_id: &str) -> StoreResult<()>;

    // Projects.
    async fn project(&self, code: &str) -> StoreResult<Option<ProjectRecord>>;
    /// Loads a project snapshot in one transaction: every listed project is inserted or
    /// overwritten with `in_snapshot = true`; every other known project gets `in_snapshot = false`
    /// (its links and roles stay).
    async fn import_projects(&self, projects: Vec<ProjectRecord>) -> StoreResult<ProjectImport>;
    async fn list_projects(
        &self,
        query: ProjectQuery,
    ) -> StoreResult<Vec<(ProjectRecord, Option<ProjectRole>)>>;
    async fn project_role(&self, code: &str, user_id: &str) -> StoreResult<Option<ProjectRole>>;
    /// Everyone holding a role in the project, ordered by email.
    async fn project_members(&self, code: &str) -> StoreResult<Vec<ProjectMember>>;
    /// Sets (inserts or changes) and removes roles by user id, in one transaction.
    async fn change_project_roles(
        &self,
        code: &str,
        set: Vec<(String, ProjectRole)>,
        remove: Vec<String>,
    ) -> StoreResult<()>;
    /// Links the document to `project` (or unlinks it, `None`) if it is still linked to
    /// `expected`; `false` (nothing written) when it is linked otherwise. Raises `change_seq`, sets
    /// `updated_at` and announces a `review` event; `NotFound` when the document is gone.
    async fn link_project(
        &self,
        review_id: &str,
        expected: Option<&str>,
        project: Option<&str>,
        at: Millis,
    ) -> StoreResult<bool>;

    // Search.
    async fn search_comments(&self, search: CommentSearch) -> StoreResult<Vec<CommentHit>>;
    async fn search_reviews(&self, search: ReviewSearch) -> StoreResult<Vec<ReviewHit>>;
    /// Documents whose text was never indexed (they existed before search did), at most
    /// `limit`, as `(review_id, latest_version_id)`. Their titles are searchable already.
    async fn reviews_without_search_text(&self, limit: usize)
    -> StoreResult<Vec<(String, String)>>;
    /// Sets a document's search text if it was never set and its latest version is still
    /// `version_id` (otherwise a version write has set it already, and it must not be overwritten
    /// with older text); a gone document is not an error.
    async fn set_search_text(
        &self,
        review_id: &str,
        version_id: &str,
        text: String,
    ) -> StoreResult<()>;

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
