//! The Webhooks page under Organization (DESIGN.md §8.3), in a real browser: an org admin
//! registers a webhook to a receiver on 127.0.0.1 (`support::webhook_receiver`, the server
//! started with `DOCREVIEW_WEBHOOK_ALLOW_PRIVATE=true`), copies its secret (shown once, then
//! never), pings it and sees the delivery succeed, redelivers it, rotates the secret, disables
//! and deletes the webhook; every step is checked through the API too. Without the setting a
//! private address is refused on the page with the form kept; non-admins get the 403 page.

use docreview_client::api::PageQuery;
use serde_json::json;

use crate::support::webhook_receiver::{Receiver, signed_by};
use crate::support::{Client, Server};
use crate::web::harness::{self, Browser, NARROW, WIDE};
use crate::web::review::PASSWORD;

fn admin_api(server: &Server) -> Client {
    server.client(Some(&server.issue_token("ada@example.com", "org")))
}

/// The value of the input `id` on the page.
async fn input_value(browser: &Browser, id: &str) -> String {
    browser
        .run(
            "return document.getElementById(arguments[0]).value;",
            vec![json!(id)],
        )
        .await
        .as_str()
        .expect("a value")
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_admin_registers_pings_rotates_disables_and_deletes_a_webhook() {
    if !harness::available() {
        return;
    }
    let server = Server::start_with(&[("DOCREVIEW_WEBHOOK_ALLOW_PRIVATE", "true")]);
    server.create_user_with_password("ada@example.com", "Ada Lovelace", &["--admin"], PASSWORD);
    server.import_projects(&json!({ "projects": [
        { "code": "ACME", "name": "Acme rollout", "status": "active" },
    ]}));
    let api = admin_api(&server);
    let mut receiver = Receiver::start(&[]).await;

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto("/org").await;
    let tab = browser.find(".org-tabs a[href='/org/webhooks']").await;
    browser.click_and_wait_for_new_page(&tab).await;
    assert_eq!(browser.path().await, "/org/webhooks");
    browser
        .check_accessibility("the webhooks page, empty")
        .await;

    browser
        .type_into(".new-webhook input[name=url]", &receiver.url)
        .await;
    browser
        .type_into(".new-webhook input[name=description]", "Build bot")
        .await;
    browser
        .click(".new-webhook input[value='comment.created']")
        .await;
    browser
        .click(".new-webhook input[value='review.created']")
        .await;
    let register = browser.find(".new-webhook button[type=submit]").await;
    browser.click_and_wait_for_new_page(&register).await;
    assert!(
        browser.text(".done").await.contains("is registered"),
        "the page says what happened"
    );
    let secret = input_value(&browser, "webhook-secret").await;
    assert!(secret.starts_with("whsec_"), "{secret}");
    browser.find("[data-copy=webhook-secret]").await;
    browser
        .check_accessibility("the webhooks page with a new secret")
        .await;

    let list = api.api().webhooks().await.expect("webhooks").webhooks;
    assert_eq!(list.len(), 1);
    let webhook = &list[0];
    assert_eq!(webhook.url, receiver.url);
    // In the order of the page's checkboxes.
    assert_eq!(webhook.events, ["review.created", "comment.created"]);
    assert_eq!(webhook.description.as_deref(), Some("Build bot"));
    assert!(webhook.active);
    assert!(webhook.secret.is_none(), "the API never shows it again");

    // Shown once: the list again holds the webhook, not its secret.
    browser.goto("/org/webhooks").await;
    let row = format!("#webhook-{}", webhook.id);
    let text = browser.text(&row).await;
    assert!(text.contains("review.created, comment.created"), "{text}");
    assert!(
        browser.find_all("#webhook-secret").await.is_empty(),
        "no secret box"
    );
    let source = browser
        .run("return document.documentElement.outerHTML;", vec![])
        .await;
    assert!(!source.as_str().expect("html").contains(&secret));

    // The webhook's page: ping, and the delivery succeeds on screen (the list refreshes itself
    // while a delivery is pending).
    let link = browser.find(&format!("{row} a")).await;
    browser.click_and_wait_for_new_page(&link).await;
    assert_eq!(
        browser.path().await,
        format!("/org/webhooks/{}", webhook.id)
    );
    assert!(
        browser
            .text("#deliveries")
            .await
            .contains("No deliveries yet")
    );
    let ping = browser.find(".webhook-actions button[name=ping]").await;
    browser.click_and_wait_for_new_page(&ping).await;
    assert!(browser.text(".done").await.contains("ping"));
    let request = receiver.next().await;
    assert!(signed_by(&secret, &request), "signed with the secret shown");
    assert_eq!(request.json()["type"], "ping");
    browser
        .wait_for(
            "document.querySelector('#deliveries tr.delivery-succeeded')",
            "the ping's delivery to succeed on screen",
        )
        .await;
    let row_text = browser.text("#deliveries tr.delivery-succeeded").await;
    assert!(row_text.contains("ping"), "{row_text}");
    assert!(
        row_text.contains("204"),
        "the receiver's answer: {row_text}"
    );
    browser
        .run(
            "document.querySelector('.webhook-facts').scrollIntoView();",
            vec![],
        )
        .await;
    browser.screenshot("webhooks").await;
    browser
        .check_accessibility("a webhook's page with a delivery")
        .await;

    let deliveries = api
        .api()
        .webhook_deliveries(&webhook.id, &PageQuery::default())
        .await
        .expect("deliveries")
        .deliveries;
    assert_eq!(deliveries.len(), 1);
    assert_eq!(deliveries[0].status.as_str(), "succeeded");
    assert_eq!(deliveries[0].last_response_status, Some(204));

    // Redeliver: the same event again, same webhook-id.
    let redeliver = browser
        .find(&format!("#delivery-{} button", deliveries[0].id))
        .await;
    browser.click_and_wait_for_new_page(&redeliver).await;
    assert!(browser.text(".done").await.contains("delivered again"));
    let again = receiver.next().await;
    assert_eq!(again.header("webhook-id"), request.header("webhook-id"));
    let deliveries = api
        .api()
        .webhook_deliveries(&webhook.id, &PageQuery::default())
        .await
        .expect("deliveries")
        .deliveries;
    assert_eq!(deliveries.len(), 2);

    // Rotate: a new secret, shown once, the old one still signing for 24 hours.
    let rotate = browser.find(".webhook-actions button[name=rotate]").await;
    browser.click_and_wait_for_new_page(&rotate).await;
    let box_text = browser.text(".new-secret").await;
    assert!(box_text.contains("24 hours"), "{box_text}");
    let rotated = input_value(&browser, "webhook-secret").await;
    assert!(rotated.starts_with("whsec_"));
    assert_ne!(rotated, secret);
    api.api().ping_webhook(&webhook.id).await.expect("ping");
    let signed = receiver.next().await;
    assert!(signed_by(&rotated, &signed), "the new secret signs");
    assert!(signed_by(&secret, &signed), "and the old one, for a day");
    browser.goto(&format!("/org/webhooks/{}", webhook.id)).await;
    assert!(browser.find_all("#webhook-secret").await.is_empty());

    // Disable, then enable.
    let disable = browser.find(".webhook-actions button[value=false]").await;
    browser.click_and_wait_for_new_page(&disable).await;
    assert!(browser.text(".done").await.contains("disabled"));
    assert!(browser.text(".webhook-active").await.contains("disabled"));
    assert!(
        !api.api()
            .webhook(&webhook.id)
            .await
            .expect("webhook")
            .active
    );
    let enable = browser.find(".webhook-actions button[value=true]").await;
    browser.click_and_wait_for_new_page(&enable).await;
    assert!(
        api.api()
            .webhook(&webhook.id)
            .await
            .expect("webhook")
            .active
    );

    // On a phone the page holds the same, one column.
    let phone = Browser::open(&server, NARROW).await;
    phone.sign_in("ada@example.com", PASSWORD).await;
    phone.goto(&format!("/org/webhooks/{}", webhook.id)).await;
    phone.find("#deliveries tr.delivery-succeeded").await;
    phone.screenshot("webhooks-phone").await;
    let wider = phone
        .run(
            "return [...document.querySelectorAll('main *')] \
                .filter((e) => !e.closest('thead, .visually-hidden')) \
                .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1) \
                .map((e) => e.tagName + '.' + e.className);",
            vec![],
        )
        .await;
    assert_eq!(wider, json!([]), "nothing wider than the phone");
    phone.quit().await;

    // Delete, after saying so.
    browser.click(".webhook-delete summary").await;
    let delete = browser.find(".webhook-delete button[name=delete]").await;
    browser.click_and_wait_for_new_page(&delete).await;
    assert_eq!(
        browser.path().await,
        format!("/org/webhooks/{}/delete", webhook.id)
    );
    assert!(browser.text(".done").await.contains("is deleted"));
    assert!(
        browser
            .text("table.webhook-list")
            .await
            .contains("No webhooks yet")
    );
    assert!(
        api.api()
            .webhooks()
            .await
            .expect("webhooks")
            .webhooks
            .is_empty()
    );
    browser.goto(&format!("/org/webhooks/{}", webhook.id)).await;
    assert!(browser.text("main").await.contains("Not found"));
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_private_address_is_refused_in_place_with_the_form_kept() {
    if !harness::available() {
        return;
    }
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada Lovelace", &["--admin"], PASSWORD);
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto("/org/webhooks").await;
    browser
        .type_into(".new-webhook input[name=url]", "https://127.0.0.1/hook")
        .await;
    browser
        .type_into(".new-webhook input[name=description]", "Kept")
        .await;
    browser
        .click(".new-webhook input[value='run.completed']")
        .await;
    let register = browser.find(".new-webhook button[type=submit]").await;
    browser.click_and_wait_for_new_page(&register).await;
    let notice = browser.text(".notice").await;
    assert!(notice.contains("url"), "{notice}");
    let kept = browser
        .run(
            "const form = document.querySelector('.new-webhook'); \
             return [form.url.value, form.description.value, \
                     form.querySelector('input[value=\"run.completed\"]').checked];",
            vec![],
        )
        .await;
    assert_eq!(kept, json!(["https://127.0.0.1/hook", "Kept", true]));
    assert!(browser.find_all("#webhook-secret").await.is_empty());
    browser.screenshot("webhooks-refused").await;
    browser
        .check_accessibility("the webhooks page with a refusal")
        .await;
    browser.quit().await;
    assert!(
        admin_api(&server)
            .api()
            .webhooks()
            .await
            .expect("webhooks")
            .webhooks
            .is_empty(),
        "nothing registered"
    );
}

/// The CSRF token of a page.
fn csrf_of(page: &str) -> String {
    page.split("name=\"csrf-token\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page's CSRF token")
        .to_string()
}

async fn post_form(session: &Client, path: &str, body: String) -> crate::support::Reply {
    session
        .send(
            session
                .raw("POST", path)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body),
        )
        .await
}

#[tokio::test]
async fn refusals_are_said_on_the_page_and_non_admins_get_the_403_page() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &["--admin"], PASSWORD);
    let ada = server.sign_in("ada@example.com", PASSWORD).await;
    let page = ada.get("/org/webhooks").await;
    assert_eq!(page.status, 200, "{}", page.text);
    let csrf = csrf_of(&page.text);

    // Without the setting, an address on this machine, a URL that is none, an unknown event
    // type, no event at all: each said on the page, nothing registered.
    for (body, said) in [
        (
            format!("csrf={csrf}&url=http%3A%2F%2F127.0.0.1%3A9%2Fhook&which=all"),
            "url",
        ),
        (format!("csrf={csrf}&url=not+a+url&which=all"), "url"),
        (
            format!(
                "csrf={csrf}&url=https%3A%2F%2Fhooks.example.com%2Fx&which=chosen&events=review.eaten"
            ),
            "unknown event type",
        ),
        (
            format!("csrf={csrf}&url=https%3A%2F%2Fhooks.example.com%2Fx&which=chosen"),
            "at least one",
        ),
    ] {
        let reply = post_form(&ada, "/org/webhooks", body.clone()).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.text);
        assert!(reply.text.contains("class=\"notice\""), "{}", reply.text);
        assert!(reply.text.contains(said), "{body}: {}", reply.text);
    }
    // Without the CSRF token: refused before anything.
    let forged = post_form(
        &ada,
        "/org/webhooks",
        "url=https%3A%2F%2Fhooks.example.com%2Fx&which=all".to_string(),
    )
    .await;
    assert_eq!(forged.status, 403, "{}", forged.text);
    let api = admin_api(&server);
    assert!(
        api.api()
            .webhooks()
            .await
            .expect("list")
            .webhooks
            .is_empty()
    );

    // An unknown webhook is the 404 page, for every form too.
    assert_eq!(ada.get("/org/webhooks/wh_nope").await.status, 404);
    for action in [
        "ping",
        "rotate-secret",
        "delete",
        "deliveries/whd_x/redeliver",
    ] {
        let reply = post_form(
            &ada,
            &format!("/org/webhooks/wh_nope/{action}"),
            format!("csrf={csrf}"),
        )
        .await;
        assert_eq!(reply.status, 404, "{action}: {}", reply.text);
    }

    // A member who is not an admin: the 403 page, for the list, a webhook and every form.
    server.create_user_with_password("bob@example.com", "Bob", &[], PASSWORD);
    let bob = server.sign_in("bob@example.com", PASSWORD).await;
    let org = bob.get("/org").await;
    assert!(
        !org.text.contains("/org/webhooks"),
        "no Webhooks tab for Bob"
    );
    let refused = bob.get("/org/webhooks").await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    assert!(refused.text.contains("Not allowed"));
    let bob_csrf = csrf_of(&bob.get("/").await.text);
    let create = post_form(
        &bob,
        "/org/webhooks",
        format!("csrf={bob_csrf}&url=https%3A%2F%2Fhooks.example.com%2Fx&which=all"),
    )
    .await;
    assert_eq!(create.status, 403, "{}", create.text);
    assert!(
        api.api()
            .webhooks()
            .await
            .expect("list")
            .webhooks
            .is_empty()
    );
    assert_eq!(bob.get("/org/webhooks/wh_nope").await.status, 403);
}

