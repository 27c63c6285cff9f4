//! Agent runs over HTTP: starting a run, writing comments and replies inside it (provisional for
//! every reader while it runs), finishing it (completed makes items final, failed/cancelled deletes
//! them), the run's state machine, version staleness and who may do what (DESIGN.md §2, §4.4;
//! docs/api.md "Runs").

use docreview_client::Error;
use docreview_client::api::{
    AccessMode, BatchComment, BatchItemError, Category, CommentView, FinishRun, Locator,
    NewComment, NewReply, NewRunComments, Position, Provider, ReviewInput, ReviewView,
    RunCommentsWritten, RunKind, RunStatus, RunView, StartRun,
};
use serde_json::json;

use crate::support::{Client, Server, quote, refused};
use crate::support::{access, review_input};

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
    let review = owner.upload("Pets", HTML).await;
    Doc {
        id: review.review_id,
        version: review.latest_version_id,
        agent: server.agent(),
        owner,
        server,
    }
}

/// A comment with only a body (no category, no place: the whole document).
fn plain(body: &str) -> NewComment {
    NewComment {
        body: body.to_string(),
        category: None,
        locator: None,
        base_comments_revision: None,
        suggestion: None,
    }
}

/// A comment quoting `exact`, as `run_note` writes it.
fn quoting_note(exact: &str) -> NewComment {
    NewComment {
        locator: Some(quote(exact)),
        ..plain(&format!("about {exact}"))
    }
}

/// A reply written inside the run `run_id`.
fn run_reply(body: &str, run_id: &str) -> NewReply {
    NewReply {
        body: body.to_string(),
        run_id: Some(run_id.to_string()),
        base_comments_revision: None,
        base_thread_revision: None,
    }
}

impl Doc {
    fn runs(&self) -> String {
        format!("/api/reviews/{}/ai-review-runs", self.id)
    }

    fn run(&self, run_id: &str) -> String {
        format!("/api/reviews/{}/ai-review-runs/{run_id}", self.id)
    }

    /// An internal member: a viewer on this link-mode document.
    fn viewer(&self, email: &str) -> Client {
        self.server.user(email, "Viewer", &[], "comments")
    }

    /// Starts a run with the defaults.
    async fn try_start(&self, client: &Client) -> docreview_client::Result<RunView> {
        client.api().start_run(&self.id, &StartRun::default()).await
    }

    /// Starts a run and returns the Run.
    async fn start(&self, client: &Client) -> RunView {
        self.try_start(client).await.expect("start a run")
    }

    async fn run_comment(
        &self,
        client: &Client,
        run_id: &str,
        input: &NewComment,
    ) -> docreview_client::Result<docreview_client::api::CommentWritten> {
        client.api().add_run_comment(&self.id, run_id, input).await
    }

    /// Writes a run comment quoting `exact`; returns the comment.
    async fn run_note(&self, client: &Client, run_id: &str, exact: &str) -> CommentView {
        self.run_comment(client, run_id, &quoting_note(exact))
            .await
            .expect("run comment")
            .comment
    }

    async fn finish(
        &self,
        client: &Client,
        run_id: &str,
        status: RunStatus,
    ) -> docreview_client::Result<RunView> {
        let input = FinishRun {
            status,
            summary: None,
            base_comments_revision: None,
        };
        client.api().finish_run(&self.id, run_id, &input).await
    }

    async fn review(&self, client: &Client) -> ReviewView {
        client.api().review(&self.id, false).await.expect("review")
    }

    async fn review_with_deleted(&self, client: &Client) -> ReviewView {
        client
            .api()
            .review(&self.id, true)
            .await
            .expect("review with deleted")
    }

    async fn add_version(&self, html: &str) -> String {
        self.owner
            .add_version(&self.id, html)
            .await
            .latest_version_id
    }

    async fn batch(
        &self,
        client: &Client,
        run_id: &str,
        input: &NewRunComments,
    ) -> docreview_client::Result<RunCommentsWritten> {
        client.api().add_run_comments(&self.id, run_id, input).await
    }
}

fn find<'a>(review: &'a ReviewView, comment_id: &str) -> Option<&'a CommentView> {
    review.comments.iter().find(|c| c.id == comment_id)
}

fn run_in<'a>(review: &'a ReviewView, run_id: &str) -> &'a RunView {
    review
        .ai_review_runs
        .iter()
        .find(|r| r.id == run_id)
        .expect("run listed in aiReviewRuns")
}

/// The latest version id a `stale_target_version` refusal names.
#[track_caller]
fn stale_latest(error: &Error) -> &str {
    match error {
        Error::StaleVersion {
            latest_version_id, ..
        } => latest_version_id,
        other => panic!("not a stale version: {other:?}"),
    }
}

