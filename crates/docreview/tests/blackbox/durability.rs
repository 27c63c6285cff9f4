//! Durability (DESIGN.md §6, "nothing acknowledged is lost"): users, tokens, documents, comments,
//! replies, status events, runs and `commentsRevision` survive a clean restart and a `kill -9`
//! of the server on the same data directory; every write that was answered 2xx before a crash is
//! there afterwards, including writes acknowledged while many others were still in flight.
//!
//! Every request goes through the typed client: a write counts as acknowledged when the typed
//! call returned its answer (a 2xx, read whole), and the documents before and after are compared
//! as the typed `Review` reads them.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use docreview_client::api::{
    AccessMode, Category, CommentStatus, FinishRun, Locator, NewComment, NewReply, Reanchor,
    ReviewInput, ReviewView, RunKind, RunStatus, StartRun, StatusChange, TextEdit,
};
use serde_json::Value;

use crate::support::{Client, Server, quote, refused};
use crate::support::{access, review_input};

const HTML: &str = "<!doctype html><html><body>\
<h1 id=\"intro\">Intro</h1><p>The cat sat on the mat.</p>\
<h2 id=\"later\">Later</h2><p>Again the dog lay on the rug.</p></body></html>";

/// The same credentials, pointed at the server's current address (a restart picks a new port).
fn again(server: &Server, client: &Client) -> Client {
    server.client(client.token())
}

async fn read(client: &Client, id: &str) -> ReviewView {
    client.api().review(id, false).await.expect("read")
}

async fn read_with_deleted(client: &Client, id: &str) -> ReviewView {
    client
        .api()
        .review(id, true)
        .await
        .expect("read with deleted")
}

/// A document as JSON, to compare whole reads (the typed views do not implement `PartialEq`).
fn json_of(review: &ReviewView) -> Value {
    serde_json::to_value(review).expect("serializable")
}

fn comment_ids(review: &ReviewView) -> BTreeSet<String> {
    review.comments.iter().map(|c| c.id.clone()).collect()
}

fn comment(body: &str, category: Option<Category>, locator: Option<Locator>) -> NewComment {
    NewComment {
        body: body.to_string(),
        category,
        locator,
        base_comments_revision: None,
        suggestion: None,
    }
}

fn edit(body: &str) -> TextEdit {
    TextEdit {
        body: body.to_string(),
        base_comments_revision: None,
        base_thread_revision: None,
    }
}

