//! `CommentStore` on PostgreSQL: comments with replies and status history, and agent runs.

use std::collections::HashMap;

use docreview_core::events::EventKind;
use docreview_core::model::{
    CommentRecord, CommentThread, MessageRecord, Millis, RunRecord, StatusEventRecord, User,
};
use docreview_core::store::columns::{self, optional_list_json, to_json};
use docreview_core::store::{CommentStore, CommentsWrite, StoreError, StoreResult};
use sqlx::PgConnection;

use crate::PgStore;
use crate::columns::{
    COMMENT_COLUMNS, EVENT_COLUMNS, MESSAGE_COLUMNS, REACTION_COLUMNS, RUN_COLUMNS, USER_COLUMNS,
};
use crate::error::map_error;
use crate::events::notify;
use crate::outbox::insert_entries;
use crate::sql::{decode_all, decode_optional};

pub(crate) async fn insert_event(
    conn: &mut PgConnection,
    review_id: &str,
    event: &StatusEventRecord,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO status_events (comment_id, seq, review_id, status, by_id, ts, reason, version_id) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&event.comment_id)
    .bind(event.seq)
    .bind(review_id)
    .bind(event.status.as_str())
    .bind(&event.by_id)
    .bind(event.ts)
    .bind(&event.reason)
    .bind(&event.version_id)
    .execute(&mut *conn)
    .await
    .map_err(map_error)?;
    Ok(())
}

async fn upsert_comment(conn: &mut PgConnection, c: &CommentRecord) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO comments (id, review_id, author_id, category, status, body, version_id, anchor, run_id, \
         created_at, edited_at, deleted_at, mentions, thread_revision, assignee_id, suggestion) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13::jsonb, 0, $14, $15) \
         ON CONFLICT (id) DO UPDATE SET category = excluded.category, status = excluded.status, body = excluded.body, \
         anchor = excluded.anchor, edited_at = excluded.edited_at, deleted_at = excluded.deleted_at, \
         mentions = excluded.mentions, assignee_id = excluded.assignee_id, suggestion = excluded.suggestion",
    )
    .bind(&c.id)
    .bind(&c.review_id)
    .bind(&c.author_id)
    .bind(c.category.as_str())
    .bind(c.status.as_str())
    .bind(&c.body)
    .bind(&c.version_id)
    .bind(to_json(&c.anchor))
    .bind(&c.run_id)
    .bind(c.created_at)
    .bind(c.edited_at)
    .bind(c.deleted_at)
    .bind(optional_list_json(&c.mentions))
    .bind(&c.assignee_id)
    .bind(&c.suggestion)
    .execute(&mut *conn)
    .await
    .map_err(map_error)?;
    Ok(())
}

async fn upsert_message(conn: &mut PgConnection, m: &MessageRecord) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO messages (id, comment_id, review_id, author_id, body, run_id, created_at, edited_at, deleted_at, mentions) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb) \
         ON CONFLICT (id) DO UPDATE SET body = excluded.body, edited_at = excluded.edited_at, deleted_at = excluded.deleted_at, \
         mentions = excluded.mentions",
    )
    .bind(&m.id)
    .bind(&m.comment_id)
    .bind(&m.review_id)
    .bind(&m.author_id)
    .bind(&m.body)
    .bind(&m.run_id)
    .bind(m.created_at)
    .bind(m.edited_at)
    .bind(m.deleted_at)
    .bind(optional_list_json(&m.mentions))
    .execute(&mut *conn)
    .await
    .map_err(map_error)?;
    Ok(())
}

async fn upsert_run(conn: &mut PgConnection, r: &RunRecord) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO runs (id, review_id, kind, status, title, version_id, summary, created_by, created_at, completed_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, summary = excluded.summary, completed_at = excluded.completed_at",
    )
    .bind(&r.id)
    .bind(&r.review_id)
    .bind(r.kind.as_str())
    .bind(r.status.as_str())
    .bind(&r.title)
    .bind(&r.version_id)
    .bind(&r.summary)
    .bind(&r.created_by)
    .bind(r.created_at)
    .bind(r.completed_at)
    .execute(&mut *conn)
    .await
    .map_err(map_error)?;
    Ok(())
}

