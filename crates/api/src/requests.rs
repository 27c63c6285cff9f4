//! What the API reads: request bodies and query parameters.

use serde::{Deserialize, Serialize};

use crate::secret::Secret;
use crate::views::AllowedUserEntry;
use crate::wire::{Locator, SectionSpec};
use crate::words::*;

/// `limit` and `cursor` of a list endpoint.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// How many to return, 1 to 200.
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// `POST /api/auth/cli/token`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct CodeExchange {
    /// The one-time code the login page showed.
    #[schema(value_type = String)]
    pub code: Secret,
    /// The PKCE verifier whose S256 challenge the login page was opened with.
    #[schema(value_type = String)]
    pub verifier: Secret,
}

#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewComment {
    #[schema(min_length = 1, max_length = 20000)]
    pub body: String,
    pub category: Option<Category>,
    pub locator: Option<Locator>,
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    pub base_comments_revision: Option<i64>,
    /// What the passage should become (DESIGN.md §8.5): only on a `revise`, `add` (text
    /// inserted after the passage) or `delete` (`""`) comment on a quoted passage; otherwise
    /// 400 `not_a_suggestion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<Suggestion>,
}

/// A suggested change to a comment's passage (DESIGN.md §8.5).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Suggestion {
    /// The passage's replacement (`revise`), the text inserted after it (`add`), or `""`
    /// (`delete`). At most 20,000 characters.
    #[schema(max_length = 20000)]
    pub text: String,
}

/// `POST /api/reviews/{id}/suggestions/apply`: the suggestions of `commentIds` spliced into
/// `baseVersionId` (the latest version) as one new version.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplySuggestions {
    #[schema(min_items = 1, max_items = 200)]
    pub comment_ids: Vec<String>,
    /// The latest version, as the caller read it; another is 409 `stale_target_version`.
    pub base_version_id: String,
    /// The new version's label [default: v2, v3, … by count].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 100)]
    pub label: Option<String>,
}

/// The most comments one batch may hold.
pub const MAX_BATCH_COMMENTS: usize = 200;

/// Comments written in a run in one step: checked and anchored first, then the ones that pass
/// are written in one transaction with one `commentsRevision` bump.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewRunComments {
    #[schema(value_type = Vec<BatchComment>, min_items = 1, max_items = 200)]
    pub comments: Vec<BatchItem>,
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    pub base_comments_revision: Option<i64>,
    /// When any item fails, write none of them (400 with the failures in `failed`).
    #[serde(default)]
    pub atomic: bool,
}

/// One item of a batch as it was read: a comment, or JSON that is not one (a missing body, a
/// number for a string, a position that is not a whole number, …). Each item is read on its own,
/// so a bad one fails alone, named by its index, and the others are still written.
#[derive(Debug, Clone)]
pub enum BatchItem {
    Comment(BatchComment),
    /// What was sent, and why it is not a comment.
    Unreadable {
        sent: serde_json::Value,
        reason: String,
    },
}

impl From<BatchComment> for BatchItem {
    fn from(comment: BatchComment) -> Self {
        BatchItem::Comment(comment)
    }
}

impl<'de> Deserialize<'de> for BatchItem {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let sent = serde_json::Value::deserialize(deserializer)?;
        Ok(
            match serde_path_to_error::deserialize::<_, BatchComment>(&sent) {
                Ok(comment) => BatchItem::Comment(comment),
                Err(error) => {
                    let path = error.path().to_string();
                    let reason = if path == "." {
                        error.inner().to_string()
                    } else {
                        format!("{path}: {}", error.inner())
                    };
                    BatchItem::Unreadable { sent, reason }
                }
            },
        )
    }
}

impl Serialize for BatchItem {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            BatchItem::Comment(comment) => comment.serialize(serializer),
            BatchItem::Unreadable { sent, .. } => sent.serialize(serializer),
        }
    }
}

/// One comment of a batch. What the batch checks per item (body length, category, where the
/// quote is) fails that item alone, so the schema leaves it open.
#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchComment {
    /// 1 to 20,000 characters.
    pub body: String,
    /// One of the comment categories (default `note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locator: Option<Locator>,
    /// What the passage should become, as on a single comment (DESIGN.md §8.5); where none
    /// may be, the item fails with `invalid_request`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<Suggestion>,
}

#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewReply {
    #[schema(min_length = 1, max_length = 20000)]
    pub body: String,
    /// Writes the reply inside a running run (provisional until the run completes).
    pub run_id: Option<String>,
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    pub base_comments_revision: Option<i64>,
    /// The comment's `threadRevision` as the client last read it: when the thread changed
    /// since, 409 `thread revision conflict` and nothing is written (changes to other threads
    /// do not matter).
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    pub base_thread_revision: Option<i64>,
}

