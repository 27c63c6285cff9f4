//! The outbox (`docreview_core::outbox`): rows commit with their change or not at all; a claim
//! takes each due row for one claimant only, however many claim at once; only the claimant may
//! record an outcome, with the notifications and rows that follow, in one transaction.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use docreview_core::model::{Millis, NotificationReason};
use docreview_core::outbox::{
    Completion, NotificationRecord, OutboxEntry, OutboxRow, Outcome, Sink, Withdrawn,
};
use docreview_core::store::Store;

use crate::fixtures::{
    T0, assert_conflict, assert_not_found, comment, comments_write, head, review, user,
};

/// A pending row of `sink`, due at `due`.
pub fn entry(id: &str, sink: Sink, due: Millis) -> OutboxEntry {
    OutboxEntry {
        id: id.to_string(),
        sink,
        kind: "comment.created".to_string(),
        event_id: format!("evt_of_{id}"),
        target: None,
        payload: format!("{{\"row\":\"{id}\"}}"),
        created_at: due,
        next_attempt_at: due,
        dedupe_key: None,
    }
}

/// Claims every due row of `sink` at `now` (a lease of a minute) for `claim`; their ids.
async fn claim(store: &Arc<dyn Store>, sink: Sink, claim: &str, now: Millis) -> Vec<String> {
    claimed(store, sink, claim, now)
        .await
        .into_iter()
        .map(|row| row.id)
        .collect()
}

pub(crate) async fn claimed(
    store: &Arc<dyn Store>,
    sink: Sink,
    claim: &str,
    now: Millis,
) -> Vec<OutboxRow> {
    store
        .claim_outbox(sink, claim, now, now + 60_000, 100)
        .await
        .expect("claim")
}

fn delivered(row: &OutboxRow, at: Millis) -> Completion {
    Completion::new(
        row,
        Outcome::Delivered {
            response_status: Some(204),
        },
        at,
    )
}

fn notification(
    id: &str,
    user_id: &str,
    review_id: Option<&str>,
    event_id: &str,
) -> NotificationRecord {
    NotificationRecord {
        id: id.to_string(),
        user_id: user_id.to_string(),
        event_id: event_id.to_string(),
        reason: NotificationReason::Mention,
        review_id: review_id.map(str::to_string),
        comment_id: Some("cm_1".to_string()),
        message_id: None,
        actor_id: Some("usr_actor".to_string()),
        excerpt: "Hello @someone".to_string(),
        created_at: T0,
        read_at: None,
    }
}

/// Rows are added by the write they come with, and only when it commits: comment writes,
/// new documents, versions and deletion; a write refused (a revision conflict, a missing
/// document) adds none.
pub async fn check_outbox_rows_commit_with_their_change(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let mut new = crate::fixtures::new_review("rev", "usr_alice", T0);
    new.outbox = vec![entry("evt_created", Sink::Event, T0)];
    store.create_review(new).await.expect("create");

    let mut write = comments_write(0, T0 + 1, vec![comment("rev", "cm_1", "usr_alice", T0 + 1)]);
    write.outbox = vec![entry("evt_commented", Sink::Event, T0 + 1)];
    store.write_comments("rev", write).await.expect("write");

    let mut stale = comments_write(0, T0 + 2, vec![comment("rev", "cm_2", "usr_alice", T0 + 2)]);
    stale.outbox = vec![entry("evt_refused", Sink::Event, T0 + 2)];
    assert_conflict(store.write_comments("rev", stale).await, 1);

    let revision = head(&store, "rev").await.review.comments_revision;
    let mut version = crate::versions::version_write(
        "rev",
        "rev_v1",
        revision,
        crate::fixtures::version("rev", "rev_v2", T0 + 3),
        true,
        T0 + 3,
    );
    version.outbox = vec![entry("evt_version", Sink::Event, T0 + 3)];
    store.write_version(version).await.expect("version");

    assert_not_found(
        store
            .delete_review(
                "rev_missing",
                vec![entry("evt_not_deleted", Sink::Event, T0 + 4)],
            )
            .await,
    );
    store
        .delete_review("rev", vec![entry("evt_deleted", Sink::Event, T0 + 5)])
        .await
        .expect("delete");

    let mut ids = claim(&store, Sink::Event, "node_a/1", T0 + 10).await;
    ids.sort();
    assert_eq!(
        ids,
        ["evt_commented", "evt_created", "evt_deleted", "evt_version"],
        "exactly the rows of the writes that committed"
    );
}

