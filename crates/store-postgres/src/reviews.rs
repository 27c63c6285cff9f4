//! `ReviewStore` on PostgreSQL: documents, their versions and bodies, lists, and changes to
//! their own fields.

use docreview_core::events::EventKind;
use docreview_core::model::{
    AccessGrant, ReviewHead, ReviewState, ReviewSummaryRecord, VersionRecord,
};
use docreview_core::outbox::OutboxEntry;
use docreview_core::store::columns::{self, REVIEW_WIDTH, VERSION_WIDTH, to_json};
use docreview_core::store::{
    NewReview, ReviewQuery, ReviewStore, ReviewUpdate, Revisions, StoreError, StoreResult,
    VersionWrite, count_param,
};
use sqlx::PgConnection;

use crate::PgStore;
use crate::columns::{
    COMMENT_COLUMNS, DECISION_COLUMNS, EVENT_COLUMNS, MESSAGE_COLUMNS, REACTION_COLUMNS,
    REVIEW_COLUMNS, REVIEW_FROM, REVIEWER_COLUMNS, RUN_COLUMNS, SUMMARY_COLUMNS, SUMMARY_FROM,
    USER_COLUMNS, VERSION_COLUMNS,
};
use crate::error::{map_error, unique};
use crate::events::notify;
use crate::organization::project_where_code;
use crate::outbox::insert_entries;
use crate::sql::{decode_all, decode_one, decode_optional, storable};
use crate::visibility::{self, VISIBLE};

/// The document with its grants, in one statement (one row per grant, or one row of NULL
/// grant columns), so it is one consistent read even outside a transaction.
async fn head(conn: &mut PgConnection, review_id: &str) -> StoreResult<Option<ReviewHead>> {
    let sql = format!(
        "SELECT {REVIEW_COLUMNS}, a.email, a.role FROM {REVIEW_FROM} \
         LEFT JOIN review_access a ON a.review_id = r.id WHERE r.id = $1 ORDER BY a.email COLLATE \"C\""
    );
    let found = sqlx::query(&sql)
        .bind(review_id)
        .fetch_all(&mut *conn)
        .await
        .map_err(map_error)?;
    let Some(first) = found.first() else {
        return Ok(None);
    };
    let review = decode_one(first, |row| columns::review(row, 0))?;
    let grants = decode_all(&found, |row| columns::grant(row, REVIEW_WIDTH))?;
    Ok(Some(ReviewHead {
        review,
        grants: grants.into_iter().flatten().collect(),
    }))
}

