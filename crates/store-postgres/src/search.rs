//! Full-text search of comments, replies and documents with `tsvector` columns and GIN indexes
//! (see `migrations/0002_sessions_projects_search.sql`).
//!
//! Each search is one statement in three layers. The innermost finds the newest matches the
//! caller may see (`CANDIDATES`; through the GIN index, newest-first indexes or the caller's few
//! documents, as the planner estimates best), the middle one ranks them with `ts_rank_cd` and
//! cuts the page (`OFFSET`/`LIMIT`), and only the outer one, over that page alone, reads bodies
//! and runs `ts_headline`, which re-parses the text it highlights and is the slowest step per
//! row. `examples/search_bench.rs` measures it on 1,000,000 comments.

use docreview_core::model::{Category, CommentStatus};
use docreview_core::store::columns::{self, ColumnResult, Columns, SUMMARY_WIDTH};
use docreview_core::store::{
    CommentHit, CommentSearch, MATCH_END, MATCH_START, ReviewHit, ReviewSearch,
    SEARCH_COMMENT_WINDOW, SEARCH_DOCUMENT_WINDOW, SNIPPET_ELLIPSIS, SearchQuery, SearchStore,
    SearchTerm, StoreResult, Visibility, count_param,
};

use crate::PgStore;
use crate::columns::{REVIEW_COLUMNS, SUMMARY_COLUMNS, SUMMARY_FROM};
use crate::error::map_error;
use crate::sql::{decode_all, storable};
use crate::visibility::{self, VISIBLE, visible_items};

/// The query as `to_tsquery` text: a prefix term `w:*`, a phrase `(w1 <-> w2 …)`, all joined by
/// `&`. `None` when there is nothing to match. The words are letters and digits only (`lexeme`),
/// and the text is bound as a parameter anyway, never spliced into SQL.
pub fn tsquery(query: &SearchQuery) -> Option<String> {
    let terms: Vec<String> = query
        .terms
        .iter()
        .filter_map(|term| match term {
            SearchTerm::Prefix(word) => {
                let word = lexeme(word);
                (!word.is_empty()).then(|| format!("{word}:*"))
            }
            SearchTerm::Phrase(words) => {
                let words: Vec<String> = words
                    .iter()
                    .map(|word| lexeme(word))
                    .filter(|word| !word.is_empty())
                    .collect();
                (!words.is_empty()).then(|| format!("({})", words.join(" <-> ")))
            }
        })
        .collect();
    (!terms.is_empty()).then(|| terms.join(" & "))
}

