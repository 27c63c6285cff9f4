//! Search finds only what the caller may see.

use std::sync::Arc;

use docreview_core::model::{AccessMode, GrantRole, Membership, ProjectRole};
use docreview_core::store::{MATCH_END, MATCH_START, Store, Visibility};

use super::*;
use crate::fixtures::{
    T0, all_view, grant, member, member_view, new_review, projects, user, write_items,
};

/// Only comments of documents the caller can see are found: owners, grantees (internal),
/// link mode (internal), project roles (anyone); never a restricted document's comments for a
/// stranger.
pub async fn check_search_comments_visibility(store: Arc<dyn Store>) {
    let alice = user(&store, "usr_alice").await;
    let bob = user(&store, "usr_bob").await;
    let carol = user(&store, "usr_carol").await;
    let dave = member(&store, "usr_dave", Membership::External).await;
    let erin = member(&store, "usr_erin", Membership::External).await;
    projects(&store, &["PRJ-1"]).await;
    store
        .change_project_roles(
            "PRJ-1",
            vec![("usr_dave".to_string(), ProjectRole::Viewer)],
            vec![],
        )
        .await
        .expect("roles");
    let create = |id: &'static str, owner: &'static str, mode: AccessMode| {
        let mut new = new_review(id, owner, T0);
        new.review.access_mode = mode;
        new
    };
    store
        .create_review(create("pub", "usr_alice", AccessMode::Link))
        .await
        .expect("create");
    let mut secret = create("secret", "usr_alice", AccessMode::Restricted);
    secret.grants = vec![
        grant(&carol.email, GrantRole::Viewer),
        grant(&erin.email, GrantRole::Editor),
    ];
    store.create_review(secret).await.expect("create");
    store
        .create_review(create("proj", "usr_alice", AccessMode::Restricted))
        .await
        .expect("create");
    store
        .link_project("proj", None, Some("PRJ-1"), T0 + 1)
        .await
        .expect("link");
    store
        .create_review(create("bobs", "usr_bob", AccessMode::Restricted))
        .await
        .expect("create");
    for doc in ["pub", "secret", "proj", "bobs"] {
        let c = said(doc, &format!("{doc}_c"), "usr_alice", T0 + 2, "mango note");
        let replies = if doc == "secret" {
            vec![replied(&c, "secret_m", "usr_carol", T0 + 3, "mango reply")]
        } else {
            vec![]
        };
        write_items(&store, doc, vec![c], replies).await;
    }
    let mango = |visibility: Visibility| comment_search(visibility, words(&["mango"]));

    assert_eq!(
        found(&store, mango(all_view())).await,
        keys(&["pub_c", "secret_c", "secret_c/secret_m", "proj_c", "bobs_c"])
    );
    assert_eq!(
        found(&store, mango(member_view(&alice))).await,
        keys(&["pub_c", "secret_c", "secret_c/secret_m", "proj_c"]),
        "the owner"
    );
    assert_eq!(
        found(&store, mango(member_view(&bob))).await,
        keys(&["pub_c", "bobs_c"]),
        "an internal member: link mode and their own"
    );
    assert_eq!(
        found(&store, mango(member_view(&carol))).await,
        keys(&["pub_c", "secret_c", "secret_c/secret_m"]),
        "an internal grantee"
    );
    assert_eq!(
        found(&store, mango(member_view(&dave))).await,
        keys(&["proj_c"]),
        "an external member with a project role: that project only"
    );
    assert!(
        found(&store, mango(member_view(&erin))).await.is_empty(),
        "an external member: never through sharing or link mode"
    );
    let stranger = Visibility::Member {
        user_id: "usr_stranger".to_string(),
        email: "stranger@example.com".to_string(),
        internal: true,
    };
    assert_eq!(
        found(&store, mango(stranger.clone())).await,
        keys(&["pub_c"])
    );
    let mut asking_for_secret = mango(stranger);
    asking_for_secret.review_id = Some("secret".to_string());
    assert!(
        found(&store, asking_for_secret).await.is_empty(),
        "naming a restricted document does not open it"
    );
}

