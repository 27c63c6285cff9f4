//! Checks for creating documents and reading them back: heads, states, versions and bodies.

use std::sync::Arc;

use docreview_core::model::{AccessMode, GrantRole, SectionSpec};
use docreview_core::store::Store;

use crate::fixtures::{
    T0, all_view, assert_exists, grant, head, listed, new_review, query, review, user,
};

/// Every field of a new document comes back from `review_head` and `review_state`: the record
/// (tags, structure, archived flag, both revisions, `change_seq`, times), its grants (sorted by
/// email), its first version and the owner among the state's users.
pub async fn check_create_review_round_trip(store: Arc<dyn Store>) {
    let alice = user(&store, "usr_alice").await;
    let mut new = new_review("rev_plan", "usr_alice", T0);
    let r = &mut new.review;
    r.title = "Quarterly plan: 100% «done» & more".to_string();
    r.access_mode = AccessMode::Restricted;
    r.tags = vec!["finance".to_string(), "q3".to_string(), "späť".to_string()];
    r.archived = true;
    r.comments_revision = 3;
    r.structure_revision = 2;
    r.change_seq = 7;
    r.created_at = T0 - 10;
    r.updated_at = T0 + 1;
    r.structure = Some(vec![
        SectionSpec {
            id: "s1".to_string(),
            level: 1,
            text: "One".to_string(),
        },
        SectionSpec {
            id: "s2".to_string(),
            level: 3,
            text: "Two \"quoted\"".to_string(),
        },
    ]);
    new.grants = vec![
        grant("zed@example.com", GrantRole::Viewer),
        grant("bob@example.com", GrantRole::Editor),
    ];
    store
        .create_review(new.clone())
        .await
        .expect("create review");

    let got = head(&store, "rev_plan").await;
    assert_eq!(got.review, new.review);
    assert_eq!(
        got.grants,
        vec![
            grant("bob@example.com", GrantRole::Editor),
            grant("zed@example.com", GrantRole::Viewer)
        ],
        "grants come back sorted by email"
    );

    let state = store
        .review_state("rev_plan")
        .await
        .expect("review state")
        .expect("state exists");
    assert_eq!(state.head.review, new.review);
    assert_eq!(state.head.grants, got.grants);
    assert_eq!(state.versions, vec![new.version.clone()]);
    assert!(state.comments.is_empty() && state.messages.is_empty());
    assert!(state.events.is_empty() && state.runs.is_empty());
    assert_eq!(state.users, vec![alice.user.clone()]);

    // A document without optional parts round-trips too.
    let plain = review(&store, "rev_plain", "usr_alice", T0).await;
    let got = head(&store, "rev_plain").await;
    assert_eq!(got.review, plain.review);
    assert!(got.grants.is_empty());

    assert!(
        store
            .review_head("rev_missing")
            .await
            .expect("head")
            .is_none()
    );
    assert!(
        store
            .review_state("rev_missing")
            .await
            .expect("state")
            .is_none()
    );
}

/// A taken document id answers `AlreadyExists("document")`, a taken version id
/// `AlreadyExists("version")`; either way nothing of the new document is stored.
pub async fn check_create_review_duplicates(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let first = review(&store, "rev_one", "usr_alice", T0).await;

    let mut same_id = new_review("rev_one", "usr_alice", T0 + 1);
    same_id.version.id = "rev_one_other_v1".to_string();
    same_id.review.latest_version_id = same_id.version.id.clone();
    same_id.review.title = "Imposter".to_string();
    assert_exists(store.create_review(same_id).await, "document");
    assert_eq!(head(&store, "rev_one").await.review, first.review);
    assert!(
        store
            .version("rev_one", "rev_one_other_v1")
            .await
            .expect("version")
            .is_none()
    );

    let mut same_version = new_review("rev_two", "usr_alice", T0 + 2);
    same_version.version.id = first.version.id.clone();
    same_version.review.latest_version_id = first.version.id.clone();
    assert_exists(store.create_review(same_version).await, "version");
    assert!(
        store.review_head("rev_two").await.expect("head").is_none(),
        "a failed create leaves no document behind"
    );
    assert_eq!(
        listed(&store, query(all_view())).await,
        vec!["rev_one".to_string()]
    );
    assert_eq!(
        store.versions("rev_one").await.expect("versions"),
        vec![first.version]
    );
}

/// Version bodies come back byte for byte (NUL, invalid UTF-8, a large body); `version` and
/// `version_html` answer `None` for an unknown version or one of another document.
pub async fn check_version_bodies(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let mut binary = new_review("rev_bin", "usr_alice", T0);
    binary.html = vec![
        b'<', b'p', b'>', 0x00, 0xff, 0xfe, 0xc3, 0x28, b'\\', b'\'', 0x00, b'x',
    ];
    store.create_review(binary.clone()).await.expect("create");
    let (version, html) = store
        .version_html("rev_bin", &binary.version.id)
        .await
        .expect("version html")
        .expect("version exists");
    assert_eq!(version, binary.version);
    assert_eq!(html, binary.html);

    let mut large = new_review("rev_large", "usr_alice", T0);
    large.html = (0..3 * 1024 * 1024u32)
        .map(|i| u8::try_from(i.wrapping_mul(2_654_435_761) >> 24).expect("byte"))
        .collect();
    store
        .create_review(large.clone())
        .await
        .expect("create large");
    let (_, html) = store
        .version_html("rev_large", &large.version.id)
        .await
        .expect("version html")
        .expect("version exists");
    assert!(html == large.html, "a 3 MiB body comes back unchanged");

    assert_eq!(
        store
            .version("rev_bin", &binary.version.id)
            .await
            .expect("version"),
        Some(binary.version.clone())
    );
    assert_eq!(
        store.versions("rev_bin").await.expect("versions"),
        vec![binary.version.clone()]
    );
    assert!(
        store
            .version("rev_bin", "nope")
            .await
            .expect("version")
            .is_none()
    );
    assert!(
        store
            .version("rev_large", &binary.version.id)
            .await
            .expect("version")
            .is_none()
    );
    assert!(
        store
            .version_html("rev_large", &binary.version.id)
            .await
            .expect("html")
            .is_none()
    );
    assert!(
        store
            .version_html("rev_bin", "nope")
            .await
            .expect("html")
            .is_none()
    );
    assert!(
        store
            .versions("rev_missing")
            .await
            .expect("versions")
            .is_empty()
    );
}
