//! Handles, mentions and notifications as stored (DESIGN.md §8.1): a handle is unique and its
//! conflicts are told apart from an email's; mentions round-trip with their comment or reply;
//! a person's notifications page newest first, count unread per document, and are marked read
//! only for their owner.

use std::sync::Arc;

use docreview_core::model::{EmailFrequency, Membership, Mention, NotificationReason};
use docreview_core::outbox::{Completion, NotificationRecord, Outcome, Sink};
use docreview_core::store::{Store, StoreError};

use crate::fixtures::{T0, account, comment, comments_write, message, review, user};

/// Handles: new accounts carry theirs; another account's handle is `AlreadyExists("handle")`
/// (an email's is `"user"`); accounts without one are listed and given one once; the prefix
/// lookup and the lookup by handles find exactly theirs; a profile change writes only what it
/// names.
pub async fn check_handles(store: Arc<dyn Store>) {
    let ada = user(&store, "ada").await;
    assert_eq!(
        store
            .account_by_id("ada")
            .await
            .expect("read")
            .expect("ada")
            .user
            .handle,
        "ada"
    );
    // Another account with Ada's handle; with her email.
    let mut twin = account("ada_twin", "twin@example.com", Membership::Internal);
    twin.user.handle = "ada".into();
    match store.create_account(twin.clone(), None).await {
        Err(StoreError::AlreadyExists("handle")) => {}
        other => panic!("expected the handle taken, got {other:?}"),
    }
    let mut same_email = account("ada_again", "ada@example.com", Membership::Internal);
    same_email.user.handle = "ada_again".into();
    match store.create_account(same_email, None).await {
        Err(StoreError::AlreadyExists("user")) => {}
        other => panic!("expected the email taken, got {other:?}"),
    }
    // An account without a handle (made before handles existed).
    let mut old = account("old", "old@example.com", Membership::Internal);
    old.user.handle = String::new();
    store.create_account(old, None).await.expect("create old");
    let missing = store.accounts_without_handle(10).await.expect("missing");
    assert_eq!(
        missing
            .iter()
            .map(|a| a.user.id.as_str())
            .collect::<Vec<_>>(),
        ["old"]
    );
    assert_eq!(missing[0].user.handle, "");
    match store.assign_handle("old", "ada").await {
        Err(StoreError::AlreadyExists("handle")) => {}
        other => panic!("expected the handle taken, got {other:?}"),
    }
    assert!(store.assign_handle("old", "ada2").await.expect("assign"));
    assert!(!store.assign_handle("old", "ada3").await.expect("once only"));
    assert!(
        store
            .accounts_without_handle(10)
            .await
            .expect("none")
            .is_empty()
    );
    // Prefixes compare as text (`_` and `%` are not wildcards).
    let mut prefixed = store.handles_with_prefix("ada").await.expect("prefix");
    prefixed.sort();
    assert_eq!(prefixed, ["ada", "ada2"]);
    user(&store, "a_b").await;
    user(&store, "axb").await;
    assert_eq!(
        store.handles_with_prefix("a_").await.expect("prefix"),
        ["a_b"]
    );
    let mut found: Vec<String> = store
        .accounts_by_handles(&["ada2".into(), "nobody".into(), "ada".into()])
        .await
        .expect("by handles")
        .into_iter()
        .map(|a| a.user.id)
        .collect();
    found.sort();
    assert_eq!(found, ["ada", "old"]);
    // Profile changes.
    store
        .update_profile("ada", Some("countess".into()), None)
        .await
        .expect("handle");
    let changed = store
        .account_by_id("ada")
        .await
        .expect("read")
        .expect("ada");
    assert_eq!(changed.user.handle, "countess");
    assert_eq!(changed.user.display_name, ada.user.display_name);
    store
        .update_profile("ada", None, Some("Ada King".into()))
        .await
        .expect("name");
    let changed = store
        .account_by_id("ada")
        .await
        .expect("read")
        .expect("ada");
    assert_eq!(changed.user.handle, "countess");
    assert_eq!(changed.user.display_name, "Ada King");
    match store
        .update_profile("old", Some("countess".into()), None)
        .await
    {
        Err(StoreError::AlreadyExists("handle")) => {}
        other => panic!("expected the handle taken, got {other:?}"),
    }
    match store.update_profile("ghost", None, Some("x".into())).await {
        Err(StoreError::NotFound) => {}
        other => panic!("expected not found, got {other:?}"),
    }
    // The freed handle can be taken.
    store
        .create_account(twin, None)
        .await
        .expect("ada is free again");
}

/// Mentions are stored with comments and replies, and rewritten by an upsert.
pub async fn check_mentions_round_trip(store: Arc<dyn Store>) {
    user(&store, "alice").await;
    review(&store, "rev", "alice", T0).await;
    let mention = Mention {
        user_id: "alice".into(),
        handle: "alice".into(),
    };
    let mut first = comment("rev", "cm_1", "alice", T0 + 1);
    first.mentions = vec![mention.clone()];
    let mut answer = message(&first, "msg_1", "alice", T0 + 2);
    answer.mentions = vec![mention.clone()];
    let mut write = comments_write(0, T0 + 2, vec![first.clone()]);
    write.messages = vec![answer];
    store.write_comments("rev", write).await.expect("write");
    let thread = store
        .comment_thread("rev", "cm_1")
        .await
        .expect("read")
        .expect("thread");
    assert_eq!(thread.comment.mentions, std::slice::from_ref(&mention));
    assert_eq!(thread.messages[0].mentions, std::slice::from_ref(&mention));
    let state = store
        .review_state("rev")
        .await
        .expect("state")
        .expect("rev");
    assert_eq!(state.comments[0].mentions, std::slice::from_ref(&mention));
    assert_eq!(state.messages[0].mentions, [mention]);
    // An edit that mentions nobody any more.
    first.mentions = Vec::new();
    store
        .write_comments("rev", comments_write(1, T0 + 3, vec![first]))
        .await
        .expect("edit");
    let thread = store
        .comment_thread("rev", "cm_1")
        .await
        .expect("read")
        .expect("thread");
    assert!(thread.comment.mentions.is_empty());
}

