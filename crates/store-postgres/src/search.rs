//! Full-text search of comments, replies and documents with `tsvector` columns and GIN indexes
//! (see `migrations/0002_sessions_projects_search.sql`).
//!
//! Each search is one statement in two layers. The inner query finds the matches through the GIN
//! index, keeps those the caller may see (`store::VISIBLE`), ranks them with `ts_rank_cd` and
//! cuts the page (`OFFSET`/`LIMIT`); only the outer query, over that page alone, reads bodies
//! and runs `ts_headline`, which re-parses the text it highlights and is by far the slowest
//! step.

use docreview_core::model::{Category, CommentStatus};
use docreview_core::store::{
    CommentHit, CommentSearch, MATCH_END, MATCH_START, ReviewHit, ReviewSearch, SNIPPET_ELLIPSIS,
    SearchQuery, SearchTerm, StoreResult,
};
use sqlx::postgres::PgRow;
use sqlx::{PgPool, Row};

use crate::error::map_error;
use crate::rows;
use crate::store::{VISIBLE, bind_visibility, count_param};

type RowResult<T> = Result<T, sqlx::Error>;

/// The query as `to_tsquery` text: a prefix term `w:*`, a phrase `(w1 <-> w2 …)`, all joined by
/// `&`. `None` when there is nothing to match. The words are letters and digits only (the core
/// guarantees it), and the text is bound as a parameter anyway, never spliced into SQL.
pub fn tsquery(query: &SearchQuery) -> Option<String> {
    let terms: Vec<String> = query
        .terms
        .iter()
        .filter_map(|term| match term {
            SearchTerm::Prefix(word) if !word.is_empty() => Some(format!("{word}:*")),
            SearchTerm::Phrase(words) if !words.is_empty() => {
                Some(format!("({})", words.join(" <-> ")))
            }
            _ => None,
        })
        .collect();
    (!terms.is_empty()).then(|| terms.join(" & "))
}

/// `ts_headline` options: one fragment of 16–24 words around the best match (`ShortWord=0`, or
/// fragments shrink to nothing around short words), matches between the core's markers. The
/// fragment delimiter only shows if `MaxFragments` is ever raised; the snippet's own ends get
/// `SNIPPET_ELLIPSIS` from `Snippet::finish`.
fn headline_options() -> String {
    format!(
        "StartSel=\"{MATCH_START}\", StopSel=\"{MATCH_END}\", MaxFragments=1, MaxWords=24, \
         MinWords=16, ShortWord=0, FragmentDelimiter=\"{SNIPPET_ELLIPSIS}\""
    )
}

/// The two markers, for `translate(snippet, markers, '')`: the snippet's plain text.
fn markers() -> String {
    format!("{MATCH_START}{MATCH_END}")
}

/// A `LATERAL` subquery making a snippet of the text expression `text` for the tsquery `query`,
/// as columns `snippet`, `cut_before` and `cut_after` of `alias`: the highlighted fragment, and
/// whether text (a letter or digit, not just spaces or punctuation) was left out before and after
/// it. `options` and `markers` name the bound `headline_options()` and `markers()`.
///
/// The index splits words at every ASCII punctuation character (`docreview_search_words`), the
/// headline parser would not (`x.org/deploy` is one host-and-path token to it, so `deploy` would
/// go unmarked). So the text is highlighted with a U+0001 after each such character, which
/// splits the same tokens without losing a character; `Snippet::finish` removes them.
fn snippet_sql(alias: &str, text: &str, query: &str, options: &str, markers: &str) -> String {
    let split = format!(r"regexp_replace({text}, '([!-/:-@\[-`{{-~])', '\1' || chr(1), 'g')");
    let word = "'[^[:space:][:punct:][:cntrl:]]'";
    format!(
        "CROSS JOIN LATERAL ( \
           SELECT h.snippet, \
             h.at > 1 AND left(h.split, h.at - 1) ~ {word}, \
             h.at > 0 AND substr(h.split, h.at + length(h.plain)) ~ {word} \
           FROM (SELECT t.split, t.snippet, t.plain, strpos(t.split, t.plain) AS at \
             FROM (SELECT x.split, x.snippet, translate(x.snippet, {markers}, '') AS plain \
               FROM (SELECT y.split, ts_headline('simple', y.split, {query}, {options}) AS snippet \
                 FROM (SELECT {split} AS split) y) x) t) h \
         ) {alias}(snippet, cut_before, cut_after)"
    )
}

/// `snippet_sql`'s columns, read from `at`.
struct Snippet {
    text: String,
    cut_before: bool,
    cut_after: bool,
}

