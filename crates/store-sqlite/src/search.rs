//! Full-text search with FTS5 (schema in `migrations/0002_*.sql`), and the visibility rule the
//! document lists share.
//!
//! Why searches are shaped as they are (measured on 1,000,000 comments, `examples/search_bench.rs`):
//! - FTS5's `bm25()` first counts every row that contains each term, whatever the page asked
//!   for: ~45 ms for a word in most comments, again for every further word. So comments are
//!   ranked here instead: FTS5 hands over the newest `CANDIDATES` matches the caller may see,
//!   with `highlight()` marking where each term matched (exact, and cheap: no pass over other
//!   rows), and `text::bm25` scores them. A query with more matches than that is ranked among its
//!   newest `CANDIDATES`; one with fewer is ranked whole. Pages reach at most `CANDIDATES` deep.
//! - A term's frequency across all comments (bm25's IDF) matters only between terms, so a
//!   one-word query needs none, and a longer one estimates it from how far back its newest
//!   `IDF_PROBE` matches reach.
//! - Snippets are cut from those marked texts, not with FTS5's `snippet()`, which would run the
//!   query again for every hit (and a prefix term's merge with it).
//! - Filters are applied in the same pass, to each match's item row (one lookup by integer key).
//!   A search within one document, or by a member who sees only a few, also names those
//!   documents to FTS5 (`scope`, one token per document), which then skips everything else.
//! - Documents are few next to comments, so FTS5's `bm25()` ranks them (over the newest
//!   `DOCUMENT_CANDIDATES`); their snippets are found in their text, read only up to the match.

use std::collections::{HashMap, HashSet};

use docreview_core::model::{Category, CommentStatus};
use docreview_core::store::{
    CommentHit, CommentSearch, MATCH_END, MATCH_START, ReviewHit, ReviewSearch,
    SEARCH_COMMENT_WINDOW, SEARCH_DOCUMENT_WINDOW, StoreResult, Visibility,
};
use rusqlite::{Connection, OptionalExtension, ToSql};

use crate::rows;
use crate::store::query_named;
use crate::text::{self, Marked, Term};
use crate::{internal, rows::to_json};

/// Comment matches ranked per query, newest first (see the module's notes).
const CANDIDATES: usize = SEARCH_COMMENT_WINDOW;
/// Document matches ranked per query.
const DOCUMENT_CANDIDATES: usize = SEARCH_DOCUMENT_WINDOW;
/// Matches of each term read to estimate how common it is.
const IDF_PROBE: usize = 256;
/// A member who sees at most this many documents has them named to FTS5.
const FEW_DOCUMENTS: usize = 64;
/// Tokens of context a snippet shows around the matches.
const SNIPPET_TOKENS: usize = 20;

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

/// `text` as an FTS5 string: quoted, so user text is never read as query syntax.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// One term in FTS5 syntax: a prefix term is `"word"*`, a phrase `"one two"`.
fn fts_term(term: &Term) -> String {
    match term {
        Term::Prefix(word) => format!("{}*", quoted(word)),
        Term::Phrase(words) => quoted(&words.join(" ")),
    }
}

