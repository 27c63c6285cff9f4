//! Two `docreview serve` nodes on one PostgreSQL database, as behind a load balancer: what one
//! node writes the other reads at once (also over a read it answered before the write), the
//! revision check holds across nodes (exactly one winner per base revision, contiguous revisions
//! without one), credentials and shared tokens work on both, a version added on one node is
//! re-anchored and seen on the other, and a listener on one node hears changes made through the
//! other (LISTEN/NOTIFY).
//!
//! PostgreSQL only: without `DOCREVIEW_TEST_DATABASE_URL` every test returns early with a note
//! (two processes on one SQLite file are not a supported deployment).

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Client, SAMPLE_HTML, Server, html_part};

/// Node A and node B on one fresh database, or `None` (with a note) on SQLite.
fn two_nodes() -> Option<(Server, Server)> {
    if !support::on_postgres() {
        eprintln!(
            "note: {} is not set; the two-node tests need PostgreSQL and were skipped",
            support::TEST_DATABASE_URL_VAR
        );
        return None;
    }
    let a = Server::start();
    let b = a.start_second_node();
    assert_ne!(a.base, b.base, "two processes, two addresses");
    Some((a, b))
}

/// The same credentials, sent to `node`.
fn on(node: &Server, client: &Client) -> Client {
    node.client(client.token.as_deref())
}

fn review_id(review: &Value) -> String {
    review["reviewId"].as_str().expect("reviewId").to_string()
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}

async fn read(client: &Client, id: &str) -> Value {
    client.get(&format!("/api/reviews/{id}")).await.expect(200)["review"].clone()
}

fn comment_ids(review: &Value) -> BTreeSet<String> {
    review["comments"]
        .as_array()
        .expect("comments")
        .iter()
        .map(id_of)
        .collect()
}

fn find<'a>(review: &'a Value, comment_id: &str) -> &'a Value {
    review["comments"]
        .as_array()
        .expect("comments")
        .iter()
        .find(|c| c["id"] == comment_id)
        .unwrap_or_else(|| panic!("comment {comment_id} in {review}"))
}

/// Users `w0…` holding the `comments` scope, alternately on node A and node B.
fn writers_on_both(a: &Server, b: &Server, count: usize) -> Vec<Client> {
    (0..count)
        .map(|i| {
            let writer = a.user(
                &format!("w{i}@example.com"),
                &format!("W{i}"),
                &[],
                "comments",
            );
            if i % 2 == 0 { writer } else { on(b, &writer) }
        })
        .collect()
}

async fn add_version(client: &Client, id: &str, html: &str) -> Value {
    let form = reqwest::multipart::Form::new().part("file", html_part(html.as_bytes(), "v2.html"));
    client
        .multipart(&format!("/api/reviews/{id}/import-html"), form)
        .await
        .expect(201)["review"]
        .clone()
}

/// An open event stream (`GET /api/reviews/{id}/events`), read event by event.
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
        assert_eq!(
            response.status().as_u16(),
            200,
            "GET /api/reviews/{review_id}/events"
        );
        Events {
            response,
            buffer: String::new(),
        }
    }

    /// The next event as `(name, data)`, skipping keep-alive comments; fails after 5 s.
    async fn next(&mut self) -> (String, Value) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
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
                    let data = serde_json::from_str(&data)
                        .unwrap_or_else(|_| panic!("event data is JSON: {data}"));
                    return (name, data);
                }
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

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_document_written_through_one_node_reads_the_same_through_the_other() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = review_id(&ada.create_review("Shared", SAMPLE_HTML).await);
    let written = ada.comment_on(&id, "quick brown fox", "Which fox?").await;
    let cid = id_of(&written["comment"]);

    let via_a = read(&ada, &id).await;
    let via_b = read(&on(&b, &ada), &id).await;
    assert_eq!(via_b["commentsRevision"], 1);
    assert_eq!(find(&via_b, &cid)["body"], "Which fox?");
    assert_eq!(via_b, via_a, "both nodes answer the same document");

    let listed = on(&b, &ada).get("/api/reviews").await;
    let listed = listed.expect(200)["reviews"]
        .as_array()
        .expect("reviews")
        .clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["reviewId"], id.as_str());
    assert_eq!(listed[0]["openCommentCount"], 1);
}

