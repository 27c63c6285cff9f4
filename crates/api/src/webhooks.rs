//! Webhooks (DESIGN.md §8.3): the requests that register and change them, and the answers.

use serde::{Deserialize, Deserializer, Serialize};

use crate::secret::Secret;
use crate::words::DeliveryStatus;

/// `POST /api/webhooks`.
#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewWebhook {
    /// Where deliveries are sent (POST): `https://` (`http://` only when the operator allows
    /// private addresses); its host must resolve to public addresses.
    pub url: String,
    /// Event types (`comment.created`, …), or `["*"]` for all.
    pub events: Vec<String>,
    /// Only events on documents of this project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `PATCH /api/webhooks/{id}`: the fields sent are changed; `projectCode` and `description`
/// are removed with `null`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(
    clippy::option_option,
    reason = "in a PATCH, absent (unchanged), null (removed) and a value are three answers"
)]
pub struct WebhookChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<String>>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>)]
    pub project_code: Option<Option<String>>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>)]
    pub description: Option<Option<String>>,
    /// `false` stops deliveries (pending ones fail); `true` resumes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<bool>,
}

/// A field that may be absent (unchanged), `null` (removed) or a value.
#[allow(clippy::option_option, reason = "see `WebhookChange`")]
fn nullable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// A webhook. `secret` is in the answers to create and rotate only.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Webhook)]
pub struct WebhookView {
    pub id: String,
    pub url: String,
    pub events: Vec<String>,
    pub project_code: Option<String>,
    pub description: Option<String>,
    pub active: bool,
    pub created_at: String,
    /// `whsec_` + base64 of 24 random bytes; shown once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub secret: Option<Secret>,
}

/// `{ "webhook": Webhook }`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WebhookBody {
    pub webhook: WebhookView,
}

/// `GET /api/webhooks`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WebhookList {
    pub webhooks: Vec<WebhookView>,
}

/// One delivery of an event to a webhook.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Delivery)]
pub struct DeliveryView {
    pub id: String,
    pub webhook_id: String,
    /// The event it carries; the `webhook-id` header of every attempt and redelivery.
    pub event_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub attempts: i64,
    pub status: DeliveryStatus,
    pub last_response_status: Option<i64>,
    pub last_error: Option<String>,
    pub created_at: String,
    /// When the next attempt is due (`null` once it succeeded or failed).
    pub next_attempt_at: Option<String>,
}

/// `{ "delivery": Delivery }` (a ping's or a redelivery's).
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeliveryBody {
    pub delivery: DeliveryView,
}

/// `GET /api/webhooks/{id}/deliveries`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryList {
    pub deliveries: Vec<DeliveryView>,
    pub next_cursor: Option<String>,
}
