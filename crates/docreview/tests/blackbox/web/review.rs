//! The review screen: highlights drawn from the server's anchors, commenting on a selection,
//! replying, resolving and reopening, in a real browser; state read back through the API.

use docreview_client::api::{
    AnchorState, Category, CommentStatus, NewComment, ReviewView, RunView, StartRun,
};
use serde_json::json;

use crate::support::{Client, Server, quote};
use crate::web::harness::{self, Browser, NARROW, WIDE};

pub const PASSWORD: &str = "correct horse battery";

pub const DOC: &str = "<!doctype html><html><head><title>Plan</title></head><body>\
<h1 id=\"plan\">Launch plan</h1><p>We ship on Monday after the final review.</p>\
<h2 id=\"risks\">Risks</h2><p>The cache may be cold at start; we warm it with a replay of yesterday's reads.</p>\
<p>Support needs a runbook before launch.</p></body></html>";

/// A server with Ada (admin, password) and her API client.
pub async fn setup() -> (Server, Client) {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada Lovelace", &["--admin"], PASSWORD);
    let token = server.issue_token("ada@example.com", "docs,comments,access");
    let api = server.client(Some(&token));
    (server, api)
}

/// A running run, "Style pass", on `review_id` with one draft comment on "final review": the
/// run and the draft's id.
pub async fn run_with_a_draft(api: &Client, review_id: &str) -> (RunView, String) {
    let run = api
        .api()
        .start_run(
            review_id,
            &StartRun {
                kind: None,
                title: Some("Style pass".into()),
                version_id: None,
            },
        )
        .await
        .expect("a run");
    let draft = api
        .api()
        .add_run_comment(
            review_id,
            &run.id,
            &NewComment {
                body: "Say which review.".into(),
                category: None,
                locator: Some(quote("final review")),
                base_comments_revision: None,
                suggestion: None,
            },
        )
        .await
        .expect("a run comment")
        .comment
        .id;
    (run, draft)
}

/// The document as the API reads it back (through the typed client).
pub async fn review_of(api: &Client, id: &str) -> ReviewView {
    api.api().review(id, false).await.expect("read the review")
}

/// Selects `exact` (its first occurrence) in the document frame.
pub async fn select_in_frame(browser: &Browser, exact: &str) {
    let selected = browser
        .run(
            r"const doc = document.getElementById('doc-frame').contentDocument;
              const walker = doc.createTreeWalker(doc.body, NodeFilter.SHOW_TEXT);
              for (let n = walker.nextNode(); n; n = walker.nextNode()) {
                const at = n.data.indexOf(arguments[0]);
                if (at >= 0) {
                  const range = doc.createRange();
                  range.setStart(n, at); range.setEnd(n, at + arguments[0].length);
                  const sel = doc.getSelection(); sel.removeAllRanges(); sel.addRange(range);
                  doc.dispatchEvent(new Event('selectionchange'));
                  return true;
                }
              }
              return false;",
            vec![json!(exact)],
        )
        .await;
    assert_eq!(selected, json!(true), "`{exact}` is in the document");
}

