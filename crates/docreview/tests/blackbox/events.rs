//! Live events (`GET /api/reviews/{id}/events`, Server-Sent Events): the current state first,
//! then one event per committed change of that document only.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Client, SAMPLE_HTML, Server, html_part};

/// An open event stream, read event by event.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    async fn open(client: &Client, review_id: &str) -> Events {
        let response = client
            .raw("GET", &format!("/api/reviews/{review_id}/events"))
            .send()
            .await
            .expect("open the event stream");
        assert_eq!(response.status().as_u16(), 200);
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok());
        assert_eq!(content_type, Some("text/event-stream"));
        Events {
            response,
            buffer: String::new(),
        }
    }

    /// The next event as `(name, data)`, skipping keep-alive comments; fails after 5 s.
    async fn next(&mut self) -> (String, Value) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_string();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim());
                    }
                }
                if !name.is_empty() {
                    return (
                        name,
                        serde_json::from_str(&data).expect("event data is JSON"),
                    );
                }
                continue;
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .expect("an event within 5 s")
                .expect("read the stream")
                .expect("the stream stays open");
            self.buffer
                .push_str(std::str::from_utf8(&chunk).expect("UTF-8 events"));
        }
    }
}

#[tokio::test]
async fn a_listener_hears_the_current_state_then_each_change() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let reader = server.user("reader@example.com", "Reader", &[], "comments");
    let id = owner.create_review("Live", SAMPLE_HTML).await["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    let other = owner.create_review("Other", SAMPLE_HTML).await["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    let mut events = Events::open(&reader, &id).await;

    let (name, first) = events.next().await;
    assert_eq!(name, "review");
    assert_eq!(first["reviewId"], id.as_str());
    assert_eq!(first["commentsRevision"], 0);

    // A change to another document is not this listener's business.
    owner
        .comment_on(&other, "quick brown fox", "elsewhere")
        .await;
    owner.comment_on(&id, "quick brown fox", "here").await;
    let (name, change) = events.next().await;
    assert_eq!(name, "comments");
    assert_eq!(change["reviewId"], id.as_str());
    assert_eq!(change["commentsRevision"], 1);

    let form = reqwest::multipart::Form::new().part(
        "file",
        html_part(b"<h1>New</h1><p>The quick brown fox.</p>", "v2.html"),
    );
    let added = owner
        .multipart(&format!("/api/reviews/{id}/import-html"), form)
        .await;
    let latest = added.expect(201)["review"]["latestVersionId"].clone();
    let (name, change) = events.next().await;
    assert_eq!(name, "version");
    assert_eq!(change["latestVersionId"], latest);
    assert_eq!(change["commentsRevision"], 2);
    assert_eq!(change["structureRevision"], 2);

    server
        .agent()
        .post(&format!("/api/reviews/{id}/ai-review-runs"), &json!({}))
        .await
        .expect(201);
    let (name, change) = events.next().await;
    assert_eq!(name, "review");
    assert_eq!(change["commentsRevision"], 2);
}

#[tokio::test]
async fn events_follow_the_read_rules() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let outsider = server.user("outsider@example.com", "Outsider", &[], "comments");
    let created = owner
        .post(
            "/api/reviews",
            &json!({ "review": { "title": "Secret", "access": { "mode": "restricted" } } }),
        )
        .await;
    let id = created.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    let path = format!("/api/reviews/{id}/events");
    outsider.get(&path).await.expect_error(404, "not_found");
    server
        .client(None)
        .get(&path)
        .await
        .expect_error(401, "unauthorized");
    server
        .manager()
        .get(&path)
        .await
        .expect_error(403, "forbidden");
    owner
        .get("/api/reviews/rv_missing/events")
        .await
        .expect_error(404, "not_found");
}
