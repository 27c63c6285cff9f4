//! Every way the README and the review screen offer to write a comment, each in the browser with
//! the result read back through the API: on a selection (the floating button), on the whole
//! document (the toolbar button, the `d` shortcut, the phone drawer), on a section (the outline),
//! and the fallback that moves a comment to the whole document when its passage left in a new
//! version. Also what the author then sees: "Sent · Undo", not "Draft".

use docreview_client::api::CommentView;
use serde_json::json;

use crate::support::Client;
use crate::web::harness::{self, Browser, NARROW, WIDE};
use crate::web::review::{DOC, PASSWORD, review_of, run_with_a_draft, select_in_frame, setup};

/// Waits for the screen to show the document with `highlights` highlights drawn.
pub async fn open_screen(browser: &Browser, review_id: &str, highlights: usize) {
    browser.goto(&format!("/reviews/{review_id}")).await;
    browser
        .wait_for(
            &format!(
                "document.getElementById('review').classList.contains('frame-ready') && document.getElementById('review').dataset.highlights === '{highlights}'"
            ),
            "the screen",
        )
        .await;
}

/// Whether the floating "Comment" button takes up space on screen.
async fn selection_button_shown(browser: &Browser) -> bool {
    browser
        .run(
            "const b = document.getElementById('selection-button'); \
             return getComputedStyle(b).display !== 'none' && b.getBoundingClientRect().width > 0;",
            vec![],
        )
        .await
        == json!(true)
}

/// Types `body` into the open composer, sends it, and waits until the panel shows it; no error
/// notice may appear.
async fn send_composer(browser: &Browser, body: &str) {
    browser.type_into("#composer-body", body).await;
    browser.click(".composer button[type=submit]").await;
    browser
        .wait_for(
            &format!(
                "[...document.querySelectorAll('#panel .thread .body')].some((b) => b.textContent.trim() === {})",
                json!(body)
            ),
            body,
        )
        .await;
    let toasts = browser
        .run(
            "return [...document.querySelectorAll('#toasts .toast')].map((t) => t.textContent)",
            vec![],
        )
        .await;
    assert_eq!(toasts, json!([]), "no notice after sending `{body}`");
}

/// The comment with `body`, as the API reads it back.
async fn comment_with_body(api: &Client, review_id: &str, body: &str) -> CommentView {
    review_of(api, review_id)
        .await
        .comments
        .into_iter()
        .find(|c| c.body == body)
        .unwrap_or_else(|| panic!("no comment `{body}`"))
}

