//! The organization: members and administrators, and what suspending or removing a member does
//! to their tokens and sessions.
//!
//! Requests go through the typed client. Raw requests remain for signed-in browser sessions
//! (cookies), members named in the query string, and bodies the typed client cannot send.

use crate::support::{Client, Server, refused};
use docreview_client::api::{
    AccessMode, ListQuery, MemberChange, MemberRef, MemberStatus, Membership, NewMember, PageQuery,
    ProjectRole, Role, RoleGrant, RolesChange, SharingChange, UserStatus,
};
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

fn member(email: &str) -> MemberRef {
    MemberRef {
        email: email.to_string(),
    }
}

fn new_member(email: &str, display_name: &str) -> NewMember {
    NewMember {
        email: email.to_string(),
        display_name: display_name.to_string(),
    }
}

fn member_change(
    email: &str,
    status: Option<MemberStatus>,
    display_name: Option<&str>,
) -> MemberChange {
    MemberChange {
        email: email.to_string(),
        status,
        display_name: display_name.map(str::to_string),
    }
}

fn page(limit: Option<usize>, cursor: Option<String>) -> PageQuery {
    PageQuery { limit, cursor }
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
    let first = ada
        .api()
        .members(&page(Some(2), None))
        .await
        .expect("members");
    let members = &first.members;
    let emails: Vec<_> = members.iter().map(|m| m.email.as_str()).collect();
    assert_eq!(
        emails,
        ["ada@example.com", "alan@example.com"],
        "ordered by email"
    );
    assert!(members[0].is_admin);
    assert_eq!(members[0].status, UserStatus::Active);
    assert_eq!(members[0].membership, Membership::Internal);
    let cursor = first.next_cursor.clone().expect("more");
    let rest = ada
        .api()
        .members(&page(Some(2), Some(cursor)))
        .await
        .expect("members")
        .members;
    assert_eq!(
        rest.len(),
        1,
        "service principals are not members: {rest:?}"
    );
    assert_eq!(rest[0].email, "grace@example.com");

    refused(
        grace.api().members(&PageQuery::default()).await,
        403,
        "forbidden",
    );
    refused(
        grace.api().admins(&PageQuery::default()).await,
        403,
        "forbidden",
    );
    refused(
        server.manager().api().members(&PageQuery::default()).await,
        403,
        "forbidden",
    );
    refused(
        server
            .client(None)
            .api()
            .members(&PageQuery::default())
            .await,
        401,
        "unauthorized",
    );
}

#[tokio::test]
async fn registering_an_external_member() {
    let (server, ada) = with_admin();
    let member = ada
        .api()
        .register_member(&new_member("Kate@Partner.example", "Kate Partner"))
        .await
        .expect("register");
    assert_eq!(member.email, "kate@partner.example");
    assert_eq!(member.membership, Membership::External);
    assert_eq!(member.status, UserStatus::Active);
    assert_eq!(member.display_name, "Kate Partner");
    assert!(member.id.starts_with("usr_"), "{}", member.id);
    refused(
        ada.api()
            .register_member(&new_member("kate@partner.example", "Again"))
            .await,
        409,
        "already_exists",
    );
    refused(
        ada.api()
            .register_member(&new_member("not-an-email", "X"))
            .await,
        400,
        "invalid_request",
    );
    refused(
        ada.api()
            .register_member(&new_member("x@partner.example", "  "))
            .await,
        400,
        "invalid_request",
    );
    // Without a display name (raw: the typed client always sends one).
    ada.post("/api/org/members", &json!({ "email": "x@partner.example" }))
        .await
        .expect_error(400, "invalid_request");

    // An external member sees no link-mode document: they act only inside their projects.
    let kate = server.client(Some(
        &server.issue_token("kate@partner.example", "docs,comments"),
    ));
    let review = ada.upload("Internal plan", "<p>Internal only.</p>").await;
    refused(
        kate.api().review(&review.review_id, false).await,
        404,
        "not_found",
    );
    let listed = kate
        .api()
        .list_reviews(&ListQuery::default())
        .await
        .expect("list");
    assert!(listed.reviews.is_empty());
}

#[tokio::test]
async fn suspending_a_member_cuts_off_their_tokens_and_sessions_at_once() {
    let (server, ada) = with_admin();
    server.create_user_with_password("grace@example.com", "Grace", &[], PASSWORD);
    let token = server.client(Some(&server.issue_token("grace@example.com", "comments")));
    // The signed-in browser session stays raw: the typed client sends no cookie.
    let session = server.sign_in("grace@example.com", PASSWORD).await;
    token.api().me().await.expect("me");
    session.get("/api/me").await.expect(200);

    let suspended = ada
        .api()
        .update_member(&member_change(
            "grace@example.com",
            Some(MemberStatus::Suspended),
            None,
        ))
        .await
        .expect("suspend");
    assert_eq!(suspended.status, UserStatus::Suspended);
    refused(token.api().me().await, 401, "unauthorized");
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
        .api()
        .update_member(&member_change(
            "grace@example.com",
            Some(MemberStatus::Active),
            Some("Grace H."),
        ))
        .await
        .expect("rename");
    assert_eq!(renamed.display_name, "Grace H.");
    token.api().me().await.expect("me");

    refused(
        ada.api()
            .update_member(&member_change(
                "ada@example.com",
                Some(MemberStatus::Suspended),
                None,
            ))
            .await,
        403,
        "forbidden",
    );
    // Nothing to change, and a status an admin cannot set (raw: the typed client sends every
    // field, and has no `removed` status to set).
    ada.patch("/api/org/members", &json!({ "email": "grace@example.com" }))
        .await
        .expect_error(400, "invalid_request");
    ada.patch(
        "/api/org/members",
        &json!({ "email": "grace@example.com", "status": "removed" }),
    )
    .await
    .expect_error(400, "invalid_request");
    refused(
        ada.api()
            .update_member(&member_change(
                "nobody@example.com",
                Some(MemberStatus::Active),
                None,
            ))
            .await,
        404,
        "not_found",
    );
}

