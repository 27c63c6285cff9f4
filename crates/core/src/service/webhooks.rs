//! Webhooks (DESIGN.md §8.3): registering them (org admins; writes need the `org` scope),
//! the deliveries that fan-out adds for each event, and delivering those: signed as Standard
//! Webhooks, retried on the configured schedule, `410 Gone` disabling the webhook, and the
//! organization's admins told when a delivery fails for good.

use std::sync::Arc;

use docreview_api::requests::PageQuery;
use docreview_api::secret::Secret;
use docreview_api::webhooks::{
    DeliveryList, DeliveryView, NewWebhook, WebhookChange, WebhookList, WebhookView,
};

use super::{Service, check_length, page};
use crate::access::{self, Actor, Operation};
use crate::clock::rfc3339;
use crate::error::{Error, Result};
use crate::model::{DeliveryStatus, Millis, NotificationReason, WebhookEventType};
use crate::outbox::webhook::{
    self, ROTATION_OVERLAP_MS, WebhookAnswer, WebhookRequest, WebhookTransport,
};
use crate::outbox::{
    Completion, Event, EventType, NotificationRecord, OutboxEntry, OutboxRow, Outcome, Sink,
    next_delay,
};
use crate::store::{DeliveryRecord, MemberQuery, WebhookRecord};

/// How webhooks are delivered on this node.
pub struct WebhookSettings {
    /// `None`: webhooks cannot be registered, and deliveries fail (tests without HTTP).
    pub transport: Option<Arc<dyn WebhookTransport>>,
    /// The delays before the second, third, … attempt.
    pub retry_schedule: Vec<Millis>,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            transport: None,
            retry_schedule: crate::outbox::parse_schedule(webhook::DEFAULT_RETRY_SCHEDULE)
                .unwrap_or_default(),
        }
    }
}

/// The longest url and description accepted.
const MAX_URL_CHARS: usize = 2_000;
const MAX_DESCRIPTION_CHARS: usize = 500;

/// The word subscribing to every event type.
const EVERY_EVENT: &str = "*";

fn require_admin(actor: &Actor, operation: Operation) -> Result<()> {
    access::permit(actor, operation)?;
    if actor.account.is_admin {
        Ok(())
    } else {
        Err(Error::forbidden(
            "only organization administrators can manage webhooks",
        ))
    }
}

fn view(record: &WebhookRecord, secret: Option<&str>) -> WebhookView {
    WebhookView {
        id: record.id.clone(),
        url: record.url.clone(),
        events: record.events.clone(),
        project_code: record.project_code.clone(),
        description: record.description.clone(),
        active: record.active,
        created_at: rfc3339(record.created_at),
        secret: secret.map(|s| Secret::new(s.to_string())),
    }
}

fn delivery_view(record: &DeliveryRecord) -> DeliveryView {
    DeliveryView {
        id: record.id.clone(),
        webhook_id: record.webhook_id.clone(),
        event_id: record.event_id.clone(),
        kind: record.kind.clone(),
        attempts: record.attempts,
        status: record.status,
        last_response_status: record.last_response_status,
        last_error: record.last_error.clone(),
        created_at: rfc3339(record.created_at),
        next_attempt_at: (record.status == DeliveryStatus::Pending)
            .then(|| rfc3339(record.next_attempt_at)),
    }
}

/// The event types a webhook subscribes to, checked: known types, or `*` alone; duplicates
/// dropped, order kept.
fn check_events(events: Vec<String>) -> Result<Vec<String>> {
    if events.is_empty() {
        return Err(Error::invalid(
            "events must name at least one event type, or be [\"*\"]",
        ));
    }
    let mut kept: Vec<String> = Vec::new();
    for event in events {
        if event != EVERY_EVENT && WebhookEventType::parse(&event).is_none() {
            let known: Vec<&str> = WebhookEventType::ALL.iter().map(|t| t.as_str()).collect();
            return Err(Error::invalid(format!(
                "unknown event type `{}`; use {} or *",
                event.chars().take(64).collect::<String>(),
                known.join(", ")
            )));
        }
        if !kept.contains(&event) {
            kept.push(event);
        }
    }
    if kept.len() > 1 && kept.iter().any(|e| e == EVERY_EVENT) {
        return Err(Error::invalid(
            "`*` subscribes to every type; send it alone",
        ));
    }
    Ok(kept)
}

