//! How both SQL backends lay records out in columns, written once: the decoders that read a
//! record back from a row, and the encodings of fields that are neither plain text nor numbers
//! (JSON documents, scope lists, project status words).
//!
//! A backend selects each record's columns in the order its decoder reads them (its own column
//! lists, in its own SQL dialect) and hands rows over as `&dyn Columns`. Words this build does
//! not know are errors, except in roles (a grant's or a project's): an unknown role reads as no
//! role, so a newer writer sharing the database never widens an older reader's access.

use crate::model::{
    AccessGrant, AccessMode, Account, Category, CommentRecord, CommentStatus, GrantRole,
    InvitationRecord, LoginCodeRecord, Membership, MessageRecord, Millis, PasswordResetRecord,
    ProjectMember, ProjectRecord, ProjectRole, Provider, ReviewRecord, ReviewSummaryRecord,
    RunKind, RunRecord, RunStatus, Scope, SessionRecord, StatusEventRecord, TokenRecord, User,
    UserStatus, VersionRecord,
};
use crate::model::{DecisionKind, DecisionRecord, Emoji, ReactionRecord, ReviewerRecord};

use super::StoreError;

pub type ColumnResult<T> = Result<T, ColumnError>;

/// A column that could not be read as its record's field.
#[derive(Debug, thiserror::Error)]
#[error("column {index}: {source}")]
pub struct ColumnError {
    pub index: usize,
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl ColumnError {
    pub fn new(index: usize, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        ColumnError {
            index,
            source: source.into(),
        }
    }
}

impl From<ColumnError> for StoreError {
    fn from(error: ColumnError) -> Self {
        StoreError::Internal(Box::new(error))
    }
}

/// One row, as the decoders read it; each backend implements it over its driver's row type.
pub trait Columns {
    fn text(&self, index: usize) -> ColumnResult<String>;
    fn optional_text(&self, index: usize) -> ColumnResult<Option<String>>;
    fn integer(&self, index: usize) -> ColumnResult<i64>;
    fn optional_integer(&self, index: usize) -> ColumnResult<Option<i64>>;
    fn flag(&self, index: usize) -> ColumnResult<bool>;
    fn real(&self, index: usize) -> ColumnResult<f64>;
    fn bytes(&self, index: usize) -> ColumnResult<Vec<u8>>;
}

/// How many columns each record spans, for rows that hold several.
pub const REVIEW_WIDTH: usize = 17;
pub const USER_WIDTH: usize = 4;
pub const ACCOUNT_WIDTH: usize = USER_WIDTH + 5;
pub const TOKEN_WIDTH: usize = 9;
pub const SESSION_WIDTH: usize = 5;
pub const VERSION_WIDTH: usize = 6;
pub const PROJECT_WIDTH: usize = 5;
/// `review`, then the owner (`user`), the caller's grant role, the live and open comment counts,
/// the linked project (`optional_project`) and the caller's role in it.
pub const SUMMARY_WIDTH: usize = REVIEW_WIDTH + USER_WIDTH + 3 + PROJECT_WIDTH + 1;

/// A text column holding one of a closed set of words.
pub fn word<T>(row: &dyn Columns, index: usize, parse: fn(&str) -> Option<T>) -> ColumnResult<T> {
    let text = row.text(index)?;
    parse(&text).ok_or_else(|| ColumnError::new(index, format!("unexpected value `{text}`")))
}

fn json<T: serde::de::DeserializeOwned>(row: &dyn Columns, index: usize) -> ColumnResult<T> {
    serde_json::from_str(&row.text(index)?).map_err(|error| ColumnError::new(index, error))
}

fn optional_json<T: serde::de::DeserializeOwned>(
    row: &dyn Columns,
    index: usize,
) -> ColumnResult<Option<T>> {
    row.optional_text(index)?
        .map(|text| serde_json::from_str(&text).map_err(|error| ColumnError::new(index, error)))
        .transpose()
}

/// A record as JSON text, for a JSON column. The records are plain data, so serializing cannot
/// fail; `null` is a defensive fallback the NOT NULL columns would refuse loudly.
pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

/// A list as a JSON column: NULL when empty.
pub fn optional_list_json<T: serde::Serialize>(list: &[T]) -> Option<String> {
    (!list.is_empty()).then(|| to_json(&list))
}

/// A SHA-256, stored as 32 bytes.
fn hash(row: &dyn Columns, index: usize) -> ColumnResult<[u8; 32]> {
    row.bytes(index)?
        .try_into()
        .map_err(|_| ColumnError::new(index, "hash is not 32 bytes"))
}

/// Scopes as `scopes_text` writes them: comma-separated words.
fn scopes(row: &dyn Columns, index: usize) -> ColumnResult<Vec<Scope>> {
    row.text(index)?
        .split(',')
        .filter(|scope| !scope.is_empty())
        .map(|scope| {
            Scope::parse(scope)
                .ok_or_else(|| ColumnError::new(index, format!("unknown scope `{scope}`")))
        })
        .collect()
}

pub fn scopes_text(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|scope| scope.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// `projects.status` of an active project; any other value reads as inactive.
const PROJECT_ACTIVE: &str = "active";
const PROJECT_INACTIVE: &str = "inactive";

pub fn project_status(active: bool) -> &'static str {
    if active {
        PROJECT_ACTIVE
    } else {
        PROJECT_INACTIVE
    }
}

/// id, title, owner id, access mode, tags (JSON), archived, comments revision, structure
/// revision, change sequence, created, updated, latest version id, its source hash, structure
/// (JSON or NULL), project code.
pub fn review(row: &dyn Columns, at: usize) -> ColumnResult<ReviewRecord> {
    Ok(ReviewRecord {
        id: row.text(at)?,
        title: row.text(at + 1)?,
        owner_id: row.text(at + 2)?,
        access_mode: word(row, at + 3, AccessMode::parse)?,
        tags: json(row, at + 4)?,
        archived: row.flag(at + 5)?,
        comments_revision: row.integer(at + 6)?,
        structure_revision: row.integer(at + 7)?,
        change_seq: row.integer(at + 8)?,
        created_at: row.integer(at + 9)?,
        updated_at: row.integer(at + 10)?,
        latest_version_id: row.text(at + 11)?,
        latest_source_hash: row.text(at + 12)?,
        structure: optional_json(row, at + 13)?,
        project_code: row.optional_text(at + 14)?,
        finalized: match (row.optional_integer(at + 15)?, row.optional_text(at + 16)?) {
            (Some(finalized_at), Some(by)) => Some((finalized_at, by)),
            _ => None,
        },
    })
}

/// id, provider, display name, handle (NULL, read as empty, only for an account made before
/// handles existed, until the next server start gives it one).
pub fn user(row: &dyn Columns, at: usize) -> ColumnResult<User> {
    Ok(User {
        id: row.text(at)?,
        provider: word(row, at + 1, Provider::parse)?,
        display_name: row.text(at + 2)?,
        handle: row.optional_text(at + 3)?.unwrap_or_default(),
    })
}

/// `user`, then email, membership, status, admin flag, created.
pub fn account(row: &dyn Columns, at: usize) -> ColumnResult<Account> {
    let at = at + USER_WIDTH;
    Ok(Account {
        user: user(row, at - USER_WIDTH)?,
        email: row.text(at)?,
        membership: word(row, at + 1, Membership::parse)?,
        status: word(row, at + 2, UserStatus::parse)?,
        is_admin: row.flag(at + 3)?,
        created_at: row.integer(at + 4)?,
    })
}

/// email, role; `None` for a NULL email (an outer join without a grant) or an unknown role.
pub fn grant(row: &dyn Columns, at: usize) -> ColumnResult<Option<AccessGrant>> {
    let email = row.optional_text(at)?;
    let role = optional_role(row, at + 1, GrantRole::parse)?;
    Ok(email
        .zip(role)
        .map(|(email, role)| AccessGrant { email, role }))
}

/// A role column: `None` when NULL, or a word this build does not know (see the module's note).
fn optional_role<T>(
    row: &dyn Columns,
    index: usize,
    parse: fn(&str) -> Option<T>,
) -> ColumnResult<Option<T>> {
    Ok(row.optional_text(index)?.as_deref().and_then(parse))
}

pub fn project_role(row: &dyn Columns, index: usize) -> ColumnResult<Option<ProjectRole>> {
    optional_role(row, index, ProjectRole::parse)
}

/// `account`, then the role; `None` for a role this build does not know.
pub fn project_member(row: &dyn Columns, at: usize) -> ColumnResult<Option<ProjectMember>> {
    let account = account(row, at)?;
    Ok(project_role(row, at + ACCOUNT_WIDTH)?.map(|role| ProjectMember { account, role }))
}

/// id, review id, label, created, source hash, sections (JSON).
pub fn version(row: &dyn Columns, at: usize) -> ColumnResult<VersionRecord> {
    Ok(VersionRecord {
        id: row.text(at)?,
        review_id: row.text(at + 1)?,
        label: row.text(at + 2)?,
        created_at: row.integer(at + 3)?,
        source_hash: row.text(at + 4)?,
        sections: json(row, at + 5)?,
    })
}

/// id, review id, author id, category, status, body, version id, anchor (JSON), run id,
/// created, edited, deleted, mentions (JSON or NULL for none), thread revision.
pub fn comment(row: &dyn Columns, at: usize) -> ColumnResult<CommentRecord> {
    Ok(CommentRecord {
        id: row.text(at)?,
        review_id: row.text(at + 1)?,
        author_id: row.text(at + 2)?,
        category: word(row, at + 3, Category::parse)?,
        status: word(row, at + 4, CommentStatus::parse)?,
        body: row.text(at + 5)?,
        version_id: row.text(at + 6)?,
        anchor: json(row, at + 7)?,
        run_id: row.optional_text(at + 8)?,
        created_at: row.integer(at + 9)?,
        edited_at: row.optional_integer(at + 10)?,
        deleted_at: row.optional_integer(at + 11)?,
        mentions: optional_json(row, at + 12)?.unwrap_or_default(),
        thread_revision: row.integer(at + 13)?,
        assignee_id: row.optional_text(at + 14)?,
        suggestion: row.optional_text(at + 15)?,
    })
}

/// review id, user id, requested, due, requested by.
pub fn reviewer(row: &dyn Columns, at: usize) -> ColumnResult<ReviewerRecord> {
    Ok(ReviewerRecord {
        review_id: row.text(at)?,
        user_id: row.text(at + 1)?,
        requested_at: row.integer(at + 2)?,
        due_at: row.optional_integer(at + 3)?,
        requested_by: row.text(at + 4)?,
    })
}

/// id, review id, user id, decision, version id, body, created.
pub fn decision(row: &dyn Columns, at: usize) -> ColumnResult<DecisionRecord> {
    Ok(DecisionRecord {
        id: row.text(at)?,
        review_id: row.text(at + 1)?,
        user_id: row.text(at + 2)?,
        decision: word(row, at + 3, DecisionKind::parse)?,
        version_id: row.text(at + 4)?,
        body: row.optional_text(at + 5)?,
        created_at: row.integer(at + 6)?,
    })
}

/// review id, comment id, message id (empty for the comment's own), user id, emoji, created.
pub fn reaction(row: &dyn Columns, at: usize) -> ColumnResult<ReactionRecord> {
    let message_id = row.text(at + 2)?;
    Ok(ReactionRecord {
        review_id: row.text(at)?,
        comment_id: row.text(at + 1)?,
        message_id: (!message_id.is_empty()).then_some(message_id),
        user_id: row.text(at + 3)?,
        emoji: word(row, at + 4, Emoji::parse)?,
        created_at: row.integer(at + 5)?,
    })
}

/// id, comment id, review id, author id, body, run id, created, edited, deleted, mentions (JSON
/// or NULL for none).
pub fn message(row: &dyn Columns, at: usize) -> ColumnResult<MessageRecord> {
    Ok(MessageRecord {
        id: row.text(at)?,
        comment_id: row.text(at + 1)?,
        review_id: row.text(at + 2)?,
        author_id: row.text(at + 3)?,
        body: row.text(at + 4)?,
        run_id: row.optional_text(at + 5)?,
        created_at: row.integer(at + 6)?,
        edited_at: row.optional_integer(at + 7)?,
        deleted_at: row.optional_integer(at + 8)?,
        mentions: optional_json(row, at + 9)?.unwrap_or_default(),
    })
}

/// comment id, sequence, status, by (user id), time.
pub fn status_event(row: &dyn Columns, at: usize) -> ColumnResult<StatusEventRecord> {
    Ok(StatusEventRecord {
        comment_id: row.text(at)?,
        seq: row.integer(at + 1)?,
        status: word(row, at + 2, CommentStatus::parse)?,
        by_id: row.text(at + 3)?,
        ts: row.integer(at + 4)?,
        reason: row.optional_text(at + 5)?,
        version_id: row.optional_text(at + 6)?,
    })
}

/// id, review id, kind, status, title, version id, summary, created by, created, completed.
pub fn run(row: &dyn Columns, at: usize) -> ColumnResult<RunRecord> {
    Ok(RunRecord {
        id: row.text(at)?,
        review_id: row.text(at + 1)?,
        kind: word(row, at + 2, RunKind::parse)?,
        status: word(row, at + 3, RunStatus::parse)?,
        title: row.text(at + 4)?,
        version_id: row.text(at + 5)?,
        summary: row.optional_text(at + 6)?,
        created_by: row.text(at + 7)?,
        created_at: row.integer(at + 8)?,
        completed_at: row.optional_integer(at + 9)?,
    })
}

/// id, user id, name, hash, scopes, created, expires, last used, revoked.
pub fn token(row: &dyn Columns, at: usize) -> ColumnResult<TokenRecord> {
    Ok(TokenRecord {
        id: row.text(at)?,
        user_id: row.text(at + 1)?,
        name: row.text(at + 2)?,
        hash: hash(row, at + 3)?,
        scopes: scopes(row, at + 4)?,
        created_at: row.integer(at + 5)?,
        expires_at: row.integer(at + 6)?,
        last_used_at: row.optional_integer(at + 7)?,
        revoked_at: row.optional_integer(at + 8)?,
    })
}

/// id, hash, user id, created, expires.
pub fn session(row: &dyn Columns, at: usize) -> ColumnResult<SessionRecord> {
    Ok(SessionRecord {
        id: row.text(at)?,
        hash: hash(row, at + 1)?,
        user_id: row.text(at + 2)?,
        created_at: row.integer(at + 3)?,
        expires_at: row.integer(at + 4)?,
    })
}

/// hash, user id, challenge, token name, scopes, created, expires, used.
pub fn login_code(row: &dyn Columns, at: usize) -> ColumnResult<LoginCodeRecord> {
    Ok(LoginCodeRecord {
        hash: hash(row, at)?,
        user_id: row.text(at + 1)?,
        challenge: row.text(at + 2)?,
        token_name: row.text(at + 3)?,
        scopes: scopes(row, at + 4)?,
        created_at: row.integer(at + 5)?,
        expires_at: row.integer(at + 6)?,
        used_at: row.optional_integer(at + 7)?,
    })
}

/// id, hash, email, display name, membership, project code, project role, invited by,
/// created, expires, accepted, revoked.
pub fn invitation(row: &dyn Columns, at: usize) -> ColumnResult<InvitationRecord> {
    let code = row.optional_text(at + 5)?;
    let role = project_role(row, at + 6)?;
    Ok(InvitationRecord {
        id: row.text(at)?,
        hash: hash(row, at + 1)?,
        email: row.text(at + 2)?,
        display_name: row.optional_text(at + 3)?,
        membership: word(row, at + 4, Membership::parse)?,
        project: code.zip(role),
        invited_by: row.text(at + 7)?,
        created_at: row.integer(at + 8)?,
        expires_at: row.integer(at + 9)?,
        accepted_at: row.optional_integer(at + 10)?,
        revoked_at: row.optional_integer(at + 11)?,
    })
}

/// hash, user id, created, expires, used.
pub fn password_reset(row: &dyn Columns, at: usize) -> ColumnResult<PasswordResetRecord> {
    Ok(PasswordResetRecord {
        hash: hash(row, at)?,
        user_id: row.text(at + 1)?,
        created_at: row.integer(at + 2)?,
        expires_at: row.integer(at + 3)?,
        used_at: row.optional_integer(at + 4)?,
    })
}

/// The columns `invitation` reads, for both backends' queries.
pub const INVITATION_COLUMNS: &str = "id, hash, email, display_name, membership, project_code, \
     project_role, invited_by, created_at, expires_at, accepted_at, revoked_at";

/// The columns `password_reset` reads.
pub const PASSWORD_RESET_COLUMNS: &str = "hash, user_id, created_at, expires_at, used_at";

/// code, name, company, status, in snapshot.
pub fn project(row: &dyn Columns, at: usize) -> ColumnResult<ProjectRecord> {
    Ok(ProjectRecord {
        code: row.text(at)?,
        name: row.optional_text(at + 1)?,
        company: row.optional_text(at + 2)?,
        active: row.text(at + 3)? == PROJECT_ACTIVE,
        in_snapshot: row.flag(at + 4)?,
    })
}

/// `project` from an outer join: `None` when the code is NULL.
pub fn optional_project(row: &dyn Columns, at: usize) -> ColumnResult<Option<ProjectRecord>> {
    match row.optional_text(at)? {
        Some(_) => project(row, at).map(Some),
        None => Ok(None),
    }
}

/// A list row: see `SUMMARY_WIDTH`.
pub fn summary(row: &dyn Columns, at: usize) -> ColumnResult<ReviewSummaryRecord> {
    let extra = at + REVIEW_WIDTH;
    Ok(ReviewSummaryRecord {
        review: review(row, at)?,
        owner: user(row, extra)?,
        grant: optional_role(row, extra + USER_WIDTH, GrantRole::parse)?,
        comment_count: row.integer(extra + USER_WIDTH + 1)?,
        open_comment_count: row.integer(extra + USER_WIDTH + 2)?,
        project: optional_project(row, extra + USER_WIDTH + 3)?,
        project_role: project_role(row, extra + USER_WIDTH + 3 + PROJECT_WIDTH)?,
    })
}

/// An outbox row as claimed: id, sink, kind, event id, target, payload, created, attempts,
/// claimant, and the claim's end (its next attempt's time).
pub fn outbox_row(row: &dyn Columns, at: usize) -> ColumnResult<crate::outbox::OutboxRow> {
    Ok(crate::outbox::OutboxRow {
        id: row.text(at)?,
        sink: word(row, at + 1, crate::outbox::Sink::parse)?,
        kind: row.text(at + 2)?,
        event_id: row.text(at + 3)?,
        target: row.optional_text(at + 4)?,
        payload: row.text(at + 5)?,
        created_at: row.integer(at + 6)?,
        attempts: row.integer(at + 7)?,
        claimant: row.optional_text(at + 8)?.unwrap_or_default(),
        claimed_until: row.integer(at + 9)?,
    })
}

/// The columns an outcome sets on its outbox row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutcomeColumns<'a> {
    pub status: crate::model::DeliveryStatus,
    /// When the row finished, if it did.
    pub finished_at: Option<Millis>,
    pub next_attempt_at: Millis,
    pub response_status: Option<i64>,
    pub error: Option<&'a str>,
}

