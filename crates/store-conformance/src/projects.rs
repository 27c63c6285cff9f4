//! Checks for projects: the snapshot import, listing, roles, linking documents, and what a
//! project role lets a member see.

use std::sync::Arc;

use docreview_core::model::{AccessMode, Membership, ProjectRecord, ProjectRole};
use docreview_core::store::{ProjectImport, ProjectQuery, Store};

use crate::fixtures::{
    T0, all_view, assert_not_found, head, listed, member, member_view, new_review, project,
    projects, query, review, user,
};

fn codes(rows: &[(ProjectRecord, Option<ProjectRole>)]) -> Vec<&str> {
    rows.iter().map(|(p, _)| p.code.as_str()).collect()
}

/// The import counts added, updated and dropped codes; listed projects are overwritten and in the
/// snapshot, the others drop out of it and keep their fields, roles and links.
pub async fn check_import_projects(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let mut inactive = project("PRJ-2");
    inactive.active = false;
    inactive.name = None;
    inactive.company = None;
    let first = vec![project("PRJ-1"), inactive.clone(), project("PRJ-3")];
    assert_eq!(
        store.import_projects(first).await.expect("import"),
        ProjectImport {
            added: 3,
            updated: 0,
            dropped: 0
        }
    );
    assert_eq!(
        store.project("PRJ-2").await.expect("project"),
        Some(inactive)
    );
    assert_eq!(
        store.project("PRJ-1").await.expect("project"),
        Some(project("PRJ-1"))
    );

    // Roles and links on PRJ-3, which the next snapshot leaves out.
    store
        .change_project_roles(
            "PRJ-3",
            vec![("usr_alice".to_string(), ProjectRole::Manager)],
            vec![],
        )
        .await
        .expect("roles");
    review(&store, "rev", "usr_alice", T0).await;
    assert!(
        store
            .link_project("rev", None, Some("PRJ-3"), T0 + 1)
            .await
            .expect("link")
    );

    let mut renamed = project("PRJ-1");
    renamed.name = Some("Renamed".to_string());
    renamed.company = None;
    renamed.active = false;
    // The record's own `in_snapshot` is not what decides: every listed project is in.
    let mut listed_flag = project("PRJ-2");
    listed_flag.in_snapshot = false;
    let second = vec![renamed.clone(), listed_flag, project("PRJ-4")];
    assert_eq!(
        store.import_projects(second).await.expect("import"),
        ProjectImport {
            added: 1,
            updated: 2,
            dropped: 1
        }
    );
    assert_eq!(
        store.project("PRJ-1").await.expect("project"),
        Some(renamed)
    );
    assert_eq!(
        store.project("PRJ-2").await.expect("project"),
        Some(project("PRJ-2")),
        "an inactive project listed as active again is overwritten"
    );
    assert_eq!(
        store.project("PRJ-4").await.expect("project"),
        Some(project("PRJ-4"))
    );
    let mut dropped = project("PRJ-3");
    dropped.in_snapshot = false;
    assert_eq!(
        store.project("PRJ-3").await.expect("project"),
        Some(dropped),
        "a project that dropped out keeps its fields"
    );
    assert_eq!(
        store
            .project_role("PRJ-3", "usr_alice")
            .await
            .expect("role"),
        Some(ProjectRole::Manager),
        "and its roles"
    );
    assert_eq!(
        head(&store, "rev").await.review.project_code.as_deref(),
        Some("PRJ-3"),
        "and its links"
    );

    // Back in the snapshot.
    assert_eq!(
        store
            .import_projects(vec![project("PRJ-3")])
            .await
            .expect("import")
            .updated,
        1
    );
    assert_eq!(
        store.project("PRJ-3").await.expect("project"),
        Some(project("PRJ-3"))
    );
}

