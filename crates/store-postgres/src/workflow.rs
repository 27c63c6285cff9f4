//! `WorkflowStore` on PostgreSQL: reviewers, decisions, finalizing and reactions. Each write
//! first locks its document's row, so comment and version writes (which update that row) and
//! other workflow writes on the document wait for it, and what it reads stays true until it
//! commits.

use docreview_core::events::EventKind;
use docreview_core::model::{DecisionRecord, Millis, ReactionRecord, ReviewerRecord};
use docreview_core::outbox::OutboxEntry;
use docreview_core::store::{StoreError, StoreResult, WorkflowStore};
use sqlx::{PgConnection, Postgres, Transaction};

use crate::PgStore;
use crate::error::map_error;
use crate::events::notify;
use crate::outbox::insert_entries;

/// Locks the document's row; its latest version and whether it is finalized. `NotFound` when
/// it is gone.
async fn lock(conn: &mut PgConnection, review_id: &str) -> StoreResult<(String, bool)> {
    let row: Option<(String, bool)> = sqlx::query_as(
        "SELECT latest_version_id, finalized_at IS NOT NULL FROM reviews WHERE id = $1 FOR UPDATE",
    )
    .bind(review_id)
    .fetch_optional(&mut *conn)
    .await
    .map_err(map_error)?;
    row.ok_or(StoreError::NotFound)
}

/// Counts a workflow change as a change of its document (`change_seq`, and `updated_at` when
/// `at` is given), and announces it.
async fn touch(
    tx: &mut Transaction<'_, Postgres>,
    review_id: &str,
    at: Option<Millis>,
    kind: EventKind,
) -> StoreResult<()> {
    sqlx::query(
        "UPDATE reviews SET change_seq = change_seq + 1, updated_at = coalesce($2, updated_at) \
         WHERE id = $1",
    )
    .bind(review_id)
    .bind(at)
    .execute(&mut **tx)
    .await
    .map_err(map_error)?;
    notify(tx, review_id, kind).await
}

