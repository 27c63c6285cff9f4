//! The organization: members and administrators, and what suspending or removing a member does
//! to their tokens and sessions.

use crate::support::{Client, Server};
use serde_json::json;

const PASSWORD: &str = "a long enough password";

/// A server with an org admin (Ada) holding every scope.
fn with_admin() -> (Server, Client) {
    let server = Server::start();
    let ada = server.user(
        "ada@example.com",
        "Ada",
        &["--admin"],
        "docs,access,comments,org",
    );
    (server, ada)
}

#[tokio::test]
async fn admins_list_members_page_by_page_and_nobody_else_can() {
    let (server, ada) = with_admin();
    let grace = server.user(
        "grace@example.com",
        "Grace",
        &[],
        "docs,access,comments,org",
    );
    server.create_user("alan@example.com", "Alan", &[]);
    let first = ada.get("/api/org/members?limit=2").await;
    let members = first.expect(200)["members"]
        .as_array()
        .expect("members")
        .clone();
    let emails: Vec<_> = members
        .iter()
        .map(|m| m["email"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        emails,
        ["ada@example.com", "alan@example.com"],
        "ordered by email"
    );
    assert_eq!(members[0]["isAdmin"], true);
    assert_eq!(members[0]["status"], "active");
    assert_eq!(members[0]["membership"], "internal");
    let cursor = first.json["nextCursor"].as_str().expect("more");
    let rest = ada
        .get(&format!("/api/org/members?limit=2&cursor={cursor}"))
        .await;
    let rest = rest.expect(200)["members"]
        .as_array()
        .expect("members")
        .clone();
    assert_eq!(
        rest.len(),
        1,
        "service principals are not members: {rest:?}"
    );
    assert_eq!(rest[0]["email"], "grace@example.com");

    grace
        .get("/api/org/members")
        .await
        .expect_error(403, "forbidden");
    grace
        .get("/api/org/admins")
        .await
        .expect_error(403, "forbidden");
    server
        .manager()
        .get("/api/org/members")
        .await
        .expect_error(403, "forbidden");
    server
        .client(None)
        .get("/api/org/members")
        .await
        .expect_error(401, "unauthorized");
}

#[tokio::test]
async fn registering_an_external_member() {
    let (server, ada) = with_admin();
    let created = ada
        .post(
            "/api/org/members",
            &json!({ "email": "Kate@Partner.example", "displayName": "Kate Partner" }),
        )
        .await;
    let member = created.expect(201)["member"].clone();
    assert_eq!(member["email"], "kate@partner.example");
    assert_eq!(member["membership"], "external");
    assert_eq!(member["status"], "active");
    assert_eq!(member["displayName"], "Kate Partner");
    assert!(
        member["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("usr_"))
    );
    ada.post(
        "/api/org/members",
        &json!({ "email": "kate@partner.example", "displayName": "Again" }),
    )
    .await
    .expect_error(409, "already_exists");
    ada.post(
        "/api/org/members",
        &json!({ "email": "not-an-email", "displayName": "X" }),
    )
    .await
    .expect_error(400, "invalid_request");
    ada.post(
        "/api/org/members",
        &json!({ "email": "x@partner.example", "displayName": "  " }),
    )
    .await
    .expect_error(400, "invalid_request");
    ada.post("/api/org/members", &json!({ "email": "x@partner.example" }))
        .await
        .expect_error(400, "invalid_request");

    // An external member sees no link-mode document: they act only inside their projects.
    let kate = server.client(Some(
        &server.issue_token("kate@partner.example", "docs,comments"),
    ));
    let review = ada
        .create_review("Internal plan", "<p>Internal only.</p>")
        .await;
    let id = review["reviewId"].as_str().expect("id");
    kate.get(&format!("/api/reviews/{id}"))
        .await
        .expect_error(404, "not_found");
    let listed = kate.get("/api/reviews").await;
    assert_eq!(listed.expect(200)["reviews"], json!([]));
}

#[tokio::test]
async fn suspending_a_member_cuts_off_their_tokens_and_sessions_at_once() {
    let (server, ada) = with_admin();
    server.create_user_with_password("grace@example.com", "Grace", &[], PASSWORD);
    let token = server.client(Some(&server.issue_token("grace@example.com", "comments")));
    let session = server.sign_in("grace@example.com", PASSWORD).await;
    token.get("/api/me").await.expect(200);
    session.get("/api/me").await.expect(200);

    let suspended = ada
        .patch(
            "/api/org/members",
            &json!({ "email": "grace@example.com", "status": "suspended" }),
        )
        .await;
    assert_eq!(suspended.expect(200)["member"]["status"], "suspended");
    token.get("/api/me").await.expect_error(401, "unauthorized");
    session
        .get("/api/me")
        .await
        .expect_error(401, "unauthorized");
    let output = server.admin(&["issue-token", "--email", "grace@example.com"]);
    assert!(
        !output.status.success(),
        "no new tokens for a suspended member"
    );

    let renamed = ada
        .patch(
            "/api/org/members",
            &json!({ "email": "grace@example.com", "status": "active", "displayName": "Grace H." }),
        )
        .await;
    assert_eq!(renamed.expect(200)["member"]["displayName"], "Grace H.");
    token.get("/api/me").await.expect(200);

    ada.patch(
        "/api/org/members",
        &json!({ "email": "ada@example.com", "status": "suspended" }),
    )
    .await
    .expect_error(403, "forbidden");
    ada.patch("/api/org/members", &json!({ "email": "grace@example.com" }))
        .await
        .expect_error(400, "invalid_request");
    ada.patch(
        "/api/org/members",
        &json!({ "email": "grace@example.com", "status": "removed" }),
    )
    .await
    .expect_error(400, "invalid_request");
    ada.patch(
        "/api/org/members",
        &json!({ "email": "nobody@example.com", "status": "active" }),
    )
    .await
    .expect_error(404, "not_found");
}

#[tokio::test]
async fn removing_an_external_member_revokes_everything_they_held() {
    let (server, ada) = with_admin();
    server.create_user_with_password("kate@partner.example", "Kate", &["--external"], PASSWORD);
    let token = server.client(Some(
        &server.issue_token("kate@partner.example", "comments"),
    ));
    let session = server.sign_in("kate@partner.example", PASSWORD).await;
    server.import_projects(&json!({ "projects": [
        { "code": "ACME", "name": "Acme", "company": "Acme", "status": "active" }
    ]}));
    ada.patch(
        "/api/projects/ACME/roles",
        &json!({ "add": [{ "email": "kate@partner.example", "role": "viewer" }] }),
    )
    .await
    .expect(200);

    let removed = ada
        .delete("/api/org/members?email=kate@partner.example")
        .await;
    assert_eq!(removed.expect(200)["member"]["status"], "removed");
    token.get("/api/me").await.expect_error(401, "unauthorized");
    session
        .get("/api/me")
        .await
        .expect_error(401, "unauthorized");
    let roles = ada.get("/api/projects/ACME/roles").await;
    assert_eq!(
        roles.expect(200)["roles"],
        json!([]),
        "project roles go too"
    );
    let members = ada.get("/api/org/members").await;
    assert!(!members.text.contains("kate@partner.example"));
    ada.delete_json(
        "/api/org/members",
        &json!({ "email": "kate@partner.example" }),
    )
    .await
    .expect_error(404, "not_found");

    // Registering the email again brings the member back, without the old tokens.
    let again = ada
        .post(
            "/api/org/members",
            &json!({ "email": "kate@partner.example", "displayName": "Kate" }),
        )
        .await;
    assert_eq!(again.expect(201)["member"]["status"], "active");
    token.get("/api/me").await.expect_error(401, "unauthorized");

    // Internal members are suspended, not removed; a request must name someone.
    server.create_user("alan@example.com", "Alan", &[]);
    ada.delete_json("/api/org/members", &json!({ "email": "alan@example.com" }))
        .await
        .expect_error(403, "forbidden");
    ada.delete("/api/org/members")
        .await
        .expect_error(400, "invalid_request");
}

#[tokio::test]
async fn administrators_are_added_and_removed_but_never_all_of_them() {
    let (server, ada) = with_admin();
    let grace = server.user("grace@example.com", "Grace", &[], "org");
    grace
        .get("/api/org/members")
        .await
        .expect_error(403, "forbidden");

    let added = ada
        .put("/api/org/admins", &json!({ "email": "grace@example.com" }))
        .await;
    assert_eq!(added.expect(200)["admin"]["isAdmin"], true);
    grace.get("/api/org/members").await.expect(200);
    let admins = ada.get("/api/org/admins").await;
    let emails: Vec<_> = admins.expect(200)["admins"]
        .as_array()
        .expect("admins")
        .iter()
        .map(|a| a["email"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(emails, ["ada@example.com", "grace@example.com"]);

    // An admin acts as owner on every document.
    let owner = server.user("owner@example.com", "Owner", &[], "docs,access");
    let review = owner.create_review("Private", "<p>Secret.</p>").await;
    let id = review["reviewId"].as_str().expect("id");
    owner
        .patch(
            &format!("/api/reviews/{id}/access"),
            &json!({ "mode": "restricted" }),
        )
        .await
        .expect(200);
    let seen = grace.get(&format!("/api/reviews/{id}")).await;
    assert_eq!(seen.expect(200)["review"]["role"], "owner");

    let removed = grace
        .delete_json("/api/org/admins", &json!({ "email": "ada@example.com" }))
        .await;
    assert_eq!(removed.expect(200)["admin"]["isAdmin"], false);
    grace
        .delete_json("/api/org/admins", &json!({ "email": "grace@example.com" }))
        .await
        .expect_error(409, "invalid_transition");

    server.create_user("kate@partner.example", "Kate", &["--external"]);
    grace
        .put(
            "/api/org/admins",
            &json!({ "email": "kate@partner.example" }),
        )
        .await
        .expect_error(400, "invalid_request");
    grace
        .put("/api/org/admins", &json!({ "email": "nobody@example.com" }))
        .await
        .expect_error(404, "not_found");
    // Writes need the `org` scope even for an admin.
    let reader = server.client(Some(&server.issue_token("grace@example.com", "docs")));
    reader.get("/api/org/admins").await.expect(200);
    reader
        .put("/api/org/admins", &json!({ "email": "ada@example.com" }))
        .await
        .expect_error(403, "insufficient_scope");
}

#[tokio::test]
async fn a_member_is_named_once_by_query_or_body() {
    let (server, ada) = with_admin();
    server.user("grace@example.com", "Grace", &[], "org");

    // The query alone, the body alone, or both naming the same member.
    let by_query = ada
        .put("/api/org/admins?email=grace@example.com", &json!(null))
        .await;
    assert_eq!(by_query.expect(200)["admin"]["email"], "grace@example.com");
    let both = ada
        .delete_json(
            "/api/org/admins?email=grace@example.com",
            &json!({ "email": "grace@example.com" }),
        )
        .await;
    assert_eq!(both.expect(200)["admin"]["isAdmin"], false);

    // A body that is sent is read even when the query names someone: a wrong one is refused.
    ada.put("/api/org/admins?email=grace@example.com", &json!(false))
        .await
        .expect_error(400, "invalid_request");
    ada.put(
        "/api/org/admins?email=grace@example.com",
        &json!({ "email": "ada@example.com" }),
    )
    .await
    .expect_error(400, "invalid_request");
    ada.put("/api/org/admins", &json!(null))
        .await
        .expect_error(400, "invalid_request");
    let admins = ada.get("/api/org/admins").await;
    assert_eq!(
        admins.expect(200)["admins"].as_array().map(Vec::len),
        Some(1),
        "no refused request changed anything"
    );
}