/// Projects are listed by code with the caller's role, all of them or only the caller's, a page
/// at a time after a code.
pub async fn check_list_projects(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    user(&store, "usr_bob").await;
    projects(&store, &["P-c", "P-a", "P-e", "P-b", "P-d"]).await;
    store
        .change_project_roles(
            "P-b",
            vec![
                ("usr_alice".to_string(), ProjectRole::Viewer),
                ("usr_bob".to_string(), ProjectRole::Manager),
            ],
            vec![],
        )
        .await
        .expect("roles");
    store
        .change_project_roles(
            "P-d",
            vec![("usr_alice".to_string(), ProjectRole::Manager)],
            vec![],
        )
        .await
        .expect("roles");
    store
        .change_project_roles(
            "P-e",
            vec![("usr_alice".to_string(), ProjectRole::Editor)],
            vec![],
        )
        .await
        .expect("roles");

    let list = |user_id: &str, only_mine: bool, after: Option<&str>, limit: usize| ProjectQuery {
        user_id: user_id.to_string(),
        only_mine,
        after: after.map(str::to_string),
        limit,
    };
    let every = store
        .list_projects(list("usr_alice", false, None, 100))
        .await
        .expect("list");
    assert_eq!(
        every
            .iter()
            .map(|(p, role)| (p.code.as_str(), *role))
            .collect::<Vec<_>>(),
        vec![
            ("P-a", None),
            ("P-b", Some(ProjectRole::Viewer)),
            ("P-c", None),
            ("P-d", Some(ProjectRole::Manager)),
            ("P-e", Some(ProjectRole::Editor)),
        ]
    );
    assert_eq!(every[0].0, project("P-a"), "records come back whole");

    let mine = store
        .list_projects(list("usr_alice", true, None, 100))
        .await
        .expect("list");
    assert_eq!(codes(&mine), vec!["P-b", "P-d", "P-e"]);
    let bobs = store
        .list_projects(list("usr_bob", true, None, 100))
        .await
        .expect("list");
    assert_eq!(
        bobs.iter()
            .map(|(p, role)| (p.code.as_str(), *role))
            .collect::<Vec<_>>(),
        vec![("P-b", Some(ProjectRole::Manager))],
        "each caller sees their own role"
    );
    assert!(
        store
            .list_projects(list("usr_nobody", true, None, 100))
            .await
            .expect("list")
            .is_empty()
    );

    let page1 = store
        .list_projects(list("usr_alice", false, None, 2))
        .await
        .expect("list");
    assert_eq!(codes(&page1), vec!["P-a", "P-b"]);
    let page2 = store
        .list_projects(list("usr_alice", false, Some("P-b"), 2))
        .await
        .expect("list");
    assert_eq!(codes(&page2), vec!["P-c", "P-d"]);
    let page3 = store
        .list_projects(list("usr_alice", false, Some("P-d"), 2))
        .await
        .expect("list");
    assert_eq!(codes(&page3), vec!["P-e"]);
    let mine_after = store
        .list_projects(list("usr_alice", true, Some("P-b"), 1))
        .await
        .expect("list");
    assert_eq!(codes(&mine_after), vec!["P-d"]);
}

/// Roles are set (inserted or changed) and removed by user id in one call; `project_role` and
/// `project_members` (by email) show the result; other projects are untouched.
pub async fn check_change_project_roles(store: Arc<dyn Store>) {
    let zed = user(&store, "usr_zed").await;
    let amy = user(&store, "usr_amy").await;
    let kim = member(&store, "usr_kim", Membership::External).await;
    projects(&store, &["PRJ-1", "PRJ-2"]).await;
    store
        .change_project_roles(
            "PRJ-1",
            vec![
                ("usr_zed".to_string(), ProjectRole::Viewer),
                ("usr_amy".to_string(), ProjectRole::Manager),
            ],
            vec![],
        )
        .await
        .expect("set");
    store
        .change_project_roles(
            "PRJ-2",
            vec![("usr_zed".to_string(), ProjectRole::Editor)],
            vec![],
        )
        .await
        .expect("set");
    let members = store.project_members("PRJ-1").await.expect("members");
    assert_eq!(
        members
            .iter()
            .map(|m| (m.account.clone(), m.role))
            .collect::<Vec<_>>(),
        vec![
            (amy.clone(), ProjectRole::Manager),
            (zed.clone(), ProjectRole::Viewer)
        ],
        "members by email, with their accounts and roles"
    );

    // Change one, add one, remove one (and one who holds no role), at once.
    store
        .change_project_roles(
            "PRJ-1",
            vec![
                ("usr_zed".to_string(), ProjectRole::Editor),
                ("usr_kim".to_string(), ProjectRole::Viewer),
            ],
            vec!["usr_amy".to_string(), "usr_nobody".to_string()],
        )
        .await
        .expect("change");
    assert_eq!(
        store.project_role("PRJ-1", "usr_zed").await.expect("role"),
        Some(ProjectRole::Editor)
    );
    assert_eq!(
        store.project_role("PRJ-1", "usr_kim").await.expect("role"),
        Some(ProjectRole::Viewer)
    );
    assert_eq!(
        store.project_role("PRJ-1", "usr_amy").await.expect("role"),
        None
    );
    let members = store.project_members("PRJ-1").await.expect("members");
    assert_eq!(
        members
            .iter()
            .map(|m| (m.account.user.id.as_str(), m.role))
            .collect::<Vec<_>>(),
        vec![
            (kim.user.id.as_str(), ProjectRole::Viewer),
            (zed.user.id.as_str(), ProjectRole::Editor)
        ]
    );
    assert_eq!(
        store.project_role("PRJ-2", "usr_zed").await.expect("role"),
        Some(ProjectRole::Editor),
        "other projects are untouched"
    );
    assert_eq!(
        store.project_role("PRJ-3", "usr_zed").await.expect("role"),
        None
    );
    assert!(
        store
            .project_members("PRJ-404")
            .await
            .expect("members")
            .is_empty()
    );

    store
        .change_project_roles("PRJ-1", vec![], vec!["usr_zed".to_string()])
        .await
        .expect("remove");
    assert_eq!(
        store
            .project_members("PRJ-1")
            .await
            .expect("members")
            .into_iter()
            .map(|m| m.account.user.id)
            .collect::<Vec<_>>(),
        vec!["usr_kim".to_string()]
    );
}

