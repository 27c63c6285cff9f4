//! Webhooks (DESIGN.md §8.3): the endpoints the organization registered, and their deliveries
//! (the `webhook` rows of the outbox, `crate::outbox`).

use crate::model::{DeliveryStatus, Millis};

use super::StoreResult;

/// A registered webhook, as stored. The secrets sign deliveries, so they are kept as they are
/// (not hashed); `Debug` never shows them.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookRecord {
    pub id: String,
    pub url: String,
    /// Event type words, or `*` for every type.
    pub events: Vec<String>,
    /// Only events on documents of this project, when set.
    pub project_code: Option<String>,
    pub description: Option<String>,
    pub active: bool,
    pub secret: String,
    /// The secret before the last rotation, which also signs until `previous_expires_at`.
    pub previous_secret: Option<String>,
    pub previous_expires_at: Option<Millis>,
    pub created_by: String,
    pub created_at: Millis,
}

impl std::fmt::Debug for WebhookRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookRecord")
            .field("id", &self.id)
            .field("url", &self.url)
            .field("events", &self.events)
            .field("project_code", &self.project_code)
            .field("active", &self.active)
            .field("secret", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// One delivery of an event to a webhook (an outbox row of the `webhook` sink).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRecord {
    pub id: String,
    pub webhook_id: String,
    /// The event it carries: the `webhook-id` header, the same on every attempt and redelivery.
    pub event_id: String,
    /// The event type.
    pub kind: String,
    /// The body, byte for byte as it is signed and sent.
    pub payload: String,
    pub attempts: i64,
    pub status: DeliveryStatus,
    pub last_response_status: Option<i64>,
    pub last_error: Option<String>,
    pub created_at: Millis,
    pub next_attempt_at: Millis,
}

#[async_trait::async_trait]
pub trait WebhookStore: Send + Sync {
    async fn create_webhook(&self, webhook: WebhookRecord) -> StoreResult<()>;

    async fn webhook(&self, id: &str) -> StoreResult<Option<WebhookRecord>>;

    /// Every webhook, oldest first (an organization registers a handful).
    async fn webhooks(&self) -> StoreResult<Vec<WebhookRecord>>;

    /// Replaces the webhook's url, events, project, description, activity and secrets;
    /// `false` when there is no such webhook.
    async fn update_webhook(&self, webhook: WebhookRecord) -> StoreResult<bool>;

    /// Deletes the webhook and its deliveries still pending (its history goes with it);
    /// `false` when there is no such webhook.
    async fn delete_webhook(&self, id: &str) -> StoreResult<bool>;

    /// Turns the webhook off (its receiver answered `410 Gone`); `false` when there is none.
    async fn disable_webhook(&self, id: &str) -> StoreResult<bool>;

    /// The webhook's deliveries, newest first (by id, descending), after the id `after`.
    async fn webhook_deliveries(
        &self,
        webhook_id: &str,
        after: Option<String>,
        limit: usize,
    ) -> StoreResult<Vec<DeliveryRecord>>;

    /// One delivery of the webhook.
    async fn webhook_delivery(
        &self,
        webhook_id: &str,
        delivery_id: &str,
    ) -> StoreResult<Option<DeliveryRecord>>;
}