impl<'a> OutcomeColumns<'a> {
    pub fn of(outcome: &'a crate::outbox::Outcome, at: Millis) -> Self {
        use crate::model::DeliveryStatus;
        use crate::outbox::Outcome;
        match outcome {
            Outcome::Delivered { response_status } => OutcomeColumns {
                status: DeliveryStatus::Succeeded,
                finished_at: Some(at),
                next_attempt_at: at,
                response_status: *response_status,
                error: None,
            },
            Outcome::Retry {
                at: next,
                response_status,
                error,
            } => OutcomeColumns {
                status: DeliveryStatus::Pending,
                finished_at: None,
                next_attempt_at: *next,
                response_status: *response_status,
                error: Some(error),
            },
            Outcome::Failed {
                response_status,
                error,
            } => OutcomeColumns {
                status: DeliveryStatus::Failed,
                finished_at: Some(at),
                next_attempt_at: at,
                response_status: *response_status,
                error: Some(error),
            },
        }
    }
}

/// id, user id, event id, reason, review id, comment id, message id, actor id, excerpt, created,
/// read.
pub fn notification(
    row: &dyn Columns,
    at: usize,
) -> ColumnResult<crate::outbox::NotificationRecord> {
    Ok(crate::outbox::NotificationRecord {
        id: row.text(at)?,
        user_id: row.text(at + 1)?,
        event_id: row.text(at + 2)?,
        reason: word(row, at + 3, crate::model::NotificationReason::parse)?,
        review_id: row.optional_text(at + 4)?,
        comment_id: row.optional_text(at + 5)?,
        message_id: row.optional_text(at + 6)?,
        actor_id: row.optional_text(at + 7)?,
        excerpt: row.text(at + 8)?,
        created_at: row.integer(at + 9)?,
        read_at: row.optional_integer(at + 10)?,
    })
}

