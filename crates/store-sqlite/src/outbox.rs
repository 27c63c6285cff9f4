//! `OutboxStore` on SQLite. Claims go through the one writer like every write, so two claims
//! never overlap: a row goes to the first claim that finds it due.

use docreview_core::model::{EmailFrequency, Millis};
use docreview_core::outbox::{
    Completion, NotificationRecord, OutboxEntry, OutboxRow, Sink, SinkDepth, Withdrawn,
};
use docreview_core::store::columns::{self, OutcomeColumns};
use docreview_core::store::{OutboxStore, StoreError, StoreResult, count_param};
use rusqlite::{Connection, params};

use crate::SqliteStore;
use crate::sql::{execute, internal, query_all};

/// An outbox row as claimed, for `columns::outbox_row`.
const OUTBOX_COLUMNS: &str =
    "id, sink, kind, event_id, target, payload, created_at, attempts, claimed_by, next_attempt_at";

/// A notification, for `columns::notification`.
const NOTIFICATION_COLUMNS: &str = "id, user_id, event_id, reason, review_id, comment_id, message_id, \
     actor_id, excerpt, created_at, read_at";

/// Adds one entry, unless its dedupe key is taken; whether it was added.
pub(crate) fn insert_entry(conn: &Connection, entry: &OutboxEntry) -> StoreResult<bool> {
    let added = execute(
        conn,
        "INSERT INTO outbox (id, sink, kind, event_id, target, payload, status, attempts, \
         created_at, next_attempt_at, dedupe_key) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', 0, ?7, ?8, ?9) ON CONFLICT DO NOTHING",
        params![
            entry.id,
            entry.sink.as_str(),
            entry.kind,
            entry.event_id,
            entry.target,
            entry.payload,
            entry.created_at,
            entry.next_attempt_at,
            entry.dedupe_key,
        ],
    )
    .map_err(internal)?;
    Ok(added > 0)
}

/// Adds every entry (see `insert_entry`).
pub(crate) fn insert_entries(conn: &Connection, entries: &[OutboxEntry]) -> StoreResult<usize> {
    let mut added = 0;
    for entry in entries {
        added += usize::from(insert_entry(conn, entry)?);
    }
    Ok(added)
}

/// Adds a notification unless the pair (event, person) has one, or its document is gone;
/// whether it was added.
fn insert_notification(conn: &Connection, n: &NotificationRecord) -> StoreResult<bool> {
    let added = execute(
        conn,
        "INSERT INTO notifications (id, user_id, event_id, reason, review_id, comment_id, \
         message_id, actor_id, excerpt, created_at, read_at) \
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11 \
         WHERE ?5 IS NULL OR EXISTS (SELECT 1 FROM reviews WHERE id = ?5) \
         ON CONFLICT DO NOTHING",
        params![
            n.id,
            n.user_id,
            n.event_id,
            n.reason.as_str(),
            n.review_id,
            n.comment_id,
            n.message_id,
            n.actor_id,
            n.excerpt,
            n.created_at,
            n.read_at,
        ],
    )
    .map_err(internal)?;
    Ok(added > 0)
}

/// Removes the notifications of a cancelled item; answers whose they were.
fn withdraw(conn: &Connection, item: &Withdrawn) -> StoreResult<Vec<String>> {
    match item {
        Withdrawn::Comment(id) => query_all(
            conn,
            "DELETE FROM notifications WHERE comment_id = ?1 AND message_id IS NULL RETURNING user_id",
            [id],
            |row| row.text(0),
        ),
        Withdrawn::Reply(id) => query_all(
            conn,
            "DELETE FROM notifications WHERE message_id = ?1 RETURNING user_id",
            [id],
            |row| row.text(0),
        ),
    }
}

