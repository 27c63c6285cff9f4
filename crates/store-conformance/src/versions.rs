//! Checks for `write_version`: appending, replacing in place, and both guards (latest version
//! and comments revision).

use std::sync::Arc;

use docreview_core::model::{AnchorState, CommentRecord, Millis, VersionRecord};
use docreview_core::store::{Revisions, Store, StoreError, VersionWrite};

use crate::fixtures::{
    T0, anchor, assert_conflict, assert_exists, assert_not_found, comment, comments_write, head,
    review, section, sorted_by, user, version,
};

pub(crate) fn version_write(
    review_id: &str,
    expected_latest: &str,
    expected_revision: i64,
    version: VersionRecord,
    append: bool,
    at: Millis,
) -> VersionWrite {
    VersionWrite {
        review_id: review_id.to_string(),
        expected_latest_version_id: expected_latest.to_string(),
        expected_comments_revision: expected_revision,
        html: format!("<h1>{}</h1>", version.id).into_bytes(),
        version,
        append,
        anchors: Vec::new(),
        structure_changed: false,
        at,
        search_text: String::new(),
        outbox: Vec::new(),
        closed: Vec::new(),
    }
}

/// A document with two live comments (and one deleted) at comments revision 1.
async fn with_comments(store: &Arc<dyn Store>) -> Vec<CommentRecord> {
    user(store, "usr_alice").await;
    review(store, "rev", "usr_alice", T0).await;
    let mut gone = comment("rev", "c3", "usr_alice", T0 + 3);
    gone.deleted_at = Some(T0 + 4);
    let comments = vec![
        comment("rev", "c1", "usr_alice", T0 + 1),
        comment("rev", "c2", "usr_alice", T0 + 2),
        gone,
    ];
    store
        .write_comments("rev", comments_write(0, T0 + 4, comments.clone()))
        .await
        .expect("write comments");
    comments
}

/// Appending makes the new version latest (after the others, oldest first), rewrites the given
/// anchors, raises the comments revision and `change_seq` by one and the structure revision
/// only when the structure changed.
pub async fn check_write_version_append(store: Arc<dyn Store>) {
    let comments = with_comments(&store).await;
    let before = head(&store, "rev").await.review;
    let v1 = store.versions("rev").await.expect("versions").remove(0);

    let mut v2 = version("rev", "rev_v2", T0 + 100);
    v2.sections = vec![section("intro", 0, 5), section("new", 5, 50)];
    let mut write = version_write("rev", "rev_v1", 1, v2.clone(), true, T0 + 100);
    write.html = vec![0, 1, 2, 0xff, b'<'];
    let mut moved = anchor("rev_v2", "quoted text");
    moved.state = AnchorState::Fuzzy;
    let mut orphan = anchor("rev_v2", "gone text");
    orphan.state = AnchorState::Orphaned;
    orphan.position = None;
    orphan.section_id = None;
    write.anchors = vec![
        ("c1".to_string(), moved.clone()),
        ("c2".to_string(), orphan.clone()),
    ];
    write.structure_changed = true;
    let revisions = store.write_version(write).await.expect("append");
    assert_eq!(
        revisions,
        Revisions {
            comments: before.comments_revision + 1,
            structure: before.structure_revision + 1
        }
    );
    let after = head(&store, "rev").await.review;
    assert_eq!(after.latest_version_id, "rev_v2");
    assert_eq!(after.latest_source_hash, v2.source_hash);
    assert_eq!(after.comments_revision, revisions.comments);
    assert_eq!(after.structure_revision, revisions.structure);
    assert_eq!(after.change_seq, before.change_seq + 1);
    assert_eq!(after.updated_at, T0 + 100);
    assert_eq!(
        store.versions("rev").await.expect("versions"),
        vec![v1.clone(), v2.clone()]
    );
    let (_, html) = store
        .version_html("rev", "rev_v2")
        .await
        .expect("html")
        .expect("exists");
    assert_eq!(html, vec![0, 1, 2, 0xff, b'<']);
    let (_, old_html) = store
        .version_html("rev", "rev_v1")
        .await
        .expect("html")
        .expect("exists");
    assert_eq!(
        old_html,
        b"<h1>rev</h1><p>body</p>".to_vec(),
        "older bodies stay"
    );

    let live = sorted_by(store.live_comments("rev").await.expect("live"), |c| {
        c.id.clone()
    });
    assert_eq!(live.len(), 2);
    assert_eq!(live[0].anchor, moved);
    assert_eq!(live[1].anchor, orphan);
    assert_eq!(
        live[0].version_id, comments[0].version_id,
        "only the anchor moves"
    );

    // A second append without structure change; versions stay in append order.
    let v3 = version("rev", "rev_v0_sorts_first", T0 + 200);
    let revisions = store
        .write_version(version_write(
            "rev",
            "rev_v2",
            after.comments_revision,
            v3.clone(),
            true,
            T0 + 200,
        ))
        .await
        .expect("append again");
    assert_eq!(
        revisions,
        Revisions {
            comments: after.comments_revision + 1,
            structure: after.structure_revision
        }
    );
    assert_eq!(
        store.versions("rev").await.expect("versions"),
        vec![v1, v2, v3.clone()]
    );
    let state = store
        .review_state("rev")
        .await
        .expect("state")
        .expect("exists");
    assert_eq!(state.head.review.latest_version_id, v3.id);
    assert_eq!(state.versions.len(), 3);
    assert_eq!(state.head.review.change_seq, before.change_seq + 2);
}

