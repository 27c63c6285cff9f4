//! Agent runs over HTTP: starting a run, writing comments and replies inside it (provisional for
//! every reader while it runs), finishing it (completed makes items final, failed/cancelled deletes
//! them), the run's state machine, version staleness and who may do what (DESIGN.md §2, §4.4;
//! docs/api.md "Runs").

use serde_json::{Value, json};

use crate::support::{Client, Reply, Server, html_part};

const HTML: &str = "<!doctype html><html><body>\
<h1 id=\"intro\">Intro</h1><p>The cat sat on the mat.</p>\
<h2 id=\"later\">Later</h2><p>Again the dog lay on the rug.</p></body></html>";

/// A server with one link-mode document owned by Ada (scopes docs, comments).
struct Doc {
    server: Server,
    owner: Client,
    agent: Client,
    id: String,
    version: String,
}

async fn setup() -> Doc {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = owner.create_review("Pets", HTML).await;
    Doc {
        id: review["reviewId"].as_str().expect("reviewId").to_string(),
        version: review["latestVersionId"]
            .as_str()
            .expect("latestVersionId")
            .to_string(),
        agent: server.agent(),
        owner,
        server,
    }
}

impl Doc {
    fn runs(&self) -> String {
        format!("/api/reviews/{}/ai-review-runs", self.id)
    }

    fn run(&self, run_id: &str) -> String {
        format!("/api/reviews/{}/ai-review-runs/{run_id}", self.id)
    }

    fn comment(&self, comment_id: &str) -> String {
        format!("/api/reviews/{}/comments/{comment_id}", self.id)
    }

    /// An internal member: a viewer on this link-mode document.
    fn viewer(&self, email: &str) -> Client {
        self.server.user(email, "Viewer", &[], "comments")
    }

    /// Starts a run and returns the Run.
    async fn start(&self, client: &Client) -> Value {
        let reply = client.post(&self.runs(), &json!({})).await;
        reply.expect(201)["run"].clone()
    }

    async fn run_comment(&self, client: &Client, run_id: &str, body: Value) -> Reply {
        client
            .post(&format!("{}/comments", self.run(run_id)), &body)
            .await
    }

    /// Writes a run comment quoting `exact`; returns the comment.
    async fn run_note(&self, client: &Client, run_id: &str, exact: &str) -> Value {
        let body =
            json!({ "body": format!("about {exact}"), "locator": { "quote": { "exact": exact } } });
        let reply = self.run_comment(client, run_id, body).await;
        reply.expect(201)["comment"].clone()
    }

    async fn finish(&self, client: &Client, run_id: &str, status: &str) -> Reply {
        client
            .patch(&self.run(run_id), &json!({ "status": status }))
            .await
    }

    async fn review(&self, client: &Client) -> Value {
        let reply = client.get(&format!("/api/reviews/{}", self.id)).await;
        reply.expect(200)["review"].clone()
    }

    async fn review_with_deleted(&self, client: &Client) -> Value {
        let reply = client
            .get(&format!("/api/reviews/{}?includeDeleted=true", self.id))
            .await;
        reply.expect(200)["review"].clone()
    }

    async fn add_version(&self, html: &str) -> String {
        let form =
            reqwest::multipart::Form::new().part("file", html_part(html.as_bytes(), "v2.html"));
        let reply = self
            .owner
            .multipart(&format!("/api/reviews/{}/import-html", self.id), form)
            .await;
        reply.expect(201)["review"]["latestVersionId"]
            .as_str()
            .expect("latestVersionId")
            .to_string()
    }
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}

fn find<'a>(review: &'a Value, comment_id: &str) -> Option<&'a Value> {
    review["comments"]
        .as_array()
        .expect("comments array")
        .iter()
        .find(|c| c["id"] == comment_id)
}

fn run_in<'a>(review: &'a Value, run_id: &str) -> &'a Value {
    review["aiReviewRuns"]
        .as_array()
        .expect("aiReviewRuns array")
        .iter()
        .find(|r| r["id"] == run_id)
        .expect("run listed in aiReviewRuns")
}

// ---------------------------------------------------------------------------------------------
// Starting a run
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn starting_a_run_defaults_to_a_running_ai_review_on_the_latest_version() {
    let doc = setup().await;
    let reply = doc.agent.post(&doc.runs(), &json!({})).await;
    let run = reply.expect(201)["run"].clone();
    assert!(run["id"].as_str().expect("id").starts_with("run_"));
    assert_eq!(run["status"], "running");
    assert_eq!(run["kind"], "ai_review");
    assert_eq!(run["title"], "AI review");
    assert_eq!(run["versionId"], doc.version.as_str());
    assert_eq!(run["commentIds"], json!([]));
    assert!(run["createdTs"].is_string());
    assert!(run.get("completedTs").is_none());
    assert!(run.get("summary").is_none(), "summary omitted: {run}");
    assert_eq!(run["id"].as_str().map(str::len), Some(4 + 26));

    let review = doc.review(&doc.owner).await;
    let listed = run_in(&review, &id_of(&run));
    assert_eq!(listed["status"], "running");
    assert_eq!(listed["versionId"], doc.version.as_str());
    // Starting a run is not a comment change.
    assert_eq!(review["commentsRevision"], 0);
}

