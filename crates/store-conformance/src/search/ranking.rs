//! Snippets, ranking, the ranking window and pages.

use std::sync::Arc;

use docreview_core::model::CommentStatus;
use docreview_core::store::{
    CommentHit, MATCH_END, MATCH_START, SEARCH_COMMENT_WINDOW, SNIPPET_ELLIPSIS, Store,
};

use super::*;
use crate::fixtures::{T0, all_view, new_review, review, user, write_items};

/// Snippets come from the matching body: matched words (whole) between `MATCH_START` and
/// `MATCH_END`, and a long body cut around the match with `SNIPPET_ELLIPSIS`.
pub async fn check_search_snippets(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let filler = |n: usize| vec!["filler"; n].join(" ");
    let long = format!("{} pineapple {}", filler(60), filler(60));
    let c1 = said(
        "rev",
        "c1",
        "usr_alice",
        T0 + 1,
        "Please deploy the new build to staging before Friday",
    );
    let c2 = said("rev", "c2", "usr_alice", T0 + 2, &long);
    let m1 = replied(
        &c1,
        "m1",
        "usr_alice",
        T0 + 3,
        "Done after the final review",
    );
    write_items(&store, "rev", vec![c1, c2], vec![m1]).await;

    let snippet = |hits: Vec<CommentHit>| {
        assert_eq!(hits.len(), 1, "one hit expected");
        hits.into_iter()
            .next()
            .map(|h| h.snippet)
            .unwrap_or_default()
    };
    let marked = |word: &str| format!("{MATCH_START}{word}{MATCH_END}");

    let s = snippet(hits(&store, comment_search(all_view(), words(&["deploy"]))).await);
    assert!(s.contains(&marked("deploy")), "{s:?}");
    assert!(
        s.contains("Please"),
        "a short body is shown around the match: {s:?}"
    );
    let s = snippet(hits(&store, comment_search(all_view(), words(&["stag"]))).await);
    assert!(
        s.contains(&marked("staging")),
        "the whole matched word is marked: {s:?}"
    );
    assert_eq!(s.matches(MATCH_START).count(), s.matches(MATCH_END).count());
    let s = snippet(
        hits(
            &store,
            comment_search(all_view(), words(&["friday", "build"])),
        )
        .await,
    );
    assert!(
        s.contains(&marked("Friday")) && s.contains(&marked("build")),
        "every matched term is marked, in its original case: {s:?}"
    );

    let s = snippet(
        hits(
            &store,
            comment_search(all_view(), phrase(&["final", "review"])),
        )
        .await,
    );
    let plain: String = s
        .chars()
        .filter(|c| *c != MATCH_START && *c != MATCH_END)
        .collect();
    assert!(plain.contains("final review"), "{s:?}");
    assert!(s.contains(MATCH_START) && s.contains(MATCH_END), "{s:?}");
    let first_mark = s.find(MATCH_START).unwrap_or(usize::MAX);
    assert!(
        s[first_mark..].starts_with(&format!("{MATCH_START}final")),
        "the phrase is marked from its first word: {s:?}"
    );

    let s = snippet(hits(&store, comment_search(all_view(), words(&["pineapple"]))).await);
    assert!(s.contains(&marked("pineapple")), "{s:?}");
    assert!(
        s.chars().count() < long.chars().count() / 2,
        "a long body is cut around the match: {s:?}"
    );
    assert!(
        s.contains(SNIPPET_ELLIPSIS),
        "what is left out is marked: {s:?}"
    );
}

