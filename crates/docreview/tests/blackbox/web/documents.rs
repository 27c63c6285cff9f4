//! The documents screen: the empty state, uploading through the page (and a refused upload
//! that keeps what was chosen), filters, full-text search of documents and of comments with
//! highlighted snippets, a search result opening its thread, and paging; state read back
//! through the API.

use docreview_client::api::{ListQuery, MetaChange};
use serde_json::json;

use crate::support::{Client, Server};
use crate::web::harness::{self, Browser, WIDE};
use crate::web::review::{PASSWORD, setup};

const UPLOAD: &str = "<!doctype html><html><head><title>Quarterly plan</title></head><body>\
<h1>Quarterly plan</h1><p>We open the zanzibar office in spring.</p></body></html>";

/// The titles of the documents `api` lists, sorted.
async fn titles(api: &Client) -> Vec<String> {
    let list = api.api().list_reviews(&ListQuery::default()).await;
    let mut titles: Vec<String> = list
        .expect("list")
        .reviews
        .into_iter()
        .map(|review| review.title)
        .collect();
    titles.sort();
    titles
}

/// The titles the page lists, sorted.
async fn listed(browser: &Browser) -> Vec<String> {
    let mut titles = Vec::new();
    for link in browser.find_all(".doc-row .doc-title").await {
        titles.push(link.text().await.expect("title"));
    }
    titles.sort();
    titles
}

async fn submit_and_wait(browser: &Browser, form: &str) {
    let button = browser.find(&format!("{form} button[type=submit]")).await;
    browser.click_and_wait_for_new_page(&button).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn upload_filter_and_search_documents() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto("/").await;
    assert!(
        browser.text(".empty").await.contains("No documents yet"),
        "the empty state says what to do"
    );
    browser.check_accessibility("documents, empty").await;

    // A refused upload (a project that does not exist) says why and keeps the form filled.
    let file = tempfile::Builder::new()
        .suffix(".html")
        .tempfile()
        .expect("file");
    std::fs::write(file.path(), UPLOAD).expect("write");
    browser.click("#upload-toggle").await;
    browser
        .find("#upload input[name=file]")
        .await
        .send_keys(file.path().to_str().expect("path"))
        .await
        .expect("choose the file");
    browser
        .type_into("#upload input[name=title]", "Quarterly plan")
        .await;
    browser
        .type_into("#upload input[name=tags]", "launch, q3")
        .await;
    browser
        .run(
            "const select = document.querySelector('#upload select[name=project]'); \
             select.add(new Option('NOPE', 'NOPE', true, true));",
            Vec::new(),
        )
        .await;
    browser.click("#upload button[type=submit]").await;
    let refused = browser
        .wait_for(
            "document.querySelector('#upload-status .notice')?.textContent",
            "the refusal",
        )
        .await;
    assert!(
        refused
            .as_str()
            .unwrap_or_default()
            .starts_with("project not found."),
        "{refused}"
    );
    assert_eq!(
        browser
            .run(
                "return document.querySelector('#upload input[name=title]').value",
                Vec::new()
            )
            .await,
        json!("Quarterly plan")
    );
    assert_eq!(titles(&api).await, Vec::<String>::new());

    // Without the bad project it goes through and opens the review screen.
    browser
        .run(
            "document.querySelector('#upload select[name=project]').value = '';",
            Vec::new(),
        )
        .await;
    browser.click("#upload button[type=submit]").await;
    browser
        .wait_for(
            "location.pathname.startsWith('/reviews/') && document.getElementById('review')?.classList.contains('frame-ready')",
            "the uploaded document's review screen",
        )
        .await;
    assert_eq!(titles(&api).await, ["Quarterly plan"]);
    let list = api.api().list_reviews(&ListQuery::default()).await;
    let quarterly = list.expect("list").reviews.remove(0);
    assert_eq!(quarterly.tags, ["launch", "q3"]);

    // Filters: tag, archived.
    api.upload("Other notes", "<p>Nothing about offices.</p>")
        .await;
    let old = api.upload("Old draft", "<p>Retired.</p>").await;
    let old_id = old.review_id.as_str();
    let archive = MetaChange {
        tags: None,
        archived: Some(true),
    };
    api.api()
        .change_meta(old_id, &archive)
        .await
        .expect("archive");
    browser.goto("/").await;
    assert_eq!(listed(&browser).await, ["Other notes", "Quarterly plan"]);
    browser.click("#upload-toggle").await;
    browser.screenshot("documents").await;
    browser.click("#upload-cancel").await;
    browser
        .type_into(".doc-filters input[name=tag]", "launch")
        .await;
    submit_and_wait(&browser, ".doc-filters").await;
    assert_eq!(listed(&browser).await, ["Quarterly plan"]);
    browser.goto("/?show=archived").await;
    assert_eq!(listed(&browser).await, ["Old draft"]);
    browser.goto("/?tag=nothing-has-this").await;
    assert!(browser.text(".empty").await.contains("No documents match"));

    // Full-text search with highlighted snippets.
    browser.goto("/").await;
    browser.type_into("#q", "zanzibar").await;
    submit_and_wait(&browser, ".doc-search").await;
    assert_eq!(listed(&browser).await, ["Quarterly plan"]);
    assert_eq!(
        browser.text(".snippet mark").await.to_lowercase(),
        "zanzibar"
    );
    browser.check_accessibility("documents, search").await;

    // Comments too; a result opens its thread on the review screen.
    let id = quarterly.review_id.as_str();
    let comment = api
        .note_on(id, "zanzibar office", "Is the pineapple budget approved?")
        .await;
    let comment_id = comment.comment.id.as_str();
    browser.goto("/?q=pineapple&in=comments").await;
    assert!(
        browser
            .text(".snippet mark")
            .await
            .eq_ignore_ascii_case("pineapple")
    );
    let link = browser.find(".doc-row .doc-title").await;
    browser.click_and_wait_for_new_page(&link).await;
    browser
        .wait_for(
            &format!(
                "document.getElementById('thread-{comment_id}')?.classList.contains('is-active')"
            ),
            "the found thread, open",
        )
        .await;
    browser.quit().await;
}

