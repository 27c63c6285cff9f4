//! The panel is never downloaded whole for a write or a live change: a write answers with its
//! own thread and the counts; a comment, reply, resolve or undo from another client brings only
//! that thread (asked for by stamp); a new thread goes to its place in document order; no swap
//! breaks the page's style policy; a resolved thread shows one line and opens on a click, Enter
//! or its button. Every way the screen offers (buttons, keyboard shortcuts, the phone drawer),
//! each checked against what the API reads back. Also the fragment routes' refusals.

use docreview_client::api::CommentStatus;
use serde_json::{Value, json};

use crate::support::{Client, Server};
use crate::web::commenting::open_screen;
use crate::web::harness::{self, Browser, NARROW, WIDE};
use crate::web::review::{PASSWORD, review_of, setup};

/// Records, from before the page's own scripts run, every style-policy violation and every
/// request the page makes (XHR and fetch: method, path, status, size, and the answer's shape).
pub const RECORDER: &str = r#"
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.sourceFile}:${e.lineNumber} ${e.sample}`));
window.__requests = [];
const shape = (text) => ({ size: text.length, articles: (text.match(/<article /g) || []).length,
  removed: (text.match(/class="thread-removed"/g) || []).length, update: text.startsWith('<div class="panel-update"'),
  whole: text.includes('id="panel"') });
const record = (method, url, status, text) => window.__requests.push({ method, path: new URL(url, location.href).pathname, status, ...shape(text || '') });
const open = XMLHttpRequest.prototype.open;
XMLHttpRequest.prototype.open = function (method, url) { this.__method = method; this.__url = url; return open.apply(this, arguments); };
const send = XMLHttpRequest.prototype.send;
XMLHttpRequest.prototype.send = function () {
  this.addEventListener('loadend', () => record(this.__method, this.__url, this.status, this.responseText));
  return send.apply(this, arguments);
};
const fetchBefore = window.fetch;
window.fetch = async function (url, init) {
  const response = await fetchBefore.apply(this, arguments);
  response.clone().text().then((text) => record((init && init.method) || 'GET', String(url), response.status, text));
  return response;
};
"#;

/// A browser whose every page runs [`RECORDER`] first.
pub async fn recording_browser(server: &Server, size: (u32, u32)) -> Browser {
    let browser = Browser::open(server, size).await;
    browser
        .driver
        .cdp()
        .send_raw(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": RECORDER }),
        )
        .await
        .expect("the recorder");
    browser
}

/// The requests recorded since the last call (and forgets them).
pub async fn take_requests(browser: &Browser) -> Vec<Value> {
    let value = browser
        .run(
            "const r = window.__requests || []; window.__requests = []; return r;",
            vec![],
        )
        .await;
    value.as_array().cloned().unwrap_or_default()
}

/// Every style-policy violation the page reported.
pub async fn violations(browser: &Browser) -> Value {
    browser.run("return window.__csp || null;", vec![]).await
}

/// A document of `paragraphs` paragraphs, "Paragraph {i} says …".
fn document(paragraphs: usize) -> String {
    let mut html = String::from("<!doctype html><html><head><title>Long</title></head><body>");
    for i in 0..paragraphs {
        if i % 10 == 0 {
            html.push_str(&format!("<h2 id=\"s{i}\">Section {i}</h2>"));
        }
        html.push_str(&format!(
            "<p>Paragraph {i} says what the plan needs at step {i}, and why it matters.</p>"
        ));
    }
    html.push_str("</body></html>");
    html
}

/// A review of 40 paragraphs with a comment on every even one; its id and the comments' ids in
/// document order.
async fn seeded(api: &Client) -> (String, Vec<String>) {
    seeded_with(api, 40).await
}

/// A review of `paragraphs` paragraphs with a comment on every even one.
async fn seeded_with(api: &Client, paragraphs: usize) -> (String, Vec<String>) {
    let review = api.upload("Long plan", &document(paragraphs)).await;
    let id = review.review_id.clone();
    let mut ids = Vec::new();
    for i in (0..paragraphs).step_by(2) {
        let written = api
            .note_on(
                &id,
                &format!("Paragraph {i} says"),
                &format!("Comment on paragraph {i}, with **some** words to read."),
            )
            .await;
        ids.push(written.comment.id);
    }
    (id, ids)
}

/// The size of the whole panel, as the page would download it.
async fn whole_panel_size(browser: &Browser, id: &str) -> usize {
    let size = browser
        .run(
            &format!(
                "return fetch('/reviews/{id}/panel', {{ headers: {{ 'HX-Request': 'true' }} }}).then((r) => r.text()).then((t) => t.length);"
            ),
            vec![],
        )
        .await;
    take_requests(browser).await;
    usize::try_from(size.as_u64().expect("a size")).expect("size")
}

/// Asserts that the requests made hold exactly one answer to `POST …{path_end}`, an update of
/// one thread (or a removal) with the counts, far smaller than the whole panel; and that nothing
/// downloaded the panel.
fn assert_one_thread_answer(requests: &[Value], path_end: &str, whole: usize) {
    let answers: Vec<&Value> = requests
        .iter()
        .filter(|r| r["method"] == "POST" && r["path"].as_str().unwrap_or("").ends_with(path_end))
        .collect();
    assert_eq!(answers.len(), 1, "one answer to {path_end}: {requests:#?}");
    let answer = answers[0];
    assert_eq!(answer["status"], 200, "{answer}");
    assert_eq!(answer["update"], true, "an update, not the panel: {answer}");
    assert_eq!(answer["whole"], false, "{answer}");
    let threads =
        answer["articles"].as_u64().unwrap_or(0) + answer["removed"].as_u64().unwrap_or(0);
    assert_eq!(threads, 1, "one thread: {answer}");
    let size = usize::try_from(answer["size"].as_u64().unwrap_or(u64::MAX)).unwrap_or(usize::MAX);
    assert!(
        size * 5 < whole,
        "the answer ({size} bytes) is not far smaller than the panel ({whole} bytes)"
    );
    for request in requests {
        let path = request["path"].as_str().unwrap_or("");
        assert!(
            !path.ends_with("/panel"),
            "the panel was downloaded: {request}"
        );
        assert_ne!(request["whole"], true, "a whole panel came: {request}");
    }
}

/// Whether the card of `comment` shows one line (a resolved thread, not opened).
async fn collapsed(browser: &Browser, comment: &str) -> bool {
    browser
        .run(
            &format!(
                "const card = document.getElementById('thread-{comment}'); \
                 const body = card.querySelector('.body'); \
                 return card.classList.contains('is-closed') && getComputedStyle(body).display === 'none' \
                   && card.getBoundingClientRect().height < 48;"
            ),
            vec![],
        )
        .await
        == json!(true)
}

/// Whether the card of `comment` shows its body (open, or a resolved one opened).
async fn expanded(browser: &Browser, comment: &str) -> bool {
    browser
        .run(
            &format!(
                "const body = document.querySelector('#thread-{comment} .body'); \
                 return getComputedStyle(body).display !== 'none' && body.getBoundingClientRect().height > 0;"
            ),
            vec![],
        )
        .await
        == json!(true)
}

async fn status_of(api: &Client, id: &str, comment: &str) -> CommentStatus {
    review_of(api, id)
        .await
        .comments
        .into_iter()
        .find(|c| c.id == comment)
        .expect("the comment")
        .status
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_by_button_answer_with_their_thread_and_resolved_threads_collapse() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let (id, comments) = seeded(&api).await;
    let browser = recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    open_screen(&browser, &id, comments.len()).await;
    let whole = whole_panel_size(&browser, &id).await;
    take_requests(&browser).await;

    // Resolve by the button: one thread back, shown as one line.
    let target = &comments[3];
    let card = format!("#thread-{target}");
    browser
        .click(&format!("{card} [data-action=resolve]"))
        .await;
    browser
        .wait_for(
            &format!("document.querySelector('{card}').classList.contains('is-closed')"),
            "resolved",
        )
        .await;
    assert_one_thread_answer(&take_requests(&browser).await, "/status", whole);
    assert_eq!(status_of(&api, &id, target).await, CommentStatus::Closed);
    assert!(
        collapsed(&browser, target).await,
        "a resolved thread shows one line"
    );
    let line = browser.text(&format!("{card} .thread-head")).await;
    assert!(
        line.contains("Resolved") && line.contains("Comment on paragraph 6"),
        "{line}"
    );
    assert_eq!(
        browser.text("#panel-count").await,
        format!("{} comments", comments.len())
    );

    // Its "Show" button opens it and closes it again; a click on the line opens it too.
    browser.click(&format!("{card} [data-action=expand]")).await;
    assert!(expanded(&browser, target).await, "opened by its button");
    assert_eq!(
        browser
            .run(
                &format!("return document.querySelector('{card} [data-action=expand]').getAttribute('aria-expanded')"),
                vec![]
            )
            .await,
        json!("true")
    );
    browser.click(&format!("{card} [data-action=expand]")).await;
    assert!(collapsed(&browser, target).await, "closed again");
    browser.click(&format!("{card} .cat-chip")).await;
    assert!(
        expanded(&browser, target).await,
        "opened by a click on its line"
    );

    // Reopen from the opened card.
    browser
        .click(&format!("{card} [data-action=resolve]"))
        .await;
    browser
        .wait_for(
            &format!("!document.querySelector('{card}').classList.contains('is-closed')"),
            "reopened",
        )
        .await;
    assert_one_thread_answer(&take_requests(&browser).await, "/status", whole);
    assert_eq!(status_of(&api, &id, target).await, CommentStatus::Open);

    // A reply: the thread comes back with it.
    browser.click(&format!("{card} [data-action=reply]")).await;
    browser
        .type_into(&format!("#reply-{target}"), "Agreed, step 6 first.")
        .await;
    browser
        .click(&format!("{card} .reply-form button[type=submit]"))
        .await;
    browser
        .wait_for(
            &format!("document.querySelector('{card} .replies')?.textContent.includes('Agreed, step 6 first.')"),
            "the reply",
        )
        .await;
    assert_one_thread_answer(&take_requests(&browser).await, "/replies", whole);
    let read = review_of(&api, &id).await;
    let thread = read
        .comments
        .iter()
        .find(|c| &c.id == target)
        .expect("thread");
    assert_eq!(thread.thread[0].body, "Agreed, step 6 first.");

    // A new comment on the whole document: its own group, the counts with it.
    browser.run("window.scrollTo(0, 0);", vec![]).await;
    browser.click("#comment-document").await;
    browser
        .type_into("#composer-body", "The whole plan needs dates.")
        .await;
    browser.click(".composer button[type=submit]").await;
    browser
        .wait_for(
            "document.querySelector('#group-document:not([hidden]) .thread')?.textContent.includes('The whole plan needs dates.')",
            "the new thread in its group",
        )
        .await;
    assert_one_thread_answer(&take_requests(&browser).await, "/comments", whole);
    assert_eq!(
        browser.text("#panel-count").await,
        format!("{} comments", comments.len() + 1)
    );
    let read = review_of(&api, &id).await;
    let new = read
        .comments
        .iter()
        .find(|c| c.body == "The whole plan needs dates.")
        .expect("written");

    // Undo: the thread goes, the counts follow.
    let undo = format!("#thread-{} .sent button", new.id);
    browser
        .run(
            &format!("document.querySelector('{undo}').scrollIntoView({{ block: 'center' }});"),
            vec![],
        )
        .await;
    browser.click(&undo).await;
    browser
        .wait_for(
            &format!("!document.getElementById('thread-{}') && document.getElementById('group-document').hidden", new.id),
            "the thread gone",
        )
        .await;
    assert_one_thread_answer(&take_requests(&browser).await, "/cancel", whole);
    assert_eq!(review_of(&api, &id).await.comments.len(), comments.len());
    assert_eq!(
        browser.text("#panel-count").await,
        format!("{} comments", comments.len())
    );
    assert_eq!(
        browser
            .run(
                "return document.getElementById('review').dataset.highlights",
                vec![]
            )
            .await,
        json!(comments.len().to_string())
    );
    assert_eq!(
        violations(&browser).await,
        json!([]),
        "no style-policy violation"
    );
    browser.screenshot("updates-wide").await;
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_by_keyboard_answer_with_their_thread_and_enter_opens_a_resolved_one() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let (id, comments) = seeded(&api).await;
    let browser = recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    open_screen(&browser, &id, comments.len()).await;
    let whole = whole_panel_size(&browser, &id).await;
    take_requests(&browser).await;

    // j, j: the second thread; e resolves it.
    let target = &comments[1];
    let card = format!("#thread-{target}");
    browser
        .run(
            "document.activeElement?.blur(); document.body.focus();",
            vec![],
        )
        .await;
    for key in ["j", "j"] {
        browser
            .driver
            .action_chain()
            .send_keys(key)
            .perform()
            .await
            .expect("key");
    }
    browser
        .wait_for(
            &format!("document.querySelector('{card}').classList.contains('is-active')"),
            "the second thread current",
        )
        .await;
    browser
        .driver
        .action_chain()
        .send_keys("e")
        .perform()
        .await
        .expect("e");
    browser
        .wait_for(
            &format!("document.querySelector('{card}').classList.contains('is-closed')"),
            "resolved by e",
        )
        .await;
    assert_one_thread_answer(&take_requests(&browser).await, "/status", whole);
    assert_eq!(status_of(&api, &id, target).await, CommentStatus::Closed);
    assert!(collapsed(&browser, target).await);

    // Enter on the current card opens it; again closes it.
    browser
        .run(
            &format!("document.querySelector('{card}').focus();"),
            vec![],
        )
        .await;
    browser
        .driver
        .action_chain()
        .send_keys("\u{E007}")
        .perform()
        .await
        .expect("Enter");
    assert!(expanded(&browser, target).await, "Enter opens it");
    browser
        .driver
        .action_chain()
        .send_keys("\u{E007}")
        .perform()
        .await
        .expect("Enter");
    assert!(collapsed(&browser, target).await, "Enter closes it");

    // e again reopens it; r and Ctrl+Enter reply.
    browser
        .driver
        .action_chain()
        .send_keys("e")
        .perform()
        .await
        .expect("e");
    browser
        .wait_for(
            &format!("!document.querySelector('{card}').classList.contains('is-closed')"),
            "reopened by e",
        )
        .await;
    assert_one_thread_answer(&take_requests(&browser).await, "/status", whole);
    assert_eq!(status_of(&api, &id, target).await, CommentStatus::Open);
    browser
        .driver
        .action_chain()
        .send_keys("r")
        .perform()
        .await
        .expect("r");
    browser
        .wait_for(
            &format!("document.activeElement === document.getElementById('reply-{target}')"),
            "the reply form",
        )
        .await;
    browser
        .driver
        .action_chain()
        .send_keys("By keyboard.")
        .key_down('\u{E009}')
        .send_keys("\u{E007}")
        .key_up('\u{E009}')
        .perform()
        .await
        .expect("Ctrl+Enter");
    browser
        .wait_for(
            &format!(
                "document.querySelector('{card} .replies')?.textContent.includes('By keyboard.')"
            ),
            "the reply",
        )
        .await;
    assert_one_thread_answer(&take_requests(&browser).await, "/replies", whole);
    let read = review_of(&api, &id).await;
    let thread = read
        .comments
        .iter()
        .find(|c| &c.id == target)
        .expect("thread");
    assert_eq!(thread.thread[0].body, "By keyboard.");
    assert_eq!(
        violations(&browser).await,
        json!([]),
        "no style-policy violation"
    );
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_from_the_phone_drawer_answer_with_their_thread() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let (id, comments) = seeded(&api).await;
    let browser = recording_browser(&server, NARROW).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    open_screen(&browser, &id, comments.len()).await;
    let whole = whole_panel_size(&browser, &id).await;
    take_requests(&browser).await;

    browser.click("#drawer-toggle").await;
    browser
        .wait_for(
            "document.getElementById('review').classList.contains('drawer-open') && document.getElementById('comments-column').getAnimations().length === 0",
            "the drawer open and still",
        )
        .await;
    let target = &comments[0];
    let card = format!("#thread-{target}");
    browser
        .click(&format!("{card} [data-action=resolve]"))
        .await;
    browser
        .wait_for(
            &format!("document.querySelector('{card}').classList.contains('is-closed')"),
            "resolved",
        )
        .await;
    assert_one_thread_answer(&take_requests(&browser).await, "/status", whole);
    assert_eq!(status_of(&api, &id, target).await, CommentStatus::Closed);
    assert!(collapsed(&browser, target).await, "one line in the drawer");
    browser.click(&format!("{card} .author")).await;
    assert!(expanded(&browser, target).await, "opened by a tap");
    browser.screenshot("updates-drawer").await;
    browser
        .click(&format!("{card} [data-action=resolve]"))
        .await;
    browser
        .wait_for(
            &format!("!document.querySelector('{card}').classList.contains('is-closed')"),
            "reopened",
        )
        .await;
    assert_one_thread_answer(&take_requests(&browser).await, "/status", whole);
    assert_eq!(status_of(&api, &id, target).await, CommentStatus::Open);
    assert_eq!(
        violations(&browser).await,
        json!([]),
        "no style-policy violation"
    );
    browser.quit().await;
}

/// The sync answers recorded: each one an update (never the panel) of `threads` threads.
fn assert_synced(requests: &[Value], threads: u64) {
    let syncs: Vec<&Value> = requests
        .iter()
        .filter(|r| r["path"].as_str().unwrap_or("").ends_with("/threads/sync"))
        .collect();
    assert!(!syncs.is_empty(), "a sync: {requests:#?}");
    let carried: u64 = syncs
        .iter()
        .map(|r| r["articles"].as_u64().unwrap_or(0) + r["removed"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(carried, threads, "{syncs:#?}");
    for request in requests {
        let path = request["path"].as_str().unwrap_or("");
        assert!(
            !path.ends_with("/panel"),
            "the panel was downloaded: {request}"
        );
        assert_ne!(request["whole"], true, "a whole panel came: {request}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn changes_from_another_client_bring_only_their_thread_in_document_order() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    server.create_user_with_password("grace@example.com", "Grace Hopper", &[], PASSWORD);
    let (id, comments) = seeded(&api).await;
    let browser = recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    open_screen(&browser, &id, comments.len()).await;
    browser.run("window.__sameDocument = true;", vec![]).await;
    take_requests(&browser).await;
    let grace = server.sign_in("grace@example.com", PASSWORD).await;

    // A comment on paragraph 7: between the threads of paragraphs 6 and 8.
    let started = std::time::Instant::now();
    let written = grace
        .post(
            &format!("/api/reviews/{id}/comments"),
            &json!({ "body": "From Grace, on seven.", "category": "consult",
                     "locator": { "quote": { "exact": "Paragraph 7 says" } } }),
        )
        .await;
    let new = written.expect(201)["comment"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    browser
        .wait_for(
            &format!("document.getElementById('thread-{new}') && document.getElementById('review').dataset.highlights === '{}'", comments.len() + 1),
            "Grace's comment and its highlight",
        )
        .await;
    eprintln!(
        "a comment from elsewhere shown after {:?}",
        started.elapsed()
    );
    let order = browser
        .run(
            "return [...document.querySelectorAll('#group-anchored .thread')].map((t) => t.dataset.comment);",
            vec![],
        )
        .await;
    let mut expected: Vec<String> = comments.clone();
    expected.insert(4, new.clone());
    assert_eq!(order, json!(expected), "in document order");
    assert_synced(&take_requests(&browser).await, 1);
    assert_eq!(
        browser.text("#panel-count").await,
        format!("{} comments", comments.len() + 1)
    );

    // A reply to an existing thread, then its resolution: that thread alone, then one line.
    let target = &comments[2];
    grace
        .post(
            &format!("/api/reviews/{id}/comments/{target}/thread"),
            &json!({ "body": "Grace replies." }),
        )
        .await
        .expect(201);
    browser
        .wait_for(
            &format!("document.querySelector('#thread-{target} .replies')?.textContent.includes('Grace replies.')"),
            "Grace's reply",
        )
        .await;
    assert_synced(&take_requests(&browser).await, 1);
    grace
        .post(
            &format!("/api/reviews/{id}/comments/{target}/status-events"),
            &json!({ "status": "closed" }),
        )
        .await
        .expect(201);
    browser
        .wait_for(
            &format!("document.getElementById('thread-{target}').classList.contains('is-closed')"),
            "resolved elsewhere",
        )
        .await;
    assert!(collapsed(&browser, target).await);
    assert_synced(&take_requests(&browser).await, 1);

    // Grace takes her comment back: it goes.
    let undone = grace
        .delete(&format!("/api/reviews/{id}/comments/{new}"))
        .await;
    assert!(undone.status < 300, "{} {}", undone.status, undone.text);
    browser
        .wait_for(
            &format!("!document.getElementById('thread-{new}')"),
            "Grace's comment gone",
        )
        .await;
    assert_synced(&take_requests(&browser).await, 1);
    let read = review_of(&api, &id).await;
    assert_eq!(read.comments.len(), comments.len());
    assert_eq!(
        browser
            .run("return window.__sameDocument === true", vec![])
            .await,
        json!(true),
        "no reload"
    );
    assert_eq!(
        violations(&browser).await,
        json!([]),
        "no style-policy violation"
    );
    browser.quit().await;
}

/// What the fragment routes answer to what a page would not send: refusals, never a failure.
#[tokio::test]
async fn the_fragment_routes_refuse_what_they_cannot_answer() {
    let (server, api) = setup().await;
    let (id, comments) = seeded(&api).await;
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let page = session.get(&format!("/reviews/{id}")).await;
    let marker = "name=\"csrf-token\" content=\"";
    let start = page.text.find(marker).expect("the token") + marker.len();
    let csrf = page.text[start..]
        .split('"')
        .next()
        .expect("token")
        .to_string();

    // One thread: its card; one that is not there is taken away.
    let one = session
        .get(&format!("/reviews/{id}/threads/{}", comments[0]))
        .await;
    assert_eq!(one.status, 200, "{}", one.text);
    assert!(
        one.text.starts_with("<div class=\"panel-update\""),
        "{}",
        one.text
    );
    assert_eq!(one.text.matches("<article ").count(), 1);
    let gone = session.get(&format!("/reviews/{id}/threads/c_nope")).await;
    assert_eq!(gone.status, 200);
    assert!(
        gone.text
            .contains("class=\"thread-removed\" data-comment=\"c_nope\""),
        "{}",
        gone.text
    );
    // Several at once, at most 200.
    let ids = comments[..3].join(",");
    let some = session
        .get(&format!("/reviews/{id}/threads?ids={ids}"))
        .await;
    assert_eq!(some.text.matches("<article ").count(), 3, "{}", some.text);
    let many = vec!["c_x"; 201].join(",");
    let refused = session
        .get(&format!("/reviews/{id}/threads?ids={many}"))
        .await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    // Another document, or none: 404.
    for path in [
        "/reviews/rv_nope/threads/c_x".to_string(),
        "/reviews/rv_nope/threads?ids=a".to_string(),
        "/reviews/rv_nope/panel".to_string(),
        "/reviews/rv_nope/runs".to_string(),
    ] {
        assert_eq!(session.get(&path).await.status, 404, "{path}");
    }

    // Sync: only what differs; a page's token is needed; nonsense is answered, not failed.
    let sync = |body: String| {
        session.send(
            session
                .raw("POST", &format!("/reviews/{id}/threads/sync"))
                .header("x-csrf-token", &csrf)
                .header("hx-request", "true")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body),
        )
    };
    let everything = sync(String::new()).await;
    assert_eq!(everything.status, 200, "{}", everything.text);
    assert_eq!(everything.text.matches("<article ").count(), comments.len());
    let stamps: Vec<String> = everything
        .text
        .split("<article ")
        .skip(1)
        .map(|card| {
            let id = card
                .split("data-comment=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .expect("id");
            let stamp = card
                .split("data-stamp=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .expect("stamp");
            format!("{id}:{stamp}")
        })
        .collect();
    let seen = stamps.join(" ");
    let nothing = sync(format!("seen={}", urlencode(&seen))).await;
    assert_eq!(
        nothing.text.matches("<article ").count(),
        0,
        "{}",
        nothing.text
    );
    assert!(
        nothing.text.contains("id=\"panel-count\""),
        "the counts come"
    );
    let with_stranger = sync(format!("seen={}", urlencode(&format!("{seen} c_gone:abc")))).await;
    assert_eq!(
        with_stranger
            .text
            .matches("class=\"thread-removed\"")
            .count(),
        1
    );
    for body in [
        "seen=%00",
        "seen=::::",
        "seen=%ZZ",
        "nonsense",
        "seen=a:b&seen=c:d",
    ] {
        let answer = sync(body.to_string()).await;
        assert!(
            (200..500).contains(&answer.status),
            "`{body}`: {} {}",
            answer.status,
            answer.text
        );
    }
    let no_token = session
        .send(
            session
                .raw("POST", &format!("/reviews/{id}/threads/sync"))
                .header("hx-request", "true")
                .header("content-type", "application/x-www-form-urlencoded")
                .body("seen="),
        )
        .await;
    assert_eq!(no_token.status, 403, "{}", no_token.text);
    let elsewhere = session
        .send(
            session
                .raw("POST", "/reviews/rv_nope/threads/sync")
                .header("x-csrf-token", &csrf)
                .header("content-type", "application/x-www-form-urlencoded")
                .body("seen="),
        )
        .await;
    assert_eq!(elsewhere.status, 404);
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Whether the thread `comment` is held in short (its card not loaded).
async fn is_stub(browser: &Browser, comment: &str) -> bool {
    browser
        .run(
            &format!(
                "return document.getElementById('thread-{comment}').classList.contains('stub');"
            ),
            vec![],
        )
        .await
        == json!(true)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_panel_holds_far_threads_in_short_and_loads_them_as_the_reader_comes_close() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    server.create_user_with_password("grace@example.com", "Grace Hopper", &[], PASSWORD);
    let (id, comments) = seeded_with(&api, 200).await;
    assert_eq!(comments.len(), 100);

    // The page: the first 30 threads whole, the others in short.
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let page = session.get(&format!("/reviews/{id}")).await;
    assert_eq!(page.text.matches("<article ").count(), 100);
    assert_eq!(page.text.matches("class=\"thread stub").count(), 70);
    assert!(page.text.contains("Comment on paragraph 58,"));
    assert!(
        !page.text.contains("Comment on paragraph 60,"),
        "no words of far threads"
    );

    let browser = recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    open_screen(&browser, &id, comments.len()).await;
    let far = &comments[90];
    assert!(
        is_stub(&browser, far).await,
        "far from the reader, held in short"
    );

    // Scrolled close, it loads (with others near it), words and all.
    browser
        .run(
            &format!(
                "const card = document.getElementById('thread-{far}'); \
                      window.scrollTo(0, card.getBoundingClientRect().top + window.scrollY - 200);"
            ),
            vec![],
        )
        .await;
    browser
        .wait_for(
            &format!("document.querySelector('#thread-{far}:not(.stub) .body')?.textContent.includes('Comment on paragraph 180,')"),
            "the far card loaded",
        )
        .await;
    let requests = take_requests(&browser).await;
    let loads: Vec<&Value> = requests
        .iter()
        .filter(|r| r["path"].as_str().unwrap_or("").ends_with("/threads"))
        .collect();
    assert!(!loads.is_empty(), "{requests:#?}");
    assert!(
        loads
            .iter()
            .all(|r| r["update"] == true && r["status"] == 200),
        "{loads:#?}"
    );
    assert!(
        is_stub(&browser, &comments[40]).await,
        "threads far from here stay short"
    );

    // Made current by the keyboard (k from the start: the last thread), it loads and is focused.
    browser
        .run(
            "window.scrollTo(0, 0); document.activeElement?.blur();",
            vec![],
        )
        .await;
    let last = comments.last().expect("a last");
    browser
        .driver
        .action_chain()
        .send_keys("k")
        .perform()
        .await
        .expect("k");
    browser
        .wait_for(
            &format!("document.querySelector('#thread-{last}:not(.stub).is-active') && document.activeElement?.id === 'thread-{last}'"),
            "the last thread loaded, current and focused",
        )
        .await;
    // Resolved from the keyboard once loaded: one thread back, one line.
    browser
        .driver
        .action_chain()
        .send_keys("e")
        .perform()
        .await
        .expect("e");
    browser
        .wait_for(
            &format!("document.getElementById('thread-{last}').classList.contains('is-closed')"),
            "resolved",
        )
        .await;
    assert_eq!(status_of(&api, &id, last).await, CommentStatus::Closed);

    // A comment from elsewhere lands at its place among short threads.
    let grace = server.sign_in("grace@example.com", PASSWORD).await;
    let written = grace
        .post(
            &format!("/api/reviews/{id}/comments"),
            &json!({ "body": "Grace on 151.", "locator": { "quote": { "exact": "Paragraph 151 says" } } }),
        )
        .await;
    let new = written.expect(201)["comment"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    browser
        .wait_for(
            &format!("document.getElementById('thread-{new}')"),
            "Grace's thread",
        )
        .await;
    let neighbours = browser
        .run(
            &format!("const card = document.getElementById('thread-{new}'); \
                      return [card.previousElementSibling?.dataset.comment, card.nextElementSibling?.dataset.comment];"),
            vec![],
        )
        .await;
    assert_eq!(neighbours, json!([comments[75], comments[76]]));
    assert_eq!(
        violations(&browser).await,
        json!([]),
        "no style-policy violation"
    );
    browser.quit().await;

    // On a phone: scrolling the drawer loads the cards that come into it. (The thread resolved
    // above is left out by the Open filter; Grace's is in.)
    let phone = recording_browser(&server, NARROW).await;
    phone.sign_in("ada@example.com", PASSWORD).await;
    open_screen(&phone, &id, comments.len()).await;
    phone.click("#drawer-toggle").await;
    phone
        .wait_for(
            "document.getElementById('review').classList.contains('drawer-open') && document.getElementById('comments-column').getAnimations().length === 0",
            "the drawer open and still",
        )
        .await;
    let target = &comments[50];
    assert!(is_stub(&phone, target).await);
    phone
        .run(
            &format!(
                "document.getElementById('thread-{target}').scrollIntoView({{ block: 'center' }});"
            ),
            vec![],
        )
        .await;
    phone
        .wait_for(
            &format!("document.querySelector('#thread-{target}:not(.stub) .body')?.textContent.includes('Comment on paragraph 100,')"),
            "the card loaded in the drawer",
        )
        .await;
    assert_eq!(
        violations(&phone).await,
        json!([]),
        "no style-policy violation"
    );
    phone.quit().await;
}
