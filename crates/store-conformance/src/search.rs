//! Checks for full-text search: `search_comments`, `search_reviews`, and the search text of
//! documents (`reviews_without_search_text`, `set_search_text`).
//!
//! Backends rank differently (bm25, `ts_rank`), so these checks assert the set of hits, and an
//! order only where the rule fixes it whatever the ranking: equal bodies (ties, newest first) or
//! one hit that is better by any measure (the same length, the word three times instead of
//! once). Texts are plain ASCII words, which every tokenizer splits alike.

use std::sync::Arc;

use docreview_core::model::{
    AccessMode, Category, CommentRecord, CommentStatus, GrantRole, Membership, MessageRecord,
    Millis, ProjectRole,
};
use docreview_core::store::{
    CommentHit, CommentSearch, MATCH_END, MATCH_START, ReviewHit, ReviewSearch, ReviewUpdate,
    SNIPPET_ELLIPSIS, SearchQuery, SearchTerm, Store, VersionWrite, Visibility,
};

use crate::fixtures::{
    T0, all_view, comment, grant, head, member, member_view, message, new_review, projects, review,
    user, version, write_items,
};

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
            list.iter().map(|w| w.to_string()).collect(),
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
    let mut keys: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    keys.sort();
    keys
}

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

/// Only comments of documents the caller can see are found: owners, grantees (internal),
/// link mode (internal), project roles (anyone); never a restricted document's comments for a
/// stranger.
pub async fn check_search_comments_visibility(store: Arc<dyn Store>) {
    let alice = user(&store, "usr_alice").await;
    let bob = user(&store, "usr_bob").await;
    let carol = user(&store, "usr_carol").await;
    let dave = member(&store, "usr_dave", Membership::External).await;
    let erin = member(&store, "usr_erin", Membership::External).await;
    projects(&store, &["PRJ-1"]).await;
    store
        .change_project_roles(
            "PRJ-1",
            vec![("usr_dave".to_string(), ProjectRole::Viewer)],
            vec![],
        )
        .await
        .expect("roles");
    let create = |id: &'static str, owner: &'static str, mode: AccessMode| {
        let mut new = new_review(id, owner, T0);
        new.review.access_mode = mode;
        new
    };
    store
        .create_review(create("pub", "usr_alice", AccessMode::Link))
        .await
        .expect("create");
    let mut secret = create("secret", "usr_alice", AccessMode::Restricted);
    secret.grants = vec![
        grant(&carol.email, GrantRole::Viewer),
        grant(&erin.email, GrantRole::Editor),
    ];
    store.create_review(secret).await.expect("create");
    store
        .create_review(create("proj", "usr_alice", AccessMode::Restricted))
        .await
        .expect("create");
    store
        .link_project("proj", None, Some("PRJ-1"), T0 + 1)
        .await
        .expect("link");
    store
        .create_review(create("bobs", "usr_bob", AccessMode::Restricted))
        .await
        .expect("create");
    for doc in ["pub", "secret", "proj", "bobs"] {
        let c = said(doc, &format!("{doc}_c"), "usr_alice", T0 + 2, "mango note");
        let replies = if doc == "secret" {
            vec![replied(&c, "secret_m", "usr_carol", T0 + 3, "mango reply")]
        } else {
            vec![]
        };
        write_items(&store, doc, vec![c], replies).await;
    }
    let mango = |visibility: Visibility| comment_search(visibility, words(&["mango"]));

    assert_eq!(
        found(&store, mango(all_view())).await,
        keys(&["pub_c", "secret_c", "secret_c/secret_m", "proj_c", "bobs_c"])
    );
    assert_eq!(
        found(&store, mango(member_view(&alice))).await,
        keys(&["pub_c", "secret_c", "secret_c/secret_m", "proj_c"]),
        "the owner"
    );
    assert_eq!(
        found(&store, mango(member_view(&bob))).await,
        keys(&["pub_c", "bobs_c"]),
        "an internal member: link mode and their own"
    );
    assert_eq!(
        found(&store, mango(member_view(&carol))).await,
        keys(&["pub_c", "secret_c", "secret_c/secret_m"]),
        "an internal grantee"
    );
    assert_eq!(
        found(&store, mango(member_view(&dave))).await,
        keys(&["proj_c"]),
        "an external member with a project role: that project only"
    );
    assert!(
        found(&store, mango(member_view(&erin))).await.is_empty(),
        "an external member: never through sharing or link mode"
    );
    let stranger = Visibility::Member {
        user_id: "usr_stranger".to_string(),
        email: "stranger@example.com".to_string(),
        internal: true,
    };
    assert_eq!(
        found(&store, mango(stranger.clone())).await,
        keys(&["pub_c"])
    );
    let mut asking_for_secret = mango(stranger);
    asking_for_secret.review_id = Some("secret".to_string());
    assert!(
        found(&store, asking_for_secret).await.is_empty(),
        "naming a restricted document does not open it"
    );
}

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
    }
}

