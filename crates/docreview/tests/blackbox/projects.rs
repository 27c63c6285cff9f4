//! Projects: the snapshot import, roles, documents created in or linked to a project, and what
//! a project role lets a member (external ones included) do. Covers every error code of the
//! reference's create-a-review table.
//!
//! Requests go through the typed client. The snapshot is loaded with the operator command
//! (`admin import-projects`, JSON on standard input), and the raw helpers send only bodies the
//! schema refuses.

use crate::support::{Client, Server, refused};
use docreview_client::api::{
    AccessMode, AllowedUserEntry, CreateReview, GrantRole, ListQuery, PageQuery, ProjectLinkView,
    ProjectRole, ProjectView, ReviewInput, ReviewView, Role, RoleGrant, RoleRevocation,
    RolesChange, SharingChange, SourceInput, TitleChange,
};
use docreview_client::{DocumentUpload, HtmlFile};
use serde_json::json;

struct World {
    server: Server,
    /// Org admin, every scope.
    ada: Client,
    /// Manager of ACME.
    grace: Client,
    /// Internal member without a project role.
    alan: Client,
    /// External member, editor in ACME.
    kate: Client,
    /// External member, viewer in ACME.
    vic: Client,
    /// External member without any role.
    ext: Client,
}

const ALL: &str = "docs,access,comments,org";

fn add(email: &str, role: ProjectRole) -> RoleGrant {
    RoleGrant {
        email: email.to_string(),
        role,
    }
}

fn remove(email: &str) -> RoleRevocation {
    RoleRevocation {
        email: email.to_string(),
    }
}

fn roles(add: Vec<RoleGrant>, remove: Vec<RoleRevocation>) -> RolesChange {
    RolesChange { add, remove }
}

async fn world() -> World {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &["--admin"], ALL);
    let grace = server.user("grace@example.com", "Grace", &[], ALL);
    let alan = server.user("alan@example.com", "Alan", &[], ALL);
    let kate = server.user("kate@partner.example", "Kate", &["--external"], ALL);
    let vic = server.user("vic@partner.example", "Vic", &["--external"], ALL);
    let ext = server.user("ext@partner.example", "Ext", &["--external"], ALL);
    let printed = server.import_projects(&json!({ "projects": [
        { "code": "ACME", "name": "Acme rollout", "company": "Acme Corp", "status": "active" },
        { "code": "OLD-1", "name": "Old", "company": null, "status": "inactive" },
        { "code": "GONE", "name": "Gone soon", "company": "Gone", "status": "active" }
    ]}));
    assert!(printed.contains("3 new"), "{printed}");
    // GONE drops out of the next snapshot.
    let printed = server.import_projects(&json!({ "projects": [
        { "code": "ACME", "name": "Acme rollout", "company": "Acme Corp", "status": "active" },
        { "code": "OLD-1", "name": "Old", "status": "inactive" }
    ]}));
    assert!(
        printed.contains("2 updated") && printed.contains("1 no longer"),
        "{printed}"
    );
    let change = roles(
        vec![
            add("grace@example.com", ProjectRole::Manager),
            add("kate@partner.example", ProjectRole::Editor),
            add("vic@partner.example", ProjectRole::Viewer),
        ],
        vec![],
    );
    ada.api()
        .change_project_roles("ACME", &change)
        .await
        .expect("roles");
    World {
        server,
        ada,
        grace,
        alan,
        kate,
        vic,
        ext,
    }
}

fn create_in(project: &str, title: &str) -> CreateReview {
    CreateReview {
        review: ReviewInput {
            title: Some(title.to_string()),
            source: Some(SourceInput {
                html: Some("<p>Project text.</p>".into()),
                label: None,
            }),
            ..ReviewInput::default()
        },
        project: Some(project.to_string()),
    }
}

/// Creates `input` as `client`.
async fn create(client: &Client, input: &CreateReview) -> docreview_client::Result<ReviewView> {
    client.api().create_review(input).await
}