/// A webhook: `id, url, events (JSON list), project_code, description, active, secret,
/// previous_secret, previous_expires_at, created_by, created_at`.
pub fn webhook(row: &dyn Columns, at: usize) -> ColumnResult<super::WebhookRecord> {
    Ok(super::WebhookRecord {
        id: row.text(at)?,
        url: row.text(at + 1)?,
        events: json(row, at + 2)?,
        project_code: row.optional_text(at + 3)?,
        description: row.optional_text(at + 4)?,
        active: row.flag(at + 5)?,
        secret: row.text(at + 6)?,
        previous_secret: row.optional_text(at + 7)?,
        previous_expires_at: row.optional_integer(at + 8)?,
        created_by: row.text(at + 9)?,
        created_at: row.integer(at + 10)?,
    })
}

/// A webhook delivery (an outbox row): `id, target, event_id, kind, payload, attempts, status,
/// last_response_status, last_error, created_at, next_attempt_at`.
pub fn delivery(row: &dyn Columns, at: usize) -> ColumnResult<super::DeliveryRecord> {
    Ok(super::DeliveryRecord {
        id: row.text(at)?,
        webhook_id: row.optional_text(at + 1)?.unwrap_or_default(),
        event_id: row.text(at + 2)?,
        kind: row.text(at + 3)?,
        payload: row.text(at + 4)?,
        attempts: row.integer(at + 5)?,
        status: word(row, at + 6, crate::model::DeliveryStatus::parse)?,
        last_response_status: row.optional_integer(at + 7)?,
        last_error: row.optional_text(at + 8)?,
        created_at: row.integer(at + 9)?,
        next_attempt_at: row.integer(at + 10)?,
    })
}
