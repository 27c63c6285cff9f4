//! The authorization matrix: every endpoint of the service against every kind of caller, with the
//! expected answer in each cell (DESIGN.md §2 and §3).
//!
//! Callers (columns):
//! - `anon`: no credentials; `agent`, `import`, `manage`: the three shared tokens;
//! - `docs`, `access`, `comments`, `org`: personal tokens of the org admin Ada holding that single
//!   scope; `cookie`: Ada's browser session, and `ck-edit`: the editor's (both with the site's
//!   `Origin`). A session may do what its person's role allows, except runs (docs/web.md);
//! - `owner` … `admin`: personal tokens with every scope, held by the document's owner, an editor
//!   and a viewer it is shared with, an internal member it is not shared with, an external member
//!   with the editor role in its project, an external member without a role there, and Ada.
//!
//! The document under test is restricted, owned by `owner`, shared with `editor` and `viewer`,
//! and linked to project MATRIX-P (where `owner` is manager and `ext+role` editor). Ada wrote its
//! comments, reply and run. Rows that change something get a fresh fixture in every cell.
//!
//! Cells: a status, or a 403/404 error code: `isc` `insufficient_scope`, `frb` `forbidden`,
//! `prr` `project_role_required`, `prq` `project_required`, `pnf` `project_not_found`. A plain
//! 403 or 404 must carry `forbidden` or `not_found`; 401 must carry `unauthorized`.
//!
//! `POST /api/auth/cli/token` takes no credentials and is rate limited per address, so it is
//! tested in `account.rs` rather than cell by cell; `/healthz` and `/readyz` are in `routes.rs`.
//!
//! The cells stay raw HTTP on purpose: the table is over methods and paths, its columns include
//! browser sessions (which the typed client does not carry), and its cells tell 200 from 201 and
//! read error codes of any answer. The fixtures (the project's roles, the documents, comments,
//! reply, run and registered partner each row refers to) are made through the typed client.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::{Client, Server, html_part};
use docreview_client::api::{
    AccessInput, AccessMode, AllowedUserEntry, CreateReview, GrantRole, NewMember, NewReply,
    ProjectRole, ReviewInput, RoleGrant, RolesChange, SourceInput, StartRun,
};
use serde_json::{Value, json};

const CALLERS: [&str; 17] = [
    "anon", "agent", "import", "manage", "docs", "access", "comments", "org", "cookie", "ck-edit",
    "owner", "editor", "viewer", "outsider", "ext+role", "ext", "admin",
];

