//! `SearchStore` on SQLite: full-text search with FTS5 (schema in `migrations/0002_*.sql`).
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

use std::collections::HashMap;

use docreview_core::model::{Category, CommentStatus};
use docreview_core::store::columns::{self, SUMMARY_WIDTH, to_json};
use docreview_core::store::{
    CommentHit, CommentSearch, MATCH_END, MATCH_START, ReviewHit, ReviewSearch,
    SEARCH_COMMENT_WINDOW, SEARCH_DOCUMENT_WINDOW, SearchStore, StoreResult, count_param,
};
use rusqlite::{Connection, ToSql, params};

use crate::SqliteStore;
use crate::columns::{REVIEW_COLUMNS, SUMMARY_EXTRA_COLUMNS, SUMMARY_FROM};
use crate::sql::{execute, internal, query_all, query_named, query_optional};
use crate::text::{self, Marked, Term};
use crate::visibility::{Caller, MEMBER_SEES, Reach, reach, visible_items};

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

/// The key `comment_search.scope` knows a document by.
fn scope_key(conn: &Connection, review_id: &str) -> StoreResult<Option<i64>> {
    query_optional(
        conn,
        "SELECT id FROM review_texts WHERE review_id = ?1",
        [review_id],
        |row| row.integer(0),
    )
}

/// One comment match handed over for ranking.
struct Candidate {
    item: i64,
    created_at: i64,
    marked: Marked,
}