#[tokio::test]
async fn starting_a_run_accepts_kind_title_and_the_latest_version_id() {
    let doc = setup().await;
    let reply = doc
        .agent
        .post(
            &doc.runs(),
            &json!({ "kind": "voice", "title": "Dictation", "versionId": doc.version }),
        )
        .await;
    let run = &reply.expect(201)["run"];
    assert_eq!(run["kind"], "voice");
    assert_eq!(run["title"], "Dictation");
    assert_eq!(run["versionId"], doc.version.as_str());
    let explicit = doc
        .agent
        .post(&doc.runs(), &json!({ "kind": "ai_review" }))
        .await;
    assert_eq!(explicit.expect(201)["run"]["kind"], "ai_review");
}

#[tokio::test]
async fn starting_a_run_with_an_unknown_kind_is_rejected() {
    let doc = setup().await;
    for kind in [json!("human"), json!("AI_REVIEW"), json!(1)] {
        doc.agent
            .post(&doc.runs(), &json!({ "kind": kind }))
            .await
            .expect_error(400, "invalid_request");
    }
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["aiReviewRuns"], json!([]));
}

#[tokio::test]
async fn starting_a_run_on_an_older_version_is_stale_target_version() {
    let doc = setup().await;
    let v2 = doc.add_version(&HTML.replace("rug", "sofa")).await;
    let reply = doc
        .agent
        .post(&doc.runs(), &json!({ "versionId": doc.version }))
        .await;
    assert_eq!(
        reply.expect_error(409, "stale_target_version")["latestVersionId"],
        v2.as_str()
    );
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["aiReviewRuns"], json!([]));
    // Without a versionId the run targets the latest version.
    let run = doc.start(&doc.agent).await;
    assert_eq!(run["versionId"], v2.as_str());
}

#[tokio::test]
async fn starting_a_run_on_a_version_of_no_such_document_is_rejected() {
    let doc = setup().await;
    doc.agent
        .post(
            &doc.runs(),
            &json!({ "versionId": "ver_00000000000000000000000000" }),
        )
        .await
        .expect_error(400, "invalid_request");
    assert_eq!(doc.review(&doc.owner).await["aiReviewRuns"], json!([]));
}

#[tokio::test]
async fn starting_a_run_on_an_unknown_document_is_404() {
    let doc = setup().await;
    doc.agent
        .post("/api/reviews/rv_nosuchdocument/ai-review-runs", &json!({}))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn starting_a_run_without_credentials_is_401() {
    let doc = setup().await;
    doc.server
        .client(None)
        .post(&doc.runs(), &json!({}))
        .await
        .expect_error(401, "unauthorized");
}

// ---------------------------------------------------------------------------------------------
// Comments inside a running run
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn run_comment_is_provisional_for_every_reader_while_the_run_runs() {
    let doc = setup().await;
    let run = doc.start(&doc.agent).await;
    let run_id = id_of(&run);
    let reply = doc
        .run_comment(
            &doc.agent,
            &run_id,
            json!({ "body": "Consider rewording", "category": "revise",
                    "locator": { "quote": { "exact": "cat sat" } } }),
        )
        .await;
    let written = reply.expect(201).clone();
    assert_eq!(written["commentsRevision"], 1);
    let comment = &written["comment"];
    let cid = id_of(comment);
    assert_eq!(comment["provisional"], true);
    assert_eq!(comment["runId"], run_id.as_str());
    assert_eq!(comment["category"], "revise");
    assert_eq!(comment["author"]["provider"], "service");
    assert_eq!(comment["anchor"]["sectionId"], "intro");

    let vic = doc.viewer("vic@example.com");
    for reader in [&doc.owner, &vic, &doc.agent] {
        let review = doc.review(reader).await;
        let seen = find(&review, &cid).expect("run comment visible");
        assert_eq!(seen["provisional"], true);
        assert_eq!(seen["runId"], run_id.as_str());
        assert_eq!(run_in(&review, &run_id)["commentIds"], json!([cid]));
    }
}

#[tokio::test]
async fn completing_a_run_makes_its_comments_final_in_one_comment_change() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let first = id_of(&doc.run_note(&doc.agent, &run_id, "cat sat").await);
    let second = id_of(&doc.run_note(&doc.agent, &run_id, "dog lay").await);
    assert_eq!(doc.review(&doc.owner).await["commentsRevision"], 2);

    let reply = doc
        .agent
        .patch(
            &doc.run(&run_id),
            &json!({ "status": "completed", "summary": "Two remarks." }),
        )
        .await;
    let run = reply.expect(200)["run"].clone();
    assert_eq!(run["status"], "completed");
    assert_eq!(run["summary"], "Two remarks.");
    assert!(run["completedTs"].is_string());
    assert_eq!(run["commentIds"], json!([first, second]));

    let vic = doc.viewer("vic@example.com");
    for reader in [&doc.owner, &vic, &doc.agent] {
        let review = doc.review(reader).await;
        assert_eq!(review["commentsRevision"], 3);
        for cid in [&first, &second] {
            let seen = find(&review, cid).expect("final comment");
            assert_eq!(seen["provisional"], false);
            assert!(seen.get("deletedTs").is_none());
        }
        let listed = run_in(&review, &run_id);
        assert_eq!(listed["status"], "completed");
        assert_eq!(listed["commentIds"], json!([first, second]));
    }
}

