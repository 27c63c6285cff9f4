//! Checks for full-text search: `search_comments`, `search_reviews`, and the search text of
//! documents (`reviews_without_search_text`, `set_search_text`).
//!
//! Backends rank differently (bm25, `ts_rank_cd`), so these checks assert the set of hits, and
//! an order only where the rule fixes it whatever the ranking: equal bodies (ties, newest first)
//! or one hit that is better by any measure (the same length, the word three times instead of
//! once). Texts are plain ASCII words, which every tokenizer splits alike, unless a check is
//! about how words are split.

mod comments;
mod documents;
mod ranking;
mod visibility;

pub use comments::{
    check_search_comments_filters, check_search_comments_follow_writes,
    check_search_comments_matches, check_search_queries_without_words,
    check_search_splits_words_at_punctuation,
};
pub use documents::{
    check_search_reviews, check_search_reviews_ranking_and_paging, check_search_text,
};
pub use ranking::{
    check_search_comments_ranking_and_paging, check_search_long_document_snippets,
    check_search_ranks_the_newest_window, check_search_snippets,
    check_search_snippets_replies_and_order,
};
pub use visibility::{
    check_search_comments_visibility, check_search_follows_visibility_and_projects,
    check_search_members_seeing_many_documents,
};

use std::sync::Arc;

use docreview_core::model::{CommentRecord, MessageRecord, Millis};
use docreview_core::store::{
    CommentHit, CommentSearch, ReviewHit, ReviewSearch, SearchQuery, SearchTerm, Store,
    VersionWrite, Visibility,
};

use crate::fixtures::{T0, all_view, comment, message, version};

/// Every word as a prefix term.
fn words(list: &[&str]) -> SearchQuery {
    SearchQuery {
        terms: list
            .iter()
            .map(|w| SearchTerm::Prefix(w.to_string()))
            .collect(),
    }
}

/// One phrase.
fn phrase(list: &[&str]) -> SearchQuery {
    SearchQuery {
        terms: vec![SearchTerm::Phrase(
            list.iter().map(std::string::ToString::to_string).collect(),
        )],
    }
}

fn comment_search(visibility: Visibility, query: SearchQuery) -> CommentSearch {
    CommentSearch {
        visibility,
        query,
        status: None,
        category: None,
        review_id: None,
        assignee_id: None,
        offset: 0,
        limit: 100,
    }
}

fn said(review_id: &str, id: &str, author: &str, at: Millis, body: &str) -> CommentRecord {
    let mut c = comment(review_id, id, author, at);
    c.body = body.to_string();
    c
}

fn replied(to: &CommentRecord, id: &str, author: &str, at: Millis, body: &str) -> MessageRecord {
    let mut m = message(to, id, author, at);
    m.body = body.to_string();
    m
}

/// A hit as `comment_id` or `comment_id/message_id`.
fn key(hit: &CommentHit) -> String {
    match &hit.message_id {
        Some(message) => format!("{}/{message}", hit.comment_id),
        None => hit.comment_id.clone(),
    }
}

async fn hits(store: &Arc<dyn Store>, search: CommentSearch) -> Vec<CommentHit> {
    store
        .search_comments(search)
        .await
        .expect("search comments")
}

/// The hits' keys, in the order answered.
async fn ordered(store: &Arc<dyn Store>, search: CommentSearch) -> Vec<String> {
    hits(store, search).await.iter().map(key).collect()
}

/// The hits' keys, sorted (for answers whose order the ranking decides).
async fn found(store: &Arc<dyn Store>, search: CommentSearch) -> Vec<String> {
    let mut keys = ordered(store, search).await;
    keys.sort();
    keys
}

async fn found_all(store: &Arc<dyn Store>, query: SearchQuery) -> Vec<String> {
    found(store, comment_search(all_view(), query)).await
}

fn keys(list: &[&str]) -> Vec<String> {
    let mut keys: Vec<String> = list.iter().map(std::string::ToString::to_string).collect();
    keys.sort();
    keys
}
fn review_search(visibility: Visibility, query: SearchQuery) -> ReviewSearch {
    ReviewSearch {
        visibility,
        query,
        offset: 0,
        limit: 100,
    }
}

async fn doc_hits(store: &Arc<dyn Store>, search: ReviewSearch) -> Vec<ReviewHit> {
    store.search_reviews(search).await.expect("search reviews")
}

async fn docs_found(store: &Arc<dyn Store>, search: ReviewSearch) -> Vec<String> {
    let mut ids: Vec<String> = doc_hits(store, search)
        .await
        .into_iter()
        .map(|h| h.summary.review.id)
        .collect();
    ids.sort();
    ids
}

fn version_write(
    review_id: &str,
    latest: &str,
    revision: i64,
    id: &str,
    append: bool,
    text: &str,
) -> VersionWrite {
    VersionWrite {
        review_id: review_id.to_string(),
        expected_latest_version_id: latest.to_string(),
        expected_comments_revision: revision,
        version: version(review_id, id, T0 + 50),
        html: b"<p>new</p>".to_vec(),
        append,
        anchors: Vec::new(),
        structure_changed: false,
        at: T0 + 50,
        search_text: text.to_string(),
        outbox: Vec::new(),
        closed: Vec::new(),
    }
}