#[tokio::test]
async fn the_documents_page_pages_and_explains_what_it_cannot_do() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let token = server.issue_token("ada@example.com", "docs,comments");
    let api = server.client(Some(&token));
    for n in 0..52 {
        api.upload(&format!("Doc {n:02}"), "<p>text</p>").await;
    }
    let session = server.sign_in("ada@example.com", PASSWORD).await;

    let first = session.get("/").await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.text.matches("class=\"doc-row\"").count(), 50);
    let next = first
        .text
        .split("href=\"")
        .find(|part| part.starts_with("/?cursor="))
        .and_then(|part| part.split('"').next())
        .expect("a next-page link")
        .replace("&amp;", "&");
    let second = session.get(&next).await;
    assert_eq!(second.status, 200, "{}", second.text);
    assert_eq!(second.text.matches("class=\"doc-row\"").count(), 2);
    assert!(second.text.contains("First page"));

    // What the person must fix is said on the page, never a server error.
    let nothing_to_search = session.get("/?q=%21%21%21").await;
    assert_eq!(nothing_to_search.status, 400);
    assert!(
        nothing_to_search.text.contains("at least one word"),
        "{}",
        nothing_to_search.text
    );
    let bad_cursor = session.get("/?cursor=not-a-cursor%FF").await;
    assert_eq!(bad_cursor.status, 400, "{}", bad_cursor.text);
    assert!(bad_cursor.text.contains("class=\"notice\""));
    assert_eq!(session.get("/?tag=%00").await.status, 400);
    let unknown_show = session.get("/?show=sideways&in=elsewhere").await;
    assert_eq!(unknown_show.status, 200);
}
