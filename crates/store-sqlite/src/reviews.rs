//! `ReviewStore` on SQLite: documents, their versions and bodies, lists, and changes to their
//! own fields.

use docreview_core::events::EventKind;
use docreview_core::model::{
    AccessGrant, ReviewHead, ReviewState, ReviewSummaryRecord, VersionRecord,
};
use docreview_core::outbox::OutboxEntry;
use docreview_core::store::columns::{self, VERSION_WIDTH, to_json};
use docreview_core::store::{
    NewReview, ReviewQuery, ReviewStore, ReviewUpdate, Revisions, StoreError, StoreResult,
    VersionWrite, count_param,
};
use rusqlite::{Connection, ToSql, params};

use crate::SqliteStore;
use crate::columns::{
    COMMENT_COLUMNS, DECISION_COLUMNS, EVENT_COLUMNS, MESSAGE_COLUMNS, REACTION_COLUMNS,
    REVIEW_COLUMNS, REVIEW_FROM, REVIEWER_COLUMNS, RUN_COLUMNS, SUMMARY_EXTRA_COLUMNS,
    SUMMARY_FROM, USER_COLUMNS, VERSION_COLUMNS,
};
use crate::organization::project_by_code;
use crate::outbox::insert_entries;
use crate::sql::{execute, internal, query_all, query_named, query_optional, unique};
use crate::visibility::{Caller, MEMBER_SEES};
use crate::writer::review_event;

/// The document with its sharing list; `None` when it does not exist.
fn head(conn: &Connection, review_id: &str) -> StoreResult<Option<ReviewHead>> {
    let sql = format!("SELECT {REVIEW_COLUMNS} FROM {REVIEW_FROM} WHERE r.id = ?1");
    let Some(review) = query_optional(conn, &sql, [review_id], |row| columns::review(row, 0))?
    else {
        return Ok(None);
    };
    let grants = query_all(
        conn,
        "SELECT email, role FROM review_access WHERE review_id = ?1 ORDER BY email",
        [review_id],
        |row| columns::grant(row, 0),
    )?;
    Ok(Some(ReviewHead {
        review,
        grants: grants.into_iter().flatten().collect(),
    }))
}

fn insert_grants(conn: &Connection, review_id: &str, grants: &[AccessGrant]) -> StoreResult<()> {
    for grant in grants {
        execute(
            conn,
            "INSERT OR REPLACE INTO review_access (review_id, email, role) VALUES (?1, ?2, ?3)",
            params![review_id, grant.email, grant.role.as_str()],
        )
        .map_err(internal)?;
    }
    Ok(())
}

/// Sets the text a document is found by (the trigger on `review_texts` re-indexes it).
fn set_text(conn: &Connection, review_id: &str, text: &str) -> StoreResult<()> {
    execute(
        conn,
        "INSERT INTO review_texts (review_id, body) VALUES (?1, ?2) \
         ON CONFLICT (review_id) DO UPDATE SET body = excluded.body",
        params![review_id, text],
    )
    .map_err(internal)?;
    Ok(())
}

fn insert_version(
    conn: &Connection,
    review_id: &str,
    version: &VersionRecord,
    html: &[u8],
) -> StoreResult<()> {
    execute(
        conn,
        "INSERT INTO versions (id, review_id, seq, label, created_at, source_hash, sections, html) \
         VALUES (?1, ?2, (SELECT coalesce(max(seq), 0) + 1 FROM versions WHERE review_id = ?2), ?3, ?4, ?5, ?6, ?7)",
        params![
            version.id,
            review_id,
            version.label,
            version.created_at,
            version.source_hash,
            to_json(&version.sections),
            html
        ],
    )
    .map_err(unique("version"))?;
    Ok(())
}