async fn abandoned_run_deletes_its_comments(status: &str) {
    let doc = setup().await;
    let human = doc.owner.comment_on(&doc.id, "dog lay", "human note").await;
    let human_id = id_of(&human["comment"]);
    let run_id = id_of(&doc.start(&doc.agent).await);
    let cid = id_of(&doc.run_note(&doc.agent, &run_id, "cat sat").await);
    assert_eq!(doc.review(&doc.owner).await["commentsRevision"], 2);

    let reply = doc.finish(&doc.agent, &run_id, status).await;
    let run = reply.expect(200)["run"].clone();
    assert_eq!(run["status"], status);
    assert_eq!(run["commentIds"], json!([]));
    assert!(run["completedTs"].is_string());

    let review = doc.review(&doc.owner).await;
    assert_eq!(review["commentsRevision"], 3);
    assert!(find(&review, &cid).is_none(), "run comment is gone");
    assert!(find(&review, &human_id).is_some(), "human comment stays");
    let listed = run_in(&review, &run_id);
    assert_eq!(listed["status"], status);
    assert_eq!(listed["commentIds"], json!([]));

    let with_deleted = doc.review_with_deleted(&doc.owner).await;
    let deleted = find(&with_deleted, &cid).expect("kept with deletedTs");
    assert!(deleted["deletedTs"].is_string(), "deletedTs: {deleted}");
    assert_eq!(deleted["provisional"], false);
    assert!(find(&with_deleted, &human_id).expect("human")["deletedTs"].is_null());

    // Deleted run comments are 404 to every later write.
    doc.owner
        .post(
            &format!("{}/thread", doc.comment(&cid)),
            &json!({ "body": "late reply" }),
        )
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn failing_a_run_deletes_its_comments() {
    abandoned_run_deletes_its_comments("failed").await;
}

#[tokio::test]
async fn cancelling_a_run_deletes_its_comments() {
    abandoned_run_deletes_its_comments("cancelled").await;
}

#[tokio::test]
async fn finishing_a_run_twice_is_invalid_transition() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let cid = id_of(&doc.run_note(&doc.agent, &run_id, "cat sat").await);
    doc.finish(&doc.agent, &run_id, "completed")
        .await
        .expect(200);
    for status in ["completed", "failed", "cancelled"] {
        doc.finish(&doc.agent, &run_id, status)
            .await
            .expect_error(409, "invalid_transition");
    }
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["commentsRevision"], 2);
    assert_eq!(run_in(&review, &run_id)["status"], "completed");
    assert!(
        find(&review, &cid).is_some(),
        "a late cancel deletes nothing"
    );
}

#[tokio::test]
async fn finishing_with_status_running_is_rejected() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    doc.finish(&doc.agent, &run_id, "running")
        .await
        .expect_error(400, "invalid_request");
    for status in [json!("done"), json!(null)] {
        doc.agent
            .patch(&doc.run(&run_id), &json!({ "status": status }))
            .await
            .expect_error(400, "invalid_request");
    }
    let review = doc.review(&doc.owner).await;
    assert_eq!(run_in(&review, &run_id)["status"], "running");
    assert_eq!(review["commentsRevision"], 0);
}

#[tokio::test]
async fn finishing_an_unknown_run_is_404() {
    let doc = setup().await;
    doc.finish(&doc.agent, "run_nosuchrun", "completed")
        .await
        .expect_error(404, "not_found");
    // A run of another document is unknown here.
    let other = doc.owner.create_review("Other", HTML).await;
    let other_id = other["reviewId"].as_str().expect("id");
    let foreign = doc
        .agent
        .post(
            &format!("/api/reviews/{other_id}/ai-review-runs"),
            &json!({}),
        )
        .await;
    let foreign_run = id_of(&foreign.expect(201)["run"]);
    doc.finish(&doc.agent, &foreign_run, "completed")
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn comment_into_an_unknown_run_is_404() {
    let doc = setup().await;
    doc.run_comment(&doc.agent, "run_nosuchrun", json!({ "body": "b" }))
        .await
        .expect_error(404, "not_found");
    assert_eq!(doc.review(&doc.owner).await["commentsRevision"], 0);
}

#[tokio::test]
async fn comment_into_a_run_of_another_document_is_404() {
    let doc = setup().await;
    let other = doc.owner.create_review("Other", HTML).await;
    let other_id = other["reviewId"].as_str().expect("id");
    let foreign = doc
        .agent
        .post(
            &format!("/api/reviews/{other_id}/ai-review-runs"),
            &json!({}),
        )
        .await;
    let foreign_run = id_of(&foreign.expect(201)["run"]);
    doc.run_comment(&doc.agent, &foreign_run, json!({ "body": "b" }))
        .await
        .expect_error(404, "not_found");
    assert_eq!(doc.review(&doc.owner).await["commentsRevision"], 0);
}

#[tokio::test]
async fn comment_into_a_finished_run_is_invalid_transition() {
    let doc = setup().await;
    for status in ["completed", "failed", "cancelled"] {
        let run_id = id_of(&doc.start(&doc.agent).await);
        doc.finish(&doc.agent, &run_id, status).await.expect(200);
        let before = doc.review(&doc.owner).await["commentsRevision"].clone();
        doc.run_comment(&doc.agent, &run_id, json!({ "body": "too late" }))
            .await
            .expect_error(409, "invalid_transition");
        let review = doc.review(&doc.owner).await;
        assert_eq!(review["commentsRevision"], before, "after {status}");
        assert_eq!(review["comments"], json!([]));
    }
}

#[tokio::test]
async fn run_comment_after_a_new_version_is_stale_target_version() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let v2 = doc.add_version(&HTML.replace("rug", "sofa")).await;
    let before = doc.review(&doc.owner).await["commentsRevision"].clone();
    let reply = doc
        .run_comment(
            &doc.agent,
            &run_id,
            json!({ "body": "b", "locator": { "quote": { "exact": "cat sat" } } }),
        )
        .await;
    assert_eq!(
        reply.expect_error(409, "stale_target_version")["latestVersionId"],
        v2.as_str()
    );
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["commentsRevision"], before);
    assert_eq!(review["comments"], json!([]));
}