/// The current revision a `comments revision conflict` names.
#[track_caller]
fn current_revision(error: &Error) -> i64 {
    match error {
        Error::RevisionConflict {
            current_revision, ..
        } => *current_revision,
        other => panic!("not a revision conflict: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Starting a run
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn starting_a_run_defaults_to_a_running_ai_review_on_the_latest_version() {
    let doc = setup().await;
    // Raw: that `completedTs` and `summary` are absent from the answer (not null) is the point.
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
    let listed = run_in(&review, run["id"].as_str().expect("id"));
    assert_eq!(listed.status, RunStatus::Running);
    assert_eq!(listed.version_id, doc.version);
    // Starting a run is not a comment change.
    assert_eq!(review.comments_revision, 0);
}

#[tokio::test]
async fn starting_a_run_accepts_kind_title_and_the_latest_version_id() {
    let doc = setup().await;
    let input = StartRun {
        kind: Some(RunKind::Voice),
        title: Some("Dictation".into()),
        version_id: Some(doc.version.clone()),
    };
    let run = doc
        .agent
        .api()
        .start_run(&doc.id, &input)
        .await
        .expect("start");
    assert_eq!(run.kind, RunKind::Voice);
    assert_eq!(run.title, "Dictation");
    assert_eq!(run.version_id, doc.version);
    let explicit = StartRun {
        kind: Some(RunKind::AiReview),
        ..StartRun::default()
    };
    let run = doc
        .agent
        .api()
        .start_run(&doc.id, &explicit)
        .await
        .expect("start");
    assert_eq!(run.kind, RunKind::AiReview);
}

#[tokio::test]
async fn starting_a_run_with_an_unknown_kind_is_rejected() {
    let doc = setup().await;
    // Raw: kinds the API does not have, and a number.
    for kind in [json!("human"), json!("AI_REVIEW"), json!(1)] {
        doc.agent
            .post(&doc.runs(), &json!({ "kind": kind }))
            .await
            .expect_error(400, "invalid_request");
    }
    let review = doc.review(&doc.owner).await;
    assert!(review.ai_review_runs.is_empty());
}

#[tokio::test]
async fn starting_a_run_on_an_older_version_is_stale_target_version() {
    let doc = setup().await;
    let v2 = doc.add_version(&HTML.replace("rug", "sofa")).await;
    let input = StartRun {
        version_id: Some(doc.version.clone()),
        ..StartRun::default()
    };
    let error = refused(
        doc.agent.api().start_run(&doc.id, &input).await,
        409,
        "stale_target_version",
    );
    assert_eq!(stale_latest(&error), v2);
    let review = doc.review(&doc.owner).await;
    assert!(review.ai_review_runs.is_empty());
    // Without a versionId the run targets the latest version.
    let run = doc.start(&doc.agent).await;
    assert_eq!(run.version_id, v2);
}

#[tokio::test]
async fn starting_a_run_on_a_version_of_no_such_document_is_rejected() {
    let doc = setup().await;
    let input = StartRun {
        version_id: Some("ver_00000000000000000000000000".into()),
        ..StartRun::default()
    };
    refused(
        doc.agent.api().start_run(&doc.id, &input).await,
        400,
        "invalid_request",
    );
    assert!(doc.review(&doc.owner).await.ai_review_runs.is_empty());
}

#[tokio::test]
async fn starting_a_run_on_an_unknown_document_is_404() {
    let doc = setup().await;
    refused(
        doc.agent
            .api()
            .start_run("rv_nosuchdocument", &StartRun::default())
            .await,
        404,
        "not_found",
    );
}

#[tokio::test]
async fn starting_a_run_without_credentials_is_401() {
    let doc = setup().await;
    refused(
        doc.try_start(&doc.server.client(None)).await,
        401,
        "unauthorized",
    );
}

// ---------------------------------------------------------------------------------------------
// Comments inside a running run
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn run_comment_is_provisional_for_every_reader_while_the_run_runs() {
    let doc = setup().await;
    let run = doc.start(&doc.agent).await;
    let run_id = run.id.as_str();
    let input = NewComment {
        category: Some(Category::Revise),
        locator: Some(quote("cat sat")),
        ..plain("Consider rewording")
    };
    let written = doc
        .run_comment(&doc.agent, run_id, &input)
        .await
        .expect("run comment");
    assert_eq!(written.comments_revision, 1);
    let comment = &written.comment;
    let cid = comment.id.clone();
    assert!(comment.provisional);
    assert_eq!(comment.run_id.as_deref(), Some(run_id));
    assert_eq!(comment.category, Category::Revise);
    assert_eq!(comment.author.provider, Provider::Service);
    assert_eq!(comment.anchor.section_id.as_deref(), Some("intro"));

    let vic = doc.viewer("vic@example.com");
    for reader in [&doc.owner, &vic, &doc.agent] {
        let review = doc.review(reader).await;
        let seen = find(&review, &cid).expect("run comment visible");
        assert!(seen.provisional);
        assert_eq!(seen.run_id.as_deref(), Some(run_id));
        assert_eq!(
            run_in(&review, run_id).comment_ids,
            std::slice::from_ref(&cid)
        );
    }
}

#[tokio::test]
async fn completing_a_run_makes_its_comments_final_in_one_comment_change() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let first = doc.run_note(&doc.agent, &run_id, "cat sat").await.id;
    let second = doc.run_note(&doc.agent, &run_id, "dog lay").await.id;
    assert_eq!(doc.review(&doc.owner).await.comments_revision, 2);

    let input = FinishRun {
        status: RunStatus::Completed,
        summary: Some("Two remarks.".into()),
        base_comments_revision: None,
    };
    let run = doc
        .agent
        .api()
        .finish_run(&doc.id, &run_id, &input)
        .await
        .expect("finish");
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.summary.as_deref(), Some("Two remarks."));
    assert!(run.completed_ts.is_some());
    assert_eq!(run.comment_ids, [first.clone(), second.clone()]);

    let vic = doc.viewer("vic@example.com");
    for reader in [&doc.owner, &vic, &doc.agent] {
        let review = doc.review(reader).await;
        assert_eq!(review.comments_revision, 3);
        for cid in [&first, &second] {
            let seen = find(&review, cid).expect("final comment");
            assert!(!seen.provisional);
            assert!(seen.deleted_ts.is_none());
        }
        let listed = run_in(&review, &run_id);
        assert_eq!(listed.status, RunStatus::Completed);
        assert_eq!(listed.comment_ids, [first.clone(), second.clone()]);
    }
}

async fn abandoned_run_deletes_its_comments(status: RunStatus) {
    let doc = setup().await;
    let human = doc.owner.note_on(&doc.id, "dog lay", "human note").await;
    let human_id = human.comment.id;
    let run_id = doc.start(&doc.agent).await.id;
    let cid = doc.run_note(&doc.agent, &run_id, "cat sat").await.id;
    assert_eq!(doc.review(&doc.owner).await.comments_revision, 2);

    let run = doc
        .finish(&doc.agent, &run_id, status)
        .await
        .expect("finish");
    assert_eq!(run.status, status);
    assert!(run.comment_ids.is_empty());
    assert!(run.completed_ts.is_some());

    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments_revision, 3);
    assert!(find(&review, &cid).is_none(), "run comment is gone");
    assert!(find(&review, &human_id).is_some(), "human comment stays");
    let listed = run_in(&review, &run_id);
    assert_eq!(listed.status, status);
    assert!(listed.comment_ids.is_empty());

    let with_deleted = doc.review_with_deleted(&doc.owner).await;
    let deleted = find(&with_deleted, &cid).expect("kept with deletedTs");
    assert!(deleted.deleted_ts.is_some(), "deletedTs: {deleted:?}");
    assert!(!deleted.provisional);
    assert!(
        find(&with_deleted, &human_id)
            .expect("human")
            .deleted_ts
            .is_none()
    );

    // Deleted run comments are 404 to every later write.
    let late = NewReply {
        body: "late reply".into(),
        run_id: None,
        base_comments_revision: None,
        base_thread_revision: None,
    };
    refused(
        doc.owner.api().reply(&doc.id, &cid, &late).await,
        404,
        "not_found",
    );
}

#[tokio::test]
async fn failing_a_run_deletes_its_comments() {
    abandoned_run_deletes_its_comments(RunStatus::Failed).await;
}

#[tokio::test]
async fn cancelling_a_run_deletes_its_comments() {
    abandoned_run_deletes_its_comments(RunStatus::Cancelled).await;
}

