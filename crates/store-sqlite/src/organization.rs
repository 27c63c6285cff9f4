//! `OrganizationStore` on SQLite: members, and projects with their roles and documents.

use docreview_core::events::EventKind;
use docreview_core::model::{Account, Millis, ProjectMember, ProjectRecord, ProjectRole};
use docreview_core::store::columns::{self, PROJECT_WIDTH, project_status, to_json};
use docreview_core::store::{
    MemberQuery, OrganizationStore, ProjectImport, ProjectQuery, StoreError, StoreResult,
    count_param,
};
use rusqlite::{Connection, params};

use crate::SqliteStore;
use crate::columns::{ACCOUNT_COLUMNS, PROJECT_COLUMNS};
use crate::sql::{execute, internal, query_all, query_optional, unique};
use crate::writer::review_event;

pub(crate) fn project_by_code(conn: &Connection, code: &str) -> StoreResult<Option<ProjectRecord>> {
    let sql = format!("SELECT {PROJECT_COLUMNS} FROM projects p WHERE p.code = ?1");
    query_optional(conn, &sql, [code], |row| columns::project(row, 0))
}

#[async_trait::async_trait]
impl OrganizationStore for SqliteStore {
    async fn list_accounts(&self, query: MemberQuery) -> StoreResult<Vec<Account>> {
        self.read(move |tx| {
            let sql = format!(
                "SELECT {ACCOUNT_COLUMNS} FROM users u \
                 WHERE u.provider <> 'service' AND u.status <> 'removed' \
                   AND (NOT ?1 OR u.is_admin) AND (?2 IS NULL OR u.email > ?2) \
                 ORDER BY u.email LIMIT ?3"
            );
            query_all(
                tx,
                &sql,
                params![query.admins_only, query.after, count_param(query.limit)],
                |row| columns::account(row, 0),
            )
        })
        .await
    }

    async fn update_account(&self, account: Account) -> StoreResult<()> {
        // The writer runs one job at a time, so counting before and after is atomic with the
        // update; a refused job's savepoint is rolled back.
        self.write(move |conn| {
            let had_admin = active_admins(conn)? > 0;
            let updated = execute(
                conn,
                "UPDATE users SET display_name = ?2, membership = ?3, status = ?4, is_admin = ?5 \
                 WHERE id = ?1",
                params![
                    account.user.id,
                    account.user.display_name,
                    account.membership.as_str(),
                    account.status.as_str(),
                    account.is_admin
                ],
            )
            .map_err(internal)?;
            if updated == 0 {
                return Err(StoreError::NotFound);
            }
            if had_admin && active_admins(conn)? == 0 {
                return Err(StoreError::LastAdmin);
            }
            Ok(())
        })
        .await
    }

    async fn remove_account(&self, user_id: &str, at: Millis) -> StoreResult<()> {
        let user_id = user_id.to_string();
        self.write(move |conn| {
            let removed = execute(
                conn,
                "UPDATE users SET status = 'removed', is_admin = 0 WHERE id = ?1",
                [&user_id],
            )
            .map_err(internal)?;
            if removed == 0 {
                return Err(StoreError::NotFound);
            }
            execute(
                conn,
                "UPDATE tokens SET revoked_at = ?2 WHERE user_id = ?1 AND revoked_at IS NULL",
                params![user_id, at],
            )
            .map_err(internal)?;
            for sql in [
                "DELETE FROM sessions WHERE user_id = ?1",
                "DELETE FROM login_codes WHERE user_id = ?1",
                "DELETE FROM project_roles WHERE user_id = ?1",
            ] {
                execute(conn, sql, [&user_id]).map_err(internal)?;
            }
            Ok(())
        })
        .await
    }

    async fn project(&self, code: &str) -> StoreResult<Option<ProjectRecord>> {
        let code = code.to_string();
        self.read(move |tx| project_by_code(tx, &code)).await
    }

