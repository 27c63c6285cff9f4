//! `Store` for SQLite: every method is one read snapshot or one group-committed write.

use docreview_core::model::{
    AccessGrant, Account, CommentRecord, CommentThread, GrantRole, LoginCodeRecord, MessageRecord,
    Millis, ProjectMember, ProjectRecord, ProjectRole, ReviewHead, ReviewState,
    ReviewSummaryRecord, RunRecord, SessionRecord, TokenRecord, User, VersionRecord,
};
use docreview_core::store::{
    CommentHit, CommentSearch, CommentsWrite, MemberQuery, NewReview, ProjectImport, ProjectQuery,
    ReviewHit, ReviewQuery, ReviewSearch, ReviewUpdate, Revisions, Store, StoreError, StoreResult,
    VersionWrite,
};
use rusqlite::{Connection, OptionalExtension, ToSql, params};

use docreview_core::events::{EventKind, ReviewEvent};

use crate::rows::{self, to_json};
use crate::search::{self, Caller, MEMBER_SEES};
use crate::{SqliteStore, internal, review_event};

/// Maps a unique-key violation to `AlreadyExists(what)` and a missing referenced row (foreign
/// key) to `NotFound`, as the PostgreSQL backend does.
fn unique(what: &'static str) -> impl Fn(rusqlite::Error) -> StoreError {
    move |error| match &error {
        rusqlite::Error::SqliteFailure(failure, _) => match failure.extended_code {
            rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
            | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => StoreError::AlreadyExists(what),
            rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => StoreError::NotFound,
            _ => internal(error),
        },
        _ => internal(error),
    }
}

fn query_all<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> StoreResult<Vec<T>> {
    let mut statement = conn.prepare_cached(sql).map_err(internal)?;
    let rows = statement.query_map(params, map).map_err(internal)?;
    rows.collect::<rusqlite::Result<Vec<_>>>().map_err(internal)
}

/// Runs `sql` binding each of `params` (`:name`, value) that the statement names, so one list
/// serves statements whose optional parts use only some of them.
pub(crate) fn query_named<T>(
    conn: &Connection,
    sql: &str,
    params: &[(&str, &dyn ToSql)],
    mut map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> StoreResult<Vec<T>> {
    let mut statement = conn.prepare_cached(sql).map_err(internal)?;
    for (name, value) in params {
        if let Some(index) = statement.parameter_index(name).map_err(internal)? {
            statement
                .raw_bind_parameter(index, value)
                .map_err(internal)?;
        }
    }
    let mut rows = statement.raw_query();
    let mut answer = Vec::new();
    while let Some(row) = rows.next().map_err(internal)? {
        answer.push(map(row).map_err(internal)?);
    }
    Ok(answer)
}

fn head(conn: &Connection, review_id: &str) -> StoreResult<Option<ReviewHead>> {
    let sql = format!(
        "SELECT {} FROM {} WHERE r.id = ?1",
        rows::REVIEW_COLUMNS,
        rows::REVIEW_FROM
    );
    let review = conn
        .prepare_cached(&sql)
        .map_err(internal)?
        .query_row([review_id], |row| rows::review(row, 0))
        .optional()
        .map_err(internal)?;
    let Some(review) = review else {
        return Ok(None);
    };
    let grants = query_all(
        conn,
        "SELECT email, role FROM review_access WHERE review_id = ?1 ORDER BY email",
        [review_id],
        |row| {
            let role: String = row.get(1)?;
            Ok((row.get::<_, String>(0)?, role))
        },
    )?
    .into_iter()
    .filter_map(|(email, role)| GrantRole::parse(&role).map(|role| AccessGrant { email, role }))
    .collect();
    Ok(Some(ReviewHead { review, grants }))
}

fn insert_grants(conn: &Connection, review_id: &str, grants: &[AccessGrant]) -> StoreResult<()> {
    let mut insert = conn
        .prepare_cached(
            "INSERT OR REPLACE INTO review_access (review_id, email, role) VALUES (?1, ?2, ?3)",
        )
        .map_err(internal)?;
    for grant in grants {
        insert
            .execute(params![review_id, grant.email, grant.role.as_str()])
            .map_err(internal)?;
    }
    Ok(())
}

fn insert_token(conn: &Connection, token: &TokenRecord) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO tokens (id, user_id, name, hash, scopes, created_at, expires_at, last_used_at, revoked_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )
    .map_err(internal)?
    .execute(params![
        token.id,
        token.user_id,
        token.name,
        token.hash.as_slice(),
        rows::scopes_text(&token.scopes),
        token.created_at,
        token.expires_at,
        token.last_used_at,
        token.revoked_at
    ])
    .map_err(unique("token"))?;
    Ok(())
}

/// Sets the text a document is found by (the trigger on `review_texts` re-indexes it).
fn set_text(conn: &Connection, review_id: &str, text: &str) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO review_texts (review_id, body) VALUES (?1, ?2) \
         ON CONFLICT (review_id) DO UPDATE SET body = excluded.body",
    )
    .map_err(internal)?
    .execute(params![review_id, text])
    .map_err(internal)?;
    Ok(())
}

