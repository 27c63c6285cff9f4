//! The review workflow (DESIGN.md §8.4): reviewers with due dates, decisions and the outcome
//! rule (stale decisions after a new version, a newer decision replacing the older), finalizing
//! (refused while comments are open; every discussion write, run and version refused while
//! finalized, allowed again after reopening), assignment and `?assignee=me`, reactions
//! (idempotent, not raising `commentsRevision`, sent live), the notifications they write, and
//! every refusal, never a 5xx.
//!
//! Raw HTTP for the cells whose status and error body are the point; the typed client where a
//! step only sets the scene (it is exercised by the decisions and reactions it sends).

use std::time::Duration;

use docreview_client::api::events::EventKind;
use docreview_client::api::{AssigneeChange, DecisionKind, NewDecision, NewReviewer, Outcome};
use serde_json::{Value, json};

use crate::support::{Client, SAMPLE_HTML, Server};

const PASSAGE: &str = "The quick brown fox jumps over the lazy dog";

/// Ada owns the documents; Bob and Cy are internal members (viewers through link mode); Ed is
/// an internal member a document is shared with as editor; Ext is an external member who
/// cannot read them.
struct Team {
    server: Server,
    ada: Client,
    bob: Client,
    cy: Client,
    ext: Client,
}

impl Team {
    fn new() -> Team {
        let server = Server::start();
        let scopes = "docs,comments,access";
        let ada = server.user("ada@example.com", "Ada", &[], scopes);
        let bob = server.user("bob@example.com", "Bob", &[], scopes);
        let cy = server.user("cy@example.com", "Cy", &[], scopes);
        let ext = server.user("ext@partner.org", "Ext", &["--external"], scopes);
        Team {
            server,
            ada,
            bob,
            cy,
            ext,
        }
    }

    async fn document(&self) -> String {
        self.ada.upload("Workflow", SAMPLE_HTML).await.review_id
    }
}

async fn id_of(client: &Client) -> String {
    client.get("/api/me").await.expect(200)["user"]["id"]
        .as_str()
        .expect("id")
        .to_string()
}

async fn review(client: &Client, review_id: &str) -> Value {
    client
        .get(&format!("/api/reviews/{review_id}"))
        .await
        .expect(200)["review"]
        .clone()
}

async fn workflow(client: &Client, review_id: &str) -> Value {
    review(client, review_id).await["workflow"].clone()
}

async fn comment(client: &Client, review_id: &str, body: &str) -> Value {
    client
        .post(
            &format!("/api/reviews/{review_id}/comments"),
            &json!({ "body": body, "locator": { "quote": { "exact": PASSAGE } } }),
        )
        .await
        .expect(201)
        .clone()
}

async fn decide(client: &Client, review_id: &str, kind: DecisionKind) -> Outcome {
    let written = client
        .api()
        .decide(
            review_id,
            &NewDecision {
                decision: kind,
                version_id: None,
                body: None,
            },
        )
        .await
        .expect("decide");
    assert!(!written.decision.stale);
    written.workflow.outcome
}

