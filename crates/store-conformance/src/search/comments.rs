//! Comment search: what matches, following every write, and the filters.

use std::sync::Arc;

use docreview_core::model::{Category, CommentStatus};
use docreview_core::store::{
    CommentSearch, MATCH_END, MATCH_START, SearchQuery, SearchTerm, Store,
};

use super::*;
use crate::fixtures::{T0, all_view, new_review, review, user, write_items};

/// Comment and reply bodies are found by words (as prefixes, any case), by phrases (exact order,
/// whole words) and by several terms that must all match; hits name the document, the comment,
/// the reply, its author and time, and the comment's category and status.
pub async fn check_search_comments_matches(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let bob = user(&store, "usr_bob").await;
    review(&store, "rev_a", "usr_alice", T0).await;
    let mut b = new_review("rev_b", "usr_alice", T0);
    b.review.title = "Release checklist".to_string();
    store.create_review(b).await.expect("create");

    let c1 = said(
        "rev_a",
        "c1",
        "usr_alice",
        T0 + 1,
        "We should deploy the service on Monday",
    );
    let c2 = said(
        "rev_a",
        "c2",
        "usr_alice",
        T0 + 2,
        "The deployment failed twice",
    );
    let mut c3 = said("rev_b", "c3", "usr_alice", T0 + 3, "Nothing relevant here");
    c3.category = Category::Consult;
    c3.status = CommentStatus::Closed;
    let c4 = said("rev_b", "c4", "usr_alice", T0 + 4, "Ship it on MONDAY");
    let m1 = replied(
        &c3,
        "m1",
        "usr_bob",
        T0 + 5,
        "Let us deploy again after the final review",
    );
    let m2 = replied(&c1, "m2", "usr_bob", T0 + 6, "Agreed, Monday works");
    write_items(&store, "rev_a", vec![c1, c2], vec![m2]).await;
    write_items(&store, "rev_b", vec![c3, c4], vec![m1]).await;

    assert_eq!(
        found_all(&store, words(&["deploy"])).await,
        keys(&["c1", "c2", "c3/m1"]),
        "a word matches the words it starts, in comments and in replies"
    );
    assert_eq!(
        found_all(&store, words(&["deployment"])).await,
        keys(&["c2"])
    );
    assert_eq!(
        found_all(&store, words(&["monday"])).await,
        keys(&["c1", "c1/m2", "c4"]),
        "matching ignores case"
    );
    assert_eq!(
        found_all(&store, words(&["deploy", "monday"])).await,
        keys(&["c1"]),
        "every term must match the same body"
    );
    assert_eq!(
        found_all(&store, words(&["mon", "ship"])).await,
        keys(&["c4"])
    );
    assert_eq!(
        found_all(&store, phrase(&["final", "review"])).await,
        keys(&["c3/m1"])
    );
    assert_eq!(
        found_all(&store, phrase(&["deploy", "again"])).await,
        keys(&["c3/m1"])
    );
    assert!(
        found_all(&store, phrase(&["review", "final"]))
            .await
            .is_empty(),
        "a phrase keeps its order"
    );
    assert!(
        found_all(&store, phrase(&["deplo", "again"]))
            .await
            .is_empty(),
        "a phrase matches whole words"
    );
    assert!(
        found_all(&store, phrase(&["deploy", "service"]))
            .await
            .is_empty(),
        "a phrase's words are next to each other"
    );
    let mixed = SearchQuery {
        terms: vec![
            SearchTerm::Phrase(vec!["final".to_string(), "review".to_string()]),
            SearchTerm::Prefix("agai".to_string()),
        ],
    };
    assert_eq!(found_all(&store, mixed).await, keys(&["c3/m1"]));
    assert!(found_all(&store, words(&["zebra"])).await.is_empty());

    let reply = hits(
        &store,
        comment_search(all_view(), phrase(&["final", "review"])),
    )
    .await;
    assert_eq!(reply.len(), 1);
    let hit = &reply[0];
    assert_eq!(hit.review_id, "rev_b");
    assert_eq!(hit.review_title, "Release checklist");
    assert_eq!(hit.comment_id, "c3");
    assert_eq!(hit.message_id.as_deref(), Some("m1"));
    assert_eq!(hit.author, bob.user, "the reply's author");
    assert_eq!(hit.created_at, T0 + 5, "the reply's time");
    assert_eq!(
        (hit.category, hit.status),
        (Category::Consult, CommentStatus::Closed),
        "the comment's category and status"
    );
    let own = hits(&store, comment_search(all_view(), words(&["deployment"]))).await;
    assert_eq!(own.len(), 1);
    assert_eq!(
        (
            own[0].review_id.as_str(),
            own[0].review_title.as_str(),
            own[0].message_id.as_deref(),
            own[0].created_at,
            own[0].category,
            own[0].status,
        ),
        (
            "rev_a",
            "Title of rev_a",
            None,
            T0 + 2,
            Category::Note,
            CommentStatus::Open
        )
    );
}

