//! The review screen in everyday use: the filters (open threads by default, labelled, "Clear
//! filters" when nothing matches), the cue for comments that arrive out of view ("2 new
//! comments", which goes to them), editing one's own replies, cancelling a run from the Runs
//! menu, and the request id on error pages and notices. What the page shows, checked against
//! what the API reads back.

use docreview_client::api::{CommentStatus, FinishRun, RunStatus};
use serde_json::json;

use crate::support::{Client, Server, Storage};
use crate::web::harness::{self, Browser, WIDE};
use crate::web::review::{DOC, PASSWORD, review_of, run_with_a_draft, setup};
use crate::web::updates::{recording_browser, violations};

/// Waits until the screen shows the document and its panel.
async fn screen_ready(browser: &Browser, review_id: &str) {
    browser.goto(&format!("/reviews/{review_id}")).await;
    browser
        .wait_for(
            "document.getElementById('review').classList.contains('frame-ready')",
            "the screen",
        )
        .await;
}

/// The ids of the threads the panel shows, in its order.
async fn shown_threads(browser: &Browser) -> Vec<String> {
    let ids = browser
        .run(
            "return [...document.querySelectorAll('#panel .thread')].map((t) => t.dataset.comment);",
            vec![],
        )
        .await;
    serde_json::from_value(ids).expect("ids")
}

async fn resolve(api: &Client, review_id: &str, comment_id: &str) {
    api.post(
        &format!("/api/reviews/{review_id}/comments/{comment_id}/status-events"),
        &json!({ "status": "closed" }),
    )
    .await
    .expect(201);
}

#[tokio::test(flavor = "multi_thread")]
async fn filters_show_open_threads_by_default_are_labelled_and_clear() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let monday = api
        .note_on(&id, "ship on Monday", "Which Monday?")
        .await
        .comment
        .id;
    let cache = api
        .note_on(&id, "The cache may be cold", "How cold?")
        .await
        .comment
        .id;
    let runbook = api
        .note_on(&id, "runbook", "Who writes it?")
        .await
        .comment
        .id;
    resolve(&api, &id, &cache).await;

    let browser = recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;

    // Open by default: the resolved thread is not shown, and the count says so.
    assert_eq!(
        browser
            .run(
                "return document.getElementById('filter-status').value",
                vec![]
            )
            .await,
        json!("open")
    );
    assert_eq!(
        shown_threads(&browser).await,
        [monday.clone(), runbook.clone()]
    );
    assert_eq!(browser.text("#panel-count").await, "2 of 3 comments shown");

    // Each filter has a label one can read (not only a screen reader).
    let labels = browser
        .run(
            "return ['filter-status', 'filter-category', 'filter-author'].map((id) => { \
               const label = document.querySelector(`label[for=${id}]`); \
               const box = label.getBoundingClientRect(); \
               return box.width > 8 && box.height > 8 ? label.textContent.trim() : null; });",
            vec![],
        )
        .await;
    assert_eq!(labels, json!(["Status", "Category", "Author"]));

    // A filter nothing matches offers to clear the filters.
    browser
        .run(
            "const s = document.getElementById('filter-category'); s.value = 'consult'; \
             s.dispatchEvent(new Event('change', { bubbles: true }));",
            vec![],
        )
        .await;
    browser
        .wait_for(
            "!document.getElementById('empty-note').hidden && document.querySelectorAll('#panel .thread').length === 0",
            "the empty result",
        )
        .await;
    assert_eq!(
        browser.text("#empty-note").await.replace('\n', " "),
        "No comments match these filters. Clear filters"
    );
    browser.screenshot("filters-empty").await;
    browser.click("#empty-note [data-clear-filters]").await;
    browser
        .wait_for(
            "document.querySelectorAll('#panel .thread').length === 3",
            "every thread after clearing",
        )
        .await;
    let state = browser
        .run(
            "return { status: document.getElementById('filter-status').value, \
                      category: document.getElementById('filter-category').value, \
                      empty: document.getElementById('empty-note').hidden, \
                      closed: [...document.querySelectorAll('#panel .thread.is-closed')].map((t) => t.dataset.comment), \
                      query: location.search };",
            vec![],
        )
        .await;
    assert_eq!(
        state,
        json!({ "status": "all", "category": "", "empty": true, "closed": [&cache], "query": "?status=all" })
    );
    assert_eq!(browser.text("#panel-count").await, "3 comments");

    // The filters travel in the address: a reload shows the same.
    browser.driver.refresh().await.expect("reload");
    browser
        .wait_for(
            "document.getElementById('review')?.classList.contains('frame-ready')",
            "the screen again",
        )
        .await;
    assert_eq!(shown_threads(&browser).await.len(), 3);

    // Nothing changed in the document by filtering.
    let read = review_of(&api, &id).await;
    let statuses: Vec<(String, CommentStatus)> = read
        .comments
        .iter()
        .map(|c| (c.id.clone(), c.status))
        .collect();
    assert_eq!(statuses.len(), 3);
    assert!(statuses.contains(&(cache.clone(), CommentStatus::Closed)));
    assert!(statuses.contains(&(monday, CommentStatus::Open)));
    assert_eq!(violations(&browser).await, json!([]));
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thread_resolved_on_screen_stays_folded_under_the_open_filter() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let monday = api
        .note_on(&id, "ship on Monday", "Which Monday?")
        .await
        .comment
        .id;

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;
    browser
        .click(&format!("#thread-{monday} [data-action=resolve]"))
        .await;
    browser
        .wait_for(
            &format!("document.getElementById('thread-{monday}')?.classList.contains('is-closed')"),
            "resolved, still on screen",
        )
        .await;
    assert_eq!(
        review_of(&api, &id).await.comments[0].status,
        CommentStatus::Closed
    );
    // Loaded again, the Open filter leaves it out and says how to see it.
    screen_ready(&browser, &id).await;
    assert!(shown_threads(&browser).await.is_empty());
    assert_eq!(
        browser.text("#empty-note").await.replace('\n', " "),
        "No comments match these filters. Clear filters"
    );
    browser.quit().await;
}

