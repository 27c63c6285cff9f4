//! `OutboxStore` on PostgreSQL. A claim locks the due rows it takes with `FOR UPDATE SKIP
//! LOCKED`, so claims running at once on several nodes each take different rows, and none
//! waits for another.

use docreview_core::model::{EmailFrequency, Millis};
use docreview_core::outbox::{
    Completion, NotificationRecord, OutboxEntry, OutboxRow, Sink, SinkDepth, Withdrawn,
};
use docreview_core::store::columns::{self, OutcomeColumns};
use docreview_core::store::{OutboxStore, StoreResult, count_param};
use sqlx::PgConnection;

use crate::PgStore;
use crate::error::map_error;
use crate::events::tell_people;
use crate::sql::{decode_all, decode_one, decode_optional};

/// An outbox row as claimed, for `columns::outbox_row`.
const OUTBOX_COLUMNS: &str = "o.id, o.sink, o.kind, o.event_id, o.target, o.payload, o.created_at, \
     o.attempts, o.claimed_by, o.next_attempt_at";

/// A notification, for `columns::notification`.
const NOTIFICATION_COLUMNS: &str = "id, user_id, event_id, reason, review_id, comment_id, message_id, \
     actor_id, excerpt, created_at, read_at";

/// Adds each entry, unless its dedupe key is taken; answers how many were added.
pub(crate) async fn insert_entries(
    conn: &mut PgConnection,
    entries: &[OutboxEntry],
) -> StoreResult<usize> {
    let mut added = 0;
    for entry in entries {
        let result = sqlx::query(
            "INSERT INTO outbox (id, sink, kind, event_id, target, payload, status, attempts, \
             created_at, next_attempt_at, dedupe_key) \
             VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $8, $9) ON CONFLICT DO NOTHING",
        )
        .bind(&entry.id)
        .bind(entry.sink.as_str())
        .bind(&entry.kind)
        .bind(&entry.event_id)
        .bind(&entry.target)
        .bind(&entry.payload)
        .bind(entry.created_at)
        .bind(entry.next_attempt_at)
        .bind(&entry.dedupe_key)
        .execute(&mut *conn)
        .await
        .map_err(map_error)?;
        added += usize::try_from(result.rows_affected()).unwrap_or(0);
    }
    Ok(added)
}

/// Adds a notification unless the pair (event, person) has one, or its document is gone;
/// whether it was added.
async fn insert_notification(conn: &mut PgConnection, n: &NotificationRecord) -> StoreResult<bool> {
    let result = sqlx::query(
        "INSERT INTO notifications (id, user_id, event_id, reason, review_id, comment_id, \
         message_id, actor_id, excerpt, created_at, read_at) \
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 \
         WHERE $5::text IS NULL OR EXISTS (SELECT 1 FROM reviews WHERE id = $5) \
         ON CONFLICT DO NOTHING",
    )
    .bind(&n.id)
    .bind(&n.user_id)
    .bind(&n.event_id)
    .bind(n.reason.as_str())
    .bind(&n.review_id)
    .bind(&n.comment_id)
    .bind(&n.message_id)
    .bind(&n.actor_id)
    .bind(&n.excerpt)
    .bind(n.created_at)
    .bind(n.read_at)
    .execute(&mut *conn)
    .await
    .map_err(map_error)?;
    Ok(result.rows_affected() > 0)
}

/// Removes the notifications of a cancelled item; answers whose they were.
async fn withdraw(conn: &mut PgConnection, item: &Withdrawn) -> StoreResult<Vec<String>> {
    let (sql, id) = match item {
        Withdrawn::Comment(id) => (
            "DELETE FROM notifications WHERE comment_id = $1 AND message_id IS NULL RETURNING user_id",
            id,
        ),
        Withdrawn::Reply(id) => (
            "DELETE FROM notifications WHERE message_id = $1 RETURNING user_id",
            id,
        ),
    };
    sqlx::query_scalar(sql)
        .bind(id)
        .fetch_all(&mut *conn)
        .await
        .map_err(map_error)
}

