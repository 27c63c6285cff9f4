//! `CommentStore` on SQLite: comments with replies and status history, and agent runs.

use docreview_core::events::EventKind;
use docreview_core::model::{
    CommentRecord, CommentThread, MessageRecord, Millis, RunRecord, StatusEventRecord, User,
};
use docreview_core::store::columns::{self, optional_list_json, to_json};
use docreview_core::store::{CommentStore, CommentsWrite, StoreError, StoreResult};
use rusqlite::{Connection, params};

use crate::SqliteStore;
use crate::columns::{
    COMMENT_COLUMNS, EVENT_COLUMNS, MESSAGE_COLUMNS, REACTION_COLUMNS, RUN_COLUMNS, USER_COLUMNS,
};
use crate::outbox::insert_entries;
use crate::sql::{execute, internal, query_all, query_optional};

fn upsert_comment(conn: &Connection, c: &CommentRecord) -> StoreResult<()> {
    execute(
        conn,
        "INSERT INTO comments (id, review_id, author_id, category, status, body, version_id, anchor, run_id, \
         created_at, edited_at, deleted_at, mentions, thread_revision, assignee_id, suggestion) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 0, ?14, ?15) \
         ON CONFLICT (id) DO UPDATE SET category = excluded.category, status = excluded.status, body = excluded.body, \
         anchor = excluded.anchor, edited_at = excluded.edited_at, deleted_at = excluded.deleted_at, \
         mentions = excluded.mentions, assignee_id = excluded.assignee_id, suggestion = excluded.suggestion",
        params![
            c.id,
            c.review_id,
            c.author_id,
            c.category.as_str(),
            c.status.as_str(),
            c.body,
            c.version_id,
            to_json(&c.anchor),
            c.run_id,
            c.created_at,
            c.edited_at,
            c.deleted_at,
            optional_list_json(&c.mentions),
            c.assignee_id,
            c.suggestion,
        ],
    )
    .map_err(internal)?;
    Ok(())
}

fn upsert_message(conn: &Connection, m: &MessageRecord) -> StoreResult<()> {
    execute(
        conn,
        "INSERT INTO messages (id, comment_id, review_id, author_id, body, run_id, created_at, edited_at, deleted_at, mentions) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
         ON CONFLICT (id) DO UPDATE SET body = excluded.body, edited_at = excluded.edited_at, deleted_at = excluded.deleted_at, \
         mentions = excluded.mentions",
        params![
            m.id,
            m.comment_id,
            m.review_id,
            m.author_id,
            m.body,
            m.run_id,
            m.created_at,
            m.edited_at,
            m.deleted_at,
            optional_list_json(&m.mentions),
        ],
    )
    .map_err(internal)?;
    Ok(())
}

pub(crate) fn insert_event(
    conn: &Connection,
    review_id: &str,
    e: &StatusEventRecord,
) -> StoreResult<()> {
    execute(
        conn,
        "INSERT INTO status_events (comment_id, seq, review_id, status, by_id, ts, reason, version_id) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            e.comment_id,
            e.seq,
            review_id,
            e.status.as_str(),
            e.by_id,
            e.ts,
            e.reason,
            e.version_id
        ],
    )
    .map_err(internal)?;
    Ok(())
}

fn upsert_run(conn: &Connection, r: &RunRecord) -> StoreResult<()> {
    execute(
        conn,
        "INSERT INTO runs (id, review_id, kind, status, title, version_id, summary, created_by, created_at, completed_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, summary = excluded.summary, completed_at = excluded.completed_at",
        params![
            r.id,
            r.review_id,
            r.kind.as_str(),
            r.status.as_str(),
            r.title,
            r.version_id,
            r.summary,
            r.created_by,
            r.created_at,
            r.completed_at
        ],
    )
    .map_err(internal)?;
    Ok(())
}

#[async_trait::async_trait]
impl CommentStore for SqliteStore {
    async fn comment_thread(
        &self,
        review_id: &str,
        comment_id: &str,
    ) -> StoreResult<Option<CommentThread>> {
        let (review_id, comment_id) = (review_id.to_string(), comment_id.to_string());
        self.read(move |tx| {
            let sql =
                format!("SELECT {COMMENT_COLUMNS} FROM comments WHERE review_id = ?1 AND id = ?2");
            let comment = query_optional(tx, &sql, [&review_id, &comment_id], |row| {
                columns::comment(row, 0)
            })?;
            let Some(comment) = comment else {
                return Ok(None);
            };
            let messages = query_all(
                tx,
                &format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE comment_id = ?1"),
                [&comment_id],
                |row| columns::message(row, 0),
            )?;
            let events = query_all(
                tx,
                &format!(
                    "SELECT {EVENT_COLUMNS} FROM status_events WHERE comment_id = ?1 ORDER BY seq"
                ),
                [&comment_id],
                |row| columns::status_event(row, 0),
            )?;
            let reactions = query_all(
                tx,
                &format!("SELECT {REACTION_COLUMNS} FROM reactions WHERE comment_id = ?1"),
                [&comment_id],
                |row| columns::reaction(row, 0),
            )?;
            Ok(Some(CommentThread {
                comment,
                messages,
                events,
                reactions,
            }))
        })
        .await
    }

    async fn live_comments(&self, review_id: &str) -> StoreResult<Vec<CommentRecord>> {
        let review_id = review_id.to_string();
        self.read(move |tx| {
            let sql = format!(
                "SELECT {COMMENT_COLUMNS} FROM comments WHERE review_id = ?1 AND deleted_at IS NULL"
            );
            query_all(tx, &sql, [review_id], |row| columns::comment(row, 0))
        })
        .await
    }