/// A document long enough to scroll: "Paragraph {i} says …".
fn long_document() -> String {
    let mut html = String::from("<!doctype html><html><head><title>Long</title></head><body>");
    for i in 0..90 {
        html.push_str(&format!(
            "<p>Paragraph {i} says what the plan needs at step {i}, and why it matters.</p>"
        ));
    }
    html.push_str("</body></html>");
    html
}

#[tokio::test(flavor = "multi_thread")]
async fn comments_arriving_out_of_view_show_a_cue_that_goes_to_them() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    server.create_user_with_password("grace@example.com", "Grace Hopper", &[], PASSWORD);
    let review = api.upload("Long plan", &long_document()).await;
    let id = review.review_id.clone();

    let browser = recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;
    browser.run("window.scrollTo(0, 0);", vec![]).await;

    let grace = server.sign_in("grace@example.com", PASSWORD).await;
    let write = |exact: &'static str| {
        let grace = &grace;
        let id = &id;
        async move {
            grace
                .post(
                    &format!("/api/reviews/{id}/comments"),
                    &json!({ "body": format!("About {exact}."), "category": "consult",
                             "locator": { "quote": { "exact": exact } } }),
                )
                .await
                .expect(201)["comment"]["id"]
                .as_str()
                .expect("id")
                .to_string()
        }
    };
    let cue = "const b = document.getElementById('new-comments'); \
               return b.hidden ? null : b.textContent;";

    let far = write("Paragraph 30 says").await;
    browser
        .wait_for(
            &format!("document.getElementById('thread-{far}') && !document.getElementById('new-comments').hidden"),
            "the cue",
        )
        .await;
    assert_eq!(browser.run(cue, vec![]).await, json!("1 new comment"));
    let farther = write("Paragraph 85 says").await;
    browser
        .wait_for(
            &format!("document.getElementById('thread-{farther}')"),
            "the second comment",
        )
        .await;
    assert_eq!(browser.run(cue, vec![]).await, json!("2 new comments"));
    // One arriving where the reader is needs no cue.
    let near = write("Paragraph 1 says").await;
    browser
        .wait_for(
            &format!("document.getElementById('thread-{near}')"),
            "the comment in view",
        )
        .await;
    assert_eq!(browser.run(cue, vec![]).await, json!("2 new comments"));
    assert!(
        browser.run("return window.scrollY", vec![]).await.as_f64() == Some(0.0),
        "the reader was not moved"
    );
    browser.screenshot("new-comments-cue").await;

    // The cue goes to the first of them, then the next.
    let in_view = |comment: &str| {
        format!(
            "(() => {{ const card = document.getElementById('thread-{comment}'); const r = card.getBoundingClientRect(); \
               return card.classList.contains('is-active') && r.top >= 0 && r.bottom <= innerHeight; }})()"
        )
    };
    browser.click("#new-comments").await;
    browser
        .wait_for(&in_view(&far), "the first new comment")
        .await;
    assert_eq!(browser.run(cue, vec![]).await, json!("1 new comment"));
    browser.click("#new-comments").await;
    browser
        .wait_for(&in_view(&farther), "the second new comment")
        .await;
    assert_eq!(browser.run(cue, vec![]).await, json!(null));

    let read = review_of(&api, &id).await;
    assert_eq!(read.comments.len(), 3);
    assert!(
        read.comments
            .iter()
            .all(|c| c.author.display_name == "Grace Hopper")
    );
    assert_eq!(violations(&browser).await, json!([]));
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ones_own_reply_is_edited_from_the_screen_and_a_race_offers_the_edit_again() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    server.create_user_with_password("grace@example.com", "Grace Hopper", &[], PASSWORD);
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let comment = api
        .note_on(&id, "final review", "Which review?")
        .await
        .comment
        .id;
    let mine = api
        .post(
            &format!("/api/reviews/{id}/comments/{comment}/thread"),
            &json!({ "body": "The one on Fridya." }),
        )
        .await
        .expect(201)["message"]["id"]
        .as_str()
        .expect("reply id")
        .to_string();
    let grace = server.sign_in("grace@example.com", PASSWORD).await;
    let hers = grace
        .post(
            &format!("/api/reviews/{id}/comments/{comment}/thread"),
            &json!({ "body": "Grace's reply." }),
        )
        .await
        .expect(201)["message"]["id"]
        .as_str()
        .expect("reply id")
        .to_string();

    let browser = recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;
    // Only one's own replies offer Edit.
    assert_eq!(
        browser
            .find_all(&format!("#msg-{hers} [data-action=edit-reply]"))
            .await
            .len(),
        0
    );
    browser
        .click(&format!("#msg-{mine} [data-action=edit-reply]"))
        .await;
    let field = format!("#edit-{mine}");
    browser.find(&field).await.clear().await.expect("clear");
    browser.type_into(&field, "The one on Friday.").await;
    browser
        .click(&format!("#msg-{mine} .edit-form button[type=submit]"))
        .await;
    browser
        .wait_for(
            &format!("document.querySelector('#msg-{mine} .body')?.textContent.trim() === 'The one on Friday.' && document.querySelector('#msg-{mine} .edited') && document.querySelector('#msg-{mine} .edit-form').hidden"),
            "the edited reply",
        )
        .await;
    let read = review_of(&api, &id).await;
    let reply = read.comments[0]
        .thread
        .iter()
        .find(|m| m.id == mine)
        .expect("the reply");
    assert_eq!(reply.body, "The one on Friday.");
    assert!(reply.edited_ts.is_some());

    // Edited while Grace changed the thread (the page does not know yet): the edit is offered
    // again, in its form, with the thread as it now stands.
    let cdp = browser.driver.cdp();
    cdp.send_raw("Network.enable", json!({}))
        .await
        .expect("network");
    cdp.send_raw("Network.setBlockedURLs", json!({ "urls": ["*/events*"] }))
        .await
        .expect("block the events stream");
    screen_ready(&browser, &id).await;
    browser
        .click(&format!("#msg-{mine} [data-action=edit-reply]"))
        .await;
    browser.find(&field).await.clear().await.expect("clear");
    browser
        .type_into(&field, "The review on Friday at ten.")
        .await;
    grace
        .patch(
            &format!("/api/reviews/{id}/comments/{comment}/thread/{hers}"),
            &json!({ "body": "Grace's reply, edited." }),
        )
        .await
        .expect(200);
    browser
        .click(&format!("#msg-{mine} .edit-form button[type=submit]"))
        .await;
    browser
        .wait_for(
            &format!("document.querySelector('#msg-{hers} .body')?.textContent.includes('edited') && !document.querySelector('#msg-{mine} .edit-form').hidden"),
            "the edit offered again",
        )
        .await;
    assert_eq!(
        browser
            .run(
                &format!("return document.getElementById('edit-{mine}').value"),
                vec![]
            )
            .await,
        json!("The review on Friday at ten.")
    );
    assert!(
        browser
            .text(&format!("#msg-{mine} .offer-notice"))
            .await
            .contains("This thread changed while you edited")
    );
    browser
        .click(&format!("#msg-{mine} .edit-form button[type=submit]"))
        .await;
    browser
        .wait_for(
            &format!("document.querySelector('#msg-{mine} .body')?.textContent.trim() === 'The review on Friday at ten.'"),
            "the edit saved",
        )
        .await;
    let read = review_of(&api, &id).await;
    let bodies: Vec<&str> = read.comments[0]
        .thread
        .iter()
        .map(|m| m.body.as_str())
        .collect();
    assert_eq!(
        bodies,
        ["The review on Friday at ten.", "Grace's reply, edited."]
    );
    assert_eq!(violations(&browser).await, json!([]));
    browser.quit().await;
}