/// Asserts a project as listed: code, name, company, status, whether in the snapshot, role.
#[track_caller]
fn assert_project(
    project: &ProjectView,
    (code, name, company, status, in_snapshot, role): (
        &str,
        Option<&str>,
        Option<&str>,
        &str,
        bool,
        Option<ProjectRole>,
    ),
) {
    assert_eq!(project.code, code, "{project:?}");
    assert_eq!(project.name.as_deref(), name, "{project:?}");
    assert_eq!(project.company.as_deref(), company, "{project:?}");
    assert_eq!(project.status, status, "{project:?}");
    assert_eq!(project.in_snapshot, in_snapshot, "{project:?}");
    assert_eq!(project.role, role, "{project:?}");
}

#[tokio::test]
async fn the_snapshot_import_rejects_bad_files_and_writes_nothing() {
    let server = Server::start();
    for (snapshot, why) in [
        (
            r#"{ "projects": [{ "code": "bad code", "status": "active" }] }"#,
            "code",
        ),
        (
            r#"{ "projects": [{ "code": "A", "status": "open" }] }"#,
            "status",
        ),
        (
            r#"{ "projects": [{ "code": "A", "status": "active" }, { "code": "A", "status": "active" }] }"#,
            "more than once",
        ),
        (r#"{ "project": [] }"#, "snapshot"),
        ("not json", "snapshot"),
    ] {
        let output = server.admin_with_input(&["import-projects", "-"], snapshot);
        assert!(!output.status.success(), "{snapshot} was accepted");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(why), "{snapshot}: {stderr}");
    }
    let missing = server.admin(&["import-projects", "/nonexistent/file.json"]);
    assert!(!missing.status.success());
    let ada = server.user("ada@example.com", "Ada", &["--admin"], ALL);
    let listed = ada
        .api()
        .projects(&PageQuery::default())
        .await
        .expect("projects");
    assert!(listed.projects.is_empty(), "nothing was written");
}

#[tokio::test]
async fn projects_are_listed_with_the_callers_role() {
    let w = world().await;
    let projects = w
        .grace
        .api()
        .projects(&PageQuery::default())
        .await
        .expect("projects")
        .projects;
    let codes: Vec<_> = projects.iter().map(|p| p.code.as_str()).collect();
    assert_eq!(codes, ["ACME", "GONE", "OLD-1"]);
    assert_project(
        &projects[0],
        (
            "ACME",
            Some("Acme rollout"),
            Some("Acme Corp"),
            "active",
            true,
            Some(ProjectRole::Manager),
        ),
    );
    assert!(!projects[1].in_snapshot);
    assert_eq!(projects[2].status, "inactive");
    assert_eq!(projects[2].role, None);
    assert_eq!(projects[2].company, None);

    // External members see only the projects they hold a role in.
    let theirs = w
        .kate
        .api()
        .projects(&PageQuery::default())
        .await
        .expect("projects");
    assert_eq!(theirs.projects.len(), 1);
    assert_eq!(theirs.projects[0].role, Some(ProjectRole::Editor));
    let none = w
        .ext
        .api()
        .projects(&PageQuery::default())
        .await
        .expect("projects");
    assert!(none.projects.is_empty());

    let page = w
        .alan
        .api()
        .projects(&PageQuery {
            limit: Some(2),
            cursor: None,
        })
        .await
        .expect("first page");
    let cursor = page.next_cursor.expect("more");
    let next = w
        .alan
        .api()
        .projects(&PageQuery {
            limit: Some(2),
            cursor: Some(cursor),
        })
        .await
        .expect("next page");
    assert_eq!(next.projects[0].code, "OLD-1");
    assert!(next.next_cursor.is_none());
    refused(
        w.server.agent().api().projects(&PageQuery::default()).await,
        403,
        "forbidden",
    );
}

