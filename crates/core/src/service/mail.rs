//! Mail's use cases: the instant mails an event's notifications give (written with the
//! event's completion), sending what is due in the `mail` sink, scheduling the daily digests,
//! and the one-click unsubscribe (`crate::mail`).

use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};

use super::Service;
use crate::error::{Error, Result};
use crate::mail::{self, Mail, MailItem, MailSetup, SendFailure};
use crate::model::{Account, EmailFrequency, Millis, ReviewHead};
use crate::outbox::{
    Completion, MAIL_RETRY_SCHEDULE_MS, NotificationRecord, OutboxEntry, OutboxRow, Outcome, Sink,
    next_delay,
};

/// The kinds of `mail` rows.
const KIND_NOTIFICATION: &str = "notification";
const KIND_DIGEST: &str = "digest";
/// A mail carrying a single-use link (an invitation, a password reset), ready to send.
pub(super) const KIND_LINK: &str = "link";

const DAY_MS: Millis = 86_400_000;
const HOUR_MS: Millis = 3_600_000;

/// The most notifications one digest lists (the rest are on the inbox page it links to).
const DIGEST_ITEMS: usize = 50;

/// What a digest row carries: the end of the period it covers.
#[derive(Debug, Serialize, Deserialize)]
struct DigestPayload {
    until: Millis,
}

impl Service {
    /// Whether mail is set up on this server.
    pub fn mail_enabled(&self) -> bool {
        self.settings.mail.is_some()
    }

    /// The key that signs unsubscribe links, made by the first node that needs it.
    async fn mail_key(&self) -> Result<Vec<u8>> {
        let key = self
            .outbox
            .mail_key
            .get_or_try_init(|| async {
                let mut candidate = vec![0u8; 32];
                self.entropy.fill(&mut candidate);
                self.store
                    .instance_key(mail::UNSUBSCRIBE_KEY, candidate, self.clock.now())
                    .await
            })
            .await?;
        Ok(key.clone())
    }

    async fn unsubscribe_url(&self, setup: &MailSetup, user_id: &str) -> Result<String> {
        let token = mail::unsubscribe_token(&self.mail_key().await?, user_id);
        Ok(format!("{}/unsubscribe/{token}", setup.public_url))
    }

    /// The person an unsubscribe link names (for the page that confirms it); `NotFound` when
    /// the link is not one this installation signed.
    pub async fn unsubscribe_target(&self, token: &str) -> Result<Account> {
        let user_id = mail::verify_unsubscribe(&self.mail_key().await?, token)
            .ok_or(Error::NotFound("unsubscribe link"))?;
        self.store
            .account_by_id(&user_id)
            .await?
            .ok_or(Error::NotFound("unsubscribe link"))
    }

    /// One-click unsubscribe (RFC 8058): the person the link names gets no more mail.
    pub async fn unsubscribe(&self, token: &str) -> Result<Account> {
        let account = self.unsubscribe_target(token).await?;
        self.store
            .set_email_frequency(account.id(), EmailFrequency::Off)
            .await?;
        Ok(account)
    }

    /// The link to a notification's thread (or document).
    fn thread_link(setup: &MailSetup, review_id: &str, comment_id: Option<&str>) -> String {
        match comment_id {
            Some(comment_id) => format!(
                "{}/reviews/{review_id}#thread-{comment_id}",
                setup.public_url
            ),
            None => format!("{}/reviews/{review_id}", setup.public_url),
        }
    }

    /// What a mail says about `notification` on `head`.
    async fn mail_item(
        &self,
        setup: &MailSetup,
        notification: &NotificationRecord,
        head: &ReviewHead,
    ) -> Result<MailItem> {
        let actor = match &notification.actor_id {
            Some(actor_id) => self
                .store
                .account_by_id(actor_id)
                .await?
                .map_or_else(|| "Someone".to_string(), |a| a.user.display_name),
            None => "docreview".to_string(),
        };
        Ok(MailItem {
            actor,
            phrase: mail::reason_phrase(notification.reason),
            review_title: head.review.title.clone(),
            excerpt: notification.excerpt.clone(),
            link: Self::thread_link(setup, &head.review.id, notification.comment_id.as_deref()),
        })
    }