#[tokio::test]
async fn finishing_a_run_twice_is_invalid_transition() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let cid = doc.run_note(&doc.agent, &run_id, "cat sat").await.id;
    doc.finish(&doc.agent, &run_id, RunStatus::Completed)
        .await
        .expect("complete");
    for status in [
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Cancelled,
    ] {
        refused(
            doc.finish(&doc.agent, &run_id, status).await,
            409,
            "invalid_transition",
        );
    }
    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments_revision, 2);
    assert_eq!(run_in(&review, &run_id).status, RunStatus::Completed);
    assert!(
        find(&review, &cid).is_some(),
        "a late cancel deletes nothing"
    );
}

#[tokio::test]
async fn finishing_with_status_running_is_rejected() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    // Raw: a finish may only name completed, failed or cancelled (the schema's pattern); these
    // are outside it.
    for status in [json!("running"), json!("done"), json!(null)] {
        doc.agent
            .patch(&doc.run(&run_id), &json!({ "status": status }))
            .await
            .expect_error(400, "invalid_request");
    }
    let review = doc.review(&doc.owner).await;
    assert_eq!(run_in(&review, &run_id).status, RunStatus::Running);
    assert_eq!(review.comments_revision, 0);
}

#[tokio::test]
async fn finishing_an_unknown_run_is_404() {
    let doc = setup().await;
    refused(
        doc.finish(&doc.agent, "run_nosuchrun", RunStatus::Completed)
            .await,
        404,
        "not_found",
    );
    // A run of another document is unknown here.
    let other = doc.owner.upload("Other", HTML).await;
    let foreign_run = doc
        .agent
        .api()
        .start_run(&other.review_id, &StartRun::default())
        .await
        .expect("foreign run")
        .id;
    refused(
        doc.finish(&doc.agent, &foreign_run, RunStatus::Completed)
            .await,
        404,
        "not_found",
    );
}

#[tokio::test]
async fn comment_into_an_unknown_run_is_404() {
    let doc = setup().await;
    refused(
        doc.run_comment(&doc.agent, "run_nosuchrun", &plain("b"))
            .await,
        404,
        "not_found",
    );
    assert_eq!(doc.review(&doc.owner).await.comments_revision, 0);
}

#[tokio::test]
async fn comment_into_a_run_of_another_document_is_404() {
    let doc = setup().await;
    let other = doc.owner.upload("Other", HTML).await;
    let foreign_run = doc
        .agent
        .api()
        .start_run(&other.review_id, &StartRun::default())
        .await
        .expect("foreign run")
        .id;
    refused(
        doc.run_comment(&doc.agent, &foreign_run, &plain("b")).await,
        404,
        "not_found",
    );
    assert_eq!(doc.review(&doc.owner).await.comments_revision, 0);
}

#[tokio::test]
async fn comment_into_a_finished_run_is_invalid_transition() {
    let doc = setup().await;
    for status in [
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Cancelled,
    ] {
        let run_id = doc.start(&doc.agent).await.id;
        doc.finish(&doc.agent, &run_id, status)
            .await
            .expect("finish");
        let before = doc.review(&doc.owner).await.comments_revision;
        refused(
            doc.run_comment(&doc.agent, &run_id, &plain("too late"))
                .await,
            409,
            "invalid_transition",
        );
        let review = doc.review(&doc.owner).await;
        assert_eq!(review.comments_revision, before, "after {status}");
        assert!(review.comments.is_empty());
    }
}

#[tokio::test]
async fn run_comment_after_a_new_version_is_stale_target_version() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let v2 = doc.add_version(&HTML.replace("rug", "sofa")).await;
    let before = doc.review(&doc.owner).await.comments_revision;
    let input = NewComment {
        locator: Some(quote("cat sat")),
        ..plain("b")
    };
    let error = refused(
        doc.run_comment(&doc.agent, &run_id, &input).await,
        409,
        "stale_target_version",
    );
    assert_eq!(stale_latest(&error), v2);
    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments_revision, before);
    assert!(review.comments.is_empty());
}

#[tokio::test]
async fn reply_into_a_run_after_a_new_version_is_stale_target_version() {
    let doc = setup().await;
    let human = doc.owner.note_on(&doc.id, "cat sat", "Why?").await;
    let cid = human.comment.id;
    let run_id = doc.start(&doc.agent).await.id;
    let v2 = doc.add_version(&HTML.replace("rug", "sofa")).await;
    let before = doc.review(&doc.owner).await.comments_revision;
    let error = refused(
        doc.agent
            .api()
            .reply(&doc.id, &cid, &run_reply("late", &run_id))
            .await,
        409,
        "stale_target_version",
    );
    assert_eq!(stale_latest(&error), v2);
    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments_revision, before);
    assert!(find(&review, &cid).expect("comment").thread.is_empty());
}

#[tokio::test]
async fn run_comment_validates_body_and_locator() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    // Raw: an empty or too long body and an unknown category are outside the schema.
    for body in [
        json!({ "body": "" }),
        json!({ "body": "x".repeat(20_001) }),
        json!({ "body": "b", "category": "praise" }),
    ] {
        doc.agent
            .post(&format!("{}/comments", doc.run(&run_id)), &body)
            .await
            .expect_error(400, "invalid_request");
    }
    let inverted = Locator {
        position: Some(Position { start: 4, end: 2 }),
        ..Locator::default()
    };
    let nowhere = Locator {
        section_id: Some("nowhere".into()),
        ..Locator::default()
    };
    for locator in [quote("unicorn"), nowhere, inverted] {
        let input = NewComment {
            locator: Some(locator),
            ..plain("b")
        };
        refused(
            doc.run_comment(&doc.agent, &run_id, &input).await,
            400,
            "invalid_request",
        );
    }
    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments_revision, 0);
    assert!(run_in(&review, &run_id).comment_ids.is_empty());
}

#[tokio::test]
async fn run_comment_with_a_stale_base_revision_conflicts() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    doc.run_note(&doc.agent, &run_id, "cat sat").await;
    let stale = NewComment {
        base_comments_revision: Some(0),
        ..plain("b")
    };
    let error = refused(
        doc.run_comment(&doc.agent, &run_id, &stale).await,
        409,
        "comments revision conflict",
    );
    assert_eq!(current_revision(&error), 1);
    let current = NewComment {
        base_comments_revision: Some(1),
        ..plain("b")
    };
    let ok = doc
        .run_comment(&doc.agent, &run_id, &current)
        .await
        .expect("written");
    assert_eq!(ok.comments_revision, 2);
    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments_revision, 2);
    assert_eq!(run_in(&review, &run_id).comment_ids.len(), 2);
}