fn check_description(description: Option<String>) -> Result<Option<String>> {
    let Some(description) = description else {
        return Ok(None);
    };
    let description = description.trim().to_string();
    if description.is_empty() {
        return Ok(None);
    }
    check_length("description", &description, 1, MAX_DESCRIPTION_CHARS)?;
    Ok(Some(description))
}

/// Whether a webhook takes an event: active, subscribed to its type, and limited to no project
/// or to the event's.
fn subscribed(webhook: &WebhookRecord, kind: WebhookEventType, project: Option<&str>) -> bool {
    webhook.active
        && webhook
            .events
            .iter()
            .any(|e| e == EVERY_EVENT || e == kind.as_str())
        && webhook
            .project_code
            .as_deref()
            .is_none_or(|code| Some(code) == project)
}

impl Service {
    /// Webhooks are delivered through `settings` (the server passes its HTTP transport).
    #[must_use]
    pub fn with_webhooks(self, settings: WebhookSettings) -> Self {
        Service {
            webhooks: settings,
            ..self
        }
    }

    fn transport(&self) -> Result<&Arc<dyn WebhookTransport>> {
        self.webhooks
            .transport
            .as_ref()
            .ok_or_else(|| Error::invalid("webhooks are not available on this server"))
    }

    async fn check_url(&self, url: &str) -> Result<String> {
        check_length("url", url, 1, MAX_URL_CHARS)?;
        self.transport()?
            .check(url)
            .await
            .map_err(|why| Error::invalid(format!("url: {why}")))?;
        Ok(url.to_string())
    }

    async fn check_project(&self, code: Option<String>) -> Result<Option<String>> {
        let Some(code) = code else {
            return Ok(None);
        };
        check_length("projectCode", &code, 1, 200)?;
        match self.store.project(&code).await? {
            Some(project) => Ok(Some(project.code)),
            None => Err(Error::invalid(format!(
                "projectCode: there is no project `{}`",
                code.chars().take(64).collect::<String>()
            ))),
        }
    }

    async fn existing_webhook(&self, id: &str) -> Result<WebhookRecord> {
        self.store
            .webhook(id)
            .await?
            .ok_or(Error::NotFound("webhook"))
    }

    /// `GET /api/webhooks`.
    pub async fn list_webhooks(&self, actor: &Actor) -> Result<WebhookList> {
        require_admin(actor, Operation::OrgRead)?;
        let webhooks = self.store.webhooks().await?;
        Ok(WebhookList {
            webhooks: webhooks.iter().map(|w| view(w, None)).collect(),
        })
    }

    /// `POST /api/webhooks`: answers the webhook with its secret (the only time but a
    /// rotation that it is shown).
    pub async fn create_webhook(&self, actor: &Actor, new: NewWebhook) -> Result<WebhookView> {
        require_admin(actor, Operation::OrgWrite)?;
        let events = check_events(new.events)?;
        let description = check_description(new.description)?;
        let project_code = self.check_project(new.project_code).await?;
        let url = self.check_url(&new.url).await?;
        let now = self.clock.now();
        let record = WebhookRecord {
            id: self.new_id("wh_", now),
            url,
            events,
            project_code,
            description,
            active: true,
            secret: webhook::new_secret(&*self.entropy),
            previous_secret: None,
            previous_expires_at: None,
            created_by: actor.id().to_string(),
            created_at: now,
        };
        self.store.create_webhook(record.clone()).await?;
        Ok(view(&record, Some(&record.secret)))
    }

    /// `GET /api/webhooks/{id}`.
    pub async fn webhook(&self, actor: &Actor, id: &str) -> Result<WebhookView> {
        require_admin(actor, Operation::OrgRead)?;
        Ok(view(&self.existing_webhook(id).await?, None))
    }

