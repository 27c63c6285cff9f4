//! `Store` for SQLite: every method is one read snapshot or one group-committed write.

use docreview_core::model::{
    AccessGrant, Account, CommentRecord, CommentThread, GrantRole, MessageRecord, Millis,
    ProjectRecord, ReviewHead, ReviewState, ReviewSummaryRecord, RunRecord, TokenRecord, User,
    VersionRecord,
};
use docreview_core::store::{
    CommentsWrite, NewReview, ReviewQuery, Revisions, Store, StoreError, StoreResult, VersionWrite,
    Visibility,
};
use rusqlite::{Connection, OptionalExtension, params};

use docreview_core::events::{EventKind, ReviewEvent};

use crate::rows::{self, to_json};
use crate::{SqliteStore, internal};

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
        self.write(move |conn| {
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
        })
        .await
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
            for grant in &new.grants {
                conn.prepare_cached("INSERT OR REPLACE INTO review_access (review_id, email, role) VALUES (?1, ?2, ?3)")
                    .map_err(internal)?
                    .execute(params![r.id, grant.email, grant.role.as_str()])
                    .map_err(internal)?;
            }
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
            Ok(Some(ReviewState {
                head,
                versions,
                comments,
                messages,
                events,
                runs,
                users,
            }))
        })
        .await
    }

    async fn list_reviews(&self, query: ReviewQuery) -> StoreResult<Vec<ReviewSummaryRecord>> {
        self.read(move |tx| {
            let (all, user_id, email, internal_member) = match &query.visibility {
                Visibility::All => (true, String::new(), String::new(), false),
                Visibility::Member { user_id, email, internal } => (false, user_id.clone(), email.clone(), *internal),
            };
            let sql = format!(
                "SELECT {review}, u.id, u.provider, u.display_name, \
                   (SELECT a.role FROM review_access a WHERE a.review_id = r.id AND a.email = ?3), \
                   (SELECT count(*) FROM comments c WHERE c.review_id = r.id AND c.deleted_at IS NULL), \
                   (SELECT count(*) FROM comments c WHERE c.review_id = r.id AND c.deleted_at IS NULL AND c.status = 'open') \
                 FROM {from} JOIN users u ON u.id = r.owner_id \
                 WHERE (?1 OR r.owner_id = ?2 OR (?4 AND (r.access_mode = 'link' OR EXISTS \
                         (SELECT 1 FROM review_access a WHERE a.review_id = r.id AND a.email = ?3)))) \
                   AND (?5 IS NULL OR instr(lower(r.title), lower(?5)) > 0) \
                   AND (?6 IS NULL OR EXISTS (SELECT 1 FROM json_each(r.tags) WHERE json_each.value = ?6)) \
                   AND (?7 IS NULL OR r.archived = ?7) \
                   AND (?8 IS NULL OR r.project_code = ?8) \
                   AND (?9 IS NULL OR r.owner_id = ?9) \
                   AND (?10 IS NULL OR (r.updated_at, r.id) < (?10, ?11)) \
                 ORDER BY r.updated_at DESC, r.id DESC LIMIT ?12",
                review = rows::REVIEW_COLUMNS,
                from = rows::REVIEW_FROM
            );
            let (after_at, after_id) = match &query.after {
                Some((at, id)) => (Some(*at), Some(id.clone())),
                None => (None, None),
            };
            query_all(
                tx,
                &sql,
                params![
                    all,
                    user_id,
                    email,
                    internal_member,
                    query.title_contains,
                    query.tag,
                    query.archived,
                    query.project,
                    query.owner_id,
                    after_at,
                    after_id,
                    i64::try_from(query.limit).unwrap_or(i64::MAX)
                ],
                |row| {
                    let at = rows::REVIEW_COLUMN_COUNT;
                    let grant: Option<String> = row.get(at + 3)?;
                    Ok(ReviewSummaryRecord {
                        review: rows::review(row, 0)?,
                        owner: rows::user(row, at)?,
                        grant: grant.as_deref().and_then(GrantRole::parse),
                        comment_count: row.get(at + 4)?,
                        open_comment_count: row.get(at + 5)?,
                    })
                },
            )
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
            Ok(revisions)
        })
        .await
    }

    async fn project(&self, code: &str) -> StoreResult<Option<ProjectRecord>> {
        let code = code.to_string();
        self.read(move |tx| {
            tx.prepare_cached(
                "SELECT code, name, company, status, in_snapshot FROM projects WHERE code = ?1",
            )
            .map_err(internal)?
            .query_row([code], |row| {
                let status: String = row.get(3)?;
                Ok(ProjectRecord {
                    code: row.get(0)?,
                    name: row.get(1)?,
                    company: row.get(2)?,
                    active: status == "active",
                    in_snapshot: row.get(4)?,
                })
            })
            .optional()
            .map_err(internal)
        })
        .await
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
}