// ---------------------------------------------------------------------------------------------
// Replies written inside a run
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn reply_with_run_id_is_provisional_and_deleted_when_the_run_is_cancelled() {
    let doc = setup().await;
    let human = doc.owner.note_on(&doc.id, "cat sat", "Why?").await;
    let cid = human.comment.id;
    let run_id = doc.start(&doc.agent).await.id;
    let written = doc
        .agent
        .api()
        .reply(&doc.id, &cid, &run_reply("Because.", &run_id))
        .await
        .expect("reply");
    let mid = written.message.id.clone();
    assert!(written.message.provisional);
    assert_eq!(written.message.run_id.as_deref(), Some(run_id.as_str()));
    let vic = doc.viewer("vic@example.com");
    let seen = doc.review(&vic).await;
    let message = &find(&seen, &cid).expect("comment").thread[0];
    assert_eq!(message.id, mid);
    assert!(message.provisional);

    doc.finish(&doc.agent, &run_id, RunStatus::Cancelled)
        .await
        .expect("cancel");
    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments_revision, 3);
    let comment = find(&review, &cid).expect("the human comment stays");
    assert!(comment.thread.is_empty());
    let with_deleted = doc.review_with_deleted(&doc.owner).await;
    let message = &find(&with_deleted, &cid).expect("comment").thread[0];
    assert_eq!(message.id, mid);
    assert!(message.deleted_ts.is_some(), "deletedTs: {message:?}");
}

#[tokio::test]
async fn reply_with_run_id_becomes_final_when_the_run_completes() {
    let doc = setup().await;
    let human = doc.owner.note_on(&doc.id, "cat sat", "Why?").await;
    let cid = human.comment.id;
    let run_id = doc.start(&doc.agent).await.id;
    let mid = doc
        .agent
        .api()
        .reply(&doc.id, &cid, &run_reply("Because.", &run_id))
        .await
        .expect("reply")
        .message
        .id;
    doc.finish(&doc.agent, &run_id, RunStatus::Completed)
        .await
        .expect("complete");
    let review = doc.review(&doc.owner).await;
    let message = &find(&review, &cid).expect("comment").thread[0];
    assert_eq!(message.id, mid);
    assert!(!message.provisional);
    assert!(message.deleted_ts.is_none());
}

#[tokio::test]
async fn reply_into_a_finished_or_unknown_run_is_refused() {
    let doc = setup().await;
    let human = doc.owner.note_on(&doc.id, "cat sat", "Why?").await;
    let cid = human.comment.id;
    let run_id = doc.start(&doc.agent).await.id;
    doc.finish(&doc.agent, &run_id, RunStatus::Completed)
        .await
        .expect("complete");
    refused(
        doc.agent
            .api()
            .reply(&doc.id, &cid, &run_reply("late", &run_id))
            .await,
        409,
        "invalid_transition",
    );
    refused(
        doc.agent
            .api()
            .reply(&doc.id, &cid, &run_reply("lost", "run_nosuchrun"))
            .await,
        404,
        "not_found",
    );
    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments_revision, 2);
    assert!(find(&review, &cid).expect("comment").thread.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Cancelling single run items
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn run_comment_can_be_cancelled_while_its_run_runs() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let cid = doc.run_note(&doc.agent, &run_id, "cat sat").await.id;
    // Raw: the whole answer, and nothing else, is the point.
    let cancelled = doc
        .agent
        .delete(&format!("/api/reviews/{}/comments/{cid}", doc.id))
        .await;
    assert_eq!(cancelled.expect(200), &json!({ "commentsRevision": 2 }));
    let review = doc.review(&doc.owner).await;
    assert!(find(&review, &cid).is_none());
    assert!(run_in(&review, &run_id).comment_ids.is_empty());
}

#[tokio::test]
async fn run_comment_cannot_be_cancelled_after_its_run_completed() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let cid = doc.run_note(&doc.agent, &run_id, "cat sat").await.id;
    doc.finish(&doc.agent, &run_id, RunStatus::Completed)
        .await
        .expect("complete");
    refused(
        doc.agent.api().cancel_comment(&doc.id, &cid, None).await,
        403,
        "forbidden",
    );
    let review = doc.review(&doc.owner).await;
    assert!(find(&review, &cid).is_some());
    assert_eq!(review.comments_revision, 2);
}

#[tokio::test]
async fn viewer_cannot_cancel_another_callers_run_comment() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let cid = doc.run_note(&doc.agent, &run_id, "cat sat").await.id;
    let vic = doc.viewer("vic@example.com");
    refused(
        vic.api().cancel_comment(&doc.id, &cid, None).await,
        403,
        "forbidden",
    );
    assert!(find(&doc.review(&doc.owner).await, &cid).is_some());
}

// ---------------------------------------------------------------------------------------------
// Schemes, scopes and roles
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn import_token_cannot_operate_runs() {
    let doc = setup().await;
    let importer = doc.server.importer();
    refused(doc.try_start(&importer).await, 403, "forbidden");
    let run_id = doc.start(&doc.agent).await.id;
    refused(
        doc.run_comment(&importer, &run_id, &plain("b")).await,
        403,
        "forbidden",
    );
    refused(
        doc.finish(&importer, &run_id, RunStatus::Completed).await,
        403,
        "forbidden",
    );
    let review = doc.review(&doc.owner).await;
    assert_eq!(
        review.ai_review_runs.len(),
        1,
        "only the agent's run exists"
    );
    assert_eq!(run_in(&review, &run_id).status, RunStatus::Running);
    assert!(review.comments.is_empty());
}

#[tokio::test]
async fn manage_token_cannot_operate_runs() {
    let doc = setup().await;
    let manager = doc.server.manager();
    refused(doc.try_start(&manager).await, 403, "forbidden");
    let run_id = doc.start(&doc.agent).await.id;
    refused(
        doc.finish(&manager, &run_id, RunStatus::Cancelled).await,
        403,
        "forbidden",
    );
    assert_eq!(
        run_in(&doc.review(&doc.owner).await, &run_id).status,
        RunStatus::Running
    );
}

#[tokio::test]
async fn personal_token_with_comments_scope_operates_a_run() {
    let doc = setup().await;
    let vic = doc.viewer("vic@example.com");
    let run = doc.start(&vic).await;
    let run_id = run.id;
    assert_eq!(run.status, RunStatus::Running);
    let comment = doc.run_note(&vic, &run_id, "dog lay").await;
    assert_eq!(comment.author.display_name, "Viewer");
    assert_eq!(comment.author.provider, Provider::Local);
    assert!(comment.provisional);
    // The starter may finish their own run even as a viewer.
    let finished = doc
        .finish(&vic, &run_id, RunStatus::Completed)
        .await
        .expect("finish");
    assert_eq!(finished.status, RunStatus::Completed);
    let review = doc.review(&doc.owner).await;
    assert!(!find(&review, &comment.id).expect("final").provisional);
}