/// Ties (equal bodies) come newest first, replies among comments; a clearly better match comes
/// first even when older; `offset` and `limit` page through the same order.
pub async fn check_search_comments_ranking_and_paging(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev_a", "usr_alice", T0).await;
    review(&store, "rev_b", "usr_alice", T0).await;
    // Written out of time order, across two documents.
    let times: [(&str, &str, i64); 7] = [
        ("rev_a", "t4", 4),
        ("rev_b", "t1", 1),
        ("rev_a", "t7", 7),
        ("rev_b", "t2", 2),
        ("rev_a", "t6", 6),
        ("rev_b", "t3", 3),
        ("rev_b", "t5", 5),
    ];
    for (doc, id, at) in times {
        write_items(
            &store,
            doc,
            vec![said(doc, id, "usr_alice", T0 + at, "papaya report")],
            vec![],
        )
        .await;
    }
    let parent = said("rev_a", "t0", "usr_alice", T0, "unrelated words");
    let reply = replied(&parent, "t8", "usr_alice", T0 + 8, "papaya report");
    write_items(&store, "rev_a", vec![parent], vec![reply]).await;

    let papaya = || comment_search(all_view(), words(&["papaya"]));
    let everything = ordered(&store, papaya()).await;
    assert_eq!(
        everything,
        vec!["t0/t8", "t7", "t6", "t5", "t4", "t3", "t2", "t1"],
        "equal matches, newest first"
    );
    for limit in [1, 3, 5] {
        let mut pages = Vec::new();
        for page in 0..10 {
            let mut search = papaya();
            search.limit = limit;
            search.offset = page * limit;
            let got = ordered(&store, search).await;
            assert!(got.len() <= limit);
            if got.is_empty() {
                break;
            }
            pages.extend(got);
        }
        assert_eq!(pages, everything, "pages of {limit}");
    }
    let mut beyond = papaya();
    beyond.offset = 8;
    assert!(ordered(&store, beyond).await.is_empty());
    let mut middle = papaya();
    middle.offset = 2;
    middle.limit = 2;
    assert_eq!(ordered(&store, middle).await, vec!["t6", "t5"]);

    // The same length, the word three times against once: better by any ranking.
    let strong = said(
        "rev_b",
        "strong",
        "usr_alice",
        T0 + 1,
        "quince quince quince report",
    );
    let weak = said(
        "rev_b",
        "weak",
        "usr_alice",
        T0 + 9,
        "quince report other words",
    );
    write_items(&store, "rev_b", vec![strong, weak], vec![]).await;
    assert_eq!(
        ordered(&store, comment_search(all_view(), words(&["quince"]))).await,
        vec!["strong", "weak"],
        "the better match first, though older"
    );
}

/// A long body's snippet is cut around the match, with `SNIPPET_ELLIPSIS` where text was left
/// out, and shows 16 to 24 words; a short body is shown whole. Replies are found with their
/// comment's status, and filtered by it; deleted items, and replies of deleted comments, are not
/// found; more matches rank first, ties newest first; pages follow the same order.
pub async fn check_search_snippets_replies_and_order(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    user(&store, "usr_bob").await;
    review(&store, "rev", "usr_alice", T0).await;
    let filler: Vec<String> = (0..60).map(|i| format!("w{i}")).collect();
    let long = format!(
        "{} needle {}.",
        filler[..30].join(" "),
        filler[30..].join(" ")
    );
    let long = said("rev", "c_long", "usr_alice", T0 + 1, &long);
    let twice = said("rev", "c_twice", "usr_alice", T0 + 2, "needle and needle");
    let mut old = said("rev", "c_old", "usr_alice", T0 + 3, "one needle");
    let new = said("rev", "c_new", "usr_alice", T0 + 4, "two needle");
    let mut gone = said("rev", "c_gone", "usr_alice", T0 + 5, "deleted needle");
    let reply = replied(&old, "m_reply", "usr_bob", T0 + 6, "a needle in reply");
    let orphan = replied(
        &gone,
        "m_orphan",
        "usr_bob",
        T0 + 7,
        "needle under a gone one",
    );
    write_items(
        &store,
        "rev",
        vec![long, twice, old.clone(), new, gone.clone()],
        vec![reply, orphan],
    )
    .await;
    gone.deleted_at = Some(T0 + 8);
    old.status = CommentStatus::Closed;
    write_items(&store, "rev", vec![gone, old], vec![]).await;

    let all = hits(&store, comment_search(all_view(), words(&["needle"]))).await;
    let order: Vec<String> = all.iter().map(key).collect();
    assert_eq!(order[0], "c_twice", "more matches rank first: {order:?}");
    assert_eq!(
        {
            let mut sorted = order.clone();
            sorted.sort();
            sorted
        },
        keys(&["c_long", "c_new", "c_old", "c_old/m_reply", "c_twice"])
    );
    let position = |key: &str| order.iter().position(|k| k == key);
    assert!(
        position("c_new") < position("c_old"),
        "ties newest first: {order:?}"
    );
    let reply = all
        .iter()
        .find(|hit| hit.message_id.is_some())
        .expect("the reply is found");
    assert_eq!(
        (
            reply.comment_id.as_str(),
            reply.author.id.as_str(),
            reply.status,
            reply.created_at
        ),
        ("c_old", "usr_bob", CommentStatus::Closed, T0 + 6)
    );

    let snippet = &all
        .iter()
        .find(|hit| hit.comment_id == "c_long")
        .expect("long comment found")
        .snippet;
    assert!(
        snippet.starts_with(SNIPPET_ELLIPSIS) && snippet.ends_with(SNIPPET_ELLIPSIS),
        "{snippet}"
    );
    assert!(
        snippet.contains(&format!("{MATCH_START}needle{MATCH_END}")),
        "{snippet}"
    );
    let shown = snippet.split_whitespace().count();
    assert!((16..=24).contains(&shown), "{shown} words: {snippet}");
    let short = all
        .iter()
        .find(|hit| hit.comment_id == "c_twice")
        .expect("short comment found");
    assert_eq!(
        short.snippet,
        format!("{MATCH_START}needle{MATCH_END} and {MATCH_START}needle{MATCH_END}")
    );

    let mut closed = comment_search(all_view(), words(&["needle"]));
    closed.status = Some(CommentStatus::Closed);
    assert_eq!(
        found(&store, closed).await,
        keys(&["c_old", "c_old/m_reply"]),
        "a reply is filtered by its comment's status"
    );
    let mut paged = Vec::new();
    for offset in 0..order.len() {
        let mut page = comment_search(all_view(), words(&["needle"]));
        page.offset = offset;
        page.limit = 1;
        paged.extend(ordered(&store, page).await);
    }
    assert_eq!(paged, order, "pages of one follow the same order");
}

