//! The review screen's speed (issue 8's quality bar: a 1 MB document with 1,000 comments is
//! interactive in under 1.5 s, every highlight drawn). A benchmark, not a timed test: ignored by
//! default, run by `bench/review-screen.sh`, it prints the browser's own timings and asserts only
//! that everything was drawn.

use docreview_client::api::{Category, NewComment};

use crate::support::quote;

use crate::web::harness::{self, Browser, WIDE};
use crate::web::review::{PASSWORD, setup};

const COMMENTS: usize = 1000;
const LOADS: usize = 5;

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a benchmark: bench/review-screen.sh"]
async fn review_screen_of_a_1_mb_document_with_1000_comments() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let mut html = String::from("<!doctype html><html><head><title>Big</title></head><body>");
    let mut paragraph = 0;
    while html.len() < 1024 * 1024 {
        if paragraph % 40 == 0 {
            html.push_str(&format!("<h2>Section {}</h2>", paragraph / 40));
        }
        html.push_str(&format!(
            "<p>Paragraph {paragraph} opens here: the review service keeps every comment anchored \
             to its passage, and <em>this sentence</em> pads the text so that the document reaches \
             one megabyte of HTML with realistic prose and markup (item {paragraph}).</p>"
        ));
        paragraph += 1;
    }
    html.push_str("</body></html>");
    let review = api.upload("One megabyte", &html).await;
    let id = review.review_id.clone();
    let step = paragraph / COMMENTS;
    let categories = [
        Category::Note,
        Category::Revise,
        Category::Add,
        Category::Delete,
        Category::NeedsReview,
        Category::Consult,
        Category::None,
    ];
    for i in 0..COMMENTS {
        let n = i * step;
        let category = categories[i % categories.len()];
        let comment = NewComment {
            body: format!("Comment {i} on paragraph {n}."),
            category: Some(category),
            locator: Some(quote(&format!("Paragraph {n} opens here"))),
            base_comments_revision: None,
        };
        api.api().add_comment(&id, &comment).await.expect("comment");
    }
    eprintln!(
        "document: {} bytes, {paragraph} paragraphs, {COMMENTS} comments",
        html.len()
    );

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    let mut ready = Vec::new();
    for load in 0..LOADS {
        browser.goto(&format!("/reviews/{id}")).await;
        browser
            .wait_for(
                &format!("document.getElementById('review').dataset.highlights === '{COMMENTS}'"),
                "every highlight",
            )
            .await;
        let timings = browser
            .run(
                "const n = performance.getEntriesByType('navigation')[0]; \
                 const r = performance.getEntriesByName('review-ready')[0]; \
                 return { interactive: n.domInteractive, contentLoaded: n.domContentLoadedEventEnd, \
                          load: n.loadEventEnd, ready: r ? r.startTime : null, \
                          html: n.transferSize };",
                vec![],
            )
            .await;
        eprintln!("load {load}: {timings}");
        if load > 0 {
            // The first load warms the server's caches, as a reader's second visit would.
            ready.push(timings["ready"].as_f64().expect("the ready mark"));
        }
    }
    ready.sort_by(f64::total_cmp);
    let median = ready[ready.len() / 2];
    println!(
        "review screen, 1 MB document, {COMMENTS} comments: ready (document shown, {COMMENTS} highlights drawn) median {median:.0} ms over {} loads (min {:.0}, max {:.0})",
        ready.len(),
        ready[0],
        ready[ready.len() - 1]
    );
    browser.quit().await;
}