#[tokio::test]
async fn reviewers_decisions_and_the_outcome_rule() {
    let team = Team::new();
    let doc = team.document().await;
    let (bob_id, cy_id) = (id_of(&team.bob).await, id_of(&team.cy).await);
    let reviewers = format!("/api/reviews/{doc}/reviewers");

    let fresh = workflow(&team.bob, &doc).await;
    assert_eq!(fresh["state"], "open");
    assert_eq!(fresh["outcome"], "pending");
    assert_eq!(fresh["reviewers"], json!([]));
    assert_eq!(fresh["decisions"], json!([]));
    assert_eq!(fresh["finalizedAt"], Value::Null);

    let asked = team
        .ada
        .post(
            &reviewers,
            &json!({ "email": "Bob@Example.com", "dueAt": "2026-12-01" }),
        )
        .await;
    let asked = asked.expect(201)["workflow"].clone();
    assert_eq!(asked["reviewers"][0]["user"]["id"], bob_id.as_str());
    assert_eq!(asked["reviewers"][0]["dueAt"], "2026-12-01T23:59:59.999Z");
    assert_eq!(asked["reviewers"][0]["decision"], Value::Null);
    let both = team
        .ada
        .api()
        .add_reviewer(
            &doc,
            &NewReviewer {
                email: "cy@example.com".into(),
                due_at: Some("2026-12-02T10:00:00Z".into()),
            },
        )
        .await
        .expect("ask cy");
    assert_eq!(both.reviewers.len(), 2);
    assert_eq!(
        both.reviewers[1].due_at.as_deref(),
        Some("2026-12-02T10:00:00.000Z")
    );
    assert_eq!(both.outcome, Outcome::Pending);

    // Every requested reviewer must approve; a newer decision replaces the older.
    assert_eq!(
        decide(&team.bob, &doc, DecisionKind::Approved).await,
        Outcome::Pending
    );
    assert_eq!(
        decide(&team.cy, &doc, DecisionKind::Approved).await,
        Outcome::Approved
    );
    assert_eq!(
        decide(&team.bob, &doc, DecisionKind::ChangesRequested).await,
        Outcome::ChangesRequested
    );
    assert_eq!(
        decide(&team.bob, &doc, DecisionKind::ApprovedWithChanges).await,
        Outcome::ApprovedWithChanges
    );
    let with_note = team
        .bob
        .post(
            &format!("/api/reviews/{doc}/decisions"),
            &json!({ "decision": "approved", "body": "Looks right." }),
        )
        .await;
    let with_note = with_note.expect(201).clone();
    assert_eq!(with_note["decision"]["decision"], "approved");
    assert_eq!(with_note["decision"]["body"], "Looks right.");
    assert_eq!(with_note["decision"]["user"]["id"], bob_id.as_str());
    assert_eq!(with_note["decision"]["stale"], false);
    assert_eq!(with_note["workflow"]["outcome"], "approved");
    let now = workflow(&team.ada, &doc).await;
    assert_eq!(
        now["decisions"].as_array().expect("decisions").len(),
        2,
        "one per person"
    );
    assert_eq!(now["reviewers"][0]["decision"]["decision"], "approved");

    // A new version makes every decision stale: they no longer count.
    let old_version = review(&team.ada, &doc).await["latestVersionId"]
        .as_str()
        .expect("version")
        .to_string();
    let latest = team
        .ada
        .add_version(&doc, &SAMPLE_HTML.replace("Second", "2nd"))
        .await
        .latest_version_id;
    let stale = workflow(&team.bob, &doc).await;
    assert_eq!(stale["outcome"], "pending");
    for decision in stale["decisions"].as_array().expect("decisions") {
        assert_eq!(decision["stale"], true);
    }
    let refused = team
        .cy
        .post(
            &format!("/api/reviews/{doc}/decisions"),
            &json!({ "decision": "approved", "versionId": old_version }),
        )
        .await;
    assert_eq!(
        refused.expect_error(409, "stale_target_version")["latestVersionId"],
        latest.as_str()
    );
    let on_latest = team
        .cy
        .post(
            &format!("/api/reviews/{doc}/decisions"),
            &json!({ "decision": "not_relevant", "versionId": latest }),
        )
        .await;
    assert_eq!(
        on_latest.expect(201)["decision"]["versionId"],
        latest.as_str()
    );
    assert_eq!(
        decide(&team.bob, &doc, DecisionKind::Approved).await,
        Outcome::Pending
    );
    // Without Cy asked, Bob's approval is every requested reviewer's.
    let removed = team.ada.delete(&format!("{reviewers}/{cy_id}")).await;
    assert_eq!(removed.expect(200)["workflow"]["outcome"], "approved");
    team.ada
        .delete(&format!("{reviewers}/{cy_id}"))
        .await
        .expect_error(404, "not_found");
    // A reviewer may decline; with nobody asked, one approval is enough.
    let declined = team
        .bob
        .api()
        .remove_reviewer(&doc, &bob_id)
        .await
        .expect("decline");
    assert!(declined.reviewers.is_empty());
    assert_eq!(declined.outcome, Outcome::Approved);

    // With nobody asked and nobody approving: all not relevant, then pending.
    let other = team.document().await;
    assert_eq!(
        decide(&team.bob, &other, DecisionKind::NotRelevant).await,
        Outcome::NotRelevant
    );
    assert_eq!(
        decide(&team.cy, &other, DecisionKind::NotRelevant).await,
        Outcome::NotRelevant
    );
    assert_eq!(
        decide(&team.cy, &other, DecisionKind::ApprovedWithChanges).await,
        Outcome::ApprovedWithChanges
    );
}