    /// `PATCH /api/webhooks/{id}`.
    pub async fn update_webhook(
        &self,
        actor: &Actor,
        id: &str,
        change: WebhookChange,
    ) -> Result<WebhookView> {
        require_admin(actor, Operation::OrgWrite)?;
        let mut record = self.existing_webhook(id).await?;
        if let Some(events) = change.events {
            record.events = check_events(events)?;
        }
        if let Some(description) = change.description {
            record.description = check_description(description)?;
        }
        if let Some(code) = change.project_code {
            record.project_code = self.check_project(code).await?;
        }
        if let Some(url) = change.url {
            record.url = self.check_url(&url).await?;
        }
        if let Some(active) = change.active {
            record.active = active;
        }
        if !self.store.update_webhook(record.clone()).await? {
            return Err(Error::NotFound("webhook"));
        }
        Ok(view(&record, None))
    }

    /// `DELETE /api/webhooks/{id}`: the webhook and its delivery history go.
    pub async fn delete_webhook(&self, actor: &Actor, id: &str) -> Result<WebhookView> {
        require_admin(actor, Operation::OrgWrite)?;
        let record = self.existing_webhook(id).await?;
        if !self.store.delete_webhook(id).await? {
            return Err(Error::NotFound("webhook"));
        }
        Ok(view(&record, None))
    }

    /// `POST /api/webhooks/{id}/rotate-secret`: a new secret, shown once; the old one also
    /// signs for 24 hours, so receivers can switch without losing a delivery.
    pub async fn rotate_webhook_secret(&self, actor: &Actor, id: &str) -> Result<WebhookView> {
        require_admin(actor, Operation::OrgWrite)?;
        let mut record = self.existing_webhook(id).await?;
        let now = self.clock.now();
        let fresh = webhook::new_secret(&*self.entropy);
        record.previous_secret = Some(std::mem::replace(&mut record.secret, fresh));
        record.previous_expires_at = Some(now + ROTATION_OVERLAP_MS);
        if !self.store.update_webhook(record.clone()).await? {
            return Err(Error::NotFound("webhook"));
        }
        Ok(view(&record, Some(&record.secret)))
    }

    /// `POST /api/webhooks/{id}/ping`: a `ping` event to this webhook alone (also when it is
    /// not subscribed to `ping`, and also when it is disabled: a ping checks the receiver).
    pub async fn ping_webhook(&self, actor: &Actor, id: &str) -> Result<DeliveryView> {
        require_admin(actor, Operation::OrgWrite)?;
        let record = self.existing_webhook(id).await?;
        let now = self.clock.now();
        let event = Event::new(
            self.new_id("evt_", now),
            WebhookEventType::Ping,
            now,
            actor.id(),
        );
        let entry = self.delivery_entry(&event, &record.id, now);
        self.add_delivery(entry, &record.id).await
    }

    /// `POST /api/webhooks/{id}/deliveries/{deliveryId}/redeliver`: the same event again, as a
    /// new delivery with the same body and `webhook-id`.
    pub async fn redeliver(
        &self,
        actor: &Actor,
        id: &str,
        delivery_id: &str,
    ) -> Result<DeliveryView> {
        require_admin(actor, Operation::OrgWrite)?;
        let record = self.existing_webhook(id).await?;
        let Some(delivery) = self.store.webhook_delivery(id, delivery_id).await? else {
            return Err(Error::NotFound("delivery"));
        };
        let now = self.clock.now();
        let entry = OutboxEntry {
            id: self.new_id(Sink::Webhook.id_prefix(), now),
            sink: Sink::Webhook,
            kind: delivery.kind,
            event_id: delivery.event_id,
            target: Some(record.id.clone()),
            payload: delivery.payload,
            created_at: now,
            next_attempt_at: now,
            dedupe_key: None,
        };
        self.add_delivery(entry, &record.id).await
    }

    async fn add_delivery(&self, entry: OutboxEntry, webhook_id: &str) -> Result<DeliveryView> {
        let id = entry.id.clone();
        self.store.add_outbox(vec![entry]).await?;
        self.wake(Sink::Webhook);
        let delivery = self
            .store
            .webhook_delivery(webhook_id, &id)
            .await?
            .ok_or(Error::NotFound("delivery"))?;
        Ok(delivery_view(&delivery))
    }

