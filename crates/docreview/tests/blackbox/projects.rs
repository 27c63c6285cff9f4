//! Projects: the snapshot import, roles, documents created in or linked to a project, and what
//! a project role lets a member (external ones included) do. Covers every error code of the
//! reference's create-a-review table.

use crate::support::{Client, Server, html_part};
use serde_json::{Value, json};

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
    ada.patch(
        "/api/projects/ACME/roles",
        &json!({ "add": [
            { "email": "grace@example.com", "role": "manager" },
            { "email": "kate@partner.example", "role": "editor" },
            { "email": "vic@partner.example", "role": "viewer" }
        ]}),
    )
    .await
    .expect(200);
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

fn create_in(project: &str, title: &str) -> Value {
    json!({ "project": project, "review": { "title": title, "source": { "html": "<p>Project text.</p>" } } })
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
    let listed = ada.get("/api/projects").await;
    assert_eq!(
        listed.expect(200)["projects"],
        json!([]),
        "nothing was written"
    );
}

#[tokio::test]
async fn projects_are_listed_with_the_callers_role() {
    let w = world().await;
    let listed = w.grace.get("/api/projects").await;
    let projects = listed.expect(200)["projects"]
        .as_array()
        .expect("projects")
        .clone();
    let codes: Vec<_> = projects
        .iter()
        .map(|p| p["code"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(codes, ["ACME", "GONE", "OLD-1"]);
    assert_eq!(
        projects[0],
        json!({ "code": "ACME", "name": "Acme rollout", "company": "Acme Corp", "status": "active", "inSnapshot": true, "role": "manager" })
    );
    assert_eq!(projects[1]["inSnapshot"], false);
    assert_eq!(projects[2]["status"], "inactive");
    assert_eq!(projects[2]["role"], Value::Null);
    assert_eq!(projects[2]["company"], Value::Null);

    // External members see only the projects they hold a role in.
    let theirs = w.kate.get("/api/projects").await;
    assert_eq!(
        theirs.expect(200)["projects"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(theirs.json["projects"][0]["role"], "editor");
    assert_eq!(
        w.ext.get("/api/projects").await.expect(200)["projects"],
        json!([])
    );

    let page = w.alan.get("/api/projects?limit=2").await;
    let cursor = page.expect(200)["nextCursor"]
        .as_str()
        .expect("more")
        .to_string();
    let next = w
        .alan
        .get(&format!("/api/projects?limit=2&cursor={cursor}"))
        .await;
    assert_eq!(next.expect(200)["projects"][0]["code"], "OLD-1");
    assert!(next.json["nextCursor"].is_null());
    w.server
        .agent()
        .get("/api/projects")
        .await
        .expect_error(403, "forbidden");
}

#[tokio::test]
async fn project_roles_are_read_by_members_and_changed_by_managers() {
    let w = world().await;
    let roles = w.alan.get("/api/projects/ACME/roles").await;
    let body = roles.expect(200).clone();
    assert_eq!(body["project"]["code"], "ACME");
    let listed: Vec<(String, String)> = body["roles"]
        .as_array()
        .expect("roles")
        .iter()
        .map(|r| {
            (
                r["email"].as_str().unwrap_or_default().into(),
                r["role"].as_str().unwrap_or_default().into(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("grace@example.com".to_string(), "manager".to_string()),
            ("kate@partner.example".into(), "editor".into()),
            ("vic@partner.example".into(), "viewer".into()),
        ]
    );
    assert_eq!(body["roles"][0]["user"]["displayName"], "Grace");

    // A manager changes roles; everything in one change is checked before anything is written.
    let changed = w
        .grace
        .patch(
            "/api/projects/ACME/roles",
            &json!({ "add": [{ "email": "vic@partner.example", "role": "editor" }, { "email": "alan@example.com", "role": "viewer" }],
                     "remove": [{ "email": "kate@partner.example" }] }),
        )
        .await;
    let roles = changed.expect(200)["roles"]
        .as_array()
        .expect("roles")
        .clone();
    assert_eq!(roles.len(), 3);
    assert!(
        roles
            .iter()
            .any(|r| r["email"] == "vic@partner.example" && r["role"] == "editor")
    );
    assert!(!roles.iter().any(|r| r["email"] == "kate@partner.example"));
    let bad = w
        .grace
        .patch(
            "/api/projects/ACME/roles",
            &json!({ "add": [{ "email": "kate@partner.example", "role": "viewer" }, { "email": "nobody@example.com", "role": "viewer" }] }),
        )
        .await;
    bad.expect_error(400, "invalid_request");
    let unchanged = w.grace.get("/api/projects/ACME/roles").await;
    assert!(
        !unchanged.text.contains("kate@partner.example"),
        "nothing was written"
    );

    w.alan
        .patch(
            "/api/projects/ACME/roles",
            &json!({ "remove": [{ "email": "vic@partner.example" }] }),
        )
        .await
        .expect_error(403, "forbidden");
    w.grace
        .patch(
            "/api/projects/ACME/roles",
            &json!({ "add": [{ "email": "alan@example.com", "role": "owner" }] }),
        )
        .await
        .expect_error(400, "invalid_request");
    w.grace
        .patch(
            "/api/projects/ACME/roles",
            &json!({ "add": [], "remove": [] }),
        )
        .await
        .expect_error(400, "invalid_request");
    w.grace
        .patch(
            "/api/projects/ACME/roles",
            &json!({ "add": [{ "email": "alan@example.com", "role": "viewer" }], "remove": [{ "email": "alan@example.com" }] }),
        )
        .await
        .expect_error(400, "invalid_request");
    w.grace
        .get("/api/projects/NOPE/roles")
        .await
        .expect_error(404, "project_not_found");
    w.grace
        .get("/api/projects/not%20a%20code/roles")
        .await
        .expect_error(400, "invalid_request");
    // External members cannot see projects they hold no role in.
    w.ext
        .get("/api/projects/ACME/roles")
        .await
        .expect_error(404, "project_not_found");
    // Changing roles needs the `access` scope.
    let docs_only = w
        .server
        .client(Some(&w.server.issue_token("grace@example.com", "docs")));
    docs_only
        .patch(
            "/api/projects/ACME/roles",
            &json!({ "remove": [{ "email": "vic@partner.example" }] }),
        )
        .await
        .expect_error(403, "insufficient_scope");
}

#[tokio::test]
async fn creating_in_a_project_answers_every_code_of_the_reference() {
    let w = world().await;
    // 201: a server-made id, linked, with the caller's role in `_project`.
    let created = w
        .kate
        .post("/api/reviews", &create_in("ACME", "Partner draft"))
        .await;
    let review = created.expect(201)["review"].clone();
    assert!(
        review["reviewId"]
            .as_str()
            .is_some_and(|id| id.starts_with("rv_"))
    );
    assert_eq!(
        review["_project"],
        json!({ "code": "ACME", "name": "Acme rollout", "company": "Acme Corp", "status": "active", "inSnapshot": true, "role": "editor" })
    );
    let imported = w
        .kate
        .multipart(
            "/api/reviews/import-html",
            reqwest::multipart::Form::new()
                .part("file", html_part(b"<p>Uploaded.</p>", "up.html"))
                .text("project", "ACME"),
        )
        .await;
    assert_eq!(imported.expect(201)["review"]["_project"]["code"], "ACME");

    // 400 invalid_request: a reviewId together with project; a malformed code; malformed data.
    let mut with_id = create_in("ACME", "x");
    with_id["review"]["reviewId"] = json!("my-own-id");
    w.ada
        .post("/api/reviews", &with_id)
        .await
        .expect_error(400, "invalid_request");
    w.ada
        .post("/api/reviews", &create_in("acme", "x"))
        .await
        .expect_error(400, "invalid_request");
    w.ada
        .post(
            "/api/reviews",
            &json!({ "project": "ACME", "review": "nope" }),
        )
        .await
        .expect_error(400, "invalid_request");
    // 401: no token.
    w.server
        .client(None)
        .post("/api/reviews", &create_in("ACME", "x"))
        .await
        .expect_error(401, "unauthorized");
    // 403 project_required: external callers must name a project.
    w.kate
        .post("/api/reviews", &json!({ "review": { "title": "Loose" } }))
        .await
        .expect_error(403, "project_required");
    // 403 project_role_required: no role, or only viewer.
    w.ext
        .post("/api/reviews", &create_in("ACME", "x"))
        .await
        .expect_error(403, "project_role_required");
    w.vic
        .post("/api/reviews", &create_in("ACME", "x"))
        .await
        .expect_error(403, "project_role_required");
    w.alan
        .post("/api/reviews", &create_in("ACME", "x"))
        .await
        .expect_error(403, "project_role_required");
    // 403 insufficient_scope and forbidden.
    let comments_only = w
        .server
        .client(Some(&w.server.issue_token("grace@example.com", "comments")));
    comments_only
        .post("/api/reviews", &create_in("ACME", "x"))
        .await
        .expect_error(403, "insufficient_scope");
    w.ada
        .post("/api/reviews", &create_in("OLD-1", "x"))
        .await
        .expect_error(403, "forbidden");
    // 404 project_not_found; 409 project_not_in_snapshot.
    w.ada
        .post("/api/reviews", &create_in("NOPE", "x"))
        .await
        .expect_error(404, "project_not_found");
    w.ada
        .post("/api/reviews", &create_in("GONE", "x"))
        .await
        .expect_error(409, "project_not_in_snapshot");
    // The shared import token delivers into any active project in the snapshot.
    w.server
        .importer()
        .post("/api/reviews", &create_in("ACME", "Delivered"))
        .await
        .expect(201);
}

#[tokio::test]
async fn a_project_role_opens_the_projects_documents_and_nothing_else() {
    let w = world().await;
    let linked = w
        .grace
        .post("/api/reviews", &create_in("ACME", "Linked"))
        .await;
    let linked = linked.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    w.grace
        .patch(
            &format!("/api/reviews/{linked}/access"),
            &json!({ "mode": "restricted" }),
        )
        .await
        .expect(200);
    let other = w
        .grace
        .create_review("Not in a project", "<p>Elsewhere.</p>")
        .await;
    let other = other["reviewId"].as_str().expect("id").to_string();

    let as_kate = w.kate.get(&format!("/api/reviews/{linked}")).await;
    assert_eq!(as_kate.expect(200)["review"]["role"], "editor");
    assert_eq!(as_kate.json["review"]["_project"]["role"], "editor");
    let as_vic = w.vic.get(&format!("/api/reviews/{linked}")).await;
    assert_eq!(as_vic.expect(200)["review"]["role"], "viewer");
    w.vic
        .patch(
            &format!("/api/reviews/{linked}/title"),
            &json!({ "title": "No" }),
        )
        .await
        .expect_error(403, "forbidden");
    w.kate
        .patch(
            &format!("/api/reviews/{linked}/title"),
            &json!({ "title": "Renamed by Kate" }),
        )
        .await
        .expect(200);
    w.vic
        .comment_on(&linked, "Project text", "Viewers comment too")
        .await;
    w.kate
        .get(&format!("/api/reviews/{other}"))
        .await
        .expect_error(404, "not_found");
    w.ext
        .get(&format!("/api/reviews/{linked}"))
        .await
        .expect_error(404, "not_found");
    // A restricted document linked to a project is open to its members, internal ones too.
    w.alan
        .get(&format!("/api/reviews/{linked}"))
        .await
        .expect_error(404, "not_found");
    w.grace
        .patch(
            "/api/projects/ACME/roles",
            &json!({ "add": [{ "email": "alan@example.com", "role": "viewer" }] }),
        )
        .await
        .expect(200);
    assert_eq!(
        w.alan
            .get(&format!("/api/reviews/{linked}"))
            .await
            .expect(200)["review"]["role"],
        "viewer"
    );

    let listed = w.kate.get("/api/reviews").await;
    let ids: Vec<_> = listed.expect(200)["reviews"]
        .as_array()
        .expect("reviews")
        .iter()
        .map(|r| r["reviewId"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(ids, std::slice::from_ref(&linked));
    assert_eq!(listed.json["reviews"][0]["_project"]["code"], "ACME");
    let filtered = w.ada.get("/api/reviews?project=ACME").await;
    assert_eq!(
        filtered.expect(200)["reviews"].as_array().map(Vec::len),
        Some(1)
    );

    // Losing the role closes the document again.
    w.grace
        .patch(
            "/api/projects/ACME/roles",
            &json!({ "remove": [{ "email": "kate@partner.example" }] }),
        )
        .await
        .expect(200);
    w.kate
        .get(&format!("/api/reviews/{linked}"))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn linking_and_unlinking_documents() {
    let w = world().await;
    let review = w.grace.create_review("Plan", "<p>Plan text.</p>").await;
    let id = review["reviewId"].as_str().expect("id").to_string();
    assert!(review.get("_project").is_none());

    let linked = w
        .grace
        .put(&format!("/api/projects/ACME/docs/{id}"), &json!({}))
        .await;
    assert_eq!(linked.expect(200)["review"]["_project"]["code"], "ACME");
    assert_eq!(linked.json["review"]["_project"]["role"], "manager");
    // Idempotent for the same project; a conflict for another.
    w.grace
        .put(&format!("/api/projects/ACME/docs/{id}"), &json!({}))
        .await
        .expect(200);
    w.ada
        .put(&format!("/api/projects/OLD-1/docs/{id}"), &json!({}))
        .await
        .expect_error(409, "project_conflict");

    let fresh = w.grace.create_review("Another", "<p>Text.</p>").await;
    let fresh = fresh["reviewId"].as_str().expect("id").to_string();
    w.ada
        .put(&format!("/api/projects/GONE/docs/{fresh}"), &json!({}))
        .await
        .expect_error(409, "project_not_in_snapshot");
    w.ada
        .put(&format!("/api/projects/OLD-1/docs/{fresh}"), &json!({}))
        .await
        .expect_error(403, "forbidden");
    w.ada
        .put(&format!("/api/projects/NOPE/docs/{fresh}"), &json!({}))
        .await
        .expect_error(404, "project_not_found");
    w.ada
        .put("/api/projects/ACME/docs/rv_missing", &json!({}))
        .await
        .expect_error(404, "not_found");
    // Alan can edit the document but holds no role in the project.
    w.grace
        .patch(
            &format!("/api/reviews/{fresh}/access"),
            &json!({ "allowedUsers": [{ "email": "alan@example.com", "role": "editor" }] }),
        )
        .await
        .expect(200);
    w.alan
        .put(&format!("/api/projects/ACME/docs/{fresh}"), &json!({}))
        .await
        .expect_error(403, "project_role_required");

    // Unlinking.
    w.ada
        .delete(&format!("/api/projects/OLD-1/docs/{id}"))
        .await
        .expect_error(404, "not_found");
    let unlinked = w
        .grace
        .delete(&format!("/api/projects/ACME/docs/{id}"))
        .await;
    assert!(unlinked.expect(200)["review"].get("_project").is_none());
    w.grace
        .delete(&format!("/api/projects/ACME/docs/{id}"))
        .await
        .expect_error(404, "not_found");
    let read = w.grace.get(&format!("/api/reviews/{id}")).await;
    assert!(read.expect(200)["review"].get("_project").is_none());
}

#[tokio::test]
async fn a_new_snapshot_shows_in_project_links_at_once() {
    let w = world().await;
    let created = w
        .grace
        .post("/api/reviews", &create_in("ACME", "Cached"))
        .await;
    let id = created.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    // Read twice so any per-node rendering cache holds the document.
    for _ in 0..2 {
        let read = w.grace.get(&format!("/api/reviews/{id}")).await;
        assert_eq!(read.expect(200)["review"]["_project"]["status"], "active");
    }
    w.server.import_projects(&json!({ "projects": [
        { "code": "ACME", "name": "Acme (closed)", "company": "Acme Corp", "status": "inactive" }
    ]}));
    let read = w.grace.get(&format!("/api/reviews/{id}")).await;
    let project = &read.expect(200)["review"]["_project"];
    assert_eq!(project["status"], "inactive");
    assert_eq!(project["name"], "Acme (closed)");
    let dropped = w.server.import_projects(&json!({ "projects": [] }));
    assert!(dropped.contains("3 no longer"), "{dropped}");
    let read = w.grace.get(&format!("/api/reviews/{id}")).await;
    assert_eq!(read.expect(200)["review"]["_project"]["inSnapshot"], false);
    // Links survive leaving the snapshot; new links into it do not.
    let listed = w.grace.get("/api/reviews?project=ACME").await;
    assert_eq!(
        listed.expect(200)["reviews"].as_array().map(Vec::len),
        Some(1)
    );
}
