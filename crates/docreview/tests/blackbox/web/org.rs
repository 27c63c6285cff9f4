//! The organization page: an admin registers an external member with a role on one project;
//! the member (given a password by the operator command) signs in and sees only that
//! project's documents. Refusals (the last admin, a taken email) are said on the page.

use docreview_client::api::{Membership, PageQuery, ProjectRole};
use serde_json::json;

use crate::support::Server;
use crate::web::harness::{self, Browser, WIDE};
use crate::web::review::PASSWORD;

#[tokio::test(flavor = "multi_thread")]
async fn an_admin_registers_an_external_member_who_sees_only_their_project() {
    if !harness::available() {
        return;
    }
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada Lovelace", &["--admin"], PASSWORD);
    server.import_projects(&json!({ "projects": [
        { "code": "ACME", "name": "Acme rollout", "status": "active" },
        { "code": "OTHER", "name": "Another client", "status": "active" },
    ]}));
    let api = server.client(Some(
        &server.issue_token("ada@example.com", "docs,access,comments,org"),
    ));
    for (title, project) in [
        ("Acme plan", Some("ACME")),
        ("Other plan", Some("OTHER")),
        ("Internal notes", None),
    ] {
        let review = api.upload(title, "<p>Text.</p>").await;
        if let Some(code) = project {
            let id = review.review_id.as_str();
            api.api().link_project(code, id).await.expect("link");
        }
    }

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto("/org").await;
    browser.check_accessibility("the organization page").await;
    browser
        .type_into(".register input[name=email]", "carol@client.example")
        .await;
    browser
        .type_into(".register input[name=name]", "Carol Client")
        .await;
    browser
        .run(
            "document.querySelector('.register select[name=project]').value = 'ACME'; \
             document.querySelector('.register select[name=role]').value = 'editor';",
            vec![],
        )
        .await;
    let register = browser.find(".register button[type=submit]").await;
    browser.click_and_wait_for_new_page(&register).await;
    assert!(
        browser
            .text(".done")
            .await
            .contains("carol@client.example is registered, editor on ACME"),
        "the page says what happened"
    );
    let members = api.api().members(&PageQuery::default()).await;
    let carol = members
        .expect("members")
        .members
        .into_iter()
        .find(|m| m.email == "carol@client.example")
        .expect("Carol is a member");
    assert_eq!(carol.membership, Membership::External);
    let roles = api.api().project_roles("ACME").await.expect("roles");
    assert!(
        roles
            .roles
            .iter()
            .any(|r| r.email == "carol@client.example" && r.role == ProjectRole::Editor),
        "{roles:?}"
    );

    // Registering her again is refused on the page, nothing lost.
    browser
        .type_into(".register input[name=email]", "carol@client.example")
        .await;
    browser
        .type_into(".register input[name=name]", "Carol again")
        .await;
    let again = browser.find(".register button[type=submit]").await;
    browser.click_and_wait_for_new_page(&again).await;
    assert!(browser.text(".notice").await.contains("member already"));

    // The operator gives her a password; she signs in and sees only ACME's document.
    let output = server.admin_with_input(
        &[
            "set-password",
            "--email",
            "carol@client.example",
            "--password-stdin",
        ],
        "carol's long password\n",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let carol_browser = Browser::open(&server, WIDE).await;
    carol_browser
        .sign_in("carol@client.example", "carol's long password")
        .await;
    carol_browser.goto("/").await;
    let mut titles = Vec::new();
    for link in carol_browser.find_all(".doc-row .doc-title").await {
        titles.push(link.text().await.expect("title"));
    }
    assert_eq!(titles, ["Acme plan"]);
    carol_browser.quit().await;

    // Suspending her ends her access at once.
    let row = format!("#member-{}", carol.id);
    let suspend = browser.find(&format!("{row} button[value=suspend]")).await;
    browser.click_and_wait_for_new_page(&suspend).await;
    assert!(browser.text(&row).await.contains("suspended"));
    browser.quit().await;
}

#[tokio::test]
async fn the_last_admin_stays_and_the_page_says_why() {
    let server = Server::start();
    let id = server.create_user_with_password("ada@example.com", "Ada", &["--admin"], PASSWORD);
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let page = session.get("/org").await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains(&format!("member-{id}")));
    let csrf = page
        .text
        .split("name=\"csrf-token\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page's CSRF token")
        .to_string();
    let post = |path: &'static str, body: String| {
        let session = session.clone();
        async move {
            session
                .send(
                    session
                        .raw("POST", path)
                        .header("content-type", "application/x-www-form-urlencoded")
                        .body(body),
                )
                .await
        }
    };
    let last = post(
        "/org/members/change",
        format!("csrf={csrf}&email=ada%40example.com&action=remove-admin"),
    )
    .await;
    assert_eq!(last.status, 400, "{}", last.text);
    assert!(last.text.contains("class=\"notice\""), "{}", last.text);
    let unknown = post(
        "/org/members/change",
        format!("csrf={csrf}&email=ada%40example.com&action=promote"),
    )
    .await;
    assert_eq!(unknown.status, 400);
    let bad_role = post(
        "/org/members",
        format!("csrf={csrf}&email=x%40example.com&name=X&project=&role=owner"),
    )
    .await;
    assert_eq!(bad_role.status, 400);
    assert!(bad_role.text.contains("unknown role"));
    let nobody = post(
        "/org/members/change",
        format!("csrf={csrf}&email=nobody%40example.com&action=suspend"),
    )
    .await;
    assert_eq!(nobody.status, 400);

    // A member who is not an admin is told who manages members.
    server.create_user_with_password("bob@example.com", "Bob", &[], PASSWORD);
    let bob = server.sign_in("bob@example.com", PASSWORD).await;
    let page = bob.get("/org").await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains("Only organization admins"));
    let api = server.client(Some(&server.issue_token("ada@example.com", "org")));
    let admins = api.api().admins(&PageQuery::default()).await;
    assert_eq!(admins.expect("admins").admins.len(), 1);
}
