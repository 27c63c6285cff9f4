//! What the API answers.

use serde::{Deserialize, Serialize};

use crate::secret::Secret;
use crate::wire::{Anchor, Mention, Position, Quote, Section, User};
use crate::words::*;

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Review)]
pub struct ReviewView {
    pub role: Role,
    pub review_id: String,
    pub title: String,
    pub comments_revision: i64,
    pub structure_revision: i64,
    pub comments: Vec<CommentView>,
    pub ai_review_runs: Vec<RunView>,
    pub created_at: String,
    pub updated_at: String,
    pub source: SourceView,
    pub tags: Vec<String>,
    pub archived: bool,
    pub owner: User,
    pub access: AccessView,
    pub latest_version_id: String,
    #[serde(rename = "_project", skip_serializing_if = "Option::is_none")]
    pub project: Option<ProjectLinkView>,
    /// The review workflow: reviewers, decisions, outcome, finalized or not (DESIGN.md §8.4).
    pub workflow: WorkflowView,
}

/// A document's review workflow (DESIGN.md §8.4).
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Workflow)]
pub struct WorkflowView {
    pub state: WorkflowState,
    /// Over the decisions that are not stale: `changes_requested` if any, else
    /// `approved_with_changes` if any, else `approved` if every requested reviewer approved
    /// (or, with none requested, at least one approval), else `not_relevant` if all are, else
    /// `pending`.
    pub outcome: Outcome,
    /// The people asked to review, in the order they were asked.
    pub reviewers: Vec<ReviewerView>,
    /// Each person's current decision (a newer one replaces their older), oldest first.
    pub decisions: Vec<DecisionView>,
    pub finalized_at: Option<String>,
    pub finalized_by: Option<User>,
}

/// Someone asked to review a document.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Reviewer)]
pub struct ReviewerView {
    pub user: User,
    pub requested_at: String,
    pub due_at: Option<String>,
    /// Their current decision, if they made one (stale or not).
    pub decision: Option<DecisionView>,
}

/// A person's verdict on a document, made on one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Decision)]
pub struct DecisionView {
    pub id: String,
    pub user: User,
    pub decision: DecisionKind,
    pub version_id: String,
    pub body: Option<String>,
    pub created_at: String,
    /// Made on a version that is no longer the latest: it no longer counts for the outcome.
    pub stale: bool,
}

/// One emoji's reactions on a comment or reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Reaction)]
pub struct ReactionView {
    pub emoji: Emoji,
    pub count: i64,
    pub reacted_by_me: bool,
}

/// `{ "workflow": Workflow }`, the answer to a change of reviewers, finalizing or reopening.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WorkflowBody {
    pub workflow: WorkflowView,
}

/// `{ "decision": Decision, "workflow": Workflow }`, the answer to a decision.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DecisionWritten {
    pub decision: DecisionView,
    pub workflow: WorkflowView,
}

/// `{ "reactions": [Reaction] }`: a comment's or reply's reactions after a change.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReactionsBody {
    pub reactions: Vec<ReactionView>,
}

/// `_project`: the project a document is linked to, with the caller's role in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ProjectLink)]
pub struct ProjectLinkView {
    pub code: String,
    pub name: Option<String>,
    pub company: Option<String>,
    pub status: String,
    pub in_snapshot: bool,
    pub role: Option<ProjectRole>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = Source)]
pub struct SourceView {
    pub versions: Vec<VersionView>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Version)]
pub struct VersionView {
    pub version_id: String,
    pub label: String,
    /// UNIX time in milliseconds.
    #[schema(value_type = i64)]
    pub created_at: i64,
    pub source_hash: String,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = Access)]