/// Replacing rewrites the latest version in place: same id, new label, hash, sections and body,
/// no new version; the revisions move as for an append.
pub async fn check_write_version_replace(store: Arc<dyn Store>) {
    with_comments(&store).await;
    let before = head(&store, "rev").await.review;
    let v1 = store.versions("rev").await.expect("versions").remove(0);

    let mut replaced = v1.clone();
    replaced.label = "fixed typo".to_string();
    replaced.source_hash = "sha256-replaced".to_string();
    replaced.sections = vec![section("only", 0, 99)];
    let mut write = version_write("rev", "rev_v1", 1, replaced.clone(), false, T0 + 100);
    write.html = b"<h1>replaced \x00 body</h1>".to_vec();
    write.anchors = vec![("c1".to_string(), anchor("rev_v1", "replaced quote"))];
    let revisions = store.write_version(write).await.expect("replace");
    assert_eq!(
        revisions,
        Revisions {
            comments: before.comments_revision + 1,
            structure: before.structure_revision
        }
    );
    assert_eq!(
        store.versions("rev").await.expect("versions"),
        vec![replaced.clone()]
    );
    let (stored, html) = store
        .version_html("rev", "rev_v1")
        .await
        .expect("html")
        .expect("exists");
    assert_eq!(stored, replaced);
    assert_eq!(html, b"<h1>replaced \x00 body</h1>".to_vec());
    let after = head(&store, "rev").await.review;
    assert_eq!(after.latest_version_id, "rev_v1");
    assert_eq!(after.latest_source_hash, "sha256-replaced");
    assert_eq!(after.comments_revision, before.comments_revision + 1);
    assert_eq!(after.change_seq, before.change_seq + 1);
    assert_eq!(after.updated_at, T0 + 100);
    let c1 = store
        .comment_thread("rev", "c1")
        .await
        .expect("thread")
        .expect("exists");
    assert_eq!(c1.comment.anchor, anchor("rev_v1", "replaced quote"));
}

/// A stale latest version answers `StaleVersion { latest }` (checked first), a stale revision
/// `RevisionConflict { current }`, a taken version id `AlreadyExists("version")`, a missing
/// document `NotFound`; none of them writes anything.
pub async fn check_write_version_stale(store: Arc<dyn Store>) {
    let comments = with_comments(&store).await;
    let before = head(&store, "rev").await.review;
    let versions_before = store.versions("rev").await.expect("versions");

    let attempt = |expected_latest: &str, expected_revision: i64, id: &str| {
        let mut write = version_write(
            "rev",
            expected_latest,
            expected_revision,
            version("rev", id, T0 + 100),
            true,
            T0 + 100,
        );
        write.anchors = vec![("c1".to_string(), anchor(id, "moved"))];
        write.structure_changed = true;
        write
    };
    match store.write_version(attempt("rev_v0", 1, "rev_v2")).await {
        Err(StoreError::StaleVersion { latest }) => assert_eq!(latest, "rev_v1"),
        other => panic!("expected StaleVersion, got {other:?}"),
    }
    match store.write_version(attempt("rev_v0", 0, "rev_v2")).await {
        Err(StoreError::StaleVersion { latest }) => assert_eq!(latest, "rev_v1"),
        other => panic!("a stale version is reported before a stale revision, got {other:?}"),
    }
    assert_conflict(store.write_version(attempt("rev_v1", 0, "rev_v2")).await, 1);
    assert_conflict(store.write_version(attempt("rev_v1", 7, "rev_v2")).await, 1);
    // Replacing is guarded the same way.
    let mut replace = attempt("rev_v1", 0, "rev_v1");
    replace.append = false;
    assert_conflict(store.write_version(replace).await, 1);
    assert_exists(
        store.write_version(attempt("rev_v1", 1, "rev_v1")).await,
        "version",
    );
    let mut missing = attempt("rev_v1", 1, "rev_v9");
    missing.review_id = "rev_missing".to_string();
    assert_not_found(store.write_version(missing).await);

    assert_eq!(head(&store, "rev").await.review, before, "nothing moved");
    assert_eq!(
        store.versions("rev").await.expect("versions"),
        versions_before
    );
    let (_, html) = store
        .version_html("rev", "rev_v1")
        .await
        .expect("html")
        .expect("exists");
    assert_eq!(html, b"<h1>rev</h1><p>body</p>".to_vec());
    let live = sorted_by(store.live_comments("rev").await.expect("live"), |c| {
        c.id.clone()
    });
    assert_eq!(live, comments[..2].to_vec(), "no anchor moved");
}

