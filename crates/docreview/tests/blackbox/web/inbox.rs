//! The inbox and the navigation's unread count (issue 17, DESIGN.md §8.1): a mention from someone
//! else shows in the count without a reload, the inbox says who did what where, opening one goes
//! to its thread and marks it read, one or all are marked read, and the mail setting is kept.

use serde_json::{Value, json};

use crate::support::Client;
use crate::web::harness::{self, Browser, NARROW, WIDE};
use crate::web::review::{DOC, PASSWORD, setup};
use crate::web::updates::{recording_browser, violations};

/// Grace writes a comment mentioning Ada on `review_id`; its id.
async fn mention_ada(grace: &Client, review_id: &str, body: &str) -> String {
    let written = grace
        .post(
            &format!("/api/reviews/{review_id}/comments"),
            &json!({ "body": format!("@ada {body}") }),
        )
        .await;
    written.expect(201)["comment"]["id"]
        .as_str()
        .expect("id")
        .to_string()
}

async fn unread(api: &Client) -> i64 {
    api.get("/api/notifications").await.expect(200)["unreadCount"]
        .as_i64()
        .expect("unreadCount")
}

/// Waits until the navigation shows `count` unread (`0`: no number at all).
async fn count_shows(browser: &Browser, count: i64) {
    let condition = if count == 0 {
        "document.getElementById('unread-count').hidden".to_string()
    } else {
        format!(
            "!document.getElementById('unread-count').hidden && document.getElementById('unread-number').textContent === '{count}'"
        )
    };
    browser
        .wait_for(&condition, &format!("the navigation shows {count} unread"))
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mention_counts_live_and_opening_it_goes_to_its_thread() {
    if !harness::available() {
        return;
    }
    let (server, ada) = setup().await;
    let grace = server.user("grace@example.com", "Grace Hopper", &[], "docs,comments");
    let review = ada.upload("Launch plan", DOC).await;
    let id = review.review_id;

    let browser = recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto("/").await;
    count_shows(&browser, 0).await;

    let comment = mention_ada(&grace, &id, "please check the launch date").await;
    count_shows(&browser, 1).await;
    // Read aloud as "Inbox 1 unread".
    assert_eq!(
        browser
            .run("return document.getElementById('bell').textContent", vec![])
            .await,
        json!("Inbox1 unread")
    );

    browser.click("#bell").await;
    browser.find(".notification.is-unread").await;
    let headline = browser
        .text(".notification.is-unread .notification-headline")
        .await;
    assert_eq!(headline, "Grace Hopper mentioned you");
    let shown = browser.text(".notification.is-unread").await;
    assert!(shown.contains("Launch plan"), "{shown}");
    assert!(shown.contains("please check the launch date"), "{shown}");
    assert_eq!(browser.text("#inbox-unread").await, "1 unread");
    browser.screenshot("inbox").await;

    browser
        .click(".notification.is-unread .notification-link")
        .await;
    browser
        .wait_for(
            &format!(
                "location.pathname === '/reviews/{id}' && location.hash === '#thread-{comment}' && document.getElementById('review').classList.contains('frame-ready')"
            ),
            "the thread's review screen",
        )
        .await;
    browser
        .wait_for(
            &format!(
                "document.getElementById('thread-{comment}')?.classList.contains('is-active')"
            ),
            "the thread made current",
        )
        .await;
    assert_eq!(unread(&ada).await, 0, "opening it marked it read");
    // The mention reads as a link to what Ada wrote on this document.
    let me = ada.get("/api/me").await;
    let ada_id = me.expect(200)["user"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let mention = browser
        .run(
            &format!(
                "const a = document.querySelector('#thread-{comment} .body a.mention'); return a && [a.textContent, a.getAttribute('href')];"
            ),
            vec![],
        )
        .await;
    assert_eq!(
        mention,
        json!(["@ada", format!("/reviews/{id}?status=all&author={ada_id}")])
    );
    count_shows(&browser, 0).await;
    assert_eq!(violations(&browser).await, json!([]));
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn notifications_are_marked_read_one_or_all_and_mail_is_chosen() {
    if !harness::available() {
        return;
    }
    let (server, ada) = setup().await;
    let grace = server.user("grace@example.com", "Grace Hopper", &[], "docs,comments");
    let id = ada.upload("Launch plan", DOC).await.review_id;
    for body in ["one", "two", "three"] {
        mention_ada(&grace, &id, body).await;
    }
    let browser = Browser::open(&server, NARROW).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    count_shows(&browser, 3).await;
    browser.goto("/inbox").await;
    assert_eq!(browser.text("#inbox-unread").await, "3 unread");

    // One, from its own button: the newest is listed first.
    browser
        .click(".notification.is-unread .notification-meta button")
        .await;
    browser
        .wait_for(
            "document.querySelectorAll('.notification.is-unread').length === 2",
            "two left unread",
        )
        .await;
    assert_eq!(unread(&ada).await, 2);
    let list = ada.get("/api/notifications").await;
    let notifications: &Vec<Value> = list.expect(200)["notifications"].as_array().expect("list");
    assert!(
        notifications[0]["readAt"].is_string(),
        "the newest was read"
    );
    assert!(notifications[1]["readAt"].is_null());

    // The Unread tab lists only those.
    browser.click(".inbox-tools .tabs a:nth-child(2)").await;
    browser
        .wait_for(
            "location.search === '?unread=1' && document.querySelectorAll('.notification').length === 2",
            "only the unread listed",
        )
        .await;

    // All of them.
    browser.click("#read-all").await;
    browser
        .wait_for(
            "document.getElementById('inbox-unread').textContent.trim() === 'Nothing unread.'",
            "nothing unread",
        )
        .await;
    assert_eq!(unread(&ada).await, 0);
    count_shows(&browser, 0).await;

    // Mail: a digest a day; this server has no mail set up, and says so.
    browser.find("#mail-off").await;
    browser.click(".mail-form input[value='daily']").await;
    browser.click(".mail-form button[type='submit']").await;
    browser
        .wait_for(
            "document.querySelector('.inbox .done')?.textContent.includes('Mail setting saved')",
            "saved",
        )
        .await;
    let settings = ada.get("/api/me/notification-settings").await;
    assert_eq!(settings.expect(200)["email"], json!("daily"));
    assert_eq!(
        browser
            .run(
                "return document.querySelector(\".mail-form input[value='daily']\").checked",
                vec![]
            )
            .await,
        json!(true)
    );
    browser.screenshot("inbox-phone").await;
    browser.quit().await;
}

/// Forms the page would never send are refused with the app's page, and nothing changes.
#[tokio::test(flavor = "multi_thread")]
async fn refused_inbox_forms_change_nothing() {
    if !harness::available() {
        return;
    }
    let (server, ada) = setup().await;
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto("/inbox").await;
    let status = browser
        .run(
            r"const csrf = document.querySelector('meta[name=csrf-token]').content;
              const post = (path, body) => fetch(path, { method: 'POST', body: new URLSearchParams({ csrf, ...body }) }).then((r) => r.status);
              return Promise.all([post('/inbox/mail', { email: 'weekly' }), post('/inbox/read', {}),
                                  fetch('/inbox/mail', { method: 'POST', body: new URLSearchParams({ email: 'off' }) }).then((r) => r.status)]);",
            vec![],
        )
        .await;
    assert_eq!(status, json!([400, 400, 403]));
    let settings = ada.get("/api/me/notification-settings").await;
    assert_eq!(settings.expect(200)["email"], json!("instant"));
    browser.quit().await;
}