/// A claim takes the due rows of its sink, oldest due first, up to its limit, and gives each
/// an attempt, its claimant and the lease's end as its next attempt; nobody else gets them
/// until the lease runs out. Only the claimant records an outcome: a retry is due again at its
/// time, a delivered or failed row never again. Rows with a taken dedupe key are not added;
/// depths count what is pending; pruning deletes what finished before a time.
pub async fn check_outbox_claims_and_outcomes(store: Arc<dyn Store>) {
    let added = store
        .add_outbox(vec![
            entry("evt_1", Sink::Event, T0),
            entry("evt_2", Sink::Event, T0 + 5),
            entry("evt_later", Sink::Event, T0 + 100_000_000),
            entry("mail_1", Sink::Mail, T0),
            entry("dlv_1", Sink::Webhook, T0 + 1),
        ])
        .await
        .expect("add");
    assert_eq!(added, 5);
    let mut keyed = entry("mail_digest", Sink::Mail, T0);
    keyed.dedupe_key = Some("digest:usr_a:2023-11-14".into());
    let mut twin = entry("mail_digest_twin", Sink::Mail, T0);
    twin.dedupe_key = keyed.dedupe_key.clone();
    assert_eq!(store.add_outbox(vec![keyed, twin]).await.expect("add"), 1);

    let depths = store.outbox_depths().await.expect("depths");
    let depth = |sink: Sink| {
        depths
            .iter()
            .find(|d| d.sink == sink)
            .map(|d| (d.pending, d.oldest_created_at))
    };
    assert_eq!(depth(Sink::Event), Some((3, Some(T0))));
    assert_eq!(depth(Sink::Mail), Some((2, Some(T0))));
    assert_eq!(depth(Sink::Webhook), Some((1, Some(T0 + 1))));

    // Only what is due, only of its sink, at most the limit, oldest due first.
    let first = store
        .claim_outbox(Sink::Event, "node_a/1", T0 + 10, T0 + 30_010, 1)
        .await
        .expect("claim");
    assert_eq!(first.len(), 1);
    let row = &first[0];
    assert_eq!(
        (
            row.id.as_str(),
            row.attempts,
            row.claimant.as_str(),
            row.claimed_until
        ),
        ("evt_1", 1, "node_a/1", T0 + 30_010)
    );
    assert_eq!(
        (row.payload.as_str(), row.event_id.as_str()),
        ("{\"row\":\"evt_1\"}", "evt_of_evt_1")
    );
    assert_eq!(
        claim(&store, Sink::Event, "node_b/1", T0 + 20).await,
        ["evt_2"]
    );
    assert!(
        claim(&store, Sink::Event, "node_b/2", T0 + 30)
            .await
            .is_empty(),
        "leased or not due"
    );

    // The lease runs out: the row is due again, for another claimant, with one more attempt.
    let again = claimed(&store, Sink::Event, "node_b/3", T0 + 30_010).await;
    assert_eq!(
        again
            .iter()
            .map(|r| (r.id.as_str(), r.attempts))
            .collect::<Vec<_>>(),
        [("evt_1", 2)]
    );
    // The first claimant is too late now; the second records a retry.
    let late = store
        .complete_outbox(vec![delivered(row, T0 + 30_020)])
        .await
        .expect("complete");
    assert!(late.is_empty(), "a claim that lost its row records nothing");
    let retry = Completion::new(
        &again[0],
        Outcome::Retry {
            at: T0 + 50_000,
            response_status: Some(503),
            error: "busy".into(),
        },
        T0 + 30_030,
    );
    assert_eq!(
        store.complete_outbox(vec![retry]).await.expect("retry"),
        ["evt_1"]
    );
    assert!(
        claim(&store, Sink::Event, "node_c/1", T0 + 49_999)
            .await
            .is_empty()
    );
    let third = claimed(&store, Sink::Event, "node_c/2", T0 + 50_000).await;
    assert_eq!(
        third
            .iter()
            .map(|r| (r.id.as_str(), r.attempts))
            .collect::<Vec<_>>(),
        [("evt_1", 3)]
    );
    assert_eq!(
        store
            .complete_outbox(vec![delivered(&third[0], T0 + 50_001)])
            .await
            .expect("done"),
        ["evt_1"]
    );
    // A finished row is never due again, and completing it again records nothing.
    assert!(
        claim(&store, Sink::Event, "node_c/3", T0 + 10_000_000)
            .await
            .iter()
            .all(|id| id != "evt_1")
    );
    assert!(
        store
            .complete_outbox(vec![delivered(&third[0], T0 + 50_002)])
            .await
            .expect("again")
            .is_empty()
    );

    // A failure finishes the row too.
    let mail = claimed(&store, Sink::Mail, "node_a/2", T0 + 1).await;
    assert_eq!(mail.len(), 2);
    let failed: Vec<Completion> = mail
        .iter()
        .map(|row| {
            Completion::new(
                row,
                Outcome::Failed {
                    response_status: None,
                    error: "no such mailbox".into(),
                },
                T0 + 2,
            )
        })
        .collect();
    assert_eq!(store.complete_outbox(failed).await.expect("fail").len(), 2);
    assert!(
        claim(&store, Sink::Mail, "node_a/3", T0 + 10_000_000)
            .await
            .is_empty()
    );

    let depths = store.outbox_depths().await.expect("depths");
    let depth = |sink: Sink| depths.iter().find(|d| d.sink == sink).map(|d| d.pending);
    assert_eq!(depth(Sink::Mail), None, "nothing pending");
    assert_eq!(depth(Sink::Event), Some(2), "evt_2 (leased) and evt_later");

    // Pruning: the failed mails finished at T0 + 2, the event at T0 + 50_001.
    assert_eq!(
        store.prune_outbox(Sink::Mail, T0 + 2).await.expect("prune"),
        0
    );
    assert_eq!(
        store.prune_outbox(Sink::Mail, T0 + 3).await.expect("prune"),
        2
    );
    assert_eq!(
        store
            .prune_outbox(Sink::Event, T0 + 60_000)
            .await
            .expect("prune"),
        1
    );
    assert_eq!(
        store
            .prune_outbox(Sink::Webhook, T0 + 60_000)
            .await
            .expect("prune"),
        0,
        "pending rows stay"
    );
}