fn project_by_code(conn: &Connection, code: &str) -> StoreResult<Option<ProjectRecord>> {
    let sql = format!(
        "SELECT {} FROM projects p WHERE p.code = ?1",
        rows::PROJECT_COLUMNS
    );
    conn.prepare_cached(&sql)
        .map_err(internal)?
        .query_row([code], |row| rows::project(row, 0))
        .optional()
        .map_err(internal)
}

fn upsert_comment(conn: &Connection, c: &CommentRecord) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO comments (id, review_id, author_id, category, status, body, version_id, anchor, run_id, \
         created_at, edited_at, deleted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) \
         ON CONFLICT (id) DO UPDATE SET category = excluded.category, status = excluded.status, body = excluded.body, \
         anchor = excluded.anchor, edited_at = excluded.edited_at, deleted_at = excluded.deleted_at",
    )
    .map_err(internal)?
    .execute(params![
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
        c.deleted_at
    ])
    .map_err(internal)?;
    Ok(())
}

fn upsert_message(conn: &Connection, m: &MessageRecord) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO messages (id, comment_id, review_id, author_id, body, run_id, created_at, edited_at, deleted_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
         ON CONFLICT (id) DO UPDATE SET body = excluded.body, edited_at = excluded.edited_at, deleted_at = excluded.deleted_at",
    )
    .map_err(internal)?
    .execute(params![m.id, m.comment_id, m.review_id, m.author_id, m.body, m.run_id, m.created_at, m.edited_at, m.deleted_at])
    .map_err(internal)?;
    Ok(())
}

fn upsert_run(conn: &Connection, r: &RunRecord) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO runs (id, review_id, kind, status, title, version_id, summary, created_by, created_at, completed_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, summary = excluded.summary, completed_at = excluded.completed_at",
    )
    .map_err(internal)?
    .execute(params![
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
    ])
    .map_err(internal)?;
    Ok(())
}

fn insert_account(
    conn: &Connection,
    a: &Account,
    password_hash: Option<&str>,
) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "INSERT INTO users (id, email, display_name, provider, membership, status, is_admin, password_hash, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        a.user.id,
        a.email,
        a.user.display_name,
        a.user.provider.as_str(),
        a.membership.as_str(),
        a.status.as_str(),
        a.is_admin,
        password_hash,
        a.created_at
    ])
}

fn account_where(conn: &Connection, condition: &str, value: &str) -> StoreResult<Option<Account>> {
    let sql = format!(
        "SELECT {} FROM users u WHERE {condition}",
        rows::USER_COLUMNS
    );
    conn.prepare_cached(&sql)
        .map_err(internal)?
        .query_row([value], |row| rows::account(row, 0))
        .optional()
        .map_err(internal)
}

#[async_trait::async_trait]
impl Store for SqliteStore {
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<ReviewEvent> {
        self.events.subscribe()
    }

    async fn ping(&self) -> StoreResult<()> {
        self.lookup(|conn| conn.query_row("SELECT 1", [], |_| Ok(())).map_err(internal))
    }

    async fn create_account(
        &self,
        account: Account,
        password_hash: Option<String>,
    ) -> StoreResult<()> {
        self.write(move |conn| {
            insert_account(conn, &account, password_hash.as_deref()).map_err(unique("user"))?;
            Ok(())
        })
        .await
    }

