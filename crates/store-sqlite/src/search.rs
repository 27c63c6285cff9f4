//! Full-text search with FTS5 (schema in `migrations/0002_*.sql`), and the visibility rule the
//! document lists share.
//!
//! A search runs in two steps inside one statement. First the matches are ranked and cut to the
//! page: bm25 (best first), ties newest first, with every filter (visibility, status, category,
//! document) applied to the match's item row, so nothing but one lookup by integer key is paid
//! per match. Then snippets are cut for the page's rows only: FTS5 computes `snippet()` for every
//! row it hands out, and cutting one reads the text, which ranking never needs.

use docreview_core::model::{Category, CommentStatus};
use docreview_core::store::{
    CommentHit, CommentSearch, MATCH_END, MATCH_START, ReviewHit, ReviewSearch, SNIPPET_ELLIPSIS,
    SearchQuery, SearchTerm, StoreResult, Visibility,
};
use rusqlite::{Connection, ToSql};

use crate::rows;
use crate::store::query_named;

/// Tokens of context a snippet shows around the matches.
const SNIPPET_TOKENS: i64 = 20;

/// Whether the member calling (`:user_id`, `:email`, `:internal`) may see document `r`
/// (DESIGN.md §3): they own it, hold a role in its project, or, if internal, it is in link mode
/// or shared with their email. External members reach documents only through projects.
pub const MEMBER_SEES: &str = "(r.owner_id = :user_id \
     OR EXISTS (SELECT 1 FROM project_roles mine \
                WHERE mine.project_code = r.project_code AND mine.user_id = :user_id) \
     OR (:internal AND (r.access_mode = 'link' OR EXISTS \
         (SELECT 1 FROM review_access a WHERE a.review_id = r.id AND a.email = :email))))";

/// The caller of a list or search, as the named parameters of `MEMBER_SEES` and
/// `rows::SUMMARY_FROM` bind it.
pub struct Caller {
    /// Sees every document (`Visibility::All`).
    pub all: bool,
    pub user_id: String,
    /// Empty for `All`: such callers carry no grant of their own.
    pub email: String,
    pub internal: bool,
}

impl Caller {
    pub fn of(visibility: &Visibility) -> Self {
        match visibility {
            Visibility::All { user_id } => Caller {
                all: true,
                user_id: user_id.clone(),
                email: String::new(),
                internal: true,
            },
            Visibility::Member {
                user_id,
                email,
                internal,
            } => Caller {
                all: false,
                user_id: user_id.clone(),
                email: email.clone(),
                internal: *internal,
            },
        }
    }