#[tokio::test]
async fn reply_into_a_run_after_a_new_version_is_stale_target_version() {
    let doc = setup().await;
    let human = doc.owner.comment_on(&doc.id, "cat sat", "Why?").await;
    let cid = id_of(&human["comment"]);
    let run_id = id_of(&doc.start(&doc.agent).await);
    let v2 = doc.add_version(&HTML.replace("rug", "sofa")).await;
    let before = doc.review(&doc.owner).await["commentsRevision"].clone();
    let reply = doc
        .agent
        .post(
            &format!("{}/thread", doc.comment(&cid)),
            &json!({ "body": "late", "runId": run_id }),
        )
        .await;
    assert_eq!(
        reply.expect_error(409, "stale_target_version")["latestVersionId"],
        v2.as_str()
    );
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["commentsRevision"], before);
    assert_eq!(find(&review, &cid).expect("comment")["thread"], json!([]));
}

#[tokio::test]
async fn run_comment_validates_body_and_locator() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    for body in [
        json!({ "body": "" }),
        json!({ "body": "x".repeat(20_001) }),
        json!({ "body": "b", "category": "praise" }),
        json!({ "body": "b", "locator": { "quote": { "exact": "unicorn" } } }),
        json!({ "body": "b", "locator": { "sectionId": "nowhere" } }),
        json!({ "body": "b", "locator": { "position": { "start": 4, "end": 2 } } }),
    ] {
        doc.run_comment(&doc.agent, &run_id, body)
            .await
            .expect_error(400, "invalid_request");
    }
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["commentsRevision"], 0);
    assert_eq!(run_in(&review, &run_id)["commentIds"], json!([]));
}

#[tokio::test]
async fn run_comment_with_a_stale_base_revision_conflicts() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    doc.run_note(&doc.agent, &run_id, "cat sat").await;
    let reply = doc
        .run_comment(
            &doc.agent,
            &run_id,
            json!({ "body": "b", "baseCommentsRevision": 0 }),
        )
        .await;
    assert_eq!(
        reply.expect_error(409, "comments revision conflict")["currentRevision"],
        1
    );
    let ok = doc
        .run_comment(
            &doc.agent,
            &run_id,
            json!({ "body": "b", "baseCommentsRevision": 1 }),
        )
        .await;
    assert_eq!(ok.expect(201)["commentsRevision"], 2);
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["commentsRevision"], 2);
    assert_eq!(
        run_in(&review, &run_id)["commentIds"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

// ---------------------------------------------------------------------------------------------
// Replies written inside a run
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn reply_with_run_id_is_provisional_and_deleted_when_the_run_is_cancelled() {
    let doc = setup().await;
    let human = doc.owner.comment_on(&doc.id, "cat sat", "Why?").await;
    let cid = id_of(&human["comment"]);
    let run_id = id_of(&doc.start(&doc.agent).await);
    let reply = doc
        .agent
        .post(
            &format!("{}/thread", doc.comment(&cid)),
            &json!({ "body": "Because.", "runId": run_id }),
        )
        .await;
    let written = reply.expect(201).clone();
    let mid = id_of(&written["message"]);
    assert_eq!(written["message"]["provisional"], true);
    assert_eq!(written["message"]["runId"], run_id.as_str());
    let vic = doc.viewer("vic@example.com");
    let seen = doc.review(&vic).await;
    let message = &find(&seen, &cid).expect("comment")["thread"][0];
    assert_eq!(message["id"], mid.as_str());
    assert_eq!(message["provisional"], true);

    doc.finish(&doc.agent, &run_id, "cancelled")
        .await
        .expect(200);
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["commentsRevision"], 3);
    let comment = find(&review, &cid).expect("the human comment stays");
    assert_eq!(comment["thread"], json!([]));
    let with_deleted = doc.review_with_deleted(&doc.owner).await;
    let message = &find(&with_deleted, &cid).expect("comment")["thread"][0];
    assert_eq!(message["id"], mid.as_str());
    assert!(message["deletedTs"].is_string(), "deletedTs: {message}");
}

#[tokio::test]
async fn reply_with_run_id_becomes_final_when_the_run_completes() {
    let doc = setup().await;
    let human = doc.owner.comment_on(&doc.id, "cat sat", "Why?").await;
    let cid = id_of(&human["comment"]);
    let run_id = id_of(&doc.start(&doc.agent).await);
    let reply = doc
        .agent
        .post(
            &format!("{}/thread", doc.comment(&cid)),
            &json!({ "body": "Because.", "runId": run_id }),
        )
        .await;
    let mid = id_of(&reply.expect(201)["message"]);
    doc.finish(&doc.agent, &run_id, "completed")
        .await
        .expect(200);
    let review = doc.review(&doc.owner).await;
    let message = &find(&review, &cid).expect("comment")["thread"][0];
    assert_eq!(message["id"], mid.as_str());
    assert_eq!(message["provisional"], false);
    assert!(message.get("deletedTs").is_none());
}

#[tokio::test]
async fn reply_into_a_finished_or_unknown_run_is_refused() {
    let doc = setup().await;
    let human = doc.owner.comment_on(&doc.id, "cat sat", "Why?").await;
    let cid = id_of(&human["comment"]);
    let thread = format!("{}/thread", doc.comment(&cid));
    let run_id = id_of(&doc.start(&doc.agent).await);
    doc.finish(&doc.agent, &run_id, "completed")
        .await
        .expect(200);
    doc.agent
        .post(&thread, &json!({ "body": "late", "runId": run_id }))
        .await
        .expect_error(409, "invalid_transition");
    doc.agent
        .post(
            &thread,
            &json!({ "body": "lost", "runId": "run_nosuchrun" }),
        )
        .await
        .expect_error(404, "not_found");
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["commentsRevision"], 2);
    assert_eq!(find(&review, &cid).expect("comment")["thread"], json!([]));
}

