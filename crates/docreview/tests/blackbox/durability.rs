//! Durability (DESIGN.md §6, "nothing acknowledged is lost"): users, tokens, documents, comments,
//! replies, status events, runs and `commentsRevision` survive a clean restart and a `kill -9`
//! of the server on the same data directory; every write that was answered 2xx before a crash is
//! there afterwards, including writes acknowledged while many others were still in flight.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::{Client, Server};

const HTML: &str = "<!doctype html><html><body>\
<h1 id=\"intro\">Intro</h1><p>The cat sat on the mat.</p>\
<h2 id=\"later\">Later</h2><p>Again the dog lay on the rug.</p></body></html>";

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}

fn review_id(review: &Value) -> String {
    review["reviewId"].as_str().expect("reviewId").to_string()
}

/// The same credentials, pointed at the server's current address (a restart picks a new port).
fn again(server: &Server, client: &Client) -> Client {
    server.client(client.token.as_deref())
}

async fn read(client: &Client, id: &str) -> Value {
    let reply = client.get(&format!("/api/reviews/{id}")).await;
    reply.expect(200)["review"].clone()
}

async fn read_with_deleted(client: &Client, id: &str) -> Value {
    let reply = client
        .get(&format!("/api/reviews/{id}?includeDeleted=true"))
        .await;
    reply.expect(200)["review"].clone()
}

fn comment_ids(review: &Value) -> BTreeSet<String> {
    review["comments"]
        .as_array()
        .expect("comments")
        .iter()
        .map(id_of)
        .collect()
}

/// Writes one of every kind of comment change on a fresh document; returns the review id.
async fn every_kind_of_change(ada: &Client, vic: &Client, agent: &Client) -> String {
    let review = ada.create_review("Pets", HTML).await;
    let id = review_id(&review);
    let base = format!("/api/reviews/{id}");

    let kept = ada.comment_on(&id, "cat sat", "Which cat?").await;
    let kept = id_of(&kept["comment"]);
    ada.patch(
        &format!("{base}/comments/{kept}"),
        &json!({ "body": "Which cat, exactly?" }),
    )
    .await
    .expect(200);
    let reply = vic
        .post(
            &format!("{base}/comments/{kept}/thread"),
            &json!({ "body": "The grey one." }),
        )
        .await;
    let message = id_of(&reply.expect(201)["message"]);
    vic.patch(
        &format!("{base}/comments/{kept}/thread/{message}"),
        &json!({ "body": "The grey one, I think." }),
    )
    .await
    .expect(200);
    ada.post(
        &format!("{base}/comments/{kept}/status-events"),
        &json!({ "status": "closed" }),
    )
    .await
    .expect(201);
    ada.patch(
        &format!("{base}/comments/{kept}/anchor"),
        &json!({ "locator": { "quote": { "exact": "dog lay" } } }),
    )
    .await
    .expect(200);

    let undone = ada
        .post(
            &format!("{base}/comments"),
            &json!({ "body": "never mind", "category": "consult" }),
        )
        .await;
    let undone = id_of(&undone.expect(201)["comment"]);
    ada.delete(&format!("{base}/comments/{undone}"))
        .await
        .expect(200);

    for outcome in ["completed", "cancelled"] {
        let run = agent
            .post(
                &format!("{base}/ai-review-runs"),
                &json!({ "title": outcome }),
            )
            .await;
        let run = id_of(&run.expect(201)["run"]);
        agent
            .post(
                &format!("{base}/ai-review-runs/{run}/comments"),
                &json!({ "body": format!("{outcome} remark"), "category": "revise",
                         "locator": { "sectionId": "intro" } }),
            )
            .await
            .expect(201);
        agent
            .patch(
                &format!("{base}/ai-review-runs/{run}"),
                &json!({ "status": outcome, "summary": "done" }),
            )
            .await
            .expect(200);
    }
    let running = agent
        .post(
            &format!("{base}/ai-review-runs"),
            &json!({ "kind": "voice" }),
        )
        .await;
    let running = id_of(&running.expect(201)["run"]);
    agent
        .post(
            &format!("{base}/ai-review-runs/{running}/comments"),
            &json!({ "body": "in progress" }),
        )
        .await
        .expect(201);
    id
}

