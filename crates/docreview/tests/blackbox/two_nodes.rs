//! Two `docreview serve` nodes on one PostgreSQL database, as behind a load balancer: what one
//! node writes the other reads at once (also over a read it answered before the write), the
//! revision check holds across nodes (exactly one winner per base revision, contiguous revisions
//! without one), credentials and shared tokens work on both, a version added on one node is
//! re-anchored and seen on the other, and a listener on one node hears changes made through the
//! other (LISTEN/NOTIFY).
//!
//! PostgreSQL only: without `DOCREVIEW_TEST_DATABASE_URL` every test returns early with a note
//! (two processes on one SQLite file are not a supported deployment).
//!
//! Requests go through the typed client, and the listeners read the typed event stream; raw
//! requests remain for the token-expiry header and for the write that is answered 429 (the
//! typed client's answers carry no headers, and a rate-limit test must see the 429 itself).

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use docreview_client::api::events::{EventKind, ReviewEvent};
use docreview_client::api::{
    AnchorState, CommentView, CreateReview, FinishRun, ListQuery, NewComment, NewReply,
    ReviewInput, ReviewView, RunStatus, StartRun,
};
use docreview_client::{Error, EventStream};
use serde_json::{Value, json};

use crate::support::{Client, SAMPLE_HTML, Server, quote, refused};

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
    node.client(client.token())
}

async fn read(client: &Client, id: &str) -> ReviewView {
    client.api().review(id, false).await.expect("read")
}

/// A typed value as JSON, to compare values whose types do not implement `PartialEq`.
fn json_of<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serializable")
}

fn comment_ids(review: &ReviewView) -> BTreeSet<String> {
    review.comments.iter().map(|c| c.id.clone()).collect()
}

fn find<'a>(review: &'a ReviewView, comment_id: &str) -> &'a CommentView {
    review
        .comments
        .iter()
        .find(|c| c.id == comment_id)
        .unwrap_or_else(|| panic!("comment {comment_id} in {review:?}"))
}

/// A document-wide comment, written only if the comments are at `base` (when given).
fn plain_comment(body: String, base: Option<i64>) -> NewComment {
    NewComment {
        body,
        category: None,
        locator: None,
        base_comments_revision: base,
        suggestion: None,
    }
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

/// An open event stream (`GET /api/reviews/{id}/events`), read event by event.
struct Events {
    stream: EventStream,
}

impl Events {
    async fn open(client: &Client, review_id: &str) -> Events {
        let stream = client
            .api()
            .events(review_id)
            .await
            .expect("open the event stream");
        Events { stream }
    }

    /// The next event; fails after 5 s.
    async fn next(&mut self) -> ReviewEvent {
        tokio::time::timeout(Duration::from_secs(5), self.stream.next())
            .await
            .expect("an event within 5 s")
            .expect("the stream stays open")
            .expect("a typed event")
    }
}

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_document_written_through_one_node_reads_the_same_through_the_other() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Shared", SAMPLE_HTML).await.review_id;
    let written = ada.note_on(&id, "quick brown fox", "Which fox?").await;
    let cid = written.comment.id;

    let via_a = read(&ada, &id).await;
    let via_b = read(&on(&b, &ada), &id).await;
    assert_eq!(via_b.comments_revision, 1);
    assert_eq!(find(&via_b, &cid).body, "Which fox?");
    assert_eq!(
        json_of(&via_b),
        json_of(&via_a),
        "both nodes answer the same document"
    );

    let listed = on(&b, &ada)
        .api()
        .list_reviews(&ListQuery::default())
        .await
        .expect("list")
        .reviews;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].review_id, id);
    assert_eq!(listed[0].open_comment_count, 1);
}

#[tokio::test]
async fn a_read_answered_before_a_write_through_the_other_node_shows_the_new_state() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let ada_on_b = on(&b, &ada);
    let id = ada.upload("Cached", SAMPLE_HTML).await.review_id;
    // Node B reads (and may cache) the document and the list before the write.
    for _ in 0..2 {
        assert_eq!(read(&ada_on_b, &id).await.comments_revision, 0);
        ada_on_b
            .api()
            .list_reviews(&ListQuery::default())
            .await
            .expect("list");
    }

    let written = ada.note_on(&id, "lazy dog", "Is it lazy?").await;
    let cid = written.comment.id;

    let seen = read(&ada_on_b, &id).await;
    assert_eq!(seen.comments_revision, 1);
    assert_eq!(comment_ids(&seen), BTreeSet::from([cid.clone()]));
    let listed = ada_on_b
        .api()
        .list_reviews(&ListQuery::default())
        .await
        .expect("list");
    assert_eq!(listed.reviews[0].open_comment_count, 1);

    // And back: a change through B shows on A, whose read of the thread came first.
    assert!(read(&ada, &id).await.comments[0].thread.is_empty());
    let reply = NewReply {
        body: "Very.".to_string(),
        run_id: None,
        base_comments_revision: None,
        base_thread_revision: None,
    };
    ada_on_b
        .api()
        .reply(&id, &cid, &reply)
        .await
        .expect("reply");
    let seen = read(&ada, &id).await;
    assert_eq!(seen.comments_revision, 2);
    assert_eq!(find(&seen, &cid).thread[0].body, "Very.");
}

