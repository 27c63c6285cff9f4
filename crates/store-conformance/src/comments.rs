//! Checks for `write_comments` (the compare-and-swap and what it writes), `comment_thread` and
//! `live_comments`.

use std::sync::Arc;

use docreview_core::model::{Category, CommentStatus, RunStatus};
use docreview_core::store::{CommentsWrite, Store};

use crate::fixtures::{
    T0, anchor, assert_conflict, assert_not_found, comment, comments_write, event, head, message,
    review, run, sorted_by, user,
};

/// A write at the current revision answers `expected + 1` and raises the revision and
/// `change_seq` by one and sets `updated_at`; a write at any other revision answers
/// `RevisionConflict { current }` and writes nothing at all; a missing document is `NotFound`.
pub async fn check_write_comments_cas(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let before = head(&store, "rev").await.review;

    let first = comment("rev", "c1", "usr_alice", T0 + 10);
    let revision = store
        .write_comments("rev", comments_write(0, T0 + 10, vec![first.clone()]))
        .await
        .expect("write at the current revision");
    assert_eq!(revision, 1);
    let after = head(&store, "rev").await.review;
    assert_eq!(after.comments_revision, 1);
    assert_eq!(after.change_seq, before.change_seq + 1);
    assert_eq!(after.updated_at, T0 + 10);
    assert_eq!(after.structure_revision, before.structure_revision);

    // A stale write carrying one of everything.
    let stale_comment = comment("rev", "c2", "usr_alice", T0 + 20);
    let stale = CommentsWrite {
        expected_revision: 0,
        at: T0 + 20,
        comments: vec![stale_comment.clone(), {
            let mut edited = first.clone();
            edited.body = "overwritten".to_string();
            edited
        }],
        messages: vec![message(&first, "m1", "usr_alice", T0 + 20)],
        events: vec![event("c1", 1, CommentStatus::Closed, "usr_alice", T0 + 20)],
        runs: vec![run("rev", "run1", "usr_alice", T0 + 20)],
        on_latest_version: None,
        in_running_run: None,
        even_if_finalized: false,
        on_live_comment: None,
        unchanged_thread: None,
        outbox: Vec::new(),
    };
    assert_conflict(store.write_comments("rev", stale.clone()).await, 1);
    let mut ahead = stale;
    ahead.expected_revision = 5;
    assert_conflict(store.write_comments("rev", ahead).await, 1);

    let unchanged = head(&store, "rev").await.review;
    assert_eq!(
        unchanged, after,
        "a conflict changes nothing on the document"
    );
    let state = store
        .review_state("rev")
        .await
        .expect("state")
        .expect("exists");
    assert_eq!(state.comments, vec![first], "a conflict writes no comment");
    assert!(state.messages.is_empty() && state.events.is_empty() && state.runs.is_empty());
    assert!(store.run("rev", "run1").await.expect("run").is_none());

    assert_not_found(
        store
            .write_comments("rev_missing", comments_write(0, T0, vec![]))
            .await,
    );
    // An empty write is still a change: it takes a revision.
    assert_eq!(
        store
            .write_comments("rev", comments_write(1, T0 + 30, vec![]))
            .await
            .expect("empty write"),
        2
    );
}