/// Document search sees what the list sees: owners, project members (external ones too), and
/// internal members through link mode; `All` sees everything and carries the caller's project
/// role. A hit's snippet is the text's when the text matches, else the title's. Comment search
/// follows the same rule, within one document too.
pub async fn check_search_follows_visibility_and_projects(store: Arc<dyn Store>) {
    user(&store, "usr_owner").await;
    let internal = user(&store, "usr_internal").await;
    let external = member(&store, "usr_external", Membership::External).await;
    projects(&store, &["PRJ-1"]).await;
    store
        .change_project_roles(
            "PRJ-1",
            vec![("usr_external".into(), ProjectRole::Viewer)],
            vec![],
        )
        .await
        .expect("roles");
    let mut restricted = new_review("restricted", "usr_owner", T0);
    restricted.review.access_mode = AccessMode::Restricted;
    restricted.review.title = "Zebra restricted".into();
    let mut linked = new_review("linked", "usr_owner", T0 + 1);
    linked.review.access_mode = AccessMode::Restricted;
    linked.review.title = "Zebra linked".into();
    linked.search_text = "The zebra crossing is in the linked document.".into();
    let mut open = new_review("open", "usr_owner", T0 + 2);
    open.review.title = "Open zebra".into();
    for new in [restricted, linked, open] {
        store.create_review(new).await.expect("create");
    }
    assert!(
        store
            .link_project("linked", None, Some("PRJ-1"), T0 + 3)
            .await
            .expect("link")
    );

    let zebra = |visibility: Visibility| review_search(visibility, words(&["zebra"]));
    assert_eq!(
        docs_found(&store, zebra(member_view(&external))).await,
        ["linked"]
    );
    assert_eq!(
        docs_found(&store, zebra(member_view(&internal))).await,
        ["open"]
    );
    let as_all = Visibility::All {
        user_id: "usr_external".into(),
    };
    let all = doc_hits(&store, zebra(as_all.clone())).await;
    assert_eq!(
        docs_found(&store, zebra(as_all)).await,
        ["linked", "open", "restricted"]
    );
    let hit = |id: &str| {
        all.iter()
            .find(|hit| hit.summary.review.id == id)
            .unwrap_or_else(|| panic!("{id} found"))
    };
    let linked = hit("linked");
    assert_eq!(linked.summary.project_role, Some(ProjectRole::Viewer));
    assert_eq!(
        linked.summary.project.as_ref().map(|p| p.code.as_str()),
        Some("PRJ-1")
    );
    assert_eq!(
        linked.snippet,
        format!("The {MATCH_START}zebra{MATCH_END} crossing is in the linked document.")
    );
    assert_eq!(
        hit("open").snippet,
        format!("Open {MATCH_START}zebra{MATCH_END}")
    );

    for id in ["restricted", "linked", "open"] {
        let item = said(
            id,
            &format!("c_{id}"),
            "usr_owner",
            T0 + 10,
            &format!("A giraffe in {id}."),
        );
        let reply = replied(
            &item,
            &format!("m_{id}"),
            "usr_owner",
            T0 + 11,
            "Another giraffe.",
        );
        write_items(&store, id, vec![item], vec![reply]).await;
    }
    let giraffes = |visibility: Visibility| comment_search(visibility, words(&["gir"]));
    assert_eq!(
        found(&store, giraffes(member_view(&external))).await,
        keys(&["c_linked", "c_linked/m_linked"])
    );
    assert_eq!(
        found(&store, giraffes(member_view(&internal))).await,
        keys(&["c_open", "c_open/m_open"])
    );
    assert_eq!(found(&store, giraffes(all_view())).await.len(), 6);
    let mut elsewhere = giraffes(member_view(&external));
    elsewhere.review_id = Some("open".into());
    assert!(found(&store, elsewhere).await.is_empty());
}

/// Members who see many documents (more than a backend may name to its index one by one) are
/// filtered match by match (internal members) or by the set of their documents (external
/// members): either way exactly what they may see, and a document filter still applies.
pub async fn check_search_members_seeing_many_documents(store: Arc<dyn Store>) {
    user(&store, "usr_a").await;
    let internal = user(&store, "usr_b").await;
    let external = member(&store, "usr_guest", Membership::External).await;
    projects(&store, &["P1"]).await;
    store
        .change_project_roles(
            "P1",
            vec![("usr_guest".to_string(), ProjectRole::Viewer)],
            vec![],
        )
        .await
        .expect("role");
    // 80 link-mode documents, 80 restricted ones in the project, 10 restricted outside it.
    let mut seen_by_internal = Vec::new();
    let mut seen_by_external = Vec::new();
    for n in 0..170 {
        let id = format!("r{n:03}");
        let mut new = new_review(&id, "usr_a", T0);
        if n >= 80 {
            new.review.access_mode = AccessMode::Restricted;
        }
        if (80..160).contains(&n) {
            new.review.project_code = Some("P1".to_string());
        }
        store.create_review(new).await.expect("create");
        let item = said(&id, &format!("c{n:03}"), "usr_a", T0 + 1, "needle in text");
        write_items(&store, &id, vec![item], vec![]).await;
        match n {
            0..80 => seen_by_internal.push(format!("c{n:03}")),
            80..160 => seen_by_external.push(format!("c{n:03}")),
            _ => {}
        }
    }
    let needles = |visibility: Visibility, review_id: Option<&str>| {
        let mut search = comment_search(visibility, words(&["needle"]));
        search.review_id = review_id.map(str::to_string);
        search.limit = 200;
        found(&store, search)
    };
    assert_eq!(
        needles(member_view(&internal), None).await,
        seen_by_internal
    );
    assert_eq!(
        needles(member_view(&external), None).await,
        seen_by_external
    );
    assert_eq!(needles(all_view(), None).await.len(), 170);
    assert_eq!(
        needles(member_view(&internal), Some("r005")).await,
        ["c005"]
    );
    assert!(
        needles(member_view(&internal), Some("r100"))
            .await
            .is_empty()
    );
    assert_eq!(
        needles(member_view(&external), Some("r100")).await,
        ["c100"]
    );
    assert!(
        needles(member_view(&external), Some("r005"))
            .await
            .is_empty()
    );
    assert!(needles(all_view(), Some("r999")).await.is_empty());
}