/// Ranking covers the newest `SEARCH_COMMENT_WINDOW` matches: an older, better match outside
/// them is not found, and pages end there.
pub async fn check_search_ranks_the_newest_window(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let window = SEARCH_COMMENT_WINDOW;
    let offset = |i: usize| i64::try_from(i).expect("small");
    let items: Vec<_> = (0..=window)
        .map(|i| {
            let body = if i == 0 {
                "needle needle needle".to_string()
            } else {
                format!("needle number {i}")
            };
            said(
                "rev",
                &format!("c{i:04}"),
                "usr_alice",
                T0 + 1 + offset(i),
                &body,
            )
        })
        .collect();
    write_items(&store, "rev", items, vec![]).await;
    let mut search = comment_search(all_view(), words(&["needle"]));
    search.limit = 200;
    let first = hits(&store, search.clone()).await;
    assert_ne!(
        first[0].comment_id, "c0000",
        "the oldest match is outside the window"
    );
    search.offset = window - 50;
    assert_eq!(hits(&store, search.clone()).await.len(), 50);
    search.offset = window;
    assert!(hits(&store, search).await.is_empty());
}

/// A long document's snippet is cut around its first match however deep in the text, starting
/// at a word (not inside one that merely contains the query word).
pub async fn check_search_long_document_snippets(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let mut long = new_review("long", "usr_alice", T0);
    let filler: Vec<String> = (0..20_000).map(|i| format!("w{i}")).collect();
    long.search_text = format!(
        "{} xaardvark {} (Aardvark) sighted. {}",
        filler[..5000].join(" "),
        filler[5000..15_000].join(" "),
        filler[15_000..].join(" ")
    );
    store.create_review(long).await.expect("create");
    let found = doc_hits(&store, review_search(all_view(), words(&["aardvark"]))).await;
    assert_eq!(found.len(), 1);
    let snippet = &found[0].snippet;
    assert!(
        snippet.contains(&format!("({MATCH_START}Aardvark{MATCH_END}) sighted")),
        "{snippet}"
    );
    assert!(
        snippet.starts_with(SNIPPET_ELLIPSIS) && snippet.ends_with(SNIPPET_ELLIPSIS),
        "{snippet}"
    );
}
