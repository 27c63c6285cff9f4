//! Mapping between rows and the core's records. JSONB columns are selected as `::text` and bound
//! as text cast to `::jsonb`, so the records' own serde shapes are the only JSON format.

use docreview_core::model::{
    AccessMode, Account, Anchor, Category, CommentRecord, CommentStatus, GrantRole,
    LoginCodeRecord, Membership, MessageRecord, ProjectRecord, ProjectRole, Provider, ReviewRecord,
    ReviewSummaryRecord, RunKind, RunRecord, RunStatus, Scope, SessionRecord, StatusEventRecord,
    TokenRecord, User, UserStatus, VersionRecord,
};
use sqlx::Row;
use sqlx::postgres::PgRow;

type RowResult<T> = Result<T, sqlx::Error>;

pub const REVIEW_COLUMNS: &str = "r.id, r.title, r.owner_id, r.access_mode, r.tags::text, r.archived, r.comments_revision, \
     r.structure_revision, r.change_seq, r.created_at, r.updated_at, r.latest_version_id, v.source_hash, r.structure::text, r.project_code";
pub const REVIEW_FROM: &str = "reviews r JOIN versions v ON v.id = r.latest_version_id";
/// How many columns `REVIEW_COLUMNS` spans.
pub const REVIEW_COLUMN_COUNT: usize = 15;
pub const USER_COLUMNS: &str =
    "u.id, u.provider, u.display_name, u.email, u.membership, u.status, u.is_admin, u.created_at";
/// How many columns `TOKEN_COLUMNS` spans.
pub const TOKEN_COLUMN_COUNT: usize = 9;
pub const TOKEN_COLUMNS: &str = "t.id, t.user_id, t.name, t.hash, t.scopes, t.created_at, t.expires_at, t.last_used_at, t.revoked_at";
/// A list row (`ReviewSummaryRecord`) after `REVIEW_COLUMNS`, over `SUMMARY_FROM`, for the caller
/// whose user id is `$2` and email `$3` (the visibility parameters' places).
pub const SUMMARY_COLUMNS: &str = "u.id, u.provider, u.display_name, \
     (SELECT a.role FROM review_access a WHERE a.review_id = r.id AND a.email = $3), \
     (SELECT count(*) FROM comments c WHERE c.review_id = r.id AND c.deleted_at IS NULL), \
     (SELECT count(*) FROM comments c WHERE c.review_id = r.id AND c.deleted_at IS NULL AND c.status = 'open'), \
     p.code, p.name, p.company, p.status, p.in_snapshot, \
     (SELECT pr.role FROM project_roles pr WHERE pr.project_code = r.project_code AND pr.user_id = $2)";
/// The document with its latest version, owner and project, for `REVIEW_COLUMNS, SUMMARY_COLUMNS`.
pub const SUMMARY_FROM: &str = "reviews r JOIN versions v ON v.id = r.latest_version_id \
     JOIN users u ON u.id = r.owner_id LEFT JOIN projects p ON p.code = r.project_code";
/// How many columns `REVIEW_COLUMNS, SUMMARY_COLUMNS` span.
pub const SUMMARY_COLUMN_COUNT: usize = REVIEW_COLUMN_COUNT + 12;
pub const PROJECT_COLUMNS: &str = "p.code, p.name, p.company, p.status, p.in_snapshot";
pub const SESSION_COLUMNS: &str = "s.id, s.hash, s.user_id, s.created_at, s.expires_at";
/// How many columns `SESSION_COLUMNS` spans.
pub const SESSION_COLUMN_COUNT: usize = 5;
pub const LOGIN_CODE_COLUMNS: &str =
    "hash, user_id, challenge, token_name, scopes, created_at, expires_at, used_at";
pub const VERSION_COLUMNS: &str = "id, review_id, label, created_at, source_hash, sections::text";
pub const COMMENT_COLUMNS: &str = "id, review_id, author_id, category, status, body, version_id, anchor::text, run_id, created_at, edited_at, deleted_at";
pub const MESSAGE_COLUMNS: &str =
    "id, comment_id, review_id, author_id, body, run_id, created_at, edited_at, deleted_at";
pub const EVENT_COLUMNS: &str = "comment_id, seq, status, by_id, ts";
pub const RUN_COLUMNS: &str =
    "id, review_id, kind, status, title, version_id, summary, created_by, created_at, completed_at";

fn decode_error(index: usize, message: String) -> sqlx::Error {
    sqlx::Error::ColumnDecode {
        index: index.to_string(),
        source: message.into(),
    }
}