/// Linking is guarded by the expected current project: it succeeds only from there, raising
/// `change_seq` and setting `updated_at`; otherwise it answers `false` and writes nothing. A
/// missing document is `NotFound`. `review_state` carries the linked project.
pub async fn check_link_project(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    projects(&store, &["PRJ-1", "PRJ-2"]).await;
    review(&store, "rev", "usr_alice", T0).await;
    let before = head(&store, "rev").await.review;

    assert!(
        !store
            .link_project("rev", Some("PRJ-2"), Some("PRJ-1"), T0 + 5)
            .await
            .expect("link"),
        "not linked to PRJ-2"
    );
    assert_eq!(head(&store, "rev").await.review, before, "nothing written");

    assert!(
        store
            .link_project("rev", None, Some("PRJ-1"), T0 + 10)
            .await
            .expect("link")
    );
    let linked = head(&store, "rev").await.review;
    assert_eq!(linked.project_code.as_deref(), Some("PRJ-1"));
    assert_eq!(linked.change_seq, before.change_seq + 1);
    assert_eq!(linked.updated_at, T0 + 10);
    assert_eq!(linked.comments_revision, before.comments_revision);
    let state = store
        .review_state("rev")
        .await
        .expect("state")
        .expect("exists");
    assert_eq!(state.project, Some(project("PRJ-1")));

    // Linked elsewhere now: neither "from nothing" nor "from PRJ-2" applies.
    for expected in [None, Some("PRJ-2")] {
        assert!(
            !store
                .link_project("rev", expected, Some("PRJ-2"), T0 + 20)
                .await
                .expect("link")
        );
    }
    assert_eq!(head(&store, "rev").await.review, linked, "nothing written");

    assert!(
        store
            .link_project("rev", Some("PRJ-1"), Some("PRJ-2"), T0 + 30)
            .await
            .expect("move")
    );
    let moved = head(&store, "rev").await.review;
    assert_eq!(moved.project_code.as_deref(), Some("PRJ-2"));
    assert_eq!(moved.change_seq, linked.change_seq + 1);

    assert!(
        store
            .link_project("rev", Some("PRJ-2"), None, T0 + 40)
            .await
            .expect("unlink")
    );
    let unlinked = head(&store, "rev").await.review;
    assert_eq!(unlinked.project_code, None);
    assert_eq!(unlinked.change_seq, moved.change_seq + 1);
    assert_eq!(unlinked.updated_at, T0 + 40);
    let state = store
        .review_state("rev")
        .await
        .expect("state")
        .expect("exists");
    assert_eq!(state.project, None);

    assert_not_found(
        store
            .link_project("rev_missing", None, Some("PRJ-1"), T0)
            .await,
    );
}

