//! Webhooks (`WebhookStore`): records round-trip with their secrets and subscriptions; changes
//! replace them; disabling and deleting; deliveries are the webhook's outbox rows, newest first,
//! paged by id, with their outcome; deleting a webhook takes its deliveries along.

use std::sync::Arc;

use docreview_core::model::DeliveryStatus;
use docreview_core::outbox::{Completion, OutboxEntry, Outcome, Sink};
use docreview_core::store::{Store, WebhookRecord};

use crate::fixtures::T0;

fn webhook(id: &str, project: Option<&str>) -> WebhookRecord {
    WebhookRecord {
        id: id.to_string(),
        url: format!("https://hooks.example.com/{id}"),
        events: vec!["comment.created".to_string(), "review.deleted".to_string()],
        project_code: project.map(str::to_string),
        description: Some("CI bridge".to_string()),
        active: true,
        secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0".to_string(),
        previous_secret: None,
        previous_expires_at: None,
        created_by: "usr_admin".to_string(),
        created_at: T0,
    }
}

fn delivery(id: &str, webhook_id: &str, at: i64) -> OutboxEntry {
    OutboxEntry {
        id: id.to_string(),
        sink: Sink::Webhook,
        kind: "comment.created".to_string(),
        event_id: format!("evt_{id}"),
        target: Some(webhook_id.to_string()),
        payload: format!("{{\"type\":\"comment.created\",\"n\":\"{id}\"}}"),
        created_at: at,
        next_attempt_at: at,
        dedupe_key: None,
    }
}

pub async fn check_webhooks_round_trip(store: Arc<dyn Store>) {
    let first = webhook("wh_1", None);
    let mut second = webhook("wh_2", Some("P-1"));
    second.created_at = T0 + 1;
    second.description = None;
    store.create_webhook(first.clone()).await.expect("create");
    store.create_webhook(second.clone()).await.expect("create");

    assert_eq!(
        store.webhook("wh_1").await.expect("read"),
        Some(first.clone())
    );
    assert_eq!(store.webhook("wh_missing").await.expect("read"), None);
    assert_eq!(
        store.webhooks().await.expect("list"),
        vec![first.clone(), second.clone()],
        "oldest first"
    );

    let mut rotated = first.clone();
    rotated.previous_secret = Some(first.secret.clone());
    rotated.previous_expires_at = Some(T0 + 86_400_000);
    rotated.secret = "whsec_bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3".to_string();
    rotated.events = vec!["*".to_string()];
    rotated.project_code = Some("P-2".to_string());
    rotated.url = "https://other.example.com/hook".to_string();
    assert!(store.update_webhook(rotated.clone()).await.expect("update"));
    assert_eq!(
        store.webhook("wh_1").await.expect("read"),
        Some(rotated.clone())
    );
    assert!(
        !store
            .update_webhook(webhook("wh_missing", None))
            .await
            .expect("update")
    );

    assert!(store.disable_webhook("wh_2").await.expect("disable"));
    assert!(
        !store
            .webhook("wh_2")
            .await
            .expect("read")
            .expect("kept")
            .active
    );
    assert!(!store.disable_webhook("wh_missing").await.expect("disable"));

    assert!(store.delete_webhook("wh_2").await.expect("delete"));
    assert!(!store.delete_webhook("wh_2").await.expect("delete"));
    assert_eq!(store.webhooks().await.expect("list"), vec![rotated]);
}

pub async fn check_webhook_deliveries(store: Arc<dyn Store>) {
    store
        .create_webhook(webhook("wh_1", None))
        .await
        .expect("create");
    store
        .create_webhook(webhook("wh_2", None))
        .await
        .expect("create");
    let mut entries: Vec<OutboxEntry> = (1..=5)
        .map(|n| delivery(&format!("dlv_{n}"), "wh_1", T0 + n))
        .collect();
    entries.push(delivery("dlv_other", "wh_2", T0));
    // A mail row naming the same target is not a delivery.
    let mut mail = delivery("mail_1", "wh_1", T0);
    mail.sink = Sink::Mail;
    entries.push(mail);
    assert_eq!(store.add_outbox(entries).await.expect("add"), 7);

    let page = store
        .webhook_deliveries("wh_1", None, 3)
        .await
        .expect("page");
    let ids: Vec<&str> = page.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["dlv_5", "dlv_4", "dlv_3"], "newest first");
    let rest = store
        .webhook_deliveries("wh_1", Some("dlv_3".to_string()), 3)
        .await
        .expect("page");
    let ids: Vec<&str> = rest.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["dlv_2", "dlv_1"]);
    let fifth = &page[0];
    assert_eq!(fifth.webhook_id, "wh_1");
    assert_eq!(fifth.event_id, "evt_dlv_5");
    assert_eq!(fifth.kind, "comment.created");
    assert_eq!(
        fifth.payload,
        "{\"type\":\"comment.created\",\"n\":\"dlv_5\"}"
    );
    assert_eq!(fifth.status, DeliveryStatus::Pending);
    assert_eq!(fifth.attempts, 0);
    assert_eq!(fifth.next_attempt_at, T0 + 5);

    // An attempt that failed shows its answer and its next attempt.
    let claimed = store
        .claim_outbox(Sink::Webhook, "node/1", T0 + 10, T0 + 100, 10)
        .await
        .expect("claim");
    let row = claimed.iter().find(|r| r.id == "dlv_1").expect("claimed");
    let retry = Outcome::Retry {
        at: T0 + 5_000,
        response_status: Some(503),
        error: "answered 503".to_string(),
    };
    store
        .complete_outbox(vec![Completion::new(row, retry, T0 + 20)])
        .await
        .expect("complete");
    let one = store
        .webhook_delivery("wh_1", "dlv_1")
        .await
        .expect("read")
        .expect("found");
    assert_eq!(one.attempts, 1);
    assert_eq!(one.status, DeliveryStatus::Pending);
    assert_eq!(one.last_response_status, Some(503));
    assert_eq!(one.last_error.as_deref(), Some("answered 503"));
    assert_eq!(one.next_attempt_at, T0 + 5_000);
    assert_eq!(
        store.webhook_delivery("wh_2", "dlv_1").await.expect("read"),
        None,
        "another webhook's id does not find it"
    );
    assert_eq!(
        store
            .webhook_delivery("wh_1", "mail_1")
            .await
            .expect("read"),
        None
    );

    assert!(store.delete_webhook("wh_1").await.expect("delete"));
    assert!(
        store
            .webhook_deliveries("wh_1", None, 10)
            .await
            .expect("page")
            .is_empty()
    );
    assert_eq!(
        store
            .webhook_deliveries("wh_2", None, 10)
            .await
            .expect("page")
            .len(),
        1,
        "other webhooks keep theirs"
    );
}