    /// `GET /api/webhooks/{id}/deliveries`, newest first.
    pub async fn webhook_deliveries(
        &self,
        actor: &Actor,
        id: &str,
        query: PageQuery,
    ) -> Result<DeliveryList> {
        require_admin(actor, Operation::OrgRead)?;
        let limit = page::limit(query.limit)?;
        let after = query.cursor.as_deref().map(page::decode).transpose()?;
        self.existing_webhook(id).await?;
        let rows = self.store.webhook_deliveries(id, after, limit + 1).await?;
        let (rows, next_cursor) = page::trim_keyset_page(rows, limit, |row| row.id.clone());
        Ok(DeliveryList {
            deliveries: rows.iter().map(delivery_view).collect(),
            next_cursor,
        })
    }

    /// A delivery of `event` to webhook `webhook_id`, due at once; its payload is the body's
    /// exact bytes, signed and sent as they are on every attempt.
    fn delivery_entry(&self, event: &Event, webhook_id: &str, now: Millis) -> OutboxEntry {
        let body = event
            .webhook_body()
            .map(|body| crate::store::columns::to_json(&body))
            .unwrap_or_default();
        OutboxEntry {
            id: self.new_id(Sink::Webhook.id_prefix(), now),
            sink: Sink::Webhook,
            kind: event.kind.as_str().to_string(),
            event_id: event.id.clone(),
            target: Some(webhook_id.to_string()),
            payload: body,
            created_at: now,
            next_attempt_at: now,
            dedupe_key: None,
        }
    }

    /// The deliveries an event gives: one per active webhook subscribed to its type (and its
    /// document's project, for webhooks limited to one). `webhooks` is read once per batch.
    pub(super) async fn deliveries_of(
        &self,
        event: &Event,
        webhooks: &mut Option<Vec<WebhookRecord>>,
        now: Millis,
    ) -> Result<Vec<OutboxEntry>> {
        let Some(kind) = event.kind.webhook_type() else {
            return Ok(Vec::new());
        };
        if kind == WebhookEventType::Ping {
            return Ok(Vec::new());
        }
        if webhooks.is_none() {
            *webhooks = Some(self.store.webhooks().await?);
        }
        Ok(webhooks
            .iter()
            .flatten()
            .filter(|w| subscribed(w, kind, event.project_code.as_deref()))
            .map(|w| self.delivery_entry(event, &w.id, now))
            .collect())
    }

    /// The notifications of a delivery that failed for good: one to each active admin.
    pub(super) async fn tell_admins(&self, event: &Event) -> Result<Vec<NotificationRecord>> {
        let mut made = Vec::new();
        let mut after = None;
        loop {
            let admins = self
                .store
                .list_accounts(MemberQuery {
                    admins_only: true,
                    after: after.clone(),
                    limit: 200,
                })
                .await?;
            let Some(last) = admins.last() else {
                return Ok(made);
            };
            after = Some(last.email.clone());
            for admin in &admins {
                if admin.status != crate::model::UserStatus::Active {
                    continue;
                }
                made.push(NotificationRecord {
                    id: self.new_id("ntf_", event.at),
                    user_id: admin.id().to_string(),
                    event_id: event.id.clone(),
                    reason: NotificationReason::WebhookFailed,
                    review_id: None,
                    comment_id: None,
                    message_id: None,
                    actor_id: None,
                    excerpt: event.excerpt.clone().unwrap_or_default(),
                    created_at: event.at,
                    read_at: None,
                });
            }
        }
    }

    /// Delivers claimed webhook rows, concurrently, and answers each one's completion.
    pub(super) async fn deliver_webhooks(&self, rows: &[OutboxRow]) -> Result<Vec<Completion>> {
        let Some(transport) = self.webhooks.transport.clone() else {
            return Ok(self.undeliverable(rows));
        };
        let mut attempts = tokio::task::JoinSet::new();
        let mut completions = Vec::with_capacity(rows.len());
        for (index, row) in rows.iter().enumerate() {
            let webhook_id = row.target.clone().unwrap_or_default();
            let record = self.store.webhook(&webhook_id).await?;
            let now = self.clock.now();
            let Some(record) = record.filter(|w| w.active || row.kind == "ping") else {
                let outcome = Outcome::Failed {
                    response_status: None,
                    error: "the webhook was deleted or disabled".to_string(),
                };
                completions.push((index, Completion::new(row, outcome, now)));
                continue;
            };
            let request = signed_request(&record, row, now);
            let transport = Arc::clone(&transport);
            attempts.spawn(async move { (index, transport.send(request).await) });
        }
        while let Some(joined) = attempts.join_next().await {
            let Ok((index, answer)) = joined else {
                continue;
            };
            let row = &rows[index];
            completions.push((index, self.complete_delivery(row, answer).await?));
        }
        completions.sort_by_key(|(index, _)| *index);
        Ok(completions.into_iter().map(|(_, c)| c).collect())
    }

