//! Concurrency checks: the compare-and-swap holds under real contention, so concurrent writers
//! each get a distinct revision or a conflict, and the revision never skips or repeats.

use std::sync::Arc;

use docreview_core::model::{CommentRecord, CommentStatus, Millis};
use docreview_core::store::{CommentsWrite, Store, StoreError, VersionWrite};

use crate::fixtures::{T0, comment, comments_write, event, head, message, review, user, version};

const WRITERS: usize = 16;

/// A count of writes as the comments revision it leads to.
fn revision(count: usize) -> i64 {
    i64::try_from(count).expect("a test's count of writes fits an i64")
}

/// Sixteen writes expecting the same revision, at once: exactly one succeeds, every other one
/// answers `RevisionConflict` with the winner's revision, and only the winner's comment exists.
pub async fn check_concurrent_comment_writes_one_wins(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    for round in 0..3i64 {
        let before = head(&store, "rev").await.review;
        let barrier = Arc::new(tokio::sync::Barrier::new(WRITERS));
        let tasks: Vec<_> = (0..WRITERS)
            .map(|i| {
                let store = Arc::clone(&store);
                let barrier = Arc::clone(&barrier);
                let expected = before.comments_revision;
                tokio::spawn(async move {
                    let id = format!("c_{round}_{i}");
                    let at: Millis = T0 + 1_000 * (round + 1);
                    barrier.wait().await;
                    let outcome = store
                        .write_comments(
                            "rev",
                            comments_write(
                                expected,
                                at,
                                vec![comment("rev", &id, "usr_alice", at)],
                            ),
                        )
                        .await;
                    (id, outcome)
                })
            })
            .collect();
        let mut winners = Vec::new();
        for task in tasks {
            let (id, outcome) = task.await.expect("writer task");
            match outcome {
                Ok(revision) => {
                    assert_eq!(revision, before.comments_revision + 1);
                    winners.push(id);
                }
                Err(StoreError::RevisionConflict { current }) => {
                    assert_eq!(
                        current,
                        before.comments_revision + 1,
                        "conflicts name the winner's revision"
                    );
                }
                Err(other) => panic!("unexpected error under contention: {other:?}"),
            }
        }
        assert_eq!(
            winners.len(),
            1,
            "round {round}: exactly one writer wins, got {winners:?}"
        );
        let after = head(&store, "rev").await.review;
        assert_eq!(after.comments_revision, before.comments_revision + 1);
        assert_eq!(after.change_seq, before.change_seq + 1);
        let state = store
            .review_state("rev")
            .await
            .expect("state")
            .expect("exists");
        let round_comments: Vec<&String> = state
            .comments
            .iter()
            .map(|c| &c.id)
            .filter(|id| id.starts_with(&format!("c_{round}_")))
            .collect();
        assert_eq!(
            round_comments,
            vec![&winners[0]],
            "only the winner's comment is stored"
        );
    }
}

/// Writers that re-read and retry on conflict (as the core does) all get through, each with its
/// own revision: together they take every revision from 1 to N exactly once.
pub async fn check_concurrent_retrying_writers_get_distinct_revisions(store: Arc<dyn Store>) {
    const RETRYING: usize = 8;
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let tasks: Vec<_> = (0..RETRYING)
        .map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let id = format!("c_{i}");
                for _ in 0..1_000 {
                    let current = head(&store, "rev").await.review.comments_revision;
                    let at = T0 + 1 + i64::try_from(i).expect("small");
                    let write =
                        comments_write(current, at, vec![comment("rev", &id, "usr_alice", at)]);
                    match store.write_comments("rev", write).await {
                        Ok(revision) => return revision,
                        Err(StoreError::RevisionConflict { .. }) => tokio::task::yield_now().await,
                        Err(other) => panic!("unexpected error: {other:?}"),
                    }
                }
                panic!("writer {i} never got through");
            })
        })
        .collect();
    let mut revisions = Vec::new();
    for task in tasks {
        revisions.push(task.await.expect("writer task"));
    }
    revisions.sort_unstable();
    let expected: Vec<i64> = (1..=i64::try_from(RETRYING).expect("small")).collect();
    assert_eq!(revisions, expected, "no revision skipped or repeated");
    let state = store
        .review_state("rev")
        .await
        .expect("state")
        .expect("exists");
    assert_eq!(
        state.head.review.comments_revision,
        revision(expected.len())
    );
    assert_eq!(state.comments.len(), RETRYING);
}