/// Records one completion if its row is still pending under its claimant; answers whether it
/// was, and adds the people whose notifications changed to `people`.
async fn complete(
    conn: &mut PgConnection,
    completion: &Completion,
    people: &mut Vec<String>,
) -> StoreResult<bool> {
    let outcome = OutcomeColumns::of(&completion.outcome, completion.at);
    let recorded = sqlx::query(
        "UPDATE outbox SET status = $3, finished_at = $4, next_attempt_at = $5, claimed_by = NULL, \
         last_response_status = $6, last_error = $7 \
         WHERE id = $1 AND claimed_by = $2 AND status = 'pending'",
    )
    .bind(&completion.row_id)
    .bind(&completion.claimant)
    .bind(outcome.status.as_str())
    .bind(outcome.finished_at)
    .bind(outcome.next_attempt_at)
    .bind(outcome.response_status)
    .bind(outcome.error)
    .execute(&mut *conn)
    .await
    .map_err(map_error)?
    .rows_affected();
    if recorded == 0 {
        return Ok(false);
    }
    if let Some(item) = &completion.withdraw {
        people.extend(withdraw(conn, item).await?);
    }
    for notification in &completion.notifications {
        if insert_notification(conn, notification).await? {
            people.push(notification.user_id.clone());
        }
    }
    insert_entries(conn, &completion.entries).await?;
    Ok(true)
}

#[async_trait::async_trait]
impl OutboxStore for PgStore {
    async fn add_outbox(&self, entries: Vec<OutboxEntry>) -> StoreResult<usize> {
        let mut tx = self.begin().await?;
        let added = insert_entries(&mut tx, &entries).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(added)
    }

    async fn claim_outbox(
        &self,
        sink: Sink,
        claim: &str,
        now: Millis,
        lease_until: Millis,
        limit: usize,
    ) -> StoreResult<Vec<OutboxRow>> {
        let sql = format!(
            "UPDATE outbox o SET attempts = o.attempts + 1, claimed_by = $1, next_attempt_at = $2 \
             FROM (SELECT id FROM outbox WHERE sink = $3 AND status = 'pending' AND next_attempt_at <= $4 \
                   ORDER BY next_attempt_at, id LIMIT $5 FOR UPDATE SKIP LOCKED) due \
             WHERE o.id = due.id RETURNING {OUTBOX_COLUMNS}"
        );
        let rows = sqlx::query(&sql)
            .bind(claim)
            .bind(lease_until)
            .bind(sink.as_str())
            .bind(now)
            .bind(count_param(limit))
            .fetch_all(&self.pool)
            .await
            .map_err(map_error)?;
        let mut rows = decode_all(&rows, |row| columns::outbox_row(row, 0))?;
        rows.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(rows)
    }

    async fn complete_outbox(&self, completions: Vec<Completion>) -> StoreResult<Vec<String>> {
        let mut tx = self.begin().await?;
        let mut completed = Vec::new();
        let mut people = Vec::new();
        for completion in &completions {
            if complete(&mut tx, completion, &mut people).await? {
                completed.push(completion.row_id.clone());
            }
        }
        tell_people(&mut tx, people).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(completed)
    }

    async fn outbox_depths(&self) -> StoreResult<Vec<SinkDepth>> {
        let rows = sqlx::query(
            "SELECT sink, count(*)::bigint, min(created_at) FROM outbox WHERE status = 'pending' GROUP BY sink",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| {
            Ok(SinkDepth {
                sink: columns::word(row, 0, Sink::parse)?,
                pending: row.integer(1)?,
                oldest_created_at: row.optional_integer(2)?,
            })
        })
    }

    async fn prune_outbox(&self, sink: Sink, before: Millis) -> StoreResult<u64> {
        let result = sqlx::query(
            "DELETE FROM outbox WHERE sink = $1 AND status <> 'pending' AND finished_at < $2",
        )
        .bind(sink.as_str())
        .bind(before)
        .execute(&self.pool)
        .await
        .map_err(map_error)?;
        Ok(result.rows_affected())
    }