impl Snippet {
    fn read(row: &PgRow, at: usize) -> RowResult<Snippet> {
        Ok(Snippet {
            text: row.try_get(at)?,
            cut_before: row.try_get(at + 1)?,
            cut_after: row.try_get(at + 2)?,
        })
    }

    fn shows_match(&self) -> bool {
        self.text.contains(MATCH_START)
    }

    /// The U+0001s removed, and `SNIPPET_ELLIPSIS` at an end where text was left out.
    fn finish(self) -> String {
        let mut out = String::with_capacity(self.text.len() + 2 * SNIPPET_ELLIPSIS.len());
        if self.cut_before {
            out.push_str(SNIPPET_ELLIPSIS);
        }
        out.extend(self.text.chars().filter(|c| *c != '\u{1}'));
        if self.cut_after {
            out.push_str(SNIPPET_ELLIPSIS);
        }
        out
    }
}

/// The tsquery, parsed once per statement: a scalar subquery is an InitPlan, which the GIN
/// index scans take as their key and `ts_rank_cd` reads without re-parsing per row.
fn parsed(param: &str) -> String {
    format!("(SELECT to_tsquery('simple', {param}::text))")
}

pub async fn comments(pool: &PgPool, search: CommentSearch) -> StoreResult<Vec<CommentHit>> {
    let Some(query_text) = tsquery(&search.query) else {
        return Ok(Vec::new());
    };
    // $1–$4 visibility, $5 query, $6 status, $7 category, $8 review id, $9 offset, $10 limit,
    // $11 headline options, $12 markers. Status and category are the comment's, also for a
    // reply; a reply of a deleted comment is gone with its thread. Ties: newest first, then id
    // (byte order, COLLATE "C"), so pages never overlap.
    let q = parsed("$5");
    let filters = "($6::text IS NULL OR c.status = $6::text) \
                   AND ($7::text IS NULL OR c.category = $7::text)";
    let sql = format!(
        "SELECT h.review_id, r.title, h.comment_id, h.message_id, u.id, u.provider, u.display_name, \
           c.category, c.status, h.created_at, sn.snippet, sn.cut_before, sn.cut_after \
         FROM ( \
           SELECT found.review_id, found.comment_id, found.message_id, found.created_at, found.rank \
           FROM ( \
             SELECT c.review_id, c.id AS comment_id, NULL::text COLLATE \"C\" AS message_id, \
               c.created_at, ts_rank_cd(c.search, {q}) AS rank \
             FROM comments c \
             WHERE c.search @@ {q} AND c.deleted_at IS NULL AND {filters} \
               AND ($8::text IS NULL OR c.review_id = $8::text) \
             UNION ALL \
             SELECT m.review_id, m.comment_id, m.id, m.created_at, ts_rank_cd(m.search, {q}) \
             FROM messages m JOIN comments c ON c.id = m.comment_id \
             WHERE m.search @@ {q} AND m.deleted_at IS NULL AND c.deleted_at IS NULL AND {filters} \
               AND ($8::text IS NULL OR m.review_id = $8::text) \
           ) found JOIN reviews r ON r.id = found.review_id \
           WHERE {visible} \
           ORDER BY found.rank DESC, found.created_at DESC, \
             coalesce(found.message_id, found.comment_id) DESC \
           OFFSET $9 LIMIT $10 \
         ) h \
         JOIN reviews r ON r.id = h.review_id \
         JOIN comments c ON c.id = h.comment_id \
         LEFT JOIN messages m ON m.id = h.message_id \
         JOIN users u ON u.id = coalesce(m.author_id, c.author_id) \
         {snippet} \
         ORDER BY h.rank DESC, h.created_at DESC, coalesce(h.message_id, h.comment_id) DESC",
        snippet = snippet_sql("sn", "coalesce(m.body, c.body)", &q, "$11", "$12"),
        visible = VISIBLE,
    );
    let rows = bind_visibility(sqlx::query(&sql), &search.visibility)
        .bind(query_text)
        .bind(search.status.map(CommentStatus::as_str))
        .bind(search.category.map(Category::as_str))
        .bind(search.review_id.as_deref())
        .bind(count_param(search.offset))
        .bind(count_param(search.limit))
        .bind(headline_options())
        .bind(markers())
        .fetch_all(pool)
        .await
        .map_err(map_error)?;
    rows.iter()
        .map(comment_hit)
        .collect::<RowResult<Vec<_>>>()
        .map_err(map_error)
}