/// Many claimants at once (on PostgreSQL, many connections; on SQLite, the one writer) each
/// get different rows, and together every row once.
pub async fn check_outbox_concurrent_claims_take_each_row_once(store: Arc<dyn Store>) {
    const ROWS: usize = 300;
    const CLAIMANTS: usize = 8;
    let entries: Vec<OutboxEntry> = (0..ROWS)
        .map(|n| entry(&format!("dlv_{n:04}"), Sink::Webhook, T0))
        .collect();
    store.add_outbox(entries).await.expect("add");
    let mut tasks = Vec::new();
    for claimant in 0..CLAIMANTS {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            for round in 0.. {
                let claim = format!("node_{claimant}/{round}");
                let rows = store
                    .claim_outbox(Sink::Webhook, &claim, T0 + 1, T0 + 60_000, 7)
                    .await
                    .expect("claim");
                if rows.is_empty() {
                    break;
                }
                assert!(
                    rows.iter()
                        .all(|row| row.claimant == claim && row.attempts == 1)
                );
                mine.extend(rows.into_iter().map(|row| row.id));
                tokio::task::yield_now().await;
            }
            mine
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("claimant"));
    }
    let distinct: HashSet<&String> = all.iter().collect();
    assert_eq!(all.len(), ROWS, "every row claimed exactly once");
    assert_eq!(distinct.len(), ROWS);
}