pub struct AccessView {
    pub mode: AccessMode,
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Comment)]
pub struct CommentView {
    pub id: String,
    pub author: User,
    pub category: Category,
    pub status: CommentStatus,
    pub body: String,
    pub anchor: Anchor,
    pub thread: Vec<MessageView>,
    pub status_events: Vec<EventView>,
    pub version_id: String,
    pub created_ts: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edited_ts: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted_ts: Option<String>,
    pub provisional: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The people the body mentions (`@handle`), resolved when it was written.
    #[serde(default)]
    pub mentions: Vec<Mention>,
    /// Rises with every change to this comment or its thread (its text, status or anchor; a
    /// reply written, edited or cancelled). Sent back as `baseThreadRevision`, a write is
    /// refused (409 `thread revision conflict`) only when this thread changed meanwhile.
    pub thread_revision: i64,
    /// Who the thread is handed to, if anyone.
    #[serde(default)]
    pub assignee: Option<User>,
    /// Reactions, one entry per emoji that has any, in the order of `Emoji`.
    #[serde(default)]
    pub reactions: Vec<ReactionView>,
    /// The change this comment suggests for its passage (DESIGN.md §8.5), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<crate::requests::Suggestion>,
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ThreadMessage)]
pub struct MessageView {
    pub id: String,
    pub author: User,
    pub body: String,
    pub created_ts: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edited_ts: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted_ts: Option<String>,
    pub provisional: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The people the body mentions (`@handle`), resolved when it was written.
    #[serde(default)]
    pub mentions: Vec<Mention>,
    /// Reactions, one entry per emoji that has any, in the order of `Emoji`.
    #[serde(default)]
    pub reactions: Vec<ReactionView>,
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = StatusEvent)]
pub struct EventView {
    pub seq: i64,
    pub status: CommentStatus,
    pub by: User,
    pub ts: String,
    /// Why, when the change was not a person's choice: `applied` (the comment's suggestion went
    /// into `versionId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "versionId")]
    pub version_id: Option<String>,
}

/// `{ review, versionId, applied }`: the answer to applying suggestions.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuggestionsApplied {
    pub review: ReviewView,
    /// The new version.
    pub version_id: String,
    /// The comments whose suggestions it holds (now closed), in the order sent.
    pub applied: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Run)]
pub struct RunView {
    pub id: String,
    pub kind: RunKind,
    pub status: RunStatus,
    pub title: String,
    pub version_id: String,
    pub comment_ids: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    pub created_ts: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_ts: Option<String>,
}

/// `GET /api/me`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = Me)]
pub struct MeView {
    pub user: MemberView,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<CurrentTokenView>,
}

/// A member as the organization and account endpoints show them: the public `User` plus email,
/// membership, status and admin flag.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Member)]
pub struct MemberView {
    pub id: String,
    pub provider: Provider,
    pub display_name: String,
    pub handle: String,
    pub email: String,
    pub membership: Membership,
    pub status: UserStatus,
    pub is_admin: bool,
    pub created_at: String,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = CurrentToken)]
pub struct CurrentTokenView {
    pub id: String,
    pub scopes: Vec<Scope>,
    pub expires_at: String,
}

/// A personal token's record, never its value.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Token)]
pub struct TokenView {
    pub id: String,
    pub name: String,
    pub scopes: Vec<Scope>,
    pub created_at: String,
    pub expires_at: String,
    pub last_used_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenList {
    pub tokens: Vec<TokenView>,
    pub next_cursor: Option<String>,
}

/// The answer to a successful code exchange: the token value, shown this once.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExchangedToken {
    /// The token's value, shown this once.
    #[schema(value_type = String)]
    pub token: Secret,
    pub token_id: String,
    pub expires_at: String,
    pub scopes: Vec<Scope>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommentWritten {
    pub comment: CommentView,
    pub comments_revision: i64,
    /// Set when the quote occurs more than once and nothing (prefix, suffix, position) said
    /// which occurrence was meant: how many there are (counted up to 1,000). The first was
    /// taken; clients can warn and send context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote_matches: Option<usize>,
    /// Handles the body names that mention nobody: unknown, or people who cannot read the
    /// document (which of the two is not said).
    #[serde(default)]
    pub unresolved_mentions: Vec<String>,
}

/// The answer to a batch of run comments.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunCommentsWritten {
    /// The comments written, in the order sent.
    pub written: Vec<BatchWritten>,
    /// The items not written, in the order sent.
    pub failed: Vec<BatchFailure>,
    /// After the write; unchanged when nothing was written.
    pub comments_revision: i64,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchWritten {
    /// The item's place in the request's `comments` (from 0).
    pub index: usize,
    pub comment: CommentView,
}

/// `POST /api/reviews/{id}/import-annotations`: what was written, and each annotation that was
/// not, by its place in the file.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnnotationImport {
    /// Comments written (on the latest version).
    pub imported: usize,
    /// Replies written under them.
    pub replies: usize,
    pub comments_revision: i64,
    pub failed: Vec<ImportFailure>,
}