#[tokio::test(flavor = "multi_thread")]
async fn comment_on_a_selection_reply_resolve_and_reopen() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    api.note_on(&id, "final review", "Which review is final?")
        .await;

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto(&format!("/reviews/{id}")).await;
    browser
        .wait_for(
            "document.getElementById('review').dataset.highlights === '1'",
            "one highlight",
        )
        .await;
    let highlighted = browser
        .run(
            "const h = document.getElementById('doc-frame').contentWindow.CSS.highlights; \
             return [...h.values()].flatMap(x => [...x]).map(r => r.toString());",
            vec![],
        )
        .await;
    assert_eq!(highlighted, json!(["final review"]));

    select_in_frame(&browser, "warm it with a replay").await;
    browser.click("#selection-button:not([hidden])").await;
    browser
        .type_into("#composer-body", "Who owns the replay job?")
        .await;
    browser.click("label.cat-consult").await;
    browser.screenshot("review-composer").await;
    browser.click(".composer button[type=submit]").await;
    browser
        .wait_for(
            "document.querySelectorAll('#panel .thread').length === 2",
            "the new thread",
        )
        .await;
    let read = review_of(&api, &id).await;
    let comment = read
        .comments
        .iter()
        .find(|c| c.body == "Who owns the replay job?")
        .expect("the new comment");
    assert_eq!(comment.category, Category::Consult);
    let quote = comment.anchor.quote.as_ref().expect("a quote");
    assert_eq!(quote.exact, "warm it with a replay");
    assert_eq!(comment.anchor.state, AnchorState::Exact);
    browser.check_accessibility("the review screen").await;
    // Times read in the reader's zone, also in a panel swapped in after a write.
    let raw_times = browser
        .run(
            "return [...document.querySelectorAll('#panel time')].map((t) => t.textContent).filter((t) => /\\dT\\d/.test(t))",
            vec![],
        )
        .await;
    assert_eq!(raw_times, json!([]), "times shown as stored");

    // Reply to the first thread, then resolve and reopen it.
    let first = read.comments[0].id.clone();
    let thread = format!("#thread-{first}");
    browser
        .click(&format!("{thread} [data-action=reply]"))
        .await;
    browser
        .type_into(
            &format!("#reply-{first}"),
            "The sign-off meeting on Friday.",
        )
        .await;
    browser
        .click(&format!("{thread} .reply-form button[type=submit]"))
        .await;
    browser
        .wait_for(
            &format!("document.querySelector('{thread} .replies')?.textContent.includes('sign-off meeting')"),
            "the reply",
        )
        .await;
    let read = review_of(&api, &id).await;
    assert_eq!(
        read.comments[0].thread[0].body,
        "The sign-off meeting on Friday."
    );

    for (button, status) in [
        ("Resolve", CommentStatus::Closed),
        ("Reopen", CommentStatus::Open),
    ] {
        let resolve = format!("{thread} [data-action=resolve]");
        if status == CommentStatus::Open {
            // A resolved thread shows one line; a click opens it.
            browser.click(&format!("{thread} .thread-head")).await;
        }
        assert_eq!(browser.text(&resolve).await, button);
        browser.click(&resolve).await;
        browser
            .wait_for(
                &format!(
                    "document.querySelector('{thread}').classList.contains('is-closed') === {}",
                    status == CommentStatus::Closed
                ),
                status.as_str(),
            )
            .await;
        let read = review_of(&api, &id).await;
        assert_eq!(read.comments[0].status, status);
    }
    let history = browser.text(&format!("{thread} .history")).await;
    assert!(history.contains("Status history (2)"), "{history}");
    browser.screenshot("review-wide").await;
    browser.quit().await;

    let narrow = Browser::open(&server, NARROW).await;
    narrow.sign_in("ada@example.com", PASSWORD).await;
    narrow.goto(&format!("/reviews/{id}")).await;
    narrow
        .wait_for(
            "document.getElementById('review').dataset.highlights === '2'",
            "two highlights",
        )
        .await;
    narrow.screenshot("review-narrow").await;
    narrow.click("#drawer-toggle").await;
    narrow
        .wait_for(
            "document.getElementById('review').classList.contains('drawer-open')",
            "drawer",
        )
        .await;
    narrow.screenshot("review-narrow-drawer").await;
    narrow
        .check_accessibility("the review screen (narrow)")
        .await;
    narrow.quit().await;
}

/// Going from review to review never runs out of connections: each screen holds an events
/// stream, browsers allow six connections to a host over HTTP/1.1, and pages kept in the
/// back/forward cache must let go of theirs.
#[tokio::test(flavor = "multi_thread")]
async fn one_review_after_another_stays_live() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    for round in 1..=9 {
        let review = api.upload(&format!("Plan {round}"), DOC).await;
        let id = review.review_id.clone();
        browser.goto(&format!("/reviews/{id}")).await;
        browser
            .wait_for(
                "document.getElementById('review').classList.contains('frame-ready')",
                &format!("review {round} shown"),
            )
            .await;
        // The stream is live: a comment written elsewhere is drawn without a reload.
        api.note_on(&id, "final review", "Which review is final?")
            .await;
        browser
            .wait_for(
                "document.getElementById('review').dataset.highlights === '1'",
                &format!("review {round}: the comment written elsewhere"),
            )
            .await;
        // And once more, reloaded.
        browser.goto(&format!("/reviews/{id}")).await;
        browser
            .wait_for(
                "document.getElementById('review').dataset.highlights === '1'",
                &format!("review {round} reloaded"),
            )
            .await;
    }
    browser.quit().await;
}