fn search_comments(conn: &Connection, search: &CommentSearch) -> StoreResult<Vec<CommentHit>> {
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
        (None, false) => match reach(conn, &caller, FEW_DOCUMENTS)? {
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
    let mut filters = visible_items(&caller, "i.review_id");
    if search.status.is_some() {
        filters.push_str(" AND i.status = :status");
    }
    if search.category.is_some() {
        filters.push_str(" AND i.category = :category");
    }
    if search.review_id.is_some() {
        filters.push_str(" AND i.review_id = :review_id");
    }
    if search.assignee_id.is_some() {
        // The assignee is the comment's (also for a reply); not kept on the items, as it is
        // rarely filtered on: one lookup by key per candidate.
        filters.push_str(
            " AND EXISTS (SELECT 1 FROM comments c WHERE c.id = i.comment_id \
             AND c.assignee_id = :assignee)",
        );
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
    let candidates_limit = count_param(CANDIDATES);
    let (start, end) = (MATCH_START.to_string(), MATCH_END.to_string());
    let mut params: Vec<(&str, &dyn ToSql)> = caller.params().to_vec();
    params.extend([
        (":match", &matching as &dyn ToSql),
        (":status", &status),
        (":category", &category),
        (":review_id", &search.review_id),
        (":assignee", &search.assignee_id),
        (":candidates", &candidates_limit),
        (":start", &start),
        (":end", &end),
    ]);
    let candidates = query_named(conn, &sql, &params, |row| {
        Ok(Candidate {
            item: row.integer(0)?,
            created_at: row.integer(1)?,
            marked: Marked::from_highlight(&row.optional_text(2)?.unwrap_or_default()),
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
        "SELECT i.id, i.review_id, r.title, i.comment_id, i.message_id, u.id, u.provider, u.display_name, u.handle, \
           i.category, i.status, i.created_at \
         FROM comment_search_items i JOIN reviews r ON r.id = i.review_id JOIN users u ON u.id = i.author_id \
         WHERE i.id IN (SELECT value FROM json_each(:ids))",
        &[(":ids", &ids as &dyn ToSql)],
        |row| {
            let message_id = row.text(4)?;
            Ok((
                row.integer(0)?,
                CommentHit {
                    review_id: row.text(1)?,
                    review_title: row.text(2)?,
                    comment_id: row.text(3)?,
                    message_id: (!message_id.is_empty()).then_some(message_id),
                    author: columns::user(row, 5)?,
                    category: columns::word(row, 9, Category::parse)?,
                    status: columns::word(row, 10, CommentStatus::parse)?,
                    created_at: row.integer(11)?,
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
    let newest = query_optional(
        conn,
        "SELECT max(id) FROM comment_search_items",
        [],
        |row| row.optional_integer(0),
    )?
    .flatten();
    let Some(newest) = newest else {
        return Ok(vec![1.0; terms.len()]);
    };
    let total = newest as f64;
    let probe = count_param(IDF_PROBE);
    let mut weights = Vec::with_capacity(terms.len());
    for term in terms {
        let matching = format!("body : {}", fts_term(term));
        let found: Vec<i64> = query_named(
            conn,
            "SELECT rowid FROM comment_search WHERE comment_search MATCH :match \
             ORDER BY rowid DESC LIMIT :probe",
            &[(":match", &matching as &dyn ToSql), (":probe", &probe)],
            |row| row.integer(0),
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

fn search_reviews(conn: &Connection, search: &ReviewSearch) -> StoreResult<Vec<ReviewHit>> {
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
    let candidates_limit = count_param(DOCUMENT_CANDIDATES);
    let mut params: Vec<(&str, &dyn ToSql)> = caller.params().to_vec();
    params.extend([
        (":match", &matching as &dyn ToSql),
        (":candidates", &candidates_limit),
    ]);
    let mut ranked: Vec<(String, i64, f64)> = query_named(conn, &sql, &params, |row| {
        Ok((row.text(0)?, row.integer(1)?, row.real(2)?))
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
        "SELECT {REVIEW_COLUMNS}, {SUMMARY_EXTRA_COLUMNS}, t.body FROM {SUMMARY_FROM} \
         JOIN review_texts t ON t.review_id = r.id WHERE r.id IN (SELECT value FROM json_each(:ids))"
    );
    let mut params: Vec<(&str, &dyn ToSql)> = caller.params().to_vec();
    params.push((":ids", &ids));
    let mut found: HashMap<String, ReviewHit> = query_named(conn, &sql, &params, |row| {
        let summary = columns::summary(row, 0)?;
        let body = row.optional_text(SUMMARY_WIDTH)?;
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

#[async_trait::async_trait]
impl SearchStore for SqliteStore {
    async fn search_comments(&self, search: CommentSearch) -> StoreResult<Vec<CommentHit>> {
        self.read(move |tx| search_comments(tx, &search)).await
    }

    async fn search_reviews(&self, search: ReviewSearch) -> StoreResult<Vec<ReviewHit>> {
        self.read(move |tx| search_reviews(tx, &search)).await
    }

    async fn reviews_without_search_text(
        &self,
        limit: usize,
    ) -> StoreResult<Vec<(String, String)>> {
        self.read(move |tx| {
            query_all(
                tx,
                "SELECT t.review_id, r.latest_version_id FROM review_texts t \
                 JOIN reviews r ON r.id = t.review_id \
                 WHERE t.body IS NULL ORDER BY t.id LIMIT ?1",
                [count_param(limit)],
                |row| Ok((row.text(0)?, row.text(1)?)),
            )
        })
        .await
    }

    async fn set_search_text(
        &self,
        review_id: &str,
        version_id: &str,
        text: String,
    ) -> StoreResult<()> {
        let (review_id, version_id) = (review_id.to_string(), version_id.to_string());
        self.write(move |conn| {
            // Only while the text was never set and `version_id` is still the latest: a version
            // write (new or in place) has set the current text, and must not be overwritten
            // with an older one.
            execute(
                conn,
                "INSERT INTO review_texts (review_id, body) \
                 SELECT id, ?3 FROM reviews WHERE id = ?1 AND latest_version_id = ?2 \
                 ON CONFLICT (review_id) DO UPDATE SET body = excluded.body \
                 WHERE review_texts.body IS NULL",
                params![review_id, version_id, text],
            )
            .map_err(internal)?;
            Ok(())
        })
        .await
    }
}
