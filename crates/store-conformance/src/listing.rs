//! Checks for `list_reviews`: who sees what, every filter, comment counts, order and pages.

use std::collections::HashSet;
use std::sync::Arc;

use docreview_core::model::{AccessMode, CommentStatus, GrantRole, Membership, Millis};
use docreview_core::store::{Store, Visibility};

use crate::fixtures::{
    T0, all_view, comment, comments_write, grant, listed, member, member_view, new_review, query,
    user,
};

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(std::string::ToString::to_string).collect()
}

async fn create(
    store: &Arc<dyn Store>,
    id: &str,
    owner: &str,
    mode: AccessMode,
    grants: Vec<docreview_core::model::AccessGrant>,
    at: Millis,
) {
    let mut new = new_review(id, owner, at);
    new.review.access_mode = mode;
    new.grants = grants;
    store.create_review(new).await.expect("create review");
}

/// `All` sees everything; a member sees what they own and, if internal, link-mode documents and
/// those shared with their email; an external member sees only their own. Rows carry the
/// owner and the caller's grant.
pub async fn check_list_visibility(store: Arc<dyn Store>) {
    let alice = user(&store, "usr_alice").await;
    let bob = user(&store, "usr_bob").await;
    let dave = user(&store, "usr_dave").await;
    let carol = member(&store, "usr_carol", Membership::External).await;
    let erin = member(&store, "usr_erin", Membership::External).await;
    create(
        &store,
        "doc_link",
        "usr_alice",
        AccessMode::Link,
        vec![],
        T0 + 1,
    )
    .await;
    create(
        &store,
        "doc_shared",
        "usr_alice",
        AccessMode::Restricted,
        vec![
            grant(&bob.email, GrantRole::Editor),
            grant(&carol.email, GrantRole::Viewer),
        ],
        T0 + 2,
    )
    .await;
    create(
        &store,
        "doc_private",
        "usr_alice",
        AccessMode::Restricted,
        vec![],
        T0 + 3,
    )
    .await;
    create(
        &store,
        "doc_carol",
        "usr_carol",
        AccessMode::Restricted,
        vec![],
        T0 + 4,
    )
    .await;
    create(
        &store,
        "doc_link_granted",
        "usr_alice",
        AccessMode::Link,
        vec![
            grant(&bob.email, GrantRole::Viewer),
            grant(&carol.email, GrantRole::Editor),
        ],
        T0 + 5,
    )
    .await;

    let everything = ids(&[
        "doc_link_granted",
        "doc_carol",
        "doc_private",
        "doc_shared",
        "doc_link",
    ]);
    let rows = store.list_reviews(query(all_view())).await.expect("list");
    assert_eq!(
        rows.iter().map(|r| r.review.id.clone()).collect::<Vec<_>>(),
        everything
    );
    assert!(
        rows.iter().all(|r| r.grant.is_none()),
        "All has no grant of its own"
    );
    let carol_doc = rows
        .iter()
        .find(|r| r.review.id == "doc_carol")
        .expect("listed");
    assert_eq!(carol_doc.owner, carol.user);
    assert_eq!(
        rows.iter()
            .find(|r| r.review.id == "doc_link")
            .expect("listed")
            .owner,
        alice.user
    );

    assert_eq!(
        listed(&store, query(member_view(&alice))).await,
        ids(&["doc_link_granted", "doc_private", "doc_shared", "doc_link"]),
        "the owner sees all their documents"
    );
    let rows = store
        .list_reviews(query(member_view(&bob)))
        .await
        .expect("list");
    let seen: Vec<(String, Option<GrantRole>)> =
        rows.into_iter().map(|r| (r.review.id, r.grant)).collect();
    assert_eq!(
        seen,
        vec![
            ("doc_link_granted".to_string(), Some(GrantRole::Viewer)),
            ("doc_shared".to_string(), Some(GrantRole::Editor)),
            ("doc_link".to_string(), None),
        ],
        "an internal member sees link-mode and shared documents, with their grant"
    );
    assert_eq!(
        listed(&store, query(member_view(&dave))).await,
        ids(&["doc_link_granted", "doc_link"]),
        "an internal member without grants sees link-mode documents"
    );
    assert_eq!(
        listed(&store, query(member_view(&carol))).await,
        ids(&["doc_carol"]),
        "an external member sees only their own documents, whatever is shared or linked"
    );
    assert!(listed(&store, query(member_view(&erin))).await.is_empty());
    // Visibility is by the caller's email exactly as stored in the grant.
    let stranger = Visibility::Member {
        user_id: "usr_nobody".to_string(),
        email: "nobody@example.com".to_string(),
        internal: true,
    };
    assert_eq!(
        listed(&store, query(stranger)).await,
        ids(&["doc_link_granted", "doc_link"])
    );
}