/// `PUT /api/me/password`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PasswordChange {
    #[schema(value_type = String)]
    pub current_password: crate::secret::Secret,
    /// At least 10 characters.
    #[schema(value_type = String, min_length = 10, max_length = 1024)]
    pub new_password: crate::secret::Secret,
}

#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TextEdit {
    #[schema(min_length = 1, max_length = 20000)]
    pub body: String,
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    pub base_comments_revision: Option<i64>,
    /// The comment's `threadRevision` as the client last read it: when the thread changed
    /// since, 409 `thread revision conflict` and nothing is written (changes to other threads
    /// do not matter).
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    pub base_thread_revision: Option<i64>,
}

#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reanchor {
    pub locator: Locator,
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    pub base_comments_revision: Option<i64>,
    /// The comment's `threadRevision` as the client last read it: when the thread changed
    /// since, 409 `thread revision conflict` and nothing is written (changes to other threads
    /// do not matter).
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    pub base_thread_revision: Option<i64>,
}

#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusChange {
    pub status: CommentStatus,
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    pub base_comments_revision: Option<i64>,
    /// The comment's `threadRevision` as the client last read it: when the thread changed
    /// since, 409 `thread revision conflict` and nothing is written (changes to other threads
    /// do not matter).
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    pub base_thread_revision: Option<i64>,
}

/// `PATCH …/title`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct TitleChange {
    #[schema(value_type = crate::schema::Title)]
    pub title: String,
}

/// `PATCH …/meta`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct MetaChange {
    /// Replaces the tags (at most 32).
    #[schema(value_type = Option<Vec<crate::schema::Tag>>, max_items = 32)]
    pub tags: Option<Vec<String>>,
    pub archived: Option<bool>,
}

/// `PATCH …/access`; `allowedUsers` replaces the whole list.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(min_properties = 1)]
pub struct SharingChange {
    pub mode: Option<AccessMode>,
    pub allowed_users: Option<Vec<AllowedUserEntry>>,
}

/// `PUT …/owner`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct OwnerChange {
    #[schema(value_type = crate::schema::Email)]
    pub email: String,
}

/// `POST /api/org/members`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewMember {
    #[schema(value_type = crate::schema::Email)]
    pub email: String,
    #[schema(value_type = crate::schema::DisplayName)]
    pub display_name: String,
}

/// `PATCH /api/org/members`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberChange {
    #[schema(value_type = crate::schema::Email)]
    pub email: String,
    pub status: Option<MemberStatus>,
    #[schema(value_type = Option<crate::schema::DisplayName>)]
    pub display_name: Option<String>,
}

/// `PATCH /api/me`: what a person may change of their own profile (at least one field).
#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileChange {
    #[schema(value_type = Option<crate::schema::Handle>)]
    pub handle: Option<String>,
    #[schema(value_type = Option<crate::schema::DisplayName>)]
    pub display_name: Option<String>,
}

/// The statuses an admin may set (removal is `DELETE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemberStatus {
    Active,
    Suspended,
}

/// A member named by email (`DELETE /api/org/members`, `PUT`/`DELETE /api/org/admins`).
#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
pub struct MemberRef {
    #[schema(value_type = crate::schema::Email)]
    pub email: String,
}

/// `PATCH /api/projects/{code}/roles`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[schema(min_properties = 1)]
pub struct RolesChange {
    #[serde(default)]
    pub add: Vec<RoleGrant>,
    #[serde(default)]
    pub remove: Vec<RoleRevocation>,
}

#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct RoleGrant {
    #[schema(value_type = crate::schema::Email)]
    pub email: String,
    pub role: ProjectRole,
}

#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct RoleRevocation {
    #[schema(value_type = crate::schema::Email)]
    pub email: String,
}

/// `POST /api/reviews`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateReview {
    pub review: ReviewInput,
    /// A project code; then the server makes the document's id (send no `review.reviewId`).
    #[schema(pattern = "^[A-Z0-9][A-Z0-9-]{0,31}$")]
    pub project: Option<String>,
}

#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewInput {
    pub review_id: Option<String>,
    #[schema(value_type = Option<crate::schema::Title>)]
    pub title: Option<String>,
    pub source: Option<SourceInput>,
    pub access: Option<AccessInput>,
    pub structure: Option<StructureInput>,
    #[schema(value_type = Option<Vec<crate::schema::Tag>>, max_items = 32)]
    pub tags: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
pub struct SourceInput {
    pub html: Option<String>,
    #[schema(min_length = 1, max_length = 100)]
    pub label: Option<String>,
}

#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessInput {
    pub mode: Option<AccessMode>,
    pub allowed_users: Option<Vec<AllowedUserEntry>>,
}

#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct StructureInput {
    pub sections: Vec<SectionSpec>,
}

