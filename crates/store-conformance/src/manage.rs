//! Checks for managing a document: `update_review` and `delete_review`.

use std::sync::Arc;

use docreview_core::model::{AccessMode, CommentStatus, GrantRole, ReviewRecord};
use docreview_core::store::{
    CommentSearch, CommentsWrite, ReviewSearch, ReviewUpdate, SearchQuery, SearchTerm, Store,
};

use crate::fixtures::{
    T0, all_view, assert_not_found, comment, event, grant, head, listed, message, query, review,
    run, user, version,
};

fn update(review_id: &str, at: i64) -> ReviewUpdate {
    ReviewUpdate {
        review_id: review_id.to_string(),
        at,
        ..ReviewUpdate::default()
    }
}

/// Each field changes alone (the others stay), every update raises `change_seq` by one and sets
/// `updated_at` without touching the revisions, `grants` replaces the whole list, and a missing
/// document (or an unknown new owner) is `NotFound`.
pub async fn check_update_review(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    user(&store, "usr_bob").await;
    let mut new = crate::fixtures::new_review("rev", "usr_alice", T0);
    new.review.tags = vec!["draft".to_string()];
    new.grants = vec![
        grant("carol@example.com", GrantRole::Viewer),
        grant("dan@example.com", GrantRole::Editor),
    ];
    store.create_review(new.clone()).await.expect("create");
    review(&store, "rev_other", "usr_alice", T0).await;
    let other = head(&store, "rev_other").await;

    let mut expected: ReviewRecord = new.review.clone();
    let mut step = 0;
    let mut apply = |change: fn(&mut ReviewUpdate, &mut ReviewRecord)| {
        step += 1;
        let at = T0 + 100 * step;
        let mut u = update("rev", at);
        change(&mut u, &mut expected);
        expected.change_seq += 1;
        expected.updated_at = at;
        (u, expected.clone())
    };
    let changes: Vec<(ReviewUpdate, ReviewRecord)> = vec![
        apply(|u, r| {
            u.title = Some("Renamed «plan»".to_string());
            r.title = "Renamed «plan»".to_string();
        }),
        apply(|u, r| {
            u.tags = Some(vec!["final".to_string(), "q4".to_string()]);
            r.tags = vec!["final".to_string(), "q4".to_string()];
        }),
        apply(|u, r| {
            u.archived = Some(true);
            r.archived = true;
        }),
        apply(|u, r| {
            u.access_mode = Some(AccessMode::Restricted);
            r.access_mode = AccessMode::Restricted;
        }),
        apply(|u, r| {
            u.owner_id = Some("usr_bob".to_string());
            r.owner_id = "usr_bob".to_string();
        }),
        apply(|u, r| {
            u.tags = Some(Vec::new());
            r.tags = Vec::new();
        }),
        // Nothing but the time: still a change.
        apply(|_, _| {}),
    ];
    for (u, after) in changes {
        let label = format!("{u:?}");
        store.update_review(u).await.expect("update");
        let got = head(&store, "rev").await;
        assert_eq!(got.review, after, "after {label}");
        assert_eq!(
            got.grants,
            vec![
                grant("carol@example.com", GrantRole::Viewer),
                grant("dan@example.com", GrantRole::Editor)
            ],
            "grants stay unless given"
        );
    }

    // Grants replace the list as a whole, together with other fields.
    let mut u = update("rev", T0 + 5_000);
    u.grants = Some(vec![
        grant("erin@example.com", GrantRole::Editor),
        grant("carol@example.com", GrantRole::Editor),
    ]);
    u.access_mode = Some(AccessMode::Link);
    u.archived = Some(false);
    store.update_review(u).await.expect("update");
    let got = head(&store, "rev").await;
    assert_eq!(
        got.grants,
        vec![
            grant("carol@example.com", GrantRole::Editor),
            grant("erin@example.com", GrantRole::Editor)
        ]
    );
    expected.access_mode = AccessMode::Link;
    expected.archived = false;
    expected.change_seq += 1;
    expected.updated_at = T0 + 5_000;
    assert_eq!(got.review, expected);
    let mut u = update("rev", T0 + 6_000);
    u.grants = Some(Vec::new());
    store.update_review(u).await.expect("update");
    assert!(head(&store, "rev").await.grants.is_empty());
    expected.change_seq += 1;
    expected.updated_at = T0 + 6_000;

    let state = store
        .review_state("rev")
        .await
        .expect("state")
        .expect("exists");
    assert!(
        state.users.iter().any(|u| u.id == "usr_bob"),
        "the new owner is among the state's users"
    );

    assert_not_found(store.update_review(update("rev_missing", T0)).await);
    let mut unknown_owner = update("rev", T0 + 7_000);
    unknown_owner.owner_id = Some("usr_nobody".to_string());
    unknown_owner.title = Some("Must not stick".to_string());
    assert_not_found(store.update_review(unknown_owner).await);
    assert_eq!(
        head(&store, "rev").await.review,
        expected,
        "a failed update writes nothing"
    );
    assert_eq!(
        head(&store, "rev_other").await.review,
        other.review,
        "other documents are untouched"
    );
}

