//! `WorkflowStore` on SQLite: reviewers, decisions, finalizing and reactions. Writes are
//! serialized by the single writer, so what a write reads stays true until it commits.

use docreview_core::events::EventKind;
use docreview_core::model::{DecisionRecord, Millis, ReactionRecord, ReviewerRecord};
use docreview_core::outbox::OutboxEntry;
use docreview_core::store::{StoreError, StoreResult, WorkflowStore};
use rusqlite::{Connection, params};

use crate::SqliteStore;
use crate::outbox::insert_entries;
use crate::sql::{execute, internal, query_optional};
use crate::writer::review_event;

/// Counts a workflow change as a change of its document (`change_seq`, and `updated_at` when
/// `at` is given); `NotFound` when the document is gone.
fn touch(conn: &Connection, review_id: &str, at: Option<Millis>) -> StoreResult<()> {
    let touched = execute(
        conn,
        "UPDATE reviews SET change_seq = change_seq + 1, updated_at = coalesce(?2, updated_at) \
         WHERE id = ?1",
        params![review_id, at],
    )
    .map_err(internal)?;
    if touched == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

#[async_trait::async_trait]
impl WorkflowStore for SqliteStore {
    async fn put_reviewer(
        &self,
        reviewer: ReviewerRecord,
        outbox: Vec<OutboxEntry>,
    ) -> StoreResult<()> {
        self.write_change(reviewer.review_id.clone(), EventKind::Review, move |conn| {
            touch(conn, &reviewer.review_id, Some(reviewer.requested_at))?;
            execute(
                conn,
                "INSERT INTO reviewers (review_id, user_id, requested_at, due_at, requested_by) \
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (review_id, user_id) DO UPDATE SET \
                 due_at = excluded.due_at, requested_by = excluded.requested_by",
                params![
                    reviewer.review_id,
                    reviewer.user_id,
                    reviewer.requested_at,
                    reviewer.due_at,
                    reviewer.requested_by
                ],
            )
            .map_err(internal)?;
            insert_entries(conn, &outbox)?;
            Ok(())
        })
        .await
    }

    async fn remove_reviewer(
        &self,
        review_id: &str,
        user_id: &str,
        at: Millis,
    ) -> StoreResult<bool> {
        let (review_id, user_id) = (review_id.to_string(), user_id.to_string());
        self.write_announced(move |conn| {
            let removed = execute(
                conn,
                "DELETE FROM reviewers WHERE review_id = ?1 AND user_id = ?2",
                params![review_id, user_id],
            )
            .map_err(internal)?;
            if removed == 0 {
                return Ok((false, None));
            }
            touch(conn, &review_id, Some(at))?;
            Ok((true, review_event(conn, &review_id, EventKind::Review)?))
        })
        .await
    }

    async fn put_decision(
        &self,
        decision: DecisionRecord,
        outbox: Vec<OutboxEntry>,
    ) -> StoreResult<()> {
        self.write_change(decision.review_id.clone(), EventKind::Review, move |conn| {
            let latest = query_optional(
                conn,
                "SELECT latest_version_id FROM reviews WHERE id = ?1",
                [&decision.review_id],
                |row| row.text(0),
            )?
            .ok_or(StoreError::NotFound)?;
            if latest != decision.version_id {
                return Err(StoreError::StaleVersion { latest });
            }
            touch(conn, &decision.review_id, Some(decision.created_at))?;
            execute(
                conn,
                "INSERT INTO decisions (id, review_id, user_id, decision, version_id, body, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (review_id, user_id) DO UPDATE SET \
                 id = excluded.id, decision = excluded.decision, version_id = excluded.version_id, \
                 body = excluded.body, created_at = excluded.created_at",
                params![
                    decision.id,
                    decision.review_id,
                    decision.user_id,
                    decision.decision.as_str(),
                    decision.version_id,
                    decision.body,
                    decision.created_at
                ],
            )
            .map_err(internal)?;
            insert_entries(conn, &outbox)?;
            Ok(())
        })
        .await
    }

    async fn set_finalized(
        &self,
        review_id: &str,
        finalized: Option<(Millis, String)>,
        at: Millis,
        outbox: Vec<OutboxEntry>,
    ) -> StoreResult<bool> {
        let review_id = review_id.to_string();
        self.write_announced(move |conn| {
            let was = query_optional(
                conn,
                "SELECT finalized_at IS NOT NULL FROM reviews WHERE id = ?1",
                [&review_id],
                |row| row.flag(0),
            )?
            .ok_or(StoreError::NotFound)?;
            if was == finalized.is_some() {
                return Ok((false, None));
            }
            if finalized.is_some() {
                let open = query_optional(
                    conn,
                    "SELECT count(*) FROM comments WHERE review_id = ?1 AND deleted_at IS NULL \
                     AND status = 'open'",
                    [&review_id],
                    |row| row.integer(0),
                )?
                .unwrap_or(0);
                if open > 0 {
                    return Err(StoreError::OpenComments(open));
                }
            }
            let (finalized_at, finalized_by) = finalized.unzip();
            execute(
                conn,
                "UPDATE reviews SET finalized_at = ?2, finalized_by = ?3 WHERE id = ?1",
                params![review_id, finalized_at, finalized_by],
            )
            .map_err(internal)?;
            touch(conn, &review_id, Some(at))?;
            insert_entries(conn, &outbox)?;
            Ok((true, review_event(conn, &review_id, EventKind::Review)?))
        })
        .await
    }

    async fn set_reaction(&self, reaction: ReactionRecord, on: bool) -> StoreResult<bool> {
        self.write_announced(move |conn| {
            let message_id = reaction.message_id.clone().unwrap_or_default();
            let live = match &reaction.message_id {
                None => query_optional(
                    conn,
                    "SELECT 1 FROM comments WHERE id = ?1 AND review_id = ?2 AND deleted_at IS NULL",
                    [&reaction.comment_id, &reaction.review_id],
                    |row| row.integer(0),
                )?,
                Some(message_id) => query_optional(
                    conn,
                    "SELECT 1 FROM messages m JOIN comments c ON c.id = m.comment_id \
                     WHERE m.id = ?1 AND m.comment_id = ?2 AND c.review_id = ?3 \
                     AND m.deleted_at IS NULL AND c.deleted_at IS NULL",
                    [message_id, &reaction.comment_id, &reaction.review_id],
                    |row| row.integer(0),
                )?,
            };
            if live.is_none() {
                return Err(StoreError::NotFound);
            }
            let changed = if on {
                execute(
                    conn,
                    "INSERT INTO reactions (review_id, comment_id, message_id, user_id, emoji, created_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
                    params![
                        reaction.review_id,
                        reaction.comment_id,
                        message_id,
                        reaction.user_id,
                        reaction.emoji.as_str(),
                        reaction.created_at
                    ],
                )
            } else {
                execute(
                    conn,
                    "DELETE FROM reactions WHERE comment_id = ?1 AND message_id = ?2 \
                     AND user_id = ?3 AND emoji = ?4",
                    params![
                        reaction.comment_id,
                        message_id,
                        reaction.user_id,
                        reaction.emoji.as_str()
                    ],
                )
            }
            .map_err(internal)?;
            if changed == 0 {
                return Ok((false, None));
            }
            // Reactions never conflict with the discussion: only `change_seq` moves.
            touch(conn, &reaction.review_id, None)?;
            let event = review_event(conn, &reaction.review_id, EventKind::Reactions)?;
            Ok((true, event))
        })
        .await
    }
}