// ---------------------------------------------------------------------------------------------
// Cancelling single run items
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn run_comment_can_be_cancelled_while_its_run_runs() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let cid = id_of(&doc.run_note(&doc.agent, &run_id, "cat sat").await);
    let cancelled = doc.agent.delete(&doc.comment(&cid)).await;
    assert_eq!(cancelled.expect(200), &json!({ "commentsRevision": 2 }));
    let review = doc.review(&doc.owner).await;
    assert!(find(&review, &cid).is_none());
    assert_eq!(run_in(&review, &run_id)["commentIds"], json!([]));
}

#[tokio::test]
async fn run_comment_cannot_be_cancelled_after_its_run_completed() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let cid = id_of(&doc.run_note(&doc.agent, &run_id, "cat sat").await);
    doc.finish(&doc.agent, &run_id, "completed")
        .await
        .expect(200);
    doc.agent
        .delete(&doc.comment(&cid))
        .await
        .expect_error(403, "forbidden");
    let review = doc.review(&doc.owner).await;
    assert!(find(&review, &cid).is_some());
    assert_eq!(review["commentsRevision"], 2);
}

#[tokio::test]
async fn viewer_cannot_cancel_another_callers_run_comment() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let cid = id_of(&doc.run_note(&doc.agent, &run_id, "cat sat").await);
    let vic = doc.viewer("vic@example.com");
    vic.delete(&doc.comment(&cid))
        .await
        .expect_error(403, "forbidden");
    assert!(find(&doc.review(&doc.owner).await, &cid).is_some());
}

// ---------------------------------------------------------------------------------------------
// Schemes, scopes and roles
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn import_token_cannot_operate_runs() {
    let doc = setup().await;
    let importer = doc.server.importer();
    importer
        .post(&doc.runs(), &json!({}))
        .await
        .expect_error(403, "forbidden");
    let run_id = id_of(&doc.start(&doc.agent).await);
    doc.run_comment(&importer, &run_id, json!({ "body": "b" }))
        .await
        .expect_error(403, "forbidden");
    doc.finish(&importer, &run_id, "completed")
        .await
        .expect_error(403, "forbidden");
    let review = doc.review(&doc.owner).await;
    assert_eq!(
        review["aiReviewRuns"].as_array().map(Vec::len),
        Some(1),
        "only the agent's run exists"
    );
    assert_eq!(run_in(&review, &run_id)["status"], "running");
    assert_eq!(review["comments"], json!([]));
}

#[tokio::test]
async fn manage_token_cannot_operate_runs() {
    let doc = setup().await;
    let manager = doc.server.manager();
    manager
        .post(&doc.runs(), &json!({}))
        .await
        .expect_error(403, "forbidden");
    let run_id = id_of(&doc.start(&doc.agent).await);
    doc.finish(&manager, &run_id, "cancelled")
        .await
        .expect_error(403, "forbidden");
    assert_eq!(
        run_in(&doc.review(&doc.owner).await, &run_id)["status"],
        "running"
    );
}

#[tokio::test]
async fn personal_token_with_comments_scope_operates_a_run() {
    let doc = setup().await;
    let vic = doc.viewer("vic@example.com");
    let run = doc.start(&vic).await;
    let run_id = id_of(&run);
    assert_eq!(run["status"], "running");
    let comment = doc.run_note(&vic, &run_id, "dog lay").await;
    assert_eq!(comment["author"]["displayName"], "Viewer");
    assert_eq!(comment["author"]["provider"], "local");
    assert_eq!(comment["provisional"], true);
    // The starter may finish their own run even as a viewer.
    let finished = doc.finish(&vic, &run_id, "completed").await;
    assert_eq!(finished.expect(200)["run"]["status"], "completed");
    let review = doc.review(&doc.owner).await;
    assert_eq!(
        find(&review, &id_of(&comment)).expect("final")["provisional"],
        false
    );
}

