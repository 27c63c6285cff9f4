//! Invitations and password resets in a real browser (DESIGN.md §8.2): an admin invites from
//! the Organization page and copies the link; the invited person opens it in their own
//! browser, chooses a name and a password, and lands signed in on the documents page. A person
//! who forgot their password follows "Forgot password?", gets the mail (a real SMTP server),
//! sets a new password on the reset page and signs in with it.

use std::time::Duration;

use crate::support::Server;
use crate::support::smtp::SmtpServer;
use crate::web::harness::{self, Browser, WIDE};
use crate::web::review::PASSWORD;

#[tokio::test(flavor = "multi_thread")]
async fn an_invited_person_joins_from_the_link_and_is_signed_in() {
    if !harness::available() {
        return;
    }
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada Lovelace", &["--admin"], PASSWORD);
    let admin = Browser::open(&server, WIDE).await;
    admin.sign_in("ada@example.com", PASSWORD).await;
    admin.goto("/org").await;
    admin
        .type_into(".invite input[name=email]", "dana@example.com")
        .await;
    admin.type_into(".invite input[name=name]", "Dana").await;
    let submit = admin.find(".invite button[type=submit]").await;
    admin.click_and_wait_for_new_page(&submit).await;
    assert!(
        admin
            .text(".done")
            .await
            .contains("dana@example.com is invited")
    );
    assert!(
        admin
            .text("table.invitations")
            .await
            .contains("dana@example.com")
    );
    admin.find("[data-copy=invitation-link]").await;
    admin
        .check_accessibility("the organization page with an invitation")
        .await;
    let link = admin
        .run(
            "return document.getElementById('invitation-link').value;",
            vec![],
        )
        .await;
    let link = link.as_str().expect("the link").to_string();
    assert!(
        link.starts_with(&format!("{}/invite/", server.base)),
        "{link}"
    );
    admin.quit().await;

    let dana = Browser::open(&server, WIDE).await;
    dana.goto_url(&link).await;
    assert!(dana.text("main").await.contains("dana@example.com"));
    dana.check_accessibility("the invitation page").await;
    let name = dana.find(".invite-form input[name=name]").await;
    assert_eq!(
        name.prop("value").await.expect("value").as_deref(),
        Some("Dana"),
        "the suggested name is offered"
    );
    dana.type_into(".invite-form input[name=password]", PASSWORD)
        .await;
    let join = dana.find(".invite-form button[type=submit]").await;
    dana.click_and_wait_for_new_page(&join).await;
    dana.wait_for("document.querySelector('.signout') !== null", "signed in")
        .await;
    assert_eq!(dana.path().await, "/");
    // The link is spent: opening it again says so kindly.
    dana.goto_url(&link).await;
    assert!(dana.text("main").await.contains("cannot be used"));
    dana.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forgotten_password_is_reset_from_the_mailed_link() {
    if !harness::available() {
        return;
    }
    let Some(smtp) = SmtpServer::start() else {
        return;
    };
    let env = smtp.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let server = Server::start_with(&env);
    server.create_user_with_password("ada@example.com", "Ada Lovelace", &[], PASSWORD);
    let browser = Browser::open(&server, WIDE).await;
    browser.goto("/login").await;
    let forgot = browser.find("a[href='/forgot-password']").await;
    browser.click_and_wait_for_new_page(&forgot).await;
    browser
        .type_into(".forgot-form input[name=email]", "ada@example.com")
        .await;
    let send = browser.find(".forgot-form button[type=submit]").await;
    browser.click_and_wait_for_new_page(&send).await;
    assert!(
        browser
            .text("main")
            .await
            .contains("If an account with that email")
    );

    let mails = smtp
        .wait_for("ada@example.com", 1, Duration::from_secs(20))
        .await;
    let text = mails[0]["text"].as_str().expect("text part");
    let prefix = format!("{}/reset/", server.base);
    let start = text.find(&prefix).expect("a reset link");
    let link: String = text[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    browser.goto_url(&link).await;
    browser.check_accessibility("the password reset page").await;
    browser
        .type_into(".reset-form input[name=password]", "short")
        .await;
    // The browser's own check (minlength) keeps a short password from being sent; the server
    // refuses it too (black-box tests), so fill a good one.
    browser
        .run(
            "document.querySelector('.reset-form input[name=password]').value = '';",
            vec![],
        )
        .await;
    browser
        .type_into(".reset-form input[name=password]", "a brand new password")
        .await;
    let set = browser.find(".reset-form button[type=submit]").await;
    browser.click_and_wait_for_new_page(&set).await;
    assert!(browser.text("main").await.contains("Password changed"));
    browser
        .sign_in("ada@example.com", "a brand new password")
        .await;
    assert_eq!(browser.path().await, "/");
    // And changes it again on the Account page, staying signed in.
    browser.goto("/account").await;
    browser
        .type_into(".password-form input[name=current]", "a brand new password")
        .await;
    browser
        .type_into(".password-form input[name=new]", "the third password")
        .await;
    let change = browser.find(".password-form button[type=submit]").await;
    browser.click_and_wait_for_new_page(&change).await;
    assert!(
        browser
            .text(".done")
            .await
            .contains("Your password is changed")
    );
    browser.check_accessibility("the account page").await;
    browser.quit().await;
}