#[tokio::test]
async fn reviewer_and_decision_refusals() {
    let team = Team::new();
    let doc = team.document().await;
    let reviewers = format!("/api/reviews/{doc}/reviewers");
    let decisions = format!("/api/reviews/{doc}/decisions");

    for (body, why) in [
        (json!({ "email": "nobody@example.com" }), "unknown person"),
        (
            json!({ "email": "ext@partner.org" }),
            "cannot read the document",
        ),
        (json!({ "email": "not an email" }), "malformed email"),
        (
            json!({ "email": "bob@example.com", "dueAt": "soon" }),
            "malformed due date",
        ),
        (
            json!({ "email": "bob@example.com", "dueAt": 5 }),
            "due date not a string",
        ),
        (json!({}), "no email"),
        (
            json!({ "email": "bob@example.com", "extra": 1 }),
            "unknown field",
        ),
        (json!([]), "not an object"),
    ] {
        let reply = team.ada.post(&reviewers, &body).await;
        assert_eq!(reply.status, 400, "{why}: {}", reply.text);
        reply.expect_error(400, "invalid_request");
    }
    // A viewer may not ask; a document one cannot see is not found; scopes and schemes.
    team.bob
        .post(&reviewers, &json!({ "email": "cy@example.com" }))
        .await
        .expect_error(403, "forbidden");
    team.ext
        .post(&reviewers, &json!({ "email": "cy@example.com" }))
        .await
        .expect_error(404, "not_found");
    let comments_only = team.server.client(Some(
        &team.server.issue_token("ada@example.com", "comments"),
    ));
    comments_only
        .post(&reviewers, &json!({ "email": "cy@example.com" }))
        .await
        .expect_error(403, "insufficient_scope");
    comments_only
        .post(&decisions, &json!({ "decision": "approved" }))
        .await
        .expect_error(403, "insufficient_scope");
    team.server
        .agent()
        .post(&decisions, &json!({ "decision": "approved" }))
        .await
        .expect_error(403, "forbidden");
    team.server
        .client(None)
        .post(&decisions, &json!({ "decision": "approved" }))
        .await
        .expect_error(401, "unauthorized");
    team.bob
        .delete(&format!("{reviewers}/usr_nobody"))
        .await
        .expect_error(403, "forbidden");
    team.ada
        .post(
            "/api/reviews/rv_missing/reviewers",
            &json!({ "email": "bob@example.com" }),
        )
        .await
        .expect_error(404, "not_found");

    for (body, why) in [
        (json!({ "decision": "maybe" }), "unknown decision"),
        (json!({}), "no decision"),
        (
            json!({ "decision": "approved", "versionId": "ver_nope" }),
            "unknown version",
        ),
        (
            json!({ "decision": "approved", "body": "x".repeat(20_001) }),
            "note too long",
        ),
        (
            json!({ "decision": "approved", "body": 3 }),
            "note not a string",
        ),
        (json!("approved"), "not an object"),
    ] {
        let reply = team.bob.post(&decisions, &body).await;
        assert_eq!(reply.status, 400, "{why}: {}", reply.text);
        reply.expect_error(400, "invalid_request");
    }
    team.ext
        .post(&decisions, &json!({ "decision": "approved" }))
        .await
        .expect_error(404, "not_found");
    let not_json = team
        .bob
        .send(
            team.bob
                .raw("POST", &decisions)
                .header("content-type", "application/json")
                .body("{not json"),
        )
        .await;
    not_json.expect_error(400, "invalid_request");
    let workflow = workflow(&team.ada, &doc).await;
    assert_eq!(workflow["reviewers"], json!([]), "nothing was written");
    assert_eq!(workflow["decisions"], json!([]));
}

