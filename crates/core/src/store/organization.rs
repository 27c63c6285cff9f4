//! The organization's members, and projects with their roles and linked documents.

use crate::model::{Account, Millis, ProjectMember, ProjectRecord, ProjectRole};

use super::StoreResult;

/// Organization members, ordered by email.
#[derive(Debug, Clone)]
pub struct MemberQuery {
    /// Only org administrators.
    pub admins_only: bool,
    /// Continue after this email.
    pub after: Option<String>,
    pub limit: usize,
}

/// What `import_projects` changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProjectImport {
    /// Codes not seen before.
    pub added: usize,
    /// Codes already known (their name, company and status are overwritten).
    pub updated: usize,
    /// Codes in the store but not in this snapshot: now `in_snapshot = false`.
    pub dropped: usize,
}

#[derive(Debug, Clone)]
pub struct ProjectQuery {
    /// The caller, whose role each row carries.
    pub user_id: String,
    /// Only projects where the caller holds a role (external members see no others).
    pub only_mine: bool,
    /// Continue after this code (ascending order).
    pub after: Option<String>,
    pub limit: usize,
}

#[async_trait::async_trait]
pub trait OrganizationStore: Send + Sync {
    /// Members (never service principals, never removed accounts).
    async fn list_accounts(&self, query: MemberQuery) -> StoreResult<Vec<Account>>;
    /// Overwrites the changeable fields of an account (display name, membership, status, admin
    /// flag), found by id; `NotFound` when there is none. `LastAdmin` (nothing written) when
    /// the organization had an active administrator and would have none after it: checked
    /// atomically with the write, so two admins demoting or suspending each other at once
    /// cannot both succeed.
    async fn update_account(&self, account: Account) -> StoreResult<()>;
    /// Marks the account removed and, in the same transaction, revokes its tokens, deletes its
    /// sessions and login codes, drops its admin flag and its project roles.
    async fn remove_account(&self, user_id: &str, at: Millis) -> StoreResult<()>;

    async fn project(&self, code: &str) -> StoreResult<Option<ProjectRecord>>;
    /// Loads a project snapshot in one transaction: every listed project is inserted or
    /// overwritten with `in_snapshot = true`; every other known project gets `in_snapshot = false`
    /// (its links and roles stay).
    async fn import_projects(&self, projects: Vec<ProjectRecord>) -> StoreResult<ProjectImport>;
    async fn list_projects(
        &self,
        query: ProjectQuery,
    ) -> StoreResult<Vec<(ProjectRecord, Option<ProjectRole>)>>;
    async fn project_role(&self, code: &str, user_id: &str) -> StoreResult<Option<ProjectRole>>;
    /// Everyone holding a role in the project, ordered by email.
    async fn project_members(&self, code: &str) -> StoreResult<Vec<ProjectMember>>;
    /// Sets (inserts or changes) and removes roles by user id, in one transaction.
    async fn change_project_roles(
        &self,
        code: &str,
        set: Vec<(String, ProjectRole)>,
        remove: Vec<String>,
    ) -> StoreResult<()>;
    /// Links the document to `project` (or unlinks it, `None`) if it is still linked to
    /// `expected`; `false` (nothing written) when it is linked otherwise. Raises `change_seq`, sets
    /// `updated_at` and announces a `review` event; `NotFound` when the document is gone.
    async fn link_project(
        &self,
        review_id: &str,
        expected: Option<&str>,
        project: Option<&str>,
        at: Millis,
    ) -> StoreResult<bool>;
}