/// Documents are found by title and by text (each word anywhere in either), by phrase, only if
/// the caller can see them; hits carry the list summary and a snippet from the text (or the
/// title when only it matches). New versions, in-place replacements and title changes re-index.
pub async fn check_search_reviews(store: Arc<dyn Store>) {
    let alice = user(&store, "usr_alice").await;
    let bob = user(&store, "usr_bob").await;
    let guest = member(&store, "usr_guest", Membership::External).await;
    projects(&store, &["PRJ-1"]).await;
    store
        .change_project_roles(
            "PRJ-1",
            vec![("usr_guest".to_string(), ProjectRole::Editor)],
            vec![],
        )
        .await
        .expect("roles");
    let doc = |id: &str, owner: &str, title: &str, text: &str, mode: AccessMode| {
        let mut new = new_review(id, owner, T0);
        new.review.title = title.to_string();
        new.search_text = text.to_string();
        new.review.access_mode = mode;
        new
    };
    for new in [
        doc(
            "d1",
            "usr_alice",
            "Quarterly budget plan",
            "The marketing spend rises in spring.",
            AccessMode::Link,
        ),
        doc(
            "d2",
            "usr_alice",
            "Roadmap",
            "Budget cuts are expected for the platform team.",
            AccessMode::Link,
        ),
        doc(
            "d3",
            "usr_bob",
            "Hiring",
            "Nothing about money at all.",
            AccessMode::Restricted,
        ),
        doc(
            "d4",
            "usr_bob",
            "Budget archive",
            "Old numbers.",
            AccessMode::Restricted,
        ),
    ] {
        store.create_review(new).await.expect("create");
    }
    let everyone = |query| review_search(all_view(), query);
    let ids = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    assert_eq!(
        docs_found(&store, everyone(words(&["budget"]))).await,
        ids(&["d1", "d2", "d4"]),
        "by title and by text"
    );
    assert_eq!(
        docs_found(&store, everyone(words(&["spri"]))).await,
        ids(&["d1"])
    );
    assert_eq!(
        docs_found(&store, everyone(phrase(&["budget", "cuts"]))).await,
        ids(&["d2"])
    );
    assert!(
        docs_found(&store, everyone(phrase(&["cuts", "budget"])))
            .await
            .is_empty()
    );
    assert_eq!(
        docs_found(&store, everyone(words(&["roadmap", "platform"]))).await,
        ids(&["d2"]),
        "one word in the title, one in the text"
    );
    assert!(
        docs_found(&store, everyone(words(&["roadmap", "marketing"])))
            .await
            .is_empty()
    );

    // Visibility.
    assert_eq!(
        docs_found(
            &store,
            review_search(member_view(&alice), words(&["budget"]))
        )
        .await,
        ids(&["d1", "d2"])
    );
    assert_eq!(
        docs_found(&store, review_search(member_view(&bob), words(&["budget"]))).await,
        ids(&["d1", "d2", "d4"])
    );
    assert!(
        docs_found(
            &store,
            review_search(member_view(&guest), words(&["budget"]))
        )
        .await
        .is_empty()
    );
    store
        .link_project("d4", None, Some("PRJ-1"), T0 + 1)
        .await
        .expect("link");
    let guest_hits = doc_hits(
        &store,
        review_search(member_view(&guest), words(&["budget"])),
    )
    .await;
    assert_eq!(
        guest_hits
            .iter()
            .map(|h| h.summary.review.id.as_str())
            .collect::<Vec<_>>(),
        vec!["d4"],
        "an external member through a project role"
    );
    assert_eq!(
        guest_hits[0].summary.project_role,
        Some(ProjectRole::Editor)
    );
    assert_eq!(
        guest_hits[0]
            .summary
            .project
            .as_ref()
            .map(|p| p.code.as_str()),
        Some("PRJ-1")
    );

    // Snippets: from the text when it matches, else from the title.
    let hit = doc_hits(&store, everyone(words(&["marketing"]))).await;
    assert_eq!(hit.len(), 1);
    assert!(
        hit[0]
            .snippet
            .contains(&format!("{MATCH_START}marketing{MATCH_END}")),
        "{:?}",
        hit[0].snippet
    );
    let hit = doc_hits(&store, everyone(words(&["quarterly"]))).await;
    assert_eq!(hit.len(), 1);
    assert!(
        hit[0]
            .snippet
            .contains(&format!("{MATCH_START}Quarterly{MATCH_END}")),
        "only the title matches: {:?}",
        hit[0].snippet
    );
    let hit = doc_hits(&store, everyone(words(&["platform"]))).await;
    assert!(
        hit[0]
            .snippet
            .contains(&format!("{MATCH_START}platform{MATCH_END}"))
            && !hit[0].snippet.contains("Roadmap"),
        "{:?}",
        hit[0].snippet
    );

    // The summary is the list row: owner, counts, grant.
    let mut c = comment("d1", "c1", "usr_bob", T0 + 2);
    c.status = CommentStatus::Closed;
    let mut gone = comment("d1", "c2", "usr_bob", T0 + 3);
    gone.deleted_at = Some(T0 + 3);
    write_items(
        &store,
        "d1",
        vec![comment("d1", "c0", "usr_bob", T0 + 1), c, gone],
        vec![],
    )
    .await;
    store
        .update_review(ReviewUpdate {
            review_id: "d1".to_string(),
            at: T0 + 4,
            grants: Some(vec![grant(&bob.email, GrantRole::Editor)]),
            ..ReviewUpdate::default()
        })
        .await
        .expect("share");
    let hit = doc_hits(
        &store,
        review_search(member_view(&bob), words(&["marketing"])),
    )
    .await;
    let summary = &hit[0].summary;
    assert_eq!(summary.review, head(&store, "d1").await.review);
    assert_eq!(summary.owner, alice.user);
    assert_eq!(summary.grant, Some(GrantRole::Editor));
    assert_eq!((summary.comment_count, summary.open_comment_count), (2, 1));
    assert_eq!(summary.project, None);

    // A new version replaces the text; so does rewriting the latest in place.
    store
        .write_version(version_write(
            "d2",
            "d2_v1",
            0,
            "d2_v2",
            true,
            "Platform rewrite finished.",
        ))
        .await
        .expect("append");
    assert_eq!(
        docs_found(&store, everyone(words(&["budget"]))).await,
        ids(&["d1", "d4"])
    );
    assert_eq!(
        docs_found(&store, everyone(words(&["rewrite"]))).await,
        ids(&["d2"])
    );
    store
        .write_version(version_write(
            "d2",
            "d2_v2",
            1,
            "d2_v2",
            false,
            "Completely different now.",
        ))
        .await
        .expect("replace");
    assert!(
        docs_found(&store, everyone(words(&["rewrite"])))
            .await
            .is_empty()
    );
    assert_eq!(
        docs_found(&store, everyone(words(&["completely", "roadmap"]))).await,
        ids(&["d2"])
    );

    // A new title replaces the old one; the text stays found.
    store
        .update_review(ReviewUpdate {
            review_id: "d1".to_string(),
            at: T0 + 60,
            title: Some("Annual forecast".to_string()),
            ..ReviewUpdate::default()
        })
        .await
        .expect("rename");
    assert!(
        docs_found(&store, everyone(words(&["quarterly"])))
            .await
            .is_empty()
    );
    assert_eq!(
        docs_found(&store, everyone(words(&["forecast"]))).await,
        ids(&["d1"])
    );
    assert_eq!(
        docs_found(&store, everyone(words(&["marketing"]))).await,
        ids(&["d1"])
    );
}