#[tokio::test]
async fn personal_token_without_comments_scope_is_insufficient_scope() {
    let doc = setup().await;
    let docs_only = doc.server.user("dora@example.com", "Dora", &[], "docs");
    refused(doc.try_start(&docs_only).await, 403, "insufficient_scope");
    let run_id = doc.start(&doc.agent).await.id;
    refused(
        doc.run_comment(&docs_only, &run_id, &plain("b")).await,
        403,
        "insufficient_scope",
    );
    refused(
        doc.finish(&docs_only, &run_id, RunStatus::Completed).await,
        403,
        "insufficient_scope",
    );
    let human = doc.owner.note_on(&doc.id, "cat sat", "Why?").await;
    refused(
        docs_only
            .api()
            .reply(&doc.id, &human.comment.id, &run_reply("b", &run_id))
            .await,
        403,
        "insufficient_scope",
    );
    let review = doc.review(&doc.owner).await;
    assert_eq!(review.ai_review_runs.len(), 1);
    assert_eq!(run_in(&review, &run_id).status, RunStatus::Running);
    assert_eq!(review.comments_revision, 1);
}

#[tokio::test]
async fn viewer_cannot_finish_another_callers_run() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let cid = doc.run_note(&doc.agent, &run_id, "cat sat").await.id;
    let vic = doc.viewer("vic@example.com");
    for status in [RunStatus::Completed, RunStatus::Cancelled] {
        refused(doc.finish(&vic, &run_id, status).await, 403, "forbidden");
    }
    let review = doc.review(&doc.owner).await;
    assert_eq!(run_in(&review, &run_id).status, RunStatus::Running);
    assert!(find(&review, &cid).expect("still there").provisional);
    assert_eq!(review.comments_revision, 1);
}

#[tokio::test]
async fn document_owner_may_finish_the_agents_run() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let cid = doc.run_note(&doc.agent, &run_id, "cat sat").await.id;
    let finished = doc
        .finish(&doc.owner, &run_id, RunStatus::Failed)
        .await
        .expect("finish");
    assert_eq!(finished.status, RunStatus::Failed);
    assert!(find(&doc.review(&doc.owner).await, &cid).is_none());
}

#[tokio::test]
async fn outsider_cannot_reach_runs_on_a_restricted_document() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = owner
        .create(ReviewInput {
            access: Some(access(AccessMode::Restricted)),
            ..review_input("Secret", HTML)
        })
        .await
        .review_id;
    let run_id = server
        .agent()
        .api()
        .start_run(&id, &StartRun::default())
        .await
        .expect("run")
        .id;
    let outsider = server.user("out@example.com", "Out", &[], "comments");
    refused(
        outsider.api().start_run(&id, &StartRun::default()).await,
        404,
        "not_found",
    );
    refused(
        outsider
            .api()
            .add_run_comment(&id, &run_id, &plain("b"))
            .await,
        404,
        "not_found",
    );
    let cancel = FinishRun {
        status: RunStatus::Cancelled,
        summary: None,
        base_comments_revision: None,
    };
    refused(
        outsider.api().finish_run(&id, &run_id, &cancel).await,
        404,
        "not_found",
    );
    let review = owner.api().review(&id, false).await.expect("review");
    assert_eq!(run_in(&review, &run_id).status, RunStatus::Running);
    assert_eq!(review.ai_review_runs.len(), 1);
}

#[tokio::test]
async fn run_starter_may_cancel_another_callers_item_in_their_run() {
    let doc = setup().await;
    let vic = doc.viewer("vic@example.com");
    let run_id = doc.start(&vic).await.id;
    let cid = doc.run_note(&doc.agent, &run_id, "cat sat").await.id;
    let revision = vic
        .api()
        .cancel_comment(&doc.id, &cid, None)
        .await
        .expect("cancel");
    assert_eq!(revision, 2);
    assert!(find(&doc.review(&doc.owner).await, &cid).is_none());
}