/// A new version and a comment write expecting the same revision, at once: exactly one wins,
/// the other answers `RevisionConflict`.
pub async fn check_concurrent_version_and_comment_writes(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    for round in 0..5i64 {
        let before = head(&store, "rev").await.review;
        let at = T0 + 100 * (round + 1);
        let version_store = Arc::clone(&store);
        let comment_store = Arc::clone(&store);
        let write = VersionWrite {
            review_id: "rev".to_string(),
            expected_latest_version_id: before.latest_version_id.clone(),
            expected_comments_revision: before.comments_revision,
            version: version("rev", &format!("rev_v{}", round + 2), at),
            html: b"<p>new</p>".to_vec(),
            append: true,
            anchors: Vec::new(),
            structure_changed: false,
            at,
            search_text: String::new(),
            outbox: Vec::new(),
            closed: Vec::new(),
        };
        let expected = before.comments_revision;
        let versioned = tokio::spawn(async move { version_store.write_version(write).await });
        let commented = tokio::spawn(async move {
            comment_store
                .write_comments(
                    "rev",
                    comments_write(
                        expected,
                        at,
                        vec![comment("rev", &format!("c{round}"), "usr_alice", at)],
                    ),
                )
                .await
        });
        let versioned = versioned.await.expect("task");
        let commented = commented.await.expect("task");
        let wins = usize::from(versioned.is_ok()) + usize::from(commented.is_ok());
        assert_eq!(wins, 1, "round {round}: {versioned:?} / {commented:?}");
        let loser_is_conflict = matches!(versioned, Err(StoreError::RevisionConflict { .. }))
            || matches!(commented, Err(StoreError::RevisionConflict { .. }));
        assert!(
            loser_is_conflict,
            "round {round}: {versioned:?} / {commented:?}"
        );
        let after = head(&store, "rev").await.review;
        assert_eq!(after.comments_revision, before.comments_revision + 1);
        assert_eq!(after.change_seq, before.change_seq + 1);
    }
}

/// New comments guarded by the latest version, not a revision: sixteen at once all succeed,
/// with the distinct revisions 1..=16, whatever revision each writer saw; a writer whose
/// version is no longer the latest conflicts and writes nothing.
pub async fn check_concurrent_writers_on_the_latest_version_all_succeed(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let created = review(&store, "rev", "usr_alice", T0).await;
    let latest = created.version.id.clone();
    let barrier = Arc::new(tokio::sync::Barrier::new(WRITERS));
    let tasks: Vec<_> = (0..WRITERS)
        .map(|i| {
            let store = Arc::clone(&store);
            let barrier = Arc::clone(&barrier);
            let latest = latest.clone();
            tokio::spawn(async move {
                let at: Millis = T0 + 1_000;
                let mut write = comments_write(
                    0,
                    at,
                    vec![comment("rev", &format!("c_{i}"), "usr_alice", at)],
                );
                write.on_latest_version = Some(latest);
                barrier.wait().await;
                store.write_comments("rev", write).await
            })
        })
        .collect();
    let mut revisions = Vec::new();
    for task in tasks {
        revisions.push(
            task.await
                .expect("writer task")
                .expect("no conflict on the latest version"),
        );
    }
    revisions.sort_unstable();
    assert_eq!(revisions, (1..=revision(WRITERS)).collect::<Vec<_>>());
    let after = head(&store, "rev").await.review;
    assert_eq!(after.comments_revision, revision(WRITERS));
    assert_eq!(
        store.live_comments("rev").await.expect("comments").len(),
        WRITERS
    );

    let mut stale = comments_write(
        revision(WRITERS),
        T0 + 2_000,
        vec![comment("rev", "c_stale", "usr_alice", T0 + 2_000)],
    );
    stale.on_latest_version = Some("ver_not_the_latest".to_string());
    match store.write_comments("rev", stale).await {
        Err(StoreError::RevisionConflict { current }) => assert_eq!(current, revision(WRITERS)),
        other => panic!("a write on a version that is not the latest must conflict: {other:?}"),
    }
    assert_eq!(
        head(&store, "rev").await.review,
        after,
        "the conflict changed nothing"
    );
}