fn notification(id: &str, user_id: &str, review_id: Option<&str>, at: i64) -> NotificationRecord {
    NotificationRecord {
        id: id.to_string(),
        user_id: user_id.to_string(),
        event_id: format!("evt_{id}"),
        reason: NotificationReason::Comment,
        review_id: review_id.map(str::to_string),
        comment_id: None,
        message_id: None,
        actor_id: None,
        excerpt: format!("about {id}"),
        created_at: at,
        read_at: None,
    }
}

/// Notifications page newest first (ties by id), filter unread, count unread per document,
/// are marked read only for their owner (once), and a person's mail setting reads back.
pub async fn check_notification_listing_and_reading(store: Arc<dyn Store>) {
    user(&store, "alice").await;
    user(&store, "bob").await;
    review(&store, "rev_a", "alice", T0).await;
    review(&store, "rev_b", "alice", T0).await;
    let entry = crate::outbox::entry("evt_row", Sink::Event, T0);
    store.add_outbox(vec![entry]).await.expect("add");
    let rows = store
        .claim_outbox(Sink::Event, "node/1", T0, T0 + 60_000, 10)
        .await
        .expect("claim");
    let mut completion = Completion::new(
        &rows[0],
        Outcome::Delivered {
            response_status: None,
        },
        T0,
    );
    completion.notifications = vec![
        notification("ntf_1", "bob", Some("rev_a"), T0 + 1),
        notification("ntf_2", "bob", Some("rev_b"), T0 + 2),
        notification("ntf_3", "bob", Some("rev_a"), T0 + 2),
        notification("ntf_4", "bob", None, T0 + 3),
        notification("ntf_5", "alice", Some("rev_a"), T0 + 3),
    ];
    store
        .complete_outbox(vec![completion])
        .await
        .expect("complete");
    let ids =
        |list: Vec<NotificationRecord>| -> Vec<String> { list.into_iter().map(|n| n.id).collect() };
    let all = store
        .notifications_of("bob", false, None, 10)
        .await
        .expect("list");
    assert_eq!(ids(all.clone()), ["ntf_4", "ntf_3", "ntf_2", "ntf_1"]);
    assert_eq!(all[1], notification("ntf_3", "bob", Some("rev_a"), T0 + 2));
    let page = store
        .notifications_of("bob", false, Some((T0 + 2, "ntf_3".into())), 2)
        .await
        .expect("page");
    assert_eq!(ids(page), ["ntf_2", "ntf_1"]);
    let mut counts = store.unread_notifications("bob").await.expect("counts");
    counts.sort();
    assert_eq!(
        counts,
        [
            (None, 1),
            (Some("rev_a".to_string()), 2),
            (Some("rev_b".to_string()), 1)
        ]
    );
    // Read by id: someone else's id is passed over.
    let changed = store
        .mark_notifications_read("bob", Some(vec!["ntf_3".into(), "ntf_5".into()]), T0 + 10)
        .await
        .expect("read");
    assert_eq!(changed, 1);
    let unread = store
        .notifications_of("bob", true, None, 10)
        .await
        .expect("unread");
    assert_eq!(ids(unread), ["ntf_4", "ntf_2", "ntf_1"]);
    let read = store
        .notifications_of("bob", false, None, 10)
        .await
        .expect("list");
    assert_eq!(read[1].read_at, Some(T0 + 10));
    assert_eq!(
        store
            .notifications_of("alice", true, None, 10)
            .await
            .expect("alice")
            .len(),
        1
    );
    // All: those read already keep their time.
    let changed = store
        .mark_notifications_read("bob", None, T0 + 20)
        .await
        .expect("all");
    assert_eq!(changed, 3);
    let read = store
        .notifications_of("bob", false, None, 10)
        .await
        .expect("list");
    assert_eq!(read[1].read_at, Some(T0 + 10));
    assert_eq!(read[0].read_at, Some(T0 + 20));
    assert!(
        store
            .unread_notifications("bob")
            .await
            .expect("none")
            .is_empty()
    );
    // Mail settings.
    assert_eq!(
        store.email_frequency("bob").await.expect("read"),
        Some(EmailFrequency::Instant)
    );
    assert!(
        store
            .set_email_frequency("bob", EmailFrequency::Daily)
            .await
            .expect("set")
    );
    assert_eq!(
        store.email_frequency("bob").await.expect("read"),
        Some(EmailFrequency::Daily)
    );
    assert!(
        !store
            .set_email_frequency("ghost", EmailFrequency::Off)
            .await
            .expect("set")
    );
    assert_eq!(store.email_frequency("ghost").await.expect("read"), None);
}
