//! Mentions and notifications (DESIGN.md §8.1): resolving `@handle` when a comment or reply is
//! written, a person's notifications (checked against what they can read now), marking them
//! read, and how they are mailed.

use std::collections::HashMap;

use docreview_api::requests::{NotificationQuery, NotificationSettings, NotificationsRead};
use docreview_api::views::{NotificationList, NotificationView, UnreadCount};

use super::{Service, page};
use crate::access::{self, Actor, Operation};
use crate::clock::rfc3339;
use crate::error::{Error, Result};
use crate::handles;
use crate::model::NotificationReason;
use crate::model::{Account, Mention, Millis, Provider, ReviewHead, UserStatus};
use crate::outbox::{Notice, NotificationRecord};

/// The most ids one `POST /api/notifications/read` may name.
pub const MAX_READ_IDS: usize = 200;

/// How many rows a list reads past hidden ones before answering a shorter page.
const MAX_SCANNED_PAGES: usize = 10;

impl Service {
    /// The people `body` mentions who can read the document, and the handles it names that
    /// mention nobody (unknown, suspended, a shared token's principal, or unable to read:
    /// reported alike).
    pub(super) async fn resolve_mentions(
        &self,
        head: &ReviewHead,
        body: &str,
    ) -> Result<(Vec<Mention>, Vec<String>)> {
        let named = handles::mentioned(body);
        if named.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let accounts = self.store.accounts_by_handles(&named).await?;
        let mut mentions = Vec::new();
        let mut unresolved = Vec::new();
        for handle in named {
            let account = accounts.iter().find(|a| a.user.handle == handle);
            let readable = match account {
                Some(account) => self.can_read(account, head).await?,
                None => false,
            };
            match account {
                Some(account) if readable => mentions.push(Mention {
                    user_id: account.user.id.clone(),
                    handle,
                }),
                _ => unresolved.push(handle),
            }
        }
        Ok((mentions, unresolved))
    }

    /// Whether a person (never a shared token's principal) can read the document now.
    pub(super) async fn can_read(&self, account: &Account, head: &ReviewHead) -> Result<bool> {
        if account.user.provider == Provider::Service || account.status != UserStatus::Active {
            return Ok(false);
        }
        let project_role = match &head.review.project_code {
            Some(code) => self.store.project_role(code, account.id()).await?,
            None => None,
        };
        Ok(access::account_role(account, head, project_role).is_some())
    }

    /// `GET /api/notifications`: the caller's notifications, newest first, only those on
    /// documents they can read now (a lost access hides them; they come back with it).
    pub async fn notifications(
        &self,
        actor: &Actor,
        query: NotificationQuery,
    ) -> Result<NotificationList> {
        access::permit(actor, Operation::Account)?;
        let limit = page::limit(query.limit)?;
        let unread_only = query.unread.unwrap_or(false);
        let mut after = match query.cursor.as_deref() {
            Some(cursor) => Some(notification_key(cursor)?),
            None => None,
        };
        let mut readable = Readable::default();
        // Counted before the page is read, so a notification that arrives between the two reads
        // is on the page without being counted, never counted without being on the page (a
        // client polling for "1 unread" then finds it listed).
        let unread_count = self.unread_count(actor, &mut readable).await?;
        let mut shown = Vec::new();
        // Whether rows may follow the last one looked at.
        let mut more = false;
        for _ in 0..MAX_SCANNED_PAGES {
            let rows = self
                .store
                .notifications_of(actor.id(), unread_only, after.clone(), limit + 1)
                .await?;
            let fetched = rows.len();
            more = fetched > limit;
            for (index, row) in rows.into_iter().take(limit).enumerate() {
                after = Some((row.created_at, row.id.clone()));
                if let Some(title) = readable
                    .title(self, actor, row.review_id.as_deref())
                    .await?
                {
                    shown.push((row, title));
                    if shown.len() == limit {
                        more = more || index + 1 < fetched;
                        break;
                    }
                }
            }
            if !more || shown.len() == limit {
                break;
            }
        }
        let next_cursor = if more {
            after
                .as_ref()
                .map(|(at, id)| page::encode(&format!("{at}:{id}")))
        } else {
            None
        };
        let mut ids: Vec<String> = shown
            .iter()
            .filter_map(|(row, _)| row.actor_id.clone())
            .collect();
        ids.sort();
        ids.dedup();
        let users = self.store.users(&ids).await?;
        let notifications = shown
            .into_iter()
            .map(|(row, title)| NotificationView {
                id: row.id,
                reason: row.reason,
                review_id: row.review_id,
                review_title: title,
                comment_id: row.comment_id,
                actor: row
                    .actor_id
                    .and_then(|id| users.iter().find(|u| u.id == id).cloned()),
                excerpt: row.excerpt,
                created_at: rfc3339(row.created_at),
                read_at: row.read_at.map(rfc3339),
            })
            .collect();
        Ok(NotificationList {
            notifications,
            next_cursor,
            unread_count,
        })
    }