/// `(id, owner, title, tags, archived, updated_at)` of a document to list.
type Spec = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    bool,
    Millis,
);

/// Title search (case-insensitive substring, `%` and `_` literal), tag, archived, owner and
/// project filters, alone and combined; comment counts leave out deleted comments.
pub async fn check_list_filters(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    user(&store, "usr_bob").await;
    let specs: [Spec; 5] = [
        (
            "r1",
            "usr_alice",
            "Budget 100% final",
            &["finance", "q3"],
            false,
            T0 + 5,
        ),
        ("r2", "usr_bob", "budget_draft", &["finance"], true, T0 + 4),
        ("r3", "usr_alice", "Roadmap", &["product"], false, T0 + 3),
        ("r4", "usr_bob", "BUDGETARY notes", &[], false, T0 + 2),
        (
            "r5",
            "usr_alice",
            "Budget draft",
            &["Finance"],
            false,
            T0 + 1,
        ),
    ];
    for (id, owner, title, tags, archived, at) in specs {
        let mut new = new_review(id, owner, at);
        new.review.title = title.to_string();
        new.review.tags = tags.iter().map(std::string::ToString::to_string).collect();
        new.review.archived = archived;
        store.create_review(new).await.expect("create review");
    }
    let all = || query(all_view());
    let search = |text: &str| {
        let mut q = all();
        q.title_contains = Some(text.to_string());
        q
    };

    assert_eq!(
        listed(&store, search("budget")).await,
        ids(&["r1", "r2", "r4", "r5"])
    );
    assert_eq!(
        listed(&store, search("BUDGET")).await,
        ids(&["r1", "r2", "r4", "r5"])
    );
    assert_eq!(listed(&store, search("GET 100% FIN")).await, ids(&["r1"]));
    assert_eq!(
        listed(&store, search("%")).await,
        ids(&["r1"]),
        "% is literal"
    );
    assert_eq!(
        listed(&store, search("_")).await,
        ids(&["r2"]),
        "_ is literal"
    );
    assert_eq!(
        listed(&store, search("t_d")).await,
        ids(&["r2"]),
        "_ matches only itself (not the space of `Budget draft`)"
    );
    assert!(
        listed(&store, search("get%")).await.is_empty(),
        "% matches only itself"
    );
    assert!(listed(&store, search("nothing like it")).await.is_empty());

    let tagged = |tag: &str| {
        let mut q = all();
        q.tag = Some(tag.to_string());
        q
    };
    assert_eq!(listed(&store, tagged("finance")).await, ids(&["r1", "r2"]));
    assert_eq!(listed(&store, tagged("q3")).await, ids(&["r1"]));
    assert_eq!(
        listed(&store, tagged("Finance")).await,
        ids(&["r5"]),
        "tags match exactly"
    );
    assert!(
        listed(&store, tagged("fin")).await.is_empty(),
        "a tag is a whole element"
    );

    let archived = |value: bool| {
        let mut q = all();
        q.archived = Some(value);
        q
    };
    assert_eq!(listed(&store, archived(true)).await, ids(&["r2"]));
    assert_eq!(
        listed(&store, archived(false)).await,
        ids(&["r1", "r3", "r4", "r5"])
    );

    let mut owned = all();
    owned.owner_id = Some("usr_bob".to_string());
    assert_eq!(listed(&store, owned).await, ids(&["r2", "r4"]));

    let mut project = all();
    project.project = Some("PRJ-1".to_string());
    assert!(
        listed(&store, project).await.is_empty(),
        "no document is in a project"
    );

    let mut combined = search("budget");
    combined.tag = Some("finance".to_string());
    combined.archived = Some(false);
    assert_eq!(listed(&store, combined).await, ids(&["r1"]));
    let mut combined = search("budget");
    combined.owner_id = Some("usr_alice".to_string());
    combined.visibility = Visibility::Member {
        user_id: "usr_bob".to_string(),
        email: "bob@example.com".to_string(),
        internal: true,
    };
    assert_eq!(listed(&store, combined).await, ids(&["r1", "r5"]));

    // Counts: two open (one deleted), one closed. Writing comments moves `updated_at`, so the
    // write keeps r1's time to leave the order alone.
    let mut open = comment("r1", "c_open", "usr_bob", T0 + 10);
    open.status = CommentStatus::Open;
    let mut closed = comment("r1", "c_closed", "usr_bob", T0 + 11);
    closed.status = CommentStatus::Closed;
    let mut gone = comment("r1", "c_gone", "usr_bob", T0 + 12);
    gone.deleted_at = Some(T0 + 13);
    store
        .write_comments("r1", comments_write(0, T0 + 5, vec![open, closed, gone]))
        .await
        .expect("write comments");
    let rows = store.list_reviews(all()).await.expect("list");
    let counts: Vec<(String, i64, i64)> = rows
        .iter()
        .map(|r| (r.review.id.clone(), r.comment_count, r.open_comment_count))
        .collect();
    assert_eq!(
        counts,
        vec![
            ("r1".to_string(), 2, 1),
            ("r2".to_string(), 0, 0),
            ("r3".to_string(), 0, 0),
            ("r4".to_string(), 0, 0),
            ("r5".to_string(), 0, 0),
        ]
    );
    assert_eq!(rows[0].review.comments_revision, 1);
}