/// Deleting a document removes it with everything it holds (versions, comments, replies, status
/// events, runs, sharing, search entries); the id is free again afterwards; other documents are
/// untouched; a missing document is `NotFound`.
pub async fn check_delete_review(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let mut doomed = crate::fixtures::new_review("rev", "usr_alice", T0);
    doomed.review.title = "Obsolete zanzibar plan".to_string();
    doomed.search_text = "zanzibar text".to_string();
    doomed.grants = vec![grant("bob@example.com", GrantRole::Editor)];
    store.create_review(doomed.clone()).await.expect("create");
    let mut kept = crate::fixtures::new_review("rev_kept", "usr_alice", T0);
    kept.review.title = "Kept zanzibar plan".to_string();
    store.create_review(kept).await.expect("create");
    for id in ["rev", "rev_kept"] {
        let mut c = comment(id, &format!("{id}_c1"), "usr_alice", T0 + 1);
        c.body = "zanzibar comment".to_string();
        let mut m = message(&c, &format!("{id}_m1"), "usr_alice", T0 + 2);
        m.body = "zanzibar reply".to_string();
        let write = CommentsWrite {
            expected_revision: 0,
            on_latest_version: None,
            in_running_run: None,
            even_if_finalized: false,
            on_live_comment: None,
            unchanged_thread: None,
            outbox: Vec::new(),
            at: T0 + 2,
            comments: vec![c.clone()],
            messages: vec![m],
            events: vec![event(&c.id, 1, CommentStatus::Closed, "usr_alice", T0 + 2)],
            runs: vec![run(id, &format!("{id}_run"), "usr_alice", T0 + 1)],
        };
        store.write_comments(id, write).await.expect("write");
    }
    let v2 = version("rev", "rev_v2", T0 + 3);
    store
        .write_version(docreview_core::store::VersionWrite {
            review_id: "rev".to_string(),
            expected_latest_version_id: "rev_v1".to_string(),
            expected_comments_revision: 1,
            version: v2,
            html: b"<p>two</p>".to_vec(),
            append: true,
            anchors: Vec::new(),
            structure_changed: false,
            at: T0 + 3,
            search_text: "zanzibar second text".to_string(),
            outbox: Vec::new(),
            closed: Vec::new(),
        })
        .await
        .expect("version");

    store
        .delete_review("rev", Vec::new())
        .await
        .expect("delete");

    assert!(store.review_head("rev").await.expect("head").is_none());
    assert!(store.review_state("rev").await.expect("state").is_none());
    assert!(store.versions("rev").await.expect("versions").is_empty());
    assert!(store.version("rev", "rev_v1").await.expect("v").is_none());
    assert!(
        store
            .version_html("rev", "rev_v2")
            .await
            .expect("v")
            .is_none()
    );
    assert!(
        store
            .comment_thread("rev", "rev_c1")
            .await
            .expect("thread")
            .is_none()
    );
    assert!(store.live_comments("rev").await.expect("live").is_empty());
    assert!(store.run("rev", "rev_run").await.expect("run").is_none());
    let (comments, messages) = store.run_items("rev", "rev_run").await.expect("items");
    assert!(comments.is_empty() && messages.is_empty());
    assert_eq!(
        listed(&store, query(all_view())).await,
        vec!["rev_kept".to_string()]
    );
    let zanzibar = SearchQuery {
        terms: vec![SearchTerm::Prefix("zanzibar".to_string())],
    };
    let hits = store
        .search_comments(CommentSearch {
            visibility: all_view(),
            query: zanzibar.clone(),
            status: None,
            category: None,
            review_id: None,
            assignee_id: None,
            offset: 0,
            limit: 50,
        })
        .await
        .expect("search");
    let mut found: Vec<(String, Option<String>)> = hits
        .into_iter()
        .map(|h| (h.comment_id, h.message_id))
        .collect();
    found.sort();
    assert_eq!(
        found,
        vec![
            ("rev_kept_c1".to_string(), None),
            ("rev_kept_c1".to_string(), Some("rev_kept_m1".to_string())),
        ],
        "the deleted document's comments and replies are out of the search"
    );
    let docs = store
        .search_reviews(ReviewSearch {
            visibility: all_view(),
            query: zanzibar,
            offset: 0,
            limit: 50,
        })
        .await
        .expect("search");
    assert_eq!(
        docs.into_iter()
            .map(|h| h.summary.review.id)
            .collect::<Vec<_>>(),
        vec!["rev_kept".to_string()],
        "the deleted document is out of the search"
    );
    assert!(
        store
            .comment_thread("rev_kept", "rev_kept_c1")
            .await
            .expect("thread")
            .is_some(),
        "other documents keep theirs"
    );
    assert!(
        store
            .run("rev_kept", "rev_kept_run")
            .await
            .expect("run")
            .is_some()
    );

    assert_not_found(store.delete_review("rev", Vec::new()).await);
    assert_not_found(store.delete_review("rev_missing", Vec::new()).await);

    // Nothing is left behind: the same ids (document, versions, comments, runs) can be used again.
    let again = review(&store, "rev", "usr_alice", T0 + 10).await;
    assert!(
        head(&store, "rev").await.grants.is_empty(),
        "no sharing survives"
    );
    assert_eq!(head(&store, "rev").await.review, again.review);
    store
        .write_comments(
            "rev",
            CommentsWrite {
                expected_revision: 0,
                at: T0 + 11,
                comments: vec![comment("rev", "rev_c1", "usr_alice", T0 + 11)],
                runs: vec![run("rev", "rev_run", "usr_alice", T0 + 11)],
                ..CommentsWrite::default()
            },
        )
        .await
        .expect("write");
    let thread = store
        .comment_thread("rev", "rev_c1")
        .await
        .expect("thread")
        .expect("exists");
    assert!(
        thread.messages.is_empty() && thread.events.is_empty(),
        "no reply or status event survives"
    );
}