#[tokio::test]
async fn deliveries_page_back_with_older() {
    let server = Server::start_with(&[("DOCREVIEW_WEBHOOK_ALLOW_PRIVATE", "true")]);
    server.create_user_with_password("ada@example.com", "Ada", &["--admin"], PASSWORD);
    let api = admin_api(&server);
    let receiver = Receiver::start(&[]).await;
    let webhook = api
        .api()
        .create_webhook(&docreview_client::api::NewWebhook {
            url: receiver.url.clone(),
            events: vec!["*".to_string()],
            project_code: None,
            description: None,
        })
        .await
        .expect("create");
    let mut pinged = Vec::new();
    for _ in 0..21 {
        pinged.push(api.api().ping_webhook(&webhook.id).await.expect("ping").id);
    }
    let ada = server.sign_in("ada@example.com", PASSWORD).await;
    let newest = ada.get(&format!("/org/webhooks/{}", webhook.id)).await;
    assert_eq!(newest.status, 200, "{}", newest.text);
    assert!(newest.text.contains("all events"));
    let rows = |page: &str| page.matches("<tr id=\"delivery-").count();
    assert_eq!(rows(&newest.text), 20, "a page of 20, newest first");
    assert!(newest.text.contains(&format!("delivery-{}", pinged[20])));
    assert!(!newest.text.contains(&format!("delivery-{}", pinged[0])));
    let older = newest
        .text
        .split("class=\"older\" href=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("an Older link")
        .replace("&amp;", "&");
    let page = ada.get(&older).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert_eq!(rows(&page.text), 1);
    assert!(page.text.contains(&format!("delivery-{}", pinged[0])));
    assert!(!page.text.contains("class=\"older\""), "the oldest page");
    assert!(
        !page.text.contains("hx-trigger"),
        "an older page stays as it is"
    );
    // A cursor that is none is the app's error page, not a 500.
    let bad = ada
        .get(&format!("/org/webhooks/{}?cursor=%%%", webhook.id))
        .await;
    assert!(bad.status == 400 || bad.status == 404, "{}", bad.status);
}

#[tokio::test]
async fn a_failed_attempt_shows_its_status_and_the_retry() {
    let server = Server::start_with(&[("DOCREVIEW_WEBHOOK_ALLOW_PRIVATE", "true")]);
    server.create_user_with_password("ada@example.com", "Ada", &["--admin"], PASSWORD);
    let api = admin_api(&server);
    let mut receiver = Receiver::start(&[(500, None)]).await;
    let webhook = api
        .api()
        .create_webhook(&docreview_client::api::NewWebhook {
            url: receiver.url.clone(),
            events: vec!["comment.created".to_string()],
            project_code: None,
            description: None,
        })
        .await
        .expect("create");
    let ada = server.sign_in("ada@example.com", PASSWORD).await;
    let page = ada.get(&format!("/org/webhooks/{}", webhook.id)).await;
    let csrf = csrf_of(&page.text);
    let pinged = post_form(
        &ada,
        &format!("/org/webhooks/{}/ping", webhook.id),
        format!("csrf={csrf}"),
    )
    .await;
    assert_eq!(pinged.status, 200, "{}", pinged.text);
    receiver.next().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let delivery = loop {
        let list = api
            .api()
            .webhook_deliveries(&webhook.id, &PageQuery::default())
            .await
            .expect("deliveries")
            .deliveries;
        // (An attempt counts once claimed; its answer is recorded after.)
        if list[0].last_response_status.is_some() {
            break list[0].clone();
        }
        assert!(std::time::Instant::now() < deadline, "no attempt recorded");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(delivery.status.as_str(), "pending");
    assert_eq!(delivery.attempts, 1);
    let page = ada.get(&format!("/org/webhooks/{}", webhook.id)).await;
    let row = page
        .text
        .split(&format!("<tr id=\"delivery-{}\"", delivery.id))
        .nth(1)
        .and_then(|rest| rest.split("</tr>").next())
        .expect("the delivery's row")
        .to_string();
    assert!(row.contains("pending"), "{row}");
    assert!(row.contains(">500<"), "the receiver's status: {row}");
    let next = delivery.next_attempt_at.expect("a retry is due");
    assert!(row.contains(&next), "when the retry is due ({next}): {row}");
    assert!(
        !page.text.contains("hx-trigger"),
        "a delivery waiting for its retry does not keep the page asking"
    );
}