/// A project role lets any member (external ones too) see the project's documents; sharing and
/// link mode still count only for internal members. List rows carry the project and the
/// caller's role in it.
pub async fn check_visibility_with_project_roles(store: Arc<dyn Store>) {
    user(&store, "usr_owner").await;
    let insider = user(&store, "usr_insider").await;
    let outsider = user(&store, "usr_outsider").await;
    let guest = member(&store, "usr_guest", Membership::External).await;
    let stranger = member(&store, "usr_stranger", Membership::External).await;
    projects(&store, &["PRJ-1", "PRJ-2"]).await;
    store
        .change_project_roles(
            "PRJ-1",
            vec![
                ("usr_insider".to_string(), ProjectRole::Viewer),
                ("usr_guest".to_string(), ProjectRole::Editor),
                ("usr_admin".to_string(), ProjectRole::Manager),
            ],
            vec![],
        )
        .await
        .expect_err("usr_admin does not exist yet");
    assert_eq!(
        store
            .project_role("PRJ-1", "usr_insider")
            .await
            .expect("role"),
        None,
        "a failed change writes none of its roles"
    );
    user(&store, "usr_admin").await;
    store
        .change_project_roles(
            "PRJ-1",
            vec![
                ("usr_insider".to_string(), ProjectRole::Viewer),
                ("usr_guest".to_string(), ProjectRole::Editor),
                ("usr_admin".to_string(), ProjectRole::Manager),
            ],
            vec![],
        )
        .await
        .expect("roles");
    store
        .change_project_roles(
            "PRJ-2",
            vec![("usr_stranger".to_string(), ProjectRole::Viewer)],
            vec![],
        )
        .await
        .expect("roles");

    let mut restricted = new_review("doc_restricted", "usr_owner", T0 + 1);
    restricted.review.access_mode = AccessMode::Restricted;
    store.create_review(restricted).await.expect("create");
    let linked = new_review("doc_link", "usr_owner", T0 + 2);
    store.create_review(linked).await.expect("create");
    let mut unlinked = new_review("doc_elsewhere", "usr_owner", T0 + 3);
    unlinked.review.access_mode = AccessMode::Restricted;
    store.create_review(unlinked).await.expect("create");
    for id in ["doc_restricted", "doc_link"] {
        assert!(
            store
                .link_project(id, None, Some("PRJ-1"), T0 + 10)
                .await
                .expect("link")
        );
    }
    let ids = |list: &[&str]| {
        list.iter()
            .map(std::string::ToString::to_string)
            .collect::<Vec<_>>()
    };

    // Both linked documents were touched at T0 + 10; ties are by id, newest first.
    assert_eq!(
        listed(&store, query(member_view(&guest))).await,
        ids(&["doc_restricted", "doc_link"]),
        "an external member with a role sees the project's documents, restricted or not"
    );
    assert!(
        listed(&store, query(member_view(&stranger)))
            .await
            .is_empty(),
        "an external member without a role in that project sees none of them"
    );
    assert_eq!(
        listed(&store, query(member_view(&insider))).await,
        ids(&["doc_restricted", "doc_link"]),
        "an internal member with a role sees the restricted one too"
    );
    assert_eq!(
        listed(&store, query(member_view(&outsider))).await,
        ids(&["doc_link"]),
        "an internal member without a role sees the link-mode one only"
    );

    let rows = store
        .list_reviews(query(member_view(&guest)))
        .await
        .expect("list");
    for row in &rows {
        assert_eq!(row.project, Some(project("PRJ-1")));
        assert_eq!(row.project_role, Some(ProjectRole::Editor));
        assert_eq!(row.grant, None);
    }
    let rows = store
        .list_reviews(query(member_view(&outsider)))
        .await
        .expect("list");
    assert_eq!(rows[0].project, Some(project("PRJ-1")));
    assert_eq!(rows[0].project_role, None, "no role of their own");
    let rows = store.list_reviews(query(all_view())).await.expect("list");
    let roles: Vec<(String, Option<ProjectRole>, bool)> = rows
        .iter()
        .map(|r| (r.review.id.clone(), r.project_role, r.project.is_some()))
        .collect();
    assert_eq!(
        roles,
        vec![
            (
                "doc_restricted".to_string(),
                Some(ProjectRole::Manager),
                true
            ),
            ("doc_link".to_string(), Some(ProjectRole::Manager), true),
            ("doc_elsewhere".to_string(), None, false),
        ],
        "`All` rows carry the caller's (usr_admin's) project role"
    );

    // The project filter of the list.
    let mut in_project = query(member_view(&insider));
    in_project.project = Some("PRJ-1".to_string());
    assert_eq!(
        listed(&store, in_project).await,
        ids(&["doc_restricted", "doc_link"])
    );

    // Losing the role, or the link, hides the documents again.
    store
        .change_project_roles("PRJ-1", vec![], vec!["usr_guest".to_string()])
        .await
        .expect("remove role");
    assert!(listed(&store, query(member_view(&guest))).await.is_empty());
    assert!(
        store
            .link_project("doc_restricted", Some("PRJ-1"), None, T0 + 20)
            .await
            .expect("unlink")
    );
    assert_eq!(
        listed(&store, query(member_view(&insider))).await,
        ids(&["doc_link"])
    );
}
