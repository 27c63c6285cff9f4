//! `Store` for PostgreSQL: every write method is one transaction, every read one statement or
//! one `REPEATABLE READ` snapshot. The SQL mirrors the SQLite backend's statement for statement;
//! the conformance suite (`docreview-store-conformance`) holds both to the same behaviour.

use std::collections::HashMap;

use docreview_core::events::{EventKind, ReviewEvent};
use docreview_core::model::{
    AccessGrant, Account, CommentRecord, CommentThread, GrantRole, LoginCodeRecord, MessageRecord,
    Millis, ProjectMember, ProjectRecord, ProjectRole, ReviewHead, ReviewState,
    ReviewSummaryRecord, RunRecord, SessionRecord, TokenRecord, User, VersionRecord,
};
use docreview_core::store::{
    CommentHit, CommentSearch, CommentsWrite, MemberQuery, NewReview, ProjectImport, ProjectQuery,
    ReviewHit, ReviewQuery, ReviewSearch, ReviewUpdate, Revisions, Store, StoreError, StoreResult,
    VersionWrite, Visibility,
};
use sqlx::postgres::{PgArguments, PgRow};
use sqlx::query::Query;
use sqlx::{PgConnection, Postgres, Row, Transaction};

use crate::error::{map_error, unique};
use crate::rows::{self, to_json};
use crate::{EVENTS_CHANNEL, PgStore};

type RowResult<T> = Result<T, sqlx::Error>;

fn map_rows<T>(rows: Vec<PgRow>, map: fn(&PgRow) -> RowResult<T>) -> StoreResult<Vec<T>> {
    rows.iter()
        .map(map)
        .collect::<RowResult<Vec<_>>>()
        .map_err(map_error)
}

fn map_optional<T>(row: Option<PgRow>, map: fn(&PgRow) -> RowResult<T>) -> StoreResult<Option<T>> {
    row.as_ref().map(map).transpose().map_err(map_error)
}

fn user_at0(row: &PgRow) -> RowResult<User> {
    rows::user(row, 0)
}

fn account_at0(row: &PgRow) -> RowResult<Account> {
    rows::account(row, 0)
}

impl PgStore {
    /// A read-only snapshot: every statement inside sees the same committed state, so a
    /// document never comes back with comments newer than its revision says.
    async fn snapshot(&self) -> StoreResult<Transaction<'static, Postgres>> {
        self.pool
            .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .await
            .map_err(map_error)
    }

    async fn begin(&self) -> StoreResult<Transaction<'static, Postgres>> {
        self.pool.begin().await.map_err(map_error)
    }

    async fn account_where(&self, condition: &str, value: &str) -> StoreResult<Option<Account>> {
        let sql = format!(
            "SELECT {} FROM users u WHERE {condition}",
            rows::USER_COLUMNS
        );
        let row = sqlx::query(&sql)
            .bind(value)
            .fetch_optional(&self.pool)
            .await
            .map_err(map_error)?;
        map_optional(row, account_at0)
    }
}

async fn project_where_code(
    conn: &mut PgConnection,
    code: &str,
) -> StoreResult<Option<ProjectRecord>> {
    let row = sqlx::query(&format!(
        "SELECT {} FROM projects p WHERE p.code = $1",
        rows::PROJECT_COLUMNS
    ))
    .bind(code)
    .fetch_optional(&mut *conn)
    .await
    .map_err(map_error)?;
    Ok(map_optional(row, |row| rows::project(row, 0))?.flatten())
}

/// The document with its grants, in one statement (one row per grant, or one row of NULL
/// grant columns), so it is one consistent read even outside a transaction.
async fn head(conn: &mut PgConnection, review_id: &str) -> StoreResult<Option<ReviewHead>> {
    let sql = format!(
        "SELECT {}, a.email, a.role FROM {} LEFT JOIN review_access a ON a.review_id = r.id \
         WHERE r.id = $1 ORDER BY a.email COLLATE \"C\"",
        rows::REVIEW_COLUMNS,
        rows::REVIEW_FROM
    );
    let found = sqlx::query(&sql)
        .bind(review_id)
        .fetch_all(&mut *conn)
        .await
        .map_err(map_error)?;
    let Some(first) = found.first() else {
        return Ok(None);
    };
    let review = rows::review(first, 0).map_err(map_error)?;
    let at = rows::REVIEW_COLUMN_COUNT;
    let mut grants = Vec::new();
    for row in &found {
        let email: Option<String> = row.try_get(at).map_err(map_error)?;
        let role: Option<String> = row.try_get(at + 1).map_err(map_error)?;
        // A role this build does not know is skipped, as in the SQLite backend.
        if let (Some(email), Some(role)) = (email, role.as_deref().and_then(GrantRole::parse)) {
            grants.push(AccessGrant { email, role });
        }
    }
    Ok(Some(ReviewHead { review, grants }))
}