    /// How many of the caller's unread notifications they can see.
    async fn unread_count(&self, actor: &Actor, readable: &mut Readable) -> Result<i64> {
        let mut count = 0;
        for (review_id, unread) in self.store.unread_notifications(actor.id()).await? {
            if readable
                .title(self, actor, review_id.as_deref())
                .await?
                .is_some()
            {
                count += unread;
            }
        }
        Ok(count)
    }

    /// The caller's unread count now (for the live count of `GET /api/me/events`).
    pub async fn my_unread_count(&self, actor: &Actor) -> Result<UnreadCount> {
        access::permit(actor, Operation::Account)?;
        let unread_count = self.unread_count(actor, &mut Readable::default()).await?;
        Ok(UnreadCount { unread_count })
    }

    /// `POST /api/notifications/read`: marks the named notifications (or all) read; ids that
    /// are not the caller's, or read already, are passed over.
    pub async fn mark_notifications_read(
        &self,
        actor: &Actor,
        input: NotificationsRead,
    ) -> Result<UnreadCount> {
        access::permit(actor, Operation::Profile)?;
        let ids = match (input.ids, input.all) {
            (Some(_), Some(_)) | (None, None | Some(false)) => {
                return Err(Error::invalid(
                    "send either `ids` (a list of notification ids) or `all: true`",
                ));
            }
            (None, Some(true)) => None,
            (Some(ids), None) => {
                if ids.is_empty() || ids.len() > MAX_READ_IDS {
                    return Err(Error::invalid(format!(
                        "`ids` must hold 1 to {MAX_READ_IDS} notification ids"
                    )));
                }
                if ids.iter().any(|id| id.contains('\0') || id.len() > 100) {
                    return Err(Error::invalid("`ids` holds something that is not an id"));
                }
                Some(ids)
            }
        };
        self.store
            .mark_notifications_read(actor.id(), ids, self.clock.now())
            .await?;
        self.my_unread_count(actor).await
    }

    /// `GET /api/me/notification-settings`.
    pub async fn notification_settings(&self, actor: &Actor) -> Result<NotificationSettings> {
        access::permit(actor, Operation::Account)?;
        let email = self
            .store
            .email_frequency(actor.id())
            .await?
            .ok_or(Error::NotFound("user"))?;
        Ok(NotificationSettings {
            email,
            mail_enabled: self.mail_enabled(),
        })
    }

    /// `PATCH /api/me/notification-settings`.
    pub async fn set_notification_settings(
        &self,
        actor: &Actor,
        input: NotificationSettings,
    ) -> Result<NotificationSettings> {
        access::permit(actor, Operation::Profile)?;
        if actor.account.user.provider == Provider::Service {
            return Err(Error::forbidden(
                "a shared token's principal receives no notifications",
            ));
        }
        if !self
            .store
            .set_email_frequency(actor.id(), input.email)
            .await?
        {
            return Err(Error::NotFound("user"));
        }
        Ok(NotificationSettings {
            email: input.email,
            mail_enabled: self.mail_enabled(),
        })
    }