/// All terms, side by side (FTS5 reads that as AND).
fn fts_terms(terms: &[Term]) -> String {
    terms.iter().map(fts_term).collect::<Vec<_>>().join(" ")
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Which documents a member's search can be confined to.
enum Reach {
    /// They see no document at all.
    Nothing,
    /// Only these (their keys, `review_texts.id`).
    Few(Vec<i64>),
    /// More than `FEW_DOCUMENTS`.
    Many,
}

/// Finds out whether the member sees only a few documents, by the indexes that lead to them
/// (owned, project roles, sharing, link mode), reading at most `FEW_DOCUMENTS + 1` of them.
fn reach(conn: &Connection, caller: &Caller) -> StoreResult<Reach> {
    let mut sql = String::from(
        "SELECT t.id FROM reviews r JOIN review_texts t ON t.review_id = r.id WHERE r.owner_id = :user_id \
         UNION ALL SELECT t.id FROM project_roles mine JOIN reviews r ON r.project_code = mine.project_code \
           JOIN review_texts t ON t.review_id = r.id WHERE mine.user_id = :user_id",
    );
    if caller.internal {
        sql.push_str(
            " UNION ALL SELECT t.id FROM review_access a JOIN review_texts t ON t.review_id = a.review_id \
                WHERE a.email = :email \
              UNION ALL SELECT t.id FROM reviews r JOIN review_texts t ON t.review_id = r.id \
                WHERE r.access_mode = 'link'",
        );
    }
    sql.push_str(" LIMIT :limit");
    let limit = to_i64(FEW_DOCUMENTS + 1);
    let mut params: Vec<(&str, &dyn ToSql)> = caller.params().to_vec();
    params.push((":limit", &limit));
    let found: Vec<i64> = query_named(conn, &sql, &params, |row| row.get(0))?;
    let read = found.len();
    let mut seen = HashSet::new();
    let distinct: Vec<i64> = found.into_iter().filter(|key| seen.insert(*key)).collect();
    Ok(if distinct.is_empty() {
        Reach::Nothing
    } else if read <= FEW_DOCUMENTS {
        Reach::Few(distinct)
    } else {
        Reach::Many
    })
}

/// The key `comment_search.scope` knows a document by.
fn scope_key(conn: &Connection, review_id: &str) -> StoreResult<Option<i64>> {
    conn.prepare_cached("SELECT id FROM review_texts WHERE review_id = ?1")
        .map_err(internal)?
        .query_row([review_id], |row| row.get(0))
        .optional()
        .map_err(internal)
}

/// One comment match handed over for ranking.
struct Candidate {
    item: i64,
    created_at: i64,
    marked: Marked,
}

pub fn search_comments(conn: &Connection, search: &CommentSearch) -> StoreResult<Vec<CommentHit>> {
    let terms = text::terms(&search.query);
    if terms.is_empty() || search.limit == 0 || search.offset >= CANDIDATES {
        return Ok(Vec::new());
    }
    let caller = Caller::of(&search.visibility);
    let scope = match (&search.review_id, caller.all) {
        (Some(review_id), _) => match scope_key(conn, review_id)? {
            Some(key) => Some(vec![key]),
            None => return Ok(Vec::new()),
        },
        (None, true) => None,
        (None, false) => match reach(conn, &caller)? {
            Reach::Nothing => return Ok(Vec::new()),
            Reach::Few(keys) => Some(keys),
            Reach::Many => None,
        },
    };
    let mut matching = format!("body : ({})", fts_terms(&terms));
    if let Some(keys) = &scope {
        let keys: Vec<String> = keys.iter().map(|key| format!("\"{key}\"")).collect();
        matching.push_str(&format!(" AND scope : ({})", keys.join(" OR ")));
    }

    // The SQL varies in shape only (which filters), never by user text.
    let mut filters = String::new();
    if !caller.all && caller.internal {
        // Internal members mostly see much (link mode): check each match's document.
        filters.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM reviews r WHERE r.id = i.review_id AND {MEMBER_SEES})"
        ));
    } else if !caller.all {
        // External members see their own and their projects' documents (`MEMBER_SEES` without
        // its internal part), a set found by index and built once.
        filters.push_str(
            " AND i.review_id IN (SELECT id FROM reviews WHERE owner_id = :user_id \
               UNION ALL SELECT r.id FROM project_roles mine \
                 JOIN reviews r ON r.project_code = mine.project_code WHERE mine.user_id = :user_id)",
        );
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
    // CROSS JOIN keeps the full-text index the outer loop, read newest first, so the scan stops
    // after `CANDIDATES` rows that pass the filters.
    let sql = format!(
        "SELECT i.id, i.created_at, highlight(comment_search, 0, :start, :end) \
         FROM comment_search CROSS JOIN comment_search_items i ON i.id = comment_search.rowid \
         WHERE comment_search MATCH :match{filters} \
         ORDER BY comment_search.rowid DESC LIMIT :candidates"
    );
    let status = search.status.map(CommentStatus::as_str);
    let category = search.category.map(Category::as_str);
    let candidates_limit = to_i64(CANDIDATES);
    let (start, end) = (MATCH_START.to_string(), MATCH_END.to_string());
    let mut params: Vec<(&str, &dyn ToSql)> = caller.params().to_vec();
    params.extend([
        (":match", &matching as &dyn ToSql),
        (":status", &status),
        (":category", &category),
        (":review_id", &search.review_id),
        (":candidates", &candidates_limit),
        (":start", &start),
        (":end", &end),
    ]);
    let candidates = query_named(conn, &sql, &params, |row| {
        Ok(Candidate {
            item: row.get(0)?,
            created_at: row.get(1)?,
            marked: Marked::from_highlight(&row.get::<_, Option<String>>(2)?.unwrap_or_default()),
        })
    })?;
    if candidates.len() <= search.offset {
        return Ok(Vec::new());
    }

    let idfs = if terms.len() > 1 {
        term_weights(conn, &terms)?
    } else {
        vec![1.0]
    };
    let average = candidates.iter().map(|c| c.marked.length()).sum::<usize>() as f64
        / candidates.len() as f64;
    let mut ranked: Vec<(f64, &Candidate)> = candidates
        .iter()
        .map(|c| {
            let score = text::bm25(
                &c.marked.frequencies(&terms),
                &idfs,
                c.marked.length() as f64,
                average,
            );
            (score, c)
        })
        .collect();
    // Best first; ties newest first (then the later item, for a stable order).
    ranked.sort_by(|(a, x), (b, y)| {
        b.total_cmp(a)
            .then(y.created_at.cmp(&x.created_at))
            .then(y.item.cmp(&x.item))
    });
    let page: Vec<&Candidate> = ranked
        .into_iter()
        .skip(search.offset)
        .take(search.limit)
        .map(|(_, c)| c)
        .collect();
    comment_hits(conn, &page)
}