// ---------------------------------------------------------------------------------------------
// Concurrency
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_finishes_of_one_run_let_exactly_one_win() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    doc.run_note(&doc.agent, &run_id, "cat sat").await;
    let statuses = [
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Cancelled,
        RunStatus::Completed,
    ];
    let attempts = (0..12).map(|i| doc.finish(&doc.agent, &run_id, statuses[i % 4]));
    let answers = futures::future::join_all(attempts).await;
    let mut winners = Vec::new();
    for answer in answers {
        match answer {
            Ok(run) => winners.push(run.status),
            refusal => {
                refused(refusal, 409, "invalid_transition");
            }
        }
    }
    assert_eq!(winners.len(), 1, "exactly one finish wins");
    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments_revision, 2, "one comment change");
    assert_eq!(run_in(&review, &run_id).status, winners[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn run_comments_racing_a_cancel_leave_no_live_item_behind() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let inputs: Vec<NewComment> = (0..16).map(|i| plain(&format!("remark {i}"))).collect();
    let writes = inputs
        .iter()
        .map(|input| doc.run_comment(&doc.agent, &run_id, input));
    let (written, cancelled) = tokio::join!(
        futures::future::join_all(writes),
        doc.finish(&doc.agent, &run_id, RunStatus::Cancelled)
    );
    cancelled.expect("cancel");
    let mut acknowledged = 0;
    for answer in written {
        match answer {
            Ok(_) => acknowledged += 1,
            refusal => {
                refused(refusal, 409, "invalid_transition");
            }
        }
    }
    let review = doc.review(&doc.owner).await;
    assert!(
        review.comments.is_empty(),
        "no run comment outlives the cancel"
    );
    assert!(run_in(&review, &run_id).comment_ids.is_empty());
    assert_eq!(review.comments_revision, acknowledged + 1);
    let with_deleted = doc.review_with_deleted(&doc.owner).await;
    let deleted = &with_deleted.comments;
    assert_eq!(i64::try_from(deleted.len()), Ok(acknowledged));
    assert!(deleted.iter().all(|c| c.deleted_ts.is_some()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_run_comments_without_a_base_revision_never_conflict() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let writers: Vec<_> = (0..24)
        .map(|i| {
            let agent = doc.agent.clone();
            let (review_id, run_id) = (doc.id.clone(), run_id.clone());
            tokio::spawn(async move {
                agent
                    .api()
                    .add_run_comment(&review_id, &run_id, &plain(&format!("note {i}")))
                    .await
            })
        })
        .collect();
    let mut revisions = Vec::new();
    for writer in writers {
        let written = writer.await.expect("writer").expect("run comment");
        revisions.push(written.comments_revision);
    }
    revisions.sort_unstable();
    revisions.dedup();
    assert_eq!(revisions.len(), 24, "one revision each, no conflicts");

    // Once the run is finished, a late comment in it is refused, not written.
    doc.finish(&doc.agent, &run_id, RunStatus::Completed)
        .await
        .expect("complete");
    refused(
        doc.run_comment(&doc.agent, &run_id, &plain("late")).await,
        409,
        "invalid_transition",
    );
    assert_eq!(doc.review(&doc.owner).await.comments.len(), 24);
}

// ---------------------------------------------------------------------------------------------
// Batches of run comments
// ---------------------------------------------------------------------------------------------

fn item(body: &str, category: Option<&str>, locator: Option<Locator>) -> BatchComment {
    BatchComment {
        suggestion: None,
        body: body.to_string(),
        category: category.map(str::to_string),
        locator,
    }
}

fn quoting(exact: &str) -> BatchComment {
    item(&format!("about {exact}"), None, Some(quote(exact)))
}

fn batch_of(comments: Vec<BatchComment>) -> NewRunComments {
    NewRunComments {
        comments: comments.into_iter().map(Into::into).collect(),
        base_comments_revision: None,
        atomic: false,
    }
}

#[tokio::test]
async fn a_batch_is_written_in_one_comment_change_in_the_order_sent() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let mut items: Vec<BatchComment> = ["cat sat", "the mat", "dog lay", "the rug"]
        .iter()
        .map(|exact| quoting(exact))
        .collect();
    let later = Locator {
        section_id: Some("later".into()),
        ..Locator::default()
    };
    items.push(item("on the section", Some("revise"), Some(later)));
    items.push(item("on the document", Some("needs_review"), None));

    let answer = doc
        .batch(&doc.agent, &run_id, &batch_of(items))
        .await
        .expect("batch");
    assert_eq!(answer.comments_revision, 1, "one bump for the batch");
    assert!(answer.failed.is_empty());
    let written = &answer.written;
    let indexes: Vec<usize> = written.iter().map(|w| w.index).collect();
    assert_eq!(indexes, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(
        written[1]
            .comment
            .anchor
            .quote
            .as_ref()
            .map(|q| q.exact.as_str()),
        Some("the mat")
    );
    assert_eq!(written[4].comment.category, Category::Revise);
    assert_eq!(
        written[4].comment.anchor.section_id.as_deref(),
        Some("later")
    );
    assert_eq!(written[5].comment.category, Category::NeedsReview);
    assert!(written.iter().all(|w| w.comment.provisional));
    assert!(
        written
            .iter()
            .all(|w| w.comment.run_id.as_deref() == Some(run_id.as_str()))
    );

    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments_revision, 1);
    for w in written {
        let seen = find(&review, &w.comment.id).expect("batch comment persisted");
        assert!(seen.provisional);
    }
    doc.finish(&doc.agent, &run_id, RunStatus::Completed)
        .await
        .expect("complete");
    let review = doc.review(&doc.owner).await;
    assert_eq!(run_in(&review, &run_id).comment_ids.len(), 6);
}

#[tokio::test]
async fn a_batch_answers_failed_items_with_index_code_and_candidates_and_writes_the_rest() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let nowhere = Locator {
        section_id: Some("nowhere".into()),
        ..Locator::default()
    };
    let items = vec![
        quoting("cat sat"),
        quoting("The cat sit on the mat"),
        quoting("on the"),
        item("odd", Some("nitpick"), None),
        item("", None, None),
        item("x", None, Some(nowhere)),
        quoting("dog lay"),
    ];
    let answer = doc
        .batch(&doc.agent, &run_id, &batch_of(items))
        .await
        .expect("batch");
    assert_eq!(answer.comments_revision, 1);
    let written: Vec<usize> = answer.written.iter().map(|w| w.index).collect();
    assert_eq!(written, vec![0, 6]);
    let failed = &answer.failed;
    let codes: Vec<(usize, BatchItemError)> = failed.iter().map(|f| (f.index, f.error)).collect();
    assert_eq!(
        codes,
        vec![
            (1, BatchItemError::QuoteNotFound),
            (2, BatchItemError::QuoteAmbiguous),
            (3, BatchItemError::InvalidRequest),
            (4, BatchItemError::InvalidRequest),
            (5, BatchItemError::InvalidRequest),
        ]
    );
    let near = &failed[0].candidates[0];
    assert_eq!(near.quote.exact, "The cat sat on the mat");
    assert!(near.quote.suffix.starts_with(".Later"));
    assert_eq!(near.position, Position { start: 5, end: 27 });
    let occurrences: Vec<&Position> = failed[1].candidates.iter().map(|c| &c.position).collect();
    assert_eq!(
        occurrences,
        vec![
            &Position { start: 17, end: 23 },
            &Position { start: 51, end: 57 }
        ]
    );
    assert!(failed[1].message.contains("2 times"));
    assert!(failed[2].message.contains("nitpick"));
    assert!(failed[2].candidates.is_empty());

    // A candidate sent back as the locator anchors to exactly that passage.
    let candidate = &failed[1].candidates[1];
    let locator = Locator {
        quote: Some(candidate.quote.clone()),
        position: Some(candidate.position.clone()),
        ..Locator::default()
    };
    let retry = batch_of(vec![item("second place", None, Some(locator))]);
    let answer = doc.batch(&doc.agent, &run_id, &retry).await.expect("retry");
    assert_eq!(answer.comments_revision, 2);
    let anchor = &answer.written[0].comment.anchor;
    assert_eq!(anchor.section_id.as_deref(), Some("later"));
    assert_eq!(
        anchor.quote.as_ref().map(|q| q.exact.as_str()),
        Some("on the")
    );
    assert_eq!(doc.review(&doc.owner).await.comments.len(), 3);
}

#[tokio::test]
async fn a_batch_names_every_kind_of_bad_item_by_its_index() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    // Raw: most of these items are outside the schema, as an agent's mistakes are.
    let body = json!({ "comments": [
        { "body": "good", "locator": { "quote": { "exact": "cat sat" } } },
        { "body": 5 },
        "just words",
        { "body": "x", "locator": { "versionId": "ver_\u{0}" } },
        { "body": "a\u{0}b" },
        { "body": "x", "locator": { "quote": { "exact": "cat\u{0}" } } },
        { "body": "x", "category": "nitpick" },
        { "body": "x", "locator": { "position": { "start": -1, "end": 2 } } },
        { "body": "x", "locator": { "position": { "start": 5, "end": 2 } } },
        { "body": "x", "locator": { "position": { "start": 5, "end": 9999 } } },
        { "body": "" },
        { "body": "x", "locator": { "sectionId": "nowhere" } },
        { "body": "x", "locator": { "quote": { "exact": "" } } },
        { "body": "x", "locator": { "quote": "cat sat" } },
        { "body": "x", "locator": { "quote": { "exact": "no such words at all here" } } },
        { "body": "x", "locator": { "quote": { "exact": "on the" } } },
        { "body": "also good", "category": "revise", "locator": { "quote": { "exact": "dog lay" } } },
    ] });
    let answer: RunCommentsWritten = serde_json::from_value(
        doc.agent
            .post(&format!("{}/comments/batch", doc.run(&run_id)), &body)
            .await
            .expect(201)
            .clone(),
    )
    .expect("a batch answer");
    let written: Vec<usize> = answer.written.iter().map(|w| w.index).collect();
    assert_eq!(written, vec![0, 16]);
    let failed: Vec<(usize, BatchItemError)> =
        answer.failed.iter().map(|f| (f.index, f.error)).collect();
    let invalid = BatchItemError::InvalidRequest;
    let mut expected: Vec<(usize, BatchItemError)> = (1..=13).map(|i| (i, invalid)).collect();
    expected.push((14, BatchItemError::QuoteNotFound));
    expected.push((15, BatchItemError::QuoteAmbiguous));
    assert_eq!(failed, expected);
    let message = |index: usize| {
        answer
            .failed
            .iter()
            .find(|f| f.index == index)
            .map(|f| f.message.clone())
            .unwrap_or_default()
    };
    assert!(message(1).contains("body"), "{}", message(1));
    assert!(message(2).contains("not a comment"), "{}", message(2));
    assert!(message(3).contains("locator.versionId") && message(3).contains("NUL"));
    assert!(message(4).contains("body") && message(4).contains("NUL"));
    assert!(message(5).contains("locator.quote.exact"), "{}", message(5));
    assert!(message(6).contains("nitpick"));
    assert!(
        message(7).contains("locator.position.start"),
        "{}",
        message(7)
    );
    assert!(message(13).contains("locator.quote"), "{}", message(13));
    assert_eq!(answer.comments_revision, 1);
    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments.len(), 2, "the good items were written");
}

