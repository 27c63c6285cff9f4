//! Document search, and documents' search text.

use std::sync::Arc;

use docreview_core::model::{AccessMode, CommentStatus, GrantRole, Membership, ProjectRole};
use docreview_core::store::{MATCH_END, MATCH_START, ReviewHit, ReviewUpdate, Store};

use super::*;
use crate::fixtures::{
    T0, all_view, comment, grant, head, member, member_view, new_review, projects, review, user,
    write_items,
};

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
    let ids = |list: &[&str]| {
        list.iter()
            .map(std::string::ToString::to_string)
            .collect::<Vec<_>>()
    };

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
