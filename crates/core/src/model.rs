//! The records docreview keeps, as the core and the stores share them.

use docreview_api::wire;
pub use docreview_api::wire::{Mention, Section, SectionSpec, User};
pub use docreview_api::words::*;
use serde::{Deserialize, Serialize};

/// Where a comment sits in a version, as stored (a JSON column in both stores). The API's
/// `Anchor` is made from it when a comment is shown (`view`), so the two can change apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Anchor {
    pub version_id: String,
    pub section_id: Option<String>,
    pub quote: Option<Quote>,
    pub position: Option<Position>,
    pub state: AnchorState,
}

/// The passage an anchor quotes, with the text around it (32 code points each side).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quote {
    pub exact: String,
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub suffix: String,
}

/// A range of code points in a version's text, end exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub start: usize,
    pub end: usize,
}

// Between the stored forms and the API's (the only place the two meet).
impl From<&Anchor> for wire::Anchor {
    fn from(anchor: &Anchor) -> Self {
        wire::Anchor {
            version_id: anchor.version_id.clone(),
            section_id: anchor.section_id.clone(),
            quote: anchor.quote.clone().map(Into::into),
            position: anchor.position.map(Into::into),
            state: anchor.state,
        }
    }
}

impl From<Quote> for wire::Quote {
    fn from(quote: Quote) -> Self {
        wire::Quote {
            exact: quote.exact,
            prefix: quote.prefix,
            suffix: quote.suffix,
        }
    }
}

impl From<&wire::Quote> for Quote {
    fn from(quote: &wire::Quote) -> Self {
        Quote {
            exact: quote.exact.clone(),
            prefix: quote.prefix.clone(),
            suffix: quote.suffix.clone(),
        }
    }
}

impl From<Position> for wire::Position {
    fn from(position: Position) -> Self {
        wire::Position {
            start: position.start,
            end: position.end,
        }
    }
}

impl From<&wire::Position> for Position {
    fn from(position: &wire::Position) -> Self {
        Position {
            start: position.start,
            end: position.end,
        }
    }
}

/// UNIX time in milliseconds.
pub type Millis = i64;

/// A user with what the access rules need to know about them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user: User,
    pub email: String,
    pub membership: Membership,
    pub status: UserStatus,
    pub is_admin: bool,
    pub created_at: Millis,
}

impl Account {
    pub fn id(&self) -> &str {
        &self.user.id
    }
}

/// A personal token as stored: never the value, only its SHA-256.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenRecord {
    pub id: String,
    pub user_id: String,
    pub name: String,
    pub hash: [u8; 32],
    pub scopes: Vec<Scope>,
    pub created_at: Millis,
    pub expires_at: Millis,
    pub last_used_at: Option<Millis>,
    pub revoked_at: Option<Millis>,
}