#[tokio::test]
async fn everything_written_survives_a_clean_restart() {
    let mut server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access,comments");
    let vic = server.user("vic@example.com", "Vic", &[], "comments");
    let agent = server.agent();
    let id = every_kind_of_change(&ada, &vic, &agent).await;
    let secret = ada
        .post(
            "/api/reviews",
            &json!({ "review": { "title": "Secret", "source": { "html": HTML },
                                 "access": { "mode": "restricted" } } }),
        )
        .await;
    let secret = review_id(&secret.expect(201)["review"]);
    ada.comment_on(&secret, "rug", "private remark").await;

    let ada_view = read(&ada, &id).await;
    let ada_deleted = read_with_deleted(&ada, &id).await;
    let vic_view = read(&vic, &id).await;
    let secret_view = read(&ada, &secret).await;
    assert_eq!(ada_view["commentsRevision"], 13);
    assert_eq!(secret_view["commentsRevision"], 1);

    server.restart();
    let (ada, vic, agent) = (
        again(&server, &ada),
        again(&server, &vic),
        again(&server, &agent),
    );
    assert_eq!(read(&ada, &id).await, ada_view);
    assert_eq!(read_with_deleted(&ada, &id).await, ada_deleted);
    assert_eq!(read(&vic, &id).await, vic_view);
    assert_eq!(read(&ada, &secret).await, secret_view);
    // Sharing survived: the restricted document is still invisible to Vic.
    vic.get(&format!("/api/reviews/{secret}"))
        .await
        .expect_error(404, "not_found");

    // The revision counter carries on from where it was.
    let next = ada
        .post(
            &format!("/api/reviews/{id}/comments"),
            &json!({ "body": "after restart", "baseCommentsRevision": 13 }),
        )
        .await;
    assert_eq!(next.expect(201)["commentsRevision"], 14);
    // The run that was running before the restart can still be finished.
    let running = ada_view["aiReviewRuns"][2]["id"]
        .as_str()
        .expect("running run")
        .to_string();
    assert_eq!(ada_view["aiReviewRuns"][2]["status"], "running");
    let finished = agent
        .patch(
            &format!("/api/reviews/{id}/ai-review-runs/{running}"),
            &json!({ "status": "completed" }),
        )
        .await;
    assert_eq!(finished.expect(200)["run"]["status"], "completed");
    assert_eq!(read(&ada, &id).await["commentsRevision"], 15);
}

