//! The outbox: everything that must leave the process because of a change (a notification, a
//! mail, a webhook delivery) is first a row written in the same transaction as the change, and
//! is delivered after the commit by workers on any node.
//!
//! A row is claimed by one node at a time: the claim sets a lease (`claimed_until`) and the
//! claimant's id, and only that claimant may record the row's outcome; a node that dies
//! mid-delivery leaves a lease that runs out, and another node (or the same one restarted)
//! claims the row again. Delivery is therefore at least once, and each attempt is made by one
//! node. Failed attempts are retried on the sink's schedule.
//!
//! Rows flow through three sinks: a change writes one `event` row; fanning it out decides who
//! is notified (writing their notifications) and adds the `mail` and `webhook` rows that
//! follow, in the transaction that finishes the `event` row. `docs/notifications.md` tells the
//! whole path, and how to add a reason or an event type.

pub mod event;
pub mod recipients;
pub mod webhook;
pub mod worker;

pub use event::{Event, EventType, Notice};

use crate::model::{Millis, NotificationReason};

/// Where an outbox row goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sink {
    /// A change to fan out: who is notified, which mails and webhook deliveries follow.
    Event,
    /// One mail to send.
    Mail,
    /// One delivery to one webhook.
    Webhook,
}

impl Sink {
    pub const ALL: [Sink; 3] = [Sink::Event, Sink::Mail, Sink::Webhook];

    pub fn as_str(self) -> &'static str {
        match self {
            Sink::Event => "event",
            Sink::Mail => "mail",
            Sink::Webhook => "webhook",
        }
    }

    pub fn parse(text: &str) -> Option<Sink> {
        Sink::ALL.into_iter().find(|sink| sink.as_str() == text)
    }

    /// The prefix of its rows' ids (a webhook delivery's id is shown by the API).
    pub fn id_prefix(self) -> &'static str {
        match self {
            Sink::Event => "evt_",
            Sink::Mail => "mail_",
            Sink::Webhook => "dlv_",
        }
    }
}

/// A new row of the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEntry {
    /// Its own id (`evt_…` for an event row, whose id is also the event's).
    pub id: String,
    pub sink: Sink,
    /// What it carries: the event type, or the kind of mail.
    pub kind: String,
    /// The change it comes from (the `webhook-id` of a delivery).
    pub event_id: String,
    /// The webhook a delivery goes to, or the person a mail goes to.
    pub target: Option<String>,
    /// What to deliver, as JSON (an `Event`, a mail's subject matter, a webhook body).
    pub payload: String,
    pub created_at: Millis,
    /// Not delivered before this time.
    pub next_attempt_at: Millis,
    /// At most one row of the outbox holds a given key (a person's daily digest); a second
    /// entry with the same key is not added.
    pub dedupe_key: Option<String>,
}

/// A row as a node claimed it: until `claimed_until`, only `claimant` may record its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub id: String,
    pub sink: Sink,
    pub kind: String,
    pub event_id: String,
    pub target: Option<String>,
    pub payload: String,
    pub created_at: Millis,
    /// Attempts made, this one included.
    pub attempts: i64,
    pub claimant: String,
    pub claimed_until: Millis,
}

/// How one attempt at a row ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Delivered {
        response_status: Option<i64>,
    },
    /// Try again at `at`.
    Retry {
        at: Millis,
        response_status: Option<i64>,
        error: String,
    },
    /// Given up: the schedule is spent, or the target refused for good.
    Failed {
        response_status: Option<i64>,
        error: String,
    },
}

/// A notification as stored: one per event and recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotificationRecord {
    pub id: String,
    pub user_id: String,
    pub event_id: String,
    pub reason: NotificationReason,
    /// `None` for notices about no document (a webhook that failed).
    pub review_id: Option<String>,
    pub comment_id: Option<String>,
    pub message_id: Option<String>,
    /// `None` when the system itself reports.
    pub actor_id: Option<String>,
    pub excerpt: String,
    pub created_at: Millis,
    pub read_at: Option<Millis>,
}