#[tokio::test]
async fn a_read_answered_before_a_write_through_the_other_node_shows_the_new_state() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let ada_on_b = on(&b, &ada);
    let id = review_id(&ada.create_review("Cached", SAMPLE_HTML).await);
    // Node B reads (and may cache) the document and the list before the write.
    for _ in 0..2 {
        assert_eq!(read(&ada_on_b, &id).await["commentsRevision"], 0);
        ada_on_b.get("/api/reviews").await.expect(200);
    }

    let written = ada.comment_on(&id, "lazy dog", "Is it lazy?").await;
    let cid = id_of(&written["comment"]);

    let seen = read(&ada_on_b, &id).await;
    assert_eq!(seen["commentsRevision"], 1);
    assert_eq!(comment_ids(&seen), BTreeSet::from([cid.clone()]));
    let listed = ada_on_b.get("/api/reviews").await;
    assert_eq!(listed.expect(200)["reviews"][0]["openCommentCount"], 1);

    // And back: a change through B shows on A, whose read of the thread came first.
    assert_eq!(read(&ada, &id).await["comments"][0]["thread"], json!([]));
    ada_on_b
        .post(
            &format!("/api/reviews/{id}/comments/{cid}/thread"),
            &json!({ "body": "Very." }),
        )
        .await
        .expect(201);
    let seen = read(&ada, &id).await;
    assert_eq!(seen["commentsRevision"], 2);
    assert_eq!(find(&seen, &cid)["thread"][0]["body"], "Very.");
}