    async fn notifications_of(
        &self,
        user_id: &str,
        unread_only: bool,
        after: Option<(Millis, String)>,
        limit: usize,
    ) -> StoreResult<Vec<NotificationRecord>> {
        let (after_at, after_id) = after.unzip();
        let sql = format!(
            "SELECT {NOTIFICATION_COLUMNS} FROM notifications WHERE user_id = $1 \
             AND (NOT $2 OR read_at IS NULL) \
             AND ($3::bigint IS NULL OR created_at < $3 OR (created_at = $3 AND id < $4::text)) \
             ORDER BY created_at DESC, id DESC LIMIT $5"
        );
        let rows = sqlx::query(&sql)
            .bind(user_id)
            .bind(unread_only)
            .bind(after_at)
            .bind(after_id)
            .bind(count_param(limit))
            .fetch_all(&self.pool)
            .await
            .map_err(map_error)?;
        decode_all(&rows, |row| columns::notification(row, 0))
    }

    async fn unread_notifications(&self, user_id: &str) -> StoreResult<Vec<(Option<String>, i64)>> {
        let rows: Vec<(Option<String>, i64)> = sqlx::query_as(
            "SELECT review_id, count(*)::bigint FROM notifications \
             WHERE user_id = $1 AND read_at IS NULL GROUP BY review_id",
        )
        .bind(user_id)
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        Ok(rows)
    }

    async fn mark_notifications_read(
        &self,
        user_id: &str,
        ids: Option<Vec<String>>,
        at: Millis,
    ) -> StoreResult<u64> {
        let mut tx = self.begin().await?;
        let changed = sqlx::query(
            "UPDATE notifications SET read_at = $2 WHERE user_id = $1 AND read_at IS NULL \
             AND ($3::text[] IS NULL OR id = ANY($3::text[]))",
        )
        .bind(user_id)
        .bind(at)
        .bind(ids)
        .execute(&mut *tx)
        .await
        .map_err(map_error)?
        .rows_affected();
        if changed > 0 {
            tell_people(&mut tx, vec![user_id.to_string()]).await?;
        }
        tx.commit().await.map_err(map_error)?;
        Ok(changed)
    }

    async fn email_frequency(&self, user_id: &str) -> StoreResult<Option<EmailFrequency>> {
        let row = sqlx::query("SELECT email_notifications FROM users WHERE id = $1")
            .bind(user_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(map_error)?;
        decode_optional(row, |row| columns::word(row, 0, EmailFrequency::parse))
    }

    async fn set_email_frequency(
        &self,
        user_id: &str,
        frequency: EmailFrequency,
    ) -> StoreResult<bool> {
        let changed = sqlx::query("UPDATE users SET email_notifications = $2 WHERE id = $1")
            .bind(user_id)
            .bind(frequency.as_str())
            .execute(&self.pool)
            .await
            .map_err(map_error)?
            .rows_affected();
        Ok(changed > 0)
    }

    async fn instance_key(
        &self,
        name: &str,
        candidate: Vec<u8>,
        at: Millis,
    ) -> StoreResult<Vec<u8>> {
        sqlx::query(
            "INSERT INTO instance_keys (name, key, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT DO NOTHING",
        )
        .bind(name)
        .bind(candidate)
        .bind(at)
        .execute(&self.pool)
        .await
        .map_err(map_error)?;
        let row = sqlx::query("SELECT key FROM instance_keys WHERE name = $1")
            .bind(name)
            .fetch_one(&self.pool)
            .await
            .map_err(map_error)?;
        decode_one(&row, |row| row.bytes(0))
    }

    async fn digest_people(&self) -> StoreResult<Vec<(String, Option<Millis>)>> {
        let rows = sqlx::query(
            "SELECT id, digest_until FROM users \
             WHERE email_notifications = 'daily' AND status = 'active' ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| Ok((row.text(0)?, row.optional_integer(1)?)))
    }

    async fn set_digest_until(&self, user_id: &str, until: Millis) -> StoreResult<()> {
        sqlx::query(
            "UPDATE users SET digest_until = $2 \
             WHERE id = $1 AND (digest_until IS NULL OR digest_until < $2)",
        )
        .bind(user_id)
        .bind(until)
        .execute(&self.pool)
        .await
        .map_err(map_error)?;
        Ok(())
    }
}
