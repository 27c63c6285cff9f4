//! Mapping between rows and the core's records.

use docreview_core::model::{
    Account, Anchor, CommentRecord, GrantRole, LoginCodeRecord, MessageRecord, ProjectRecord,
    ProjectRole, ReviewRecord, ReviewSummaryRecord, RunRecord, Scope, SessionRecord,
    StatusEventRecord, TokenRecord, User, VersionRecord,
};
use rusqlite::Row;
use rusqlite::types::Type;

pub const REVIEW_COLUMNS: &str = "r.id, r.title, r.owner_id, r.access_mode, r.tags, r.archived, r.comments_revision, \
     r.structure_revision, r.change_seq, r.created_at, r.updated_at, r.latest_version_id, v.source_hash, r.structure, r.project_code";
pub const REVIEW_FROM: &str = "reviews r JOIN versions v ON v.id = r.latest_version_id";
pub const USER_COLUMNS: &str =
    "u.id, u.provider, u.display_name, u.email, u.membership, u.status, u.is_admin, u.created_at";
pub const VERSION_COLUMNS: &str = "id, review_id, label, created_at, source_hash, sections";
pub const COMMENT_COLUMNS: &str = "id, review_id, author_id, category, status, body, version_id, anchor, run_id, created_at, edited_at, deleted_at";
pub const MESSAGE_COLUMNS: &str =
    "id, comment_id, review_id, author_id, body, run_id, created_at, edited_at, deleted_at";
pub const EVENT_COLUMNS: &str = "comment_id, seq, status, by_id, ts";
pub const RUN_COLUMNS: &str =
    "id, review_id, kind, status, title, version_id, summary, created_by, created_at, completed_at";
pub const TOKEN_COLUMNS: &str = "t.id, t.user_id, t.name, t.hash, t.scopes, t.created_at, t.expires_at, t.last_used_at, t.revoked_at";
pub const PROJECT_COLUMNS: &str = "p.code, p.name, p.company, p.status, p.in_snapshot";
pub const SESSION_COLUMNS: &str = "s.id, s.hash, s.user_id, s.created_at, s.expires_at";
pub const LOGIN_CODE_COLUMNS: &str =
    "hash, user_id, challenge, token_name, scopes, created_at, expires_at, used_at";

/// A list row of documents (`list_reviews`, `search_reviews`) is `REVIEW_COLUMNS` followed by
/// these, from `SUMMARY_FROM`, read with `summary`. Expects the named parameters `:user_id` and
/// `:email` (the caller; an email no grant names gives no grant).
pub const SUMMARY_EXTRA_COLUMNS: &str = "u.id, u.provider, u.display_name, \
     (SELECT a.role FROM review_access a WHERE a.review_id = r.id AND a.email = :email), \
     (SELECT count(*) FROM comments c WHERE c.review_id = r.id AND c.deleted_at IS NULL), \
     (SELECT count(*) FROM comments c WHERE c.review_id = r.id AND c.deleted_at IS NULL AND c.status = 'open'), \
     p.code, p.name, p.company, p.status, p.in_snapshot, pr.role";
pub const SUMMARY_FROM: &str = "reviews r JOIN versions v ON v.id = r.latest_version_id \
     JOIN users u ON u.id = r.owner_id \
     LEFT JOIN projects p ON p.code = r.project_code \
     LEFT JOIN project_roles pr ON pr.project_code = r.project_code AND pr.user_id = :user_id";
/// How many columns `REVIEW_COLUMNS` and `SUMMARY_EXTRA_COLUMNS` span together.
pub const SUMMARY_COLUMN_COUNT: usize = REVIEW_COLUMN_COUNT + 12;

/// A text column holding one of a closed set of words.
pub fn word<T>(row: &Row<'_>, index: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<T> {
    let text: String = row.get(index)?;
    parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            Type::Text,
            format!("unexpected value `{text}`").into(),
        )
    })
}

fn json<T: serde::de::DeserializeOwned>(row: &Row<'_>, index: usize) -> rusqlite::Result<T> {
    let text: String = row.get(index)?;
    serde_json::from_str(&text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(index, Type::Text, Box::new(e)))
}