async fn upsert_comment(conn: &mut PgConnection, c: &CommentRecord) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO comments (id, review_id, author_id, category, status, body, version_id, anchor, run_id, \
         created_at, edited_at, deleted_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12) \
         ON CONFLICT (id) DO UPDATE SET category = excluded.category, status = excluded.status, body = excluded.body, \
         anchor = excluded.anchor, edited_at = excluded.edited_at, deleted_at = excluded.deleted_at",
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
    .execute(&mut *conn)
    .await
    .map_err(map_error)?;
    Ok(())
}

async fn upsert_message(conn: &mut PgConnection, m: &MessageRecord) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO messages (id, comment_id, review_id, author_id, body, run_id, created_at, edited_at, deleted_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         ON CONFLICT (id) DO UPDATE SET body = excluded.body, edited_at = excluded.edited_at, deleted_at = excluded.deleted_at",
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
/// the first true one.
pub(crate) const VISIBLE: &str = "($1::boolean OR r.owner_id = $2 \
     OR ($4::boolean AND r.access_mode = 'link') \
     OR ($4::boolean AND EXISTS (SELECT 1 FROM review_access a WHERE a.review_id = r.id AND a.email = $3)) \
     OR (r.project_code IS NOT NULL AND EXISTS \
         (SELECT 1 FROM project_roles pr WHERE pr.project_code = r.project_code AND pr.user_id = $2)))";

/// The ids of the documents `VISIBLE` admits for a member (`$2`–`$4`; `All` needs no filter), as
/// a union of index lookups: owned, linked to one of their projects, and — internal members
/// only — link-mode or shared with them. The same rule as `VISIBLE`, in a shape the planner can
/// count: an external member's few project documents are estimated as few, so a search of a
/// frequent word starts from them instead of from every match. A disabled branch (`$4` false)
/// folds away in a custom plan.
pub(crate) const VISIBLE_IDS: &str = "SELECT r.id FROM reviews r WHERE r.owner_id = $2 \
     UNION SELECT r.id FROM project_roles pr JOIN reviews r ON r.project_code = pr.project_code \
       WHERE pr.user_id = $2 \
     UNION SELECT r.id FROM reviews r WHERE $4::boolean AND r.access_mode = 'link' \
     UNION SELECT a.review_id FROM review_access a WHERE $4::boolean AND a.email = $3";

/// Binds `$1`–`$4` of `VISIBLE` and `VISIBLE_IDS` (and of `rows::SUMMARY_COLUMNS`, which use
/// `$2` and `$3`); bind them first.
pub(crate) fn bind_visibility<'q>(
    query: Query<'q, Postgres, PgArguments>,
    visibility: &'q Visibility,
) -> Query<'q, Postgres, PgArguments> {
    let (all, email, internal) = match visibility {
        Visibility::All { .. } => (true, "", false),
        Visibility::Member {
            email, internal, ..
        } => (false, email.as_str(), *internal),
    };
    query
        .bind(all)
        .bind(visibility.user_id())
        .bind(email)
        .bind(internal)
}