    /// The notifications an event gives the people in `notices` (strongest reason each, never
    /// the actor, chosen already): only to active people who can read the document now.
    pub(super) async fn notifications_for(
        &self,
        notices: Vec<Notice>,
        head: &ReviewHead,
        shape: &NotificationShape<'_>,
    ) -> Result<Vec<NotificationRecord>> {
        let mut made = Vec::new();
        for notice in notices {
            let Some(account) = self.store.account_by_id(&notice.user_id).await? else {
                continue;
            };
            if !self.can_read(&account, head).await? {
                continue;
            }
            made.push(NotificationRecord {
                id: self.new_id("ntf_", shape.at),
                user_id: notice.user_id,
                event_id: shape.event_id.to_string(),
                reason: notice.reason,
                review_id: Some(head.review.id.clone()),
                comment_id: shape.comment_id.map(str::to_string),
                message_id: shape.message_id.map(str::to_string),
                actor_id: shape.actor_id.map(str::to_string),
                excerpt: shape.excerpt.to_string(),
                created_at: shape.at,
                read_at: None,
            });
        }
        Ok(made)
    }
}

/// What every notification of one event shares.
pub(super) struct NotificationShape<'a> {
    pub event_id: &'a str,
    pub at: Millis,
    pub actor_id: Option<&'a str>,
    pub comment_id: Option<&'a str>,
    pub message_id: Option<&'a str>,
    pub excerpt: &'a str,
}

/// The longest excerpt a notification keeps, in characters.
pub const EXCERPT_CHARS: usize = 200;

/// The start of a body, on one line, for a notification.
pub fn excerpt(body: &str) -> String {
    let flat: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= EXCERPT_CHARS {
        flat
    } else {
        let cut: String = flat.chars().take(EXCERPT_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

/// The mentions in `now` that `before` did not have, as notices (an edit tells only the newly
/// mentioned).
pub(super) fn new_mentions(before: &[Mention], now: &[Mention]) -> Vec<Notice> {
    now.iter()
        .filter(|m| !before.iter().any(|b| b.user_id == m.user_id))
        .map(|m| Notice {
            user_id: m.user_id.clone(),
            reason: NotificationReason::Mention,
        })
        .collect()
}

/// The sort key inside a notifications cursor (`{createdAt}:{id}`).
fn notification_key(cursor: &str) -> Result<(Millis, String)> {
    let key = page::decode(cursor)?;
    let (at, id) = key.split_once(':').ok_or_else(page::not_ours)?;
    let at: Millis = at.parse().map_err(|_| page::not_ours())?;
    if id.is_empty() {
        return Err(page::not_ours());
    }
    Ok((at, id.to_string()))
}

/// Which documents the caller can read, asked once per document within one request: the title
/// of each readable one.
#[derive(Default)]
struct Readable(HashMap<String, Option<String>>);

impl Readable {
    /// The document's title if the caller can read it; `None` when not (or it is gone). A
    /// notification about no document is the caller's own (its excerpt says what happened).
    async fn title(
        &mut self,
        service: &Service,
        actor: &Actor,
        review_id: Option<&str>,
    ) -> Result<Option<Option<String>>> {
        let Some(review_id) = review_id else {
            return Ok(Some(None));
        };
        if let Some(known) = self.0.get(review_id) {
            return Ok(known.clone().map(Some));
        }
        let title = match service.store.review_head(review_id).await? {
            Some(head) if service.can_read(&actor.account, &head).await? => Some(head.review.title),
            _ => None,
        };
        self.0.insert(review_id.to_string(), title.clone());
        Ok(title.map(Some))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_one_short_line() {
        assert_eq!(excerpt("a\n\n b  c"), "a b c");
        let long = "word ".repeat(100);
        let cut = excerpt(&long);
        assert!(cut.chars().count() <= EXCERPT_CHARS);
        assert!(cut.ends_with('…'));
    }
}