fn optional_json<T: serde::de::DeserializeOwned>(
    row: &Row<'_>,
    index: usize,
) -> rusqlite::Result<Option<T>> {
    let text: Option<String> = row.get(index)?;
    text.map(|text| {
        serde_json::from_str(&text)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(index, Type::Text, Box::new(e)))
    })
    .transpose()
}

pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

pub fn review(row: &Row<'_>, at: usize) -> rusqlite::Result<ReviewRecord> {
    Ok(ReviewRecord {
        id: row.get(at)?,
        title: row.get(at + 1)?,
        owner_id: row.get(at + 2)?,
        access_mode: word(row, at + 3, docreview_core::model::AccessMode::parse)?,
        tags: json(row, at + 4)?,
        archived: row.get(at + 5)?,
        comments_revision: row.get(at + 6)?,
        structure_revision: row.get(at + 7)?,
        change_seq: row.get(at + 8)?,
        created_at: row.get(at + 9)?,
        updated_at: row.get(at + 10)?,
        latest_version_id: row.get(at + 11)?,
        latest_source_hash: row.get(at + 12)?,
        structure: optional_json(row, at + 13)?,
        project_code: row.get(at + 14)?,
    })
}

/// How many columns `REVIEW_COLUMNS` spans.
pub const REVIEW_COLUMN_COUNT: usize = 15;

pub fn user(row: &Row<'_>, at: usize) -> rusqlite::Result<User> {
    Ok(User {
        id: row.get(at)?,
        provider: word(row, at + 1, docreview_core::model::Provider::parse)?,
        display_name: row.get(at + 2)?,
    })
}

pub fn account(row: &Row<'_>, at: usize) -> rusqlite::Result<Account> {
    Ok(Account {
        user: user(row, at)?,
        email: row.get(at + 3)?,
        membership: word(row, at + 4, docreview_core::model::Membership::parse)?,
        status: word(row, at + 5, docreview_core::model::UserStatus::parse)?,
        is_admin: row.get(at + 6)?,
        created_at: row.get(at + 7)?,
    })
}

pub fn version(row: &Row<'_>) -> rusqlite::Result<VersionRecord> {
    Ok(VersionRecord {
        id: row.get(0)?,
        review_id: row.get(1)?,
        label: row.get(2)?,
        created_at: row.get(3)?,
        source_hash: row.get(4)?,
        sections: json(row, 5)?,
    })
}

pub fn comment(row: &Row<'_>) -> rusqlite::Result<CommentRecord> {
    let anchor: Anchor = json(row, 7)?;
    Ok(CommentRecord {
        id: row.get(0)?,
        review_id: row.get(1)?,
        author_id: row.get(2)?,
        category: word(row, 3, docreview_core::model::Category::parse)?,
        status: word(row, 4, docreview_core::model::CommentStatus::parse)?,
        body: row.get(5)?,
        version_id: row.get(6)?,
        anchor,
        run_id: row.get(8)?,
        created_at: row.get(9)?,
        edited_at: row.get(10)?,
        deleted_at: row.get(11)?,
    })
}

pub fn message(row: &Row<'_>) -> rusqlite::Result<MessageRecord> {
    Ok(MessageRecord {
        id: row.get(0)?,
        comment_id: row.get(1)?,
        review_id: row.get(2)?,
        author_id: row.get(3)?,
        body: row.get(4)?,
        run_id: row.get(5)?,
        created_at: row.get(6)?,
        edited_at: row.get(7)?,
        deleted_at: row.get(8)?,
    })
}

pub fn event(row: &Row<'_>) -> rusqlite::Result<StatusEventRecord> {
    Ok(StatusEventRecord {
        comment_id: row.get(0)?,
        seq: row.get(1)?,
        status: word(row, 2, docreview_core::model::CommentStatus::parse)?,
        by_id: row.get(3)?,
        ts: row.get(4)?,
    })
}

pub fn run(row: &Row<'_>) -> rusqlite::Result<RunRecord> {
    Ok(RunRecord {
        id: row.get(0)?,
        review_id: row.get(1)?,
        kind: word(row, 2, docreview_core::model::RunKind::parse)?,
        status: word(row, 3, docreview_core::model::RunStatus::parse)?,
        title: row.get(4)?,
        version_id: row.get(5)?,
        summary: row.get(6)?,
        created_by: row.get(7)?,
        created_at: row.get(8)?,
        completed_at: row.get(9)?,
    })
}