/// A completion writes its notifications (one per event and person; none for a document that
/// is gone), withdraws a cancelled item's, and adds the rows that follow, all with the outcome
/// and only if the claim still holds; listeners hear whose notifications changed.
pub async fn check_outbox_completion_writes_what_follows(store: Arc<dyn Store>) {
    let mut people = store.subscribe_people();
    user(&store, "usr_alice").await;
    user(&store, "usr_bob").await;
    review(&store, "rev", "usr_alice", T0).await;
    store
        .add_outbox(vec![
            entry("evt_1", Sink::Event, T0),
            entry("evt_2", Sink::Event, T0),
        ])
        .await
        .expect("add");
    let rows = claimed(&store, Sink::Event, "node_a/1", T0).await;
    assert_eq!(rows.len(), 2);

    let mut first = delivered(&rows[0], T0 + 1);
    first.notifications = vec![
        notification("ntf_1", "usr_bob", Some("rev"), "evt_1"),
        // The same event and person again: not a second notification.
        notification("ntf_1b", "usr_bob", Some("rev"), "evt_1"),
        notification("ntf_2", "usr_alice", None, "evt_1"),
        notification("ntf_gone", "usr_alice", Some("rev_deleted"), "evt_1b"),
    ];
    first.entries = vec![
        entry("mail_1", Sink::Mail, T0 + 1),
        entry("dlv_1", Sink::Webhook, T0 + 1),
    ];
    // A stale claim on the second row: nothing of it is written.
    let mut stale = delivered(&rows[1], T0 + 1);
    stale.claimant = "node_z/9".into();
    stale.notifications = vec![notification("ntf_stale", "usr_bob", Some("rev"), "evt_2")];
    stale.entries = vec![entry("mail_stale", Sink::Mail, T0 + 1)];
    let completed = store
        .complete_outbox(vec![first, stale])
        .await
        .expect("complete");
    assert_eq!(completed, ["evt_1"]);

    let mails = claim(&store, Sink::Mail, "node_a/2", T0 + 2).await;
    assert_eq!(mails, ["mail_1"]);
    assert_eq!(
        claim(&store, Sink::Webhook, "node_a/3", T0 + 2).await,
        ["dlv_1"]
    );

    let mut heard = HashSet::new();
    while heard.len() < 2 {
        let person = tokio::time::timeout(Duration::from_secs(5), people.recv())
            .await
            .expect("people are told within 5 s")
            .expect("listen");
        heard.insert(person);
    }
    assert_eq!(
        heard,
        HashSet::from(["usr_alice".to_string(), "usr_bob".to_string()])
    );

    // The second row, claimed again after its lease, withdraws a cancelled item's notices.
    let again = claimed(&store, Sink::Event, "node_b/1", T0 + 60_000).await;
    assert_eq!(again.len(), 1);
    let mut withdraw = delivered(&again[0], T0 + 60_001);
    withdraw.withdraw = Some(Withdrawn::Comment("cm_1".into()));
    assert_eq!(
        store
            .complete_outbox(vec![withdraw])
            .await
            .expect("withdraw")
            .len(),
        1
    );
    let told = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match people.recv().await {
                Ok(person) if person == "usr_bob" || person == "usr_alice" => return person,
                Ok(_) => {}
                Err(error) => panic!("listen: {error}"),
            }
        }
    })
    .await
    .expect("the withdrawal is heard");
    assert!(told == "usr_bob" || told == "usr_alice");
}

/// The installation's keys: the first stored wins on every node; and the people of the daily
/// digest with the period their last one covered, which only moves forward.
pub async fn check_instance_keys_and_digest_people(store: Arc<dyn Store>) {
    let first = store
        .instance_key("unsubscribe", vec![1; 32], T0)
        .await
        .expect("key");
    assert_eq!(first, vec![1; 32]);
    let again = store
        .instance_key("unsubscribe", vec![2; 32], T0 + 1)
        .await
        .expect("key");
    assert_eq!(again, first, "a second candidate does not replace the key");
    let other = store
        .instance_key("other", vec![3; 16], T0)
        .await
        .expect("key");
    assert_eq!(other, vec![3; 16]);

    let ada = user(&store, "ada").await;
    user(&store, "bob").await;
    let mut cy = user(&store, "cy").await;
    assert!(store.digest_people().await.expect("people").is_empty());
    for id in ["ada", "cy"] {
        assert!(
            store
                .set_email_frequency(id, docreview_core::model::EmailFrequency::Daily)
                .await
                .expect("set")
        );
    }
    // A suspended person gets no digest.
    cy.status = docreview_core::model::UserStatus::Suspended;
    store.update_account(cy).await.expect("suspend");
    assert_eq!(
        store.digest_people().await.expect("people"),
        vec![("ada".to_string(), None)]
    );
    store
        .set_digest_until(ada.id(), T0 + 500)
        .await
        .expect("until");
    store
        .set_digest_until(ada.id(), T0 + 100)
        .await
        .expect("an older one");
    store.set_digest_until("ghost", T0).await.expect("nobody");
    assert_eq!(
        store.digest_people().await.expect("people"),
        vec![("ada".to_string(), Some(T0 + 500))]
    );
}