/// `limit` or `offset` as a bound `BIGINT`.
pub(crate) fn count_param(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// Search text as PostgreSQL can store it. Derived text (never shown whole), so a U+0000 that
/// slipped through extraction is dropped rather than failing the document's write.
fn storable(text: String) -> String {
    if text.contains('\0') {
        text.replace('\0', "")
    } else {
        text
    }
}

/// Replaces the sharing list's rows by `grants`; a repeated email keeps its last role, like
/// SQLite's `INSERT OR REPLACE`.
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

async fn insert_token(conn: &mut PgConnection, token: &TokenRecord) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO tokens (id, user_id, name, hash, scopes, created_at, expires_at, last_used_at, revoked_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(&token.id)
    .bind(&token.user_id)
    .bind(&token.name)
    .bind(token.hash.as_slice())
    .bind(rows::scopes_text(&token.scopes))
    .bind(token.created_at)
    .bind(token.expires_at)
    .bind(token.last_used_at)
    .bind(token.revoked_at)
    .execute(&mut *conn)
    .await
    .map_err(unique("token"))?;
    Ok(())
}

const INSERT_ACCOUNT: &str = "INSERT INTO users (id, email, display_name, provider, membership, status, is_admin, password_hash, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// Queues a change event for the document's current revisions. `NOTIFY` is transactional:
/// listeners on every node hear it when, and only if, this transaction commits.
async fn notify(
    tx: &mut Transaction<'_, Postgres>,
    review_id: &str,
    kind: EventKind,
) -> StoreResult<()> {
    sqlx::query(
        "SELECT pg_notify($3, json_build_object('kind', $2::text, 'reviewId', id, \
         'commentsRevision', comments_revision, 'structureRevision', structure_revision, \
         'latestVersionId', latest_version_id, 'changeSeq', change_seq)::text) \
         FROM reviews WHERE id = $1",
    )
    .bind(review_id)
    .bind(kind.as_str())
    .bind(EVENTS_CHANNEL)
    .execute(&mut **tx)
    .await
    .map_err(map_error)?;
    Ok(())
}

#[async_trait::async_trait]
impl Store for PgStore {
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<ReviewEvent> {
        self.events.subscribe()
    }

    async fn ping(&self) -> StoreResult<()> {
        PgStore::ping(self).await
    }

    async fn create_account(
        &self,
        account: Account,
        password_hash: Option<String>,
    ) -> StoreResult<()> {
        let a = &account;
        sqlx::query(INSERT_ACCOUNT)
            .bind(&a.user.id)
            .bind(&a.email)
            .bind(&a.user.display_name)
            .bind(a.user.provider.as_str())
            .bind(a.membership.as_str())
            .bind(a.status.as_str())
            .bind(a.is_admin)
            .bind(password_hash)
            .bind(a.created_at)
            .execute(&self.pool)
            .await
            .map_err(unique("user"))?;
        Ok(())
    }

    async fn ensure_account(&self, account: Account) -> StoreResult<()> {
        // One statement, so two nodes ensuring the same principal at once both succeed; an email
        // taken by another id still answers `AlreadyExists`, as in the SQLite backend.
        let a = &account;
        sqlx::query(&format!("{INSERT_ACCOUNT} ON CONFLICT (id) DO NOTHING"))
            .bind(&a.user.id)
            .bind(&a.email)
            .bind(&a.user.display_name)
            .bind(a.user.provider.as_str())
            .bind(a.membership.as_str())
            .bind(a.status.as_str())
            .bind(a.is_admin)
            .bind(None::<String>)
            .bind(a.created_at)
            .execute(&self.pool)
            .await
            .map_err(unique("user"))?;
        Ok(())
    }

    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        // Emails are stored lower-cased; lower-casing here, in Rust, matches the SQLite backend
        // exactly (no dependence on the database's locale).
        self.account_where("u.email = $1", &email.to_lowercase())
            .await
    }

    async fn account_by_id(&self, id: &str) -> StoreResult<Option<Account>> {
        self.account_where("u.id = $1", id).await
    }

    async fn insert_token(&self, token: TokenRecord) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await.map_err(map_error)?;
        insert_token(&mut conn, &token).await
    }

    async fn token_by_hash(&self, hash: &[u8; 32]) -> StoreResult<Option<(TokenRecord, Account)>> {
        let sql = format!(
            "SELECT {}, {} FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = $1",
            rows::TOKEN_COLUMNS,
            rows::USER_COLUMNS
        );
        let row = sqlx::query(&sql)
            .bind(hash.as_slice())
            .fetch_optional(&self.pool)
            .await
            .map_err(map_error)?;
        map_optional(row, |row| {
            Ok((
                rows::token(row)?,
                rows::account(row, rows::TOKEN_COLUMN_COUNT)?,
            ))
        })
    }

    async fn touch_token(&self, token_id: &str, at: Millis) -> StoreResult<()> {
        sqlx::query("UPDATE tokens SET last_used_at = $2 WHERE id = $1")
            .bind(token_id)
            .bind(at)
            .execute(&self.pool)
            .await
            .map_err(map_error)?;
        Ok(())
    }

    async fn tokens_of(&self, user_id: &str) -> StoreResult<Vec<TokenRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {} FROM tokens t WHERE t.user_id = $1 AND t.revoked_at IS NULL \
             ORDER BY t.created_at DESC, t.id DESC",
            rows::TOKEN_COLUMNS
        ))
        .bind(user_id)
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        map_rows(rows, rows::token)
    }

    async fn revoke_token(&self, user_id: &str, token_id: &str, at: Millis) -> StoreResult<bool> {
        let revoked = sqlx::query(
            "UPDATE tokens SET revoked_at = $3 WHERE id = $2 AND user_id = $1 AND revoked_at IS NULL",
        )
        .bind(user_id)
        .bind(token_id)
        .bind(at)
        .execute(&self.pool)
        .await
        .map_err(map_error)?
        .rows_affected();
        Ok(revoked > 0)
    }

    async fn password_hash(&self, user_id: &str) -> StoreResult<Option<String>> {
        let hash: Option<Option<String>> =
            sqlx::query_scalar("SELECT password_hash FROM users WHERE id = $1")
                .bind(user_id)
                .fetch_optional(&self.pool)
                .await
                .map_err(map_error)?;
        Ok(hash.flatten())
    }

    async fn list_accounts(&self, query: MemberQuery) -> StoreResult<Vec<Account>> {
        // Emails in byte order (`COLLATE "C"`), as SQLite orders them, whatever the locale.
        let rows = sqlx::query(&format!(
            "SELECT {} FROM users u \
             WHERE u.provider <> 'service' AND u.status <> 'removed' \
               AND (NOT $1::boolean OR u.is_admin) \
               AND ($2::text IS NULL OR u.email COLLATE \"C\" > $2::text) \
             ORDER BY u.email COLLATE \"C\" LIMIT $3",
            rows::USER_COLUMNS
        ))
        .bind(query.admins_only)
        .bind(query.after.as_deref())
        .bind(count_param(query.limit))
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        map_rows(rows, account_at0)
    }

    async fn update_account(&self, account: Account) -> StoreResult<()> {
        let a = &account;
        let updated = sqlx::query(
            "UPDATE users SET display_name = $2, membership = $3, status = $4, is_admin = $5 WHERE id = $1",
        )
        .bind(&a.user.id)
        .bind(&a.user.display_name)
        .bind(a.membership.as_str())
        .bind(a.status.as_str())
        .bind(a.is_admin)
        .execute(&self.pool)
        .await
        .map_err(map_error)?
        .rows_affected();
        if updated == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn remove_account(&self, user_id: &str, at: Millis) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        let removed =
            sqlx::query("UPDATE users SET status = 'removed', is_admin = FALSE WHERE id = $1")
                .bind(user_id)
                .execute(&mut *tx)
                .await
                .map_err(map_error)?
                .rows_affected();
        if removed == 0 {
            return Err(StoreError::NotFound);
        }
        sqlx::query("UPDATE tokens SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL")
            .bind(user_id)
            .bind(at)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        for table in ["sessions", "login_codes", "project_roles"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE user_id = $1"))
                .bind(user_id)
                .execute(&mut *tx)
                .await
                .map_err(map_error)?;
        }
        tx.commit().await.map_err(map_error)
    }

    async fn insert_session(&self, session: SessionRecord) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO sessions (id, hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&session.id)
        .bind(session.hash.as_slice())
        .bind(&session.user_id)
        .bind(session.created_at)
        .bind(session.expires_at)
        .execute(&self.pool)
        .await
        .map_err(unique("session"))?;
        Ok(())
    }

    async fn session_by_hash(
        &self,
        hash: &[u8; 32],
    ) -> StoreResult<Option<(SessionRecord, Account)>> {
        let sql = format!(
            "SELECT {}, {} FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = $1",
            rows::SESSION_COLUMNS,
            rows::USER_COLUMNS
        );
        let row = sqlx::query(&sql)
            .bind(hash.as_slice())
            .fetch_optional(&self.pool)
            .await
            .map_err(map_error)?;
        map_optional(row, |row| {
            Ok((
                rows::session(row, 0)?,
                rows::account(row, rows::SESSION_COLUMN_COUNT)?,
            ))
        })
    }

    async fn delete_session(&self, hash: &[u8; 32]) -> StoreResult<()> {
        sqlx::query("DELETE FROM sessions WHERE hash = $1")
            .bind(hash.as_slice())
            .execute(&self.pool)
            .await
            .map_err(map_error)?;
        Ok(())
    }

    async fn insert_login_code(&self, code: LoginCodeRecord) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO login_codes (hash, user_id, challenge, token_name, scopes, created_at, expires_at, used_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(code.hash.as_slice())
        .bind(&code.user_id)
        .bind(&code.challenge)
        .bind(&code.token_name)
        .bind(rows::scopes_text(&code.scopes))
        .bind(code.created_at)
        .bind(code.expires_at)
        .bind(code.used_at)
        .execute(&self.pool)
        .await
        .map_err(unique("login code"))?;
        Ok(())
    }

    async fn login_code(&self, hash: &[u8; 32]) -> StoreResult<Option<LoginCodeRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {} FROM login_codes WHERE hash = $1",
            rows::LOGIN_CODE_COLUMNS
        ))
        .bind(hash.as_slice())
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        map_optional(row, rows::login_code)
    }

    async fn redeem_login_code(
        &self,
        hash: &[u8; 32],
        at: Millis,
        token: TokenRecord,
    ) -> StoreResult<bool> {
        let mut tx = self.begin().await?;
        // Of two exchanges racing for one code, the second waits for the first's row lock and
        // then finds `used_at` set: exactly one gets a token.
        let claimed =
            sqlx::query("UPDATE login_codes SET used_at = $2 WHERE hash = $1 AND used_at IS NULL")
                .bind(hash.as_slice())
                .bind(at)
                .execute(&mut *tx)
                .await
                .map_err(map_error)?
                .rows_affected();
        if claimed == 0 {
            return Ok(false);
        }
        insert_token(&mut tx, &token).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(true)
    }

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
            "SELECT {} FROM versions WHERE review_id = $1 ORDER BY seq",
            rows::VERSION_COLUMNS
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let comments = sqlx::query(&format!(
            "SELECT {} FROM comments WHERE review_id = $1 ORDER BY created_at, id",
            rows::COMMENT_COLUMNS
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let messages = sqlx::query(&format!(
            "SELECT {} FROM messages WHERE review_id = $1 ORDER BY created_at, id",
            rows::MESSAGE_COLUMNS
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let events = sqlx::query(&format!(
            "SELECT {} FROM status_events WHERE review_id = $1 ORDER BY comment_id, seq",
            rows::EVENT_COLUMNS
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let runs = sqlx::query(&format!(
            "SELECT {} FROM runs WHERE review_id = $1 ORDER BY created_at, id",
            rows::RUN_COLUMNS
        ))
        .bind(review_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let users = sqlx::query(
            "SELECT id, provider, display_name FROM users WHERE id IN ( \
               SELECT owner_id FROM reviews WHERE id = $1 \
               UNION SELECT author_id FROM comments WHERE review_id = $1 \
               UNION SELECT author_id FROM messages WHERE review_id = $1 \
               UNION SELECT by_id FROM status_events WHERE review_id = $1) \
             ORDER BY id",
        )
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
            versions: map_rows(versions, rows::version)?,
            comments: map_rows(comments, rows::comment)?,
            messages: map_rows(messages, rows::message)?,
            events: map_rows(events, rows::event)?,
            runs: map_rows(runs, rows::run)?,
            users: map_rows(users, user_at0)?,
            project,
        }))
    }

    async fn list_reviews(&self, query: ReviewQuery) -> StoreResult<Vec<ReviewSummaryRecord>> {
        // `strpos`, not LIKE, so `%` and `_` in the search text are literal.
        let sql = format!(
            "SELECT {review}, {summary} FROM {from} \
             WHERE {visible} \
               AND ($5::text IS NULL OR strpos(lower(r.title), lower($5::text)) > 0) \
               AND ($6::text IS NULL OR r.tags @> jsonb_build_array($6::text)) \
               AND ($7::boolean IS NULL OR r.archived = $7::boolean) \
               AND ($8::text IS NULL OR r.project_code = $8::text) \
               AND ($9::text IS NULL OR r.owner_id = $9::text) \
               AND ($10::bigint IS NULL OR (r.updated_at, r.id) < ($10::bigint, $11::text)) \
             ORDER BY r.updated_at DESC, r.id DESC LIMIT $12",
            review = rows::REVIEW_COLUMNS,
            summary = rows::SUMMARY_COLUMNS,
            from = rows::SUMMARY_FROM,
            visible = VISIBLE,
        );
        let (after_at, after_id) = match &query.after {
            Some((at, id)) => (Some(*at), Some(id.as_str())),
            None => (None, None),
        };
        let rows = bind_visibility(sqlx::query(&sql), &query.visibility)
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
        map_rows(rows, rows::summary)
    }

    async fn versions(&self, review_id: &str) -> StoreResult<Vec<VersionRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {} FROM versions WHERE review_id = $1 ORDER BY seq",
            rows::VERSION_COLUMNS
        ))
        .bind(review_id)
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        map_rows(rows, rows::version)
    }

    async fn version(
        &self,
        review_id: &str,
        version_id: &str,
    ) -> StoreResult<Option<VersionRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {} FROM versions WHERE review_id = $1 AND id = $2",
            rows::VERSION_COLUMNS
        ))
        .bind(review_id)
        .bind(version_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        map_optional(row, rows::version)
    }

    async fn version_html(
        &self,
        review_id: &str,
        version_id: &str,
    ) -> StoreResult<Option<(VersionRecord, Vec<u8>)>> {
        let row = sqlx::query(&format!(
            "SELECT {}, html FROM versions WHERE review_id = $1 AND id = $2",
            rows::VERSION_COLUMNS
        ))
        .bind(review_id)
        .bind(version_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        map_optional(row, |row| Ok((rows::version(row)?, row.try_get(6)?)))
    }

    async fn write_version(&self, write: VersionWrite) -> StoreResult<Revisions> {
        let mut tx = self.begin().await?;
        // The row lock makes concurrent version and comment writes on this document wait for
        // this transaction, so the two checks below stay true until it commits.
        let current = sqlx::query(
            "SELECT latest_version_id, comments_revision, structure_revision FROM reviews WHERE id = $1 FOR UPDATE",
        )
        .bind(&write.review_id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(map_error)?;
        let Some((latest, comments_revision, structure_revision)) = map_optional(current, |row| {
            Ok::<(String, i64, i64), _>((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?))
        })?
        else {
            return Err(StoreError::NotFound);
        };
        if latest != write.expected_latest_version_id {
            return Err(StoreError::StaleVersion { latest });
        }
        if comments_revision != write.expected_comments_revision {
            return Err(StoreError::RevisionConflict {
                current: comments_revision,
            });
        }
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
            sqlx::query("UPDATE comments SET anchor = $2::jsonb WHERE id = $1 AND review_id = $3")
                .bind(comment_id)
                .bind(to_json(anchor))
                .bind(&write.review_id)
                .execute(&mut *tx)
                .await
                .map_err(map_error)?;
        }
        let revisions = Revisions {
            comments: comments_revision + 1,
            structure: structure_revision + i64::from(write.structure_changed),
        };
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
        .bind(update.access_mode.map(|mode| mode.as_str()))
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

    async fn delete_review(&self, review_id: &str) -> StoreResult<()> {
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
        tx.commit().await.map_err(map_error)
    }

    async fn project(&self, code: &str) -> StoreResult<Option<ProjectRecord>> {
        let mut conn = self.pool.acquire().await.map_err(map_error)?;
        project_where_code(&mut conn, code).await
    }

    async fn import_projects(&self, projects: Vec<ProjectRecord>) -> StoreResult<ProjectImport> {
        // One row per code, the last listed winning, so one statement can upsert them all (an
        // upsert may not touch a row twice). A code listed twice counts as added once and
        // updated once, as if upserted one after the other.
        let mut by_code: HashMap<&str, &ProjectRecord> = HashMap::new();
        for project in &projects {
            by_code.insert(project.code.as_str(), project);
        }
        let mut codes = Vec::with_capacity(by_code.len());
        let mut names = Vec::with_capacity(by_code.len());
        let mut companies = Vec::with_capacity(by_code.len());
        let mut statuses = Vec::with_capacity(by_code.len());
        for project in by_code.values() {
            codes.push(project.code.as_str());
            names.push(project.name.as_deref());
            companies.push(project.company.as_deref());
            statuses.push(rows::project_status(project));
        }
        let mut tx = self.begin().await?;
        // `xmax = 0` holds exactly for a row this statement inserted (an updated row carries
        // the updating transaction's id): the usual way to tell the two apart in one upsert.
        let inserted: Vec<bool> = sqlx::query_scalar(
            "INSERT INTO projects (code, name, company, status, in_snapshot) \
             SELECT code, name, company, status, TRUE \
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS s(code, name, company, status) \
             ON CONFLICT (code) DO UPDATE SET name = excluded.name, company = excluded.company, \
               status = excluded.status, in_snapshot = TRUE \
             RETURNING xmax = 0",
        )
        .bind(&codes)
        .bind(&names)
        .bind(&companies)
        .bind(&statuses)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let dropped = sqlx::query(
            "UPDATE projects SET in_snapshot = FALSE WHERE NOT (code = ANY($1::text[]))",
        )
        .bind(&codes)
        .execute(&mut *tx)
        .await
        .map_err(map_error)?
        .rows_affected();
        tx.commit().await.map_err(map_error)?;
        let added = inserted.iter().filter(|inserted| **inserted).count();
        Ok(ProjectImport {
            added,
            updated: projects.len() - added,
            dropped: usize::try_from(dropped).unwrap_or(usize::MAX),
        })
    }

    async fn list_projects(
        &self,
        query: ProjectQuery,
    ) -> StoreResult<Vec<(ProjectRecord, Option<ProjectRole>)>> {
        let rows = sqlx::query(&format!(
            "SELECT {}, pr.role FROM projects p \
             LEFT JOIN project_roles pr ON pr.project_code = p.code AND pr.user_id = $1 \
             WHERE (NOT $2::boolean OR pr.role IS NOT NULL) \
               AND ($3::text IS NULL OR p.code > $3::text) \
             ORDER BY p.code LIMIT $4",
            rows::PROJECT_COLUMNS
        ))
        .bind(&query.user_id)
        .bind(query.only_mine)
        .bind(query.after.as_deref())
        .bind(count_param(query.limit))
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        let listed = rows
            .iter()
            .map(|row| Ok((rows::project(row, 0)?, rows::project_role(row, 5)?)))
            .collect::<RowResult<Vec<_>>>()
            .map_err(map_error)?;
        // `project` is `Some` for every row of an inner `projects` scan.
        Ok(listed
            .into_iter()
            .filter_map(|(project, role)| project.map(|project| (project, role)))
            .collect())
    }

    async fn project_role(&self, code: &str, user_id: &str) -> StoreResult<Option<ProjectRole>> {
        let role: Option<String> = sqlx::query_scalar(
            "SELECT role FROM project_roles WHERE project_code = $1 AND user_id = $2",
        )
        .bind(code)
        .bind(user_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        Ok(role.as_deref().and_then(ProjectRole::parse))
    }

    async fn project_members(&self, code: &str) -> StoreResult<Vec<ProjectMember>> {
        let rows = sqlx::query(&format!(
            "SELECT {}, pr.role FROM project_roles pr JOIN users u ON u.id = pr.user_id \
             WHERE pr.project_code = $1 ORDER BY u.email COLLATE \"C\", u.id",
            rows::USER_COLUMNS
        ))
        .bind(code)
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        let members = rows
            .iter()
            .map(|row| Ok((rows::account(row, 0)?, rows::project_role(row, 8)?)))
            .collect::<RowResult<Vec<_>>>()
            .map_err(map_error)?;
        // A role this build does not know is skipped, as grants are.
        Ok(members
            .into_iter()
            .filter_map(|(account, role)| role.map(|role| ProjectMember { account, role }))
            .collect())
    }

    async fn change_project_roles(
        &self,
        code: &str,
        set: Vec<(String, ProjectRole)>,
        remove: Vec<String>,
    ) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        // The project must exist even when only removing (and stays while this runs).
        let exists: Option<i32> =
            sqlx::query_scalar("SELECT 1 FROM projects WHERE code = $1 FOR KEY SHARE")
                .bind(code)
                .fetch_optional(&mut *tx)
                .await
                .map_err(map_error)?;
        if exists.is_none() {
            return Err(StoreError::NotFound);
        }
        for (user_id, role) in &set {
            // An unknown user is a foreign-key violation: `NotFound`.
            sqlx::query(
                "INSERT INTO project_roles (project_code, user_id, role) VALUES ($1, $2, $3) \
                 ON CONFLICT (project_code, user_id) DO UPDATE SET role = excluded.role",
            )
            .bind(code)
            .bind(user_id)
            .bind(role.as_str())
            .execute(&mut *tx)
            .await
            .map_err(unique("project role"))?;
        }
        if !remove.is_empty() {
            sqlx::query("DELETE FROM project_roles WHERE project_code = $1 AND user_id = ANY($2)")
                .bind(code)
                .bind(&remove)
                .execute(&mut *tx)
                .await
                .map_err(map_error)?;
        }
        tx.commit().await.map_err(map_error)
    }

    async fn link_project(
        &self,
        review_id: &str,
        expected: Option<&str>,
        project: Option<&str>,
        at: Millis,
    ) -> StoreResult<bool> {
        let mut tx = self.begin().await?;
        // A compare-and-swap on the link, like `write_comments` on the revision: a concurrent
        // link waits for this row and is then re-checked against what this one wrote. An
        // unknown project is a foreign-key violation: `NotFound`.
        let linked = sqlx::query(
            "UPDATE reviews SET project_code = $3, updated_at = $4, change_seq = change_seq + 1 \
             WHERE id = $1 AND project_code IS NOT DISTINCT FROM $2::text",
        )
        .bind(review_id)
        .bind(expected)
        .bind(project)
        .bind(at)
        .execute(&mut *tx)
        .await
        .map_err(unique("document"))?
        .rows_affected();
        if linked == 0 {
            let exists: bool =
                sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM reviews WHERE id = $1)")
                    .bind(review_id)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(map_error)?;
            return if exists {
                Ok(false)
            } else {
                Err(StoreError::NotFound)
            };
        }
        notify(&mut tx, review_id, EventKind::Review).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(true)
    }

    async fn search_comments(&self, search: CommentSearch) -> StoreResult<Vec<CommentHit>> {
        crate::search::comments(&self.pool, search).await
    }

    async fn search_reviews(&self, search: ReviewSearch) -> StoreResult<Vec<ReviewHit>> {
        crate::search::reviews(&self.pool, search).await
    }

    async fn reviews_without_search_text(
        &self,
        limit: usize,
    ) -> StoreResult<Vec<(String, String)>> {
        let rows = sqlx::query(
            "SELECT s.review_id, r.latest_version_id FROM review_search s \
             JOIN reviews r ON r.id = s.review_id \
             WHERE s.version_id IS NULL ORDER BY s.review_id LIMIT $1",
        )
        .bind(count_param(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        map_rows(rows, |row| Ok((row.try_get(0)?, row.try_get(1)?)))
    }

    async fn set_search_text(
        &self,
        review_id: &str,
        version_id: &str,
        text: String,
    ) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        // FOR KEY SHARE conflicts with `write_version`'s FOR UPDATE (and with deletion) but not
        // with comment writes: a version written meanwhile either waits for this transaction or
        // is seen here. Text a version write set (`version_id` not NULL) is never overwritten,
        // also when a replaced body kept its version id.
        let latest: Option<String> =
            sqlx::query_scalar("SELECT latest_version_id FROM reviews WHERE id = $1 FOR KEY SHARE")
                .bind(review_id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(map_error)?;
        if latest.as_deref() != Some(version_id) {
            return Ok(());
        }
        sqlx::query(
            "INSERT INTO review_search (review_id, title, body, version_id) \
             SELECT id, title, $2, $3 FROM reviews WHERE id = $1 \
             ON CONFLICT (review_id) DO UPDATE SET body = excluded.body, version_id = excluded.version_id \
             WHERE review_search.version_id IS NULL",
        )
        .bind(review_id)
        .bind(storable(text))
        .bind(version_id)
        .execute(&mut *tx)
        .await
        .map_err(map_error)?;
        tx.commit().await.map_err(map_error)
    }

    async fn comment_thread(
        &self,
        review_id: &str,
        comment_id: &str,
    ) -> StoreResult<Option<CommentThread>> {
        let mut tx = self.snapshot().await?;
        let comment = sqlx::query(&format!(
            "SELECT {} FROM comments WHERE review_id = $1 AND id = $2",
            rows::COMMENT_COLUMNS
        ))
        .bind(review_id)
        .bind(comment_id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(map_error)?;
        let Some(comment) = map_optional(comment, rows::comment)? else {
            return Ok(None);
        };
        let messages = sqlx::query(&format!(
            "SELECT {} FROM messages WHERE comment_id = $1 ORDER BY created_at, id",
            rows::MESSAGE_COLUMNS
        ))
        .bind(comment_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let events = sqlx::query(&format!(
            "SELECT {} FROM status_events WHERE comment_id = $1 ORDER BY seq",
            rows::EVENT_COLUMNS
        ))
        .bind(comment_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        tx.commit().await.map_err(map_error)?;
        Ok(Some(CommentThread {
            comment,
            messages: map_rows(messages, rows::message)?,
            events: map_rows(events, rows::event)?,
        }))
    }

    async fn live_comments(&self, review_id: &str) -> StoreResult<Vec<CommentRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {} FROM comments WHERE review_id = $1 AND deleted_at IS NULL ORDER BY created_at, id",
            rows::COMMENT_COLUMNS
        ))
        .bind(review_id)
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        map_rows(rows, rows::comment)
    }

    async fn users(&self, ids: &[String]) -> StoreResult<Vec<User>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query("SELECT id, provider, display_name FROM users WHERE id = ANY($1)")
            .bind(ids)
            .fetch_all(&self.pool)
            .await
            .map_err(map_error)?;
        let found: HashMap<String, User> = map_rows(rows, user_at0)?
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
        // so of all writers expecting the same revision exactly one matches.
        let bumped: Option<i64> = sqlx::query_scalar(
            "UPDATE reviews SET comments_revision = comments_revision + 1, updated_at = $3, change_seq = change_seq + 1 \
             WHERE id = $1 AND comments_revision = $2 RETURNING comments_revision",
        )
        .bind(review_id)
        .bind(write.expected_revision)
        .bind(write.at)
        .fetch_optional(&mut *tx)
        .await
        .map_err(map_error)?;
        let Some(revision) = bumped else {
            let current: Option<i64> =
                sqlx::query_scalar("SELECT comments_revision FROM reviews WHERE id = $1")
                    .bind(review_id)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(map_error)?;
            return Err(match current {
                Some(current) => StoreError::RevisionConflict { current },
                None => StoreError::NotFound,
            });
        };
        for comment in &write.comments {
            upsert_comment(&mut tx, comment).await?;
        }
        for message in &write.messages {
            upsert_message(&mut tx, message).await?;
        }
        for event in &write.events {
            sqlx::query(
                "INSERT INTO status_events (comment_id, seq, review_id, status, by_id, ts) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(&event.comment_id)
            .bind(event.seq)
            .bind(review_id)
            .bind(event.status.as_str())
            .bind(&event.by_id)
            .bind(event.ts)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        }
        for run in &write.runs {
            upsert_run(&mut tx, run).await?;
        }
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
            "SELECT {} FROM runs WHERE review_id = $1 AND id = $2",
            rows::RUN_COLUMNS
        ))
        .bind(review_id)
        .bind(run_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        map_optional(row, rows::run)
    }

    async fn run_items(
        &self,
        review_id: &str,
        run_id: &str,
    ) -> StoreResult<(Vec<CommentRecord>, Vec<MessageRecord>)> {
        let mut tx = self.snapshot().await?;
        let comments = sqlx::query(&format!(
            "SELECT {} FROM comments WHERE review_id = $1 AND run_id = $2 ORDER BY created_at, id",
            rows::COMMENT_COLUMNS
        ))
        .bind(review_id)
        .bind(run_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        let messages = sqlx::query(&format!(
            "SELECT {} FROM messages WHERE review_id = $1 AND run_id = $2 ORDER BY created_at, id",
            rows::MESSAGE_COLUMNS
        ))
        .bind(review_id)
        .bind(run_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        tx.commit().await.map_err(map_error)?;
        Ok((
            map_rows(comments, rows::comment)?,
            map_rows(messages, rows::message)?,
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
        map_rows(rows, |row| Ok((row.try_get(0)?, row.try_get(1)?)))
    }
}
