//! Checks for runs: `insert_run`, `run`, `run_items` and `running_runs_before`.

use std::sync::Arc;

use docreview_core::model::{RunKind, RunStatus};
use docreview_core::store::{CommentsWrite, Store};

use crate::fixtures::{
    T0, assert_not_found, comment, comments_write, head, message, review, run, sorted_by, user,
};

/// `insert_run` stores the run and counts as a change of its document (`change_seq`,
/// `updated_at`) without touching the comments revision; it answers `NotFound` for a missing
/// document. `run_items` answers a run's comments and replies, deleted ones included;
/// `running_runs_before` answers runs still running that started strictly before the cutoff.
pub async fn check_runs(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    review(&store, "rev_other", "usr_alice", T0).await;
    let before = head(&store, "rev").await.review;

    assert_not_found(
        store
            .insert_run(run("rev_missing", "run0", "usr_alice", T0))
            .await,
    );
    assert!(
        store
            .run("rev_missing", "run0")
            .await
            .expect("run")
            .is_none()
    );

    let r1 = run("rev", "run1", "usr_alice", T0 + 5);
    store.insert_run(r1.clone()).await.expect("insert run");
    let after = head(&store, "rev").await.review;
    assert_eq!(after.change_seq, before.change_seq + 1);
    assert_eq!(after.updated_at, T0 + 5);
    assert_eq!(after.comments_revision, before.comments_revision);
    assert_eq!(
        store.run("rev", "run1").await.expect("run"),
        Some(r1.clone())
    );
    assert!(store.run("rev_other", "run1").await.expect("run").is_none());

    let mut r2 = run("rev_other", "run2", "usr_alice", T0 + 50);
    r2.kind = RunKind::Voice;
    r2.title = "dictation".to_string();
    store.insert_run(r2.clone()).await.expect("insert run");
    let mut r3 = run("rev", "run3", "usr_alice", T0 + 1);
    r3.status = RunStatus::Completed;
    r3.summary = Some("done".to_string());
    r3.completed_at = Some(T0 + 2);
    store.insert_run(r3.clone()).await.expect("insert run");
    assert_eq!(store.run("rev_other", "run2").await.expect("run"), Some(r2));
    assert_eq!(store.run("rev", "run3").await.expect("run"), Some(r3));

    let pairs = |list: &[(&str, &str)]| {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    };
    let running = |cutoff| {
        let store = Arc::clone(&store);
        async move {
            sorted_by(
                store
                    .running_runs_before(cutoff)
                    .await
                    .expect("running runs"),
                |p: &(String, String)| p.clone(),
            )
        }
    };
    assert!(running(T0 + 5).await.is_empty(), "the cutoff is exclusive");
    assert_eq!(running(T0 + 6).await, pairs(&[("rev", "run1")]));
    assert_eq!(
        running(T0 + 51).await,
        pairs(&[("rev", "run1"), ("rev_other", "run2")]),
        "completed runs are never listed"
    );

    // Items written in run1: one live and one deleted comment, one reply on a comment made
    // outside the run; a comment without run is not an item.
    let mut in_run = comment("rev", "c_run", "usr_alice", T0 + 6);
    in_run.run_id = Some("run1".to_string());
    let mut deleted = comment("rev", "c_run_deleted", "usr_alice", T0 + 7);
    deleted.run_id = Some("run1".to_string());
    deleted.deleted_at = Some(T0 + 8);
    let outside = comment("rev", "c_plain", "usr_alice", T0 + 6);
    let mut reply = message(&outside, "m_run", "usr_alice", T0 + 9);
    reply.run_id = Some("run1".to_string());
    let plain_reply = message(&outside, "m_plain", "usr_alice", T0 + 9);
    let write = CommentsWrite {
        messages: vec![reply.clone(), plain_reply],
        ..comments_write(0, T0 + 9, vec![in_run.clone(), deleted.clone(), outside])
    };
    store.write_comments("rev", write).await.expect("write");
    let (comments, messages) = store.run_items("rev", "run1").await.expect("run items");
    assert_eq!(sorted_by(comments, |c| c.id.clone()), vec![in_run, deleted]);
    assert_eq!(messages, vec![reply]);
    let (comments, messages) = store
        .run_items("rev_other", "run1")
        .await
        .expect("run items");
    assert!(comments.is_empty() && messages.is_empty());
}
