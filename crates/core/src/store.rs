//! The `Store` port: the narrow, use-case-named interface every database backend implements.
//!
//! Rules live above this port. A backend only persists and loads records, and guarantees
//! atomicity: each write method either applies whole or not at all, and writes guarded by a
//! revision (compare-and-swap) fail with `RevisionConflict` instead of overwriting.
//!
//! The port is split by domain, one trait a module, and `Store` is all of them together; a
//! backend implements each in a module of the same name. Callers hold an `Arc<dyn Store>` and
//! call any method on it without importing the domain traits.

mod accounts;
pub mod columns;
mod comments;
mod invitations;
mod organization;
mod outbox;
mod reviews;
mod search;
mod webhooks;
mod workflow;

pub use accounts::AccountStore;
pub use comments::{CommentStore, CommentsWrite, ThreadGuard};
pub use invitations::{Acceptance, InvitationStore};
pub use organization::{MemberQuery, OrganizationStore, ProjectImport, ProjectQuery};
pub use outbox::OutboxStore;
pub use reviews::{NewReview, ReviewQuery, ReviewStore, ReviewUpdate, Revisions, VersionWrite};
pub use search::{
    CommentHit, CommentSearch, MATCH_END, MATCH_START, ReviewHit, ReviewSearch,
    SEARCH_COMMENT_WINDOW, SEARCH_DOCUMENT_WINDOW, SEARCH_TEXT_MAX_CHARS, SNIPPET_ELLIPSIS,
    SearchQuery, SearchStore, SearchTerm,
};
pub use webhooks::{DeliveryRecord, WebhookRecord, WebhookStore};
pub use workflow::WorkflowStore;

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
    /// The write would leave the organization without an active administrator; nothing was
    /// written.
    #[error("the last active administrator")]
    LastAdmin,
    /// The run a write belongs to is no longer running; nothing was written.
    #[error("the run is no longer running")]
    RunNotRunning,
    /// The document's review is finalized; nothing was written.
    #[error("the review is finalized")]
    ReviewFinalized,
    /// Finalizing needs every comment closed; this many are open. Nothing was written.
    #[error("{0} comments are open")]
    OpenComments(i64),
    #[error("database unavailable: {0}")]
    Unavailable(Source),
    #[error("database error: {0}")]
    Internal(Source),
}

impl StoreError {
    /// For a write guarded by the comments revision that matched no row: the document's
    /// revision moved on (`RevisionConflict`, with the `current` one) or the document is gone.
    pub fn revision_moved(current: Option<i64>) -> StoreError {
        match current {
            Some(current) => StoreError::RevisionConflict { current },
            None => StoreError::NotFound,
        }
    }
}

/// Who is asking for a list or a search, as `access::visibility` derives it from the caller,
/// so a backend can filter in its query (DESIGN.md §3). Each backend writes this rule once, in
/// its `visibility` module; the conformance suite compares it with `access::role_on` cell by
/// cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Visibility {
    /// Shared-token principals and org admins see every document. `user_id` still names the
    /// caller, for their project role in `_project`.
    All { user_id: String },
    /// An active member sees what they own, documents linked to a project where they hold a
    /// role, and, if internal, what is shared with their email and link-mode documents.
    /// External members act only inside their projects.
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

    /// Whether every document is visible (no filter at all).
    pub fn sees_all(&self) -> bool {
        matches!(self, Visibility::All { .. })
    }

    /// The email sharing grants must name; empty for `All` (no grant names an empty email).
    pub fn email(&self) -> &str {
        match self {
            Visibility::All { .. } => "",
            Visibility::Member { email, .. } => email,
        }
    }

    /// Whether link mode and sharing count (internal members); `false` for `All`, which needs
    /// neither.
    pub fn internal(&self) -> bool {
        matches!(self, Visibility::Member { internal: true, .. })
    }
}

/// Every domain of the port, and what a backend offers beyond them.
#[async_trait::async_trait]
pub trait Store:
    AccountStore
    + ReviewStore
    + CommentStore
    + OrganizationStore
    + SearchStore
    + OutboxStore
    + WorkflowStore
    + WebhookStore
    + InvitationStore
    + Send
    + Sync
    + 'static
{
    /// Answers once the database can serve a query (readiness).
    async fn ping(&self) -> StoreResult<()>;

    /// Every document change committed from now on, through any node sharing this database.
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<crate::events::ReviewEvent>;

    /// The ids of the people whose notifications change from now on (added, withdrawn, read),
    /// through any node sharing this database.
    fn subscribe_people(&self) -> tokio::sync::broadcast::Receiver<String>;

    /// Adds this node's writes counted since its last call (`(key, count)`, counts may be 0)
    /// to the shared counters of the minute starting at `window`, and answers every key's
    /// total over all nodes. `None` when the backend serves one node only (SQLite): its
    /// limits need no sharing.
    async fn share_rate_counts(
        &self,
        _window: crate::model::Millis,
        _counts: Vec<(String, i64)>,
    ) -> StoreResult<Option<Vec<(String, i64)>>> {
        Ok(None)
    }

    /// How much of the connection pool is in use now (for `/metrics`).
    fn pool_usage(&self) -> PoolUsage {
        PoolUsage::default()
    }
}

/// A snapshot of a backend's connection pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolUsage {
    /// Connections open now, busy or idle.
    pub open: usize,
    /// Open connections waiting for work.
    pub idle: usize,
    /// The most the pool opens.
    pub max: usize,
}

/// `count` (a limit or an offset) as the `BIGINT` both backends bind.
pub fn count_param(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}