#[async_trait::async_trait]
impl WorkflowStore for PgStore {
    async fn put_reviewer(
        &self,
        reviewer: ReviewerRecord,
        outbox: Vec<OutboxEntry>,
    ) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        lock(&mut tx, &reviewer.review_id).await?;
        sqlx::query(
            "INSERT INTO reviewers (review_id, user_id, requested_at, due_at, requested_by) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (review_id, user_id) DO UPDATE SET \
             due_at = excluded.due_at, requested_by = excluded.requested_by",
        )
        .bind(&reviewer.review_id)
        .bind(&reviewer.user_id)
        .bind(reviewer.requested_at)
        .bind(reviewer.due_at)
        .bind(&reviewer.requested_by)
        .execute(&mut *tx)
        .await
        .map_err(map_error)?;
        insert_entries(&mut tx, &outbox).await?;
        touch(
            &mut tx,
            &reviewer.review_id,
            Some(reviewer.requested_at),
            EventKind::Review,
        )
        .await?;
        tx.commit().await.map_err(map_error)
    }

    async fn remove_reviewer(
        &self,
        review_id: &str,
        user_id: &str,
        at: Millis,
    ) -> StoreResult<bool> {
        let mut tx = self.begin().await?;
        lock(&mut tx, review_id).await?;
        let removed = sqlx::query("DELETE FROM reviewers WHERE review_id = $1 AND user_id = $2")
            .bind(review_id)
            .bind(user_id)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?
            .rows_affected();
        if removed == 0 {
            return Ok(false);
        }
        touch(&mut tx, review_id, Some(at), EventKind::Review).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(true)
    }

    async fn put_decision(
        &self,
        decision: DecisionRecord,
        outbox: Vec<OutboxEntry>,
    ) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        let (latest, _) = lock(&mut tx, &decision.review_id).await?;
        if latest != decision.version_id {
            return Err(StoreError::StaleVersion { latest });
        }
        sqlx::query(
            "INSERT INTO decisions (id, review_id, user_id, decision, version_id, body, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (review_id, user_id) DO UPDATE SET \
             id = excluded.id, decision = excluded.decision, version_id = excluded.version_id, \
             body = excluded.body, created_at = excluded.created_at",
        )
        .bind(&decision.id)
        .bind(&decision.review_id)
        .bind(&decision.user_id)
        .bind(decision.decision.as_str())
        .bind(&decision.version_id)
        .bind(&decision.body)
        .bind(decision.created_at)
        .execute(&mut *tx)
        .await
        .map_err(map_error)?;
        insert_entries(&mut tx, &outbox).await?;
        touch(
            &mut tx,
            &decision.review_id,
            Some(decision.created_at),
            EventKind::Review,
        )
        .await?;
        tx.commit().await.map_err(map_error)
    }

    async fn set_finalized(
        &self,
        review_id: &str,
        finalized: Option<(Millis, String)>,
        at: Millis,
        outbox: Vec<OutboxEntry>,
    ) -> StoreResult<bool> {
        let mut tx = self.begin().await?;
        let (_, was) = lock(&mut tx, review_id).await?;
        if was == finalized.is_some() {
            return Ok(false);
        }
        if finalized.is_some() {
            // Read after the row is locked (a new statement sees every comment write that
            // committed before): a comment written concurrently is counted or waits, and then
            // finds the document finalized.
            let open: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM comments WHERE review_id = $1 AND deleted_at IS NULL \
                 AND status = 'open'",
            )
            .bind(review_id)
            .fetch_one(&mut *tx)
            .await
            .map_err(map_error)?;
            if open > 0 {
                return Err(StoreError::OpenComments(open));
            }
        }
        let (finalized_at, finalized_by) = finalized.unzip();
        sqlx::query("UPDATE reviews SET finalized_at = $2, finalized_by = $3 WHERE id = $1")
            .bind(review_id)
            .bind(finalized_at)
            .bind(finalized_by)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        insert_entries(&mut tx, &outbox).await?;
        touch(&mut tx, review_id, Some(at), EventKind::Review).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(true)
    }

    async fn set_reaction(&self, reaction: ReactionRecord, on: bool) -> StoreResult<bool> {
        let mut tx = self.begin().await?;
        lock(&mut tx, &reaction.review_id).await?;
        let live: Option<i32> = match &reaction.message_id {
            None => sqlx::query_scalar(
                "SELECT 1 FROM comments WHERE id = $1 AND review_id = $2 AND deleted_at IS NULL",
            )
            .bind(&reaction.comment_id)
            .bind(&reaction.review_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(map_error)?,
            Some(message_id) => sqlx::query_scalar(
                "SELECT 1 FROM messages m JOIN comments c ON c.id = m.comment_id \
                 WHERE m.id = $1 AND m.comment_id = $2 AND c.review_id = $3 \
                 AND m.deleted_at IS NULL AND c.deleted_at IS NULL",
            )
            .bind(message_id)
            .bind(&reaction.comment_id)
            .bind(&reaction.review_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(map_error)?,
        };
        if live.is_none() {
            return Err(StoreError::NotFound);
        }
        let message_id = reaction.message_id.clone().unwrap_or_default();
        let changed = if on {
            sqlx::query(
                "INSERT INTO reactions (review_id, comment_id, message_id, user_id, emoji, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            )
            .bind(&reaction.review_id)
            .bind(&reaction.comment_id)
            .bind(&message_id)
            .bind(&reaction.user_id)
            .bind(reaction.emoji.as_str())
            .bind(reaction.created_at)
            .execute(&mut *tx)
            .await
        } else {
            sqlx::query(
                "DELETE FROM reactions WHERE comment_id = $1 AND message_id = $2 \
                 AND user_id = $3 AND emoji = $4",
            )
            .bind(&reaction.comment_id)
            .bind(&message_id)
            .bind(&reaction.user_id)
            .bind(reaction.emoji.as_str())
            .execute(&mut *tx)
            .await
        }
        .map_err(map_error)?
        .rows_affected();
        if changed == 0 {
            return Ok(false);
        }
        // Reactions never conflict with the discussion: only `change_seq` moves.
        touch(&mut tx, &reaction.review_id, None, EventKind::Reactions).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(true)
    }
}
