//! Each comment's `threadRevision` and the `baseThreadRevision` a write may carry: a write is
//! refused (409 `thread revision conflict`, nothing written) only when its own thread changed
//! since the client read it, whatever happened to the document's other threads.

use serde_json::{Value, json};

use crate::support::{Client, Server};

const HTML: &str = "<!doctype html><html><head><title>T</title></head><body>\
<h1 id=\"intro\">Intro</h1><p>The cat sat on the mat.</p>\
<h2 id=\"later\">Later</h2><p>Again the cat sat on the mat, twice.</p></body></html>";

struct Doc {
    _server: Server,
    ada: Client,
    id: String,
}

async fn setup() -> Doc {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access,comments");
    let review = ada.upload("Cats", HTML).await;
    Doc {
        id: review.review_id,
        ada,
        _server: server,
    }
}

impl Doc {
    fn path(&self, rest: &str) -> String {
        format!("/api/reviews/{}/{rest}", self.id)
    }

    /// A document-level comment; answers its id.
    async fn comment(&self, body: &str) -> String {
        let written = self
            .ada
            .post(&self.path("comments"), &json!({ "body": body }))
            .await;
        let comment = &written.expect(201)["comment"];
        assert_eq!(comment["threadRevision"], 1, "a new thread starts at 1");
        comment["id"].as_str().expect("id").to_string()
    }

    /// The comment as the document now shows it, and the document's `commentsRevision`.
    async fn read(&self, comment_id: &str) -> (Value, i64) {
        let review = self.ada.get(&format!("/api/reviews/{}", self.id)).await;
        let review = &review.expect(200)["review"];
        let comment = review["comments"]
            .as_array()
            .expect("comments")
            .iter()
            .find(|c| c["id"] == comment_id)
            .cloned()
            .expect("the comment is listed");
        let revision = review["commentsRevision"].as_i64().expect("revision");
        (comment, revision)
    }

    async fn thread_revision(&self, comment_id: &str) -> i64 {
        self.read(comment_id).await.0["threadRevision"]
            .as_i64()
            .expect("threadRevision")
    }
}

/// Asserts a thread conflict that names the thread's current revision.
#[track_caller]
fn assert_thread_conflict(reply: &crate::support::Reply, current: i64) {
    let body = reply.expect_error(409, "thread revision conflict");
    assert_eq!(body["currentThreadRevision"], current, "{body}");
}

#[tokio::test]
async fn a_thread_revision_rises_with_its_own_thread_only() {
    let doc = setup().await;
    let first = doc.comment("First").await;
    let second = doc.comment("Second").await;
    assert_eq!(
        doc.thread_revision(&first).await,
        1,
        "another thread's comment"
    );

    let replied = doc
        .ada
        .post(
            &doc.path(&format!("comments/{first}/thread")),
            &json!({ "body": "A reply", "baseThreadRevision": 1 }),
        )
        .await;
    assert_eq!(replied.expect(201)["comment"]["threadRevision"], 2);
    assert_eq!(doc.thread_revision(&first).await, 2);
    assert_eq!(doc.thread_revision(&second).await, 1, "untouched");

    // The document's revision moved, but not this thread: the write applies.
    let resolved = doc
        .ada
        .post(
            &doc.path(&format!("comments/{second}/status-events")),
            &json!({ "status": "closed", "baseThreadRevision": 1 }),
        )
        .await;
    let resolved = resolved.expect(201);
    assert_eq!(resolved["comment"]["status"], "closed");
    assert_eq!(resolved["comment"]["threadRevision"], 2);
}