/// Newest first by `(updated_at, id)` in byte order of ids; following the `after` key from page
/// to page visits every document exactly once, whatever the page size.
pub async fn check_list_pagination(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    // Several documents share an update time; their ids differ in case and punctuation so that
    // any locale-aware ordering would show.
    let names = [
        "doc_a", "doc_B", "doc__", "doc_A", "doc-1", "doc.2", "Doc_z", "doc_b", "doc_10", "doc_9",
        "doc_ä", "doc_aa",
    ];
    let mut expected: Vec<(Millis, String)> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let at = T0 + i64::try_from(i / 4).expect("small");
        store
            .create_review(new_review(name, "usr_alice", at))
            .await
            .expect("create review");
        expected.push((at, name.to_string()));
    }
    expected.sort_by(|a, b| b.cmp(a));
    let expected: Vec<String> = expected.into_iter().map(|(_, id)| id).collect();
    assert_eq!(listed(&store, query(all_view())).await, expected);

    for page_size in [1, 3, 5, 12, 50] {
        let mut seen = Vec::new();
        let mut after = None;
        for _ in 0..=names.len() {
            let mut q = query(all_view());
            q.limit = page_size;
            q.after = after.clone();
            let rows = store.list_reviews(q).await.expect("list page");
            assert!(rows.len() <= page_size);
            let Some(last) = rows.last() else { break };
            after = Some((last.review.updated_at, last.review.id.clone()));
            let done = rows.len() < page_size;
            seen.extend(rows.into_iter().map(|r| r.review.id));
            if done {
                break;
            }
        }
        let unique: HashSet<&String> = seen.iter().collect();
        assert_eq!(
            unique.len(),
            seen.len(),
            "page size {page_size}: no document twice"
        );
        assert_eq!(
            seen, expected,
            "page size {page_size}: every document once, in order"
        );
    }

    // Pages combine with filters and visibility.
    let mut q = query(Visibility::Member {
        user_id: "usr_alice".to_string(),
        email: "alice@example.com".to_string(),
        internal: false,
    });
    q.title_contains = Some("OF DOC_".to_string());
    q.limit = 2;
    let first = store.list_reviews(q.clone()).await.expect("list");
    let last = first.last().expect("a full page");
    q.after = Some((last.review.updated_at, last.review.id.clone()));
    let second = store.list_reviews(q).await.expect("list");
    let matching: Vec<String> = expected
        .iter()
        .filter(|id| id.to_lowercase().starts_with("doc_"))
        .cloned()
        .collect();
    let got: Vec<String> = first
        .into_iter()
        .chain(second)
        .map(|r| r.review.id)
        .collect();
    assert_eq!(got, matching[..4].to_vec());
}
