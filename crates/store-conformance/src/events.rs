//! Change events: every write that changes a document is announced, once committed, to every
//! subscriber (on PostgreSQL through `NOTIFY`, so on every node).

use std::sync::Arc;
use std::time::Duration;

use docreview_core::events::{EventKind, ReviewEvent};
use docreview_core::store::{ReviewUpdate, Store};
use tokio::sync::broadcast::Receiver;

use crate::fixtures::{T0, assert_not_found, head, projects, review, user};

/// How long an announced event may take to arrive (PostgreSQL delivers it asynchronously).
const DELIVERY: Duration = Duration::from_secs(5);

/// The next event, failing the check if none arrives in time.
async fn next(events: &mut Receiver<ReviewEvent>, what: &str) -> ReviewEvent {
    tokio::time::timeout(DELIVERY, events.recv())
        .await
        .unwrap_or_else(|_| panic!("{what}: no event within {DELIVERY:?}"))
        .unwrap_or_else(|error| panic!("{what}: {error}"))
}

/// `update_review`, `link_project` (when it links) and `delete_review` announce `review` events
/// carrying the document's revisions after the change, in commit order; a link that changes
/// nothing announces nothing; deletion's event carries the next `change_seq`, so listeners
/// holding a rendering of the document see it is stale.
pub async fn check_document_changes_are_announced(store: Arc<dyn Store>) {
    let mut events = store.subscribe();
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    projects(&store, &["PRJ-1"]).await;
    let rename = |at| ReviewUpdate {
        review_id: "rev".into(),
        at,
        title: Some(format!("Renamed at {at}")),
        ..ReviewUpdate::default()
    };
    // A backend may start listening in the background: change the document until an event
    // arrives, then until the one for the latest change has (events come in commit order).
    let mut at = T0;
    let first = loop {
        at += 1;
        store.update_review(rename(at)).await.expect("update");
        if let Ok(Ok(event)) = tokio::time::timeout(Duration::from_millis(200), events.recv()).await
        {
            break event;
        }
    };
    assert_eq!(
        (
            first.kind,
            first.review_id.as_str(),
            first.latest_version_id.as_str()
        ),
        (EventKind::Review, "rev", "rev_v1")
    );
    let mut seq = head(&store, "rev").await.review.change_seq;
    let mut heard = first.change_seq;
    while heard < seq {
        heard = next(&mut events, "catching up").await.change_seq;
    }

    assert!(
        !store
            .link_project("rev", Some("PRJ-1"), None, at + 1)
            .await
            .expect("stale link"),
        "linked to nothing, so not to PRJ-1"
    );
    assert!(
        store
            .link_project("rev", None, Some("PRJ-1"), at + 2)
            .await
            .expect("link")
    );
    seq += 1;
    let event = next(&mut events, "link").await;
    assert_eq!(
        (event.kind, event.change_seq),
        (EventKind::Review, seq),
        "the link's event is the next one: the stale link announced nothing"
    );

    store.update_review(rename(at + 3)).await.expect("update");
    seq += 1;
    let event = next(&mut events, "update").await;
    assert_eq!((event.kind, event.change_seq), (EventKind::Review, seq));
    assert_eq!(
        event.comments_revision,
        head(&store, "rev").await.review.comments_revision
    );

    store
        .delete_review("rev", Vec::new())
        .await
        .expect("delete");
    let event = next(&mut events, "deletion").await;
    assert_eq!(
        (event.kind, event.review_id.as_str(), event.change_seq),
        (EventKind::Review, "rev", seq + 1),
        "one change past the last"
    );
    assert!(store.review_head("rev").await.expect("head").is_none());
    assert_not_found(store.delete_review("rev", Vec::new()).await);
}