impl std::fmt::Debug for TokenRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRecord")
            .field("id", &self.id)
            .field("user_id", &self.user_id)
            .field("scopes", &self.scopes)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewRecord {
    pub id: String,
    pub title: String,
    pub owner_id: String,
    pub access_mode: AccessMode,
    pub tags: Vec<String>,
    pub archived: bool,
    pub comments_revision: i64,
    pub structure_revision: i64,
    /// Rises with every write to the document or its versions, comments or runs; a rendering
    /// made at one `change_seq` is current exactly while the document still has it.
    pub change_seq: i64,
    pub created_at: Millis,
    pub updated_at: Millis,
    pub latest_version_id: String,
    /// `sourceHash` of the latest version (keys the parsed-text cache).
    pub latest_source_hash: String,
    pub structure: Option<Vec<SectionSpec>>,
    pub project_code: Option<String>,
    /// When and by whom the review was finalized (DESIGN.md §8.4); `None` while it is open.
    pub finalized: Option<(Millis, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessGrant {
    pub email: String,
    pub role: GrantRole,
}

/// A document's record with its sharing list: enough to decide who may see it.
#[derive(Debug, Clone)]
pub struct ReviewHead {
    pub review: ReviewRecord,
    pub grants: Vec<AccessGrant>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRecord {
    pub id: String,
    pub review_id: String,
    pub label: String,
    pub created_at: Millis,
    pub source_hash: String,
    /// Heading sections of this version's text, computed once when the body is stored.
    pub sections: Vec<Section>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentRecord {
    pub id: String,
    pub review_id: String,
    pub author_id: String,
    pub category: Category,
    pub status: CommentStatus,
    pub body: String,
    pub version_id: String,
    pub anchor: Anchor,
    pub run_id: Option<String>,
    pub created_at: Millis,
    pub edited_at: Option<Millis>,
    pub deleted_at: Option<Millis>,
    /// The people its body mentions, resolved when it was last written.
    pub mentions: Vec<Mention>,
    /// Who the thread is handed to.
    pub assignee_id: Option<String>,
    /// The passage's replacement a `revise`, `add` or `delete` comment suggests (DESIGN.md
    /// §8.5): for `add`, text inserted after the passage; for `delete`, empty.
    pub suggestion: Option<String>,
    /// Rises by one with each write that changes this comment or its thread; set by the store
    /// (what a record being written holds is ignored).
    pub thread_revision: i64,
}

impl CommentRecord {
    /// The thread revision of a comment its first write has just made.
    pub const NEW_THREAD_REVISION: i64 = 1;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRecord {
    pub id: String,
    pub comment_id: String,
    pub review_id: String,
    pub author_id: String,
    pub body: String,
    pub run_id: Option<String>,
    pub created_at: Millis,
    pub edited_at: Option<Millis>,
    pub deleted_at: Option<Millis>,
    /// The people its body mentions, resolved when it was last written.
    pub mentions: Vec<Mention>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusEventRecord {
    pub comment_id: String,
    pub seq: i64,
    pub status: CommentStatus,
    pub by_id: String,
    pub ts: Millis,
    /// Why the status changed when it was not a person's choice: `applied` (a suggestion that
    /// went into `version_id`).
    pub reason: Option<String>,
    pub version_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRecord {
    pub id: String,
    pub review_id: String,
    pub kind: RunKind,
    pub status: RunStatus,
    pub title: String,
    pub version_id: String,
    pub summary: Option<String>,
    pub created_by: String,
    pub created_at: Millis,
    pub completed_at: Option<Millis>,
}

/// One comment with its replies and status history.
#[derive(Debug, Clone)]
pub struct CommentThread {
    pub comment: CommentRecord,
    pub messages: Vec<MessageRecord>,
    pub events: Vec<StatusEventRecord>,
    /// Reactions on the comment and on its replies.
    pub reactions: Vec<ReactionRecord>,
}

/// Someone asked to review a document (DESIGN.md §8.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewerRecord {
    pub review_id: String,
    pub user_id: String,
    pub requested_at: Millis,
    pub due_at: Option<Millis>,
    pub requested_by: String,
}

/// A person's current decision on a document: one per person, a newer one replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRecord {
    pub id: String,
    pub review_id: String,
    pub user_id: String,
    pub decision: DecisionKind,
    pub version_id: String,
    pub body: Option<String>,
    pub created_at: Millis,
}

/// One person's reaction with one emoji on a comment, or on a reply (`message_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReactionRecord {
    pub review_id: String,
    pub comment_id: String,
    pub message_id: Option<String>,
    pub user_id: String,
    pub emoji: Emoji,
    pub created_at: Millis,
}

/// Everything needed to render a review.
#[derive(Debug, Clone)]
pub struct ReviewState {
    pub head: ReviewHead,
    pub versions: Vec<VersionRecord>,
    pub comments: Vec<CommentRecord>,
    pub messages: Vec<MessageRecord>,
    pub events: Vec<StatusEventRecord>,
    pub runs: Vec<RunRecord>,
    /// Reviewers in the order they were asked.
    pub reviewers: Vec<ReviewerRecord>,
    /// Each person's current decision.
    pub decisions: Vec<DecisionRecord>,
    pub reactions: Vec<ReactionRecord>,
    /// Every user referenced by the records above (owner, authors, event actors, reviewers,
    /// deciders, assignees, who finalized).
    pub users: Vec<User>,
    /// The project the document is linked to, if any.
    pub project: Option<ProjectRecord>,
}

/// A list row of `GET /api/reviews`.
#[derive(Debug, Clone)]
pub struct ReviewSummaryRecord {
    pub review: ReviewRecord,
    pub owner: User,
    /// The caller's sharing grant on this document, if any.
    pub grant: Option<GrantRole>,
    pub comment_count: i64,
    pub open_comment_count: i64,
    /// The project the document is linked to, and the caller's role in it.
    pub project: Option<ProjectRecord>,
    pub project_role: Option<ProjectRole>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRecord {
    pub code: String,
    pub name: Option<String>,
    pub company: Option<String>,
    pub active: bool,
    pub in_snapshot: bool,
}

/// A member's role in a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectMember {
    pub account: Account,
    pub role: ProjectRole,
}

/// A browser sign-in, stored server-side so it can be revoked; only the cookie value's SHA-256
/// is kept.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionRecord {
    pub id: String,
    pub hash: [u8; 32],
    pub user_id: String,
    pub created_at: Millis,
    pub expires_at: Millis,
}

impl std::fmt::Debug for SessionRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionRecord")
            .field("id", &self.id)
            .field("user_id", &self.user_id)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// A one-time code shown on the command-line login page, bound to the CLI's PKCE challenge;
/// only the code's SHA-256 is kept.
#[derive(Clone, PartialEq, Eq)]
pub struct LoginCodeRecord {
    pub hash: [u8; 32],
    pub user_id: String,
    /// `BASE64URL(SHA-256(verifier))`, as the CLI sent it (PKCE S256).
    pub challenge: String,
    /// The name the issued token will carry.
    pub token_name: String,
    pub scopes: Vec<Scope>,
    pub created_at: Millis,
    pub expires_at: Millis,
    pub used_at: Option<Millis>,
}

impl std::fmt::Debug for LoginCodeRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginCodeRecord")
            .field("user_id", &self.user_id)
            .field("scopes", &self.scopes)
            .field("expires_at", &self.expires_at)
            .field("used_at", &self.used_at)
            .finish_non_exhaustive()
    }
}

/// An invitation to join the organization (DESIGN.md §8.2); only the secret's SHA-256 is kept.
/// Pending while neither accepted nor revoked, and until `expires_at`.
#[derive(Clone, PartialEq, Eq)]
pub struct InvitationRecord {
    pub id: String,
    pub hash: [u8; 32],
    /// Lower case, as accounts store it.
    pub email: String,
    /// The name the inviting admin suggested (the person chooses theirs when accepting).
    pub display_name: Option<String>,
    pub membership: Membership,
    /// The project role the person gets on accepting.
    pub project: Option<(String, ProjectRole)>,
    pub invited_by: String,
    pub created_at: Millis,
    pub expires_at: Millis,
    pub accepted_at: Option<Millis>,
    pub revoked_at: Option<Millis>,
}

impl InvitationRecord {
    /// Neither accepted nor revoked, and not expired at `now`.
    pub fn pending_at(&self, now: Millis) -> bool {
        self.accepted_at.is_none() && self.revoked_at.is_none() && now < self.expires_at
    }
}

impl std::fmt::Debug for InvitationRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InvitationRecord")
            .field("id", &self.id)
            .field("email", &self.email)
            .field("membership", &self.membership)
            .field("project", &self.project)
            .field("expires_at", &self.expires_at)
            .field("accepted_at", &self.accepted_at)
            .field("revoked_at", &self.revoked_at)
            .finish_non_exhaustive()
    }
}

/// A password reset mailed to a person; only the secret's SHA-256 is kept. Single use.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordResetRecord {
    pub hash: [u8; 32],
    pub user_id: String,
    pub created_at: Millis,
    pub expires_at: Millis,
    pub used_at: Option<Millis>,
}

impl std::fmt::Debug for PasswordResetRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordResetRecord")
            .field("user_id", &self.user_id)
            .field("expires_at", &self.expires_at)
            .field("used_at", &self.used_at)
            .finish_non_exhaustive()
    }
}
