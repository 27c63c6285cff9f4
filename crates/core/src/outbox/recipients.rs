//! Who is notified of an event, and why (DESIGN.md §8.1): one notification per event and
//! person, the strongest reason winning, never to the one who acted. Whether each person may
//! read the document is checked by the fan-out (`service::outbox`), against the document as it
//! is then, and again whenever notifications are read.
//!
//! A reason comes from one of two places: people a change names are decided when it is written
//! and travel in the event (`Event::notify`: mentions); people its type implies are found here,
//! from the document and thread as they are when the event is fanned out.

use super::event::{Event, EventType, Notice};
use crate::model::{NotificationReason, WebhookEventType};

/// What the fan-out read about the document and thread an event concerns.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The document's owner.
    pub owner_id: Option<&'a str>,
    /// Who wrote the thread before this change: the comment's author, then each reply's.
    pub thread_authors: &'a [String],
    /// The people the document is shared with as editors (read only for events that tell
    /// them: decisions).
    pub editors: &'a [String],
}

/// Everyone the event tells, with a reason each, before duplicates and access are sorted out.
pub fn candidates(event: &Event, context: &Context<'_>) -> Vec<Notice> {
    let mut notices = event.notify.clone();
    let mut tell = |user_id: &str, reason: NotificationReason| {
        notices.push(Notice {
            user_id: user_id.to_string(),
            reason,
        });
    };
    match event.kind {
        EventType::Public(WebhookEventType::CommentCreated) => {
            if let Some(owner) = context.owner_id {
                tell(owner, NotificationReason::Comment);
            }
        }
        EventType::Public(WebhookEventType::CommentReplied) => {
            for author in context.thread_authors {
                tell(author, NotificationReason::Reply);
            }
            if let Some(owner) = context.owner_id {
                tell(owner, NotificationReason::Comment);
            }
        }
        EventType::Public(WebhookEventType::ReviewDecision) => {
            if let Some(owner) = context.owner_id {
                tell(owner, NotificationReason::Decision);
            }
            for editor in context.editors {
                tell(editor, NotificationReason::Decision);
            }
        }
        EventType::Public(WebhookEventType::RunCompleted) => {
            if let Some(owner) = context.owner_id {
                tell(owner, NotificationReason::RunCompleted);
            }
        }
        _ => {}
    }
    notices
}

/// One notice per person, with the strongest of their reasons, in the order people first
/// appear; never to `actor_id`.
pub fn strongest(notices: Vec<Notice>, actor_id: Option<&str>) -> Vec<Notice> {
    let mut chosen: Vec<Notice> = Vec::with_capacity(notices.len());
    for notice in notices {
        if Some(notice.user_id.as_str()) == actor_id {
            continue;
        }
        match chosen.iter_mut().find(|c| c.user_id == notice.user_id) {
            Some(existing) if notice.reason.outranks(existing.reason) => {
                existing.reason = notice.reason;
            }
            Some(_) => {}
            None => chosen.push(notice),
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use NotificationReason as R;

    fn notice(user_id: &str, reason: NotificationReason) -> Notice {
        Notice {
            user_id: user_id.into(),
            reason,
        }
    }

    #[test]
    fn the_strongest_reason_wins_once_per_person_never_the_actor() {
        let chosen = strongest(
            vec![
                notice("ann", R::Comment),
                notice("bob", R::Reply),
                notice("ann", R::Mention),
                notice("bob", R::Comment),
                notice("me", R::Mention),
                notice("cy", R::RunCompleted),
            ],
            Some("me"),
        );
        assert_eq!(
            chosen,
            vec![
                notice("ann", R::Mention),
                notice("bob", R::Reply),
                notice("cy", R::RunCompleted)
            ]
        );
    }

    #[test]
    fn the_reasons_rank_as_designed() {
        let order = [
            R::Mention,
            R::Assigned,
            R::ReviewRequested,
            R::Decision,
            R::Reply,
            R::Comment,
            R::RunCompleted,
        ];
        for pair in order.windows(2) {
            assert!(pair[0].outranks(pair[1]), "{pair:?}");
            assert!(!pair[1].outranks(pair[0]));
        }
    }

    #[test]
    fn a_reply_tells_the_thread_and_the_owner() {
        let mut event = Event::new("evt_1".into(), WebhookEventType::CommentReplied, 0, "bob");
        event.notify.push(notice("cy", R::Mention));
        let authors = ["ann".to_string(), "bob".to_string(), "cy".to_string()];
        let context = Context {
            owner_id: Some("owner"),
            thread_authors: &authors,
            editors: &[],
        };
        let chosen = strongest(candidates(&event, &context), Some("bob"));
        assert_eq!(
            chosen,
            vec![
                notice("cy", R::Mention),
                notice("ann", R::Reply),
                notice("owner", R::Comment)
            ]
        );
    }

    #[test]
    fn status_changes_and_edits_tell_nobody_by_themselves() {
        for kind in [
            WebhookEventType::CommentStatusChanged,
            WebhookEventType::CommentEdited,
            WebhookEventType::ReviewCreated,
        ] {
            let event = Event::new("evt_1".into(), kind, 0, "bob");
            let context = Context {
                owner_id: Some("owner"),
                thread_authors: &[],
                editors: &[],
            };
            assert!(candidates(&event, &context).is_empty(), "{kind}");
        }
    }

    #[test]
    fn a_decision_tells_the_owner_and_the_editors() {
        let event = Event::new("evt_1".into(), WebhookEventType::ReviewDecision, 0, "bob");
        let editors = ["ed".to_string(), "bob".to_string()];
        let context = Context {
            owner_id: Some("owner"),
            thread_authors: &[],
            editors: &editors,
        };
        let chosen = strongest(candidates(&event, &context), Some("bob"));
        assert_eq!(
            chosen,
            vec![notice("owner", R::Decision), notice("ed", R::Decision)]
        );
    }
}