/// Inserts the sharing list's rows; a repeated email keeps its last role, like SQLite's
/// `INSERT OR REPLACE`.
async fn insert_grants(
    conn: &mut PgConnection,
    review_id: &str,
    grants: &[AccessGrant],
) -> StoreResult<()> {
    for grant in grants {
        sqlx::query(
            "INSERT INTO review_access (review_id, email, role) VALUES ($1, $2, $3) \
             ON CONFLICT (review_id, email) DO UPDATE SET role = excluded.role",
        )
        .bind(review_id)
        .bind(&grant.email)
        .bind(grant.role.as_str())
        .execute(&mut *conn)
        .await
        .map_err(map_error)?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl ReviewStore for PgStore {
    async fn create_review(&self, new: NewReview) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        let r = &new.review;
        sqlx::query(
            "INSERT INTO reviews (id, title, owner_id, access_mode, tags, archived, comments_revision, \
             structure_revision, change_seq, created_at, updated_at, latest_version_id, structure, project_code) \
             VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14)",
        )
        .bind(&r.id)
        .bind(&r.title)
        .bind(&r.owner_id)
        .bind(r.access_mode.as_str())
        .bind(to_json(&r.tags))
        .bind(r.archived)
        .bind(r.comments_revision)
        .bind(r.structure_revision)
        .bind(r.change_seq)
        .bind(r.created_at)
        .bind(r.updated_at)
        .bind(&r.latest_version_id)
        .bind(r.structure.as_ref().map(to_json))
        .bind(&r.project_code)
        .execute(&mut *tx)
        .await
        .map_err(unique("document"))?;
        let v = &new.version;
        sqlx::query(
            "INSERT INTO versions (id, review_id, seq, label, created_at, source_hash, sections, html) \
             VALUES ($1, $2, 1, $3, $4, $5, $6::jsonb, $7)",
        )
        .bind(&v.id)
        .bind(&r.id)
        .bind(&v.label)
        .bind(v.created_at)
        .bind(&v.source_hash)
        .bind(to_json(&v.sections))
        .bind(new.html.as_slice())
        .execute(&mut *tx)
        .await
        .map_err(unique("version"))?;
        insert_grants(&mut tx, &r.id, &new.grants).await?;
        sqlx::query(
            "INSERT INTO review_search (review_id, title, body, version_id) VALUES ($1, $2, $3, $4)",
        )
        .bind(&r.id)
        .bind(&r.title)
        .bind(storable(new.search_text))
        .bind(&v.id)
        .execute(&mut *tx)
        .await
        .map_err(map_error)?;
        insert_entries(&mut tx, &new.outbox).await?;
        tx.commit().await.map_err(map_error)
    }

    async fn review_head(&self, review_id: &str) -> StoreResult<Option<ReviewHead>> {
        let mut conn = self.pool.acquire().await.map_err(map_error)?;
        head(&mut conn, review_id).await
    }

    async fn review_state(&self, review_id: &str) -> StoreResult<Option<ReviewState>> {
        let mut tx = self.snapshot().await?;
        let Some(head) = head(&mut tx, review_id).await? else {
            return Ok(None);
        };
        // Orders are for determinism only; the core sorts what it shows.
        let versions = sqlx::query(&format!(
            "SELECT {VERSION_COLUMNS} FROM versions WHERE review_id = $1 ORDER BY seq"
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let comments = sqlx::query(&format!(
            "SELECT {COMMENT_COLUMNS} FROM comments WHERE review_id = $1 ORDER BY created_at, id"
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let messages = sqlx::query(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE review_id = $1 ORDER BY created_at, id"
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let events = sqlx::query(&format!(
            "SELECT {EVENT_COLUMNS} FROM status_events WHERE review_id = $1 ORDER BY comment_id, seq"
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let runs = sqlx::query(&format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE review_id = $1 ORDER BY created_at, id"
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let reviewers = sqlx::query(&format!(
            "SELECT {REVIEWER_COLUMNS} FROM reviewers WHERE review_id = $1 ORDER BY requested_at, user_id"
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let decisions = sqlx::query(&format!(
            "SELECT {DECISION_COLUMNS} FROM decisions WHERE review_id = $1 ORDER BY created_at, id"
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let reactions = sqlx::query(&format!(
            "SELECT {REACTION_COLUMNS} FROM reactions WHERE review_id = $1 ORDER BY created_at"
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let users = sqlx::query(&format!(
            "SELECT {USER_COLUMNS} FROM users u WHERE u.id IN ( \
               SELECT owner_id FROM reviews WHERE id = $1 \
               UNION SELECT finalized_by FROM reviews WHERE id = $1 \
               UNION SELECT author_id FROM comments WHERE review_id = $1 \
               UNION SELECT assignee_id FROM comments WHERE review_id = $1 \
               UNION SELECT author_id FROM messages WHERE review_id = $1 \
               UNION SELECT by_id FROM status_events WHERE review_id = $1 \
               UNION SELECT user_id FROM reviewers WHERE review_id = $1 \
               UNION SELECT user_id FROM decisions WHERE review_id = $1) \
             ORDER BY u.id"
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let project = match &head.review.project_code {
            Some(code) => project_where_code(&mut tx, code).await?,
            None => None,
        };
        tx.commit().await.map_err(map_error)?;
        Ok(Some(ReviewState {
            head,
            versions: decode_all(&versions, |row| columns::version(row, 0))?,
            comments: decode_all(&comments, |row| columns::comment(row, 0))?,
            messages: decode_all(&messages, |row| columns::message(row, 0))?,
            events: decode_all(&events, |row| columns::status_event(row, 0))?,
            runs: decode_all(&runs, |row| columns::run(row, 0))?,
            reviewers: decode_all(&reviewers, |row| columns::reviewer(row, 0))?,
            decisions: decode_all(&decisions, |row| columns::decision(row, 0))?,
            reactions: decode_all(&reactions, |row| columns::reaction(row, 0))?,
            users: decode_all(&users, |row| columns::user(row, 0))?,
            project,
        }))
    }

    async fn list_reviews(&self, query: ReviewQuery) -> StoreResult<Vec<ReviewSummaryRecord>> {
        // `strpos`, not LIKE, so `%` and `_` in the search text are literal.
        let sql = format!(
            "SELECT {REVIEW_COLUMNS}, {SUMMARY_COLUMNS} FROM {SUMMARY_FROM} \
             WHERE {VISIBLE} \
               AND ($5::text IS NULL OR strpos(lower(r.title), lower($5::text)) > 0) \
               AND ($6::text IS NULL OR r.tags @> jsonb_build_array($6::text)) \
               AND ($7::boolean IS NULL OR r.archived = $7::boolean) \
               AND ($8::text IS NULL OR r.project_code = $8::text) \
               AND ($9::text IS NULL OR r.owner_id = $9::text) \
               AND ($10::bigint IS NULL OR (r.updated_at, r.id) < ($10::bigint, $11::text)) \
             ORDER BY r.updated_at DESC, r.id DESC LIMIT $12",
        );
        let (after_at, after_id) = match &query.after {
            Some((at, id)) => (Some(*at), Some(id.as_str())),
            None => (None, None),
        };
        let rows = visibility::bind(sqlx::query(&sql), &query.visibility)
            .bind(query.title_contains.as_deref())
            .bind(query.tag.as_deref())
            .bind(query.archived)
            .bind(query.project.as_deref())
            .bind(query.owner_id.as_deref())
            .bind(after_at)
            .bind(after_id)
            .bind(count_param(query.limit))
            .fetch_all(&self.pool)
            .await
            .map_err(map_error)?;
        decode_all(&rows, |row| columns::summary(row, 0))
    }

    async fn versions(&self, review_id: &str) -> StoreResult<Vec<VersionRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {VERSION_COLUMNS} FROM versions WHERE review_id = $1 ORDER BY seq"
        ))
        .bind(review_id)
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| columns::version(row, 0))
    }

    async fn version(
        &self,
        review_id: &str,
        version_id: &str,
    ) -> StoreResult<Option<VersionRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {VERSION_COLUMNS} FROM versions WHERE review_id = $1 AND id = $2"
        ))
        .bind(review_id)
        .bind(version_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        decode_optional(row, |row| columns::version(row, 0))
    }

    async fn version_html(
        &self,
        review_id: &str,
        version_id: &str,
    ) -> StoreResult<Option<(VersionRecord, Vec<u8>)>> {
        let row = sqlx::query(&format!(
            "SELECT {VERSION_COLUMNS}, html FROM versions WHERE review_id = $1 AND id = $2"
        ))
        .bind(review_id)
        .bind(version_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        decode_optional(row, |row| {
            Ok((columns::version(row, 0)?, row.bytes(VERSION_WIDTH)?))
        })
    }

    async fn write_version(&self, write: VersionWrite) -> StoreResult<Revisions> {
        let mut tx = self.begin().await?;
        // The row lock makes concurrent version and comment writes on this document wait for
        // this transaction, so the two checks below stay true until it commits.
        let current = sqlx::query(
            "SELECT latest_version_id, comments_revision, structure_revision, finalized_at IS NOT NULL \
             FROM reviews WHERE id = $1 FOR UPDATE",
        )
        .bind(&write.review_id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(map_error)?;
        let Some((latest, comments_revision, structure_revision, finalized)) =
            decode_optional(current, |row| {
                Ok((row.text(0)?, row.integer(1)?, row.integer(2)?, row.flag(3)?))
            })?
        else {
            return Err(StoreError::NotFound);
        };
        if finalized {
            return Err(StoreError::ReviewFinalized);
        }
        let revisions = write.revisions_after(latest, comments_revision, structure_revision)?;
        let v = &write.version;
        if write.append {
            sqlx::query(
                "INSERT INTO versions (id, review_id, seq, label, created_at, source_hash, sections, html) \
                 VALUES ($1, $2, (SELECT coalesce(max(seq), 0) + 1 FROM versions WHERE review_id = $2), $3, $4, $5, $6::jsonb, $7)",
            )
            .bind(&v.id)
            .bind(&write.review_id)
            .bind(&v.label)
            .bind(v.created_at)
            .bind(&v.source_hash)
            .bind(to_json(&v.sections))
            .bind(write.html.as_slice())
            .execute(&mut *tx)
            .await
            .map_err(unique("version"))?;
        } else {
            sqlx::query(
                "UPDATE versions SET label = $3, source_hash = $4, sections = $5::jsonb, html = $6 \
                 WHERE review_id = $1 AND id = $2",
            )
            .bind(&write.review_id)
            .bind(&v.id)
            .bind(&v.label)
            .bind(&v.source_hash)
            .bind(to_json(&v.sections))
            .bind(write.html.as_slice())
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        }
        for (comment_id, anchor) in &write.anchors {
            sqlx::query("UPDATE comments SET anchor = $2::jsonb, thread_revision = thread_revision + 1 WHERE id = $1 AND review_id = $3")
                .bind(comment_id)
                .bind(to_json(anchor))
                .bind(&write.review_id)
                .execute(&mut *tx)
                .await
                .map_err(map_error)?;
        }
        // Suggestions applied in this version: their comments close with the event.
        for event in &write.closed {
            sqlx::query("UPDATE comments SET status = $3 WHERE id = $1 AND review_id = $2")
                .bind(&event.comment_id)
                .bind(&write.review_id)
                .bind(event.status.as_str())
                .execute(&mut *tx)
                .await
                .map_err(map_error)?;
            crate::comments::insert_event(&mut tx, &write.review_id, event).await?;
        }
        sqlx::query(
            "UPDATE reviews SET latest_version_id = $2, comments_revision = $3, structure_revision = $4, \
             updated_at = $5, change_seq = change_seq + 1 WHERE id = $1",
        )
        .bind(&write.review_id)
        .bind(&v.id)
        .bind(revisions.comments)
        .bind(revisions.structure)
        .bind(write.at)
        .execute(&mut *tx)
        .await
        .map_err(map_error)?;
        // An upsert, though every document has its row since version 2 of the schema: a missing
        // one is simply created.
        sqlx::query(
            "INSERT INTO review_search (review_id, title, body, version_id) \
             SELECT id, title, $2, $3 FROM reviews WHERE id = $1 \
             ON CONFLICT (review_id) DO UPDATE SET body = excluded.body, version_id = excluded.version_id",
        )
        .bind(&write.review_id)
        .bind(storable(write.search_text))
        .bind(&v.id)
        .execute(&mut *tx)
        .await
        .map_err(map_error)?;
        insert_entries(&mut tx, &write.outbox).await?;
        notify(&mut tx, &write.review_id, EventKind::Version).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(revisions)
    }

    async fn update_review(&self, update: ReviewUpdate) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        // NULL parameters keep the column. An unknown new owner is a foreign-key violation,
        // which `unique` reads as `NotFound`.
        let touched = sqlx::query(
            "UPDATE reviews SET title = coalesce($2::text, title), tags = coalesce($3::jsonb, tags), \
             archived = coalesce($4::boolean, archived), access_mode = coalesce($5::text, access_mode), \
             owner_id = coalesce($6::text, owner_id), updated_at = $7, change_seq = change_seq + 1 \
             WHERE id = $1",
        )
        .bind(&update.review_id)
        .bind(update.title.as_deref())
        .bind(update.tags.as_ref().map(to_json))
        .bind(update.archived)
        .bind(update.access_mode.map(docreview_core::model::AccessMode::as_str))
        .bind(update.owner_id.as_deref())
        .bind(update.at)
        .execute(&mut *tx)
        .await
        .map_err(unique("document"))?
        .rows_affected();
        if touched == 0 {
            return Err(StoreError::NotFound);
        }
        if let Some(grants) = &update.grants {
            sqlx::query("DELETE FROM review_access WHERE review_id = $1")
                .bind(&update.review_id)
                .execute(&mut *tx)
                .await
                .map_err(map_error)?;
            insert_grants(&mut tx, &update.review_id, grants).await?;
        }
        if let Some(title) = &update.title {
            sqlx::query("UPDATE review_search SET title = $2 WHERE review_id = $1")
                .bind(&update.review_id)
                .bind(title)
                .execute(&mut *tx)
                .await
                .map_err(map_error)?;
        }
        notify(&mut tx, &update.review_id, EventKind::Review).await?;
        tx.commit().await.map_err(map_error)
    }

    async fn delete_review(&self, review_id: &str, outbox: Vec<OutboxEntry>) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        // The last event carries a `change_seq` no rendering was made at, so every node's cache
        // entry for the document is stale; then the rows go (the foreign keys cascade to
        // versions, comments, replies, status events, runs, sharing and the search entry).
        let touched = sqlx::query("UPDATE reviews SET change_seq = change_seq + 1 WHERE id = $1")
            .bind(review_id)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?
            .rows_affected();
        if touched == 0 {
            return Err(StoreError::NotFound);
        }
        notify(&mut tx, review_id, EventKind::Review).await?;
        sqlx::query("DELETE FROM reviews WHERE id = $1")
            .bind(review_id)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        insert_entries(&mut tx, &outbox).await?;
        tx.commit().await.map_err(map_error)
    }
}