/// Who may see a document `r` (DESIGN.md §3), as `list_reviews` and both searches filter:
/// everything (`$1`, shared principals and org admins); else what the member `$2` owns, what is
/// linked to a project where they hold a role, and — for internal members (`$4`) only — link-mode
/// documents and those shared with their email `$3`. The cheap tests come first: `OR` stops at

#[async_trait::async_trait]
impl CommentStore for PgStore {
    async fn comment_thread(
        &self,
        review_id: &str,
        comment_id: &str,
    ) -> StoreResult<Option<CommentThread>> {
        let mut tx = self.snapshot().await?;
        let comment = sqlx::query(&format!(
            "SELECT {COMMENT_COLUMNS} FROM comments WHERE review_id = $1 AND id = $2"
        ))
        .bind(review_id)
        .bind(comment_id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(map_error)?;
        let Some(comment) = decode_optional(comment, |row| columns::comment(row, 0))? else {
            return Ok(None);
        };
        let messages = sqlx::query(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE comment_id = $1 ORDER BY created_at, id"
        ))
        .bind(comment_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let events = sqlx::query(&format!(
            "SELECT {EVENT_COLUMNS} FROM status_events WHERE comment_id = $1 ORDER BY seq"
        ))
        .bind(comment_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let reactions = sqlx::query(&format!(
            "SELECT {REACTION_COLUMNS} FROM reactions WHERE comment_id = $1 ORDER BY created_at"
        ))
        .bind(comment_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        tx.commit().await.map_err(map_error)?;
        Ok(Some(CommentThread {
            comment,
            messages: decode_all(&messages, |row| columns::message(row, 0))?,
            events: decode_all(&events, |row| columns::status_event(row, 0))?,
            reactions: decode_all(&reactions, |row| columns::reaction(row, 0))?,
        }))
    }

    async fn live_comments(&self, review_id: &str) -> StoreResult<Vec<CommentRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {COMMENT_COLUMNS} FROM comments WHERE review_id = $1 AND deleted_at IS NULL ORDER BY created_at, id"
        ))
        .bind(review_id)
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| columns::comment(row, 0))
    }

    async fn users(&self, ids: &[String]) -> StoreResult<Vec<User>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = ANY($1)");
        let rows = sqlx::query(&sql)
            .bind(ids)
            .fetch_all(&self.pool)
            .await
            .map_err(map_error)?;
        let found: HashMap<String, User> = decode_all(&rows, |row| columns::user(row, 0))?
            .into_iter()
            .map(|user| (user.id.clone(), user))
            .collect();
        // One query, answered in the order asked (repeats included), as the SQLite backend's
        // one-lookup-per-id loop does.
        Ok(ids.iter().filter_map(|id| found.get(id).cloned()).collect())
    }

    async fn write_comments(&self, review_id: &str, write: CommentsWrite) -> StoreResult<i64> {
        let mut tx = self.begin().await?;
        // The compare-and-swap. A concurrent writer of the same document (on any node) holds the
        // row until it commits; PostgreSQL then re-checks this WHERE against the committed row,
        // so of all writers expecting the same revision exactly one matches (writers guarded by
        // the latest version all match, one after the other).
        let bumped: Option<i64> = sqlx::query_scalar(
            "UPDATE reviews SET comments_revision = comments_revision + 1, updated_at = $3, change_seq = change_seq + 1 \
             WHERE id = $1 AND CASE WHEN $4::text IS NULL THEN comments_revision = $2 ELSE latest_version_id = $4 END \
             AND ($5 OR finalized_at IS NULL) RETURNING comments_revision",
        )
        .bind(review_id)
        .bind(write.expected_revision)
        .bind(write.at)
        .bind(write.on_latest_version.as_deref())
        .bind(write.even_if_finalized)
        .fetch_optional(&mut *tx)
        .await
        .map_err(map_error)?;
        let Some(revision) = bumped else {
            let current: Option<(i64, bool)> = sqlx::query_as(
                "SELECT comments_revision, finalized_at IS NOT NULL FROM reviews WHERE id = $1",
            )
            .bind(review_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(map_error)?;
            if let Some((_, true)) = current
                && !write.even_if_finalized
            {
                return Err(StoreError::ReviewFinalized);
            }
            return Err(StoreError::revision_moved(
                current.map(|(revision, _)| revision),
            ));
        };
        if let Some(run_id) = &write.in_running_run {
            // Read after the document's row is locked: a finishing run commits first or waits.
            let status: Option<String> =
                sqlx::query_scalar("SELECT status FROM runs WHERE id = $1 AND review_id = $2")
                    .bind(run_id)
                    .bind(review_id)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(map_error)?;
            if status.as_deref() != Some("running") {
                return Err(StoreError::RunNotRunning);
            }
        }
        if let Some(guard) = &write.unchanged_thread {
            // Read after the document's row is locked: every other comment write commits
            // first or waits.
            let now: Option<i64> = sqlx::query_scalar(
                "SELECT thread_revision FROM comments WHERE review_id = $1 AND id = $2",
            )
            .bind(review_id)
            .bind(&guard.comment_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(map_error)?;
            if now != Some(guard.thread_revision) {
                return Err(StoreError::RevisionConflict {
                    current: revision - 1,
                });
            }
        }
        if let Some(comment_id) = &write.on_live_comment {
            // Read after the document's row is locked: a cancel commits first or waits.
            let live: Option<i32> = sqlx::query_scalar(
                "SELECT 1 FROM comments WHERE id = $1 AND review_id = $2 AND deleted_at IS NULL",
            )
            .bind(comment_id)
            .bind(review_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(map_error)?;
            if live.is_none() {
                return Err(StoreError::NotFound);
            }
        }
        for comment in &write.comments {
            upsert_comment(&mut tx, comment).await?;
        }
        for message in &write.messages {
            upsert_message(&mut tx, message).await?;
        }
        for event in &write.events {
            insert_event(&mut tx, review_id, event).await?;
        }
        for run in &write.runs {
            upsert_run(&mut tx, run).await?;
        }
        let changed: Vec<&str> = write.changed_threads().into_iter().collect();
        if !changed.is_empty() {
            sqlx::query(
                "UPDATE comments SET thread_revision = thread_revision + 1 WHERE id = ANY($1)",
            )
            .bind(&changed)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        }
        insert_entries(&mut tx, &write.outbox).await?;
        notify(&mut tx, review_id, EventKind::Comments).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(revision)
    }

    async fn insert_run(&self, run: RunRecord) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        let touched = sqlx::query(
            "UPDATE reviews SET change_seq = change_seq + 1, updated_at = $2 WHERE id = $1",
        )
        .bind(&run.review_id)
        .bind(run.created_at)
        .execute(&mut *tx)
        .await
        .map_err(map_error)?
        .rows_affected();
        if touched == 0 {
            return Err(StoreError::NotFound);
        }
        upsert_run(&mut tx, &run).await?;
        notify(&mut tx, &run.review_id, EventKind::Review).await?;
        tx.commit().await.map_err(map_error)
    }

    async fn run(&self, review_id: &str, run_id: &str) -> StoreResult<Option<RunRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE review_id = $1 AND id = $2"
        ))
        .bind(review_id)
        .bind(run_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        decode_optional(row, |row| columns::run(row, 0))
    }

    async fn run_items(
        &self,
        review_id: &str,
        run_id: &str,
    ) -> StoreResult<(Vec<CommentRecord>, Vec<MessageRecord>)> {
        let mut tx = self.snapshot().await?;
        let comments = sqlx::query(&format!(
            "SELECT {COMMENT_COLUMNS} FROM comments WHERE review_id = $1 AND run_id = $2 ORDER BY created_at, id"
        ))
        .bind(review_id)
        .bind(run_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let messages = sqlx::query(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE review_id = $1 AND run_id = $2 ORDER BY created_at, id"
        ))
        .bind(review_id)
        .bind(run_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        tx.commit().await.map_err(map_error)?;
        Ok((
            decode_all(&comments, |row| columns::comment(row, 0))?,
            decode_all(&messages, |row| columns::message(row, 0))?,
        ))
    }

    async fn running_runs_before(&self, cutoff: Millis) -> StoreResult<Vec<(String, String)>> {
        let rows = sqlx::query(
            "SELECT review_id, id FROM runs WHERE status = 'running' AND created_at < $1 ORDER BY created_at, id",
        )
        .bind(cutoff)
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| Ok((row.text(0)?, row.text(1)?)))
    }
}
