//! The outbox's use cases: recording the event of a change, and delivering what is due in a
//! sink (`crate::outbox`).

use std::sync::atomic::Ordering;

use super::Service;
use super::notifications;
use crate::access::Actor;
use crate::error::Result;
use crate::model::{GrantRole, Millis, ReviewHead, ReviewRecord, WebhookEventType};
use crate::outbox::{
    Completion, Event, EventType, LEASE_MS, NotificationRecord, OutboxRow, Outcome, Sink,
    SinkDepth, Withdrawn, recipients, worker::Wakeups,
};

/// Rows claimed at once, per sink: events are fanned out in one transaction per batch; mails
/// go one connection at a time; webhook deliveries run concurrently.
fn batch_size(sink: Sink) -> usize {
    match sink {
        Sink::Event => 256,
        Sink::Mail => 16,
        Sink::Webhook => 64,
    }
}

/// How long finished rows are kept: webhook deliveries are listed for a month; the rest only
/// until they are surely no longer needed.
fn retention_ms(sink: Sink) -> Millis {
    const DAY: Millis = 86_400_000;
    match sink {
        Sink::Event | Sink::Mail => DAY,
        Sink::Webhook => 30 * DAY,
    }
}

impl Service {
    /// The event of a change of `kind` that the caller makes at `at` on document `review`.
    pub(super) fn event_on(
        &self,
        kind: impl Into<EventType>,
        actor: &Actor,
        review: &ReviewRecord,
        at: Millis,
    ) -> Event {
        let mut event = Event::new(self.new_id("evt_", at), kind, at, actor.id());
        event.review_id = Some(review.id.clone());
        event.project_code.clone_from(&review.project_code);
        event
    }

    /// An event about a comment (and reply) of `head`.
    pub(super) fn comment_event(
        &self,
        kind: impl Into<EventType>,
        actor: &Actor,
        head: &ReviewHead,
        comment_id: &str,
        message_id: Option<&str>,
        at: Millis,
    ) -> Event {
        let mut event = self.event_on(kind, actor, &head.review, at);
        event.comment_id = Some(comment_id.to_string());
        event.message_id = message_id.map(str::to_string);
        event
    }

    /// Wakes this node's workers of `sink` (a write just added rows for it).
    pub(super) fn wake(&self, sink: Sink) {
        self.outbox.wakeups.wake(sink);
    }

    /// What the sinks' workers wait on.
    pub fn outbox_wakeups(&self) -> &Wakeups {
        &self.outbox.wakeups
    }

    /// Claims the rows of `sink` that are due, delivers them, and records each outcome;
    /// answers how many rows were claimed.
    pub async fn deliver_due(&self, sink: Sink) -> Result<usize> {
        let now = self.clock.now();
        let claim = format!(
            "{}/{}",
            self.outbox.node,
            self.outbox.claims.fetch_add(1, Ordering::Relaxed)
        );
        let rows = self
            .store
            .claim_outbox(sink, &claim, now, now + LEASE_MS, batch_size(sink))
            .await?;
        if rows.is_empty() {
            return Ok(0);
        }
        let claimed = rows.len();
        metrics::counter!("docreview_outbox_attempts_total", "sink" => sink.as_str())
            .increment(claimed as u64);
        let completions = match sink {
            Sink::Event => self.fan_out(&rows).await?,
            Sink::Webhook => self.deliver_webhooks(&rows).await?,
            Sink::Mail => self.send_mails(&rows).await?,
        };
        let failed = completions
            .iter()
            .filter(|c| !matches!(c.outcome, Outcome::Delivered { .. }))
            .count();
        if failed > 0 {
            metrics::counter!("docreview_outbox_failures_total", "sink" => sink.as_str())
                .increment(failed as u64);
        }
        let follows: Vec<Sink> = completions
            .iter()
            .flat_map(|c| c.entries.iter().map(|entry| entry.sink))
            .collect();
        self.store.complete_outbox(completions).await?;
        for next in Sink::ALL {
            if follows.contains(&next) {
                self.wake(next);
            }
        }
        Ok(claimed)
    }

    /// Fans events out: who is notified (written with the event's completion), and what
    /// follows. A row that is not an event this build reads is failed, not retried forever.
    async fn fan_out(&self, rows: &[OutboxRow]) -> Result<Vec<Completion>> {
        let now = self.clock.now();
        let mut completions = Vec::with_capacity(rows.len());
        // Read once per batch, when an event needs them.
        let mut webhooks = None;
        for row in rows {
            let event: Event = match serde_json::from_str(&row.payload) {
                Ok(event) => event,
                Err(error) => {
                    let outcome = Outcome::Failed {
                        response_status: None,
                        error: format!("not an event: {error}"),
                    };
                    completions.push(Completion::new(row, outcome, now));
                    continue;
                }
            };
            let done = Outcome::Delivered {
                response_status: None,
            };
            let mut completion = Completion::new(row, done, now);
            match event.kind {
                EventType::ItemCancelled => {
                    completion.withdraw = match (&event.message_id, &event.comment_id) {
                        (Some(message_id), _) => Some(Withdrawn::Reply(message_id.clone())),
                        (None, Some(comment_id)) => Some(Withdrawn::Comment(comment_id.clone())),
                        (None, None) => None,
                    };
                }
                EventType::DeliveryFailed => {
                    completion.notifications = self.tell_admins(&event).await?;
                }
                EventType::Public(_) => {
                    let (notifications, head) = self.notify_of(&event).await?;
                    completion.entries = self.deliveries_of(&event, &mut webhooks, now).await?;
                    completion.entries.extend(
                        self.instant_mails(&notifications, head.as_ref(), now)
                            .await?,
                    );
                    completion.notifications = notifications;
                }
                // Workflow notices that no webhook subscribes to: only the people they name.
                EventType::ReviewRequested | EventType::CommentAssigned => {
                    let (notifications, head) = self.notify_of(&event).await?;
                    completion.entries = self
                        .instant_mails(&notifications, head.as_ref(), now)
                        .await?;
                    completion.notifications = notifications;
                }
            }
            completions.push(completion);
        }
        Ok(completions)
    }

