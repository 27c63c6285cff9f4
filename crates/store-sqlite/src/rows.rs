//! Mapping between rows and the core's records.

use docreview_core::model::{
    Account, Anchor, CommentRecord, MessageRecord, ReviewRecord, RunRecord, Scope,
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

/// A text column holding one of a closed set of words.
fn word<T>(row: &Row<'_>, index: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<T> {
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

pub fn token(row: &Row<'_>) -> rusqlite::Result<TokenRecord> {
    let hash: Vec<u8> = row.get(3)?;
    let hash: [u8; 32] = hash.try_into().map_err(|_| {
        rusqlite::Error::FromSqlConversionFailure(
            3,
            Type::Blob,
            "token hash is not 32 bytes".into(),
        )
    })?;
    let scopes: String = row.get(4)?;
    let scopes = scopes
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            Scope::parse(s).ok_or_else(|| {
                rusqlite::Error::FromSqlConversionFailure(
                    4,
                    Type::Text,
                    format!("unknown scope `{s}`").into(),
                )
            })
        })
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(TokenRecord {
        id: row.get(0)?,
        user_id: row.get(1)?,
        name: row.get(2)?,
        hash,
        scopes,
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