/// The index follows every write: deleted comments and replies are never found (deleted at
/// once or later), edited bodies are found by their new words only, and rewriting a comment
/// without changing its body neither loses nor duplicates it.
pub async fn check_search_comments_follow_writes(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let c1 = said("rev", "c1", "usr_alice", T0 + 1, "alpha original wording");
    let mut gone = said("rev", "c2", "usr_alice", T0 + 2, "charlie never live");
    gone.deleted_at = Some(T0 + 2);
    let m1 = replied(&c1, "m1", "usr_alice", T0 + 3, "bravo reply text");
    let mut m_gone = replied(&c1, "m2", "usr_alice", T0 + 4, "delta never live");
    m_gone.deleted_at = Some(T0 + 4);
    let c3 = said("rev", "c3", "usr_alice", T0 + 5, "golf stays open");
    write_items(
        &store,
        "rev",
        vec![c1.clone(), gone, c3.clone()],
        vec![m1.clone(), m_gone],
    )
    .await;

    assert!(found_all(&store, words(&["charlie"])).await.is_empty());
    assert!(found_all(&store, words(&["delta"])).await.is_empty());
    assert_eq!(found_all(&store, words(&["alpha"])).await, keys(&["c1"]));
    assert_eq!(found_all(&store, words(&["bravo"])).await, keys(&["c1/m1"]));

    // Edits.
    let mut edited = c1.clone();
    edited.body = "echo new wording".to_string();
    edited.edited_at = Some(T0 + 10);
    let mut edited_reply = m1.clone();
    edited_reply.body = "foxtrot answer".to_string();
    edited_reply.edited_at = Some(T0 + 10);
    write_items(
        &store,
        "rev",
        vec![edited.clone()],
        vec![edited_reply.clone()],
    )
    .await;
    assert!(found_all(&store, words(&["alpha"])).await.is_empty());
    assert!(found_all(&store, words(&["original"])).await.is_empty());
    assert_eq!(found_all(&store, words(&["echo"])).await, keys(&["c1"]));
    assert_eq!(
        found_all(&store, words(&["wording"])).await,
        keys(&["c1"]),
        "found once"
    );
    assert!(found_all(&store, words(&["bravo"])).await.is_empty());
    assert_eq!(
        found_all(&store, words(&["foxtrot"])).await,
        keys(&["c1/m1"])
    );

    // Rewritten with the same body (a status change, a new anchor): still found, once.
    let mut closed = c3.clone();
    closed.status = CommentStatus::Closed;
    closed.anchor.state = docreview_core::model::AnchorState::Fuzzy;
    write_items(&store, "rev", vec![closed.clone(), closed], vec![]).await;
    let golf = hits(&store, comment_search(all_view(), words(&["golf"]))).await;
    assert_eq!(golf.iter().map(key).collect::<Vec<_>>(), vec!["c3"]);
    assert_eq!(golf[0].status, CommentStatus::Closed);

    // Deleting the reply, then the comment.
    let mut reply_deleted = edited_reply;
    reply_deleted.deleted_at = Some(T0 + 20);
    write_items(&store, "rev", vec![], vec![reply_deleted]).await;
    assert!(found_all(&store, words(&["foxtrot"])).await.is_empty());
    assert_eq!(found_all(&store, words(&["echo"])).await, keys(&["c1"]));
    let mut deleted = edited;
    deleted.deleted_at = Some(T0 + 21);
    write_items(&store, "rev", vec![deleted], vec![]).await;
    assert!(found_all(&store, words(&["echo"])).await.is_empty());
    assert!(found_all(&store, words(&["wording"])).await.is_empty());
    assert_eq!(found_all(&store, words(&["golf"])).await, keys(&["c3"]));
}