#[tokio::test]
async fn every_acknowledged_change_survives_kill_9() {
    let mut server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access,comments");
    let vic = server.user("vic@example.com", "Vic", &[], "comments");
    let id = every_kind_of_change(&ada, &vic, &server.agent()).await;
    let before = read_with_deleted(&ada, &id).await;
    let vic_before = read(&vic, &id).await;

    server.kill();
    server.restart();
    let (ada, vic) = (again(&server, &ada), again(&server, &vic));
    assert_eq!(read_with_deleted(&ada, &id).await, before);
    assert_eq!(read(&vic, &id).await, vic_before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_acknowledged_concurrent_comments_survive_kill_9() {
    const WRITES: usize = 200;
    const DOCS: usize = 4;
    let mut server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let mut ids = Vec::new();
    for d in 0..DOCS {
        ids.push(review_id(
            &ada.create_review(&format!("Doc {d}"), HTML).await,
        ));
    }
    let attempts = (0..WRITES).map(|i| {
        let (ada, id) = (ada.clone(), ids[i % DOCS].clone());
        async move {
            let reply = ada
                .post(
                    &format!("/api/reviews/{id}/comments"),
                    &json!({ "body": format!("write {i}"), "locator": { "quote": { "exact": "mat" } } }),
                )
                .await;
            (id, id_of(&reply.expect(201)["comment"]))
        }
    });
    let acknowledged = futures::future::join_all(attempts).await;
    assert_eq!(acknowledged.len(), WRITES);

    server.kill();
    server.restart();
    let ada = again(&server, &ada);
    for id in &ids {
        let review = read(&ada, id).await;
        let stored = comment_ids(&review);
        let acked: BTreeSet<String> = acknowledged
            .iter()
            .filter(|(doc, _)| doc == id)
            .map(|(_, cid)| cid.clone())
            .collect();
        assert_eq!(acked.len(), WRITES / DOCS);
        let missing: Vec<&String> = acked.difference(&stored).collect();
        assert!(
            missing.is_empty(),
            "{id}: acknowledged but lost: {missing:?}"
        );
        assert_eq!(stored.len(), WRITES / DOCS);
        assert_eq!(review["commentsRevision"], WRITES / DOCS);
    }
}

/// Sends one comment, tolerating a dead server: `Some(id)` only for an acknowledged (201) write.
async fn try_comment(client: &Client, id: &str, body: &str) -> Option<String> {
    let response = client
        .raw("POST", &format!("/api/reviews/{id}/comments"))
        .json(&json!({ "body": body }))
        .send()
        .await
        .ok()?;
    if response.status().as_u16() != 201 {
        return None;
    }
    let json: Value = response.json().await.ok()?;
    json["comment"]["id"].as_str().map(str::to_string)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn comments_acknowledged_while_others_are_in_flight_survive_kill_9() {
    const WORKERS: usize = 32;
    const KILL_AFTER: usize = 200;
    let mut server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let mut ids = Vec::new();
    for d in 0..4 {
        ids.push(review_id(
            &ada.create_review(&format!("Doc {d}"), HTML).await,
        ));
    }
    let acked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let count = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let (ada, id) = (ada.clone(), ids[w % ids.len()].clone());
        let (acked, count) = (Arc::clone(&acked), Arc::clone(&count));
        workers.push(tokio::spawn(async move {
            for n in 0.. {
                match try_comment(&ada, &id, &format!("worker {w} write {n}")).await {
                    Some(cid) => {
                        acked.lock().expect("lock").push((id.clone(), cid));
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                    None => break,
                }
            }
        }));
    }
    while count.load(Ordering::SeqCst) < KILL_AFTER {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    // Crash while the workers are still writing.
    server.kill();
    for worker in workers {
        worker.await.expect("worker");
    }
    let acked = acked.lock().expect("lock").clone();
    assert!(acked.len() >= KILL_AFTER);

    server.restart();
    let ada = again(&server, &ada);
    for id in &ids {
        let review = read(&ada, id).await;
        let stored = comment_ids(&review);
        let missing: Vec<&String> = acked
            .iter()
            .filter(|(doc, cid)| doc == id && !stored.contains(cid))
            .map(|(_, cid)| cid)
            .collect();
        assert!(
            missing.is_empty(),
            "{id}: acknowledged but lost: {missing:?}"
        );
        // Only creates happened: the counter and the comments were committed together.
        assert_eq!(
            review["commentsRevision"],
            stored.len(),
            "{id}: revision and comments disagree"
        );
    }
    // The restarted server accepts writes on every document at the surviving revision.
    for id in &ids {
        let revision = read(&ada, id).await["commentsRevision"].clone();
        let next = ada
            .post(
                &format!("/api/reviews/{id}/comments"),
                &json!({ "body": "after the crash", "baseCommentsRevision": revision }),
            )
            .await;
        assert_eq!(
            next.expect(201)["commentsRevision"],
            revision.as_i64().expect("revision") + 1
        );
    }
}