/// A run's comments are guarded by the run still running, not by a revision: sixteen at once
/// all succeed; once the run is finished, a write in it fails and writes nothing.
pub async fn check_run_comments_need_only_a_running_run(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let created = review(&store, "rev", "usr_alice", T0).await;
    let latest = created.version.id.clone();
    let mut started = crate::fixtures::run("rev", "run_1", "usr_alice", T0);
    started.version_id = latest.clone();
    store.insert_run(started.clone()).await.expect("run");
    let in_run = |i: usize, latest: String| {
        let at: Millis = T0 + 1_000;
        let mut item = comment("rev", &format!("c_{i}"), "usr_alice", at);
        item.run_id = Some("run_1".to_string());
        let mut write = comments_write(0, at, vec![item]);
        write.on_latest_version = Some(latest);
        write.in_running_run = Some("run_1".to_string());
        write
    };
    let barrier = Arc::new(tokio::sync::Barrier::new(WRITERS));
    let tasks: Vec<_> = (0..WRITERS)
        .map(|i| {
            let store = Arc::clone(&store);
            let barrier = Arc::clone(&barrier);
            let write = in_run(i, latest.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                store.write_comments("rev", write).await
            })
        })
        .collect();
    for task in tasks {
        task.await
            .expect("writer task")
            .expect("no conflict while the run runs");
    }

    let revision = head(&store, "rev").await.review.comments_revision;
    let mut finished = started;
    finished.status = docreview_core::model::RunStatus::Completed;
    finished.completed_at = Some(T0 + 2_000);
    let mut finish = comments_write(revision, T0 + 2_000, vec![]);
    finish.runs = vec![finished];
    store.write_comments("rev", finish).await.expect("finish");

    let before = head(&store, "rev").await.review;
    match store.write_comments("rev", in_run(99, latest)).await {
        Err(StoreError::RunNotRunning) => {}
        other => panic!("a write in a finished run must fail: {other:?}"),
    }
    assert_eq!(head(&store, "rev").await.review, before, "nothing written");
    assert_eq!(
        store.live_comments("rev").await.expect("comments").len(),
        WRITERS
    );
}

/// A reply guarded by its comment being live, not by a revision: sixteen at once all succeed;
/// once the comment is deleted, a reply to it fails and writes nothing.
pub async fn check_replies_need_only_a_live_comment(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let created = review(&store, "rev", "usr_alice", T0).await;
    let latest = created.version.id.clone();
    let hub = comment("rev", "c_hub", "usr_alice", T0);
    store
        .write_comments("rev", comments_write(0, T0, vec![hub.clone()]))
        .await
        .expect("comment");
    let reply = |i: usize| {
        let at: Millis = T0 + 1_000;
        let mut write = comments_write(0, at, vec![]);
        write.messages = vec![crate::fixtures::message(
            &hub,
            &format!("m_{i}"),
            "usr_alice",
            at,
        )];
        write.on_latest_version = Some(latest.clone());
        write.on_live_comment = Some(hub.id.clone());
        write
    };
    let barrier = Arc::new(tokio::sync::Barrier::new(WRITERS));
    let tasks: Vec<_> = (0..WRITERS)
        .map(|i| {
            let store = Arc::clone(&store);
            let barrier = Arc::clone(&barrier);
            let write = reply(i);
            tokio::spawn(async move {
                barrier.wait().await;
                store.write_comments("rev", write).await
            })
        })
        .collect();
    for task in tasks {
        task.await
            .expect("writer task")
            .expect("no conflict while the comment is live");
    }
    let revision = head(&store, "rev").await.review.comments_revision;
    assert_eq!(revision, 1 + i64::try_from(WRITERS).expect("writers"));

    let mut deleted = hub.clone();
    deleted.deleted_at = Some(T0 + 2_000);
    store
        .write_comments("rev", comments_write(revision, T0 + 2_000, vec![deleted]))
        .await
        .expect("delete");
    let before = head(&store, "rev").await.review;
    match store.write_comments("rev", reply(99)).await {
        Err(StoreError::NotFound) => {}
        other => panic!("a reply to a deleted comment must fail: {other:?}"),
    }
    assert_eq!(head(&store, "rev").await.review, before, "nothing written");
    let thread = store
        .comment_thread("rev", "c_hub")
        .await
        .expect("thread")
        .expect("kept");
    assert_eq!(thread.messages.len(), WRITERS);
}

