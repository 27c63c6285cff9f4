//! The account page: making a personal token (its value shown once), using it, revoking it;
//! and the forms' refusals said on the page.

use serde_json::json;

use crate::support::Server;
use crate::web::harness::{self, Browser, WIDE};
use crate::web::review::{PASSWORD, setup};

#[tokio::test(flavor = "multi_thread")]
async fn create_use_and_revoke_a_personal_token() {
    if !harness::available() {
        return;
    }
    let (server, _api) = setup().await;
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto("/account").await;
    browser.type_into("#token-name", "release checker").await;
    browser.click(".token-form input[name=docs]").await;
    let create = browser.find(".token-form button[type=submit]").await;
    browser.click_and_wait_for_new_page(&create).await;
    let value = browser
        .run(
            "return document.getElementById('new-token-value').value",
            vec![],
        )
        .await;
    let value = value.as_str().expect("the token is shown").to_string();
    assert!(value.starts_with("drp_"), "{value}");
    browser.screenshot("account-new-token").await;
    browser.check_accessibility("the account page").await;

    // The token works, with the scopes ticked.
    let me = server.client(Some(&value)).get("/api/me").await;
    let scopes = me.expect(200)["token"]["scopes"].clone();
    assert_eq!(scopes, json!(["docs", "comments"]));

    // Shown once: a reload no longer has it.
    browser.goto("/account").await;
    assert_eq!(
        browser
            .run("return document.getElementById('new-token-value')", vec![])
            .await,
        serde_json::Value::Null
    );
    let id = me.expect(200)["token"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let row = format!("#token-{id}");
    assert!(browser.text(&row).await.contains("release checker"));

    let revoke = browser.find(&format!("{row} button[type=submit]")).await;
    browser.click_and_wait_for_new_page(&revoke).await;
    assert!(
        browser.find_all(&row).await.is_empty(),
        "a revoked token leaves the list"
    );
    server
        .client(Some(&value))
        .get("/api/me")
        .await
        .expect_error(401, "unauthorized");
    browser.quit().await;
}

#[tokio::test]
async fn token_forms_say_what_is_wrong() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let page = session.get("/account").await;
    assert_eq!(page.status, 200, "{}", page.text);
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

    let unnamed = post("/account/tokens", format!("csrf={csrf}&name=+++")).await;
    assert_eq!(unnamed.status, 400, "{}", unnamed.text);
    assert!(unnamed.text.contains("token name"), "{}", unnamed.text);

    let unknown = post("/account/tokens/tok_nobody/revoke", format!("csrf={csrf}")).await;
    assert_eq!(unknown.status, 400, "{}", unknown.text);
    assert!(unknown.text.contains("not one of yours"));

    let forged = post("/account/tokens", "name=forged".to_string()).await;
    assert_eq!(forged.status, 403, "{}", forged.text);

    // The org scope is offered to admins only (it does nothing for anyone else).
    assert!(!page.text.contains("name=\"org\""));
}
