//! Events: what a change records in the outbox, to be fanned out after it commits.

use serde::{Deserialize, Serialize};

use super::{OutboxEntry, Sink};
use crate::clock::rfc3339;
use crate::model::{Millis, NotificationReason, WebhookEventType};

/// The kind of a change: one a webhook may subscribe to, or one that only changes
/// notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Sent to the webhooks subscribed to it, and notifies whom its type implies.
    Public(WebhookEventType),
    /// A provisional comment or reply was cancelled: its notifications are withdrawn.
    ItemCancelled,
    /// A webhook delivery failed for good: the organization's admins are told.
    DeliveryFailed,
    /// Someone was asked to review a document (they are in `notify`).
    ReviewRequested,
    /// A comment thread was handed to someone (they are in `notify`).
    CommentAssigned,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Public(kind) => kind.as_str(),
            EventType::ItemCancelled => "item.cancelled",
            EventType::DeliveryFailed => "delivery.failed",
            EventType::ReviewRequested => "review.review_requested",
            EventType::CommentAssigned => "comment.assigned",
        }
    }

    pub fn parse(text: &str) -> Option<EventType> {
        match text {
            "item.cancelled" => Some(EventType::ItemCancelled),
            "delivery.failed" => Some(EventType::DeliveryFailed),
            "review.review_requested" => Some(EventType::ReviewRequested),
            "comment.assigned" => Some(EventType::CommentAssigned),
            _ => WebhookEventType::parse(text).map(EventType::Public),
        }
    }

    /// The type webhooks see, for public events.
    pub fn webhook_type(self) -> Option<WebhookEventType> {
        match self {
            EventType::Public(kind) => Some(kind),
            _ => None,
        }
    }
}

impl From<WebhookEventType> for EventType {
    fn from(kind: WebhookEventType) -> Self {
        EventType::Public(kind)
    }
}

impl Serialize for EventType {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventType {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        EventType::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown event type `{text}`")))
    }
}

/// Someone a change addresses directly, decided when it is written (a mention), with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notice {
    pub user_id: String,
    pub reason: NotificationReason,
}

/// One change, as its `event` row records it: ids only (what anyone is shown is read when it
/// is delivered, for whoever it is delivered to), and the people it addresses directly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: EventType,
    pub at: Millis,
    /// Who made the change; `None` when the system reports (a failed delivery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The document's project when the change was made, for webhooks limited to a project
    /// (a deleted document has none left to look up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_code: Option<String>,
    /// People the change names (mentions), with their reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<Notice>,
    /// A text of its own, for notices that quote no comment (why a delivery failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
}

/// The body of a webhook delivery (DESIGN.md §8.3): ids only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookBody {
    #[serde(rename = "type")]
    pub kind: WebhookEventType,
    pub timestamp: String,
    pub data: WebhookData,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookData {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<String>,
}

impl Event {
    /// A change of `kind` made by `actor_id` at `at`, on nothing yet (set the ids it concerns).
    pub fn new(id: String, kind: impl Into<EventType>, at: Millis, actor_id: &str) -> Event {
        Event {
            id,
            kind: kind.into(),
            at,
            actor_id: Some(actor_id.to_string()),
            review_id: None,
            comment_id: None,
            message_id: None,
            version_id: None,
            run_id: None,
            project_code: None,
            notify: Vec::new(),
            excerpt: None,
        }
    }

    /// The `event` row that records it.
    pub fn entry(&self) -> OutboxEntry {
        OutboxEntry {
            id: self.id.clone(),
            sink: Sink::Event,
            kind: self.kind.as_str().to_string(),
            event_id: self.id.clone(),
            target: None,
            payload: crate::store::columns::to_json(self),
            created_at: self.at,
            next_attempt_at: self.at,
            dedupe_key: None,
        }
    }

    /// What a webhook is sent about it, if it is a public event.
    pub fn webhook_body(&self) -> Option<WebhookBody> {
        Some(WebhookBody {
            kind: self.kind.webhook_type()?,
            timestamp: rfc3339(self.at),
            data: WebhookData {
                review_id: self.review_id.clone(),
                comment_id: self.comment_id.clone(),
                message_id: self.message_id.clone(),
                version_id: self.version_id.clone(),
                run_id: self.run_id.clone(),
                actor_id: self.actor_id.clone(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_through_their_row() {
        let mut event = Event::new(
            "evt_1".into(),
            WebhookEventType::CommentCreated,
            1_000,
            "usr_a",
        );
        event.review_id = Some("rv_1".into());
        event.comment_id = Some("cm_1".into());
        event.notify.push(Notice {
            user_id: "usr_b".into(),
            reason: NotificationReason::Mention,
        });
        let entry = event.entry();
        assert_eq!(entry.kind, "comment.created");
        assert_eq!(entry.sink, Sink::Event);
        let back: Event = serde_json::from_str(&entry.payload).unwrap();
        assert_eq!(back, event);
        let body = serde_json::to_value(event.webhook_body().unwrap()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "type": "comment.created",
                "timestamp": "1970-01-01T00:00:01.000Z",
                "data": { "reviewId": "rv_1", "commentId": "cm_1", "actorId": "usr_a" }
            })
        );
        for kind in [
            EventType::ItemCancelled,
            EventType::DeliveryFailed,
            EventType::ReviewRequested,
            EventType::CommentAssigned,
        ] {
            assert_eq!(EventType::parse(kind.as_str()), Some(kind));
            assert_eq!(kind.webhook_type(), None);
        }
    }
}