#[tokio::test]
async fn project_roles_are_read_by_members_and_changed_by_managers() {
    let w = world().await;
    let body = w.alan.api().project_roles("ACME").await.expect("roles");
    assert_eq!(body.project.code, "ACME");
    let listed: Vec<(String, ProjectRole)> = body
        .roles
        .iter()
        .map(|r| (r.email.clone(), r.role))
        .collect();
    assert_eq!(
        listed,
        [
            ("grace@example.com".to_string(), ProjectRole::Manager),
            ("kate@partner.example".into(), ProjectRole::Editor),
            ("vic@partner.example".into(), ProjectRole::Viewer),
        ]
    );
    assert_eq!(body.roles[0].user.display_name, "Grace");

    // A manager changes roles; everything in one change is checked before anything is written.
    let changed = w
        .grace
        .api()
        .change_project_roles(
            "ACME",
            &roles(
                vec![
                    add("vic@partner.example", ProjectRole::Editor),
                    add("alan@example.com", ProjectRole::Viewer),
                ],
                vec![remove("kate@partner.example")],
            ),
        )
        .await
        .expect("change roles");
    let roles_now = changed.roles;
    assert_eq!(roles_now.len(), 3);
    assert!(
        roles_now
            .iter()
            .any(|r| r.email == "vic@partner.example" && r.role == ProjectRole::Editor)
    );
    assert!(!roles_now.iter().any(|r| r.email == "kate@partner.example"));
    let bad = w
        .grace
        .api()
        .change_project_roles(
            "ACME",
            &roles(
                vec![
                    add("kate@partner.example", ProjectRole::Viewer),
                    add("nobody@example.com", ProjectRole::Viewer),
                ],
                vec![],
            ),
        )
        .await;
    refused(bad, 400, "invalid_request");
    let unchanged = w.grace.api().project_roles("ACME").await.expect("roles");
    assert!(
        !unchanged
            .roles
            .iter()
            .any(|r| r.email == "kate@partner.example" || r.user.email == "kate@partner.example"),
        "nothing was written: {unchanged:?}"
    );

    refused(
        w.alan
            .api()
            .change_project_roles("ACME", &roles(vec![], vec![remove("vic@partner.example")]))
            .await,
        403,
        "forbidden",
    );
    // `owner` is no project role (raw: the typed client cannot send it).
    w.grace
        .patch(
            "/api/projects/ACME/roles",
            &json!({ "add": [{ "email": "alan@example.com", "role": "owner" }] }),
        )
        .await
        .expect_error(400, "invalid_request");
    refused(
        w.grace
            .api()
            .change_project_roles("ACME", &roles(vec![], vec![]))
            .await,
        400,
        "invalid_request",
    );
    refused(
        w.grace
            .api()
            .change_project_roles(
                "ACME",
                &roles(
                    vec![add("alan@example.com", ProjectRole::Viewer)],
                    vec![remove("alan@example.com")],
                ),
            )
            .await,
        400,
        "invalid_request",
    );
    refused(
        w.grace.api().project_roles("NOPE").await,
        404,
        "project_not_found",
    );
    refused(
        w.grace.api().project_roles("not a code").await,
        400,
        "invalid_request",
    );
    // External members cannot see projects they hold no role in.
    refused(
        w.ext.api().project_roles("ACME").await,
        404,
        "project_not_found",
    );
    // Changing roles needs the `access` scope.
    let docs_only = w
        .server
        .client(Some(&w.server.issue_token("grace@example.com", "docs")));
    refused(
        docs_only
            .api()
            .change_project_roles("ACME", &roles(vec![], vec![remove("vic@partner.example")]))
            .await,
        403,
        "insufficient_scope",
    );
}