/// The page's hits with their documents' titles and authors.
fn comment_hits(conn: &Connection, page: &[&Candidate]) -> StoreResult<Vec<CommentHit>> {
    let ids = to_json(&page.iter().map(|c| c.item).collect::<Vec<_>>());
    let mut details: HashMap<i64, CommentHit> = query_named(
        conn,
        "SELECT i.id, i.review_id, r.title, i.comment_id, i.message_id, u.id, u.provider, u.display_name, \
           i.category, i.status, i.created_at \
         FROM comment_search_items i JOIN reviews r ON r.id = i.review_id JOIN users u ON u.id = i.author_id \
         WHERE i.id IN (SELECT value FROM json_each(:ids))",
        &[(":ids", &ids as &dyn ToSql)],
        |row| {
            let message_id: String = row.get(4)?;
            Ok((
                row.get::<_, i64>(0)?,
                CommentHit {
                    review_id: row.get(1)?,
                    review_title: row.get(2)?,
                    comment_id: row.get(3)?,
                    message_id: (!message_id.is_empty()).then_some(message_id),
                    author: rows::user(row, 5)?,
                    category: rows::word(row, 8, Category::parse)?,
                    status: rows::word(row, 9, CommentStatus::parse)?,
                    created_at: row.get(10)?,
                    snippet: String::new(),
                },
            ))
        },
    )?
    .into_iter()
    .collect();
    Ok(page
        .iter()
        .filter_map(|c| {
            details.remove(&c.item).map(|mut hit| {
                hit.snippet = c.marked.snippet(SNIPPET_TOKENS);
                hit
            })
        })
        .collect())
}

/// Each term's inverse document frequency among all comments (bm25's IDF), from how far back
/// its newest `IDF_PROBE` matches reach: exact for rarer terms, an estimate for common ones.
fn term_weights(conn: &Connection, terms: &[Term]) -> StoreResult<Vec<f64>> {
    let rows: Option<i64> = conn
        .prepare_cached("SELECT max(id) FROM comment_search_items")
        .map_err(internal)?
        .query_row([], |row| row.get(0))
        .optional()
        .map_err(internal)?
        .flatten();
    let Some(newest) = rows else {
        return Ok(vec![1.0; terms.len()]);
    };
    let total = newest as f64;
    let probe = to_i64(IDF_PROBE);
    let mut weights = Vec::with_capacity(terms.len());
    for term in terms {
        let matching = format!("body : {}", fts_term(term));
        let found: Vec<i64> = query_named(
            conn,
            "SELECT rowid FROM comment_search WHERE comment_search MATCH :match \
             ORDER BY rowid DESC LIMIT :probe",
            &[(":match", &matching as &dyn ToSql), (":probe", &probe)],
            |row| row.get(0),
        )?;
        let hits = match found.last() {
            Some(&oldest) if found.len() >= IDF_PROBE => {
                let span = (newest - oldest + 1).max(1) as f64;
                (IDF_PROBE as f64 * total / span).clamp(IDF_PROBE as f64, total)
            }
            _ => found.len() as f64,
        };
        weights.push(text::idf(total, hits));
    }
    Ok(weights)
}

