//! The first walk through the API: create, comment, reply, resolve, new version.

mod support;

use serde_json::json;

use support::{SAMPLE_HTML, Server, html_part};

#[tokio::test]
async fn create_comment_reply_resolve_and_version() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = ada.create_review("Sample", SAMPLE_HTML).await;
    let id = review["reviewId"].as_str().expect("id");
    assert_eq!(review["commentsRevision"], 0);
    assert_eq!(review["role"], "owner");

    let written = ada.comment_on(id, "quick brown fox", "Which fox?").await;
    assert_eq!(written["commentsRevision"], 1);
    let comment_id = written["comment"]["id"].as_str().expect("comment id");
    assert_eq!(written["comment"]["anchor"]["state"], "exact");
    assert_eq!(written["comment"]["anchor"]["sectionId"], "intro");

    let reply = ada
        .post(
            &format!("/api/reviews/{id}/comments/{comment_id}/thread"),
            &json!({ "body": "The brown one." }),
        )
        .await;
    assert_eq!(reply.expect(201)["commentsRevision"], 2);

    let resolved = ada
        .post(
            &format!("/api/reviews/{id}/comments/{comment_id}/status-events"),
            &json!({ "status": "closed", "baseCommentsRevision": 2 }),
        )
        .await;
    let resolved = resolved.expect(201);
    assert_eq!(resolved["event"]["seq"], 1);
    assert_eq!(resolved["comment"]["status"], "closed");

    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            html_part(
                SAMPLE_HTML.replace("lazy dog", "sleepy cat").as_bytes(),
                "v2.html",
            ),
        )
        .text("label", "second");
    let updated = ada
        .multipart(&format!("/api/reviews/{id}/import-html"), form)
        .await;
    let updated = &updated.expect(201)["review"];
    assert_eq!(
        updated["source"]["versions"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(updated["source"]["versions"][1]["label"], "second");
    assert_eq!(updated["comments"][0]["anchor"]["state"], "exact");
    // Adding a version re-anchors every comment: one more comment change.
    assert_eq!(updated["commentsRevision"], 4);
}
