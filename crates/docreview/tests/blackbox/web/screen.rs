//! The review screen's header: its popovers (versions, changes, runs) stay inside the viewport
//! at every width, and "Changes since …" shows each changed run as one deletion and one
//! insertion with the spaces kept.

use docreview_client::api::StartRun;
use serde_json::{Value, json};

use crate::web::commenting::open_screen;
use crate::web::harness::{self, Browser, NARROW};
use crate::web::review::{PASSWORD, setup};

const V1: &str = "<!doctype html><html><head><title>Plan</title></head><body>\
<h1>Launch plan</h1>\n<p>Use the cache instead of the replica for reads.</p>\n\
<p>The cache holds 64 MiB.</p>\n\
<p>We ship on Monday after the final review.</p>\n<p>Support needs a runbook.</p></body></html>";

const V2: &str = "<!doctype html><html><head><title>Plan</title></head><body>\
<h1>Launch plan</h1>\n<p>Use the cache without the replica for reads.</p>\n\
<p>The cache holds 128 MiB.</p>\n\
<p>The team ships on Tuesday once the review is done.</p>\n<p>Support needs a runbook.</p></body></html>";

/// Opens the popover `menu` (a `details` id), waits for its content, and answers its body's
/// left and right edges and the viewport's width.
async fn open_menu(browser: &Browser, menu: &str) -> Value {
    browser.click(&format!("#{menu} > summary")).await;
    browser
        .wait_for(
            &format!(
                "document.getElementById('{menu}').open && !document.querySelector('#{menu} .menu-body > p.muted')"
            ),
            &format!("{menu} loaded"),
        )
        .await;
    let edges = browser
        .run(
            &format!(
                "const r = document.querySelector('#{menu} > .menu-body').getBoundingClientRect(); \
                 return {{ left: r.left, right: r.right, width: document.documentElement.clientWidth }};"
            ),
            vec![],
        )
        .await;
    browser.click(&format!("#{menu} > summary")).await;
    edges
}

#[tokio::test(flavor = "multi_thread")]
async fn popovers_stay_inside_the_viewport_at_every_width() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api
        .upload("A plan with a rather long title that fills the header", V1)
        .await;
    let id = review.review_id.clone();
    api.add_version(&id, V2).await;
    api.api()
        .start_run(
            &id,
            &StartRun {
                kind: None,
                title: Some("Style pass over the whole document".into()),
                version_id: None,
            },
        )
        .await
        .expect("a run");
    for size in [(1440, 900), (1024, 768), (700, 900), NARROW] {
        let browser = Browser::open(&server, size).await;
        browser.sign_in("ada@example.com", PASSWORD).await;
        open_screen(&browser, &id, 0).await;
        for menu in ["versions-menu", "changes-menu", "runs-menu"] {
            let edges = open_menu(&browser, menu).await;
            let (left, right, width) = (
                edges["left"].as_f64().expect("left"),
                edges["right"].as_f64().expect("right"),
                edges["width"].as_f64().expect("width"),
            );
            assert!(
                left >= 0.0 && right <= width,
                "{menu} at {size:?} runs past an edge: {edges}"
            );
        }
        if size.0 == 1440 {
            browser.click("#changes-menu > summary").await;
            browser.screenshot("review-changes-wide").await;
        }
        browser.quit().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn changes_show_each_changed_run_as_one_deletion_and_one_insertion() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Plan", V1).await;
    let id = review.review_id.clone();
    api.add_version(&id, V2).await;
    let browser = Browser::open(&server, (1440, 900)).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    open_screen(&browser, &id, 0).await;
    browser.click("#changes-menu > summary").await;
    browser
        .wait_for(
            "document.querySelector('#changes-menu .changes-text')",
            "the changes",
        )
        .await;
    let shown = browser
        .run(
            "const view = document.querySelector('#changes-menu .changes-text'); \
             return { text: view.textContent, \
                      removed: [...view.querySelectorAll('del')].map((d) => d.textContent), \
                      added: [...view.querySelectorAll('ins')].map((i) => i.textContent) };",
            vec![],
        )
        .await;
    assert_eq!(
        shown["removed"],
        json!([
            "instead of",
            "64",
            "We ship on Monday after the final review."
        ]),
        "{shown}"
    );
    assert_eq!(
        shown["added"],
        json!([
            "without",
            "128",
            "The team ships on Tuesday once the review is done."
        ]),
        "{shown}"
    );
    let text = shown["text"].as_str().expect("text");
    assert!(text.contains("instead of without"), "{text}");
    assert!(text.contains("64 128"), "{text}");
    browser.screenshot("review-changes").await;
    browser.quit().await;
}