/// Records one completion if its row is still pending under its claimant; answers whether it
/// was, and adds the people whose notifications changed to `people`.
fn complete(
    conn: &Connection,
    completion: &Completion,
    people: &mut Vec<String>,
) -> StoreResult<bool> {
    let outcome = OutcomeColumns::of(&completion.outcome, completion.at);
    let recorded = execute(
        conn,
        "UPDATE outbox SET status = ?3, finished_at = ?4, next_attempt_at = ?5, claimed_by = NULL, \
         last_response_status = ?6, last_error = ?7 \
         WHERE id = ?1 AND claimed_by = ?2 AND status = 'pending'",
        params![
            completion.row_id,
            completion.claimant,
            outcome.status.as_str(),
            outcome.finished_at,
            outcome.next_attempt_at,
            outcome.response_status,
            outcome.error,
        ],
    )
    .map_err(internal)?;
    if recorded == 0 {
        return Ok(false);
    }
    if let Some(item) = &completion.withdraw {
        people.extend(withdraw(conn, item)?);
    }
    for notification in &completion.notifications {
        if insert_notification(conn, notification)? {
            people.push(notification.user_id.clone());
        }
    }
    insert_entries(conn, &completion.entries)?;
    Ok(true)
}

#[async_trait::async_trait]
impl OutboxStore for SqliteStore {
    async fn add_outbox(&self, entries: Vec<OutboxEntry>) -> StoreResult<usize> {
        self.write(move |conn| insert_entries(conn, &entries)).await
    }

    async fn claim_outbox(
        &self,
        sink: Sink,
        claim: &str,
        now: Millis,
        lease_until: Millis,
        limit: usize,
    ) -> StoreResult<Vec<OutboxRow>> {
        let claim = claim.to_string();
        let mut rows = self
            .write(move |conn| {
                let sql = format!(
                    "UPDATE outbox SET attempts = attempts + 1, claimed_by = ?1, next_attempt_at = ?2 \
                     WHERE id IN (SELECT id FROM outbox WHERE sink = ?3 AND status = 'pending' \
                       AND next_attempt_at <= ?4 ORDER BY next_attempt_at, id LIMIT ?5) \
                     RETURNING {OUTBOX_COLUMNS}"
                );
                query_all(
                    conn,
                    &sql,
                    params![claim, lease_until, sink.as_str(), now, count_param(limit)],
                    |row| columns::outbox_row(row, 0),
                )
            })
            .await?;
        rows.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(rows)
    }

    async fn complete_outbox(&self, completions: Vec<Completion>) -> StoreResult<Vec<String>> {
        let (completed, people) = self
            .write(move |conn| {
                let mut completed = Vec::new();
                let mut people = Vec::new();
                for completion in &completions {
                    if complete(conn, completion, &mut people)? {
                        completed.push(completion.row_id.clone());
                    }
                }
                Ok((completed, people))
            })
            .await?;
        self.tell_people(people);
        Ok(completed)
    }

    async fn outbox_depths(&self) -> StoreResult<Vec<SinkDepth>> {
        self.read(|tx| {
            query_all(
                tx,
                "SELECT sink, count(*), min(created_at) FROM outbox WHERE status = 'pending' GROUP BY sink",
                [],
                |row| {
                    Ok(SinkDepth {
                        sink: columns::word(row, 0, Sink::parse)?,
                        pending: row.integer(1)?,
                        oldest_created_at: row.optional_integer(2)?,
                    })
                },
            )
        })
        .await
    }

    async fn prune_outbox(&self, sink: Sink, before: Millis) -> StoreResult<u64> {
        self.write(move |conn| {
            let deleted = execute(
                conn,
                "DELETE FROM outbox WHERE sink = ?1 AND status <> 'pending' AND finished_at < ?2",
                params![sink.as_str(), before],
            )
            .map_err(internal)?;
            Ok(u64::try_from(deleted).unwrap_or(u64::MAX))
        })
        .await
    }

    async fn notifications_of(
        &self,
        user_id: &str,
        unread_only: bool,
        after: Option<(Millis, String)>,
        limit: usize,
    ) -> StoreResult<Vec<NotificationRecord>> {
        let user_id = user_id.to_string();
        let (after_at, after_id) = after.unzip();
        self.read(move |tx| {
            let sql = format!(
                "SELECT {NOTIFICATION_COLUMNS} FROM notifications WHERE user_id = ?1 \
                 AND (NOT ?2 OR read_at IS NULL) \
                 AND (?3 IS NULL OR created_at < ?3 OR (created_at = ?3 AND id < ?4)) \
                 ORDER BY created_at DESC, id DESC LIMIT ?5"
            );
            query_all(
                tx,
                &sql,
                params![user_id, unread_only, after_at, after_id, count_param(limit)],
                |row| columns::notification(row, 0),
            )
        })
        .await
    }