#[tokio::test]
async fn a_quote_recovers_through_its_candidates_sections_and_occurrences() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    // "The backlog has grown" once in the plan; "review the numbers" in every one of 40 sections.
    let mut html = String::from("<h1 id=plan>Plan</h1><p>The backlog has grown since March.</p>");
    for n in 0..40 {
        html.push_str(&format!(
            "<h2 id=s{n}>Part {n}</h2><p>In part {n} we review the numbers again.</p>"
        ));
    }
    let review = owner.upload("Plan", &html).await;
    let id = review.review_id.clone();
    let run_id = owner
        .api()
        .start_run(&id, &StartRun::default())
        .await
        .expect("run")
        .id;
    let batch = |items: Vec<BatchComment>| batch_of(items);

    // A misspelled quote is offered whole words, and the offer sent back lands exactly there.
    let answer = owner
        .api()
        .add_run_comments(&id, &run_id, &batch(vec![quoting("ecklog has grwn")]))
        .await
        .expect("batch");
    let offered = &answer.failed[0].candidates[0];
    assert_eq!(offered.quote.exact, "backlog has grown");
    assert_eq!(offered.section_id.as_deref(), Some("plan"));
    let sent_back = Locator {
        quote: Some(offered.quote.clone()),
        section_id: offered.section_id.clone(),
        ..Locator::default()
    };
    let answer = owner
        .api()
        .add_run_comments(&id, &run_id, &batch(vec![item("x", None, Some(sent_back))]))
        .await
        .expect("batch");
    let anchor = &answer.written[0].comment.anchor;
    assert_eq!(anchor.position.as_ref(), Some(&offered.position));
    assert_eq!(anchor.state, docreview_client::api::AnchorState::Exact);

    // A quote in every section: the refusal lists the first ten occurrences with their
    // sections, each a locator that picks it.
    let answer = owner
        .api()
        .add_run_comments(&id, &run_id, &batch(vec![quoting("review the numbers")]))
        .await
        .expect("batch");
    let refusal = &answer.failed[0];
    assert_eq!(refusal.error, BatchItemError::QuoteAmbiguous);
    assert!(refusal.message.contains("40 times"), "{}", refusal.message);
    assert_eq!(refusal.candidates.len(), 10);
    let sections: Vec<_> = refusal
        .candidates
        .iter()
        .map(|c| c.section_id.clone().unwrap_or_default())
        .collect();
    assert_eq!(sections[..3], ["s0", "s1", "s2"]);

    // The section narrows the quote to its one occurrence there.
    let in_section = |section: &str, exact: &str| Locator {
        section_id: Some(section.into()),
        ..quote(exact)
    };
    let answer = owner
        .api()
        .add_run_comments(
            &id,
            &run_id,
            &batch(vec![
                item("x", None, Some(in_section("s27", "review the numbers"))),
                item("x", None, Some(in_section("s3", "backlog has grown"))),
            ]),
        )
        .await
        .expect("batch");
    let anchor = &answer.written[0].comment.anchor;
    assert_eq!(anchor.section_id.as_deref(), Some("s27"));
    let text_at = |start: usize| {
        let found = answer.written[0]
            .comment
            .anchor
            .quote
            .clone()
            .expect("quote");
        (found.exact, start)
    };
    assert_eq!(text_at(0).0, "review the numbers");
    let start = anchor.position.as_ref().expect("position").start;
    let s27 = owner.api().dom_context(&id, None).await.expect("outline");
    let s27 = s27.sections.iter().find(|s| s.id == "s27").expect("s27");
    assert!((s27.start..s27.end).contains(&start), "{start} in {s27:?}");
    // Outside the section it names, the quote is refused with where it does occur.
    let refusal = &answer.failed[0];
    assert_eq!(
        (refusal.index, refusal.error),
        (1, BatchItemError::QuoteNotFound)
    );
    assert!(
        refusal.message.contains("section `s3`"),
        "{}",
        refusal.message
    );
    assert_eq!(refusal.candidates[0].section_id.as_deref(), Some("plan"));

    // Every occurrence, a page at a time, through find.
    let mut query = docreview_client::api::FindQuery {
        q: Some("REVIEW the\nnumbers".into()),
        limit: Some(15),
        ..Default::default()
    };
    let mut pages = Vec::new();
    loop {
        let page = owner.api().find(&id, &query).await.expect("find");
        assert_eq!(page.total, 40);
        pages.extend(page.occurrences);
        match page.next_cursor {
            Some(cursor) => query.cursor = Some(cursor),
            None => break,
        }
    }
    assert_eq!(pages.len(), 40);
    assert_eq!(pages[39].section_id.as_deref(), Some("s39"));
    assert!(
        pages[0].context.contains("Part 0\nIn part 0"),
        "{}",
        pages[0].context
    );
    // An occurrence sent back as the locator anchors exactly there.
    let chosen = &pages[31];
    let locator = Locator {
        quote: Some(chosen.quote.clone()),
        position: Some(chosen.position.clone()),
        ..Locator::default()
    };
    let answer = owner
        .api()
        .add_run_comments(&id, &run_id, &batch(vec![item("x", None, Some(locator))]))
        .await
        .expect("batch");
    let anchor = &answer.written[0].comment.anchor;
    assert_eq!(anchor.position.as_ref(), Some(&chosen.position));
    assert_eq!(anchor.section_id.as_deref(), Some("s31"));
    assert_eq!(
        owner
            .api()
            .review(&id, false)
            .await
            .expect("read")
            .comments
            .len(),
        3
    );
}

