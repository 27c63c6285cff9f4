//! Checks for the review workflow: reviewers, decisions, finalizing, assignment and reactions.

use std::sync::Arc;

use docreview_core::events::EventKind;
use docreview_core::model::{
    CommentStatus, DecisionKind, DecisionRecord, Emoji, ReactionRecord, ReviewerRecord,
};
use docreview_core::store::{CommentsWrite, Store, StoreError, VersionWrite};

use crate::fixtures::{
    T0, assert_not_found, comment, comments_write, head, message, review, user, version,
};

fn reviewer(review_id: &str, user_id: &str, at: i64, due_at: Option<i64>) -> ReviewerRecord {
    ReviewerRecord {
        review_id: review_id.to_string(),
        user_id: user_id.to_string(),
        requested_at: at,
        due_at,
        requested_by: "usr_alice".to_string(),
    }
}

fn decision(id: &str, user_id: &str, kind: DecisionKind, version_id: &str) -> DecisionRecord {
    DecisionRecord {
        id: id.to_string(),
        review_id: "rev".to_string(),
        user_id: user_id.to_string(),
        decision: kind,
        version_id: version_id.to_string(),
        body: Some(format!("note of {id} — ✓")),
        created_at: T0 + 10,
    }
}

fn reaction(user_id: &str, emoji: Emoji, message_id: Option<&str>) -> ReactionRecord {
    ReactionRecord {
        review_id: "rev".to_string(),
        comment_id: "c1".to_string(),
        message_id: message_id.map(str::to_string),
        user_id: user_id.to_string(),
        emoji,
        created_at: T0 + 20,
    }
}

async fn state(store: &Arc<dyn Store>) -> docreview_core::model::ReviewState {
    store
        .review_state("rev")
        .await
        .expect("review state")
        .expect("the document exists")
}

/// Reviewers are added (again: the due date changes), listed in the order asked, and removed;
/// decisions keep one per person (a newer replaces the older) and are refused on a version
/// that is not the latest; each write raises `change_seq` but never `commentsRevision`, and
/// the people they name are among the state's users.
pub async fn check_reviewers_and_decisions(store: Arc<dyn Store>) {
    for id in ["usr_alice", "usr_bob", "usr_cy"] {
        user(&store, id).await;
    }
    review(&store, "rev", "usr_alice", T0).await;
    let before = head(&store, "rev").await.review;

    store
        .put_reviewer(
            reviewer("rev", "usr_bob", T0 + 1, Some(T0 + 1000)),
            Vec::new(),
        )
        .await
        .expect("add bob");
    store
        .put_reviewer(reviewer("rev", "usr_cy", T0 + 2, None), Vec::new())
        .await
        .expect("add cy");
    store
        .put_reviewer(
            reviewer("rev", "usr_bob", T0 + 3, Some(T0 + 2000)),
            Vec::new(),
        )
        .await
        .expect("ask bob again");
    assert_not_found(
        store
            .put_reviewer(reviewer("rev_missing", "usr_bob", T0, None), Vec::new())
            .await,
    );
    let after = head(&store, "rev").await.review;
    assert_eq!(after.change_seq, before.change_seq + 3);
    assert_eq!(after.comments_revision, before.comments_revision);
    let listed = state(&store).await;
    assert_eq!(
        listed.reviewers,
        vec![
            reviewer("rev", "usr_bob", T0 + 1, Some(T0 + 2000)),
            reviewer("rev", "usr_cy", T0 + 2, None)
        ],
        "asking again keeps the first request time and takes the new due date"
    );
    for id in ["usr_bob", "usr_cy"] {
        assert!(listed.users.iter().any(|u| u.id == id), "{id} is a user");
    }

    assert!(
        store
            .remove_reviewer("rev", "usr_cy", T0 + 4)
            .await
            .expect("remove")
    );
    assert!(
        !store
            .remove_reviewer("rev", "usr_cy", T0 + 4)
            .await
            .expect("again")
    );
    assert_eq!(state(&store).await.reviewers.len(), 1);

    let first = decision("dec1", "usr_bob", DecisionKind::ChangesRequested, "rev_v1");
    store
        .put_decision(first.clone(), Vec::new())
        .await
        .expect("decide");
    let mut newer = decision("dec2", "usr_bob", DecisionKind::Approved, "rev_v1");
    newer.body = None;
    newer.created_at = T0 + 11;
    store
        .put_decision(newer.clone(), Vec::new())
        .await
        .expect("decide again");
    let mut other = decision("dec3", "usr_cy", DecisionKind::NotRelevant, "rev_v1");
    other.created_at = T0 + 12;
    store
        .put_decision(other.clone(), Vec::new())
        .await
        .expect("cy decides");
    assert_eq!(
        state(&store).await.decisions,
        vec![newer.clone(), other.clone()]
    );

    // A new version: a decision on the old one is refused, and the stored ones stay as made.
    let v2 = version("rev", "rev_v2", T0 + 30);
    let revision = head(&store, "rev").await.review.comments_revision;
    store
        .write_version(VersionWrite {
            review_id: "rev".to_string(),
            expected_latest_version_id: "rev_v1".to_string(),
            expected_comments_revision: revision,
            html: b"<h1>v2</h1>".to_vec(),
            version: v2,
            append: true,
            anchors: Vec::new(),
            structure_changed: false,
            at: T0 + 30,
            search_text: String::new(),
            outbox: Vec::new(),
            closed: Vec::new(),
        })
        .await
        .expect("new version");
    match store
        .put_decision(
            decision("dec4", "usr_cy", DecisionKind::Approved, "rev_v1"),
            Vec::new(),
        )
        .await
    {
        Err(StoreError::StaleVersion { latest }) => assert_eq!(latest, "rev_v2"),
        other => panic!("expected StaleVersion, got {other:?}"),
    }
    assert_eq!(state(&store).await.decisions, vec![newer, other]);
    store
        .put_decision(
            decision("dec5", "usr_cy", DecisionKind::Approved, "rev_v2"),
            Vec::new(),
        )
        .await
        .expect("decide on the latest");
}