/// Comments, replies and runs are inserted or updated in place; status events are appended;
/// `review_state` and `comment_thread` show the result, and the state's users include every
/// author and event actor.
pub async fn check_write_comments_upserts(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let bob = user(&store, "usr_bob").await;
    let carol = user(&store, "usr_carol").await;
    review(&store, "rev", "usr_alice", T0).await;
    let seq0 = head(&store, "rev").await.review.change_seq;

    let c1 = comment("rev", "c1", "usr_bob", T0 + 10);
    let mut m1 = message(&c1, "m1", "usr_carol", T0 + 11);
    m1.run_id = Some("run1".to_string());
    let r1 = run("rev", "run1", "usr_bob", T0 + 9);
    let e1 = event("c1", 1, CommentStatus::Closed, "usr_carol", T0 + 12);
    let write = CommentsWrite {
        expected_revision: 0,
        on_latest_version: None,
        in_running_run: None,
        even_if_finalized: false,
        on_live_comment: None,
        unchanged_thread: None,
        outbox: Vec::new(),
        at: T0 + 12,
        comments: vec![c1.clone()],
        messages: vec![m1.clone()],
        events: vec![e1.clone()],
        runs: vec![r1.clone()],
    };
    assert_eq!(store.write_comments("rev", write).await.expect("write"), 1);
    let thread = store
        .comment_thread("rev", "c1")
        .await
        .expect("thread")
        .expect("thread exists");
    assert_eq!(thread.comment, c1);
    assert_eq!(thread.messages, vec![m1.clone()]);
    assert_eq!(thread.events, vec![e1.clone()]);
    assert_eq!(
        store.run("rev", "run1").await.expect("run"),
        Some(r1.clone())
    );

    // Replace: every field a later write may change.
    let mut c1b = c1.clone();
    c1b.category = Category::Revise;
    c1b.status = CommentStatus::Closed;
    c1b.body = "edited body".to_string();
    c1b.anchor = anchor("rev_v1", "other quote");
    c1b.edited_at = Some(T0 + 20);
    // The write changes its thread: the store raises the thread's revision (whatever the
    // record written holds).
    c1b.thread_revision += 1;
    let mut m1b = m1.clone();
    m1b.body = "edited reply".to_string();
    m1b.edited_at = Some(T0 + 21);
    let mut r1b = r1.clone();
    r1b.status = RunStatus::Completed;
    r1b.summary = Some("3 findings".to_string());
    r1b.completed_at = Some(T0 + 22);
    let e2 = event("c1", 2, CommentStatus::Open, "usr_bob", T0 + 22);
    let m2 = message(&c1, "m2", "usr_bob", T0 + 23);
    let write = CommentsWrite {
        expected_revision: 1,
        on_latest_version: None,
        in_running_run: None,
        even_if_finalized: false,
        on_live_comment: None,
        unchanged_thread: None,
        outbox: Vec::new(),
        at: T0 + 23,
        comments: vec![c1b.clone()],
        messages: vec![m1b.clone(), m2.clone()],
        events: vec![e2.clone()],
        runs: vec![r1b.clone()],
    };
    assert_eq!(store.write_comments("rev", write).await.expect("write"), 2);

    let state = store
        .review_state("rev")
        .await
        .expect("state")
        .expect("exists");
    assert_eq!(state.head.review.comments_revision, 2);
    assert_eq!(state.head.review.change_seq, seq0 + 2);
    assert_eq!(state.head.review.updated_at, T0 + 23);
    assert_eq!(state.comments, vec![c1b.clone()]);
    assert_eq!(
        sorted_by(state.messages, |m| m.id.clone()),
        vec![m1b.clone(), m2.clone()]
    );
    assert_eq!(
        sorted_by(state.events, |e| e.seq),
        vec![e1.clone(), e2.clone()]
    );
    assert_eq!(state.runs, vec![r1b.clone()]);
    let users = sorted_by(state.users, |u| u.id.clone());
    assert_eq!(
        users.iter().map(|u| u.id.as_str()).collect::<Vec<_>>(),
        vec!["usr_alice", "usr_bob", "usr_carol"],
        "owner, authors and event actors"
    );
    assert!(users.contains(&bob.user) && users.contains(&carol.user));

    let thread = store
        .comment_thread("rev", "c1")
        .await
        .expect("thread")
        .expect("exists");
    assert_eq!(thread.comment, c1b);
    assert_eq!(sorted_by(thread.messages, |m| m.id.clone()), vec![m1b, m2]);
    assert_eq!(thread.events, vec![e1, e2], "events in seq order");

    // Deleting is an update too; the record stays, marked.
    let mut c1c = c1b.clone();
    c1c.deleted_at = Some(T0 + 30);
    c1c.thread_revision += 1;
    store
        .write_comments("rev", comments_write(2, T0 + 30, vec![c1c.clone()]))
        .await
        .expect("delete");
    assert!(store.live_comments("rev").await.expect("live").is_empty());
    let state = store
        .review_state("rev")
        .await
        .expect("state")
        .expect("exists");
    assert_eq!(state.comments, vec![c1c.clone()]);
    let thread = store
        .comment_thread("rev", "c1")
        .await
        .expect("thread")
        .expect("exists");
    assert_eq!(thread.comment, c1c);
}

/// `comment_thread` answers only a comment of the given document, with only its own replies;
/// `live_comments` answers the document's comments that are not deleted.
pub async fn check_comment_thread_and_live_comments(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev_a", "usr_alice", T0).await;
    review(&store, "rev_b", "usr_alice", T0).await;
    let a1 = comment("rev_a", "a1", "usr_alice", T0 + 1);
    let a2 = comment("rev_a", "a2", "usr_alice", T0 + 2);
    let mut a3 = comment("rev_a", "a3", "usr_alice", T0 + 3);
    a3.deleted_at = Some(T0 + 4);
    let b1 = comment("rev_b", "b1", "usr_alice", T0 + 1);
    let write = CommentsWrite {
        messages: vec![
            message(&a1, "a1_m1", "usr_alice", T0 + 5),
            message(&a2, "a2_m1", "usr_alice", T0 + 6),
        ],
        ..comments_write(0, T0 + 6, vec![a1.clone(), a2.clone(), a3.clone()])
    };
    store.write_comments("rev_a", write).await.expect("write a");
    store
        .write_comments("rev_b", comments_write(0, T0 + 6, vec![b1.clone()]))
        .await
        .expect("write b");

    let live = sorted_by(store.live_comments("rev_a").await.expect("live"), |c| {
        c.id.clone()
    });
    assert_eq!(live, vec![a1.clone(), a2.clone()]);
    assert_eq!(store.live_comments("rev_b").await.expect("live"), vec![b1]);
    assert!(
        store
            .live_comments("rev_missing")
            .await
            .expect("live")
            .is_empty()
    );

    let thread = store
        .comment_thread("rev_a", "a1")
        .await
        .expect("thread")
        .expect("exists");
    assert_eq!(thread.comment, a1);
    assert_eq!(
        thread
            .messages
            .iter()
            .map(|m| m.id.as_str())
            .collect::<Vec<_>>(),
        vec!["a1_m1"]
    );
    assert!(thread.events.is_empty());
    let deleted = store
        .comment_thread("rev_a", "a3")
        .await
        .expect("thread")
        .expect("exists");
    assert_eq!(
        deleted.comment, a3,
        "a deleted comment still has its thread"
    );
    assert!(
        store
            .comment_thread("rev_b", "a1")
            .await
            .expect("thread")
            .is_none()
    );
    assert!(
        store
            .comment_thread("rev_a", "zz")
            .await
            .expect("thread")
            .is_none()
    );
}