/// A run started and completed while the screen is open: the Runs menu appears with its count
/// and lists the run as it stands, without a reload.
#[tokio::test(flavor = "multi_thread")]
async fn the_runs_menu_follows_runs_that_start_and_end_while_the_screen_is_open() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let browser = recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;
    assert!(
        browser
            .run(
                "return document.getElementById('runs-menu').hidden",
                Vec::new()
            )
            .await
            .as_bool()
            .expect("a flag"),
        "no run, no menu"
    );

    let (run, _) = run_with_a_draft(&api, &id).await;
    browser
        .wait_for(
            "!document.getElementById('runs-menu').hidden && document.getElementById('runs-count').textContent === '1' && document.querySelector('#run-list .run-running')",
            "the menu shows the running run",
        )
        .await;
    browser.click("#runs-menu > summary").await;
    let running = browser.text("#run-list .run-running").await;
    assert!(
        running.contains("Style pass") && running.contains("1 draft comment"),
        "{running}"
    );

    api.api()
        .finish_run(
            &id,
            &run.id,
            &FinishRun {
                status: RunStatus::Completed,
                summary: Some("One point.".into()),
                base_comments_revision: None,
            },
        )
        .await
        .expect("completed");
    browser
        .wait_for(
            "document.querySelector('#run-list .run-completed') && !document.querySelector('#run-list .run-running')",
            "the menu shows the run completed",
        )
        .await;
    assert_eq!(browser.text("#runs-count").await, "1");
    assert_eq!(
        review_of(&api, &id).await.ai_review_runs[0].status,
        RunStatus::Completed
    );
    assert_eq!(violations(&browser).await, json!([]));
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_run_is_cancelled_from_the_runs_menu() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let (_, drafted) = run_with_a_draft(&api, &id).await;

    let browser = recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;
    browser.find(&format!("#thread-{drafted}.is-draft")).await;
    browser.click("#runs-menu > summary").await;
    let running = browser.text("#run-list .run-running").await;
    assert!(
        running.contains("1 draft comment") && !running.contains("1 draft comments"),
        "{running}"
    );
    browser.click("#run-list .run-cancel button").await;
    browser
        .wait_for(
            "document.querySelector('#run-list .run-cancelled') && !document.querySelector('#run-list .run-cancel')",
            "the menu says the run was cancelled",
        )
        .await;
    browser
        .wait_for(
            &format!("!document.getElementById('thread-{drafted}')"),
            "its draft gone",
        )
        .await;
    let toast = browser.text("#toasts .toast").await;
    assert!(toast.contains("“Style pass” was cancelled"), "{toast}");
    let read = review_of(&api, &id).await;
    assert_eq!(read.ai_review_runs[0].status, RunStatus::Cancelled);
    assert!(read.comments.is_empty());
    assert_eq!(violations(&browser).await, json!([]));

    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn error_pages_and_notices_show_the_request_id() {
    if !harness::available() {
        return;
    }
    let server = Server::start_full(Storage::fresh(), &[("RUST_LOG", "info")], &[], true);
    server.create_user_with_password("ada@example.com", "Ada Lovelace", &["--admin"], PASSWORD);
    let api = server.client(Some(
        &server.issue_token("ada@example.com", "docs,comments,access"),
    ));
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let comment = api
        .note_on(&id, "final review", "Which review?")
        .await
        .comment
        .id;

    // Over HTTP: the id the answer carries is the one the page shows.
    let ada = server.sign_in("ada@example.com", PASSWORD).await;
    let page = ada
        .send(
            ada.raw("GET", "/reviews/no-such-review")
                .header("x-request-id", "report-me-42"),
        )
        .await;
    assert_eq!(page.status, 404);
    assert!(
        page.text.contains("<code>report-me-42</code>"),
        "{}",
        page.text
    );
    let notice = ada
        .send(
            ada.raw("GET", "/reviews/no-such-review/panel")
                .header("hx-request", "true")
                .header("x-request-id", "report-me-43"),
        )
        .await;
    assert_eq!(notice.status, 404);
    assert_eq!(notice.header("hx-retarget"), Some("#toasts"));
    assert!(
        notice.text.contains("<code>report-me-43</code>"),
        "{}",
        notice.text
    );

    // In the browser: an error page, and a notice after a write that failed.
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto("/reviews/no-such-review").await;
    let shown = browser.text(".request-id code").await;
    assert_eq!(shown.len(), 24, "{shown}");
    assert!(
        server.log().contains(&shown),
        "the id finds the request's log line"
    );
    screen_ready(&browser, &id).await;
    api.delete(&format!("/api/reviews/{id}")).await.expect(200);
    browser
        .click(&format!("#thread-{comment} [data-action=resolve]"))
        .await;
    let toast = browser.text("#toasts .toast").await;
    assert!(toast.contains("There is nothing here"), "{toast}");
    let shown = browser.text("#toasts .toast .request-id code").await;
    assert_eq!(shown.len(), 24, "{shown}");
    assert!(
        server.log().contains(&shown),
        "the id finds the request's log line"
    );
    browser.screenshot("error-toast-request-id").await;
    browser.quit().await;
}

