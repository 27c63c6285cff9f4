//! Signing in and out, and approving or denying a command-line login.

use serde_json::json;

use crate::support::{self, Server};
use crate::web::harness::{self, Browser, NARROW, WIDE};

const PASSWORD: &str = "correct horse battery";

fn server_with_ada() -> Server {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada Lovelace", &["--admin"], PASSWORD);
    server
}

#[tokio::test(flavor = "multi_thread")]
async fn sign_in_lands_on_the_page_asked_for_and_sign_out_ends_the_session() {
    if !harness::available() {
        return;
    }
    let server = server_with_ada();
    let browser = Browser::open(&server, WIDE).await;
    browser.goto("/account?tab=profile").await;
    browser
        .wait_for("location.pathname === '/login'", "the sign-in page")
        .await;
    browser.check_accessibility("the sign-in page").await;
    browser.screenshot("sign-in").await;

    // A wrong password keeps the person on the sign-in page with a notice.
    browser.fill_sign_in("ada@example.com", "wrong").await;
    let notice = browser.find(".notice").await.text().await.expect("text");
    assert!(notice.contains("wrong"), "{notice}");

    browser.fill_sign_in("ada@example.com", PASSWORD).await;
    browser
        .wait_for("location.pathname === '/account'", "the account page")
        .await;
    assert_eq!(browser.path().await, "/account?tab=profile");
    let page = browser.find("main").await.text().await.expect("text");
    assert!(page.contains("ada@example.com"), "{page}");
    browser.check_accessibility("the account page").await;

    // The documents page and the organization page (Ada is an admin).
    browser.goto("/").await;
    browser.find("h1").await;
    browser.check_accessibility("the documents page").await;
    browser
        .find("nav a[href='/org']")
        .await
        .click()
        .await
        .expect("click");
    browser
        .wait_for("location.pathname === '/org'", "the organization page")
        .await;
    let heading = browser.find("main h1").await.text().await.expect("text");
    assert_eq!(heading, "Organization");
    browser.check_accessibility("the organization page").await;

    let sign_out = browser.find(".signout button").await;
    browser.click_and_wait_for_new_page(&sign_out).await;
    browser
        .wait_for("location.pathname === '/login'", "the sign-in page")
        .await;
    browser.goto("/").await;
    browser
        .wait_for(
            "location.pathname === '/login'",
            "sign-in again after signing out",
        )
        .await;
    browser.quit().await;
}

/// A PKCE pair (RFC 7636 S256) for a command-line login.
fn pkce() -> (String, String) {
    use base64::Engine;
    use sha2::Digest;
    let verifier = format!("verifier-{}-{}", std::process::id(), support::now_ms());
    let verifier = format!("{verifier:-<50}");
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_line_login_is_approved_or_denied_in_the_browser() {
    if !harness::available() {
        return;
    }
    let server = server_with_ada();
    let anonymous = server.client(None);
    let browser = Browser::open(&server, NARROW).await;

    // Approve: the CLI's link asks to sign in first, then shows Approve and Deny.
    let (verifier, challenge) = pkce();
    browser
        .goto(&format!(
            "/cli-login?challenge={challenge}&name=ada-laptop&scopes=docs,comments"
        ))
        .await;
    browser.fill_sign_in("ada@example.com", PASSWORD).await;
    let page = browser.find("main").await.text().await.expect("text");
    assert!(
        page.contains("ada-laptop") && page.contains("docs,comments"),
        "{page}"
    );
    browser
        .check_accessibility("the command-line approval page")
        .await;
    browser.screenshot("cli-login-narrow").await;
    let approve = browser.find("form[action='/cli-login'] button").await;
    browser.click_and_wait_for_new_page(&approve).await;
    let code = browser
        .find("#login-code")
        .await
        .text()
        .await
        .expect("code");
    let exchanged = anonymous
        .post(
            "/api/auth/cli/token",
            &json!({ "code": code.trim(), "verifier": verifier }),
        )
        .await;
    let token = exchanged.expect(200)["token"]
        .as_str()
        .expect("a token")
        .to_string();
    let me = server.client(Some(&token)).get("/api/me").await;
    assert_eq!(me.expect(200)["user"]["email"], "ada@example.com");
    assert_eq!(me.json["token"]["scopes"], json!(["docs", "comments"]));

    // Deny: no code is shown, and no code for that challenge exists.
    let (_, challenge) = pkce();
    browser
        .goto(&format!("/cli-login?challenge={challenge}&name=intruder"))
        .await;
    let deny = browser.find("form[action='/cli-login/deny'] button").await;
    browser.click_and_wait_for_new_page(&deny).await;
    browser
        .wait_for(
            "document.querySelector('h1')?.textContent === 'Login denied'",
            "the denial",
        )
        .await;
    assert!(browser.find_all("#login-code").await.is_empty());
    let tokens = server.client(Some(&token)).get("/api/me/tokens").await;
    let names: Vec<_> = tokens.expect(200)["tokens"]
        .as_array()
        .expect("tokens")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(names, vec!["ada-laptop".to_string()]);
    browser.quit().await;
}