#[async_trait::async_trait]
impl ReviewStore for SqliteStore {
    async fn create_review(&self, new: NewReview) -> StoreResult<()> {
        self.write(move |conn| {
            let r = &new.review;
            execute(
                conn,
                "INSERT INTO reviews (id, title, owner_id, access_mode, tags, archived, comments_revision, \
                 structure_revision, change_seq, created_at, updated_at, latest_version_id, structure, project_code) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                params![
                    r.id,
                    r.title,
                    r.owner_id,
                    r.access_mode.as_str(),
                    to_json(&r.tags),
                    r.archived,
                    r.comments_revision,
                    r.structure_revision,
                    r.change_seq,
                    r.created_at,
                    r.updated_at,
                    r.latest_version_id,
                    r.structure.as_ref().map(to_json),
                    r.project_code
                ],
            )
            .map_err(unique("document"))?;
            insert_version(conn, &r.id, &new.version, &new.html)?;
            insert_grants(conn, &r.id, &new.grants)?;
            set_text(conn, &r.id, &new.search_text)?;
            insert_entries(conn, &new.outbox)?;
            Ok(())
        })
        .await
    }

    async fn review_head(&self, review_id: &str) -> StoreResult<Option<ReviewHead>> {
        self.lookup(|conn| head(conn, review_id))
    }

    async fn review_state(&self, review_id: &str) -> StoreResult<Option<ReviewState>> {
        let review_id = review_id.to_string();
        self.read(move |tx| {
            let Some(head) = head(tx, &review_id)? else {
                return Ok(None);
            };
            let id = review_id.as_str();
            let versions = query_all(
                tx,
                &format!(
                    "SELECT {VERSION_COLUMNS} FROM versions WHERE review_id = ?1 ORDER BY seq"
                ),
                [id],
                |row| columns::version(row, 0),
            )?;
            let comments = query_all(
                tx,
                &format!("SELECT {COMMENT_COLUMNS} FROM comments WHERE review_id = ?1"),
                [id],
                |row| columns::comment(row, 0),
            )?;
            let messages = query_all(
                tx,
                &format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE review_id = ?1"),
                [id],
                |row| columns::message(row, 0),
            )?;
            let events = query_all(
                tx,
                &format!("SELECT {EVENT_COLUMNS} FROM status_events WHERE review_id = ?1"),
                [id],
                |row| columns::status_event(row, 0),
            )?;
            let runs = query_all(
                tx,
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE review_id = ?1"),
                [id],
                |row| columns::run(row, 0),
            )?;
            let reviewers = query_all(
                tx,
                &format!(
                    "SELECT {REVIEWER_COLUMNS} FROM reviewers WHERE review_id = ?1 \
                     ORDER BY requested_at, user_id"
                ),
                [id],
                |row| columns::reviewer(row, 0),
            )?;
            let decisions = query_all(
                tx,
                &format!(
                    "SELECT {DECISION_COLUMNS} FROM decisions WHERE review_id = ?1 \
                     ORDER BY created_at, id"
                ),
                [id],
                |row| columns::decision(row, 0),
            )?;
            let reactions = query_all(
                tx,
                &format!(
                    "SELECT {REACTION_COLUMNS} FROM reactions WHERE review_id = ?1 \
                     ORDER BY created_at"
                ),
                [id],
                |row| columns::reaction(row, 0),
            )?;
            let users = query_all(
                tx,
                &format!(
                    "SELECT {USER_COLUMNS} FROM users u WHERE u.id IN ( \
                       SELECT owner_id FROM reviews WHERE id = ?1 \
                       UNION SELECT finalized_by FROM reviews WHERE id = ?1 \
                       UNION SELECT author_id FROM comments WHERE review_id = ?1 \
                       UNION SELECT assignee_id FROM comments WHERE review_id = ?1 \
                       UNION SELECT author_id FROM messages WHERE review_id = ?1 \
                       UNION SELECT by_id FROM status_events WHERE review_id = ?1 \
                       UNION SELECT user_id FROM reviewers WHERE review_id = ?1 \
                       UNION SELECT user_id FROM decisions WHERE review_id = ?1)"
                ),
                [id],
                |row| columns::user(row, 0),
            )?;
            let project = match &head.review.project_code {
                Some(code) => project_by_code(tx, code)?,
                None => None,
            };
            Ok(Some(ReviewState {
                head,
                versions,
                comments,
                messages,
                events,
                runs,
                reviewers,
                decisions,
                reactions,
                users,
                project,
            }))
        })
        .await
    }

    async fn list_reviews(&self, query: ReviewQuery) -> StoreResult<Vec<ReviewSummaryRecord>> {
        self.read(move |tx| {
            let sql = format!(
                "SELECT {REVIEW_COLUMNS}, {SUMMARY_EXTRA_COLUMNS} FROM {SUMMARY_FROM} \
                 WHERE (:all OR {MEMBER_SEES}) \
                   AND (:title IS NULL OR instr(lower(r.title), lower(:title)) > 0) \
                   AND (:tag IS NULL OR EXISTS (SELECT 1 FROM json_each(r.tags) WHERE json_each.value = :tag)) \
                   AND (:archived IS NULL OR r.archived = :archived) \
                   AND (:project IS NULL OR r.project_code = :project) \
                   AND (:owner IS NULL OR r.owner_id = :owner) \
                   AND (:after_at IS NULL OR (r.updated_at, r.id) < (:after_at, :after_id)) \
                 ORDER BY r.updated_at DESC, r.id DESC LIMIT :limit"
            );
            let caller = Caller::of(&query.visibility);
            let (after_at, after_id) = match &query.after {
                Some((at, id)) => (Some(*at), Some(id.as_str())),
                None => (None, None),
            };
            let limit = count_param(query.limit);
            let mut params: Vec<(&str, &dyn ToSql)> = caller.params().to_vec();
            params.extend([
                (":title", &query.title_contains as &dyn ToSql),
                (":tag", &query.tag),
                (":archived", &query.archived),
                (":project", &query.project),
                (":owner", &query.owner_id),
                (":after_at", &after_at),
                (":after_id", &after_id),
                (":limit", &limit),
            ]);
            query_named(tx, &sql, &params, |row| columns::summary(row, 0))
        })
        .await
    }

    async fn versions(&self, review_id: &str) -> StoreResult<Vec<VersionRecord>> {
        let review_id = review_id.to_string();
        self.read(move |tx| {
            let sql =
                format!("SELECT {VERSION_COLUMNS} FROM versions WHERE review_id = ?1 ORDER BY seq");
            query_all(tx, &sql, [review_id], |row| columns::version(row, 0))
        })
        .await
    }

    async fn version(
        &self,
        review_id: &str,
        version_id: &str,
    ) -> StoreResult<Option<VersionRecord>> {
        let (review_id, version_id) = (review_id.to_string(), version_id.to_string());
        self.read(move |tx| {
            let sql =
                format!("SELECT {VERSION_COLUMNS} FROM versions WHERE review_id = ?1 AND id = ?2");
            query_optional(tx, &sql, [review_id, version_id], |row| {
                columns::version(row, 0)
            })
        })
        .await
    }

    async fn version_html(
        &self,
        review_id: &str,
        version_id: &str,
    ) -> StoreResult<Option<(VersionRecord, Vec<u8>)>> {
        let (review_id, version_id) = (review_id.to_string(), version_id.to_string());
        self.read(move |tx| {
            let sql = format!(
                "SELECT {VERSION_COLUMNS}, html FROM versions WHERE review_id = ?1 AND id = ?2"
            );
            query_optional(tx, &sql, [review_id, version_id], |row| {
                Ok((columns::version(row, 0)?, row.bytes(VERSION_WIDTH)?))
            })
        })
        .await
    }

    async fn write_version(&self, write: VersionWrite) -> StoreResult<Revisions> {
        self.write_change(write.review_id.clone(), EventKind::Version, move |conn| {
            // Writes are serialized: what is read here stays true until this write commits.
            let current = query_optional(
                conn,
                "SELECT latest_version_id, comments_revision, structure_revision, finalized_at IS NOT NULL \
                 FROM reviews WHERE id = ?1",
                [&write.review_id],
                |row| Ok((row.text(0)?, row.integer(1)?, row.integer(2)?, row.flag(3)?)),
            )?;
            let Some((latest, comments_revision, structure_revision, finalized)) = current else {
                return Err(StoreError::NotFound);
            };
            if finalized {
                return Err(StoreError::ReviewFinalized);
            }
            let revisions = write.revisions_after(latest, comments_revision, structure_revision)?;
            let v = &write.version;
            if write.append {
                insert_version(conn, &write.review_id, v, &write.html)?;
            } else {
                execute(
                    conn,
                    "UPDATE versions SET label = ?3, source_hash = ?4, sections = ?5, html = ?6 \
                     WHERE review_id = ?1 AND id = ?2",
                    params![
                        write.review_id,
                        v.id,
                        v.label,
                        v.source_hash,
                        to_json(&v.sections),
                        write.html
                    ],
                )
                .map_err(internal)?;
            }
            for (comment_id, anchor) in &write.anchors {
                execute(
                    conn,
                    "UPDATE comments SET anchor = ?2, thread_revision = thread_revision + 1 WHERE id = ?1 AND review_id = ?3",
                    params![comment_id, to_json(anchor), write.review_id],
                )
                .map_err(internal)?;
            }
            // Suggestions applied in this version: their comments close with the event.
            for event in &write.closed {
                execute(
                    conn,
                    "UPDATE comments SET status = ?3 WHERE id = ?1 AND review_id = ?2",
                    params![event.comment_id, write.review_id, event.status.as_str()],
                )
                .map_err(internal)?;
                crate::comments::insert_event(conn, &write.review_id, event)?;
            }
            execute(
                conn,
                "UPDATE reviews SET latest_version_id = ?2, comments_revision = ?3, structure_revision = ?4, \
                 updated_at = ?5, change_seq = change_seq + 1 WHERE id = ?1",
                params![
                    write.review_id,
                    v.id,
                    revisions.comments,
                    revisions.structure,
                    write.at
                ],
            )
            .map_err(internal)?;
            set_text(conn, &write.review_id, &write.search_text)?;
            insert_entries(conn, &write.outbox)?;
            Ok(revisions)
        })
        .await
    }

    async fn update_review(&self, update: ReviewUpdate) -> StoreResult<()> {
        self.write_change(update.review_id.clone(), EventKind::Review, move |conn| {
            let changed = execute(
                conn,
                "UPDATE reviews SET title = coalesce(?2, title), tags = coalesce(?3, tags), \
                 archived = coalesce(?4, archived), access_mode = coalesce(?5, access_mode), \
                 owner_id = coalesce(?6, owner_id), updated_at = ?7, change_seq = change_seq + 1 \
                 WHERE id = ?1",
                params![
                    update.review_id,
                    update.title,
                    update.tags.as_ref().map(to_json),
                    update.archived,
                    update
                        .access_mode
                        .map(docreview_core::model::AccessMode::as_str),
                    update.owner_id,
                    update.at
                ],
            )
            // An unknown new owner is a missing referenced row.
            .map_err(unique("document"))?;
            if changed == 0 {
                return Err(StoreError::NotFound);
            }
            if let Some(grants) = &update.grants {
                execute(
                    conn,
                    "DELETE FROM review_access WHERE review_id = ?1",
                    [&update.review_id],
                )
                .map_err(internal)?;
                insert_grants(conn, &update.review_id, grants)?;
            }
            Ok(())
        })
        .await
    }

    async fn delete_review(&self, review_id: &str, outbox: Vec<OutboxEntry>) -> StoreResult<()> {
        let review_id = review_id.to_string();
        self.write_announced(move |conn| {
            // The last event names the document as it was, one change later: listeners holding
            // a rendering at the old `change_seq` see it is stale.
            let Some(mut event) = review_event(conn, &review_id, EventKind::Review)? else {
                return Err(StoreError::NotFound);
            };
            event.change_seq += 1;
            // Versions, sharing, runs, comments (with replies and status events) and the search
            // entries go with the row (foreign keys cascade; triggers clear the indexes).
            execute(conn, "DELETE FROM reviews WHERE id = ?1", [&review_id]).map_err(internal)?;
            insert_entries(conn, &outbox)?;
            Ok(((), Some(event)))
        })
        .await
    }
}