/// Equal matches come most recently updated first; `offset` and `limit` page through them.
pub async fn check_search_reviews_ranking_and_paging(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    for (id, at) in [("e2", 2), ("e4", 4), ("e1", 1), ("e3", 3)] {
        let mut new = new_review(id, "usr_alice", T0 + at);
        new.review.title = "Identical title".to_string();
        new.search_text = "the same words here".to_string();
        store.create_review(new).await.expect("create");
    }
    let same = || review_search(all_view(), words(&["identical"]));
    let order = |hits: Vec<ReviewHit>| {
        hits.into_iter()
            .map(|h| h.summary.review.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        order(doc_hits(&store, same()).await),
        vec!["e4", "e3", "e2", "e1"]
    );
    // Touching e1 makes it the most recently updated.
    store
        .update_review(ReviewUpdate {
            review_id: "e1".to_string(),
            at: T0 + 10,
            ..ReviewUpdate::default()
        })
        .await
        .expect("touch");
    let all = order(doc_hits(&store, same()).await);
    assert_eq!(all, vec!["e1", "e4", "e3", "e2"]);
    let mut paged = Vec::new();
    for page in 0..3 {
        let mut search = same();
        search.limit = 3;
        search.offset = page * 3;
        paged.extend(order(doc_hits(&store, search).await));
    }
    assert_eq!(paged, all);
    let mut middle = same();
    middle.offset = 1;
    middle.limit = 2;
    assert_eq!(order(doc_hits(&store, middle).await), vec!["e4", "e3"]);

    // The same length, the word three times against once.
    let mut strong = new_review("strong", "usr_alice", T0);
    strong.review.title = "Notes".to_string();
    strong.search_text = "walnut walnut walnut harvest".to_string();
    let mut weak = new_review("weak", "usr_alice", T0 + 100);
    weak.review.title = "Notes".to_string();
    weak.search_text = "walnut harvest other words".to_string();
    store.create_review(strong).await.expect("create");
    store.create_review(weak).await.expect("create");
    assert_eq!(
        order(doc_hits(&store, review_search(all_view(), words(&["walnut"]))).await),
        vec!["strong", "weak"]
    );
}

/// Documents created through the store always have their text, so none waits for the backfill,
/// and `set_search_text` (for documents older than search) never overwrites a text a create or
/// version write set, whichever version it names; a gone document is no error.
pub async fn check_search_text(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let mut new = new_review("rev", "usr_alice", T0);
    new.review.title = "Tropical fruit".to_string();
    new.search_text = "banana text".to_string();
    store.create_review(new).await.expect("create");
    review(&store, "rev_other", "usr_alice", T0).await;
    assert!(
        store
            .reviews_without_search_text(10)
            .await
            .expect("pending")
            .is_empty()
    );
    let docs = |word: &'static str| {
        let store = Arc::clone(&store);
        async move { docs_found(&store, review_search(all_view(), words(&[word]))).await }
    };
    let just_rev = vec!["rev".to_string()];

    store
        .set_search_text("rev", "rev_v1", "kumquat text".to_string())
        .await
        .expect("set");
    assert!(docs("kumquat").await.is_empty(), "a set text is kept");
    assert_eq!(docs("banana").await, just_rev);
    assert_eq!(docs("tropical").await, just_rev, "the title stays");

    store
        .write_version(version_write(
            "rev",
            "rev_v1",
            0,
            "rev_v2",
            true,
            "durian text",
        ))
        .await
        .expect("append");
    for (version, text) in [("rev_v1", "stale text"), ("rev_v2", "mangosteen")] {
        store
            .set_search_text("rev", version, text.to_string())
            .await
            .expect("set");
    }
    assert!(docs("stale").await.is_empty());
    assert!(docs("mangosteen").await.is_empty());
    assert_eq!(
        docs("durian").await,
        just_rev,
        "the version write's text stays"
    );
    assert!(
        docs("banana").await.is_empty(),
        "the new version replaced the old text"
    );
    assert_eq!(
        docs("body").await,
        vec!["rev_other".to_string()],
        "other documents keep their text"
    );

    store
        .set_search_text("rev_missing", "rev_missing_v1", "ghost".to_string())
        .await
        .expect("a gone document is no error");
    assert!(docs("ghost").await.is_empty());
    assert!(
        store
            .reviews_without_search_text(10)
            .await
            .expect("pending")
            .is_empty()
    );
}