/// A query word as `to_tsquery` (and the snippet window's pattern) may read it: its letters and
/// digits. The core sends nothing else; any other character would be query syntax here.
fn lexeme(word: &str) -> String {
    word.chars().filter(|c| c.is_alphanumeric()).collect()
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

/// Where the text to highlight comes from: the whole text, or, for long texts, a window around
/// the first place a query word starts.
enum Source<'a> {
    Whole(&'a str),
    /// The text expression and the bound `text[]` of `first_words`.
    Window {
        text: &'a str,
        words: &'a str,
    },
}

/// Texts longer than this are highlighted in a window of this many characters, starting
/// `WINDOW_LEAD` before the first place a query word starts: `ts_headline` parses all it is given
/// (≈ 0.25 µs a character, 50 ms for a 200,000-character document), while finding the place is a
/// regular-expression scan, many times cheaper.
const WINDOW: usize = 2000;
const WINDOW_LEAD: usize = 500;

/// The word that starts each term (a phrase's first), lower-case, for `Source::Window`.
fn first_words(query: &SearchQuery) -> Vec<String> {
    query
        .terms
        .iter()
        .filter_map(|term| match term {
            SearchTerm::Prefix(word) => Some(lexeme(word)),
            SearchTerm::Phrase(words) => words
                .iter()
                .map(|word| lexeme(word))
                .find(|w| !w.is_empty()),
        })
        .filter(|word| !word.is_empty())
        .collect()
}

/// A `LATERAL` subquery making a snippet of `source` for the tsquery `query`, as columns
/// `snippet`, `cut_before`, `cut_after`, `lead` and `tail` of `alias`: the highlighted fragment,
/// whether text (a letter or digit, not just spaces or punctuation) was left out before and
/// after it, and, where none was, the spaces and punctuation there (the fragment starts and
/// ends with a word; a text shown whole keeps its `(` or final `.`, as on SQLite).
/// `options` and `markers` name the bound `headline_options()` and `markers()`.
///
/// The index splits words at every ASCII punctuation character (`docreview_search_words`), the
/// headline parser would not (`x.org/deploy` is one host-and-path token to it, so `deploy` would
/// go unmarked). So the text is highlighted with a U+0001 after each such character, which
/// splits the same tokens without losing a character; `Snippet::finish` removes them.
///
/// A window starts where `(^|non-alphanumeric)word` first matches the lower-cased text (the
/// words are letters and digits only, so they are literal in the pattern); a text without such a
/// place is highlighted from its start. Positions are approximate where lower-casing changes a
/// text's length, which the lead absorbs.
///
/// `OFFSET 0` keeps the planner from flattening the layers, which would copy `regexp_replace`,
/// `lower` and `ts_headline` into every later reference and run them several times per row.
fn snippet_sql(alias: &str, source: &Source, query: &str, options: &str, markers: &str) -> String {
    let piece = match source {
        Source::Whole(text) => format!("SELECT {text} AS piece, 1 AS start, FALSE AS more"),
        Source::Window { text, words } => format!(
            "SELECT substr(b.body, b.start, {WINDOW}) AS piece, b.start, \
               b.start + {WINDOW} <= length(b.body) AS more \
             FROM (SELECT a.body, CASE WHEN length(a.body) <= {WINDOW} THEN 1 ELSE greatest(1, coalesce( \
                 (SELECT min(nullif(strpos(l.low, substring(l.low FROM '(?:^|[^[:alnum:]])' || w)), 0)) \
                  FROM (SELECT lower(a.body) AS low OFFSET 0) l, unnest({words}::text[]) w), \
                 1) - {WINDOW_LEAD}) END AS start \
               FROM (SELECT {text} AS body OFFSET 0) a) b"
        ),
    };
    let split = r"regexp_replace(v.piece, '([!-/:-@\[-`{-~])', '\1' || chr(1), 'g')";
    let word = "'[^[:space:][:punct:][:cntrl:]]'";
    format!(
        "CROSS JOIN LATERAL ( \
           SELECT c.snippet, c.cut_before, c.cut_after, \
             CASE WHEN c.at > 1 AND NOT c.cut_before THEN left(c.split, c.at - 1) ELSE '' END, \
             CASE WHEN c.at > 0 AND NOT c.cut_after \
               THEN substr(c.split, c.at + length(c.plain)) ELSE '' END \
           FROM (SELECT h.snippet, h.split, h.plain, h.at, \
             h.start > 1 OR (h.at > 1 AND left(h.split, h.at - 1) ~ {word}) AS cut_before, \
             h.more OR (h.at > 0 AND substr(h.split, h.at + length(h.plain)) ~ {word}) AS cut_after \
           FROM (SELECT t.*, strpos(t.split, t.plain) AS at \
             FROM (SELECT x.*, translate(x.snippet, {markers}, '') AS plain \
               FROM (SELECT y.*, ts_headline('simple', y.split, {query}, {options}) AS snippet \
                 FROM (SELECT {split} AS split, v.start, v.more FROM ({piece}) v OFFSET 0) y \
                 OFFSET 0) x) t) h) c \
         ) {alias}(snippet, cut_before, cut_after, lead, tail)"
    )
}

/// `snippet_sql`'s columns, read from `at`.
struct Snippet {
    text: String,
    cut_before: bool,
    cut_after: bool,
    lead: String,
    tail: String,
}

/// How many columns `snippet_sql` gives.
const SNIPPET_WIDTH: usize = 5;

impl Snippet {
    fn read(row: &dyn Columns, at: usize) -> ColumnResult<Snippet> {
        Ok(Snippet {
            text: row.text(at)?,
            cut_before: row.flag(at + 1)?,
            cut_after: row.flag(at + 2)?,
            lead: row.text(at + 3)?,
            tail: row.text(at + 4)?,
        })
    }

    fn shows_match(&self) -> bool {
        self.text.contains(MATCH_START)
    }

    /// The U+0001s removed, `SNIPPET_ELLIPSIS` at an end where text was left out, the
    /// punctuation at an end where none was, without surrounding spaces.
    fn finish(self) -> String {
        let mut out = String::with_capacity(
            self.lead.len() + self.text.len() + self.tail.len() + 2 * SNIPPET_ELLIPSIS.len(),
        );
        if self.cut_before {
            out.push_str(SNIPPET_ELLIPSIS);
        }
        for part in [&self.lead, &self.text, &self.tail] {
            out.extend(part.chars().filter(|c| *c != '\u{1}'));
        }
        if self.cut_after {
            out.push_str(SNIPPET_ELLIPSIS);
        }
        out.trim().to_string()
    }
}

/// Comment and reply matches ranked per query (`SEARCH_COMMENT_WINDOW`, the newest the caller
/// may see after the filters) and document matches (`SEARCH_DOCUMENT_WINDOW`, the most recently
/// updated). `ts_rank_cd` needs each match's `tsvector`, read from its row, so ranking every match
/// of a word found in most of 1,000,000 comments takes seconds; a window, tens of milliseconds.
const CANDIDATES: usize = SEARCH_COMMENT_WINDOW;
const DOCUMENT_CANDIDATES: usize = SEARCH_DOCUMENT_WINDOW;

/// The tsquery, inline rather than in a scalar subquery: statements run unprepared
/// (`persistent(false)`), so each is planned with its parameters known, `to_tsquery` of a
/// constant is folded into a constant (parsed once, not per row), and the planner estimates
/// from the column's word statistics how many rows match. Those estimates choose the plan: the
/// GIN index for rare words, the member's few visible documents first for frequent ones. A
/// prepared (generic) plan would guess the same 0.5% for every query.
const QUERY: &str = "to_tsquery('simple', $5::text)";

/// The word test on a `tsvector` column. For an external member it is `ts_match_vq`, the
/// function behind `@@`, which no index serves, so their search reads only their documents'
/// items: bounded by what they can see, and immune to planners misjudging the GIN index (which
/// would otherwise be scanned once per visible document for mid-frequency words). Measured on
/// 1,000,000 comments, 60 visible documents: 45–60 ms for rare and frequent words alike, where
/// letting the planner choose ranged from 6 ms to 1.5 s.
fn matches(column: &str, visibility: &Visibility) -> String {
    match visibility {
        Visibility::Member {
            internal: false, ..
        } => format!("ts_match_vq({column}, {QUERY})"),
        _ => format!("{column} @@ {QUERY}"),
    }
}

async fn comments(store: &PgStore, search: CommentSearch) -> StoreResult<Vec<CommentHit>> {
    let Some(query_text) = tsquery(&search.query) else {
        return Ok(Vec::new());
    };
    let sql = comments_sql(&search.visibility);
    let rows = visibility::bind(sqlx::query(&sql).persistent(false), &search.visibility)
        .bind(query_text)
        .bind(search.status.map(CommentStatus::as_str))
        .bind(search.category.map(Category::as_str))
        .bind(search.review_id.as_deref())
        .bind(count_param(search.offset))
        .bind(count_param(search.limit))
        .bind(headline_options())
        .bind(markers())
        .bind(search.assignee_id.as_deref())
        .fetch_all(&store.pool)
        .await
        .map_err(map_error)?;
    decode_all(&rows, comment_hit)
}

fn comments_sql(visibility: &Visibility) -> String {
    // $1–$4 visibility, $5 query, $6 status, $7 category, $8 review id, $9 offset, $10 limit,
    // $11 headline options, $12 markers, $13 assignee. Status, category and assignee are the
    // comment's, also for a reply; a reply of a deleted comment is gone with its thread. Filters left NULL fold away
    // in the custom plan.
    //
    // Innermost: the newest `CANDIDATES` matches of each kind the caller may see (newest-first
    // indexes for frequent words, the GIN index and a small sort for rare ones), merged and cut
    // to `CANDIDATES`. Then ranked: best first, ties newest first, then the later item id (byte
    // order, COLLATE "C"), so pages never overlap. Last, the page's bodies and snippets.
    let filters = "($6::text IS NULL OR c.status = $6::text) \
                   AND ($7::text IS NULL OR c.category = $7::text) \
                   AND ($13::text IS NULL OR c.assignee_id = $13::text)";
    format!(
        "SELECT h.review_id, r.title, h.comment_id, h.message_id, u.id, u.provider, u.display_name, u.handle, \
           c.category, c.status, h.created_at, sn.snippet, sn.cut_before, sn.cut_after, sn.lead, sn.tail \
         FROM ( \
           SELECT w.review_id, w.comment_id, w.message_id, w.item_id, w.created_at, \
             ts_rank_cd(w.search, {QUERY}) AS rank \
           FROM ( \
             (SELECT c.review_id, c.id AS comment_id, NULL::text COLLATE \"C\" AS message_id, \
                c.id AS item_id, c.created_at, c.search \
              FROM comments c \
              WHERE {comment_matches} AND c.deleted_at IS NULL AND {filters} \
                AND ($8::text IS NULL OR c.review_id = $8::text) {visible_comments} \
              ORDER BY c.created_at DESC, c.id DESC LIMIT {CANDIDATES}) \
             UNION ALL \
             (SELECT m.review_id, m.comment_id, m.id, m.id, m.created_at, m.search \
              FROM messages m JOIN comments c ON c.id = m.comment_id \
              WHERE {message_matches} AND m.deleted_at IS NULL AND c.deleted_at IS NULL \
                AND {filters} AND ($8::text IS NULL OR m.review_id = $8::text) {visible_messages} \
              ORDER BY m.created_at DESC, m.id DESC LIMIT {CANDIDATES}) \
             ORDER BY created_at DESC, item_id DESC LIMIT {CANDIDATES} \
           ) w \
           ORDER BY rank DESC, w.created_at DESC, w.item_id DESC \
           OFFSET $9 LIMIT $10 \
         ) h \
         JOIN reviews r ON r.id = h.review_id \
         JOIN comments c ON c.id = h.comment_id \
         LEFT JOIN messages m ON m.id = h.message_id \
         JOIN users u ON u.id = coalesce(m.author_id, c.author_id) \
         {snippet} \
         ORDER BY h.rank DESC, h.created_at DESC, h.item_id DESC",
        comment_matches = matches("c.search", visibility),
        message_matches = matches("m.search", visibility),
        visible_comments = visible_items("c.review_id", visibility),
        visible_messages = visible_items("m.review_id", visibility),
        snippet = snippet_sql(
            "sn",
            &Source::Whole("coalesce(m.body, c.body)"),
            QUERY,
            "$11",
            "$12"
        ),
    )
}

fn comment_hit(row: &dyn Columns) -> ColumnResult<CommentHit> {
    Ok(CommentHit {
        review_id: row.text(0)?,
        review_title: row.text(1)?,
        comment_id: row.text(2)?,
        message_id: row.optional_text(3)?,
        author: columns::user(row, 4)?,
        category: columns::word(row, 8, Category::parse)?,
        status: columns::word(row, 9, CommentStatus::parse)?,
        created_at: row.integer(10)?,
        snippet: Snippet::read(row, 11)?.finish(),
    })
}

async fn reviews(store: &PgStore, search: ReviewSearch) -> StoreResult<Vec<ReviewHit>> {
    let Some(query_text) = tsquery(&search.query) else {
        return Ok(Vec::new());
    };
    let sql = reviews_sql(&search.visibility);
    let rows = visibility::bind(sqlx::query(&sql).persistent(false), &search.visibility)
        .bind(query_text)
        .bind(count_param(search.offset))
        .bind(count_param(search.limit))
        .bind(headline_options())
        .bind(markers())
        .bind(first_words(&search.query))
        .fetch_all(&store.pool)
        .await
        .map_err(map_error)?;
    decode_all(&rows, review_hit)
}

fn reviews_sql(visibility: &Visibility) -> String {
    // $1–$4 visibility, $5 query, $6 offset, $7 limit, $8 headline options, $9 markers, $10 the
    // terms' first words (`first_words`). The
    // most recently updated `DOCUMENT_CANDIDATES` matches are ranked, best first, ties most
    // recently updated first. Both snippets are made (a title is short): the text's when it
    // shows a match, else the title's.
    format!(
        "SELECT {review}, {summary}, tx.snippet, tx.cut_before, tx.cut_after, tx.lead, tx.tail, \
           ti.snippet, ti.cut_before, ti.cut_after, ti.lead, ti.tail \
         FROM ( \
           SELECT w.review_id, w.updated_at, ts_rank_cd(w.document, {QUERY}) AS rank \
           FROM ( \
             SELECT s.review_id, s.document, r.updated_at \
             FROM review_search s JOIN reviews r ON r.id = s.review_id \
             WHERE s.document @@ {QUERY} {visible} \
             ORDER BY r.updated_at DESC, r.id DESC LIMIT {DOCUMENT_CANDIDATES} \
           ) w \
           ORDER BY rank DESC, w.updated_at DESC, w.review_id DESC \
           OFFSET $6 LIMIT $7 \
         ) hit \
         JOIN {from} ON r.id = hit.review_id \
         JOIN review_search s ON s.review_id = hit.review_id \
         {text_snippet} {title_snippet} \
         ORDER BY hit.rank DESC, r.updated_at DESC, r.id DESC",
        review = REVIEW_COLUMNS,
        summary = SUMMARY_COLUMNS,
        from = SUMMARY_FROM,
        visible = match visibility {
            Visibility::All { .. } => String::new(),
            Visibility::Member { .. } => format!("AND {VISIBLE}"),
        },
        text_snippet = snippet_sql(
            "tx",
            &Source::Window {
                text: "s.body",
                words: "$10"
            },
            QUERY,
            "$8",
            "$9"
        ),
        title_snippet = snippet_sql("ti", &Source::Whole("s.title"), QUERY, "$8", "$9"),
    )
}

fn review_hit(row: &dyn Columns) -> ColumnResult<ReviewHit> {
    let at = SUMMARY_WIDTH;
    let text = Snippet::read(row, at)?;
    let title = Snippet::read(row, at + SNIPPET_WIDTH)?;
    let snippet = if text.shows_match() || !title.shows_match() {
        text.finish()
    } else {
        title.finish()
    };
    Ok(ReviewHit {
        summary: columns::summary(row, 0)?,
        snippet,
    })
}

#[async_trait::async_trait]
impl SearchStore for PgStore {
    async fn search_comments(&self, search: CommentSearch) -> StoreResult<Vec<CommentHit>> {
        comments(self, search).await
    }

    async fn search_reviews(&self, search: ReviewSearch) -> StoreResult<Vec<ReviewHit>> {
        reviews(self, search).await
    }

    async fn reviews_without_search_text(
        &self,
        limit: usize,
    ) -> StoreResult<Vec<(String, String)>> {
        let rows = sqlx::query(
            "SELECT s.review_id, r.latest_version_id FROM review_search s \
             JOIN reviews r ON r.id = s.review_id \
             WHERE s.version_id IS NULL ORDER BY s.review_id LIMIT $1",
        )
        .bind(count_param(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| Ok((row.text(0)?, row.text(1)?)))
    }

    async fn set_search_text(
        &self,
        review_id: &str,
        version_id: &str,
        text: String,
    ) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        // FOR KEY SHARE conflicts with `write_version`'s FOR UPDATE (and with deletion) but not
        // with comment writes: a version written meanwhile either waits for this transaction or
        // is seen here. Text a version write set (`version_id` not NULL) is never overwritten,
        // also when a replaced body kept its version id.
        let latest: Option<String> =
            sqlx::query_scalar("SELECT latest_version_id FROM reviews WHERE id = $1 FOR KEY SHARE")
                .bind(review_id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(map_error)?;
        if latest.as_deref() != Some(version_id) {
            return Ok(());
        }
        sqlx::query(
            "INSERT INTO review_search (review_id, title, body, version_id) \
             SELECT id, title, $2, $3 FROM reviews WHERE id = $1 \
             ON CONFLICT (review_id) DO UPDATE SET body = excluded.body, version_id = excluded.version_id \
             WHERE review_search.version_id IS NULL",
        )
        .bind(review_id)
        .bind(storable(text))
        .bind(version_id)
        .execute(&mut *tx)
        .await
        .map_err(map_error)?;
        tx.commit().await.map_err(map_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(word: &str) -> SearchTerm {
        SearchTerm::Prefix(word.to_string())
    }

    #[test]
    #[ignore = "prints the search statements, for EXPLAIN"]
    fn print_sql() {
        let member = Visibility::Member {
            user_id: String::new(),
            email: String::new(),
            internal: false,
        };
        println!("{};\n\n{};", comments_sql(&member), reviews_sql(&member));
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
        assert_eq!(
            tsquery(&SearchQuery {
                terms: vec![prefix("'&|!:*"), prefix("de-ploy")]
            })
            .as_deref(),
            Some("deploy:*"),
            "query syntax never reaches to_tsquery"
        );
    }

    #[test]
    fn finishes_snippets() {
        let snippet = |text: &str, cut_before, cut_after| Snippet {
            text: text.to_string(),
            cut_before,
            cut_after,
            lead: String::new(),
            tail: String::new(),
        };
        assert_eq!(
            snippet("see x.\u{1}org/\u{1}deploy", true, false).finish(),
            "…see x.org/deploy"
        );
        assert_eq!(snippet("all", false, true).finish(), "all…");
        assert_eq!(snippet("", false, false).finish(), "");
        let whole = Snippet {
            lead: " (\u{1}".to_string(),
            tail: ").\u{1} \n".to_string(),
            ..snippet("see", false, false)
        };
        assert_eq!(whole.finish(), "(see).");
    }
}