#[tokio::test]
async fn a_comment_whose_quote_is_not_found_is_refused_with_candidates() {
    let doc = setup().await;
    let error = refused(
        doc.owner
            .api()
            .add_comment(&doc.id, &quoting_note("The cat sit on the mat"))
            .await,
        400,
        "invalid_request",
    );
    let Error::Api { body } = error else {
        panic!("a plain refusal: {error:?}");
    };
    let candidates = body.candidates.expect("candidates");
    assert_eq!(candidates[0].quote.exact, "The cat sat on the mat");
    assert_eq!(candidates[0].section_id.as_deref(), Some("intro"));
    let sent_back = NewComment {
        locator: Some(Locator {
            quote: Some(candidates[0].quote.clone()),
            ..Locator::default()
        }),
        ..plain("on the mat")
    };
    let written = doc
        .owner
        .api()
        .add_comment(&doc.id, &sent_back)
        .await
        .expect("the candidate anchors");
    assert_eq!(
        written.comment.anchor.position,
        Some(candidates[0].position.clone())
    );
}

#[tokio::test]
async fn find_refuses_what_it_cannot_look_for() {
    let doc = setup().await;
    let path = format!("/api/reviews/{}/find", doc.id);
    for query in [
        String::new(),
        "?q=".to_string(),
        "?q=%20%20".to_string(),
        format!("?q={}", "a".repeat(1001)),
        "?q=cat&sectionId=nowhere".to_string(),
        "?q=cat&limit=0".to_string(),
        "?q=cat&cursor=garbage".to_string(),
    ] {
        doc.agent
            .get(&format!("{path}{query}"))
            .await
            .expect_error(400, "invalid_request");
    }
    doc.agent
        .get(&format!("{path}?q=cat&versionId=ver_nope"))
        .await
        .expect_error(404, "not_found");
    doc.agent
        .get("/api/reviews/rv_nope/find?q=cat")
        .await
        .expect_error(404, "not_found");
    let outsider = doc
        .server
        .user("eve@example.com", "Eve", &["--external"], "comments");
    outsider
        .get(&format!("{path}?q=cat"))
        .await
        .expect_error(404, "not_found");
    let found = doc
        .agent
        .get(&format!("{path}?q=the&sectionId=later"))
        .await
        .expect(200)
        .clone();
    assert_eq!(found["total"], 2, "{found}");
    assert_eq!(found["occurrences"][0]["sectionId"], "later");
    assert_eq!(found["nextCursor"], serde_json::Value::Null);
}

#[tokio::test]
async fn an_atomic_batch_with_one_failure_writes_nothing() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    let input = NewRunComments {
        atomic: true,
        ..batch_of(vec![quoting("cat sat"), quoting("no such words here")])
    };
    let error = refused(
        doc.batch(&doc.agent, &run_id, &input).await,
        400,
        "invalid_request",
    );
    let Error::Api { body } = error else {
        panic!("a plain refusal: {error:?}");
    };
    let failed = body.failed.expect("the failures");
    assert_eq!(failed[0].index, 1);
    assert_eq!(failed[0].error, BatchItemError::QuoteNotFound);
    let review = doc.review(&doc.owner).await;
    assert_eq!(review.comments_revision, 0);
    assert!(review.comments.is_empty());
}

#[tokio::test]
async fn a_batch_in_which_every_item_fails_writes_nothing_and_answers_200() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    // Raw: the status (200, not 201) is the point, and the typed client does not show it.
    let body = json!({ "comments": [{ "body": "about absent words",
                                      "locator": { "quote": { "exact": "absent words" } } },
                                    { "body": "" }] });
    let answer = doc
        .agent
        .post(&format!("{}/comments/batch", doc.run(&run_id)), &body)
        .await
        .expect(200)
        .clone();
    assert_eq!(answer["written"], json!([]));
    assert_eq!(answer["failed"].as_array().map(Vec::len), Some(2));
    assert_eq!(answer["commentsRevision"], 0);
    assert_eq!(doc.review(&doc.owner).await.comments_revision, 0);
}

#[tokio::test]
async fn a_batch_checks_its_size_base_revision_run_and_caller() {
    let doc = setup().await;
    let run_id = doc.start(&doc.agent).await.id;
    // Raw: no items, too many, and a list that is not one are outside the schema (a bad item
    // fails alone: a_batch_names_every_kind_of_bad_item_by_its_index).
    let batch_path = format!("{}/comments/batch", doc.run(&run_id));
    let too_many: Vec<_> = (0..201).map(|_| json!({ "body": "x" })).collect();
    for body in [
        json!({ "comments": [] }),
        json!({ "comments": too_many }),
        json!({ "comments": "many" }),
        json!({ "comments": [{ "body": "x" }], "atomic": "\u{0}" }),
    ] {
        doc.agent
            .post(&batch_path, &body)
            .await
            .expect_error(400, "invalid_request");
    }

    doc.owner.note_on(&doc.id, "dog lay", "human note").await;
    let stale = NewRunComments {
        base_comments_revision: Some(0),
        ..batch_of(vec![item("x", None, None)])
    };
    let error = refused(
        doc.batch(&doc.agent, &run_id, &stale).await,
        409,
        "comments revision conflict",
    );
    assert_eq!(current_revision(&error), 1);

    let two_hundred: Vec<BatchComment> = (0..200)
        .map(|i| item(&format!("n{i}"), None, None))
        .collect();
    let current = NewRunComments {
        base_comments_revision: Some(1),
        ..batch_of(two_hundred)
    };
    let answer = doc
        .batch(&doc.agent, &run_id, &current)
        .await
        .expect("200 items");
    assert_eq!(answer.comments_revision, 2);
    assert_eq!(answer.written.len(), 200);

    let one = batch_of(vec![item("x", None, None)]);
    refused(
        doc.batch(&doc.agent, "run_missing", &one).await,
        404,
        "not_found",
    );
    refused(
        doc.batch(&doc.server.client(None), &run_id, &one).await,
        401,
        "unauthorized",
    );
    doc.finish(&doc.agent, &run_id, RunStatus::Cancelled)
        .await
        .expect("cancel");
    refused(
        doc.batch(&doc.agent, &run_id, &one).await,
        409,
        "invalid_transition",
    );
}