// ---------------------------------------------------------------------------------------------
// Revisions
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_base_revision_made_stale_by_the_other_node_is_a_409_conflict() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = review_id(&ada.create_review("Stale", SAMPLE_HTML).await);
    let path = format!("/api/reviews/{id}/comments");
    let first = ada
        .post(
            &path,
            &json!({ "body": "first", "baseCommentsRevision": 0 }),
        )
        .await;
    assert_eq!(first.expect(201)["commentsRevision"], 1);

    let late = on(&b, &ada)
        .post(&path, &json!({ "body": "late", "baseCommentsRevision": 0 }))
        .await;
    let body = late.expect_error(409, "comments revision conflict");
    assert_eq!(body["currentRevision"], 1);

    for node in [&a, &b] {
        let review = read(&on(node, &ada), &id).await;
        assert_eq!(review["commentsRevision"], 1);
        assert_eq!(review["comments"].as_array().map(Vec::len), Some(1));
        assert_eq!(review["comments"][0]["body"], "first");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_on_both_nodes_with_the_same_base_get_exactly_one_success_per_round() {
    const WRITERS: usize = 16;
    const ROUNDS: i64 = 6;
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = review_id(&ada.create_review("Contended", SAMPLE_HTML).await);
    let path = format!("/api/reviews/{id}/comments");
    let writers = writers_on_both(&a, &b, WRITERS);

    let mut winners = BTreeSet::new();
    for round in 0..ROUNDS {
        let attempts = writers.iter().enumerate().map(|(i, writer)| {
            let (writer, path) = (writer.clone(), path.clone());
            async move {
                writer
                    .post(
                        &path,
                        &json!({ "body": format!("round {round} writer {i}"), "baseCommentsRevision": round }),
                    )
                    .await
            }
        });
        let replies = futures::future::join_all(attempts).await;
        let mut created = Vec::new();
        for (i, reply) in replies.iter().enumerate() {
            match reply.status {
                201 => {
                    assert_eq!(reply.json["commentsRevision"], round + 1);
                    created.push(id_of(&reply.json["comment"]));
                }
                409 => {
                    let body = reply.expect_error(409, "comments revision conflict");
                    assert_eq!(
                        body["currentRevision"],
                        round + 1,
                        "round {round}, writer {i}"
                    );
                }
                other => panic!(
                    "round {round}, writer {i}: unexpected status {other}: {}",
                    reply.text
                ),
            }
        }
        assert_eq!(created.len(), 1, "round {round}: exactly one writer wins");
        winners.extend(created);
    }

    for node in [&a, &b] {
        let review = read(&on(node, &ada), &id).await;
        assert_eq!(review["commentsRevision"], ROUNDS);
        assert_eq!(comment_ids(&review), winners);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_on_both_nodes_without_a_base_get_distinct_contiguous_revisions() {
    const WRITERS: usize = 16;
    const EACH: usize = 2;
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = review_id(&ada.create_review("Busy", SAMPLE_HTML).await);
    let path = format!("/api/reviews/{id}/comments");
    let writers = writers_on_both(&a, &b, WRITERS);

    let attempts = writers.iter().enumerate().flat_map(|(i, writer)| {
        (0..EACH).map({
            let (writer, path) = (writer.clone(), path.clone());
            move |n| {
                let (writer, path) = (writer.clone(), path.clone());
                async move {
                    writer
                        .post(&path, &json!({ "body": format!("writer {i} note {n}") }))
                        .await
                }
            }
        })
    });
    let replies = futures::future::join_all(attempts).await;
    let total = i64::try_from(WRITERS * EACH).expect("count");
    let mut revisions = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for reply in &replies {
        let body = reply.expect(201);
        revisions.insert(body["commentsRevision"].as_i64().expect("revision"));
        ids.insert(id_of(&body["comment"]));
    }
    assert_eq!(revisions, (1..=total).collect::<BTreeSet<_>>());
    assert_eq!(ids.len(), WRITERS * EACH);

    for node in [&a, &b] {
        let review = read(&on(node, &ada), &id).await;
        assert_eq!(review["commentsRevision"], total);
        assert_eq!(comment_ids(&review), ids);
    }
}

// ---------------------------------------------------------------------------------------------
// Credentials
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_personal_token_issued_once_is_accepted_by_both_nodes() {
    let Some((a, b)) = two_nodes() else { return };
    a.create_user("ada@example.com", "Ada", &[]);
    let token = a.issue_token("ada@example.com", "docs,comments");
    let id = review_id(
        &a.client(Some(&token))
            .create_review("Mine", SAMPLE_HTML)
            .await,
    );

    let mut expiries = Vec::new();
    for node in [&a, &b] {
        let reply = node
            .client(Some(&token))
            .get(&format!("/api/reviews/{id}"))
            .await;
        assert_eq!(reply.expect(200)["review"]["title"], "Mine");
        expiries.push(
            reply
                .header("x-cr-token-expires-at")
                .expect("x-cr-token-expires-at")
                .to_string(),
        );
    }
    assert_eq!(expiries[0], expiries[1], "one token, one expiry");

    // A token nobody issued is refused by both.
    // Change the last character to one it is not (a fixed "x" would sometimes be the same).
    let last = if token.ends_with('x') { 'y' } else { 'x' };
    let forged = format!("{}{last}", &token[..token.len() - 1]);
    for node in [&a, &b] {
        node.client(Some(&forged))
            .get(&format!("/api/reviews/{id}"))
            .await
            .expect_error(401, "unauthorized");
    }
}

#[tokio::test]
async fn a_run_started_with_the_shared_agent_token_on_one_node_is_finished_on_the_other() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = review_id(&ada.create_review("Agents", SAMPLE_HTML).await);
    let runs = format!("/api/reviews/{id}/ai-review-runs");

    let started = a.agent().post(&runs, &json!({ "title": "Pass" })).await;
    let run_id = id_of(&started.expect(201)["run"]);
    let written = b
        .agent()
        .post(
            &format!("{runs}/{run_id}/comments"),
            &json!({ "body": "Say which fox.", "locator": { "quote": { "exact": "quick brown fox" } } }),
        )
        .await;
    let cid = id_of(&written.expect(201)["comment"]);
    assert_eq!(find(&read(&ada, &id).await, &cid)["provisional"], true);

    let finished = a
        .agent()
        .patch(
            &format!("{runs}/{run_id}"),
            &json!({ "status": "completed" }),
        )
        .await;
    assert_eq!(finished.expect(200)["run"]["status"], "completed");
    let seen = read(&on(&b, &ada), &id).await;
    assert_eq!(seen["commentsRevision"], 2);
    assert_eq!(find(&seen, &cid)["provisional"], false);
}

// ---------------------------------------------------------------------------------------------
// Versions
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_version_added_through_one_node_is_reanchored_and_shown_by_the_other() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let ada_on_b = on(&b, &ada);
    let created = ada.create_review("Versions", SAMPLE_HTML).await;
    let id = review_id(&created);
    let v1 = created["latestVersionId"].as_str().expect("v1").to_string();
    let kept = id_of(&ada.comment_on(&id, "lazy dog", "kept").await["comment"]);
    let gone = id_of(&ada.comment_on(&id, "Second paragraph", "gone").await["comment"]);
    // Node B reads the document and its structure first (and may cache both).
    assert_eq!(read(&ada_on_b, &id).await["latestVersionId"], v1.as_str());
    let before = ada_on_b
        .get(&format!("/api/reviews/{id}/dom-context"))
        .await;
    assert_eq!(
        before.expect(200)["sections"].as_array().map(Vec::len),
        Some(3)
    );

    let v2_html = "<h1 id=\"intro\">Introduction</h1><p>The quick brown fox jumps over the lazy dog.</p>\
<h2 id=\"summary\">Summary</h2><p>Nothing else.</p>";
    let updated = add_version(&ada, &id, v2_html).await;
    let v2 = updated["latestVersionId"].as_str().expect("v2").to_string();
    assert_ne!(v1, v2);

    let seen = read(&ada_on_b, &id).await;
    assert_eq!(seen["latestVersionId"], v2.as_str());
    assert_eq!(
        seen["commentsRevision"], 3,
        "two comments, then one re-anchoring"
    );
    assert_eq!(seen["source"]["versions"].as_array().map(Vec::len), Some(2));
    assert_eq!(find(&seen, &kept)["anchor"]["state"], "exact");
    assert_eq!(find(&seen, &kept)["anchor"]["versionId"], v2.as_str());
    assert_eq!(find(&seen, &gone)["anchor"]["state"], "orphaned");
    assert_eq!(seen["comments"], updated["comments"]);

    let after = ada_on_b
        .get(&format!("/api/reviews/{id}/dom-context"))
        .await;
    let ids: Vec<&str> = after.expect(200)["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .map(|section| section["id"].as_str().expect("section id"))
        .collect();
    assert_eq!(ids, ["intro", "summary"]);
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_listener_on_one_node_hears_a_comment_written_through_the_other() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = review_id(&ada.create_review("Live", SAMPLE_HTML).await);
    let mut events = Events::open(&on(&b, &ada), &id).await;
    let (name, first) = events.next().await;
    assert_eq!(name, "review");
    assert_eq!(first["commentsRevision"], 0);

    ada.comment_on(&id, "quick brown fox", "heard on B").await;
    let (name, change) = events.next().await;
    assert_eq!(name, "comments");
    assert_eq!(change["reviewId"], id.as_str());
    assert_eq!(change["commentsRevision"], 1);
    assert!(change["changeSeq"].is_number(), "changeSeq: {change}");
}

#[tokio::test]
async fn a_listener_on_one_node_hears_a_version_added_through_the_other() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = review_id(&ada.create_review("Live", SAMPLE_HTML).await);
    let mut events = Events::open(&on(&b, &ada), &id).await;
    assert_eq!(events.next().await.0, "review");

    let updated = add_version(&ada, &id, "<h1>New</h1><p>The quick brown fox.</p>").await;
    let (name, change) = events.next().await;
    assert_eq!(name, "version");
    assert_eq!(change["reviewId"], id.as_str());
    assert_eq!(change["latestVersionId"], updated["latestVersionId"]);
    assert_eq!(change["commentsRevision"], 1);
}

#[tokio::test]
async fn listeners_on_both_nodes_hear_changes_made_through_either_node_in_order() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = review_id(&ada.create_review("Live", SAMPLE_HTML).await);
    let mut on_a = Events::open(&ada, &id).await;
    let mut on_b = Events::open(&on(&b, &ada), &id).await;
    assert_eq!(on_a.next().await.0, "review");
    assert_eq!(on_b.next().await.0, "review");

    ada.comment_on(&id, "quick brown fox", "one").await;
    on(&b, &ada).comment_on(&id, "lazy dog", "two").await;
    for events in [&mut on_a, &mut on_b] {
        for expected in 1..=2 {
            let (name, change) = events.next().await;
            assert_eq!(name, "comments");
            assert_eq!(change["commentsRevision"], expected);
        }
    }
}