enum Body {
    None,
    Json(&'static str),
    Html,
}

struct Row {
    method: &'static str,
    path: &'static str,
    body: Body,
    /// Needs its own fixture in every cell (the call changes or consumes it).
    fresh: bool,
    expect: [&'static str; 17],
}

#[allow(
    clippy::large_types_passed_by_value,
    reason = "builds the table's rows once, at start-up"
)]
const fn row(
    method: &'static str,
    path: &'static str,
    body: Body,
    fresh: bool,
    expect: [&'static str; 17],
) -> Row {
    Row {
        method,
        path,
        body,
        fresh,
        expect,
    }
}

use Body::{Html, Json, None as NoBody};

const READ: bool = false;
const WRITE: bool = true;

#[rustfmt::skip]
const MATRIX: &[Row] = &[
    //                                                                                        anon   agent  import manage docs   access comms  org    cookie ck-ed  owner  editor viewer outsdr ext+r  ext    admin
    // Reviews
    row("GET",    "/api/reviews",                                    NoBody, READ,  ["401", "200", "200", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200"]),
    row("POST",   "/api/reviews",                                    Json(r#"{"review":{"title":"New"}}"#), WRITE,
                                                                                         ["401", "frb", "201", "frb", "201", "isc", "isc", "isc", "201", "201", "201", "201", "201", "201", "prq", "prq", "201"]),
    row("POST",   "/api/reviews",                                    Json(r#"{"project":"MATRIX-P","review":{"title":"In project"}}"#), WRITE,
                                                                                         ["401", "frb", "201", "frb", "201", "isc", "isc", "isc", "201", "prr", "201", "prr", "prr", "prr", "201", "prr", "201"]),
    row("GET",    "/api/reviews/{doc}",                              NoBody, READ,  ["401", "200", "200", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "404", "200", "404", "200"]),
    row("GET",    "/api/reviews/{doc}/dom-context",                  NoBody, READ,  ["401", "200", "200", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "404", "200", "404", "200"]),
    row("GET",    "/api/reviews/{doc}/versions/{version}/bundle",    NoBody, READ,  ["401", "200", "200", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "404", "200", "404", "200"]),
    row("GET",    "/api/reviews/{doc}/events",                       NoBody, READ,  ["401", "200", "200", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "404", "200", "404", "200"]),
    // Import
    row("POST",   "/api/reviews/import-html",                        Html,   WRITE, ["401", "frb", "201", "frb", "201", "isc", "isc", "isc", "201", "201", "201", "201", "201", "201", "prq", "prq", "201"]),
    row("POST",   "/api/reviews/{doc}/import-html",                  Html,   WRITE, ["401", "frb", "201", "frb", "201", "isc", "isc", "isc", "201", "201", "201", "201", "frb", "404", "201", "404", "201"]),
    // Runs
    row("POST",   "/api/reviews/{doc}/ai-review-runs",               Json(r#"{"title":"Pass"}"#), WRITE,
                                                                                         ["401", "201", "frb", "frb", "isc", "isc", "201", "isc", "frb", "frb", "201", "201", "201", "404", "201", "404", "201"]),
    row("PATCH",  "/api/reviews/{doc}/ai-review-runs/{run}",         Json(r#"{"status":"completed"}"#), WRITE,
                                                                                         ["401", "200", "frb", "frb", "isc", "isc", "200", "isc", "frb", "frb", "200", "200", "frb", "404", "200", "404", "200"]),
    row("POST",   "/api/reviews/{doc}/ai-review-runs/{run}/comments", Json(r#"{"body":"From the run"}"#), WRITE,
                                                                                         ["401", "201", "frb", "frb", "isc", "isc", "201", "isc", "frb", "frb", "201", "201", "201", "404", "201", "404", "201"]),
    // Comments
    row("POST",   "/api/reviews/{doc}/comments",                     Json(r#"{"body":"A note"}"#), WRITE,
                                                                                         ["401", "201", "frb", "frb", "isc", "isc", "201", "isc", "201", "201", "201", "201", "201", "404", "201", "404", "201"]),
    row("PATCH",  "/api/reviews/{doc}/comments/{comment}",           Json(r#"{"body":"Edited"}"#), WRITE,
                                                                                         ["401", "frb", "frb", "frb", "isc", "isc", "200", "isc", "200", "frb", "frb", "frb", "frb", "404", "frb", "404", "200"]),
    row("DELETE", "/api/reviews/{doc}/comments/{draft}",             NoBody, WRITE, ["401", "frb", "frb", "frb", "isc", "isc", "200", "isc", "200", "frb", "frb", "frb", "frb", "404", "frb", "404", "200"]),
    row("PATCH",  "/api/reviews/{doc}/comments/{comment}/anchor",    Json(r#"{"locator":{"quote":{"exact":"second paragraph"}}}"#), WRITE,
                                                                                         ["401", "200", "frb", "frb", "isc", "isc", "200", "isc", "200", "200", "200", "200", "frb", "404", "200", "404", "200"]),
    row("POST",   "/api/reviews/{doc}/comments/{comment}/thread",    Json(r#"{"body":"A reply"}"#), WRITE,
                                                                                         ["401", "201", "frb", "frb", "isc", "isc", "201", "isc", "201", "201", "201", "201", "201", "404", "201", "404", "201"]),
    row("PATCH",  "/api/reviews/{doc}/comments/{comment}/thread/{reply}", Json(r#"{"body":"Edited reply"}"#), WRITE,
                                                                                         ["401", "frb", "frb", "frb", "isc", "isc", "200", "isc", "200", "frb", "frb", "frb", "frb", "404", "frb", "404", "200"]),
    row("DELETE", "/api/reviews/{doc}/comments/{comment}/thread/{reply}", NoBody, WRITE,
                                                                                         ["401", "frb", "frb", "frb", "isc", "isc", "200", "isc", "200", "frb", "frb", "frb", "frb", "404", "frb", "404", "200"]),
    row("POST",   "/api/reviews/{doc}/comments/{comment}/status-events", Json(r#"{"status":"closed"}"#), WRITE,
                                                                                         ["401", "201", "frb", "frb", "isc", "isc", "201", "isc", "201", "201", "201", "201", "201", "404", "201", "404", "201"]),
    // Manage
    row("DELETE", "/api/reviews/{doc}",                              NoBody, WRITE, ["401", "frb", "frb", "200", "200", "isc", "isc", "isc", "200", "frb", "200", "frb", "frb", "404", "frb", "404", "200"]),
    row("PATCH",  "/api/reviews/{doc}/title",                        Json(r#"{"title":"Renamed"}"#), WRITE,
                                                                                         ["401", "frb", "frb", "200", "200", "isc", "isc", "isc", "200", "200", "200", "200", "frb", "404", "200", "404", "200"]),
    row("PATCH",  "/api/reviews/{doc}/meta",                         Json(r#"{"tags":["x"],"archived":true}"#), WRITE,
                                                                                         ["401", "frb", "frb", "200", "200", "isc", "isc", "isc", "200", "200", "200", "200", "frb", "404", "200", "404", "200"]),
    row("GET",    "/api/reviews/{doc}/access",                       NoBody, READ,  ["401", "frb", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "frb", "404", "200", "404", "200"]),
    row("PATCH",  "/api/reviews/{doc}/access",                       Json(r#"{"mode":"restricted"}"#), WRITE,
                                                                                         ["401", "frb", "frb", "200", "isc", "200", "isc", "isc", "200", "frb", "200", "frb", "frb", "404", "frb", "404", "200"]),
    row("PUT",    "/api/reviews/{doc}/owner",                        Json(r#"{"email":"editor@matrix.example"}"#), WRITE,
                                                                                         ["401", "frb", "frb", "frb", "isc", "200", "isc", "isc", "200", "frb", "200", "frb", "frb", "404", "frb", "404", "200"]),
    // Search
    row("GET",    "/api/search/comments?q=note",                     NoBody, READ,  ["401", "200", "200", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200"]),
    row("GET",    "/api/search/docs?q=paragraph",                    NoBody, READ,  ["401", "200", "200", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200"]),
    // Account
    row("GET",    "/api/me",                                         NoBody, READ,  ["401", "frb", "frb", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200"]),
    row("GET",    "/api/me/tokens",                                  NoBody, READ,  ["401", "frb", "frb", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200"]),
    row("DELETE", "/api/me/tokens/tok_not_one_of_yours",             NoBody, READ,  ["401", "frb", "frb", "frb", "404", "404", "404", "404", "404", "404", "404", "404", "404", "404", "404", "404", "404"]),
    // Projects
    row("GET",    "/api/projects",                                   NoBody, READ,  ["401", "frb", "frb", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200"]),
    row("GET",    "/api/projects/MATRIX-P/roles",                    NoBody, READ,  ["401", "frb", "frb", "frb", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "pnf", "200"]),
    row("PATCH",  "/api/projects/MATRIX-P/roles",                    Json(r#"{"add":[{"email":"bystander@matrix.example","role":"viewer"}]}"#), READ,
                                                                                         ["401", "frb", "frb", "frb", "isc", "200", "isc", "isc", "200", "frb", "200", "frb", "frb", "frb", "frb", "pnf", "200"]),
    row("PUT",    "/api/projects/MATRIX-P/docs/{unlinked}",          NoBody, WRITE, ["401", "frb", "frb", "frb", "200", "isc", "isc", "isc", "200", "prr", "200", "prr", "frb", "404", "404", "404", "200"]),
    row("DELETE", "/api/projects/MATRIX-P/docs/{doc}",               NoBody, WRITE, ["401", "frb", "frb", "frb", "200", "isc", "isc", "isc", "200", "prr", "200", "prr", "frb", "404", "200", "404", "200"]),
    // Organization
    row("GET",    "/api/org/members",                                NoBody, READ,  ["401", "frb", "frb", "frb", "200", "200", "200", "200", "200", "frb", "frb", "frb", "frb", "frb", "frb", "frb", "200"]),
    row("POST",   "/api/org/members",                                Json(r#"{"email":"{member}","displayName":"New Partner"}"#), WRITE,
                                                                                         ["401", "frb", "frb", "frb", "isc", "isc", "isc", "201", "201", "frb", "frb", "frb", "frb", "frb", "frb", "frb", "201"]),
    row("PATCH",  "/api/org/members",                                Json(r#"{"email":"bystander@matrix.example","displayName":"By Stander"}"#), READ,
                                                                                         ["401", "frb", "frb", "frb", "isc", "isc", "isc", "200", "200", "frb", "frb", "frb", "frb", "frb", "frb", "frb", "200"]),
    row("DELETE", "/api/org/members",                                Json(r#"{"email":"{partner}"}"#), WRITE,
                                                                                         ["401", "frb", "frb", "frb", "isc", "isc", "isc", "200", "200", "frb", "frb", "frb", "frb", "frb", "frb", "frb", "200"]),
    row("GET",    "/api/org/admins",                                 NoBody, READ,  ["401", "frb", "frb", "frb", "200", "200", "200", "200", "200", "frb", "frb", "frb", "frb", "frb", "frb", "frb", "200"]),
    row("PUT",    "/api/org/admins",                                 Json(r#"{"email":"bystander@matrix.example"}"#), READ,
                                                                                         ["401", "frb", "frb", "frb", "isc", "isc", "isc", "200", "200", "frb", "frb", "frb", "frb", "frb", "frb", "frb", "200"]),
    row("DELETE", "/api/org/admins",                                 Json(r#"{"email":"bystander@matrix.example"}"#), READ,
                                                                                         ["401", "frb", "frb", "frb", "isc", "isc", "isc", "200", "200", "frb", "frb", "frb", "frb", "frb", "frb", "frb", "200"]),
    // Webhooks (org admins; writes need `org`)
    row("GET",    "/api/webhooks",                                   NoBody, READ,  ["401", "frb", "frb", "frb", "200", "200", "200", "200", "200", "frb", "frb", "frb", "frb", "frb", "frb", "frb", "200"]),
    row("POST",   "/api/webhooks",                                   Json(r#"{"url":"https://93.184.216.34/matrix","events":["ping"]}"#), READ,
                                                                                         ["401", "frb", "frb", "frb", "isc", "isc", "isc", "201", "201", "frb", "frb", "frb", "frb", "frb", "frb", "frb", "201"]),
];

const DOC_HTML: &str = "<h1 id=\"top\">Matrix</h1><p>First paragraph about the plan.</p>\
    <h2 id=\"more\">More</h2><p>The second paragraph has more words.</p>";

/// The ids a row's path and body refer to.
struct Fixture {
    doc: String,
    version: String,
    comment: String,
    reply: String,
    draft: String,
    run: String,
    unlinked: String,
    /// A fresh email to register.
    member: String,
    /// A registered external member to remove.
    partner: String,
}

struct World {
    _server: Server,
    callers: Vec<Client>,
    owner: Client,
    admin: Client,
}

static FIXTURES: AtomicUsize = AtomicUsize::new(0);

impl World {
    async fn build() -> World {
        let server = Server::start();
        let user = |email: &str, name: &str, flags: &[&str]| {
            server.create_user(email, name, flags);
            server.client(Some(&server.issue_token(email, "docs,access,comments,org")))
        };
        server.create_user_with_password("ada@matrix.example", "Ada", &["--admin"], "ada-password");
        let scoped =
            |scope: &str| server.client(Some(&server.issue_token("ada@matrix.example", scope)));
        let admin = scoped("docs,access,comments,org");
        let owner = user("owner@matrix.example", "Owner", &[]);
        server.create_user_with_password("editor@matrix.example", "Editor", &[], "editor-password");
        let editor = server.client(Some(
            &server.issue_token("editor@matrix.example", "docs,access,comments,org"),
        ));
        let viewer = user("viewer@matrix.example", "Viewer", &[]);
        let outsider = user("outsider@matrix.example", "Outsider", &[]);
        let ext_role = user(
            "ext-role@partner.example",
            "Partner With Role",
            &["--external"],
        );
        let ext = user("ext@partner.example", "Partner", &["--external"]);
        server.create_user("bystander@matrix.example", "Bystander", &[]);
        server.import_projects(&json!({ "projects": [
            { "code": "MATRIX-P", "name": "Matrix", "company": "Example", "status": "active" }
        ]}));
        let roles = RolesChange {
            add: vec![
                RoleGrant {
                    email: "owner@matrix.example".to_string(),
                    role: ProjectRole::Manager,
                },
                RoleGrant {
                    email: "ext-role@partner.example".to_string(),
                    role: ProjectRole::Editor,
                },
            ],
            remove: Vec::new(),
        };
        admin
            .api()
            .change_project_roles("MATRIX-P", &roles)
            .await
            .expect("project roles");
        let callers = vec![
            server.client(None),
            server.agent(),
            server.importer(),
            server.manager(),
            scoped("docs"),
            scoped("access"),
            scoped("comments"),
            scoped("org"),
            server.sign_in("ada@matrix.example", "ada-password").await,
            server
                .sign_in("editor@matrix.example", "editor-password")
                .await,
            owner.clone(),
            editor,
            viewer,
            outsider,
            ext_role,
            ext,
            admin.clone(),
        ];
        World {
            _server: server,
            callers,
            owner,
            admin,
        }
    }

    /// A document as the module comment describes it, plus an unlinked one shared alike.
    async fn fixture(&self) -> Fixture {
        let n = FIXTURES.fetch_add(1, Ordering::Relaxed);
        let create = |project: Option<&str>| CreateReview {
            review: ReviewInput {
                title: Some(format!("Matrix {n}")),
                source: Some(SourceInput {
                    html: Some(DOC_HTML.to_string()),
                    label: None,
                }),
                access: Some(AccessInput {
                    mode: Some(AccessMode::Restricted),
                    allowed_users: Some(vec![
                        AllowedUserEntry {
                            email: "editor@matrix.example".to_string(),
                            role: GrantRole::Editor,
                        },
                        AllowedUserEntry {
                            email: "viewer@matrix.example".to_string(),
                            role: GrantRole::Viewer,
                        },
                    ]),
                }),
                ..ReviewInput::default()
            },
            project: project.map(str::to_string),
        };
        let owner = self.owner.api();
        let doc = owner
            .create_review(&create(Some("MATRIX-P")))
            .await
            .expect("create in the project");
        let id = doc.review_id;
        let unlinked = owner
            .create_review(&create(None))
            .await
            .expect("create unlinked")
            .review_id;
        let comment = self
            .admin
            .note_on(&id, "First paragraph", "A note on the plan")
            .await
            .comment
            .id;
        let reply = NewReply {
            body: "My own reply".to_string(),
            run_id: None,
            base_comments_revision: None,
        };
        let reply = self
            .admin
            .api()
            .reply(&id, &comment, &reply)
            .await
            .expect("reply")
            .message
            .id;
        let draft = self
            .admin
            .note_on(&id, "more words", "A draft")
            .await
            .comment
            .id;
        let start = StartRun {
            title: Some("Run".to_string()),
            ..StartRun::default()
        };
        let run = self
            .admin
            .api()
            .start_run(&id, &start)
            .await
            .expect("start run")
            .id;
        let partner = format!("partner-{n}@partner.example");
        let member = NewMember {
            email: partner.clone(),
            display_name: "Partner".to_string(),
        };
        self.admin
            .api()
            .register_member(&member)
            .await
            .expect("register partner");
        Fixture {
            version: doc.latest_version_id,
            doc: id,
            comment,
            reply,
            draft,
            run,
            unlinked,
            member: format!("new-{n}@partner.example"),
            partner,
        }
    }
}

fn fill(template: &str, fixture: &Fixture) -> String {
    template
        .replace("{doc}", &fixture.doc)
        .replace("{version}", &fixture.version)
        .replace("{comment}", &fixture.comment)
        .replace("{reply}", &fixture.reply)
        .replace("{draft}", &fixture.draft)
        .replace("{run}", &fixture.run)
        .replace("{unlinked}", &fixture.unlinked)
        .replace("{member}", &fixture.member)
        .replace("{partner}", &fixture.partner)
}

/// A cell's expectation as (status, error code when it is an error).
fn expected(cell: &str) -> (u16, Option<&'static str>) {
    match cell {
        "isc" => (403, Some("insufficient_scope")),
        "frb" => (403, Some("forbidden")),
        "prr" => (403, Some("project_role_required")),
        "prq" => (403, Some("project_required")),
        "pnf" => (404, Some("project_not_found")),
        "401" => (401, Some("unauthorized")),
        "404" => (404, Some("not_found")),
        other => (other.parse().expect("a status"), None),
    }
}

/// Sends one cell's request; returns the status and the error code, if any. Event streams
/// never end, so only their status is read.
async fn call(client: &Client, row: &Row, fixture: &Fixture) -> (u16, Option<String>) {
    let path = fill(row.path, fixture);
    let mut request = client.raw(row.method, &path);
    match &row.body {
        Body::None => {}
        Body::Json(template) => {
            request = request
                .header("content-type", "application/json")
                .body(fill(template, fixture));
        }
        Body::Html => {
            let form = reqwest::multipart::Form::new()
                .part("file", html_part(DOC_HTML.as_bytes(), "m.html"));
            request = request.multipart(form);
        }
    }
    if path.ends_with("/events") {
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        if status == 200 {
            return (status, None);
        }
        let body: Value = response.json().await.unwrap_or(Value::Null);
        return (status, body["error"].as_str().map(str::to_string));
    }
    let reply = client.send(request).await;
    (
        reply.status,
        reply.json["error"].as_str().map(str::to_string),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_endpoint_against_every_kind_of_caller() {
    let world = World::build().await;
    let shared = world.fixture().await;
    let mut mismatches = Vec::new();
    for row in MATRIX {
        // Cells run side by side, each on its own fixture, except where they would race on the
        // one thing they share: who the organization's admins are.
        let side_by_side = !row.path.starts_with("/api/org/admins");
        let cells = CALLERS.iter().enumerate().map(|(column, caller)| {
            let world = &world;
            let shared = &shared;
            async move {
                let own;
                let fixture = if row.fresh {
                    own = world.fixture().await;
                    &own
                } else {
                    shared
                };
                let got = call(&world.callers[column], row, fixture).await;
                (caller, row.expect[column], got)
            }
        });
        let results = if side_by_side {
            futures::future::join_all(cells).await
        } else {
            let mut results = Vec::new();
            for cell in cells {
                results.push(cell.await);
            }
            results
        };
        for (caller, cell, (status, code)) in results {
            let (want_status, want_code) = expected(cell);
            let code_matches = want_code.is_none_or(|want| code.as_deref() == Some(want));
            if status != want_status || !code_matches {
                mismatches.push(format!(
                    "{} {} as {caller}: expected {cell}, got {status} {}",
                    row.method,
                    row.path,
                    code.unwrap_or_default()
                ));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} cells differ from the matrix:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