    /// The notifications an event gives (DESIGN.md §8.1), read against the document and
    /// thread as they are now: nothing when the document, comment or reply is gone.
    /// Answers the document too, for the mails that follow.
    async fn notify_of(
        &self,
        event: &Event,
    ) -> Result<(Vec<NotificationRecord>, Option<ReviewHead>)> {
        let none = || Ok((Vec::new(), None));
        let Some(review_id) = &event.review_id else {
            return none();
        };
        let Some(head) = self.store.review_head(review_id).await? else {
            return none();
        };
        let mut thread_authors = Vec::new();
        let mut excerpt = event.excerpt.clone().unwrap_or_default();
        if let Some(comment_id) = &event.comment_id {
            let Some(thread) = self.store.comment_thread(review_id, comment_id).await? else {
                return none();
            };
            if thread.comment.deleted_at.is_some() {
                return none();
            }
            let body = match &event.message_id {
                Some(message_id) => {
                    let Some(message) = thread
                        .messages
                        .iter()
                        .find(|m| &m.id == message_id && m.deleted_at.is_none())
                    else {
                        return none();
                    };
                    // Who wrote in the thread before this reply.
                    thread_authors.push(thread.comment.author_id.clone());
                    thread_authors.extend(
                        thread
                            .messages
                            .iter()
                            .filter(|m| {
                                m.deleted_at.is_none()
                                    && (m.created_at, &m.id) < (message.created_at, &message.id)
                            })
                            .map(|m| m.author_id.clone()),
                    );
                    &message.body
                }
                None => &thread.comment.body,
            };
            excerpt = notifications::excerpt(body);
        } else if let Some(run_id) = &event.run_id
            && let Some(run) = self.store.run(review_id, run_id).await?
        {
            excerpt = notifications::excerpt(run.summary.as_deref().unwrap_or(&run.title));
        }
        let editors = if event.kind == EventType::Public(WebhookEventType::ReviewDecision) {
            self.editors_of(&head).await?
        } else {
            Vec::new()
        };
        let context = recipients::Context {
            owner_id: Some(&head.review.owner_id),
            thread_authors: &thread_authors,
            editors: &editors,
        };
        let chosen = recipients::strongest(
            recipients::candidates(event, &context),
            event.actor_id.as_deref(),
        );
        let shape = notifications::NotificationShape {
            event_id: &event.id,
            at: event.at,
            actor_id: event.actor_id.as_deref(),
            comment_id: event.comment_id.as_deref(),
            message_id: event.message_id.as_deref(),
            excerpt: &excerpt,
        };
        let notifications = self.notifications_for(chosen, &head, &shape).await?;
        Ok((notifications, Some(head)))
    }

    /// The people the document is shared with as editors (their user ids).
    async fn editors_of(&self, head: &ReviewHead) -> Result<Vec<String>> {
        let mut editors = Vec::new();
        for grant in &head.grants {
            if grant.role == GrantRole::Editor
                && let Some(account) = self.store.account_by_email(&grant.email).await?
            {
                editors.push(account.user.id);
            }
        }
        Ok(editors)
    }

    /// Rows of a sink this node cannot deliver (no transport configured): given up at once.
    pub(super) fn undeliverable(&self, rows: &[OutboxRow]) -> Vec<Completion> {
        let now = self.clock.now();
        rows.iter()
            .map(|row| {
                let outcome = Outcome::Failed {
                    response_status: None,
                    error: format!("no {} delivery is configured", row.sink.as_str()),
                };
                Completion::new(row, outcome, now)
            })
            .collect()
    }

    /// What is pending in each sink (for `/metrics`).
    pub async fn outbox_depths(&self) -> Result<Vec<SinkDepth>> {
        Ok(self.store.outbox_depths().await?)
    }

    /// Deletes `sink`'s rows that finished longer ago than it keeps them.
    pub async fn prune_outbox(&self, sink: Sink) -> Result<u64> {
        let before = self.clock.now() - retention_ms(sink);
        Ok(self.store.prune_outbox(sink, before).await?)
    }
}

/// The outbox's state in a `Service`: this node's identity as a claimant, and its workers'
/// wake-ups.
pub(super) struct OutboxState {
    /// Names this node in claims (random per process).
    node: String,
    /// Makes each claim's name unique.
    claims: std::sync::atomic::AtomicU64,
    wakeups: Wakeups,
    /// The key that signs unsubscribe links, once read.
    pub(super) mail_key: tokio::sync::OnceCell<Vec<u8>>,
    /// The last day (days since the epoch) this node scheduled digests for; `i64::MIN` before.
    pub(super) digest_day: std::sync::atomic::AtomicI64,
}

impl OutboxState {
    pub(super) fn new(node: String) -> Self {
        OutboxState {
            node,
            claims: std::sync::atomic::AtomicU64::new(0),
            wakeups: Wakeups::default(),
            mail_key: tokio::sync::OnceCell::new(),
            digest_day: std::sync::atomic::AtomicI64::new(i64::MIN),
        }
    }
}