    async fn ensure_account(&self, account: Account) -> StoreResult<()> {
        self.write(move |conn| {
            let exists: bool = conn
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM users WHERE id = ?1)",
                    [&account.user.id],
                    |row| row.get(0),
                )
                .map_err(internal)?;
            if !exists {
                insert_account(conn, &account, None).map_err(unique("user"))?;
            }
            Ok(())
        })
        .await
    }

    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        let email = email.to_lowercase();
        self.read(move |tx| account_where(tx, "u.email = ?1", &email))
            .await
    }

    async fn account_by_id(&self, id: &str) -> StoreResult<Option<Account>> {
        let id = id.to_string();
        self.read(move |tx| account_where(tx, "u.id = ?1", &id))
            .await
    }

    async fn insert_token(&self, token: TokenRecord) -> StoreResult<()> {
        self.write(move |conn| insert_token(conn, &token)).await
    }

    async fn token_by_hash(&self, hash: &[u8; 32]) -> StoreResult<Option<(TokenRecord, Account)>> {
        self.lookup(|conn| {
            let sql = format!(
                "SELECT {}, {} FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = ?1",
                rows::TOKEN_COLUMNS,
                rows::USER_COLUMNS
            );
            conn.prepare_cached(&sql)
                .map_err(internal)?
                .query_row([hash.as_slice()], |row| {
                    Ok((rows::token(row)?, rows::account(row, 9)?))
                })
                .optional()
                .map_err(internal)
        })
    }

    async fn touch_token(&self, token_id: &str, at: Millis) -> StoreResult<()> {
        let token_id = token_id.to_string();
        self.write(move |conn| {
            conn.prepare_cached("UPDATE tokens SET last_used_at = ?2 WHERE id = ?1")
                .map_err(internal)?
                .execute(params![token_id, at])
                .map_err(internal)?;
            Ok(())
        })
        .await
    }

    async fn create_review(&self, new: NewReview) -> StoreResult<()> {
        self.write(move |conn| {
            let r = &new.review;
            conn.prepare_cached(
                "INSERT INTO reviews (id, title, owner_id, access_mode, tags, archived, comments_revision, \
                 structure_revision, change_seq, created_at, updated_at, latest_version_id, structure, project_code) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )
            .map_err(internal)?
            .execute(params![
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
            ])
            .map_err(unique("document"))?;
            let v = &new.version;
            conn.prepare_cached(
                "INSERT INTO versions (id, review_id, seq, label, created_at, source_hash, sections, html) \
                 VALUES (?1, ?2, 1, ?3, ?4, ?5, ?6, ?7)",
            )
            .map_err(internal)?
            .execute(params![v.id, r.id, v.label, v.created_at, v.source_hash, to_json(&v.sections), new.html])
            .map_err(unique("version"))?;
            insert_grants(conn, &r.id, &new.grants)?;
            set_text(conn, &r.id, &new.search_text)
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
                    "SELECT {} FROM versions WHERE review_id = ?1 ORDER BY seq",
                    rows::VERSION_COLUMNS
                ),
                [id],
                rows::version,
            )?;
            let comments = query_all(
                tx,
                &format!(
                    "SELECT {} FROM comments WHERE review_id = ?1",
                    rows::COMMENT_COLUMNS
                ),
                [id],
                rows::comment,
            )?;
            let messages = query_all(
                tx,
                &format!(
                    "SELECT {} FROM messages WHERE review_id = ?1",
                    rows::MESSAGE_COLUMNS
                ),
                [id],
                rows::message,
            )?;
            let events = query_all(
                tx,
                &format!(
                    "SELECT {} FROM status_events WHERE review_id = ?1",
                    rows::EVENT_COLUMNS
                ),
                [id],
                rows::event,
            )?;
            let runs = query_all(
                tx,
                &format!(
                    "SELECT {} FROM runs WHERE review_id = ?1",
                    rows::RUN_COLUMNS
                ),
                [id],
                rows::run,
            )?;
            let users = query_all(
                tx,
                "SELECT id, provider, display_name FROM users WHERE id IN ( \
                   SELECT owner_id FROM reviews WHERE id = ?1 \
                   UNION SELECT author_id FROM comments WHERE review_id = ?1 \
                   UNION SELECT author_id FROM messages WHERE review_id = ?1 \
                   UNION SELECT by_id FROM status_events WHERE review_id = ?1)",
                [id],
                |row| rows::user(row, 0),
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
                users,
                project,
            }))
        })
        .await
    }

    async fn list_reviews(&self, query: ReviewQuery) -> StoreResult<Vec<ReviewSummaryRecord>> {
        self.read(move |tx| {
            let sql = format!(
                "SELECT {review}, {extra} FROM {from} \
                 WHERE (:all OR {MEMBER_SEES}) \
                   AND (:title IS NULL OR instr(lower(r.title), lower(:title)) > 0) \
                   AND (:tag IS NULL OR EXISTS (SELECT 1 FROM json_each(r.tags) WHERE json_each.value = :tag)) \
                   AND (:archived IS NULL OR r.archived = :archived) \
                   AND (:project IS NULL OR r.project_code = :project) \
                   AND (:owner IS NULL OR r.owner_id = :owner) \
                   AND (:after_at IS NULL OR (r.updated_at, r.id) < (:after_at, :after_id)) \
                 ORDER BY r.updated_at DESC, r.id DESC LIMIT :limit",
                review = rows::REVIEW_COLUMNS,
                extra = rows::SUMMARY_EXTRA_COLUMNS,
                from = rows::SUMMARY_FROM,
            );
            let caller = Caller::of(&query.visibility);
            let (after_at, after_id) = match &query.after {
                Some((at, id)) => (Some(*at), Some(id.clone())),
                None => (None, None),
            };
            let limit = i64::try_from(query.limit).unwrap_or(i64::MAX);
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
            query_named(tx, &sql, &params, rows::summary)
        })
        .await
    }

    async fn versions(&self, review_id: &str) -> StoreResult<Vec<VersionRecord>> {
        let review_id = review_id.to_string();
        self.read(move |tx| {
            let sql = format!(
                "SELECT {} FROM versions WHERE review_id = ?1 ORDER BY seq",
                rows::VERSION_COLUMNS
            );
            query_all(tx, &sql, [review_id], rows::version)
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
            let sql = format!(
                "SELECT {} FROM versions WHERE review_id = ?1 AND id = ?2",
                rows::VERSION_COLUMNS
            );
            tx.prepare_cached(&sql)
                .map_err(internal)?
                .query_row([review_id, version_id], rows::version)
                .optional()
                .map_err(internal)
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
                "SELECT {}, html FROM versions WHERE review_id = ?1 AND id = ?2",
                rows::VERSION_COLUMNS
            );
            tx.prepare_cached(&sql)
                .map_err(internal)?
                .query_row([review_id, version_id], |row| {
                    Ok((rows::version(row)?, row.get::<_, Vec<u8>>(6)?))
                })
                .optional()
                .map_err(internal)
        })
        .await
    }

    async fn write_version(&self, write: VersionWrite) -> StoreResult<Revisions> {
        self.write_change(write.review_id.clone(), EventKind::Version, move |conn| {
            let current: Option<(String, i64, i64)> = conn
                .prepare_cached("SELECT latest_version_id, comments_revision, structure_revision FROM reviews WHERE id = ?1")
                .map_err(internal)?
                .query_row([&write.review_id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
                .optional()
                .map_err(internal)?;
            let Some((latest, comments_revision, structure_revision)) = current else {
                return Err(StoreError::NotFound);
            };
            if latest != write.expected_latest_version_id {
                return Err(StoreError::StaleVersion { latest });
            }
            if comments_revision != write.expected_comments_revision {
                return Err(StoreError::RevisionConflict { current: comments_revision });
            }
            let v = &write.version;
            if write.append {
                conn.prepare_cached(
                    "INSERT INTO versions (id, review_id, seq, label, created_at, source_hash, sections, html) \
                     VALUES (?1, ?2, (SELECT coalesce(max(seq), 0) + 1 FROM versions WHERE review_id = ?2), ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(internal)?
                .execute(params![v.id, write.review_id, v.label, v.created_at, v.source_hash, to_json(&v.sections), write.html])
                .map_err(unique("version"))?;
            } else {
                conn.prepare_cached(
                    "UPDATE versions SET label = ?3, source_hash = ?4, sections = ?5, html = ?6 WHERE review_id = ?1 AND id = ?2",
                )
                .map_err(internal)?
                .execute(params![write.review_id, v.id, v.label, v.source_hash, to_json(&v.sections), write.html])
                .map_err(internal)?;
            }
            let mut set_anchor = conn
                .prepare_cached("UPDATE comments SET anchor = ?2 WHERE id = ?1 AND review_id = ?3")
                .map_err(internal)?;
            for (comment_id, anchor) in &write.anchors {
                set_anchor.execute(params![comment_id, to_json(anchor), write.review_id]).map_err(internal)?;
            }
            let revisions = Revisions {
                comments: comments_revision + 1,
                structure: structure_revision + i64::from(write.structure_changed),
            };
            conn.prepare_cached(
                "UPDATE reviews SET latest_version_id = ?2, comments_revision = ?3, structure_revision = ?4, updated_at = ?5, \
                 change_seq = change_seq + 1 \
                 WHERE id = ?1",
            )
            .map_err(internal)?
            .execute(params![write.review_id, v.id, revisions.comments, revisions.structure, write.at])
            .map_err(internal)?;
            set_text(conn, &write.review_id, &write.search_text)?;
            Ok(revisions)
        })
        .await
    }

    async fn project(&self, code: &str) -> StoreResult<Option<ProjectRecord>> {
        let code = code.to_string();
        self.read(move |tx| project_by_code(tx, &code)).await
    }

    async fn comment_thread(
        &self,
        review_id: &str,
        comment_id: &str,
    ) -> StoreResult<Option<CommentThread>> {
        let (review_id, comment_id) = (review_id.to_string(), comment_id.to_string());
        self.read(move |tx| {
            let sql = format!(
                "SELECT {} FROM comments WHERE review_id = ?1 AND id = ?2",
                rows::COMMENT_COLUMNS
            );
            let comment = tx
                .prepare_cached(&sql)
                .map_err(internal)?
                .query_row([&review_id, &comment_id], rows::comment)
                .optional()
                .map_err(internal)?;
            let Some(comment) = comment else {
                return Ok(None);
            };
            let messages = query_all(
                tx,
                &format!(
                    "SELECT {} FROM messages WHERE comment_id = ?1",
                    rows::MESSAGE_COLUMNS
                ),
                [&comment_id],
                rows::message,
            )?;
            let events = query_all(
                tx,
                &format!(
                    "SELECT {} FROM status_events WHERE comment_id = ?1 ORDER BY seq",
                    rows::EVENT_COLUMNS
                ),
                [&comment_id],
                rows::event,
            )?;
            Ok(Some(CommentThread {
                comment,
                messages,
                events,
            }))
        })
        .await
    }

    async fn live_comments(&self, review_id: &str) -> StoreResult<Vec<CommentRecord>> {
        let review_id = review_id.to_string();
        self.read(move |tx| {
            let sql = format!(
                "SELECT {} FROM comments WHERE review_id = ?1 AND deleted_at IS NULL",
                rows::COMMENT_COLUMNS
            );
            query_all(tx, &sql, [review_id], rows::comment)
        })
        .await
    }

    async fn users(&self, ids: &[String]) -> StoreResult<Vec<User>> {
        let ids = ids.to_vec();
        self.read(move |tx| {
            let mut users = Vec::with_capacity(ids.len());
            let mut statement = tx
                .prepare_cached("SELECT id, provider, display_name FROM users WHERE id = ?1")
                .map_err(internal)?;
            for id in &ids {
                if let Some(user) = statement
                    .query_row([id], |row| rows::user(row, 0))
                    .optional()
                    .map_err(internal)?
                {
                    users.push(user);
                }
            }
            Ok(users)
        })
        .await
    }

    async fn write_comments(&self, review_id: &str, write: CommentsWrite) -> StoreResult<i64> {
        let review_id = review_id.to_string();
        self.write_change(review_id.clone(), EventKind::Comments, move |conn| {
            let bumped = conn
                .prepare_cached(
                    "UPDATE reviews SET comments_revision = comments_revision + 1, updated_at = ?3, change_seq = change_seq + 1 \
                     WHERE id = ?1 AND comments_revision = ?2",
                )
                .map_err(internal)?
                .execute(params![review_id, write.expected_revision, write.at])
                .map_err(internal)?;
            if bumped == 0 {
                let current: Option<i64> = conn
                    .query_row("SELECT comments_revision FROM reviews WHERE id = ?1", [&review_id], |row| row.get(0))
                    .optional()
                    .map_err(internal)?;
                return Err(match current {
                    Some(current) => StoreError::RevisionConflict { current },
                    None => StoreError::NotFound,
                });
            }
            for comment in &write.comments {
                upsert_comment(conn, comment)?;
            }
            for message in &write.messages {
                upsert_message(conn, message)?;
            }
            for event in &write.events {
                conn.prepare_cached(
                    "INSERT INTO status_events (comment_id, seq, review_id, status, by_id, ts) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(internal)?
                .execute(params![event.comment_id, event.seq, review_id, event.status.as_str(), event.by_id, event.ts])
                .map_err(internal)?;
            }
            for run in &write.runs {
                upsert_run(conn, run)?;
            }
            Ok(write.expected_revision + 1)
        })
        .await
    }

    async fn insert_run(&self, run: RunRecord) -> StoreResult<()> {
        self.write_change(run.review_id.clone(), EventKind::Review, move |conn| {
            let touched = conn
                .prepare_cached(
                    "UPDATE reviews SET change_seq = change_seq + 1, updated_at = ?2 WHERE id = ?1",
                )
                .map_err(internal)?
                .execute(params![run.review_id, run.created_at])
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
            let sql = format!(
                "SELECT {} FROM runs WHERE review_id = ?1 AND id = ?2",
                rows::RUN_COLUMNS
            );
            tx.prepare_cached(&sql)
                .map_err(internal)?
                .query_row([review_id, run_id], rows::run)
                .optional()
                .map_err(internal)
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
                    "SELECT {} FROM comments WHERE review_id = ?1 AND run_id = ?2",
                    rows::COMMENT_COLUMNS
                ),
                [&review_id, &run_id],
                rows::comment,
            )?;
            let messages = query_all(
                tx,
                &format!(
                    "SELECT {} FROM messages WHERE review_id = ?1 AND run_id = ?2",
                    rows::MESSAGE_COLUMNS
                ),
                [&review_id, &run_id],
                rows::message,
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
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
        })
        .await
    }

    async fn tokens_of(&self, user_id: &str) -> StoreResult<Vec<TokenRecord>> {
        let user_id = user_id.to_string();
        self.read(move |tx| {
            let sql = format!(
                "SELECT {} FROM tokens t WHERE t.user_id = ?1 AND t.revoked_at IS NULL \
                 ORDER BY t.created_at DESC, t.id DESC",
                rows::TOKEN_COLUMNS
            );
            query_all(tx, &sql, [user_id], rows::token)
        })
        .await
    }

    async fn revoke_token(&self, user_id: &str, token_id: &str, at: Millis) -> StoreResult<bool> {
        let (user_id, token_id) = (user_id.to_string(), token_id.to_string());
        self.write(move |conn| {
            let revoked = conn
                .prepare_cached(
                    "UPDATE tokens SET revoked_at = ?3 \
                     WHERE id = ?2 AND user_id = ?1 AND revoked_at IS NULL",
                )
                .map_err(internal)?
                .execute(params![user_id, token_id, at])
                .map_err(internal)?;
            Ok(revoked > 0)
        })
        .await
    }

    async fn password_hash(&self, user_id: &str) -> StoreResult<Option<String>> {
        let user_id = user_id.to_string();
        self.read(move |tx| {
            let hash: Option<Option<String>> = tx
                .prepare_cached("SELECT password_hash FROM users WHERE id = ?1")
                .map_err(internal)?
                .query_row([user_id], |row| row.get(0))
                .optional()
                .map_err(internal)?;
            Ok(hash.flatten())
        })
        .await
    }

    async fn list_accounts(&self, query: MemberQuery) -> StoreResult<Vec<Account>> {
        self.read(move |tx| {
            let sql = format!(
                "SELECT {} FROM users u \
                 WHERE u.provider <> 'service' AND u.status <> 'removed' \
                   AND (NOT ?1 OR u.is_admin) AND (?2 IS NULL OR u.email > ?2) \
                 ORDER BY u.email LIMIT ?3",
                rows::USER_COLUMNS
            );
            let limit = i64::try_from(query.limit).unwrap_or(i64::MAX);
            query_all(
                tx,
                &sql,
                params![query.admins_only, query.after, limit],
                |row| rows::account(row, 0),
            )
        })
        .await
    }

    async fn update_account(&self, account: Account) -> StoreResult<()> {
        self.write(move |conn| {
            let updated = conn
                .prepare_cached(
                    "UPDATE users SET display_name = ?2, membership = ?3, status = ?4, is_admin = ?5 \
                     WHERE id = ?1",
                )
                .map_err(internal)?
                .execute(params![
                    account.user.id,
                    account.user.display_name,
                    account.membership.as_str(),
                    account.status.as_str(),
                    account.is_admin
                ])
                .map_err(internal)?;
            if updated == 0 {
                return Err(StoreError::NotFound);
            }
            Ok(())
        })
        .await
    }

    async fn remove_account(&self, user_id: &str, at: Millis) -> StoreResult<()> {
        let user_id = user_id.to_string();
        self.write(move |conn| {
            let removed = conn
                .prepare_cached("UPDATE users SET status = 'removed', is_admin = 0 WHERE id = ?1")
                .map_err(internal)?
                .execute([&user_id])
                .map_err(internal)?;
            if removed == 0 {
                return Err(StoreError::NotFound);
            }
            conn.prepare_cached(
                "UPDATE tokens SET revoked_at = ?2 WHERE user_id = ?1 AND revoked_at IS NULL",
            )
            .map_err(internal)?
            .execute(params![user_id, at])
            .map_err(internal)?;
            for sql in [
                "DELETE FROM sessions WHERE user_id = ?1",
                "DELETE FROM login_codes WHERE user_id = ?1",
                "DELETE FROM project_roles WHERE user_id = ?1",
            ] {
                conn.prepare_cached(sql)
                    .map_err(internal)?
                    .execute([&user_id])
                    .map_err(internal)?;
            }
            Ok(())
        })
        .await
    }

    async fn insert_session(&self, session: SessionRecord) -> StoreResult<()> {
        self.write(move |conn| {
            conn.prepare_cached(
                "INSERT INTO sessions (id, hash, user_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(internal)?
            .execute(params![
                session.id,
                session.hash.as_slice(),
                session.user_id,
                session.created_at,
                session.expires_at
            ])
            .map_err(unique("session"))?;
            Ok(())
        })
        .await
    }

    async fn session_by_hash(
        &self,
        hash: &[u8; 32],
    ) -> StoreResult<Option<(SessionRecord, Account)>> {
        self.lookup(|conn| {
            let sql = format!(
                "SELECT {}, {} FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = ?1",
                rows::SESSION_COLUMNS,
                rows::USER_COLUMNS
            );
            conn.prepare_cached(&sql)
                .map_err(internal)?
                .query_row([hash.as_slice()], |row| {
                    Ok((rows::session(row)?, rows::account(row, 5)?))
                })
                .optional()
                .map_err(internal)
        })
    }

    async fn delete_session(&self, hash: &[u8; 32]) -> StoreResult<()> {
        let hash = *hash;
        self.write(move |conn| {
            conn.prepare_cached("DELETE FROM sessions WHERE hash = ?1")
                .map_err(internal)?
                .execute([hash.as_slice()])
                .map_err(internal)?;
            Ok(())
        })
        .await
    }

    async fn insert_login_code(&self, code: LoginCodeRecord) -> StoreResult<()> {
        self.write(move |conn| {
            conn.prepare_cached(
                "INSERT INTO login_codes (hash, user_id, challenge, token_name, scopes, created_at, expires_at, used_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .map_err(internal)?
            .execute(params![
                code.hash.as_slice(),
                code.user_id,
                code.challenge,
                code.token_name,
                rows::scopes_text(&code.scopes),
                code.created_at,
                code.expires_at,
                code.used_at
            ])
            .map_err(unique("login code"))?;
            Ok(())
        })
        .await
    }

    async fn login_code(&self, hash: &[u8; 32]) -> StoreResult<Option<LoginCodeRecord>> {
        let hash = *hash;
        self.read(move |tx| {
            let sql = format!(
                "SELECT {} FROM login_codes WHERE hash = ?1",
                rows::LOGIN_CODE_COLUMNS
            );
            tx.prepare_cached(&sql)
                .map_err(internal)?
                .query_row([hash.as_slice()], rows::login_code)
                .optional()
                .map_err(internal)
        })
        .await
    }

    async fn redeem_login_code(
        &self,
        hash: &[u8; 32],
        at: Millis,
        token: TokenRecord,
    ) -> StoreResult<bool> {
        let hash = *hash;
        self.write(move |conn| {
            // Marking the code used is the guard: of two concurrent redemptions one finds it
            // used. A failed token insert rolls the mark back with it (one savepoint).
            let marked = conn
                .prepare_cached(
                    "UPDATE login_codes SET used_at = ?2 WHERE hash = ?1 AND used_at IS NULL",
                )
                .map_err(internal)?
                .execute(params![hash.as_slice(), at])
                .map_err(internal)?;
            if marked == 0 {
                return Ok(false);
            }
            insert_token(conn, &token)?;
            Ok(true)
        })
        .await
    }

    async fn update_review(&self, update: ReviewUpdate) -> StoreResult<()> {
        self.write_change(update.review_id.clone(), EventKind::Review, move |conn| {
            let changed = conn
                .prepare_cached(
                    "UPDATE reviews SET title = coalesce(?2, title), tags = coalesce(?3, tags), \
                     archived = coalesce(?4, archived), access_mode = coalesce(?5, access_mode), \
                     owner_id = coalesce(?6, owner_id), updated_at = ?7, change_seq = change_seq + 1 \
                     WHERE id = ?1",
                )
                .map_err(internal)?
                .execute(params![
                    update.review_id,
                    update.title,
                    update.tags.as_ref().map(to_json),
                    update.archived,
                    update.access_mode.map(|mode| mode.as_str()),
                    update.owner_id,
                    update.at
                ])
                // An unknown new owner is a missing referenced row.
                .map_err(unique("document"))?;
            if changed == 0 {
                return Err(StoreError::NotFound);
            }
            if let Some(grants) = &update.grants {
                conn.prepare_cached("DELETE FROM review_access WHERE review_id = ?1")
                    .map_err(internal)?
                    .execute([&update.review_id])
                    .map_err(internal)?;
                insert_grants(conn, &update.review_id, grants)?;
            }
            Ok(())
        })
        .await
    }

    async fn delete_review(&self, review_id: &str) -> StoreResult<()> {
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
            conn.prepare_cached("DELETE FROM reviews WHERE id = ?1")
                .map_err(internal)?
                .execute([&review_id])
                .map_err(internal)?;
            Ok(((), Some(event)))
        })
        .await
    }

    async fn import_projects(&self, projects: Vec<ProjectRecord>) -> StoreResult<ProjectImport> {
        self.write(move |conn| {
            let mut outcome = ProjectImport::default();
            let mut known = conn
                .prepare_cached("SELECT EXISTS (SELECT 1 FROM projects WHERE code = ?1)")
                .map_err(internal)?;
            let mut upsert = conn
                .prepare_cached(
                    "INSERT INTO projects (code, name, company, status, in_snapshot) VALUES (?1, ?2, ?3, ?4, 1) \
                     ON CONFLICT (code) DO UPDATE SET name = excluded.name, company = excluded.company, \
                     status = excluded.status, in_snapshot = 1",
                )
                .map_err(internal)?;
            for project in &projects {
                let exists: bool = known
                    .query_row([&project.code], |row| row.get(0))
                    .map_err(internal)?;
                if exists {
                    outcome.updated += 1;
                } else {
                    outcome.added += 1;
                }
                upsert
                    .execute(params![
                        project.code,
                        project.name,
                        project.company,
                        rows::project_status(project.active)
                    ])
                    .map_err(internal)?;
            }
            let codes: Vec<&str> = projects.iter().map(|p| p.code.as_str()).collect();
            outcome.dropped = conn
                .prepare_cached(
                    "UPDATE projects SET in_snapshot = 0 \
                     WHERE code NOT IN (SELECT value FROM json_each(?1))",
                )
                .map_err(internal)?
                .execute([to_json(&codes)])
                .map_err(internal)?;
            Ok(outcome)
        })
        .await
    }

    async fn list_projects(
        &self,
        query: ProjectQuery,
    ) -> StoreResult<Vec<(ProjectRecord, Option<ProjectRole>)>> {
        self.read(move |tx| {
            let sql = format!(
                "SELECT {}, pr.role FROM projects p \
                 LEFT JOIN project_roles pr ON pr.project_code = p.code AND pr.user_id = ?1 \
                 WHERE (NOT ?2 OR pr.role IS NOT NULL) AND (?3 IS NULL OR p.code > ?3) \
                 ORDER BY p.code LIMIT ?4",
                rows::PROJECT_COLUMNS
            );
            let limit = i64::try_from(query.limit).unwrap_or(i64::MAX);
            query_all(
                tx,
                &sql,
                params![query.user_id, query.only_mine, query.after, limit],
                |row| Ok((rows::project(row, 0)?, rows::optional_project_role(row, 5)?)),
            )
        })
        .await
    }

    async fn project_role(&self, code: &str, user_id: &str) -> StoreResult<Option<ProjectRole>> {
        self.lookup(|conn| {
            conn.prepare_cached(
                "SELECT role FROM project_roles WHERE project_code = ?1 AND user_id = ?2",
            )
            .map_err(internal)?
            .query_row([code, user_id], |row| rows::project_role(row, 0))
            .optional()
            .map_err(internal)
        })
    }

    async fn project_members(&self, code: &str) -> StoreResult<Vec<ProjectMember>> {
        let code = code.to_string();
        self.read(move |tx| {
            let sql = format!(
                "SELECT {}, pr.role FROM project_roles pr JOIN users u ON u.id = pr.user_id \
                 WHERE pr.project_code = ?1 ORDER BY u.email",
                rows::USER_COLUMNS
            );
            query_all(tx, &sql, [code], |row| {
                Ok(ProjectMember {
                    account: rows::account(row, 0)?,
                    role: rows::project_role(row, 8)?,
                })
            })
        })
        .await
    }

    async fn change_project_roles(
        &self,
        code: &str,
        set: Vec<(String, ProjectRole)>,
        remove: Vec<String>,
    ) -> StoreResult<()> {
        let code = code.to_string();
        self.write(move |conn| {
            if project_by_code(conn, &code)?.is_none() {
                return Err(StoreError::NotFound);
            }
            let mut upsert = conn
                .prepare_cached(
                    "INSERT INTO project_roles (project_code, user_id, role) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (project_code, user_id) DO UPDATE SET role = excluded.role",
                )
                .map_err(internal)?;
            for (user_id, role) in &set {
                // An unknown user is a missing referenced row: `NotFound`.
                upsert
                    .execute(params![code, user_id, role.as_str()])
                    .map_err(unique("project role"))?;
            }
            let mut delete = conn
                .prepare_cached(
                    "DELETE FROM project_roles WHERE project_code = ?1 AND user_id = ?2",
                )
                .map_err(internal)?;
            for user_id in &remove {
                delete.execute([&code, user_id]).map_err(internal)?;
            }
            Ok(())
        })
        .await
    }

    async fn link_project(
        &self,
        review_id: &str,
        expected: Option<&str>,
        project: Option<&str>,
        at: Millis,
    ) -> StoreResult<bool> {
        let review_id = review_id.to_string();
        let expected = expected.map(str::to_string);
        let project = project.map(str::to_string);
        self.write_announced(move |conn| {
            let current: Option<Option<String>> = conn
                .prepare_cached("SELECT project_code FROM reviews WHERE id = ?1")
                .map_err(internal)?
                .query_row([&review_id], |row| row.get(0))
                .optional()
                .map_err(internal)?;
            let Some(current) = current else {
                return Err(StoreError::NotFound);
            };
            if current != expected {
                return Ok((false, None));
            }
            conn.prepare_cached(
                "UPDATE reviews SET project_code = ?2, change_seq = change_seq + 1, updated_at = ?3 \
                 WHERE id = ?1",
            )
            .map_err(internal)?
            .execute(params![review_id, project, at])
            // An unknown project is a missing referenced row.
            .map_err(unique("document"))?;
            let event = review_event(conn, &review_id, EventKind::Review)?;
            Ok((true, event))
        })
        .await
    }

    async fn search_comments(&self, search: CommentSearch) -> StoreResult<Vec<CommentHit>> {
        self.read(move |tx| search::search_comments(tx, &search))
            .await
    }

    async fn search_reviews(&self, search: ReviewSearch) -> StoreResult<Vec<ReviewHit>> {
        self.read(move |tx| search::search_reviews(tx, &search))
            .await
    }

    async fn reviews_without_search_text(
        &self,
        limit: usize,
    ) -> StoreResult<Vec<(String, String)>> {
        self.read(move |tx| {
            query_all(
                tx,
                "SELECT t.review_id, r.latest_version_id FROM review_texts t \
                 JOIN reviews r ON r.id = t.review_id \
                 WHERE t.body IS NULL ORDER BY t.id LIMIT ?1",
                [i64::try_from(limit).unwrap_or(i64::MAX)],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
        })
        .await
    }

    async fn set_search_text(
        &self,
        review_id: &str,
        version_id: &str,
        text: String,
    ) -> StoreResult<()> {
        let (review_id, version_id) = (review_id.to_string(), version_id.to_string());
        self.write(move |conn| {
            // Only while the text was never set and `version_id` is still the latest: a version
            // write (new or in place) has set the current text, and must not be overwritten
            // with an older one.
            conn.prepare_cached(
                "INSERT INTO review_texts (review_id, body) \
                 SELECT id, ?3 FROM reviews WHERE id = ?1 AND latest_version_id = ?2 \
                 ON CONFLICT (review_id) DO UPDATE SET body = excluded.body \
                 WHERE review_texts.body IS NULL",
            )
            .map_err(internal)?
            .execute(params![review_id, version_id, text])
            .map_err(internal)?;
            Ok(())
        })
        .await
    }
}