    async fn users(&self, ids: &[String]) -> StoreResult<Vec<User>> {
        let ids = ids.to_vec();
        self.read(move |tx| {
            let sql = format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = ?1");
            let mut users = Vec::with_capacity(ids.len());
            for id in &ids {
                users.extend(query_optional(tx, &sql, [id], |row| columns::user(row, 0))?);
            }
            Ok(users)
        })
        .await
    }

    async fn write_comments(&self, review_id: &str, write: CommentsWrite) -> StoreResult<i64> {
        let review_id = review_id.to_string();
        self.write_change(review_id.clone(), EventKind::Comments, move |conn| {
            // The compare-and-swap: nothing below runs unless the revision (or the latest
            // version) is still the one the write was decided against.
            let bumped = query_optional(
                conn,
                "UPDATE reviews SET comments_revision = comments_revision + 1, updated_at = ?3, \
                 change_seq = change_seq + 1 WHERE id = ?1 AND CASE WHEN ?4 IS NULL \
                 THEN comments_revision = ?2 ELSE latest_version_id = ?4 END \
                 AND (?5 OR finalized_at IS NULL) RETURNING comments_revision",
                params![
                    review_id,
                    write.expected_revision,
                    write.at,
                    write.on_latest_version,
                    write.even_if_finalized
                ],
                |row| row.integer(0),
            )?;
            let Some(revision) = bumped else {
                let current = query_optional(
                    conn,
                    "SELECT comments_revision, finalized_at IS NOT NULL FROM reviews WHERE id = ?1",
                    [&review_id],
                    |row| Ok((row.integer(0)?, row.flag(1)?)),
                )?;
                if let Some((_, true)) = current
                    && !write.even_if_finalized
                {
                    return Err(StoreError::ReviewFinalized);
                }
                return Err(StoreError::revision_moved(current.map(|(revision, _)| revision)));
            };
            if let Some(run_id) = &write.in_running_run {
                let status = query_optional(
                    conn,
                    "SELECT status FROM runs WHERE id = ?1 AND review_id = ?2",
                    [run_id, &review_id],
                    |row| row.text(0),
                )?;
                if status.as_deref() != Some("running") {
                    return Err(StoreError::RunNotRunning);
                }
            }
            if let Some(guard) = &write.unchanged_thread {
                let now = query_optional(
                    conn,
                    "SELECT thread_revision FROM comments WHERE review_id = ?1 AND id = ?2",
                    [&review_id, &guard.comment_id],
                    |row| row.integer(0),
                )?;
                if now != Some(guard.thread_revision) {
                    return Err(StoreError::RevisionConflict {
                        current: revision - 1,
                    });
                }
            }
            if let Some(comment_id) = &write.on_live_comment {
                let live = query_optional(
                    conn,
                    "SELECT 1 FROM comments WHERE id = ?1 AND review_id = ?2 AND deleted_at IS NULL",
                    [comment_id, &review_id],
                    |row| row.integer(0),
                )?;
                if live.is_none() {
                    return Err(StoreError::NotFound);
                }
            }
            for comment in &write.comments {
                upsert_comment(conn, comment)?;
            }
            for message in &write.messages {
                upsert_message(conn, message)?;
            }
            for event in &write.events {
                insert_event(conn, &review_id, event)?;
            }
            for run in &write.runs {
                upsert_run(conn, run)?;
            }
            for comment_id in write.changed_threads() {
                execute(
                    conn,
                    "UPDATE comments SET thread_revision = thread_revision + 1 WHERE id = ?1",
                    [comment_id],
                )
                .map_err(internal)?;
            }
            insert_entries(conn, &write.outbox)?;
            Ok(revision)
        })
        .await
    }

    async fn insert_run(&self, run: RunRecord) -> StoreResult<()> {
        self.write_change(run.review_id.clone(), EventKind::Review, move |conn| {
            let touched = execute(
                conn,
                "UPDATE reviews SET change_seq = change_seq + 1, updated_at = ?2 WHERE id = ?1",
                params![run.review_id, run.created_at],
            )
            .map_err(internal)?;
            if touched == 0 {
                return Err(StoreError::NotFound);
            }
            upsert_run(conn, &run)
        })
        .await
    }

    async fn run(&self, review_id: &str, run_id: &str) -> StoreResult<Option<RunRecord>> {
        let (review_id, run_id) = (review_id.to_string(), run_id.to_string());
        self.read(move |tx| {
            let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE review_id = ?1 AND id = ?2");
            query_optional(tx, &sql, [review_id, run_id], |row| columns::run(row, 0))
        })
        .await
    }

    async fn run_items(
        &self,
        review_id: &str,
        run_id: &str,
    ) -> StoreResult<(Vec<CommentRecord>, Vec<MessageRecord>)> {
        let (review_id, run_id) = (review_id.to_string(), run_id.to_string());
        self.read(move |tx| {
            let comments = query_all(
                tx,
                &format!(
                    "SELECT {COMMENT_COLUMNS} FROM comments WHERE review_id = ?1 AND run_id = ?2"
                ),
                [&review_id, &run_id],
                |row| columns::comment(row, 0),
            )?;
            let messages = query_all(
                tx,
                &format!(
                    "SELECT {MESSAGE_COLUMNS} FROM messages WHERE review_id = ?1 AND run_id = ?2"
                ),
                [&review_id, &run_id],
                |row| columns::message(row, 0),
            )?;
            Ok((comments, messages))
        })
        .await
    }

    async fn running_runs_before(&self, cutoff: Millis) -> StoreResult<Vec<(String, String)>> {
        self.read(move |tx| {
            query_all(
                tx,
                "SELECT review_id, id FROM runs WHERE status = 'running' AND created_at < ?1",
                [cutoff],
                |row| Ok((row.text(0)?, row.text(1)?)),
            )
        })
        .await
    }
}