pub fn search_reviews(conn: &Connection, search: &ReviewSearch) -> StoreResult<Vec<ReviewHit>> {
    let terms = text::terms(&search.query);
    if terms.is_empty() || search.limit == 0 || search.offset >= DOCUMENT_CANDIDATES {
        return Ok(Vec::new());
    }
    let caller = Caller::of(&search.visibility);
    let visible = if caller.all {
        String::new()
    } else {
        format!(" AND {MEMBER_SEES}")
    };
    // A title match weighs twice a match in the text.
    let sql = format!(
        "SELECT r.id, r.updated_at, bm25(review_search, 2.0, 1.0) \
         FROM review_search CROSS JOIN review_texts t ON t.id = review_search.rowid \
           JOIN reviews r ON r.id = t.review_id \
         WHERE review_search MATCH :match{visible} \
         ORDER BY review_search.rowid DESC LIMIT :candidates"
    );
    let matching = fts_terms(&terms);
    let candidates_limit = to_i64(DOCUMENT_CANDIDATES);
    let mut params: Vec<(&str, &dyn ToSql)> = caller.params().to_vec();
    params.extend([
        (":match", &matching as &dyn ToSql),
        (":candidates", &candidates_limit),
    ]);
    let mut ranked: Vec<(String, i64, f64)> = query_named(conn, &sql, &params, |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
    })?;
    // bm25() is lower for better matches. Ties: most recently updated first, then by id.
    ranked.sort_by(|a, b| a.2.total_cmp(&b.2).then(b.1.cmp(&a.1)).then(b.0.cmp(&a.0)));
    let page: Vec<String> = ranked
        .into_iter()
        .skip(search.offset)
        .take(search.limit)
        .map(|(id, _, _)| id)
        .collect();
    if page.is_empty() {
        return Ok(Vec::new());
    }
    let ids = to_json(&page);
    let sql = format!(
        "SELECT {review}, {extra}, t.body FROM {from} JOIN review_texts t ON t.review_id = r.id \
         WHERE r.id IN (SELECT value FROM json_each(:ids))",
        review = rows::REVIEW_COLUMNS,
        extra = rows::SUMMARY_EXTRA_COLUMNS,
        from = rows::SUMMARY_FROM,
    );
    let mut params: Vec<(&str, &dyn ToSql)> = caller.params().to_vec();
    params.push((":ids", &ids));
    let mut found: HashMap<String, ReviewHit> = query_named(conn, &sql, &params, |row| {
        let summary = rows::summary(row)?;
        let body: Option<String> = row.get(rows::SUMMARY_COLUMN_COUNT)?;
        let snippet = document_snippet(body.as_deref(), &summary.review.title, &terms);
        Ok((summary.review.id.clone(), ReviewHit { summary, snippet }))
    })?
    .into_iter()
    .collect();
    // A document deleted since the first statement is left out.
    Ok(page.iter().filter_map(|id| found.remove(id)).collect())
}

/// The text around the first match in the document's text, or its title when only the title
/// matches.
fn document_snippet(body: Option<&str>, title: &str, terms: &[Term]) -> String {
    if let Some(body) = body {
        let marked = Marked::find(body, terms, SNIPPET_TOKENS);
        if marked.has_matches() {
            return marked.snippet(SNIPPET_TOKENS);
        }
    }
    Marked::find(title, terms, SNIPPET_TOKENS).snippet(SNIPPET_TOKENS)
}