/// Writes one of every kind of comment change on a fresh document; returns the review id.
async fn every_kind_of_change(ada: &Client, vic: &Client, agent: &Client) -> String {
    let id = ada.upload("Pets", HTML).await.review_id;

    let kept = ada.note_on(&id, "cat sat", "Which cat?").await.comment.id;
    ada.api()
        .edit_comment(&id, &kept, &edit("Which cat, exactly?"))
        .await
        .expect("edit comment");
    let reply = NewReply {
        body: "The grey one.".to_string(),
        run_id: None,
        base_comments_revision: None,
        base_thread_revision: None,
    };
    let message = vic
        .api()
        .reply(&id, &kept, &reply)
        .await
        .expect("reply")
        .message
        .id;
    vic.api()
        .edit_reply(&id, &kept, &message, &edit("The grey one, I think."))
        .await
        .expect("edit reply");
    let close = StatusChange {
        status: CommentStatus::Closed,
        base_comments_revision: None,
        base_thread_revision: None,
    };
    ada.api()
        .set_status(&id, &kept, &close)
        .await
        .expect("close");
    let moved = Reanchor {
        locator: quote("dog lay"),
        base_comments_revision: None,
        base_thread_revision: None,
    };
    ada.api()
        .reanchor_comment(&id, &kept, &moved)
        .await
        .expect("re-anchor");

    let undone = ada
        .api()
        .add_comment(&id, &comment("never mind", Some(Category::Consult), None))
        .await
        .expect("comment")
        .comment
        .id;
    ada.api()
        .cancel_comment(&id, &undone, None)
        .await
        .expect("delete comment");

    for outcome in [RunStatus::Completed, RunStatus::Cancelled] {
        let start = StartRun {
            title: Some(outcome.as_str().to_string()),
            ..StartRun::default()
        };
        let run = agent
            .api()
            .start_run(&id, &start)
            .await
            .expect("start run")
            .id;
        let remark = comment(
            &format!("{outcome} remark"),
            Some(Category::Revise),
            Some(Locator {
                section_id: Some("intro".to_string()),
                ..Locator::default()
            }),
        );
        agent
            .api()
            .add_run_comment(&id, &run, &remark)
            .await
            .expect("run comment");
        let finish = FinishRun {
            status: outcome,
            summary: Some("done".to_string()),
            base_comments_revision: None,
        };
        agent
            .api()
            .finish_run(&id, &run, &finish)
            .await
            .expect("finish run");
    }
    let voice = StartRun {
        kind: Some(RunKind::Voice),
        ..StartRun::default()
    };
    let running = agent
        .api()
        .start_run(&id, &voice)
        .await
        .expect("start run")
        .id;
    agent
        .api()
        .add_run_comment(&id, &running, &comment("in progress", None, None))
        .await
        .expect("run comment");
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
        .create(ReviewInput {
            access: Some(access(AccessMode::Restricted)),
            ..review_input("Secret", HTML)
        })
        .await
        .review_id;
    ada.note_on(&secret, "rug", "private remark").await;

    let ada_view = read(&ada, &id).await;
    let ada_deleted = read_with_deleted(&ada, &id).await;
    let vic_view = read(&vic, &id).await;
    let secret_view = read(&ada, &secret).await;
    assert_eq!(ada_view.comments_revision, 13);
    assert_eq!(secret_view.comments_revision, 1);

    server.restart();
    let (ada, vic, agent) = (
        again(&server, &ada),
        again(&server, &vic),
        again(&server, &agent),
    );
    assert_eq!(json_of(&read(&ada, &id).await), json_of(&ada_view));
    assert_eq!(
        json_of(&read_with_deleted(&ada, &id).await),
        json_of(&ada_deleted)
    );
    assert_eq!(json_of(&read(&vic, &id).await), json_of(&vic_view));
    assert_eq!(json_of(&read(&ada, &secret).await), json_of(&secret_view));
    // Sharing survived: the access document is still invisible to Vic.
    refused(vic.api().review(&secret, false).await, 404, "not_found");

    // The revision counter carries on from where it was.
    let after = NewComment {
        base_comments_revision: Some(13),
        ..comment("after restart", None, None)
    };
    let next = ada
        .api()
        .add_comment(&id, &after)
        .await
        .expect("comment after restart");
    assert_eq!(next.comments_revision, 14);
    // The run that was running before the restart can still be finished.
    let running = &ada_view.ai_review_runs[2];
    assert_eq!(running.status, RunStatus::Running);
    let finish = FinishRun {
        status: RunStatus::Completed,
        summary: None,
        base_comments_revision: None,
    };
    let finished = agent
        .api()
        .finish_run(&id, &running.id, &finish)
        .await
        .expect("finish run");
    assert_eq!(finished.status, RunStatus::Completed);
    assert_eq!(read(&ada, &id).await.comments_revision, 15);
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
    assert_eq!(
        json_of(&read_with_deleted(&ada, &id).await),
        json_of(&before)
    );
    assert_eq!(json_of(&read(&vic, &id).await), json_of(&vic_before));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_acknowledged_concurrent_comments_survive_kill_9() {
    const WRITES: usize = 200;
    const DOCS: usize = 4;
    let mut server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let mut ids = Vec::new();
    for d in 0..DOCS {
        ids.push(ada.upload(&format!("Doc {d}"), HTML).await.review_id);
    }
    let attempts = (0..WRITES).map(|i| {
        let (ada, id) = (ada.clone(), ids[i % DOCS].clone());
        async move {
            let input = comment(&format!("write {i}"), None, Some(quote("mat")));
            let written = ada
                .api()
                .add_comment(&id, &input)
                .await
                .expect("acknowledged");
            (id, written.comment.id)
        }
    });
    let acknowledged = futures::future::join_all(attempts).await;
    assert_eq!(acknowledged.len(), WRITES);

    server.kill();
    server.restart();
    let ada = again(&server, &ada);
    let per_doc = i64::try_from(WRITES / DOCS).expect("count");
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
        assert_eq!(review.comments_revision, per_doc);
    }
}

/// Sends one comment, tolerating a dead server: `Some(id)` only for an acknowledged write (the
/// typed call returned the written comment; a refusal, a dropped connection or an answer cut
/// off are not acknowledgements). The typed client never repeats a `POST`.
async fn try_comment(client: &Client, id: &str, body: &str) -> Option<String> {
    let written = client
        .api()
        .add_comment(id, &comment(body, None, None))
        .await
        .ok()?;
    Some(written.comment.id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn comments_acknowledged_while_others_are_in_flight_survive_kill_9() {
    const WORKERS: usize = 32;
    const KILL_AFTER: usize = 200;
    let mut server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let mut ids = Vec::new();
    for d in 0..4 {
        ids.push(ada.upload(&format!("Doc {d}"), HTML).await.review_id);
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
            review.comments_revision,
            i64::try_from(stored.len()).expect("count"),
            "{id}: revision and comments disagree"
        );
    }
    // The restarted server accepts writes on every document at the surviving revision.
    for id in &ids {
        let revision = read(&ada, id).await.comments_revision;
        let input = NewComment {
            base_comments_revision: Some(revision),
            ..comment("after the crash", None, None)
        };
        let next = ada
            .api()
            .add_comment(id, &input)
            .await
            .expect("a write after the crash");
        assert_eq!(next.comments_revision, revision + 1);
    }
}