#[tokio::test]
async fn personal_token_without_comments_scope_is_insufficient_scope() {
    let doc = setup().await;
    let docs_only = doc.server.user("dora@example.com", "Dora", &[], "docs");
    docs_only
        .post(&doc.runs(), &json!({}))
        .await
        .expect_error(403, "insufficient_scope");
    let run_id = id_of(&doc.start(&doc.agent).await);
    doc.run_comment(&docs_only, &run_id, json!({ "body": "b" }))
        .await
        .expect_error(403, "insufficient_scope");
    doc.finish(&docs_only, &run_id, "completed")
        .await
        .expect_error(403, "insufficient_scope");
    let human = doc.owner.comment_on(&doc.id, "cat sat", "Why?").await;
    docs_only
        .post(
            &format!("{}/thread", doc.comment(&id_of(&human["comment"]))),
            &json!({ "body": "b", "runId": run_id }),
        )
        .await
        .expect_error(403, "insufficient_scope");
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["aiReviewRuns"].as_array().map(Vec::len), Some(1));
    assert_eq!(run_in(&review, &run_id)["status"], "running");
    assert_eq!(review["commentsRevision"], 1);
}

#[tokio::test]
async fn viewer_cannot_finish_another_callers_run() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let cid = id_of(&doc.run_note(&doc.agent, &run_id, "cat sat").await);
    let vic = doc.viewer("vic@example.com");
    for status in ["completed", "cancelled"] {
        doc.finish(&vic, &run_id, status)
            .await
            .expect_error(403, "forbidden");
    }
    let review = doc.review(&doc.owner).await;
    assert_eq!(run_in(&review, &run_id)["status"], "running");
    assert_eq!(
        find(&review, &cid).expect("still there")["provisional"],
        true
    );
    assert_eq!(review["commentsRevision"], 1);
}

#[tokio::test]
async fn document_owner_may_finish_the_agents_run() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let cid = id_of(&doc.run_note(&doc.agent, &run_id, "cat sat").await);
    let finished = doc.finish(&doc.owner, &run_id, "failed").await;
    assert_eq!(finished.expect(200)["run"]["status"], "failed");
    assert!(find(&doc.review(&doc.owner).await, &cid).is_none());
}