/// Finalizing needs every live comment closed (`OpenComments` with how many are open);
/// while finalized, comment writes and versions are refused (`ReviewFinalized`) unless the
/// write says `even_if_finalized`; reopening takes writes again. Setting the state it already
/// has answers `false`.
pub async fn check_finalize_and_reopen(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let open = comment("rev", "c1", "usr_alice", T0 + 1);
    let mut deleted = comment("rev", "c2", "usr_alice", T0 + 1);
    deleted.deleted_at = Some(T0 + 2);
    store
        .write_comments(
            "rev",
            comments_write(0, T0 + 2, vec![open.clone(), deleted]),
        )
        .await
        .expect("comments");
    let finalize = |at| Some((at, "usr_alice".to_string()));
    match store
        .set_finalized("rev", finalize(T0 + 3), T0 + 3, Vec::new())
        .await
    {
        Err(StoreError::OpenComments(1)) => {}
        other => panic!("expected OpenComments(1), got {other:?}"),
    }
    assert_eq!(head(&store, "rev").await.review.finalized, None);
    let mut closed = open.clone();
    closed.status = CommentStatus::Closed;
    store
        .write_comments("rev", comments_write(1, T0 + 4, vec![closed.clone()]))
        .await
        .expect("close");
    let before = head(&store, "rev").await.review;
    assert!(
        store
            .set_finalized("rev", finalize(T0 + 5), T0 + 5, Vec::new())
            .await
            .expect("finalize")
    );
    let after = head(&store, "rev").await.review;
    assert_eq!(after.finalized, Some((T0 + 5, "usr_alice".to_string())));
    assert_eq!(after.change_seq, before.change_seq + 1);
    assert_eq!(after.comments_revision, before.comments_revision);
    assert!(
        !store
            .set_finalized("rev", finalize(T0 + 6), T0 + 6, Vec::new())
            .await
            .expect("again")
    );
    assert_not_found(
        store
            .set_finalized("rev_missing", None, T0, Vec::new())
            .await,
    );

    let new_comment = comment("rev", "c3", "usr_alice", T0 + 7);
    for write in [
        comments_write(2, T0 + 7, vec![new_comment.clone()]),
        CommentsWrite {
            on_latest_version: Some("rev_v1".to_string()),
            ..comments_write(0, T0 + 7, vec![new_comment.clone()])
        },
    ] {
        match store.write_comments("rev", write).await {
            Err(StoreError::ReviewFinalized) => {}
            other => panic!("expected ReviewFinalized, got {other:?}"),
        }
    }
    let v2 = version("rev", "rev_v2", T0 + 8);
    let version_write = VersionWrite {
        review_id: "rev".to_string(),
        expected_latest_version_id: "rev_v1".to_string(),
        expected_comments_revision: 2,
        html: b"<h1>v2</h1>".to_vec(),
        version: v2,
        append: true,
        anchors: Vec::new(),
        structure_changed: false,
        at: T0 + 8,
        search_text: String::new(),
        outbox: Vec::new(),
        closed: Vec::new(),
    };
    match store.write_version(version_write.clone()).await {
        Err(StoreError::ReviewFinalized) => {}
        other => panic!("expected ReviewFinalized, got {other:?}"),
    }
    // A run that finishes may still write (its own items), even now.
    let revision = store
        .write_comments(
            "rev",
            CommentsWrite {
                even_if_finalized: true,
                ..comments_write(2, T0 + 9, Vec::new())
            },
        )
        .await
        .expect("a write that applies even to a finalized review");
    assert_eq!(revision, 3);

    assert!(
        store
            .set_finalized("rev", None, T0 + 10, Vec::new())
            .await
            .expect("reopen")
    );
    assert_eq!(head(&store, "rev").await.review.finalized, None);
    store
        .write_comments("rev", comments_write(3, T0 + 11, vec![new_comment]))
        .await
        .expect("comments are written again");
    store
        .write_version(VersionWrite {
            expected_comments_revision: 4,
            ..version_write
        })
        .await
        .expect("versions are written again");
}