    pub fn params(&self) -> [(&'static str, &dyn ToSql); 4] {
        [
            (":all", &self.all),
            (":user_id", &self.user_id),
            (":email", &self.email),
            (":internal", &self.internal),
        ]
    }
}

/// `query` in FTS5 syntax, `None` when it has nothing to look for. Every word is quoted, so user
/// text is never read as query syntax: a prefix term is `"word"*`, a phrase `"one two"`, and
/// terms side by side must all match.
pub fn fts_query(query: &SearchQuery) -> Option<String> {
    let quoted = |text: &str| format!("\"{}\"", text.replace('"', "\"\""));
    let terms: Vec<String> = query
        .terms
        .iter()
        .filter_map(|term| match term {
            SearchTerm::Prefix(word) => (!word.is_empty()).then(|| format!("{}*", quoted(word))),
            SearchTerm::Phrase(words) => {
                let words: Vec<&str> = words
                    .iter()
                    .map(String::as_str)
                    .filter(|w| !w.is_empty())
                    .collect();
                (!words.is_empty()).then(|| quoted(&words.join(" ")))
            }
        })
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub fn search_comments(conn: &Connection, search: &CommentSearch) -> StoreResult<Vec<CommentHit>> {
    let Some(matching) = fts_query(&search.query) else {
        return Ok(Vec::new());
    };
    if search.limit == 0 {
        return Ok(Vec::new());
    }
    let caller = Caller::of(&search.visibility);
    // Filters are spliced in only when asked for: a condition that is always true still costs
    // its evaluation for every match. The SQL varies in shape only, never by user text.
    let mut filters = String::new();
    if !caller.all {
        // The visible documents are found once (a set SQLite builds), not once per match.
        filters.push_str(&format!(
            " AND i.review_id IN (SELECT r.id FROM reviews r WHERE {MEMBER_SEES})"
        ));
    }
    if search.status.is_some() {
        filters.push_str(" AND i.status = :status");
    }
    if search.category.is_some() {
        filters.push_str(" AND i.category = :category");
    }
    if search.review_id.is_some() {
        filters.push_str(" AND i.review_id = :review_id");
    }
    // CROSS JOIN keeps the full-text index the outer loop: it is the only selective input.
    let sql = format!(
        "WITH hits AS MATERIALIZED ( \
           SELECT i.id AS sid, bm25(comment_search) AS score, i.created_at AS created_at \
           FROM comment_search CROSS JOIN comment_search_items i ON i.id = comment_search.rowid \
           WHERE comment_search MATCH :match{filters} \
           ORDER BY score, created_at DESC, sid DESC \
           LIMIT :limit OFFSET :offset) \
         SELECT i.review_id, r.title, i.comment_id, i.message_id, u.id, u.provider, u.display_name, \
           i.category, i.status, i.created_at, \
           snippet(comment_search, 0, :start, :end, :ellipsis, {SNIPPET_TOKENS}) \
         FROM hits h \
           CROSS JOIN comment_search ON comment_search.rowid = h.sid \
           JOIN comment_search_items i ON i.id = h.sid \
           JOIN reviews r ON r.id = i.review_id \
           JOIN users u ON u.id = i.author_id \
         WHERE comment_search MATCH :match \
         ORDER BY h.score, h.created_at DESC, h.sid DESC"
    );
    let status = search.status.map(CommentStatus::as_str);
    let category = search.category.map(Category::as_str);
    let (limit, offset) = (to_i64(search.limit), to_i64(search.offset));
    let (start, end) = (MATCH_START.to_string(), MATCH_END.to_string());
    let mut params: Vec<(&str, &dyn ToSql)> = caller.params().to_vec();
    params.extend([
        (":match", &matching as &dyn ToSql),
        (":status", &status),
        (":category", &category),
        (":review_id", &search.review_id),
        (":limit", &limit),
        (":offset", &offset),
        (":start", &start),
        (":end", &end),
        (":ellipsis", &SNIPPET_ELLIPSIS),
    ]);
    query_named(conn, &sql, &params, |row| {
        let message_id: String = row.get(3)?;
        Ok(CommentHit {
            review_id: row.get(0)?,
            review_title: row.get(1)?,
            comment_id: row.get(2)?,
            message_id: (!message_id.is_empty()).then_some(message_id),
            author: rows::user(row, 4)?,
            category: rows::word(row, 7, Category::parse)?,
            status: rows::word(row, 8, CommentStatus::parse)?,
            created_at: row.get(9)?,
            snippet: row.get::<_, Option<String>>(10)?.unwrap_or_default(),
        })
    })
}

pub fn search_reviews(conn: &Connection, search: &ReviewSearch) -> StoreResult<Vec<ReviewHit>> {
    let Some(matching) = fts_query(&search.query) else {
        return Ok(Vec::new());
    };
    if search.limit == 0 {
        return Ok(Vec::new());
    }
    let caller = Caller::of(&search.visibility);
    let visible = if caller.all {
        String::new()
    } else {
        format!(" AND {MEMBER_SEES}")
    };
    // A title match weighs twice a match in the text. The snippet comes from the text when the
    // text matches, else from the title (both are cut; the caller keeps one).
    let sql = format!(
        "WITH hits AS MATERIALIZED ( \
           SELECT t.id AS sid, bm25(review_search, 2.0, 1.0) AS score, r.updated_at AS updated_at, r.id AS rid \
           FROM review_search CROSS JOIN review_texts t ON t.id = review_search.rowid \
             JOIN reviews r ON r.id = t.review_id \
           WHERE review_search MATCH :match{visible} \
           ORDER BY score, updated_at DESC, rid DESC \
           LIMIT :limit OFFSET :offset) \
         SELECT {review}, {extra}, \
           snippet(review_search, 1, :start, :end, :ellipsis, {SNIPPET_TOKENS}), \
           snippet(review_search, 0, :start, :end, :ellipsis, {SNIPPET_TOKENS}) \
         FROM hits h CROSS JOIN review_search ON review_search.rowid = h.sid, {from} \
         WHERE review_search MATCH :match AND r.id = h.rid \
         ORDER BY h.score, h.updated_at DESC, h.rid DESC",
        review = rows::REVIEW_COLUMNS,
        extra = rows::SUMMARY_EXTRA_COLUMNS,
        from = rows::SUMMARY_FROM,
    );
    let (limit, offset) = (to_i64(search.limit), to_i64(search.offset));
    let (start, end) = (MATCH_START.to_string(), MATCH_END.to_string());
    let mut params: Vec<(&str, &dyn ToSql)> = caller.params().to_vec();
    params.extend([
        (":match", &matching as &dyn ToSql),
        (":limit", &limit),
        (":offset", &offset),
        (":start", &start),
        (":end", &end),
        (":ellipsis", &SNIPPET_ELLIPSIS),
    ]);
    query_named(conn, &sql, &params, |row| {
        let at = rows::SUMMARY_COLUMN_COUNT;
        let in_text: Option<String> = row.get(at)?;
        let in_title: Option<String> = row.get(at + 1)?;
        let snippet = match in_text {
            Some(text) if text.contains(MATCH_START) => text,
            _ => in_title.unwrap_or_default(),
        };
        Ok(ReviewHit {
            summary: rows::summary(row)?,
            snippet,
        })
    })
}