/// A text column holding one of a closed set of words.
fn word<T>(row: &PgRow, index: usize, parse: fn(&str) -> Option<T>) -> RowResult<T> {
    let text: String = row.try_get(index)?;
    parse(&text).ok_or_else(|| decode_error(index, format!("unexpected value `{text}`")))
}

fn json<T: serde::de::DeserializeOwned>(row: &PgRow, index: usize) -> RowResult<T> {
    let text: String = row.try_get(index)?;
    serde_json::from_str(&text).map_err(|e| decode_error(index, e.to_string()))
}

fn optional_json<T: serde::de::DeserializeOwned>(
    row: &PgRow,
    index: usize,
) -> RowResult<Option<T>> {
    let text: Option<String> = row.try_get(index)?;
    text.map(|text| serde_json::from_str(&text).map_err(|e| decode_error(index, e.to_string())))
        .transpose()
}

/// A record as JSON text, for a `$n::jsonb` bind. The records are plain data, so serializing
/// cannot fail; `null` is a defensive fallback the NOT NULL columns would refuse loudly.
pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

pub fn review(row: &PgRow, at: usize) -> RowResult<ReviewRecord> {
    Ok(ReviewRecord {
        id: row.try_get(at)?,
        title: row.try_get(at + 1)?,
        owner_id: row.try_get(at + 2)?,
        access_mode: word(row, at + 3, AccessMode::parse)?,
        tags: json(row, at + 4)?,
        archived: row.try_get(at + 5)?,
        comments_revision: row.try_get(at + 6)?,
        structure_revision: row.try_get(at + 7)?,
        change_seq: row.try_get(at + 8)?,
        created_at: row.try_get(at + 9)?,
        updated_at: row.try_get(at + 10)?,
        latest_version_id: row.try_get(at + 11)?,
        latest_source_hash: row.try_get(at + 12)?,
        structure: optional_json(row, at + 13)?,
        project_code: row.try_get(at + 14)?,
    })
}

pub fn user(row: &PgRow, at: usize) -> RowResult<User> {
    Ok(User {
        id: row.try_get(at)?,
        provider: word(row, at + 1, Provider::parse)?,
        display_name: row.try_get(at + 2)?,
    })
}

pub fn account(row: &PgRow, at: usize) -> RowResult<Account> {
    Ok(Account {
        user: user(row, at)?,
        email: row.try_get(at + 3)?,
        membership: word(row, at + 4, Membership::parse)?,
        status: word(row, at + 5, UserStatus::parse)?,
        is_admin: row.try_get(at + 6)?,
        created_at: row.try_get(at + 7)?,
    })
}

pub fn version(row: &PgRow) -> RowResult<VersionRecord> {
    Ok(VersionRecord {
        id: row.try_get(0)?,
        review_id: row.try_get(1)?,
        label: row.try_get(2)?,
        created_at: row.try_get(3)?,
        source_hash: row.try_get(4)?,
        sections: json(row, 5)?,
    })
}

pub fn comment(row: &PgRow) -> RowResult<CommentRecord> {
    let anchor: Anchor = json(row, 7)?;
    Ok(CommentRecord {
        id: row.try_get(0)?,
        review_id: row.try_get(1)?,
        author_id: row.try_get(2)?,
        category: word(row, 3, Category::parse)?,
        status: word(row, 4, CommentStatus::parse)?,
        body: row.try_get(5)?,
        version_id: row.try_get(6)?,
        anchor,
        run_id: row.try_get(8)?,
        created_at: row.try_get(9)?,
        edited_at: row.try_get(10)?,
        deleted_at: row.try_get(11)?,
    })
}

pub fn message(row: &PgRow) -> RowResult<MessageRecord> {
    Ok(MessageRecord {
        id: row.try_get(0)?,
        comment_id: row.try_get(1)?,
        review_id: row.try_get(2)?,
        author_id: row.try_get(3)?,
        body: row.try_get(4)?,
        run_id: row.try_get(5)?,
        created_at: row.try_get(6)?,
        edited_at: row.try_get(7)?,
        deleted_at: row.try_get(8)?,
    })
}

pub fn event(row: &PgRow) -> RowResult<StatusEventRecord> {
    Ok(StatusEventRecord {
        comment_id: row.try_get(0)?,
        seq: row.try_get(1)?,
        status: word(row, 2, CommentStatus::parse)?,
        by_id: row.try_get(3)?,
        ts: row.try_get(4)?,
    })
}