    async fn import_projects(&self, projects: Vec<ProjectRecord>) -> StoreResult<ProjectImport> {
        self.write(move |conn| {
            let mut outcome = ProjectImport::default();
            for project in &projects {
                let known =
                    query_optional(conn, "SELECT 1 FROM projects WHERE code = ?1", [&project.code], |_| {
                        Ok(())
                    })?;
                if known.is_some() {
                    outcome.updated += 1;
                } else {
                    outcome.added += 1;
                }
                execute(
                    conn,
                    "INSERT INTO projects (code, name, company, status, in_snapshot) VALUES (?1, ?2, ?3, ?4, 1) \
                     ON CONFLICT (code) DO UPDATE SET name = excluded.name, company = excluded.company, \
                     status = excluded.status, in_snapshot = 1",
                    params![
                        project.code,
                        project.name,
                        project.company,
                        project_status(project.active)
                    ],
                )
                .map_err(internal)?;
            }
            let codes: Vec<&str> = projects.iter().map(|p| p.code.as_str()).collect();
            outcome.dropped = execute(
                conn,
                "UPDATE projects SET in_snapshot = 0 \
                 WHERE code NOT IN (SELECT value FROM json_each(?1))",
                [to_json(&codes)],
            )
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
                "SELECT {PROJECT_COLUMNS}, pr.role FROM projects p \
                 LEFT JOIN project_roles pr ON pr.project_code = p.code AND pr.user_id = ?1 \
                 WHERE (NOT ?2 OR pr.role IS NOT NULL) AND (?3 IS NULL OR p.code > ?3) \
                 ORDER BY p.code LIMIT ?4"
            );
            query_all(
                tx,
                &sql,
                params![
                    query.user_id,
                    query.only_mine,
                    query.after,
                    count_param(query.limit)
                ],
                |row| {
                    Ok((
                        columns::project(row, 0)?,
                        columns::project_role(row, PROJECT_WIDTH)?,
                    ))
                },
            )
        })
        .await
    }

    async fn project_role(&self, code: &str, user_id: &str) -> StoreResult<Option<ProjectRole>> {
        self.lookup(|conn| {
            let role = query_optional(
                conn,
                "SELECT role FROM project_roles WHERE project_code = ?1 AND user_id = ?2",
                [code, user_id],
                |row| columns::project_role(row, 0),
            )?;
            Ok(role.flatten())
        })
    }

    async fn project_members(&self, code: &str) -> StoreResult<Vec<ProjectMember>> {
        let code = code.to_string();
        self.read(move |tx| {
            let sql = format!(
                "SELECT {ACCOUNT_COLUMNS}, pr.role FROM project_roles pr JOIN users u ON u.id = pr.user_id \
                 WHERE pr.project_code = ?1 ORDER BY u.email"
            );
            let members = query_all(tx, &sql, [code], |row| columns::project_member(row, 0))?;
            Ok(members.into_iter().flatten().collect())
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
            for (user_id, role) in &set {
                // An unknown user is a missing referenced row: `NotFound`.
                execute(
                    conn,
                    "INSERT INTO project_roles (project_code, user_id, role) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (project_code, user_id) DO UPDATE SET role = excluded.role",
                    params![code, user_id, role.as_str()],
                )
                .map_err(unique("project role"))?;
            }
            for user_id in &remove {
                execute(
                    conn,
                    "DELETE FROM project_roles WHERE project_code = ?1 AND user_id = ?2",
                    [&code, user_id],
                )
                .map_err(internal)?;
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
            let current = query_optional(
                conn,
                "SELECT project_code FROM reviews WHERE id = ?1",
                [&review_id],
                |row| row.optional_text(0),
            )?;
            let Some(current) = current else {
                return Err(StoreError::NotFound);
            };
            if current != expected {
                return Ok((false, None));
            }
            execute(
                conn,
                "UPDATE reviews SET project_code = ?2, change_seq = change_seq + 1, updated_at = ?3 \
                 WHERE id = ?1",
                params![review_id, project, at],
            )
            // An unknown project is a missing referenced row.
            .map_err(unique("document"))?;
            let event = review_event(conn, &review_id, EventKind::Review)?;
            Ok((true, event))
        })
        .await
    }
}

fn active_admins(conn: &Connection) -> StoreResult<i64> {
    query_optional(
        conn,
        "SELECT count(*) FROM users WHERE is_admin = 1 AND status = 'active'",
        [],
        |row| row.integer(0),
    )
    .map(Option::unwrap_or_default)
}