#[tokio::test]
async fn a_finalized_review_refuses_discussion_until_reopened() {
    let team = Team::new();
    let doc = team.document().await;
    let written = comment(&team.bob, &doc, "Is this right?").await;
    let comment_id = written["comment"]["id"].as_str().expect("id").to_string();
    let reply = team
        .ada
        .post(
            &format!("/api/reviews/{doc}/comments/{comment_id}/thread"),
            &json!({ "body": "Yes." }),
        )
        .await;
    let message_id = reply.expect(201)["message"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let finalize = format!("/api/reviews/{doc}/finalize");
    let reopen = format!("/api/reviews/{doc}/reopen");

    let open = team.ada.post(&finalize, &json!({})).await;
    assert_eq!(
        open.expect_error(409, "open_comments_remain")["openCount"],
        1
    );
    team.bob
        .post(&finalize, &json!({}))
        .await
        .expect_error(403, "forbidden");
    team.ada
        .post(&reopen, &json!({}))
        .await
        .expect_error(409, "invalid_transition");
    let status = format!("/api/reviews/{doc}/comments/{comment_id}/status-events");
    team.ada
        .post(&status, &json!({ "status": "closed" }))
        .await
        .expect(201);
    let revision = review(&team.ada, &doc).await["commentsRevision"].clone();

    let finalized = team
        .ada
        .api()
        .finalize_review(&doc)
        .await
        .expect("finalize");
    assert_eq!(
        finalized.state,
        docreview_client::api::WorkflowState::Finalized
    );
    assert_eq!(
        finalized
            .finalized_by
            .as_ref()
            .map(|u| u.display_name.as_str()),
        Some("Ada")
    );
    assert!(finalized.finalized_at.is_some());
    team.ada
        .post(&finalize, &json!({}))
        .await
        .expect_error(409, "invalid_transition");
    let read = review(&team.bob, &doc).await;
    assert_eq!(read["workflow"]["state"], "finalized");
    assert_eq!(
        read["commentsRevision"], revision,
        "finalizing is not a comment change"
    );

    // Every write to the discussion, every run and every version is refused.
    let thread = format!("/api/reviews/{doc}/comments/{comment_id}/thread");
    let refusals = [
        team.bob
            .post(
                &format!("/api/reviews/{doc}/comments"),
                &json!({ "body": "More?" }),
            )
            .await,
        team.bob.post(&thread, &json!({ "body": "More." })).await,
        team.bob.post(&status, &json!({ "status": "open" })).await,
        team.bob
            .patch(
                &format!("/api/reviews/{doc}/comments/{comment_id}"),
                &json!({ "body": "Edited" }),
            )
            .await,
        team.ada
            .put(
                &format!("/api/reviews/{doc}/comments/{comment_id}/assignee"),
                &json!({ "email": "bob@example.com" }),
            )
            .await,
        team.server
            .agent()
            .post(&format!("/api/reviews/{doc}/ai-review-runs"), &json!({}))
            .await,
    ];
    for refused in &refusals {
        refused.expect_error(409, "review_finalized");
    }
    let version = team
        .ada
        .send(
            team.ada
                .raw("POST", &format!("/api/reviews/{doc}/import-html"))
                .multipart(reqwest::multipart::Form::new().part(
                    "file",
                    crate::support::html_part(SAMPLE_HTML.as_bytes(), "v2.html"),
                )),
        )
        .await;
    version.expect_error(409, "review_finalized");
    assert_eq!(review(&team.ada, &doc).await["commentsRevision"], revision);

    // Decisions and reactions are not discussion: they still apply.
    team.bob
        .post(
            &format!("/api/reviews/{doc}/decisions"),
            &json!({ "decision": "approved" }),
        )
        .await
        .expect(201);
    team.bob
        .put(
            &format!(
                "/api/reviews/{doc}/comments/{comment_id}/thread/{message_id}/reactions/heart"
            ),
            &json!({}),
        )
        .await
        .expect(200);

    let reopened = team.ada.post(&reopen, &json!({})).await;
    let reopened = reopened.expect(200)["workflow"].clone();
    assert_eq!(reopened["state"], "open");
    assert_eq!(reopened["finalizedAt"], Value::Null);
    assert_eq!(reopened["finalizedBy"], Value::Null);
    comment(&team.bob, &doc, "Reopened, one more thing").await;
    team.bob
        .post(&thread, &json!({ "body": "More." }))
        .await
        .expect(201);
    team.server
        .agent()
        .post(&format!("/api/reviews/{doc}/ai-review-runs"), &json!({}))
        .await
        .expect(201);
    team.ada
        .add_version(&doc, &SAMPLE_HTML.replace("Second", "2nd"))
        .await;
}

/// How many comments of `doc` mentioning the fox are assigned to the caller.
async fn mine(client: &Client, doc: &str) -> usize {
    client
        .get(&format!(
            "/api/search/comments?q=fox&assignee=me&reviewId={doc}"
        ))
        .await
        .expect(200)["results"]
        .as_array()
        .expect("results")
        .len()
}

#[tokio::test]
async fn assignment_and_the_assigned_to_me_filter() {
    let team = Team::new();
    let doc = team.document().await;
    let bob_id = id_of(&team.bob).await;
    let written = comment(&team.ada, &doc, "Please check the fox").await;
    let comment_id = written["comment"]["id"].as_str().expect("id").to_string();
    assert_eq!(written["comment"]["assignee"], Value::Null);
    let before = written["commentsRevision"].as_i64().expect("revision");
    let assignee = format!("/api/reviews/{doc}/comments/{comment_id}/assignee");

    // Anyone who can read may assign, to someone who can read.
    let assigned = team
        .cy
        .put(&assignee, &json!({ "email": "bob@example.com" }))
        .await;
    let assigned = assigned.expect(200).clone();
    assert_eq!(assigned["comment"]["assignee"]["id"], bob_id.as_str());
    assert_eq!(assigned["commentsRevision"], before + 1);
    let read = review(&team.ada, &doc).await;
    assert_eq!(read["comments"][0]["assignee"]["id"], bob_id.as_str());
    assert_eq!(read["commentsRevision"], before + 1);

    assert_eq!(mine(&team.bob, &doc).await, 1);
    assert_eq!(mine(&team.cy, &doc).await, 0);
    team.bob
        .get("/api/search/comments?q=fox&assignee=bob")
        .await
        .expect_error(400, "invalid_request");

    for (body, why) in [
        (json!({}), "no email (send null to unassign)"),
        (json!({ "email": "nobody@example.com" }), "unknown person"),
        (
            json!({ "email": "ext@partner.org" }),
            "cannot read the document",
        ),
        (json!({ "email": 7 }), "not a string"),
        (
            json!({ "email": "bob@example.com", "baseCommentsRevision": "x" }),
            "bad base",
        ),
    ] {
        let reply = team.ada.put(&assignee, &body).await;
        assert_eq!(reply.status, 400, "{why}: {}", reply.text);
        reply.expect_error(400, "invalid_request");
    }
    team.ada
        .put(
            &assignee,
            &json!({ "email": "cy@example.com", "baseCommentsRevision": before }),
        )
        .await
        .expect_error(409, "comments revision conflict");
    team.ada
        .put(
            &format!("/api/reviews/{doc}/comments/cm_missing/assignee"),
            &json!({ "email": null }),
        )
        .await
        .expect_error(404, "not_found");
    team.ext
        .put(&assignee, &json!({ "email": null }))
        .await
        .expect_error(404, "not_found");

    let unassigned = team
        .bob
        .api()
        .assign_comment(
            &doc,
            &comment_id,
            &AssigneeChange {
                email: None,
                base_comments_revision: Some(before + 1),
            },
        )
        .await
        .expect("unassign");
    assert!(unassigned.comment.assignee.is_none());
    assert_eq!(unassigned.comments_revision, before + 2);
    assert_eq!(mine(&team.bob, &doc).await, 0);
}

#[tokio::test]
async fn reactions_are_idempotent_live_and_never_raise_the_revision() {
    let team = Team::new();
    let doc = team.document().await;
    let written = comment(&team.ada, &doc, "Nice").await;
    let comment_id = written["comment"]["id"].as_str().expect("id").to_string();
    let reply = team
        .bob
        .post(
            &format!("/api/reviews/{doc}/comments/{comment_id}/thread"),
            &json!({ "body": "Agreed" }),
        )
        .await;
    let message_id = reply.expect(201)["message"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let revision = review(&team.ada, &doc).await["commentsRevision"].clone();
    let mut events = team.ada.api().events(&doc).await.expect("events");
    events
        .next()
        .await
        .expect("first")
        .expect("the current state");

    let on_comment =
        |emoji: &str| format!("/api/reviews/{doc}/comments/{comment_id}/reactions/{emoji}");
    let thumbs = on_comment("%2B1");
    for _ in 0..2 {
        let reacted = team.bob.put(&thumbs, &json!({})).await;
        assert_eq!(
            reacted.expect(200)["reactions"],
            json!([{ "emoji": "+1", "count": 1, "reactedByMe": true }])
        );
    }
    let live = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let event = events.next().await.expect("an event").expect("event");
            if event.kind == EventKind::Reactions {
                return event;
            }
        }
    })
    .await
    .expect("a reactions event");
    assert_eq!(live.review_id, doc);
    // Ada reads the review before and after reacting: each reading is hers.
    let before = review(&team.ada, &doc).await;
    assert_eq!(
        before["comments"][0]["reactions"],
        json!([{ "emoji": "+1", "count": 1, "reactedByMe": false }])
    );
    let reactions = team
        .ada
        .api()
        .react(&doc, &comment_id, None, "+1", true)
        .await
        .expect("react");
    assert_eq!(reactions[0].count, 2);
    team.ada
        .put(&on_comment("rocket"), &json!({}))
        .await
        .expect(200);
    let after = review(&team.ada, &doc).await;
    assert_eq!(
        after["comments"][0]["reactions"],
        json!([
            { "emoji": "+1", "count": 2, "reactedByMe": true },
            { "emoji": "rocket", "count": 1, "reactedByMe": true }
        ])
    );
    let seen_by_cy = review(&team.cy, &doc).await;
    assert_eq!(
        seen_by_cy["comments"][0]["reactions"][0]["reactedByMe"],
        false
    );
    assert_eq!(
        after["commentsRevision"], revision,
        "reactions are not comment changes"
    );

    // On a reply, through its thread path.
    let on_reply =
        format!("/api/reviews/{doc}/comments/{comment_id}/thread/{message_id}/reactions/eyes");
    team.cy.put(&on_reply, &json!({})).await.expect(200);
    let read = review(&team.cy, &doc).await;
    assert_eq!(
        read["comments"][0]["thread"][0]["reactions"],
        json!([{ "emoji": "eyes", "count": 1, "reactedByMe": true }])
    );
    for _ in 0..2 {
        let removed = team.cy.delete(&on_reply).await;
        assert_eq!(removed.expect(200)["reactions"], json!([]));
    }
    team.bob.delete(&thumbs).await.expect(200);
    team.bob.delete(&thumbs).await.expect(200);
    let last = review(&team.bob, &doc).await;
    assert_eq!(
        last["comments"][0]["reactions"][0],
        json!({ "emoji": "+1", "count": 1, "reactedByMe": false })
    );
    assert_eq!(last["commentsRevision"], revision);

    for emoji in ["thumbsup", "%F0%9F%91%8D", "HEART", "+2"] {
        team.bob
            .put(&on_comment(emoji), &json!({}))
            .await
            .expect_error(400, "invalid_request");
    }
    team.bob
        .put(
            &format!("/api/reviews/{doc}/comments/cm_missing/reactions/heart"),
            &json!({}),
        )
        .await
        .expect_error(404, "not_found");
    team.bob
        .put(
            &format!("/api/reviews/{doc}/comments/{comment_id}/thread/msg_missing/reactions/heart"),
            &json!({}),
        )
        .await
        .expect_error(404, "not_found");
    team.ext
        .put(&on_comment("heart"), &json!({}))
        .await
        .expect_error(404, "not_found");
    team.server
        .agent()
        .put(&on_comment("heart"), &json!({}))
        .await
        .expect_error(403, "forbidden");
}

