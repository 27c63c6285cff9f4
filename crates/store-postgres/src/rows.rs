//! Mapping between rows and the core's records. JSONB columns are selected as `::text` and bound
//! as text cast to `::jsonb`, so the records' own serde shapes are the only JSON format.

use docreview_core::model::{
    AccessMode, Account, Anchor, Category, CommentRecord, CommentStatus, Membership, MessageRecord,
    Provider, ReviewRecord, RunKind, RunRecord, RunStatus, Scope, StatusEventRecord, TokenRecord,
    User, UserStatus, VersionRecord,
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

pub fn token(row: &PgRow) -> RowResult<TokenRecord> {
    let hash: Vec<u8> = row.try_get(3)?;
    let hash: [u8; 32] = hash
        .try_into()
        .map_err(|_| decode_error(3, "token hash is not 32 bytes".to_string()))?;
    let scopes: String = row.try_get(4)?;
    let scopes = scopes
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| Scope::parse(s).ok_or_else(|| decode_error(4, format!("unknown scope `{s}`"))))
        .collect::<RowResult<Vec<_>>>()?;
    Ok(TokenRecord {
        id: row.try_get(0)?,
        user_id: row.try_get(1)?,
        name: row.try_get(2)?,
        hash,
        scopes,
        created_at: row.try_get(5)?,
        expires_at: row.try_get(6)?,
        last_used_at: row.try_get(7)?,
        revoked_at: row.try_get(8)?,
    })
}

pub fn scopes_text(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(",")
}
