//! Full-text search of comments, replies and documents, and documents' search text.

use crate::model::{Category, CommentStatus, Millis, ReviewSummaryRecord, User};

use super::{StoreResult, Visibility};

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
    /// Of the comment (for a reply: of its comment).
    pub assignee_id: Option<String>,
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

#[async_trait::async_trait]
pub trait SearchStore: Send + Sync {
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
}