#[tokio::test]
async fn outsider_cannot_reach_runs_on_a_restricted_document() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let created = owner
        .post(
            "/api/reviews",
            &json!({ "review": { "title": "Secret", "source": { "html": HTML },
                                 "access": { "mode": "restricted" } } }),
        )
        .await;
    let id = created.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    let runs = format!("/api/reviews/{id}/ai-review-runs");
    let run_id = id_of(&server.agent().post(&runs, &json!({})).await.expect(201)["run"]);
    let outsider = server.user("out@example.com", "Out", &[], "comments");
    outsider
        .post(&runs, &json!({}))
        .await
        .expect_error(404, "not_found");
    outsider
        .post(
            &format!("{runs}/{run_id}/comments"),
            &json!({ "body": "b" }),
        )
        .await
        .expect_error(404, "not_found");
    outsider
        .patch(
            &format!("{runs}/{run_id}"),
            &json!({ "status": "cancelled" }),
        )
        .await
        .expect_error(404, "not_found");
    let review = owner.get(&format!("/api/reviews/{id}")).await;
    let review = review.expect(200)["review"].clone();
    assert_eq!(run_in(&review, &run_id)["status"], "running");
    assert_eq!(review["aiReviewRuns"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn run_starter_may_cancel_another_callers_item_in_their_run() {
    let doc = setup().await;
    let vic = doc.viewer("vic@example.com");
    let run_id = id_of(&doc.start(&vic).await);
    let cid = id_of(&doc.run_note(&doc.agent, &run_id, "cat sat").await);
    let cancelled = vic.delete(&doc.comment(&cid)).await;
    assert_eq!(cancelled.expect(200)["commentsRevision"], 2);
    assert!(find(&doc.review(&doc.owner).await, &cid).is_none());
}

// ---------------------------------------------------------------------------------------------
// Concurrency
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_finishes_of_one_run_let_exactly_one_win() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    doc.run_note(&doc.agent, &run_id, "cat sat").await;
    let statuses = ["completed", "failed", "cancelled", "completed"];
    let attempts = (0..12).map(|i| doc.finish(&doc.agent, &run_id, statuses[i % 4]));
    let replies = futures::future::join_all(attempts).await;
    let mut winners = Vec::new();
    for reply in &replies {
        match reply.status {
            200 => winners.push(reply.json["run"]["status"].clone()),
            _ => {
                reply.expect_error(409, "invalid_transition");
            }
        }
    }
    assert_eq!(winners.len(), 1, "exactly one finish wins");
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["commentsRevision"], 2, "one comment change");
    assert_eq!(run_in(&review, &run_id)["status"], winners[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn run_comments_racing_a_cancel_leave_no_live_item_behind() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let writes = (0..16).map(|i| {
        doc.run_comment(
            &doc.agent,
            &run_id,
            json!({ "body": format!("remark {i}") }),
        )
    });
    let (written, cancelled) = tokio::join!(
        futures::future::join_all(writes),
        doc.finish(&doc.agent, &run_id, "cancelled")
    );
    cancelled.expect(200);
    let mut acknowledged = 0;
    for reply in &written {
        match reply.status {
            201 => acknowledged += 1,
            _ => {
                reply.expect_error(409, "invalid_transition");
            }
        }
    }
    let review = doc.review(&doc.owner).await;
    assert_eq!(
        review["comments"],
        json!([]),
        "no run comment outlives the cancel"
    );
    assert_eq!(run_in(&review, &run_id)["commentIds"], json!([]));
    assert_eq!(review["commentsRevision"], acknowledged + 1);
    let with_deleted = doc.review_with_deleted(&doc.owner).await;
    let deleted = with_deleted["comments"].as_array().expect("comments");
    assert_eq!(deleted.len(), acknowledged);
    assert!(deleted.iter().all(|c| c["deletedTs"].is_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_run_comments_without_a_base_revision_never_conflict() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let path = format!("{}/comments", doc.run(&run_id));
    let writers: Vec<_> = (0..24)
        .map(|i| {
            let agent = doc.agent.clone();
            let path = path.clone();
            tokio::spawn(async move {
                agent
                    .post(&path, &json!({ "body": format!("note {i}") }))
                    .await
            })
        })
        .collect();
    let mut revisions = Vec::new();
    for writer in writers {
        let reply = writer.await.expect("writer");
        revisions.push(
            reply.expect(201)["commentsRevision"]
                .as_i64()
                .expect("revision"),
        );
    }
    revisions.sort_unstable();
    revisions.dedup();
    assert_eq!(revisions.len(), 24, "one revision each, no conflicts");

    // Once the run is finished, a late comment in it is refused, not written.
    doc.finish(&doc.agent, &run_id, "completed")
        .await
        .expect(200);
    doc.run_comment(&doc.agent, &run_id, json!({ "body": "late" }))
        .await
        .expect_error(409, "invalid_transition");
    let review = doc.owner.get(&format!("/api/reviews/{}", doc.id)).await;
    assert_eq!(
        review.expect(200)["review"]["comments"]
            .as_array()
            .map(Vec::len),
        Some(24)
    );
}

// ---------------------------------------------------------------------------------------------
// Batches of run comments
// ---------------------------------------------------------------------------------------------

impl Doc {
    async fn batch(&self, client: &Client, run_id: &str, body: Value) -> Reply {
        client
            .post(&format!("{}/comments/batch", self.run(run_id)), &body)
            .await
    }
}

fn quoting(exact: &str) -> Value {
    json!({ "body": format!("about {exact}"), "locator": { "quote": { "exact": exact } } })
}

#[tokio::test]
async fn a_batch_is_written_in_one_comment_change_in_the_order_sent() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let mut items: Vec<Value> = ["cat sat", "the mat", "dog lay", "the rug"]
        .iter()
        .map(|exact| quoting(exact))
        .collect();
    items.push(json!({ "body": "on the section", "category": "revise",
                       "locator": { "sectionId": "later" } }));
    items.push(json!({ "body": "on the document", "category": "needs_review" }));

    let reply = doc
        .batch(&doc.agent, &run_id, json!({ "comments": items }))
        .await;
    let answer = reply.expect(201).clone();
    assert_eq!(answer["commentsRevision"], 1, "one bump for the batch");
    assert_eq!(answer["failed"], json!([]));
    let written = answer["written"].as_array().expect("written");
    let indexes: Vec<u64> = written
        .iter()
        .map(|w| w["index"].as_u64().expect("index"))
        .collect();
    assert_eq!(indexes, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(written[1]["comment"]["anchor"]["quote"]["exact"], "the mat");
    assert_eq!(written[4]["comment"]["category"], "revise");
    assert_eq!(written[4]["comment"]["anchor"]["sectionId"], "later");
    assert_eq!(written[5]["comment"]["category"], "needs_review");
    assert!(written.iter().all(|w| w["comment"]["provisional"] == true));
    assert!(
        written
            .iter()
            .all(|w| w["comment"]["runId"] == run_id.as_str())
    );

    let review = doc.review(&doc.owner).await;
    assert_eq!(review["commentsRevision"], 1);
    let ids: Vec<String> = written.iter().map(|w| id_of(&w["comment"])).collect();
    for id in &ids {
        let seen = find(&review, id).expect("batch comment persisted");
        assert_eq!(seen["provisional"], true);
    }
    doc.finish(&doc.agent, &run_id, "completed")
        .await
        .expect(200);
    let review = doc.review(&doc.owner).await;
    assert_eq!(
        run_in(&review, &run_id)["commentIds"]
            .as_array()
            .map(Vec::len),
        Some(6)
    );
}

#[tokio::test]
async fn a_batch_answers_failed_items_with_index_code_and_candidates_and_writes_the_rest() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let items = json!([
        quoting("cat sat"),
        quoting("The cat sit on the mat"),
        quoting("on the"),
        { "body": "odd", "category": "nitpick" },
        { "body": "" },
        { "body": "x", "locator": { "sectionId": "nowhere" } },
        quoting("dog lay"),
    ]);
    let reply = doc
        .batch(&doc.agent, &run_id, json!({ "comments": items }))
        .await;
    let answer = reply.expect(201).clone();
    assert_eq!(answer["commentsRevision"], 1);
    let written: Vec<u64> = answer["written"]
        .as_array()
        .expect("written")
        .iter()
        .map(|w| w["index"].as_u64().expect("index"))
        .collect();
    assert_eq!(written, vec![0, 6]);
    let failed = answer["failed"].as_array().expect("failed");
    let codes: Vec<(u64, &str)> = failed
        .iter()
        .map(|f| {
            (
                f["index"].as_u64().expect("index"),
                f["error"].as_str().expect("error"),
            )
        })
        .collect();
    assert_eq!(
        codes,
        vec![
            (1, "quote_not_found"),
            (2, "quote_ambiguous"),
            (3, "invalid_request"),
            (4, "invalid_request"),
            (5, "invalid_request"),
        ]
    );
    let near = &failed[0]["candidates"][0];
    assert_eq!(near["quote"]["exact"], "The cat sat on the mat");
    assert!(
        near["quote"]["suffix"]
            .as_str()
            .expect("suffix")
            .starts_with(".Later")
    );
    assert_eq!(near["position"], json!({ "start": 5, "end": 27 }));
    let occurrences: Vec<&Value> = failed[1]["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| &c["position"])
        .collect();
    assert_eq!(
        occurrences,
        vec![
            &json!({ "start": 17, "end": 23 }),
            &json!({ "start": 51, "end": 57 })
        ]
    );
    assert!(
        failed[1]["message"]
            .as_str()
            .expect("message")
            .contains("2 times")
    );
    assert!(
        failed[2]["message"]
            .as_str()
            .expect("message")
            .contains("nitpick")
    );
    assert!(failed[2].get("candidates").is_none());

    // A candidate sent back as the locator anchors to exactly that passage.
    let retry =
        json!({ "comments": [{ "body": "second place", "locator": failed[1]["candidates"][1] }] });
    let answer = doc
        .batch(&doc.agent, &run_id, retry)
        .await
        .expect(201)
        .clone();
    assert_eq!(answer["commentsRevision"], 2);
    let anchor = &answer["written"][0]["comment"]["anchor"];
    assert_eq!(anchor["sectionId"], "later");
    assert_eq!(anchor["quote"]["exact"], "on the");
    assert_eq!(
        doc.review(&doc.owner).await["comments"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );
}

#[tokio::test]
async fn an_atomic_batch_with_one_failure_writes_nothing() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let body = json!({ "atomic": true,
                       "comments": [quoting("cat sat"), quoting("no such words here")] });
    let reply = doc.batch(&doc.agent, &run_id, body).await;
    let error = reply.expect_error(400, "invalid_request").clone();
    assert_eq!(error["failed"][0]["index"], 1);
    assert_eq!(error["failed"][0]["error"], "quote_not_found");
    let review = doc.review(&doc.owner).await;
    assert_eq!(review["commentsRevision"], 0);
    assert_eq!(review["comments"], json!([]));
}

#[tokio::test]
async fn a_batch_in_which_every_item_fails_writes_nothing_and_answers_200() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    let body = json!({ "comments": [quoting("absent words"), { "body": "" }] });
    let answer = doc
        .batch(&doc.agent, &run_id, body)
        .await
        .expect(200)
        .clone();
    assert_eq!(answer["written"], json!([]));
    assert_eq!(answer["failed"].as_array().map(Vec::len), Some(2));
    assert_eq!(answer["commentsRevision"], 0);
    assert_eq!(doc.review(&doc.owner).await["commentsRevision"], 0);
}

#[tokio::test]
async fn a_batch_checks_its_size_base_revision_run_and_caller() {
    let doc = setup().await;
    let run_id = id_of(&doc.start(&doc.agent).await);
    doc.batch(&doc.agent, &run_id, json!({ "comments": [] }))
        .await
        .expect_error(400, "invalid_request");
    let too_many: Vec<Value> = (0..201).map(|_| json!({ "body": "x" })).collect();
    doc.batch(&doc.agent, &run_id, json!({ "comments": too_many }))
        .await
        .expect_error(400, "invalid_request");
    doc.batch(&doc.agent, &run_id, json!({ "comments": "many" }))
        .await
        .expect_error(400, "invalid_request");
    doc.batch(&doc.agent, &run_id, json!({ "comments": [{ "body": 5 }] }))
        .await
        .expect_error(400, "invalid_request");
    let nul = json!({ "comments": [{ "body": "x", "locator": { "versionId": "ver_\u{0}" } }] });
    doc.batch(&doc.agent, &run_id, nul)
        .await
        .expect_error(400, "invalid_request");

    doc.owner.comment_on(&doc.id, "dog lay", "human note").await;
    let stale = json!({ "baseCommentsRevision": 0, "comments": [{ "body": "x" }] });
    let error = doc.batch(&doc.agent, &run_id, stale).await;
    assert_eq!(
        error.expect_error(409, "comments revision conflict")["currentRevision"],
        1
    );

    let two_hundred: Vec<Value> = (0..200)
        .map(|i| json!({ "body": format!("n{i}") }))
        .collect();
    let current = json!({ "baseCommentsRevision": 1, "comments": two_hundred });
    let answer = doc
        .batch(&doc.agent, &run_id, current)
        .await
        .expect(201)
        .clone();
    assert_eq!(answer["commentsRevision"], 2);
    assert_eq!(answer["written"].as_array().map(Vec::len), Some(200));

    doc.batch(
        &doc.agent,
        "run_missing",
        json!({ "comments": [{ "body": "x" }] }),
    )
    .await
    .expect_error(404, "not_found");
    doc.batch(
        &doc.server.client(None),
        &run_id,
        json!({ "comments": [{ "body": "x" }] }),
    )
    .await
    .expect_error(401, "unauthorized");
    doc.finish(&doc.agent, &run_id, "cancelled")
        .await
        .expect(200);
    doc.batch(
        &doc.agent,
        &run_id,
        json!({ "comments": [{ "body": "x" }] }),
    )
    .await
    .expect_error(409, "invalid_transition");
}