/// One annotation of an import that was not written.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportFailure {
    /// Its place in the file's list of annotations (from 0).
    pub index: usize,
    /// Its id in the file, if it has one.
    pub id: Option<String>,
    pub error: ImportItemError,
    pub message: String,
}

/// Why one item of a batch was not written, and for a quote, what it may have meant.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchFailure {
    /// The item's place in the request's `comments` (from 0).
    pub index: usize,
    pub error: BatchItemError,
    pub message: String,
    /// For `quote_not_found`, where the quote occurs outside the section named, else the closest
    /// passages of the text (whole words); for `quote_ambiguous`, the first 10 occurrences
    /// (`find` lists them all). Each can be sent back as the item's `locator`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<QuoteCandidate>,
}

/// A passage of the latest version's text, as a locator that anchors to exactly it: sent back
/// as it is (or with only its quote and section), it lands where it was offered.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuoteCandidate {
    pub quote: Quote,
    pub position: Position,
    /// The innermost heading section the passage starts in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_id: Option<String>,
}

/// The answer to `GET /api/reviews/{reviewId}/find`: a phrase's occurrences in a version, in
/// text order.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindResults {
    pub review_id: String,
    pub version_id: String,
    /// How many occurrences there are (counted up to 1,000).
    pub total: usize,
    pub occurrences: Vec<Occurrence>,
    pub next_cursor: Option<String>,
}

/// One occurrence of a phrase: a locator that anchors a comment to exactly it (`quote`,
/// `position`, `sectionId`), and the text around it as a reader sees it.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Occurrence {
    /// The passage as the text has it, with the context that tells it from other occurrences.
    pub quote: Quote,
    pub position: Position,
    /// The innermost heading section the passage starts in.
    pub section_id: Option<String>,
    /// Up to 80 characters on each side of the passage, with a line break where blocks meet.
    pub context: String,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplyWritten {
    pub comment: CommentView,
    pub message: MessageView,
    pub comments_revision: i64,
    /// Handles the body names that mention nobody: unknown, or people who cannot read the
    /// document (which of the two is not said).
    #[serde(default)]
    pub unresolved_mentions: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusWritten {
    pub comment: CommentView,
    pub event: EventView,
    pub comments_revision: i64,
}

/// One person a document is shared with, by email.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AllowedUserEntry {
    #[schema(value_type = crate::schema::Email)]
    pub email: String,
    pub role: GrantRole,
}

