//! `OrganizationStore` on PostgreSQL: members, and projects with their roles and documents.

use std::collections::HashMap;

use docreview_core::events::EventKind;
use docreview_core::model::{Account, Millis, ProjectMember, ProjectRecord, ProjectRole};
use docreview_core::store::columns::{self, PROJECT_WIDTH, project_status};
use docreview_core::store::{
    MemberQuery, OrganizationStore, ProjectImport, ProjectQuery, StoreError, StoreResult,
    count_param,
};
use sqlx::PgConnection;

use crate::PgStore;
use crate::columns::{ACCOUNT_COLUMNS, PROJECT_COLUMNS};
use crate::error::{map_error, unique};
use crate::events::notify;
use crate::sql::{decode_all, decode_optional};

pub(crate) async fn project_where_code(
    conn: &mut PgConnection,
    code: &str,
) -> StoreResult<Option<ProjectRecord>> {
    let row = sqlx::query(&format!(
        "SELECT {PROJECT_COLUMNS} FROM projects p WHERE p.code = $1"
    ))
    .bind(code)
    .fetch_optional(&mut *conn)
    .await
    .map_err(map_error)?;
    decode_optional(row, |row| columns::project(row, 0))
}

/// The document with its grants, in one statement (one row per grant, or one row of NULL

#[async_trait::async_trait]
impl OrganizationStore for PgStore {
    async fn list_accounts(&self, query: MemberQuery) -> StoreResult<Vec<Account>> {
        // Emails in byte order (`COLLATE "C"`), as SQLite orders them, whatever the locale.
        let rows = sqlx::query(&format!(
            "SELECT {ACCOUNT_COLUMNS} FROM users u \
             WHERE u.provider <> 'service' AND u.status <> 'removed' \
               AND (NOT $1::boolean OR u.is_admin) \
               AND ($2::text IS NULL OR u.email COLLATE \"C\" > $2::text) \
             ORDER BY u.email COLLATE \"C\" LIMIT $3"
        ))
        .bind(query.admins_only)
        .bind(query.after.as_deref())
        .bind(count_param(query.limit))
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| columns::account(row, 0))
    }

    async fn update_account(&self, account: Account) -> StoreResult<()> {
        let a = &account;
        let mut tx = self.begin().await?;
        // Account updates take turns (on every node), so the count after the update sees every
        // other committed one: two admins demoting each other cannot both pass the check.
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(ACCOUNT_UPDATES_LOCK)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        let had_admin = active_admins(&mut tx).await? > 0;
        let updated = sqlx::query(
            "UPDATE users SET display_name = $2, membership = $3, status = $4, is_admin = $5 WHERE id = $1",
        )
        .bind(&a.user.id)
        .bind(&a.user.display_name)
        .bind(a.membership.as_str())
        .bind(a.status.as_str())
        .bind(a.is_admin)
        .execute(&mut *tx)
        .await
        .map_err(map_error)?
        .rows_affected();
        if updated == 0 {
            return Err(StoreError::NotFound);
        }
        if had_admin && active_admins(&mut tx).await? == 0 {
            return Err(StoreError::LastAdmin);
        }
        tx.commit().await.map_err(map_error)?;
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
            statuses.push(project_status(project.active));
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
            "SELECT {PROJECT_COLUMNS}, pr.role FROM projects p \
             LEFT JOIN project_roles pr ON pr.project_code = p.code AND pr.user_id = $1 \
             WHERE (NOT $2::boolean OR pr.role IS NOT NULL) \
               AND ($3::text IS NULL OR p.code > $3::text) \
             ORDER BY p.code LIMIT $4"
        ))
        .bind(&query.user_id)
        .bind(query.only_mine)
        .bind(query.after.as_deref())
        .bind(count_param(query.limit))
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| {
            Ok((
                columns::project(row, 0)?,
                columns::project_role(row, PROJECT_WIDTH)?,
            ))
        })
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
            "SELECT {ACCOUNT_COLUMNS}, pr.role FROM project_roles pr JOIN users u ON u.id = pr.user_id \
             WHERE pr.project_code = $1 ORDER BY u.email COLLATE \"C\", u.id"
        ))
        .bind(code)
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        let members = decode_all(&rows, |row| columns::project_member(row, 0))?;
        Ok(members.into_iter().flatten().collect())
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
}

/// The advisory lock key serializing account updates: "docracct" in ASCII (the migrations'
/// key is "docrevie").
const ACCOUNT_UPDATES_LOCK: i64 = 0x646f_6372_6163_6374;

async fn active_admins(tx: &mut sqlx::Transaction<'static, sqlx::Postgres>) -> StoreResult<i64> {
    sqlx::query_scalar("SELECT count(*) FROM users WHERE is_admin AND status = 'active'")
        .fetch_one(&mut **tx)
        .await
        .map_err(map_error)
}