#[tokio::test]
async fn creating_in_a_project_answers_every_code_of_the_reference() {
    let w = world().await;
    // 201: a server-made id, linked, with the caller's role in `_project`.
    let review = create(&w.kate, &create_in("ACME", "Partner draft"))
        .await
        .expect("create");
    assert!(review.review_id.starts_with("rv_"), "{}", review.review_id);
    assert_eq!(
        review.project,
        Some(ProjectLinkView {
            code: "ACME".into(),
            name: Some("Acme rollout".into()),
            company: Some("Acme Corp".into()),
            status: "active".into(),
            in_snapshot: true,
            role: Some(ProjectRole::Editor),
        })
    );
    let file = HtmlFile {
        name: "up.html".into(),
        bytes: b"<p>Uploaded.</p>".to_vec(),
    };
    let fields = DocumentUpload {
        project: Some("ACME".into()),
        ..DocumentUpload::default()
    };
    let imported = w
        .kate
        .api()
        .import_html(&file, &fields)
        .await
        .expect("upload");
    assert_eq!(imported.project.expect("_project").code, "ACME");

    // 400 invalid_request: a reviewId together with project; a malformed code; malformed data.
    let mut with_id = create_in("ACME", "x");
    with_id.review.review_id = Some("my-own-id".into());
    refused(create(&w.ada, &with_id).await, 400, "invalid_request");
    refused(
        create(&w.ada, &create_in("acme", "x")).await,
        400,
        "invalid_request",
    );
    // A review that is no object (raw: the typed client cannot send it).
    w.ada
        .post(
            "/api/reviews",
            &json!({ "project": "ACME", "review": "nope" }),
        )
        .await
        .expect_error(400, "invalid_request");
    // 401: no token.
    refused(
        create(&w.server.client(None), &create_in("ACME", "x")).await,
        401,
        "unauthorized",
    );
    // 403 project_required: external callers must name a project.
    let loose = CreateReview {
        review: ReviewInput {
            title: Some("Loose".into()),
            ..ReviewInput::default()
        },
        project: None,
    };
    refused(create(&w.kate, &loose).await, 403, "project_required");
    // 403 project_role_required: no role, or only viewer.
    for client in [&w.ext, &w.vic, &w.alan] {
        refused(
            create(client, &create_in("ACME", "x")).await,
            403,
            "project_role_required",
        );
    }
    // 403 insufficient_scope and forbidden.
    let comments_only = w
        .server
        .client(Some(&w.server.issue_token("grace@example.com", "comments")));
    refused(
        create(&comments_only, &create_in("ACME", "x")).await,
        403,
        "insufficient_scope",
    );
    refused(
        create(&w.ada, &create_in("OLD-1", "x")).await,
        403,
        "forbidden",
    );
    // 404 project_not_found; 409 project_not_in_snapshot.
    refused(
        create(&w.ada, &create_in("NOPE", "x")).await,
        404,
        "project_not_found",
    );
    refused(
        create(&w.ada, &create_in("GONE", "x")).await,
        409,
        "project_not_in_snapshot",
    );
    // The shared import token delivers into any active project in the snapshot.
    create(&w.server.importer(), &create_in("ACME", "Delivered"))
        .await
        .expect("delivered");
}

#[tokio::test]
async fn a_project_role_opens_the_projects_documents_and_nothing_else() {
    let w = world().await;
    let linked = create(&w.grace, &create_in("ACME", "Linked"))
        .await
        .expect("create")
        .review_id;
    let restrict = SharingChange {
        mode: Some(AccessMode::Restricted),
        allowed_users: None,
    };
    w.grace
        .api()
        .change_sharing(&linked, &restrict)
        .await
        .expect("restrict");
    let other = w
        .grace
        .upload("Not in a project", "<p>Elsewhere.</p>")
        .await
        .review_id;

    let as_kate = w.kate.api().review(&linked, false).await.expect("read");
    assert_eq!(as_kate.role, Role::Editor);
    assert_eq!(
        as_kate.project.expect("_project").role,
        Some(ProjectRole::Editor)
    );
    let as_vic = w.vic.api().review(&linked, false).await.expect("read");
    assert_eq!(as_vic.role, Role::Viewer);
    let title = |title: &str| TitleChange {
        title: title.to_string(),
    };
    refused(
        w.vic.api().rename_review(&linked, &title("No")).await,
        403,
        "forbidden",
    );
    w.kate
        .api()
        .rename_review(&linked, &title("Renamed by Kate"))
        .await
        .expect("rename");
    w.vic
        .note_on(&linked, "Project text", "Viewers comment too")
        .await;
    refused(w.kate.api().review(&other, false).await, 404, "not_found");
    refused(w.ext.api().review(&linked, false).await, 404, "not_found");
    // A restricted document linked to a project is open to its members, internal ones too.
    refused(w.alan.api().review(&linked, false).await, 404, "not_found");
    w.grace
        .api()
        .change_project_roles(
            "ACME",
            &roles(vec![add("alan@example.com", ProjectRole::Viewer)], vec![]),
        )
        .await
        .expect("roles");
    let as_alan = w.alan.api().review(&linked, false).await.expect("read");
    assert_eq!(as_alan.role, Role::Viewer);

    let listed = w
        .kate
        .api()
        .list_reviews(&ListQuery::default())
        .await
        .expect("list");
    let ids: Vec<_> = listed.reviews.iter().map(|r| r.review_id.clone()).collect();
    assert_eq!(ids, std::slice::from_ref(&linked));
    assert_eq!(
        listed.reviews[0].project.as_ref().expect("_project").code,
        "ACME"
    );
    let filtered = w
        .ada
        .api()
        .list_reviews(&ListQuery {
            project: Some("ACME".into()),
            ..ListQuery::default()
        })
        .await
        .expect("list");
    assert_eq!(filtered.reviews.len(), 1);

    // Losing the role closes the document again.
    w.grace
        .api()
        .change_project_roles("ACME", &roles(vec![], vec![remove("kate@partner.example")]))
        .await
        .expect("roles");
    refused(w.kate.api().review(&linked, false).await, 404, "not_found");
}