/// Status, category (both the comment's, for replies too, following changes) and document
/// filters, alone and combined.
pub async fn check_search_comments_filters(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev_a", "usr_alice", T0).await;
    review(&store, "rev_b", "usr_alice", T0).await;
    let a1 = said("rev_a", "a1", "usr_alice", T0 + 1, "kiwi one");
    let mut a2 = said("rev_a", "a2", "usr_alice", T0 + 2, "kiwi two");
    a2.category = Category::Revise;
    a2.status = CommentStatus::Closed;
    let mut b1 = said("rev_b", "b1", "usr_alice", T0 + 3, "kiwi three");
    b1.status = CommentStatus::Closed;
    let bm1 = replied(&b1, "bm1", "usr_alice", T0 + 4, "kiwi reply");
    write_items(&store, "rev_a", vec![a1, a2], vec![]).await;
    write_items(&store, "rev_b", vec![b1.clone()], vec![bm1]).await;

    let kiwi = || comment_search(all_view(), words(&["kiwi"]));
    let with = |change: &dyn Fn(&mut CommentSearch)| {
        let mut search = kiwi();
        change(&mut search);
        search
    };
    assert_eq!(
        found(&store, kiwi()).await,
        keys(&["a1", "a2", "b1", "b1/bm1"])
    );
    assert_eq!(
        found(&store, with(&|s| s.status = Some(CommentStatus::Open))).await,
        keys(&["a1"])
    );
    assert_eq!(
        found(&store, with(&|s| s.status = Some(CommentStatus::Closed))).await,
        keys(&["a2", "b1", "b1/bm1"]),
        "a reply has its comment's status"
    );
    assert_eq!(
        found(&store, with(&|s| s.category = Some(Category::Revise))).await,
        keys(&["a2"])
    );
    assert_eq!(
        found(&store, with(&|s| s.category = Some(Category::Note))).await,
        keys(&["a1", "b1", "b1/bm1"])
    );
    assert_eq!(
        found(&store, with(&|s| s.review_id = Some("rev_b".to_string()))).await,
        keys(&["b1", "b1/bm1"])
    );
    assert_eq!(
        found(
            &store,
            with(&|s| {
                s.review_id = Some("rev_a".to_string());
                s.status = Some(CommentStatus::Closed);
            })
        )
        .await,
        keys(&["a2"])
    );
    assert!(
        found(
            &store,
            with(&|s| {
                s.review_id = Some("rev_a".to_string());
                s.category = Some(Category::Consult);
            })
        )
        .await
        .is_empty()
    );
    assert!(
        found(&store, with(&|s| s.review_id = Some("rev_c".to_string())))
            .await
            .is_empty()
    );

    // Reopened and recategorized: the comment and its reply follow.
    let mut reopened = b1;
    reopened.status = CommentStatus::Open;
    reopened.category = Category::Consult;
    write_items(&store, "rev_b", vec![reopened], vec![]).await;
    assert_eq!(
        found(&store, with(&|s| s.status = Some(CommentStatus::Open))).await,
        keys(&["a1", "b1", "b1/bm1"])
    );
    let consult = hits(&store, with(&|s| s.category = Some(Category::Consult))).await;
    let mut seen: Vec<(String, Category, CommentStatus)> = consult
        .iter()
        .map(|h| (key(h), h.category, h.status))
        .collect();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        seen,
        vec![
            ("b1".to_string(), Category::Consult, CommentStatus::Open),
            ("b1/bm1".to_string(), Category::Consult, CommentStatus::Open),
        ]
    );
}

/// Words are runs of letters and digits on both backends: the index splits URLs, e-mail
/// addresses and hyphenated words where the query parser does, and a snippet marks the match
/// inside them and shows the text's punctuation unchanged. A phrase matches whole words only.
pub async fn check_search_splits_words_at_punctuation(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let first = said(
        "rev",
        "c1",
        "usr_alice",
        T0 + 1,
        "See https://wiki.example.org/deploy-guide, or mail ops@example.com (v1.2) today.",
    );
    let second = said("rev", "c2", "usr_alice", T0 + 2, "Nothing to see here.");
    write_items(&store, "rev", vec![first, second], vec![]).await;

    for list in [&["deploy"][..], &["guide"], &["ops", "example"], &["v1"]] {
        assert_eq!(
            found_all(&store, words(list)).await,
            keys(&["c1"]),
            "{list:?}"
        );
    }
    let found = hits(&store, comment_search(all_view(), words(&["deploy"]))).await;
    assert_eq!(
        found[0].snippet,
        format!(
            "See https://wiki.example.org/{MATCH_START}deploy{MATCH_END}-guide, or mail \
             ops@example.com (v1.2) today."
        )
    );
    assert_eq!(
        found_all(&store, phrase(&["deploy", "guide"])).await,
        keys(&["c1"])
    );
    assert!(
        found_all(&store, phrase(&["deplo", "guide"]))
            .await
            .is_empty()
    );
}

/// A query without a word to match (no terms, an empty word or phrase, or words of nothing but
/// punctuation, which the core never sends) finds nothing, and is no error.
pub async fn check_search_queries_without_words(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let plain = said("rev", "c1", "usr_alice", T0 + 1, "plain words");
    write_items(&store, "rev", vec![plain], vec![]).await;
    let prefix = |word: &str| SearchQuery {
        terms: vec![SearchTerm::Prefix(word.to_string())],
    };
    for query in [
        SearchQuery { terms: vec![] },
        prefix(""),
        SearchQuery {
            terms: vec![SearchTerm::Phrase(vec![])],
        },
        prefix("\u{00b7}"),
        prefix("\"*"),
        prefix("'&|!:*"),
        SearchQuery {
            terms: vec![SearchTerm::Phrase(vec!["\u{00b7}".into(), "\"".into()])],
        },
    ] {
        let comments = store
            .search_comments(comment_search(all_view(), query.clone()))
            .await
            .unwrap_or_else(|error| panic!("{query:?}: {error}"));
        assert!(comments.is_empty(), "{query:?}");
        let documents = store
            .search_reviews(review_search(all_view(), query.clone()))
            .await
            .unwrap_or_else(|error| panic!("{query:?}: {error}"));
        assert!(documents.is_empty(), "{query:?}");
    }
    assert_eq!(found_all(&store, words(&["plain"])).await, keys(&["c1"]));
}