#[tokio::test]
async fn every_write_to_a_changed_thread_is_refused_and_writes_nothing() {
    let doc = setup().await;
    let id = doc.comment("Thread").await;
    let reply = doc
        .ada
        .post(
            &doc.path(&format!("comments/{id}/thread")),
            &json!({ "body": "Mine" }),
        )
        .await;
    let message_id = reply.expect(201)["message"]["id"]
        .as_str()
        .expect("message id")
        .to_string();
    let (before, revision) = doc.read(&id).await;
    assert_eq!(before["threadRevision"], 2);

    let stale = 1;
    let attempts = [
        doc.ada
            .post(
                &doc.path(&format!("comments/{id}/thread")),
                &json!({ "body": "late", "baseThreadRevision": stale }),
            )
            .await,
        doc.ada
            .post(
                &doc.path(&format!("comments/{id}/status-events")),
                &json!({ "status": "closed", "baseThreadRevision": stale }),
            )
            .await,
        doc.ada
            .patch(
                &doc.path(&format!("comments/{id}")),
                &json!({ "body": "edited", "baseThreadRevision": stale }),
            )
            .await,
        doc.ada
            .patch(
                &doc.path(&format!("comments/{id}/thread/{message_id}")),
                &json!({ "body": "edited", "baseThreadRevision": stale }),
            )
            .await,
        doc.ada
            .patch(
                &doc.path(&format!("comments/{id}/anchor")),
                &json!({ "locator": { "sectionId": "later" }, "baseThreadRevision": stale }),
            )
            .await,
        doc.ada
            .delete(&doc.path(&format!(
                "comments/{id}/thread/{message_id}?baseThreadRevision={stale}"
            )))
            .await,
    ];
    for attempt in &attempts {
        assert_thread_conflict(attempt, 2);
    }
    let (after, revision_after) = doc.read(&id).await;
    assert_eq!(after, before, "nothing written");
    assert_eq!(revision_after, revision);

    // With the revision it now has, each goes through and raises it by one.
    let edited = doc
        .ada
        .patch(
            &doc.path(&format!("comments/{id}/thread/{message_id}")),
            &json!({ "body": "Mine, edited", "baseThreadRevision": 2 }),
        )
        .await;
    assert_eq!(edited.expect(200)["comment"]["threadRevision"], 3);
    let moved = doc
        .ada
        .patch(
            &doc.path(&format!("comments/{id}/anchor")),
            &json!({ "locator": { "sectionId": "later" }, "baseThreadRevision": 3 }),
        )
        .await;
    assert_eq!(moved.expect(200)["comment"]["threadRevision"], 4);
    doc.ada
        .delete(&doc.path(&format!(
            "comments/{id}/thread/{message_id}?baseThreadRevision=4"
        )))
        .await
        .expect(200);
    assert_eq!(doc.thread_revision(&id).await, 5);
}

#[tokio::test]
async fn of_two_writes_from_the_same_view_of_a_thread_one_wins() {
    let doc = setup().await;
    let id = doc.comment("Contested").await;
    let path = doc.path(&format!("comments/{id}/thread"));
    let write = |n: usize| {
        let (ada, path) = (doc.ada.clone(), path.clone());
        async move {
            ada.post(
                &path,
                &json!({ "body": format!("answer {n}"), "baseThreadRevision": 1 }),
            )
            .await
        }
    };
    let answers = futures::future::join_all((0..8).map(write)).await;
    let won = answers.iter().filter(|a| a.status == 201).count();
    assert_eq!(won, 1, "exactly one reply answers the thread as read");
    for lost in answers.iter().filter(|a| a.status != 201) {
        assert_thread_conflict(lost, 2);
    }
    let (comment, _) = doc.read(&id).await;
    assert_eq!(comment["thread"].as_array().expect("thread").len(), 1);
}

#[tokio::test]
async fn a_malformed_thread_revision_is_refused() {
    let doc = setup().await;
    let id = doc.comment("Thread").await;
    for bad in [json!("2"), json!(1.5), json!(true), json!([1])] {
        doc.ada
            .post(
                &doc.path(&format!("comments/{id}/thread")),
                &json!({ "body": "x", "baseThreadRevision": bad }),
            )
            .await
            .expect_error(400, "invalid_request");
    }
    doc.ada
        .delete(&doc.path(&format!("comments/{id}?baseThreadRevision=abc")))
        .await
        .expect_error(400, "invalid_request");
    let (comment, _) = doc.read(&id).await;
    assert_eq!(comment["threadRevision"], 1, "nothing written");
}