#[tokio::test]
async fn linking_and_unlinking_documents() {
    let w = world().await;
    let review = w.grace.upload("Plan", "<p>Plan text.</p>").await;
    let id = review.review_id.clone();
    assert!(review.project.is_none());

    let linked = w.grace.api().link_project("ACME", &id).await.expect("link");
    let project = linked.project.expect("_project");
    assert_eq!(project.code, "ACME");
    assert_eq!(project.role, Some(ProjectRole::Manager));
    // Idempotent for the same project; a conflict for another.
    w.grace
        .api()
        .link_project("ACME", &id)
        .await
        .expect("link again");
    refused(
        w.ada.api().link_project("OLD-1", &id).await,
        409,
        "project_conflict",
    );

    let fresh = w.grace.upload("Another", "<p>Text.</p>").await.review_id;
    refused(
        w.ada.api().link_project("GONE", &fresh).await,
        409,
        "project_not_in_snapshot",
    );
    refused(
        w.ada.api().link_project("OLD-1", &fresh).await,
        403,
        "forbidden",
    );
    refused(
        w.ada.api().link_project("NOPE", &fresh).await,
        404,
        "project_not_found",
    );
    refused(
        w.ada.api().link_project("ACME", "rv_missing").await,
        404,
        "not_found",
    );
    // Alan can edit the document but holds no role in the project.
    let share = SharingChange {
        mode: None,
        allowed_users: Some(vec![AllowedUserEntry {
            email: "alan@example.com".into(),
            role: GrantRole::Editor,
        }]),
    };
    w.grace
        .api()
        .change_sharing(&fresh, &share)
        .await
        .expect("share");
    refused(
        w.alan.api().link_project("ACME", &fresh).await,
        403,
        "project_role_required",
    );

    // Unlinking.
    refused(
        w.ada.api().unlink_project("OLD-1", &id).await,
        404,
        "not_found",
    );
    let unlinked = w
        .grace
        .api()
        .unlink_project("ACME", &id)
        .await
        .expect("unlink");
    assert!(unlinked.project.is_none());
    refused(
        w.grace.api().unlink_project("ACME", &id).await,
        404,
        "not_found",
    );
    let read = w.grace.api().review(&id, false).await.expect("read");
    assert!(read.project.is_none());
}

#[tokio::test]
async fn a_new_snapshot_shows_in_project_links_at_once() {
    let w = world().await;
    let id = create(&w.grace, &create_in("ACME", "Cached"))
        .await
        .expect("create")
        .review_id;
    let project_of = |review: ReviewView| review.project.expect("_project");
    // Read twice so any per-node rendering cache holds the document.
    for _ in 0..2 {
        let read = w.grace.api().review(&id, false).await.expect("read");
        assert_eq!(project_of(read).status, "active");
    }
    w.server.import_projects(&json!({ "projects": [
        { "code": "ACME", "name": "Acme (closed)", "company": "Acme Corp", "status": "inactive" }
    ]}));
    let read = w.grace.api().review(&id, false).await.expect("read");
    let project = project_of(read);
    assert_eq!(project.status, "inactive");
    assert_eq!(project.name.as_deref(), Some("Acme (closed)"));
    let dropped = w.server.import_projects(&json!({ "projects": [] }));
    assert!(dropped.contains("3 no longer"), "{dropped}");
    let read = w.grace.api().review(&id, false).await.expect("read");
    assert!(!project_of(read).in_snapshot);
    // Links survive leaving the snapshot; new links into it do not.
    let listed = w
        .grace
        .api()
        .list_reviews(&ListQuery {
            project: Some("ACME".into()),
            ..ListQuery::default()
        })
        .await
        .expect("list");
    assert_eq!(listed.reviews.len(), 1);
}