    /// What one attempt's answer means for its row.
    async fn complete_delivery(
        &self,
        row: &OutboxRow,
        answer: WebhookAnswer,
    ) -> Result<Completion> {
        let now = self.clock.now();
        let (status, retry_after, error) = match answer {
            WebhookAnswer::Status { status, .. } if (200..300).contains(&status) => {
                let outcome = Outcome::Delivered {
                    response_status: Some(i64::from(status)),
                };
                return Ok(Completion::new(row, outcome, now));
            }
            WebhookAnswer::Status { status: 410, .. } => {
                if let Some(id) = &row.target {
                    self.store.disable_webhook(id).await?;
                }
                let outcome = Outcome::Failed {
                    response_status: Some(410),
                    error: "410 Gone: the receiver is gone; the webhook is disabled".to_string(),
                };
                return Ok(Completion::new(row, outcome, now));
            }
            WebhookAnswer::Status {
                status,
                retry_after,
            } => {
                let error = if (300..400).contains(&status) {
                    format!("answered {status}; redirects are not followed")
                } else {
                    format!("answered {status}")
                };
                (Some(i64::from(status)), retry_after, error)
            }
            WebhookAnswer::Unreachable(error) => (None, None, error),
        };
        let schedule = &self.webhooks.retry_schedule;
        if let Some(delay) = next_delay(schedule, row.attempts) {
            let delay = retry_after.map_or(delay, |asked| asked.min(webhook::MAX_RETRY_AFTER_MS));
            let outcome = Outcome::Retry {
                at: now + delay,
                response_status: status,
                error,
            };
            return Ok(Completion::new(row, outcome, now));
        }
        let mut notice = Event::new(self.new_id("evt_", now), EventType::DeliveryFailed, now, "");
        notice.actor_id = None;
        notice.excerpt = Some(format!(
            "Webhook {}: delivery {} ({}) failed after {} attempts: {}",
            row.target.as_deref().unwrap_or_default(),
            row.id,
            row.kind,
            row.attempts,
            error
        ));
        let mut completion = Completion::new(
            row,
            Outcome::Failed {
                response_status: status,
                error,
            },
            now,
        );
        completion.entries.push(notice.entry());
        Ok(completion)
    }
}

/// The request of one attempt: `webhook-id` is the event's id (the same on every attempt and
/// redelivery), the timestamp this attempt's, signed with the secret and, during a rotation's
/// overlap, the previous one.
fn signed_request(record: &WebhookRecord, row: &OutboxRow, now: Millis) -> WebhookRequest {
    let timestamp = now / 1_000;
    let mut secrets = vec![record.secret.as_str()];
    if let (Some(previous), Some(until)) = (&record.previous_secret, record.previous_expires_at)
        && until > now
    {
        secrets.push(previous);
    }
    let signature = webhook::signature(&secrets, &row.event_id, timestamp, &row.payload);
    WebhookRequest {
        url: record.url.clone(),
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("webhook-id".into(), row.event_id.clone()),
            ("webhook-timestamp".into(), timestamp.to_string()),
            ("webhook-signature".into(), signature),
        ],
        body: row.payload.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_known_types_or_a_lone_star() {
        assert_eq!(
            check_events(vec!["comment.created".into(), "comment.created".into()]).unwrap(),
            vec!["comment.created".to_string()]
        );
        assert!(check_events(vec![]).is_err());
        assert!(check_events(vec!["comment.nope".into()]).is_err());
        assert!(check_events(vec!["*".into(), "ping".into()]).is_err());
        assert_eq!(
            check_events(vec!["*".into()]).unwrap(),
            vec!["*".to_string()]
        );
    }
}