// ---------------------------------------------------------------------------------------------
// Revisions
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_base_revision_made_stale_by_the_other_node_is_a_409_conflict() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Stale", SAMPLE_HTML).await.review_id;
    let first = ada
        .api()
        .add_comment(&id, &plain_comment("first".to_string(), Some(0)))
        .await
        .expect("first");
    assert_eq!(first.comments_revision, 1);

    let late = on(&b, &ada)
        .api()
        .add_comment(&id, &plain_comment("late".to_string(), Some(0)))
        .await;
    let conflict = refused(late, 409, "comments revision conflict");
    assert!(
        matches!(
            conflict,
            Error::RevisionConflict {
                current_revision: 1,
                ..
            }
        ),
        "{conflict:?}"
    );

    for node in [&a, &b] {
        let review = read(&on(node, &ada), &id).await;
        assert_eq!(review.comments_revision, 1);
        assert_eq!(review.comments.len(), 1);
        assert_eq!(review.comments[0].body, "first");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_on_both_nodes_with_the_same_base_get_exactly_one_success_per_round() {
    const WRITERS: usize = 16;
    const ROUNDS: i64 = 6;
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Contended", SAMPLE_HTML).await.review_id;
    let writers = writers_on_both(&a, &b, WRITERS);

    let mut winners = BTreeSet::new();
    for round in 0..ROUNDS {
        let attempts = writers.iter().enumerate().map(|(i, writer)| {
            let input = plain_comment(format!("round {round} writer {i}"), Some(round));
            let id = &id;
            async move { writer.api().add_comment(id, &input).await }
        });
        let results = futures::future::join_all(attempts).await;
        let mut created = Vec::new();
        for (i, result) in results.into_iter().enumerate() {
            match result {
                Ok(written) => {
                    assert_eq!(written.comments_revision, round + 1);
                    created.push(written.comment.id);
                }
                Err(Error::RevisionConflict {
                    current_revision, ..
                }) => {
                    assert_eq!(current_revision, round + 1, "round {round}, writer {i}");
                }
                Err(other) => panic!("round {round}, writer {i}: unexpected refusal {other:?}"),
            }
        }
        assert_eq!(created.len(), 1, "round {round}: exactly one writer wins");
        winners.extend(created);
    }

    for node in [&a, &b] {
        let review = read(&on(node, &ada), &id).await;
        assert_eq!(review.comments_revision, ROUNDS);
        assert_eq!(comment_ids(&review), winners);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_on_both_nodes_without_a_base_get_distinct_contiguous_revisions() {
    const WRITERS: usize = 16;
    const EACH: usize = 2;
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Busy", SAMPLE_HTML).await.review_id;
    let writers = writers_on_both(&a, &b, WRITERS);

    let attempts = writers.iter().enumerate().flat_map(|(i, writer)| {
        let id = &id;
        (0..EACH).map(move |n| {
            let input = plain_comment(format!("writer {i} note {n}"), None);
            async move { writer.api().add_comment(id, &input).await }
        })
    });
    let results = futures::future::join_all(attempts).await;
    let total = i64::try_from(WRITERS * EACH).expect("count");
    let mut revisions = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for result in results {
        let written = result.expect("every write without a base lands");
        revisions.insert(written.comments_revision);
        ids.insert(written.comment.id);
    }
    assert_eq!(revisions, (1..=total).collect::<BTreeSet<_>>());
    assert_eq!(ids.len(), WRITERS * EACH);

    for node in [&a, &b] {
        let review = read(&on(node, &ada), &id).await;
        assert_eq!(review.comments_revision, total);
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
    let id = a
        .client(Some(&token))
        .upload("Mine", SAMPLE_HTML)
        .await
        .review_id;

    let mut expiries = Vec::new();
    for node in [&a, &b] {
        let client = node.client(Some(&token));
        assert_eq!(read(&client, &id).await.title, "Mine");
        // Raw for the header the typed client does not show.
        let reply = client.get(&format!("/api/reviews/{id}")).await;
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
        let attempt = node.client(Some(&forged)).api().review(&id, false).await;
        refused(attempt, 401, "unauthorized");
    }
}

#[tokio::test]
async fn a_run_started_with_the_shared_agent_token_on_one_node_is_finished_on_the_other() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Agents", SAMPLE_HTML).await.review_id;

    let start = StartRun {
        title: Some("Pass".to_string()),
        ..StartRun::default()
    };
    let run_id = a
        .agent()
        .api()
        .start_run(&id, &start)
        .await
        .expect("start run")
        .id;
    let comment = NewComment {
        body: "Say which fox.".to_string(),
        category: None,
        locator: Some(quote("quick brown fox")),
        base_comments_revision: None,
        suggestion: None,
    };
    let cid = b
        .agent()
        .api()
        .add_run_comment(&id, &run_id, &comment)
        .await
        .expect("run comment")
        .comment
        .id;
    assert!(find(&read(&ada, &id).await, &cid).provisional);

    let finish = FinishRun {
        status: RunStatus::Completed,
        summary: None,
        base_comments_revision: None,
    };
    let finished = a
        .agent()
        .api()
        .finish_run(&id, &run_id, &finish)
        .await
        .expect("finish run");
    assert_eq!(finished.status, RunStatus::Completed);
    let seen = read(&on(&b, &ada), &id).await;
    assert_eq!(seen.comments_revision, 2);
    assert!(!find(&seen, &cid).provisional);
}

// ---------------------------------------------------------------------------------------------
// Versions
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_version_added_through_one_node_is_reanchored_and_shown_by_the_other() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let ada_on_b = on(&b, &ada);
    let created = ada.upload("Versions", SAMPLE_HTML).await;
    let id = created.review_id;
    let v1 = created.latest_version_id;
    let kept = ada.note_on(&id, "lazy dog", "kept").await.comment.id;
    let gone = ada
        .note_on(&id, "Second paragraph", "gone")
        .await
        .comment
        .id;
    // Node B reads the document and its structure first (and may cache both).
    assert_eq!(read(&ada_on_b, &id).await.latest_version_id, v1);
    let before = ada_on_b
        .api()
        .dom_context(&id, None)
        .await
        .expect("dom-context");
    assert_eq!(before.sections.len(), 3);

    let v2_html = "<h1 id=\"intro\">Introduction</h1><p>The quick brown fox jumps over the lazy dog.</p>\
<h2 id=\"summary\">Summary</h2><p>Nothing else.</p>";
    let updated = ada.add_version(&id, v2_html).await;
    let v2 = updated.latest_version_id.clone();
    assert_ne!(v1, v2);

    let seen = read(&ada_on_b, &id).await;
    assert_eq!(seen.latest_version_id, v2);
    assert_eq!(
        seen.comments_revision, 3,
        "two comments, then one re-anchoring"
    );
    assert_eq!(seen.source.versions.len(), 2);
    assert_eq!(find(&seen, &kept).anchor.state, AnchorState::Exact);
    assert_eq!(find(&seen, &kept).anchor.version_id, v2);
    assert_eq!(find(&seen, &gone).anchor.state, AnchorState::Orphaned);
    assert_eq!(json_of(&seen.comments), json_of(&updated.comments));

    let after = ada_on_b
        .api()
        .dom_context(&id, None)
        .await
        .expect("dom-context");
    let ids: Vec<&str> = after
        .sections
        .iter()
        .map(|section| section.id.as_str())
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
    let id = ada.upload("Live", SAMPLE_HTML).await.review_id;
    let mut events = Events::open(&on(&b, &ada), &id).await;
    let first = events.next().await;
    assert_eq!(first.kind, EventKind::Review);
    assert_eq!(first.comments_revision, 0);

    ada.note_on(&id, "quick brown fox", "heard on B").await;
    let change = events.next().await;
    assert_eq!(change.kind, EventKind::Comments);
    assert_eq!(change.review_id, id);
    assert_eq!(change.comments_revision, 1);
    // `changeSeq` is a number: the typed event would not have decoded otherwise.
}

#[tokio::test]
async fn a_listener_on_one_node_hears_a_version_added_through_the_other() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Live", SAMPLE_HTML).await.review_id;
    let mut events = Events::open(&on(&b, &ada), &id).await;
    assert_eq!(events.next().await.kind, EventKind::Review);

    let updated = ada
        .add_version(&id, "<h1>New</h1><p>The quick brown fox.</p>")
        .await;
    let change = events.next().await;
    assert_eq!(change.kind, EventKind::Version);
    assert_eq!(change.review_id, id);
    assert_eq!(change.latest_version_id, updated.latest_version_id);
    assert_eq!(change.comments_revision, 1);
}

#[tokio::test]
async fn listeners_on_both_nodes_hear_changes_made_through_either_node_in_order() {
    let Some((a, b)) = two_nodes() else { return };
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Live", SAMPLE_HTML).await.review_id;
    let mut on_a = Events::open(&ada, &id).await;
    let mut on_b = Events::open(&on(&b, &ada), &id).await;
    assert_eq!(on_a.next().await.kind, EventKind::Review);
    assert_eq!(on_b.next().await.kind, EventKind::Review);

    ada.note_on(&id, "quick brown fox", "one").await;
    on(&b, &ada).note_on(&id, "lazy dog", "two").await;
    for events in [&mut on_a, &mut on_b] {
        for expected in 1..=2 {
            let change = events.next().await;
            assert_eq!(change.kind, EventKind::Comments);
            assert_eq!(change.comments_revision, expected);
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
    for i in 0..LIMIT - 1 {
        let input = CreateReview {
            review: ReviewInput {
                title: Some(format!("Doc {i}")),
                ..ReviewInput::default()
            },
            project: None,
        };
        a.importer()
            .api()
            .create_review(&input)
            .await
            .expect("a write under the limit");
    }
    // Raw on node B: the point is the 429 and its Retry-After.
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