fn comment_hit(row: &PgRow) -> RowResult<CommentHit> {
    let category: String = row.try_get(7)?;
    let status: String = row.try_get(8)?;
    Ok(CommentHit {
        review_id: row.try_get(0)?,
        review_title: row.try_get(1)?,
        comment_id: row.try_get(2)?,
        message_id: row.try_get(3)?,
        author: rows::user(row, 4)?,
        category: Category::parse(&category).ok_or_else(|| unexpected(7, &category))?,
        status: CommentStatus::parse(&status).ok_or_else(|| unexpected(8, &status))?,
        created_at: row.try_get(9)?,
        snippet: Snippet::read(row, 10)?.finish(),
    })
}

fn unexpected(index: usize, value: &str) -> sqlx::Error {
    sqlx::Error::ColumnDecode {
        index: index.to_string(),
        source: format!("unexpected value `{value}`").into(),
    }
}

pub async fn reviews(pool: &PgPool, search: ReviewSearch) -> StoreResult<Vec<ReviewHit>> {
    let Some(query_text) = tsquery(&search.query) else {
        return Ok(Vec::new());
    };
    // $1–$4 visibility, $5 query, $6 offset, $7 limit, $8 headline options, $9 markers. Both
    // snippets are made (a title is short): the text's when it shows a match, else the title's.
    let q = parsed("$5");
    let sql = format!(
        "SELECT {review}, {summary}, tx.snippet, tx.cut_before, tx.cut_after, \
           ti.snippet, ti.cut_before, ti.cut_after \
         FROM ( \
           SELECT s.review_id, ts_rank_cd(s.document, {q}) AS rank \
           FROM review_search s JOIN reviews r ON r.id = s.review_id \
           WHERE s.document @@ {q} AND {visible} \
           ORDER BY rank DESC, r.updated_at DESC, r.id DESC \
           OFFSET $6 LIMIT $7 \
         ) hit \
         JOIN {from} ON r.id = hit.review_id \
         JOIN review_search s ON s.review_id = hit.review_id \
         {text_snippet} {title_snippet} \
         ORDER BY hit.rank DESC, r.updated_at DESC, r.id DESC",
        review = rows::REVIEW_COLUMNS,
        summary = rows::SUMMARY_COLUMNS,
        from = rows::SUMMARY_FROM,
        visible = VISIBLE,
        text_snippet = snippet_sql("tx", "s.body", &q, "$8", "$9"),
        title_snippet = snippet_sql("ti", "s.title", &q, "$8", "$9"),
    );
    let rows = bind_visibility(sqlx::query(&sql), &search.visibility)
        .bind(query_text)
        .bind(count_param(search.offset))
        .bind(count_param(search.limit))
        .bind(headline_options())
        .bind(markers())
        .fetch_all(pool)
        .await
        .map_err(map_error)?;
    rows.iter()
        .map(review_hit)
        .collect::<RowResult<Vec<_>>>()
        .map_err(map_error)
}

fn review_hit(row: &PgRow) -> RowResult<ReviewHit> {
    let at = rows::SUMMARY_COLUMN_COUNT;
    let text = Snippet::read(row, at)?;
    let title = Snippet::read(row, at + 3)?;
    let snippet = if text.shows_match() || !title.shows_match() {
        text.finish()
    } else {
        title.finish()
    };
    Ok(ReviewHit {
        summary: rows::summary(row)?,
        snippet,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(word: &str) -> SearchTerm {
        SearchTerm::Prefix(word.to_string())
    }

    #[test]
    fn renders_tsquery_text() {
        let query = SearchQuery {
            terms: vec![
                prefix("deploy"),
                SearchTerm::Phrase(vec!["big".into(), "red".into(), "car".into()]),
                SearchTerm::Phrase(vec!["x".into()]),
            ],
        };
        assert_eq!(
            tsquery(&query).as_deref(),
            Some("deploy:* & (big <-> red <-> car) & (x)")
        );
        assert_eq!(tsquery(&SearchQuery { terms: vec![] }), None);
        assert_eq!(
            tsquery(&SearchQuery {
                terms: vec![SearchTerm::Phrase(vec![]), prefix("")]
            }),
            None
        );
    }

    #[test]
    fn finishes_snippets() {
        let snippet = |text: &str, cut_before, cut_after| Snippet {
            text: text.to_string(),
            cut_before,
            cut_after,
        };
        assert_eq!(
            snippet("see x.\u{1}org/\u{1}deploy", true, false).finish(),
            "…see x.org/deploy"
        );
        assert_eq!(snippet("all", false, true).finish(), "all…");
        assert_eq!(snippet("", false, false).finish(), "");
    }
}