/// `GET /api/reviews` query.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    pub q: Option<String>,
    pub tag: Option<String>,
    pub archived: Option<bool>,
    pub project: Option<String>,
    pub owner: Option<String>,
    /// How many to return, 1 to 200.
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartRun {
    pub kind: Option<RunKind>,
    #[schema(min_length = 1, max_length = 300)]
    pub title: Option<String>,
    pub version_id: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FinishRun {
    /// `completed`, `failed` or `cancelled`.
    #[schema(value_type = String, pattern = "^(completed|failed|cancelled)$")]
    pub status: RunStatus,
    #[schema(max_length = 20000)]
    pub summary: Option<String>,
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    pub base_comments_revision: Option<i64>,
}

/// `GET /api/search/comments`.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct CommentSearchQuery {
    /// Words to find (1 to 16, of letters or digits), each a prefix; `"…"` for a phrase.
    #[param(required = true, min_length = 1)]
    pub q: Option<String>,
    pub status: Option<CommentStatus>,
    pub category: Option<Category>,
    pub review_id: Option<String>,
    /// `me`: only threads assigned to the caller.
    pub assignee: Option<String>,
    /// How many to return, 1 to 200.
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// `GET /api/reviews/{reviewId}/find`.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct FindQuery {
    /// The phrase (1 to 1,000 characters); case and white space are not compared.
    #[param(required = true, min_length = 1, max_length = 1000)]
    pub q: Option<String>,
    /// Only the occurrences that start in this heading section (subsections included).
    pub section_id: Option<String>,
    /// The version to look in (default the latest).
    pub version_id: Option<String>,
    /// How many to return, 1 to 200.
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// `GET /api/reviews/{reviewId}/export`.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// `w3c` (a W3C Web Annotation collection, JSON-LD), `native` (`docreview-export/1`: every
    /// version's HTML and the whole discussion; editors and owners), `csv` (a row per comment and
    /// reply) or `markdown` (a readable report).
    #[param(required = true, value_type = crate::words::ExportFormat, inline)]
    pub format: Option<String>,
}

/// `GET /api/search/docs`.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DocSearchQuery {
    /// Words to find (1 to 16, of letters or digits), each a prefix; `"…"` for a phrase.
    #[param(required = true, min_length = 1)]
    pub q: Option<String>,
    /// How many to return, 1 to 200.
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// `GET /api/notifications`.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct NotificationQuery {
    /// Only unread notifications.
    pub unread: Option<bool>,
    /// How many to return, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// `POST /api/notifications/read`: `{ "ids": [...] }` or `{ "all": true }`.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotificationsRead {
    /// The notifications to mark read (1 to 200 ids; others' ids are passed over).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(min_items = 1, max_items = 200)]
    pub ids: Option<Vec<String>>,
    /// `true` marks every notification read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all: Option<bool>,
}

/// `GET`/`PATCH /api/me/notification-settings`: how notifications reach the person by mail.
#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema)]
pub struct NotificationSettings {
    /// `instant` (a mail each), `daily` (one digest a day) or `off`.
    pub email: EmailFrequency,
    /// Whether this server sends mail at all (`DOCREVIEW_SMTP_URL` is set): when `false`, the
    /// setting is kept but nothing is mailed. In answers only; ignored when sent.
    #[serde(rename = "mailEnabled", default)]
    #[schema(read_only)]
    pub mail_enabled: bool,
}

/// `POST /api/reviews/{id}/reviewers`: ask someone who can read the document to review it.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewReviewer {
    pub email: String,
    /// When the review is due: an RFC 3339 time, or a date (`2026-12-01`, the end of that day
    /// in UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<String>,
}

/// `POST /api/reviews/{id}/decisions`: the caller's verdict, replacing their earlier one.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewDecision {
    pub decision: crate::words::DecisionKind,
    /// The version decided on; the latest when omitted (another gives 409
    /// `stale_target_version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    /// A note with the decision (at most 20,000 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 20000)]
    pub body: Option<String>,
}

/// `PUT …/comments/{commentId}/assignee`: who the thread is handed to; `null` unassigns.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssigneeChange {
    /// The assignee's email, or `null` for nobody. Required (send `null` to unassign).
    #[serde(deserialize_with = "crate::schema::present")]
    #[schema(required = true)]
    pub email: Option<String>,
    #[serde(default, deserialize_with = "crate::schema::whole::optional")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_comments_revision: Option<i64>,
}

/// `POST /api/org/invitations`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewInvitation {
    #[schema(value_type = crate::schema::Email)]
    pub email: String,
    /// A suggestion; the person chooses their name when accepting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::schema::DisplayName>)]
    pub display_name: Option<String>,
    pub membership: Membership,
    /// With `projectRole`: the project role the person gets on accepting (required for an
    /// external member to act anywhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_role: Option<ProjectRole>,
}

/// `POST /api/auth/password-reset`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PasswordResetRequest {
    #[schema(value_type = crate::schema::Email)]
    pub email: String,
}