const WITH_IMAGES: &str = "<!doctype html><html><head><title>Charts</title></head><body>\
<h1>Charts</h1><p><img src=\"img/revenue.png\" alt=\"Revenue\"></p>\
<p><img src=\"https://cdn.example.com/logo.png\" alt=\"Logo\"></p>\
<p><img src=\"data:image/gif;base64,R0lGODlhAQABAAAAACw=\" alt=\"Dot\"></p>\
<p><img src=\"img/costs.png\" alt=\"Costs\"></p></body></html>";

#[tokio::test(flavor = "multi_thread")]
async fn an_upload_whose_images_cannot_show_says_so_and_what_to_do() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto("/").await;
    let file = tempfile::Builder::new()
        .suffix(".html")
        .tempfile()
        .expect("file");
    std::fs::write(file.path(), WITH_IMAGES).expect("write");
    browser.click("#upload-toggle").await;
    browser
        .find("#upload input[name=file]")
        .await
        .send_keys(file.path().to_str().expect("path"))
        .await
        .expect("choose the file");
    browser.click("#upload button[type=submit]").await;
    browser
        .wait_for(
            "location.pathname.startsWith('/reviews/') && document.getElementById('review')?.classList.contains('frame-ready')",
            "the uploaded document's review screen",
        )
        .await;
    let notice = browser.text("#images-notice").await.replace('\n', " ");
    for words in [
        "3 images in this version cannot show.",
        "2 name files that were not uploaded, such as img/revenue.png;",
        "1 is on another site, such as https://cdn.example.com/logo.png",
        "as data: URLs",
        "upload the file as a new version in Settings.",
    ] {
        assert!(notice.contains(words), "`{words}` not in: {notice}");
    }
    browser
        .check_accessibility("the review screen with the images notice")
        .await;
    browser.screenshot("review-images-notice").await;

    // A version with its images inside the file shows no notice.
    let id = browser
        .path()
        .await
        .trim_start_matches("/reviews/")
        .to_string();
    assert_eq!(review_of(&api, &id).await.title, "Charts");
    api.add_version(
        &id,
        "<h1>Charts</h1><p><img src=\"data:image/gif;base64,R0lGODlhAQABAAAAACw=\" alt=\"Dot\"></p>",
    )
    .await;
    screen_ready(&browser, &id).await;
    assert!(browser.find_all("#images-notice").await.is_empty());
    browser.quit().await;
}