    /// The instant mails of an event's notifications: one `mail` row per person whose setting
    /// is `instant`; nothing when mail is not set up.
    pub(super) async fn instant_mails(
        &self,
        notifications: &[NotificationRecord],
        head: Option<&ReviewHead>,
        now: Millis,
    ) -> Result<Vec<OutboxEntry>> {
        let (Some(setup), Some(head)) = (&self.settings.mail, head) else {
            return Ok(Vec::new());
        };
        let mut entries = Vec::new();
        for notification in notifications {
            if self.store.email_frequency(&notification.user_id).await?
                != Some(EmailFrequency::Instant)
            {
                continue;
            }
            let Some(account) = self.store.account_by_id(&notification.user_id).await? else {
                continue;
            };
            let item = self.mail_item(setup, notification, head).await?;
            let unsubscribe = self.unsubscribe_url(setup, account.id()).await?;
            let mail =
                mail::notification_mail(&account.email, &item, &setup.public_url, &unsubscribe)
                    .map_err(|error| Error::Internal(Box::new(error)))?;
            entries.push(OutboxEntry {
                id: self.new_id(Sink::Mail.id_prefix(), now),
                sink: Sink::Mail,
                kind: KIND_NOTIFICATION.to_string(),
                event_id: notification.event_id.clone(),
                target: Some(account.id().to_string()),
                payload: serde_json::to_string(&mail)
                    .map_err(|error| Error::Internal(Box::new(error)))?,
                created_at: now,
                next_attempt_at: now,
                dedupe_key: None,
            });
        }
        Ok(entries)
    }

    /// Sends claimed `mail` rows one after the other; a failure is retried on the mail
    /// schedule, a refusal for good (or a spent schedule) fails the row.
    pub(super) async fn send_mails(&self, rows: &[OutboxRow]) -> Result<Vec<Completion>> {
        let mut completions = Vec::with_capacity(rows.len());
        for row in rows {
            let sent = match &self.settings.mail {
                None => Err(SendFailure {
                    permanent: true,
                    detail: "no mail delivery is configured".to_string(),
                }),
                Some(setup) => self.send_row(setup, row).await?,
            };
            let now = self.clock.now();
            let outcome = match sent {
                Ok(()) => Outcome::Delivered {
                    response_status: None,
                },
                Err(failure) => match next_delay(MAIL_RETRY_SCHEDULE_MS, row.attempts) {
                    Some(delay) if !failure.permanent => Outcome::Retry {
                        at: now + delay,
                        response_status: None,
                        error: failure.detail,
                    },
                    _ => Outcome::Failed {
                        response_status: None,
                        error: failure.detail,
                    },
                },
            };
            completions.push(Completion::new(row, outcome, now));
        }
        Ok(completions)
    }

    async fn send_row(
        &self,
        setup: &MailSetup,
        row: &OutboxRow,
    ) -> Result<std::result::Result<(), SendFailure>> {
        let not_readable = |what: &str| SendFailure {
            permanent: true,
            detail: format!("not a {what} mail this build reads"),
        };
        match row.kind.as_str() {
            KIND_NOTIFICATION | KIND_LINK => {
                let Ok(mail) = serde_json::from_str::<Mail>(&row.payload) else {
                    return Ok(Err(not_readable(&row.kind)));
                };
                Ok(setup.mailer.send(&mail).await)
            }
            KIND_DIGEST => {
                let (Ok(payload), Some(user_id)) = (
                    serde_json::from_str::<DigestPayload>(&row.payload),
                    &row.target,
                ) else {
                    return Ok(Err(not_readable(KIND_DIGEST)));
                };
                let Some(mail) = self.digest(setup, user_id, payload.until).await? else {
                    return Ok(Ok(()));
                };
                let sent = setup.mailer.send(&mail).await;
                if sent.is_ok() {
                    self.store.set_digest_until(user_id, payload.until).await?;
                }
                Ok(sent)
            }
            _ => Ok(Err(not_readable("known"))),
        }
    }

