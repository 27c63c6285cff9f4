//! Full-text search over comments and documents the caller can see (DESIGN.md §4.7).
//!
//! The query language is small and the same on every backend: words match any word they start
//! (`deploy` finds `deployment`), `"quoted words"` match that phrase exactly, and every part must
//! match. Snippets come back as HTML: the text is escaped and matches are wrapped in `<mark>`.

use docreview_api::requests::{CommentSearchQuery, DocSearchQuery};
use docreview_api::views::{CommentResult, CommentResults, DocResult, DocResults};

use super::reviews::review_summary;
use super::{Service, page};
use crate::access::{self, Actor, Operation};
use crate::clock::rfc3339;
use crate::error::{Error, Result};
use crate::store::{
    CommentSearch, MATCH_END, MATCH_START, ReviewSearch, SEARCH_COMMENT_WINDOW,
    SEARCH_DOCUMENT_WINDOW, SearchQuery, SearchTerm,
};

/// A query may hold at most this many words, each at most this long.
const MAX_WORDS: usize = 16;
const MAX_WORD_CHARS: usize = 64;

impl Service {
    pub async fn search_comments(
        &self,
        actor: &Actor,
        query: CommentSearchQuery,
    ) -> Result<CommentResults> {
        access::permit(actor, Operation::Read)?;
        let parsed = parse_query(query.q.as_deref())?;
        let limit = page::limit(query.limit)?;
        let offset = page::offset(query.cursor.as_deref(), SEARCH_COMMENT_WINDOW)?;
        let assignee_id = match query.assignee.as_deref() {
            None => None,
            Some("me") => Some(actor.id().to_string()),
            Some(other) => {
                return Err(Error::invalid(format!(
                    "assignee `{other}` is not supported; use `me`"
                )));
            }
        };
        let Some(visibility) = access::visibility(actor) else {
            return Ok(CommentResults {
                results: Vec::new(),
                next_cursor: None,
            });
        };
        let hits = self
            .store
            .search_comments(CommentSearch {
                visibility,
                query: parsed,
                status: query.status,
                category: query.category,
                review_id: query.review_id,
                assignee_id,
                offset,
                limit: limit + 1,
            })
            .await?;
        let (hits, next_cursor) = page::trim_offset_page(hits, offset, limit);
        Ok(CommentResults {
            results: hits
                .into_iter()
                .map(|hit| CommentResult {
                    review_id: hit.review_id,
                    review_title: hit.review_title,
                    comment_id: hit.comment_id,
                    message_id: hit.message_id,
                    author: hit.author,
                    category: hit.category,
                    status: hit.status,
                    created_ts: rfc3339(hit.created_at),
                    snippet: snippet_html(&hit.snippet),
                })
                .collect(),
            next_cursor,
        })
    }

    pub async fn search_docs(&self, actor: &Actor, query: DocSearchQuery) -> Result<DocResults> {
        access::permit(actor, Operation::Read)?;
        let parsed = parse_query(query.q.as_deref())?;
        let limit = page::limit(query.limit)?;
        let offset = page::offset(query.cursor.as_deref(), SEARCH_DOCUMENT_WINDOW)?;
        let Some(visibility) = access::visibility(actor) else {
            return Ok(DocResults {
                results: Vec::new(),
                next_cursor: None,
            });
        };
        let hits = self
            .store
            .search_reviews(ReviewSearch {
                visibility,
                query: parsed,
                offset,
                limit: limit + 1,
            })
            .await?;
        let (hits, next_cursor) = page::trim_offset_page(hits, offset, limit);
        Ok(DocResults {
            results: hits
                .into_iter()
                .filter_map(|hit| {
                    let snippet = snippet_html(&hit.snippet);
                    review_summary(actor, hit.summary).map(|review| DocResult { review, snippet })
                })
                .collect(),
            next_cursor,
        })
    }
}

/// Parses `q`: quoted phrases and bare words (each a prefix); 400 when nothing searchable is left.
pub fn parse_query(q: Option<&str>) -> Result<SearchQuery> {
    let q = q.unwrap_or_default();
    let mut terms = Vec::new();
    let mut word_count = 0;
    for (index, part) in q.split('"').enumerate() {
        let words = words(part);
        word_count += words.len();
        // Odd parts lie between quotes (an unclosed quote runs to the end).
        if index % 2 == 1 {
            if !words.is_empty() {
                terms.push(SearchTerm::Phrase(words));
            }
        } else {
            terms.extend(words.into_iter().map(SearchTerm::Prefix));
        }
    }
    if terms.is_empty() {
        return Err(Error::invalid(
            "q must contain at least one word (letters or digits)",
        ));
    }
    if word_count > MAX_WORDS {
        return Err(Error::invalid(format!(
            "q may contain at most {MAX_WORDS} words"
        )));
    }
    Ok(SearchQuery { terms })
}

/// The lower-case runs of letters and digits in `text`, as the search indexes split text.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            word.chars()
                .take(MAX_WORD_CHARS)
                .collect::<String>()
                .to_lowercase()
        })
        .collect()
}

/// A store snippet as HTML: everything escaped, match markers turned into `<mark>`.
pub fn snippet_html(snippet: &str) -> String {
    let mut html = String::with_capacity(snippet.len() + 32);
    for c in snippet.chars() {
        match c {
            MATCH_START => html.push_str("<mark>"),
            MATCH_END => html.push_str("</mark>"),
            '&' => html.push_str("&amp;"),
            '<' => html.push_str("&lt;"),
            '>' => html.push_str("&gt;"),
            '"' => html.push_str("&quot;"),
            '\'' => html.push_str("&#39;"),
            other => html.push(other),
        }
    }
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(word: &str) -> SearchTerm {
        SearchTerm::Prefix(word.into())
    }

    #[test]
    fn words_become_prefixes_and_quotes_phrases() {
        let query = parse_query(Some(r#"Deploy "final Review" on-call"#)).ok();
        assert_eq!(
            query.map(|q| q.terms),
            Some(vec![
                prefix("deploy"),
                SearchTerm::Phrase(vec!["final".into(), "review".into()]),
                prefix("on"),
                prefix("call"),
            ])
        );
    }

    #[test]
    fn search_syntax_is_never_passed_through() {
        let query = parse_query(Some("a* OR b) NEAR(c -d")).ok();
        assert_eq!(
            query.map(|q| q.terms),
            Some(vec![
                prefix("a"),
                prefix("or"),
                prefix("b"),
                prefix("near"),
                prefix("c"),
                prefix("d")
            ])
        );
        assert_eq!(
            parse_query(Some("\"unclosed phrase")).ok().map(|q| q.terms),
            Some(vec![SearchTerm::Phrase(vec![
                "unclosed".into(),
                "phrase".into()
            ])])
        );
    }

    #[test]
    fn empty_and_oversized_queries_are_refused() {
        assert!(parse_query(None).is_err());
        assert!(parse_query(Some("  ** \"\" ")).is_err());
        let many = vec!["w"; MAX_WORDS + 1].join(" ");
        assert!(parse_query(Some(&many)).is_err());
        assert_eq!(
            parse_query(Some("Ünïcode ЖУК 42")).ok().map(|q| q.terms),
            Some(vec![prefix("ünïcode"), prefix("жук"), prefix("42")])
        );
    }

    #[test]
    fn snippets_are_escaped_and_marked() {
        let raw = format!("a <b> & {MATCH_START}fox{MATCH_END}'s \"x\"");
        assert_eq!(
            snippet_html(&raw),
            "a &lt;b&gt; &amp; <mark>fox</mark>&#39;s &quot;x&quot;"
        );
    }
}