/// A write to one comment guarded by its thread revision applies whatever the document's
/// revision, and fails (`RevisionConflict`, nothing written) once that thread changed.
pub async fn check_writes_guarded_by_a_thread_revision(store: Arc<dyn Store>) {
    use docreview_core::store::ThreadGuard;
    user(&store, "usr_alice").await;
    let created = review(&store, "rev", "usr_alice", T0).await;
    let latest = created.version.id.clone();
    let target = comment("rev", "c_target", "usr_alice", T0);
    let other = comment("rev", "c_other", "usr_alice", T0);
    store
        .write_comments(
            "rev",
            comments_write(0, T0, vec![target.clone(), other.clone()]),
        )
        .await
        .expect("comments");
    let read = thread_revision(&store, "c_target").await;
    assert_eq!(read, CommentRecord::NEW_THREAD_REVISION);
    let guarded = |body: &str| {
        let mut edited = target.clone();
        edited.body = body.to_string();
        let mut write = comments_write(0, T0 + 1_000, vec![edited]);
        write.on_latest_version = Some(latest.clone());
        write.unchanged_thread = Some(ThreadGuard {
            comment_id: "c_target".to_string(),
            thread_revision: read,
        });
        write
    };
    // Another comment changed: the revision moved, the guarded write still applies.
    let mut other_edited = other.clone();
    other_edited.body = "other edited".to_string();
    store
        .write_comments("rev", comments_write(1, T0 + 500, vec![other_edited]))
        .await
        .expect("edit the other comment");
    assert_eq!(
        thread_revision(&store, "c_target").await,
        read,
        "not this thread"
    );
    store
        .write_comments("rev", guarded("first"))
        .await
        .expect("the target is as read");
    // The target itself changed (by the write above): the same guard is now stale.
    let before = head(&store, "rev").await.review;
    match store.write_comments("rev", guarded("second")).await {
        Err(StoreError::RevisionConflict { current }) => {
            assert_eq!(current, before.comments_revision);
        }
        other => panic!("a stale thread revision must conflict: {other:?}"),
    }
    assert_eq!(head(&store, "rev").await.review, before, "nothing written");
    let thread = store
        .comment_thread("rev", "c_target")
        .await
        .expect("thread")
        .expect("kept");
    assert_eq!(thread.comment.body, "first");
}

/// A thread's revision rises by exactly one with each write that changes it (the comment, a
/// reply written or edited, a status event; several at once count once), and with nothing else.
pub async fn check_thread_revisions_rise_with_their_thread(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let target = comment("rev", "c_target", "usr_alice", T0);
    let other = comment("rev", "c_other", "usr_alice", T0);
    let mut revision = store
        .write_comments(
            "rev",
            comments_write(0, T0, vec![target.clone(), other.clone()]),
        )
        .await
        .expect("comments");
    let mut expected = CommentRecord::NEW_THREAD_REVISION;
    assert_eq!(thread_revision(&store, "c_target").await, expected);
    let reply = message(&target, "m_1", "usr_alice", T0 + 1);
    let mut steps: Vec<CommentsWrite> = Vec::new();
    steps.push(CommentsWrite {
        messages: vec![reply.clone()],
        ..CommentsWrite::default()
    });
    let mut edited_reply = reply.clone();
    edited_reply.body = "edited".to_string();
    edited_reply.edited_at = Some(T0 + 2);
    steps.push(CommentsWrite {
        messages: vec![edited_reply],
        ..CommentsWrite::default()
    });
    let mut closed = target.clone();
    closed.status = CommentStatus::Closed;
    steps.push(CommentsWrite {
        comments: vec![closed],
        events: vec![event(
            "c_target",
            1,
            CommentStatus::Closed,
            "usr_alice",
            T0 + 3,
        )],
        ..CommentsWrite::default()
    });
    for (n, step) in steps.into_iter().enumerate() {
        let write = CommentsWrite {
            expected_revision: revision,
            at: T0 + 10,
            ..step
        };
        revision = store.write_comments("rev", write).await.expect("write");
        expected += 1;
        assert_eq!(
            thread_revision(&store, "c_target").await,
            expected,
            "step {n} raises it by one"
        );
    }
    let mut other_edited = other;
    other_edited.body = "other edited".to_string();
    store
        .write_comments("rev", comments_write(revision, T0 + 20, vec![other_edited]))
        .await
        .expect("edit the other comment");
    assert_eq!(thread_revision(&store, "c_target").await, expected);
    assert_eq!(
        thread_revision(&store, "c_other").await,
        CommentRecord::NEW_THREAD_REVISION + 1
    );
}

async fn thread_revision(store: &Arc<dyn Store>, comment_id: &str) -> i64 {
    store
        .comment_thread("rev", comment_id)
        .await
        .expect("thread")
        .expect("exists")
        .comment
        .thread_revision
}