    /// A person's digest up to `until`: their unread notifications since their last digest
    /// (at most a day back) on documents they can still read; `None` when there are none or
    /// they no longer want it.
    async fn digest(
        &self,
        setup: &MailSetup,
        user_id: &str,
        until: Millis,
    ) -> Result<Option<Mail>> {
        let Some(account) = self.store.account_by_id(user_id).await? else {
            return Ok(None);
        };
        if self.store.email_frequency(user_id).await? != Some(EmailFrequency::Daily) {
            return Ok(None);
        }
        let since = self
            .store
            .digest_people()
            .await?
            .into_iter()
            .find(|(id, _)| id == user_id)
            .and_then(|(_, since)| since)
            .unwrap_or(until - DAY_MS);
        let unread = self
            .store
            .notifications_of(user_id, true, None, DIGEST_ITEMS * 4)
            .await?;
        let mut items = Vec::new();
        let mut readable: std::collections::HashMap<String, Option<ReviewHead>> =
            std::collections::HashMap::new();
        for notification in unread
            .iter()
            .filter(|n| n.created_at > since && n.created_at <= until)
        {
            let Some(review_id) = &notification.review_id else {
                continue;
            };
            if !readable.contains_key(review_id) {
                let head = match self.store.review_head(review_id).await? {
                    Some(head) if self.can_read(&account, &head).await? => Some(head),
                    _ => None,
                };
                readable.insert(review_id.clone(), head);
            }
            if let Some(Some(head)) = readable.get(review_id) {
                items.push(self.mail_item(setup, notification, head).await?);
            }
            if items.len() == DIGEST_ITEMS {
                break;
            }
        }
        if items.is_empty() {
            return Ok(None);
        }
        // Oldest first, as the day went.
        items.reverse();
        let unsubscribe = self.unsubscribe_url(setup, user_id).await?;
        mail::digest_mail(&account.email, &items, &setup.public_url, &unsubscribe)
            .map(Some)
            .map_err(|error| Error::Internal(Box::new(error)))
    }

    /// Once today's digest hour has passed, adds a digest row for every person set to `daily`
    /// (one per person and day on every node: the row's dedupe key); answers how many were
    /// added. Each node does the work once a day.
    pub async fn schedule_digests(&self) -> Result<usize> {
        let Some(setup) = &self.settings.mail else {
            return Ok(0);
        };
        let now = self.clock.now();
        let day = now.div_euclid(DAY_MS);
        let until = day * DAY_MS + Millis::from(setup.digest_hour) * HOUR_MS;
        if now < until || self.outbox.digest_day.load(Ordering::Relaxed) == day {
            return Ok(0);
        }
        let payload = serde_json::to_string(&DigestPayload { until })
            .map_err(|error| Error::Internal(Box::new(error)))?;
        let entries: Vec<OutboxEntry> = self
            .store
            .digest_people()
            .await?
            .into_iter()
            .map(|(user_id, _)| OutboxEntry {
                id: self.new_id(Sink::Mail.id_prefix(), now),
                sink: Sink::Mail,
                kind: KIND_DIGEST.to_string(),
                event_id: format!("digest_{day}"),
                dedupe_key: Some(format!("digest:{user_id}:{day}")),
                target: Some(user_id),
                payload: payload.clone(),
                created_at: now,
                next_attempt_at: now,
            })
            .collect();
        let added = if entries.is_empty() {
            0
        } else {
            self.store.add_outbox(entries).await?
        };
        self.outbox.digest_day.store(day, Ordering::Relaxed);
        if added > 0 {
            self.wake(Sink::Mail);
        }
        Ok(added)
    }
}