/// Notifications are fanned out after the commit: wait (up to 10 s) for `reason` to reach
/// `client`.
async fn wait_for_reason(client: &Client, reason: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let list = client.get("/api/notifications?limit=200").await;
        let found = list.expect(200)["notifications"]
            .as_array()
            .expect("notifications")
            .iter()
            .find(|n| n["reason"] == reason)
            .cloned();
        if let Some(found) = found {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no `{reason}` notification arrived"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn requests_decisions_and_assignments_notify() {
    let team = Team::new();
    let ed = team
        .server
        .user("ed@example.com", "Ed", &[], "docs,comments,access");
    let doc = team.document().await;
    team.ada
        .patch(
            &format!("/api/reviews/{doc}/access"),
            &json!({ "allowedUsers": [{ "email": "ed@example.com", "role": "editor" }] }),
        )
        .await
        .expect(200);
    team.ada
        .post(
            &format!("/api/reviews/{doc}/reviewers"),
            &json!({ "email": "bob@example.com", "dueAt": "2026-12-01" }),
        )
        .await
        .expect(201);
    let requested = wait_for_reason(&team.bob, "review_requested").await;
    assert_eq!(requested["reviewId"], doc.as_str());
    assert_eq!(requested["actor"]["displayName"], "Ada");
    assert!(
        requested["excerpt"]
            .as_str()
            .expect("excerpt")
            .contains("2026-12-01"),
        "{requested}"
    );

    team.bob
        .post(
            &format!("/api/reviews/{doc}/decisions"),
            &json!({ "decision": "changes_requested", "body": "The fox is slow." }),
        )
        .await
        .expect(201);
    for reader in [&team.ada, &ed] {
        let decided = wait_for_reason(reader, "decision").await;
        assert_eq!(decided["actor"]["displayName"], "Bob");
        assert!(
            decided["excerpt"]
                .as_str()
                .expect("excerpt")
                .contains("The fox is slow."),
            "{decided}"
        );
    }

    let written = comment(&team.ada, &doc, "Cy, could you look?").await;
    let comment_id = written["comment"]["id"].as_str().expect("id");
    team.bob
        .put(
            &format!("/api/reviews/{doc}/comments/{comment_id}/assignee"),
            &json!({ "email": "cy@example.com" }),
        )
        .await
        .expect(200);
    let assigned = wait_for_reason(&team.cy, "assigned").await;
    assert_eq!(assigned["commentId"], comment_id);
    assert_eq!(assigned["excerpt"], "Cy, could you look?");

    // An assignment that also mentions: the stronger reason (mention) wins, once.
    let mention = comment(&team.ada, &doc, "@bob please fix").await;
    let mention_id = mention["comment"]["id"].as_str().expect("id");
    team.ada
        .put(
            &format!("/api/reviews/{doc}/comments/{mention_id}/assignee"),
            &json!({ "email": "bob@example.com" }),
        )
        .await
        .expect(200);
    let for_bob = wait_for_reason(&team.bob, "assigned").await;
    assert_eq!(for_bob["commentId"], mention_id);
    let list = team.bob.get("/api/notifications?limit=200").await;
    let on_mention: Vec<&Value> = list.expect(200)["notifications"]
        .as_array()
        .expect("notifications")
        .iter()
        .filter(|n| n["commentId"] == mention_id)
        .collect();
    assert_eq!(
        on_mention.len(),
        2,
        "one per event: the mention and the assignment"
    );
}