/// The outcome of a claimed row, and what follows from it, written in one transaction, and only
/// if the row is still claimed by `claimant` (else nothing is written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub row_id: String,
    pub claimant: String,
    pub outcome: Outcome,
    pub at: Millis,
    /// Notifications to add (one per event and recipient: a second for the same pair is not).
    pub notifications: Vec<NotificationRecord>,
    /// Notifications of this cancelled comment or reply to remove.
    pub withdraw: Option<Withdrawn>,
    /// Rows that follow (mails, webhook deliveries, a notice of a failed delivery).
    pub entries: Vec<OutboxEntry>,
}

/// A cancelled item whose notifications go with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Withdrawn {
    /// A comment's own notifications (not its replies').
    Comment(String),
    Reply(String),
}

impl Completion {
    pub fn new(row: &OutboxRow, outcome: Outcome, at: Millis) -> Completion {
        Completion {
            row_id: row.id.clone(),
            claimant: row.claimant.clone(),
            outcome,
            at,
            notifications: Vec::new(),
            withdraw: None,
            entries: Vec::new(),
        }
    }
}

/// What is waiting in one sink, for `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkDepth {
    pub sink: Sink,
    /// Rows still pending (due or waiting for a retry).
    pub pending: i64,
    /// When the oldest pending row was written.
    pub oldest_created_at: Option<Millis>,
}

/// How long a claim lasts: above the longest single attempt (a webhook's 10 s timeout, an SMTP
/// exchange's 20 s), so a live node never loses a row it is still delivering.
pub const LEASE_MS: Millis = 30_000;

/// The retry schedule of mails (a mail server down for a while is the usual failure): the
/// delays before the second, third, … attempt; after the last, the mail is `failed`.
pub const MAIL_RETRY_SCHEDULE_MS: &[Millis] = &[
    2_000,
    10_000,
    60_000,
    5 * 60_000,
    30 * 60_000,
    2 * 3_600_000,
    6 * 3_600_000,
];

/// Event rows fail only when the database does; they are retried quickly, and kept until done.
pub const EVENT_RETRY_MS: Millis = 1_000;

/// The delay before the next attempt after `attempts` failed ones, or `None` when `schedule`
/// is spent.
pub fn next_delay(schedule: &[Millis], attempts: i64) -> Option<Millis> {
    let index = usize::try_from(attempts).ok()?.checked_sub(1)?;
    schedule.get(index).copied()
}

/// Parses a retry schedule such as `5s,5m,30m,2h,5h,10h,10h` (`ms`, `s`, `m`, `h`, `d`).
pub fn parse_schedule(text: &str) -> Result<Vec<Millis>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| {
            let digits = part.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            let unit = &part[digits.len()..];
            let value: Millis = digits
                .parse()
                .map_err(|_| format!("`{part}` is not a duration such as 30s, 5m or 2h"))?;
            let scale = match unit {
                "ms" => 1,
                "s" | "" => 1_000,
                "m" => 60_000,
                "h" => 3_600_000,
                "d" => 86_400_000,
                _ => return Err(format!("`{part}`: use ms, s, m, h or d")),
            };
            Ok(value.saturating_mul(scale))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules() {
        assert_eq!(
            parse_schedule("5s,5m,30m,2h,5h,10h,10h").unwrap(),
            vec![
                5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000
            ]
        );
        assert_eq!(parse_schedule("250ms, 1s").unwrap(), vec![250, 1_000]);
        assert!(parse_schedule("5x").is_err());
        assert!(parse_schedule("s").is_err());
        let schedule = [1_000, 2_000];
        assert_eq!(next_delay(&schedule, 1), Some(1_000));
        assert_eq!(next_delay(&schedule, 2), Some(2_000));
        assert_eq!(next_delay(&schedule, 3), None);
        assert_eq!(next_delay(&schedule, 0), None);
    }

    #[test]
    fn sinks_have_one_spelling() {
        for sink in Sink::ALL {
            assert_eq!(Sink::parse(sink.as_str()), Some(sink));
        }
    }
}