/// Suggestions (DESIGN.md §8.5): a comment's suggestion is stored and read back (text, empty
/// text, none; changed by an upsert), and a version write that applies some closes those
/// comments and records their status events with `reason` and `versionId`, in the same write;
/// when the write is refused (a stale guard) nothing is closed.
pub async fn check_suggestions_and_applied_versions(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let mut revise = comment("rev", "c1", "usr_alice", T0 + 1);
    revise.category = docreview_core::model::Category::Revise;
    revise.suggestion = Some("slow red ✓".to_string());
    let mut delete = comment("rev", "c2", "usr_alice", T0 + 2);
    delete.category = docreview_core::model::Category::Delete;
    delete.suggestion = Some(String::new());
    let plain = comment("rev", "c3", "usr_alice", T0 + 3);
    store
        .write_comments(
            "rev",
            comments_write(
                0,
                T0 + 4,
                vec![revise.clone(), delete.clone(), plain.clone()],
            ),
        )
        .await
        .expect("write comments");
    let stored = sorted_by(store.live_comments("rev").await.expect("live"), |c| {
        c.id.clone()
    });
    let suggestions: Vec<Option<&str>> = stored.iter().map(|c| c.suggestion.as_deref()).collect();
    assert_eq!(suggestions, vec![Some("slow red ✓"), Some(""), None]);
    let thread = store
        .comment_thread("rev", "c1")
        .await
        .expect("thread")
        .expect("exists");
    assert_eq!(thread.comment.suggestion.as_deref(), Some("slow red ✓"));

    // An upsert changes the suggestion like any other field.
    let mut changed = stored[0].clone();
    changed.suggestion = Some("slow grey".to_string());
    store
        .write_comments("rev", comments_write(1, T0 + 5, vec![changed]))
        .await
        .expect("upsert");

    let closing = |comment_id: &str| docreview_core::model::StatusEventRecord {
        comment_id: comment_id.to_string(),
        seq: 1,
        status: docreview_core::model::CommentStatus::Closed,
        by_id: "usr_alice".to_string(),
        ts: T0 + 10,
        reason: Some("applied".to_string()),
        version_id: Some("rev_v2".to_string()),
    };
    // A stale guard: refused, nothing closed.
    let mut stale = version_write(
        "rev",
        "rev_v1",
        1,
        version("rev", "rev_v2", T0 + 10),
        true,
        T0 + 10,
    );
    stale.closed = vec![closing("c1")];
    assert!(matches!(
        store.write_version(stale).await,
        Err(StoreError::RevisionConflict { current: 2 })
    ));
    let thread = store
        .comment_thread("rev", "c1")
        .await
        .expect("thread")
        .expect("exists");
    assert_eq!(
        thread.comment.status,
        docreview_core::model::CommentStatus::Open
    );
    assert!(thread.events.is_empty());

    let mut write = version_write(
        "rev",
        "rev_v1",
        2,
        version("rev", "rev_v2", T0 + 10),
        true,
        T0 + 10,
    );
    write.closed = vec![closing("c1"), closing("c2")];
    store.write_version(write).await.expect("apply");
    for id in ["c1", "c2"] {
        let thread = store
            .comment_thread("rev", id)
            .await
            .expect("thread")
            .expect("exists");
        assert_eq!(
            thread.comment.status,
            docreview_core::model::CommentStatus::Closed
        );
        assert_eq!(thread.events, vec![closing(id)]);
    }
    let open = store
        .comment_thread("rev", "c3")
        .await
        .expect("thread")
        .expect("exists");
    assert_eq!(
        open.comment.status,
        docreview_core::model::CommentStatus::Open
    );
    assert_eq!(
        open.comment.suggestion, None,
        "a comment without a suggestion stays without"
    );
    let state = store.review_state("rev").await.expect("state");
    let state = state.expect("exists");
    let mut recorded: Vec<_> = state.events.clone();
    recorded.sort_by(|a, b| a.comment_id.cmp(&b.comment_id));
    assert_eq!(recorded, vec![closing("c1"), closing("c2")]);
    let c1 = state.comments.iter().find(|c| c.id == "c1").expect("c1");
    assert_eq!(c1.suggestion.as_deref(), Some("slow grey"));
}