pub fn run(row: &PgRow) -> RowResult<RunRecord> {
    Ok(RunRecord {
        id: row.try_get(0)?,
        review_id: row.try_get(1)?,
        kind: word(row, 2, RunKind::parse)?,
        status: word(row, 3, RunStatus::parse)?,
        title: row.try_get(4)?,
        version_id: row.try_get(5)?,
        summary: row.try_get(6)?,
        created_by: row.try_get(7)?,
        created_at: row.try_get(8)?,
        completed_at: row.try_get(9)?,
    })
}

/// A SHA-256 column.
fn hash(row: &PgRow, index: usize) -> RowResult<[u8; 32]> {
    let hash: Vec<u8> = row.try_get(index)?;
    hash.try_into()
        .map_err(|_| decode_error(index, "hash is not 32 bytes".to_string()))
}

/// A comma-separated scope list.
fn scopes(row: &PgRow, index: usize) -> RowResult<Vec<Scope>> {
    let scopes: String = row.try_get(index)?;
    scopes
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| Scope::parse(s).ok_or_else(|| decode_error(index, format!("unknown scope `{s}`"))))
        .collect()
}

pub fn token(row: &PgRow) -> RowResult<TokenRecord> {
    Ok(TokenRecord {
        id: row.try_get(0)?,
        user_id: row.try_get(1)?,
        name: row.try_get(2)?,
        hash: hash(row, 3)?,
        scopes: scopes(row, 4)?,
        created_at: row.try_get(5)?,
        expires_at: row.try_get(6)?,
        last_used_at: row.try_get(7)?,
        revoked_at: row.try_get(8)?,
    })
}

pub fn session(row: &PgRow, at: usize) -> RowResult<SessionRecord> {
    Ok(SessionRecord {
        id: row.try_get(at)?,
        hash: hash(row, at + 1)?,
        user_id: row.try_get(at + 2)?,
        created_at: row.try_get(at + 3)?,
        expires_at: row.try_get(at + 4)?,
    })
}

pub fn login_code(row: &PgRow) -> RowResult<LoginCodeRecord> {
    Ok(LoginCodeRecord {
        hash: hash(row, 0)?,
        user_id: row.try_get(1)?,
        challenge: row.try_get(2)?,
        token_name: row.try_get(3)?,
        scopes: scopes(row, 4)?,
        created_at: row.try_get(5)?,
        expires_at: row.try_get(6)?,
        used_at: row.try_get(7)?,
    })
}

/// `PROJECT_COLUMNS` from `at`; `None` when the (left-joined) project is absent.
pub fn project(row: &PgRow, at: usize) -> RowResult<Option<ProjectRecord>> {
    let code: Option<String> = row.try_get(at)?;
    let Some(code) = code else {
        return Ok(None);
    };
    let status: String = row.try_get(at + 3)?;
    Ok(Some(ProjectRecord {
        code,
        name: row.try_get(at + 1)?,
        company: row.try_get(at + 2)?,
        active: status == PROJECT_ACTIVE,
        in_snapshot: row.try_get(at + 4)?,
    }))
}

/// `projects.status` of an active project; any other value reads as inactive.
pub const PROJECT_ACTIVE: &str = "active";
pub const PROJECT_INACTIVE: &str = "inactive";

pub fn project_status(project: &ProjectRecord) -> &'static str {
    if project.active {
        PROJECT_ACTIVE
    } else {
        PROJECT_INACTIVE
    }
}

/// A role column: `None` when NULL, or (as with grants) a word this build does not know.
pub fn project_role(row: &PgRow, index: usize) -> RowResult<Option<ProjectRole>> {
    let role: Option<String> = row.try_get(index)?;
    Ok(role.as_deref().and_then(ProjectRole::parse))
}

/// `REVIEW_COLUMNS, SUMMARY_COLUMNS` from column 0.
pub fn summary(row: &PgRow) -> RowResult<ReviewSummaryRecord> {
    let at = REVIEW_COLUMN_COUNT;
    let grant: Option<String> = row.try_get(at + 3)?;
    Ok(ReviewSummaryRecord {
        review: review(row, 0)?,
        owner: user(row, at)?,
        grant: grant.as_deref().and_then(GrantRole::parse),
        comment_count: row.try_get(at + 4)?,
        open_comment_count: row.try_get(at + 5)?,
        project: project(row, at + 6)?,
        project_role: project_role(row, at + 11)?,
    })
}

pub fn scopes_text(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(",")
}