/// Write rate limits count across nodes: what a credential wrote through node A counts on
/// node B (within a quarter second of exchange), so behind a load balancer a client gets its
/// limit once, not once per node.
#[tokio::test]
async fn write_rate_limits_are_shared_between_nodes() {
    const LIMIT: usize = 10;
    if !support::on_postgres() {
        eprintln!("note: the two-node tests need PostgreSQL and were skipped");
        return;
    }
    let limit = LIMIT.to_string();
    let a = Server::start_with(&[("DOCREVIEW_RATE_LIMIT_WRITES_PER_CREDENTIAL", &limit)]);
    let b = a.start_second_node();
    let create = |node: &Server, i: usize| {
        let client = node.importer();
        async move {
            client
                .post(
                    "/api/reviews",
                    &json!({ "review": { "title": format!("Doc {i}") } }),
                )
                .await
        }
    };
    for i in 0..LIMIT - 1 {
        create(&a, i).await.expect(201);
    }
    // Node B learns A's count at its next exchange: the writes it admits before then, plus
    // A's, reach the limit well before B alone would.
    let mut admitted_on_b = 0;
    let refused = loop {
        let reply = create(&b, 100 + admitted_on_b).await;
        if reply.status == 429 {
            break reply;
        }
        reply.expect(201);
        admitted_on_b += 1;
        assert!(
            admitted_on_b < LIMIT,
            "node B admitted its own full limit: the counts were not shared"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    refused.expect_error(429, "rate_limited");
    assert!(refused.header("retry-after").is_some());
}
