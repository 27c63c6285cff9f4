//! The review screen's speed (issue 16): for a 1 MB document with 1,000 comments, the page's own
//! HTML, the time until it is interactive, how long a resolve and a comment from elsewhere take
//! to show, the bytes of one write's update on the wire, and the style-policy violations met on
//! the way. A benchmark, not a timed test: ignored by default, run by `bench/review-screen.sh`; it
//! prints the figures beside their targets and asserts only that everything was drawn.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use docreview_client::api::{Category, NewComment};
use serde_json::{Value, json};

use crate::support::quote;

use crate::web::harness::{self, WIDE};
use crate::web::review::{PASSWORD, setup};
use crate::web::updates::{recording_browser, take_requests};

const COMMENTS: usize = 1000;
const LOADS: usize = 5;
const WRITES: usize = 5;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn now_millis() -> f64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    since.as_secs_f64() * 1000.0
}

/// Clicks the resolve button of `comment` and answers how long until its card shows resolved
/// (the class set and a frame painted), in milliseconds.
const RESOLVE: &str = r"
const [id, done] = [arguments[0], arguments[arguments.length - 1]];
const panel = document.getElementById('panel');
const started = performance.now();
const observer = new MutationObserver(() => {
  const card = document.getElementById('thread-' + id);
  if (card && card.classList.contains('is-closed')) {
    observer.disconnect();
    requestAnimationFrame(() => setTimeout(() => done(performance.now() - started), 0));
  }
});
observer.observe(panel, { subtree: true, childList: true, attributes: true, attributeFilter: ['class'] });
document.querySelector('#thread-' + id + ' [data-action=resolve]').click();
";

/// Notes (`window.__shown`) the wall-clock time at which a card with `marker` in its body is
/// put in the panel (and a frame painted).
const WATCH: &str = r"
const marker = arguments[0];
window.__shown = null;
const observer = new MutationObserver(() => {
  const found = [...document.querySelectorAll('#panel .thread .body')].some((b) => b.textContent.includes(marker));
  if (found) {
    observer.disconnect();
    requestAnimationFrame(() => setTimeout(() => { window.__shown = Date.now(); }, 0));
  }
});
observer.observe(document.getElementById('panel'), { subtree: true, childList: true });
";

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
    let mut comment_ids = Vec::new();
    for i in 0..COMMENTS {
        let n = i * step;
        let category = categories[i % categories.len()];
        let comment = NewComment {
            body: format!(
                "Comment {i} on paragraph {n}: the wording here could be *tighter*, and the \
                 claim wants a source."
            ),
            category: Some(category),
            locator: Some(quote(&format!("Paragraph {n} opens here"))),
            base_comments_revision: None,
            suggestion: None,
        };
        let written = api.api().add_comment(&id, &comment).await.expect("comment");
        comment_ids.push(written.comment.id);
    }
    eprintln!(
        "document: {} bytes, {paragraph} paragraphs, {COMMENTS} comments",
        html.len()
    );

    // The page's own HTML, as the server sends it to a signed-in person.
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let page = session.get(&format!("/reviews/{id}")).await;
    assert_eq!(page.status, 200);
    let page_bytes = page.text.len();
    let whole_panel = session
        .get(&format!("/reviews/{id}/panel"))
        .await
        .text
        .len();

    let browser = recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    let mut violations = 0;
    let mut ready = Vec::new();
    for load in 0..LOADS {
        if load > 0 {
            violations += browser
                .run("return (window.__csp || []).length;", vec![])
                .await
                .as_u64()
                .unwrap_or(0);
        }
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
                          htmlOnTheWire: n.transferSize, html: n.decodedBodySize };",
                vec![],
            )
            .await;
        eprintln!("load {load}: {timings}");
        if load > 0 {
            // The first load warms the server's caches, as a reader's second visit would.
            ready.push(timings["ready"].as_f64().expect("the ready mark"));
        }
    }
    take_requests(&browser).await;

    // Resolve: the first threads (cards near the top), one after another.
    let mut resolves = Vec::new();
    for comment in comment_ids.iter().take(WRITES) {
        let shown = browser
            .driver
            .execute_async(RESOLVE, vec![json!(comment)])
            .await
            .expect("resolved")
            .json()
            .as_f64()
            .expect("a time");
        resolves.push(shown);
    }
    // What each write's answer weighed: its body, and on the wire (headers and all).
    let requests = take_requests(&browser).await;
    let update_bytes: Vec<f64> = requests
        .iter()
        .filter(|r| r["path"].as_str().unwrap_or("").ends_with("/status"))
        .filter_map(|r| r["size"].as_f64())
        .collect();
    assert_eq!(update_bytes.len(), WRITES, "{requests:#?}");
    let on_the_wire = browser
        .run(
            "return performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/status')).map((e) => e.transferSize);",
            vec![],
        )
        .await;
    let wire: Vec<f64> = on_the_wire
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();

    // A comment from elsewhere (another client, through the API), on passages down the document.
    let mut lives = Vec::new();
    for i in 0..WRITES {
        let marker = format!("Live comment {i} from elsewhere.");
        browser.run(WATCH, vec![json!(marker)]).await;
        let n = (i * 97 + 13) * step + 1;
        let comment = NewComment {
            body: marker.clone(),
            category: Some(Category::Consult),
            locator: Some(quote(&format!("Paragraph {n} opens here"))),
            base_comments_revision: None,
            suggestion: None,
        };
        let sent = now_millis();
        api.api().add_comment(&id, &comment).await.expect("comment");
        let shown = browser.wait_for("window.__shown", "the live comment").await;
        lives.push(shown.as_f64().expect("a time") - sent);
    }
    let requests = take_requests(&browser).await;
    let syncs: Vec<f64> = requests
        .iter()
        .filter(|r| r["path"].as_str().unwrap_or("").ends_with("/threads/sync"))
        .filter_map(|r| r["size"].as_f64())
        .collect();
    let panels = requests
        .iter()
        .filter(|r| r["path"].as_str().unwrap_or("").ends_with("/panel"))
        .count();
    violations += browser
        .run("return (window.__csp || []).length;", vec![])
        .await
        .as_u64()
        .unwrap_or(0);

    let kb = |bytes: f64| bytes / 1024.0;
    let max = |values: &[f64]| values.iter().copied().fold(0.0, f64::max);
    println!(
        "review screen: 1 MB document ({} bytes), {COMMENTS} comments",
        html.len()
    );
    println!(
        "| page HTML                         {:>8.1} KB   target <= 600 KB (whole panel alone: {:.1} KB)",
        kb(page_bytes as f64),
        kb(whole_panel as f64)
    );
    println!(
        "| interactive (median of {})         {:>8.0} ms   target < 1000 ms (document shown, {COMMENTS} highlights drawn)",
        ready.len(),
        median(ready.clone())
    );
    println!(
        "| resolve shown (median of {WRITES})       {:>8.0} ms   target < 300 ms (max {:.0})",
        median(resolves.clone()),
        max(&resolves)
    );
    println!(
        "| comment from elsewhere (median of {WRITES}){:>7.0} ms   target < 500 ms (max {:.0})",
        median(lives.clone()),
        max(&lives)
    );
    println!(
        "| bytes per write update            {:>8.1} KB   target <= 50 KB (on the wire with headers: {:.1} KB max)",
        kb(max(&update_bytes)),
        kb(max(&wire))
    );
    println!(
        "| live update answers               {:>8.1} KB   (largest of {} syncs; whole-panel downloads: {panels})",
        kb(max(&syncs)),
        syncs.len()
    );
    println!("| CSP violations                    {violations:>8}      target 0");
    browser.quit().await;
}
