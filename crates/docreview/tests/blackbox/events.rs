//! Live events (`GET /api/reviews/{id}/events`, Server-Sent Events): the current state first,
//! then one event per committed change of that document only.

use std::time::Duration;

use docreview_client::api::events::ReviewEvent;
use docreview_client::api::{AccessMode, ReviewInput, StartRun, VersionMode};
use docreview_client::{EventStream, HtmlFile, VersionUpload};

use crate::support::access;
use crate::support::{self, Client, SAMPLE_HTML, Server};

/// An open event stream, read event by event twice over: raw (the frames' `event:` names and
/// the content type are the point) and through the typed client's stream, which must read the
/// same events.
struct Events {
    response: reqwest::Response,
    buffer: String,
    typed: EventStream,
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
        let typed = client
            .api()
            .events(review_id)
            .await
            .expect("open the typed event stream");
        Events {
            response,
            buffer: String::new(),
            typed,
        }
    }

    /// The next event as `(name, event)`, skipping keep-alive comments; fails after 5 s. The
    /// typed stream's next event is the same, with its `kind` the frame's name.
    async fn next(&mut self) -> (String, ReviewEvent) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        let (name, data) = loop {
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
                    let data: serde_json::Value =
                        serde_json::from_str(&data).expect("event data is JSON");
                    break (name, data);
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
        };
        let typed = tokio::time::timeout_at(deadline, self.typed.next())
            .await
            .expect("a typed event within 5 s")
            .expect("the typed stream stays open")
            .expect("a typed event");
        assert_eq!(typed.kind.as_str(), name, "{data}");
        assert_eq!(
            serde_json::to_value(&typed).expect("event as JSON"),
            data,
            "the typed event reads every field"
        );
        (name, typed)
    }
}

#[tokio::test]
async fn a_listener_hears_the_current_state_then_each_change() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let reader = server.user("reader@example.com", "Reader", &[], "comments");
    let id = owner.upload("Live", SAMPLE_HTML).await.review_id;
    let other = owner.upload("Other", SAMPLE_HTML).await.review_id;
    let mut events = Events::open(&reader, &id).await;

    let (name, first) = events.next().await;
    assert_eq!(name, "review");
    assert_eq!(first.review_id, id);
    assert_eq!(first.comments_revision, 0);

    // A change to another document is not this listener's business.
    owner.note_on(&other, "quick brown fox", "elsewhere").await;
    owner.note_on(&id, "quick brown fox", "here").await;
    let (name, change) = events.next().await;
    assert_eq!(name, "comments");
    assert_eq!(change.review_id, id);
    assert_eq!(change.comments_revision, 1);

    let file = HtmlFile {
        name: "v2.html".into(),
        bytes: b"<h1>New</h1><p>The quick brown fox.</p>".to_vec(),
    };
    let upload = VersionUpload {
        mode: VersionMode::AddVersion,
        label: None,
        base_version_id: None,
    };
    let added = owner
        .api()
        .import_version(&id, &file, &upload)
        .await
        .expect("a new version");
    let (name, change) = events.next().await;
    assert_eq!(name, "version");
    assert_eq!(change.latest_version_id, added.latest_version_id);
    assert_eq!(change.comments_revision, 2);
    assert_eq!(change.structure_revision, 2);

    server
        .agent()
        .api()
        .start_run(&id, &StartRun::default())
        .await
        .expect("a run");
    let (name, change) = events.next().await;
    assert_eq!(name, "review");
    assert_eq!(change.comments_revision, 2);
}

#[tokio::test]
async fn events_follow_the_read_rules() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let outsider = server.user("outsider@example.com", "Outsider", &[], "comments");
    let secret = ReviewInput {
        title: Some("Secret".into()),
        access: Some(access(AccessMode::Restricted)),
        ..ReviewInput::default()
    };
    let id = owner.create(secret).await.review_id;
    // The stream is not `Debug`; only the refusal matters here.
    let open =
        async |client: &Client, review_id: &str| client.api().events(review_id).await.map(drop);
    support::refused(open(&outsider, &id).await, 404, "not_found");
    support::refused(open(&server.client(None), &id).await, 401, "unauthorized");
    support::refused(open(&server.manager(), &id).await, 403, "forbidden");
    support::refused(open(&owner, "rv_missing").await, 404, "not_found");
}