/// A SHA-256 stored as a 32-byte blob.
fn hash(row: &Row<'_>, index: usize) -> rusqlite::Result<[u8; 32]> {
    let hash: Vec<u8> = row.get(index)?;
    hash.try_into().map_err(|_| {
        rusqlite::Error::FromSqlConversionFailure(index, Type::Blob, "hash is not 32 bytes".into())
    })
}

/// Scopes stored as `scopes_text` writes them.
fn scopes(row: &Row<'_>, index: usize) -> rusqlite::Result<Vec<Scope>> {
    let text: String = row.get(index)?;
    text.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            Scope::parse(s).ok_or_else(|| {
                rusqlite::Error::FromSqlConversionFailure(
                    index,
                    Type::Text,
                    format!("unknown scope `{s}`").into(),
                )
            })
        })
        .collect()
}

pub fn token(row: &Row<'_>) -> rusqlite::Result<TokenRecord> {
    Ok(TokenRecord {
        id: row.get(0)?,
        user_id: row.get(1)?,
        name: row.get(2)?,
        hash: hash(row, 3)?,
        scopes: scopes(row, 4)?,
        created_at: row.get(5)?,
        expires_at: row.get(6)?,
        last_used_at: row.get(7)?,
        revoked_at: row.get(8)?,
    })
}

pub fn scopes_text(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

pub fn project(row: &Row<'_>, at: usize) -> rusqlite::Result<ProjectRecord> {
    let status: String = row.get(at + 3)?;
    Ok(ProjectRecord {
        code: row.get(at)?,
        name: row.get(at + 1)?,
        company: row.get(at + 2)?,
        active: status == "active",
        in_snapshot: row.get(at + 4)?,
    })
}

/// A project as a left join gives it: `None` when the code column is NULL.
fn optional_project(row: &Row<'_>, at: usize) -> rusqlite::Result<Option<ProjectRecord>> {
    let code: Option<String> = row.get(at)?;
    match code {
        Some(_) => project(row, at).map(Some),
        None => Ok(None),
    }
}

pub fn project_status(active: bool) -> &'static str {
    if active { "active" } else { "inactive" }
}

pub fn optional_project_role(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<ProjectRole>> {
    let role: Option<String> = row.get(index)?;
    role.map(|role| {
        ProjectRole::parse(&role).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                index,
                Type::Text,
                format!("unexpected project role `{role}`").into(),
            )
        })
    })
    .transpose()
}

pub fn project_role(row: &Row<'_>, index: usize) -> rusqlite::Result<ProjectRole> {
    word(row, index, ProjectRole::parse)
}

pub fn summary(row: &Row<'_>) -> rusqlite::Result<ReviewSummaryRecord> {
    let at = REVIEW_COLUMN_COUNT;
    let grant: Option<String> = row.get(at + 3)?;
    Ok(ReviewSummaryRecord {
        review: review(row, 0)?,
        owner: user(row, at)?,
        grant: grant.as_deref().and_then(GrantRole::parse),
        comment_count: row.get(at + 4)?,
        open_comment_count: row.get(at + 5)?,
        project: optional_project(row, at + 6)?,
        project_role: optional_project_role(row, at + 11)?,
    })
}

pub fn session(row: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    Ok(SessionRecord {
        id: row.get(0)?,
        hash: hash(row, 1)?,
        user_id: row.get(2)?,
        created_at: row.get(3)?,
        expires_at: row.get(4)?,
    })
}

pub fn login_code(row: &Row<'_>) -> rusqlite::Result<LoginCodeRecord> {
    Ok(LoginCodeRecord {
        hash: hash(row, 0)?,
        user_id: row.get(1)?,
        challenge: row.get(2)?,
        token_name: row.get(3)?,
        scopes: scopes(row, 4)?,
        created_at: row.get(5)?,
        expires_at: row.get(6)?,
        used_at: row.get(7)?,
    })
}