    async fn unread_notifications(&self, user_id: &str) -> StoreResult<Vec<(Option<String>, i64)>> {
        let user_id = user_id.to_string();
        self.read(move |tx| {
            query_all(
                tx,
                "SELECT review_id, count(*) FROM notifications \
                 WHERE user_id = ?1 AND read_at IS NULL GROUP BY review_id",
                [user_id],
                |row| Ok((row.optional_text(0)?, row.integer(1)?)),
            )
        })
        .await
    }

    async fn mark_notifications_read(
        &self,
        user_id: &str,
        ids: Option<Vec<String>>,
        at: Millis,
    ) -> StoreResult<u64> {
        let user_id = user_id.to_string();
        let person = user_id.clone();
        let ids = ids.map(|ids| columns::to_json(&ids));
        let changed = self
            .write(move |conn| {
                let changed = execute(
                    conn,
                    "UPDATE notifications SET read_at = ?2 WHERE user_id = ?1 AND read_at IS NULL \
                     AND (?3 IS NULL OR id IN (SELECT value FROM json_each(?3)))",
                    params![user_id, at, ids],
                )
                .map_err(internal)?;
                Ok(u64::try_from(changed).unwrap_or(u64::MAX))
            })
            .await?;
        if changed > 0 {
            self.tell_people(vec![person]);
        }
        Ok(changed)
    }

    async fn email_frequency(&self, user_id: &str) -> StoreResult<Option<EmailFrequency>> {
        let user_id = user_id.to_string();
        self.read(move |tx| {
            query_all(
                tx,
                "SELECT email_notifications FROM users WHERE id = ?1",
                [user_id],
                |row| columns::word(row, 0, EmailFrequency::parse),
            )
        })
        .await
        .map(|rows| rows.into_iter().next())
    }

    async fn set_email_frequency(
        &self,
        user_id: &str,
        frequency: EmailFrequency,
    ) -> StoreResult<bool> {
        let user_id = user_id.to_string();
        self.write(move |conn| {
            let changed = execute(
                conn,
                "UPDATE users SET email_notifications = ?2 WHERE id = ?1",
                params![user_id, frequency.as_str()],
            )
            .map_err(internal)?;
            Ok(changed > 0)
        })
        .await
    }

    async fn instance_key(
        &self,
        name: &str,
        candidate: Vec<u8>,
        at: Millis,
    ) -> StoreResult<Vec<u8>> {
        let name = name.to_string();
        self.write(move |conn| {
            execute(
                conn,
                "INSERT INTO instance_keys (name, key, created_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT DO NOTHING",
                params![name, candidate, at],
            )
            .map_err(internal)?;
            let keys = query_all(
                conn,
                "SELECT key FROM instance_keys WHERE name = ?1",
                [name],
                |row| row.bytes(0),
            )?;
            keys.into_iter()
                .next()
                .ok_or_else(|| StoreError::Internal("the instance key vanished".into()))
        })
        .await
    }

    async fn digest_people(&self) -> StoreResult<Vec<(String, Option<Millis>)>> {
        self.read(move |tx| {
            query_all(
                tx,
                "SELECT id, digest_until FROM users \
                 WHERE email_notifications = 'daily' AND status = 'active' ORDER BY id",
                [],
                |row| Ok((row.text(0)?, row.optional_integer(1)?)),
            )
        })
        .await
    }

    async fn set_digest_until(&self, user_id: &str, until: Millis) -> StoreResult<()> {
        let user_id = user_id.to_string();
        self.write(move |conn| {
            execute(
                conn,
                "UPDATE users SET digest_until = ?2 \
                 WHERE id = ?1 AND (digest_until IS NULL OR digest_until < ?2)",
                params![user_id, until],
            )
            .map_err(internal)?;
            Ok(())
        })
        .await
    }
}