/// `GET …/access` and the answer to `PATCH …/access`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Sharing)]
pub struct SharingView {
    pub mode: AccessMode,
    pub allowed_users: Vec<AllowedUserEntry>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberList {
    pub members: Vec<MemberView>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdminList {
    pub admins: Vec<MemberView>,
    pub next_cursor: Option<String>,
}

/// A project as `GET /api/projects` lists it, with the caller's role.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Project)]
pub struct ProjectView {
    pub code: String,
    pub name: Option<String>,
    pub company: Option<String>,
    pub status: String,
    pub in_snapshot: bool,
    pub role: Option<ProjectRole>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectList {
    pub projects: Vec<ProjectView>,
    pub next_cursor: Option<String>,
}

/// `GET /api/projects/{code}/roles` and the answer to `PATCH`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ProjectRoles {
    pub project: ProjectView,
    pub roles: Vec<ProjectRoleView>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = ProjectRoleEntry)]
pub struct ProjectRoleView {
    pub user: MemberView,
    pub email: String,
    pub role: ProjectRole,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewList {
    pub reviews: Vec<ReviewSummaryView>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ReviewSummary)]
pub struct ReviewSummaryView {
    pub review_id: String,
    pub title: String,
    pub tags: Vec<String>,
    pub archived: bool,
    pub owner: User,
    pub role: Role,
    pub created_at: String,
    pub updated_at: String,
    pub latest_version_id: String,
    pub comment_count: i64,
    pub open_comment_count: i64,
    #[serde(rename = "_project", skip_serializing_if = "Option::is_none")]
    pub project: Option<ProjectLinkView>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DomContext {
    pub review_id: String,
    pub version_id: String,
    pub structure_revision: i64,
    pub sections: Vec<Section>,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommentResults {
    pub results: Vec<CommentResult>,
    pub next_cursor: Option<String>,
}

/// A matching comment, or a matching reply (`messageId` set) with its comment's status and
/// category.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommentResult {
    pub review_id: String,
    pub review_title: String,
    pub comment_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    pub author: User,
    pub category: Category,
    pub status: CommentStatus,
    pub created_ts: String,
    /// HTML: escaped text with matches in `<mark>`.
    pub snippet: String,
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocResults {
    pub results: Vec<DocResult>,
    pub next_cursor: Option<String>,
}

/// A matching document: its list summary plus a snippet.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DocResult {
    #[serde(flatten)]
    pub review: ReviewSummaryView,
    /// HTML: escaped text with matches in `<mark>`.
    pub snippet: String,
}

/// `{ "review": Review }`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReviewBody {
    pub review: ReviewView,
}

/// `{ "run": Run }`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RunBody {
    pub run: RunView,
}

/// `{ "commentsRevision": N }`, the answer to a cancel.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevisionBody {
    pub comments_revision: i64,
}

/// `{ "member": Member }`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MemberBody {
    pub member: MemberView,
}

/// `{ "admin": Member }`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AdminBody {
    pub admin: MemberView,
}

/// `{ "token": Token }`, with `revokedAt` set.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Revoked {
    pub token: TokenView,
}

/// The answer to a deletion.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Deleted {
    pub review_id: String,
    pub deleted: bool,
}

/// One notification (DESIGN.md §8.1).
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Notification)]
pub struct NotificationView {
    pub id: String,
    /// Why the person is told (the strongest of their reasons for this event).
    pub reason: NotificationReason,
    pub review_id: Option<String>,
    pub review_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_id: Option<String>,
    /// Who made the change (`null` when the system reports).
    pub actor: Option<User>,
    /// The start of the comment's or reply's body (or what happened), on one line.
    pub excerpt: String,
    pub created_at: String,
    /// When it was marked read; `null` while unread.
    pub read_at: Option<String>,
}

/// `GET /api/notifications`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotificationList {
    pub notifications: Vec<NotificationView>,
    pub next_cursor: Option<String>,
    /// Every unread notification the person can see, not only this page's.
    pub unread_count: i64,
}

/// The answer to `POST /api/notifications/read`, and the data of a `notification` event.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnreadCount {
    pub unread_count: i64,
}

/// An invitation to join the organization. `acceptUrl` carries the single-use secret and is
/// answered once, when the invitation is made (only its hash is stored); lists leave it out.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvitationView {
    /// `inv_…`.
    pub id: String,
    pub email: String,
    /// The name the inviting admin suggested, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    pub membership: Membership,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_role: Option<ProjectRole>,
    /// RFC 3339; 7 days after it was made.
    pub expires_at: String,
    pub created_at: String,
    /// `{public_url}/invite/{secret}`; only in the answer that makes the invitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub accept_url: Option<Secret>,
}

/// `{ "invitation": Invitation }`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct InvitationBody {
    pub invitation: InvitationView,
}

/// `{ "invitations": [Invitation] }`: the pending ones, newest first.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct InvitationList {
    pub invitations: Vec<InvitationView>,
}
