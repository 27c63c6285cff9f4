//! `/api/docs`: the vendored Swagger UI renders the served contract under the page policy
//! (no inline script), one block per operation, for anyone.

use crate::support::Server;
use crate::web::harness::{self, Browser, WIDE};

#[tokio::test(flavor = "multi_thread")]
async fn the_api_reference_shows_every_operation_of_the_contract() {
    if !harness::available() {
        return;
    }
    let server = Server::start();
    let contract = server.client(None).get("/api/openapi.json").await;
    let operations: usize = contract.expect(200)["paths"]
        .as_object()
        .expect("paths")
        .values()
        .map(|item| item.as_object().map_or(0, serde_json::Map::len))
        .sum();
    assert!(operations >= 45, "{operations}");

    let browser = Browser::open(&server, WIDE).await;
    browser.goto("/api/docs").await;
    let shown = browser
        .wait_for(
            &format!("document.querySelectorAll('.opblock').length >= {operations} && document.querySelectorAll('.opblock').length"),
            "every operation in the reference",
        )
        .await;
    assert_eq!(shown.as_u64(), Some(operations as u64));
    assert_eq!(
        browser.text(".info .title").await.split_whitespace().next(),
        Some("docreview")
    );
    browser.screenshot("api-docs").await;
    browser.quit().await;
}