#[tokio::test]
async fn removing_an_external_member_revokes_everything_they_held() {
    let (server, ada) = with_admin();
    server.create_user_with_password("kate@partner.example", "Kate", &["--external"], PASSWORD);
    let token = server.client(Some(
        &server.issue_token("kate@partner.example", "comments"),
    ));
    // The signed-in browser session stays raw: the typed client sends no cookie.
    let session = server.sign_in("kate@partner.example", PASSWORD).await;
    server.import_projects(&json!({ "projects": [
        { "code": "ACME", "name": "Acme", "company": "Acme", "status": "active" }
    ]}));
    let viewer = RolesChange {
        add: vec![RoleGrant {
            email: "kate@partner.example".into(),
            role: ProjectRole::Viewer,
        }],
        remove: vec![],
    };
    ada.api()
        .change_project_roles("ACME", &viewer)
        .await
        .expect("roles");

    // Named in the query string (raw: the typed client names the member in the body).
    let removed = ada
        .delete("/api/org/members?email=kate@partner.example")
        .await;
    assert_eq!(removed.expect(200)["member"]["status"], "removed");
    refused(token.api().me().await, 401, "unauthorized");
    session
        .get("/api/me")
        .await
        .expect_error(401, "unauthorized");
    let roles = ada.api().project_roles("ACME").await.expect("roles");
    assert!(roles.roles.is_empty(), "project roles go too: {roles:?}");
    let members = ada
        .api()
        .members(&PageQuery::default())
        .await
        .expect("members");
    assert!(
        !members
            .members
            .iter()
            .any(|m| m.email == "kate@partner.example"),
        "{members:?}"
    );
    refused(
        ada.api()
            .remove_member(&member("kate@partner.example"))
            .await,
        404,
        "not_found",
    );

    // Registering the email again brings the member back, without the old tokens.
    let again = ada
        .api()
        .register_member(&new_member("kate@partner.example", "Kate"))
        .await
        .expect("register again");
    assert_eq!(again.status, UserStatus::Active);
    refused(token.api().me().await, 401, "unauthorized");

    // Internal members are suspended, not removed; a request must name someone.
    server.create_user("alan@example.com", "Alan", &[]);
    refused(
        ada.api().remove_member(&member("alan@example.com")).await,
        403,
        "forbidden",
    );
    // Naming nobody (raw: the typed client always names a member).
    ada.delete("/api/org/members")
        .await
        .expect_error(400, "invalid_request");
}

#[tokio::test]
async fn administrators_are_added_and_removed_but_never_all_of_them() {
    let (server, ada) = with_admin();
    let grace = server.user("grace@example.com", "Grace", &[], "org");
    refused(
        grace.api().members(&PageQuery::default()).await,
        403,
        "forbidden",
    );

    let added = ada
        .api()
        .add_admin(&member("grace@example.com"))
        .await
        .expect("add admin");
    assert!(added.is_admin);
    grace
        .api()
        .members(&PageQuery::default())
        .await
        .expect("members");
    let admins = ada
        .api()
        .admins(&PageQuery::default())
        .await
        .expect("admins");
    let emails: Vec<_> = admins.admins.iter().map(|a| a.email.as_str()).collect();
    assert_eq!(emails, ["ada@example.com", "grace@example.com"]);

    // An admin acts as owner on every document.
    let owner = server.user("owner@example.com", "Owner", &[], "docs,access");
    let id = owner.upload("Private", "<p>Secret.</p>").await.review_id;
    let restrict = SharingChange {
        mode: Some(AccessMode::Restricted),
        allowed_users: None,
    };
    owner
        .api()
        .change_sharing(&id, &restrict)
        .await
        .expect("restrict");
    let seen = grace.api().review(&id, false).await.expect("read");
    assert_eq!(seen.role, Role::Owner);

    let removed = grace
        .api()
        .remove_admin(&member("ada@example.com"))
        .await
        .expect("remove admin");
    assert!(!removed.is_admin);
    refused(
        grace.api().remove_admin(&member("grace@example.com")).await,
        409,
        "invalid_transition",
    );

    server.create_user("kate@partner.example", "Kate", &["--external"]);
    refused(
        grace.api().add_admin(&member("kate@partner.example")).await,
        400,
        "invalid_request",
    );
    refused(
        grace.api().add_admin(&member("nobody@example.com")).await,
        404,
        "not_found",
    );
    // Writes need the `org` scope even for an admin.
    let reader = server.client(Some(&server.issue_token("grace@example.com", "docs")));
    reader
        .api()
        .admins(&PageQuery::default())
        .await
        .expect("admins");
    refused(
        reader.api().add_admin(&member("ada@example.com")).await,
        403,
        "insufficient_scope",
    );
}

#[tokio::test]
async fn a_member_is_named_once_by_query_or_body() {
    // Raw: naming a member in the query string, and odd bodies, are the point.
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
    let admins = ada
        .api()
        .admins(&PageQuery::default())
        .await
        .expect("admins");
    assert_eq!(
        admins.admins.len(),
        1,
        "no refused request changed anything"
    );
}