fn assert_on_whole_document(comment: &CommentView) {
    assert!(comment.anchor.quote.is_none(), "{comment:?}");
    assert!(comment.anchor.position.is_none(), "{comment:?}");
    assert!(comment.anchor.section_id.is_none(), "{comment:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn comments_on_the_document_a_section_and_a_selection_from_the_wide_screen() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    open_screen(&browser, &id, 0).await;
    assert!(
        !selection_button_shown(&browser).await,
        "no floating Comment button without a selection"
    );

    // The toolbar's "Comment on the document".
    browser.click("#comment-document").await;
    assert_eq!(
        browser.text(".composer-target").await,
        "On the whole document"
    );
    send_composer(&browser, "The toolbar's document comment.").await;
    assert_on_whole_document(
        &comment_with_body(&api, &id, "The toolbar's document comment.").await,
    );

    // The `d` shortcut.
    browser
        .find("body")
        .await
        .send_keys("d")
        .await
        .expect("press d");
    browser
        .wait_for(
            "document.querySelector('.composer-target')?.textContent === 'On the whole document'",
            "the composer opened by d",
        )
        .await;
    send_composer(&browser, "The shortcut's document comment.").await;
    assert_on_whole_document(
        &comment_with_body(&api, &id, "The shortcut's document comment.").await,
    );

    // The outline's section button.
    browser.click("#outline > summary").await;
    browser.click("[data-section-comment='risks']").await;
    assert_eq!(
        browser.text(".composer-target").await,
        "On the section “Risks”"
    );
    send_composer(&browser, "On the risks as a whole.").await;
    let section = comment_with_body(&api, &id, "On the risks as a whole.").await;
    assert_eq!(section.anchor.section_id.as_deref(), Some("risks"));
    assert!(section.anchor.quote.is_none(), "{section:?}");

    // A selection: the floating button shows beside it, and goes while composing and after.
    select_in_frame(&browser, "needs a runbook").await;
    browser
        .wait_for(
            "getComputedStyle(document.getElementById('selection-button')).display !== 'none'",
            "the floating Comment button",
        )
        .await;
    browser.click("#selection-button").await;
    assert!(
        !selection_button_shown(&browser).await,
        "the floating button hides while composing"
    );
    send_composer(&browser, "Who writes the runbook?").await;
    assert!(
        !selection_button_shown(&browser).await,
        "the floating button stays hidden after sending"
    );
    let passage = comment_with_body(&api, &id, "Who writes the runbook?").await;
    assert_eq!(
        passage.anchor.quote.as_ref().map(|q| q.exact.as_str()),
        Some("needs a runbook")
    );
    browser.screenshot("review-document-comments").await;
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_document_comment_from_the_phone_drawer() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let browser = Browser::open(&server, NARROW).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    open_screen(&browser, &id, 0).await;
    assert!(!selection_button_shown(&browser).await);
    browser.click("#drawer-toggle").await;
    browser
        .wait_for(
            "document.getElementById('review').classList.contains('drawer-open') && document.getElementById('comments-column').getAnimations().length === 0",
            "the drawer open and still",
        )
        .await;
    browser.click("#comment-document").await;
    send_composer(&browser, "Written on a phone.").await;
    assert_on_whole_document(&comment_with_body(&api, &id, "Written on a phone.").await);
    browser.screenshot("review-narrow-document-comment").await;
    browser.quit().await;
}

/// The author's own comment and reply read "Sent · Undo (10 min)" (everyone already sees
/// them), and Undo takes them back; a running run's comments read "Draft · run".
#[tokio::test(flavor = "multi_thread")]
async fn ones_own_sent_items_offer_undo_and_a_runs_items_are_drafts() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let (_, drafted) = run_with_a_draft(&api, &id).await;
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    open_screen(&browser, &id, 1).await;
    let run_card = format!("#thread-{drafted}");
    assert!(browser.text(&run_card).await.contains("Draft · run"));

    browser.click("#comment-document").await;
    send_composer(&browser, "Mine, just sent.").await;
    let mine = comment_with_body(&api, &id, "Mine, just sent.").await;
    let card = format!("#thread-{}", mine.id);
    let head = browser
        .text(&format!("{card} .thread-head"))
        .await
        .replace('\n', " ");
    assert!(head.contains("Sent · Undo (10 min)"), "{head}");
    assert!(!head.contains("Draft"), "{head}");

    // A reply of one's own says the same.
    browser
        .click(&format!("{run_card} [data-action=reply]"))
        .await;
    browser
        .type_into(&format!("#reply-{drafted}"), "My reply.")
        .await;
    browser
        .click(&format!("{run_card} .reply-form button[type=submit]"))
        .await;
    browser
        .wait_for(
            &format!("document.querySelector('{run_card} .reply .sent')?.textContent.includes('Sent · Undo (10 min)')"),
            "the reply's undo",
        )
        .await;
    browser.screenshot("review-sent-undo").await;

    // Undo takes the comment back.
    browser.click(&format!("{card} .sent button")).await;
    browser
        .wait_for(
            &format!("!document.querySelector('{card}')"),
            "the comment taken back",
        )
        .await;
    let read = review_of(&api, &id).await;
    assert!(read.comments.iter().all(|c| c.id != mine.id));
    browser.quit().await;
}