/// A comment's assignee is written with the comment and read back (thread, state, live
/// comments), and whoever is assigned is among the state's users.
pub async fn check_comment_assignee(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    user(&store, "usr_bob").await;
    review(&store, "rev", "usr_alice", T0).await;
    let mut assigned = comment("rev", "c1", "usr_alice", T0 + 1);
    assigned.assignee_id = Some("usr_bob".to_string());
    store
        .write_comments("rev", comments_write(0, T0 + 1, vec![assigned.clone()]))
        .await
        .expect("write");
    let thread = store
        .comment_thread("rev", "c1")
        .await
        .expect("thread")
        .expect("c1");
    assert_eq!(thread.comment, assigned);
    let read = state(&store).await;
    assert_eq!(read.comments, vec![assigned.clone()]);
    assert!(read.users.iter().any(|u| u.id == "usr_bob"));
    let mut unassigned = assigned;
    unassigned.assignee_id = None;
    // A change to the thread: the store raises its revision.
    unassigned.thread_revision += 1;
    store
        .write_comments("rev", comments_write(1, T0 + 2, vec![unassigned.clone()]))
        .await
        .expect("unassign");
    assert_eq!(
        store.live_comments("rev").await.expect("live"),
        vec![unassigned]
    );
}

/// Reactions are unique per person, emoji and item (adding twice or removing what is not
/// there changes nothing and answers `false`), are read with the thread and the state, never
/// raise `commentsRevision`, raise `change_seq` only when something changed, announce a
/// `reactions` event, and need a live comment (and reply).
pub async fn check_reactions(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    user(&store, "usr_bob").await;
    review(&store, "rev", "usr_alice", T0).await;
    let c1 = comment("rev", "c1", "usr_alice", T0 + 1);
    let mut c2 = comment("rev", "c2", "usr_alice", T0 + 1);
    c2.deleted_at = Some(T0 + 2);
    let reply = message(&c1, "m1", "usr_bob", T0 + 2);
    store
        .write_comments(
            "rev",
            CommentsWrite {
                messages: vec![reply],
                ..comments_write(0, T0 + 2, vec![c1, c2])
            },
        )
        .await
        .expect("comments");
    let before = head(&store, "rev").await.review;
    let mut events = store.subscribe();

    let thumbs = reaction("usr_bob", Emoji::PlusOne, None);
    assert!(
        store
            .set_reaction(thumbs.clone(), true)
            .await
            .expect("react")
    );
    assert!(
        !store
            .set_reaction(thumbs.clone(), true)
            .await
            .expect("again")
    );
    // Events of earlier writes may still be on their way (PostgreSQL delivers them through
    // LISTEN): wait for the reaction's.
    let announced = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            let event = events.recv().await.expect("an event");
            if event.kind == EventKind::Reactions {
                return event;
            }
        }
    })
    .await
    .expect("a reactions event");
    assert_eq!(announced.review_id, "rev");
    assert!(
        store
            .set_reaction(reaction("usr_alice", Emoji::PlusOne, None), true)
            .await
            .expect("a")
    );
    assert!(
        store
            .set_reaction(reaction("usr_bob", Emoji::Heart, None), true)
            .await
            .expect("h")
    );
    let on_reply = reaction("usr_alice", Emoji::Rocket, Some("m1"));
    assert!(
        store
            .set_reaction(on_reply.clone(), true)
            .await
            .expect("reply")
    );

    let after = head(&store, "rev").await.review;
    assert_eq!(after.comments_revision, before.comments_revision);
    assert_eq!(
        after.change_seq,
        before.change_seq + 4,
        "one per change, none for the repeat"
    );
    let thread = store
        .comment_thread("rev", "c1")
        .await
        .expect("thread")
        .expect("c1");
    assert_eq!(thread.reactions.len(), 4);
    assert!(thread.reactions.contains(&on_reply));
    assert_eq!(state(&store).await.reactions.len(), 4);

    assert!(
        store
            .set_reaction(thumbs.clone(), false)
            .await
            .expect("unreact")
    );
    assert!(
        !store
            .set_reaction(thumbs, false)
            .await
            .expect("unreact again")
    );
    assert_eq!(state(&store).await.reactions.len(), 3);

    let mut on_deleted = reaction("usr_bob", Emoji::Eyes, None);
    on_deleted.comment_id = "c2".to_string();
    assert_not_found(store.set_reaction(on_deleted, true).await);
    assert_not_found(
        store
            .set_reaction(reaction("usr_bob", Emoji::Eyes, Some("m9")), true)
            .await,
    );
    let mut elsewhere = reaction("usr_bob", Emoji::Eyes, None);
    elsewhere.review_id = "rev_missing".to_string();
    assert_not_found(store.set_reaction(elsewhere, true).await);
}
