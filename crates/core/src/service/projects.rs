//! Projects (cases of the upstream register): the snapshot import, listing, roles, and linking
//! documents to them (DESIGN.md §4.5).

use docreview_api::requests::{PageQuery, RolesChange};
use docreview_api::views::{ProjectList, ProjectRoleView, ProjectRoles, ProjectView, ReviewView};
use serde::Deserialize;

use super::accounts::{member_view, normalize_email};
use super::{Service, check_length, page};
use crate::access::{self, Actor, Credential, DocumentAction, Operation};
use crate::error::{Error, Result};
use crate::ids::is_valid_project_code;
use crate::model::{Account, Membership, ProjectRecord, ProjectRole, Provider, Role, UserStatus};
use crate::store::{ProjectImport, ProjectQuery, StoreError};
use crate::view::project_status;

/// A snapshot holds at most this many projects.
const MAX_SNAPSHOT_PROJECTS: usize = 100_000;
/// One roles change names at most this many people.
const MAX_ROLE_CHANGES: usize = 500;

/// The file `docreview admin import-projects` reads.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectSnapshot {
    pub projects: Vec<SnapshotProject>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotProject {
    pub code: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub company: Option<String>,
    pub status: SnapshotStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SnapshotStatus {
    Active,
    Inactive,
}

impl Service {
    /// `docreview admin import-projects`: the whole snapshot is checked before anything is
    /// written, and written in one transaction.
    pub async fn import_projects(&self, snapshot: ProjectSnapshot) -> Result<ProjectImport> {
        if snapshot.projects.len() > MAX_SNAPSHOT_PROJECTS {
            return Err(Error::invalid(format!(
                "a snapshot holds at most {MAX_SNAPSHOT_PROJECTS} projects"
            )));
        }
        let mut records: Vec<ProjectRecord> = Vec::with_capacity(snapshot.projects.len());
        for (index, project) in snapshot.projects.into_iter().enumerate() {
            let at = |message: String| {
                Error::invalid(format!("projects[{index}] ({}): {message}", project.code))
            };
            if !is_valid_project_code(&project.code) {
                return Err(at("code must match ^[A-Z0-9][A-Z0-9-]{0,31}$".into()));
            }
            if records.iter().any(|record| record.code == project.code) {
                return Err(at("the code appears more than once".into()));
            }
            for (field, value) in [("name", &project.name), ("company", &project.company)] {
                if let Some(value) = value {
                    check_length(field, value, 0, 300).map_err(|error| at(error.to_string()))?;
                }
            }
            records.push(ProjectRecord {
                code: project.code,
                name: project.name,
                company: project.company,
                active: project.status == SnapshotStatus::Active,
                in_snapshot: true,
            });
        }
        Ok(self.store.import_projects(records).await?)
    }

    /// `GET /api/projects`: every project for internal members, only their own for external ones.
    pub async fn list_projects(&self, actor: &Actor, query: PageQuery) -> Result<ProjectList> {
        access::permit(actor, Operation::Account)?;
        let limit = page::limit(query.limit)?;
        let after = query.cursor.as_deref().map(page::decode).transpose()?;
        let rows = self
            .store
            .list_projects(ProjectQuery {
                user_id: actor.id().to_string(),
                only_mine: actor.account.membership == Membership::External,
                after,
                limit: limit + 1,
            })
            .await?;
        let (rows, next_cursor) =
            page::trim_keyset_page(rows, limit, |(project, _)| project.code.clone());
        Ok(ProjectList {
            projects: rows
                .iter()
                .map(|(project, role)| project_view(project, *role))
                .collect(),
            next_cursor,
        })
    }

    /// `GET /api/projects/{code}/roles`: for anyone who can see the project.
    pub async fn project_roles(&self, actor: &Actor, code: &str) -> Result<ProjectRoles> {
        access::permit(actor, Operation::Account)?;
        let (project, role) = self.visible_project(actor, code).await?;
        self.roles_view(&project, role).await
    }

    /// `PATCH /api/projects/{code}/roles`: by the project's managers and org admins. Everyone
    /// named must be a member already; nothing is written unless the whole change is valid.
    pub async fn change_project_roles(
        &self,
        actor: &Actor,
        code: &str,
        change: RolesChange,
    ) -> Result<ProjectRoles> {
        access::permit(actor, Operation::Grant)?;
        if change.add.is_empty() && change.remove.is_empty() {
            return Err(Error::invalid("send `add`, `remove` or both"));
        }
        if change.add.len() + change.remove.len() > MAX_ROLE_CHANGES {
            return Err(Error::invalid(format!(
                "change at most {MAX_ROLE_CHANGES} roles at once"
            )));
        }
        let (project, role) = self.visible_project(actor, code).await?;
        if !actor.account.is_admin && role != Some(ProjectRole::Manager) {
            return Err(Error::forbidden(
                "changing project roles needs the manager role in the project",
            ));
        }
        let mut named: Vec<String> = Vec::new();
        let mut set = Vec::with_capacity(change.add.len());
        for grant in change.add {
            let account = self.member_by_email(&grant.email, &mut named).await?;
            set.push((account.user.id, grant.role));
        }
        let mut remove = Vec::with_capacity(change.remove.len());
        for revocation in change.remove {
            let account = self.member_by_email(&revocation.email, &mut named).await?;
            remove.push(account.user.id);
        }
        self.store
            .change_project_roles(&project.code, set, remove)
            .await?;
        let role = self.store.project_role(&project.code, actor.id()).await?;
        self.roles_view(&project, role).await
    }

    /// `PUT /api/projects/{code}/docs/{reviewId}`: an editor of the document who is an editor or
    /// manager in the project links it; project members then reach it by their project role.
    pub async fn link_project(
        &self,
        actor: &Actor,
        code: &str,
        review_id: &str,
    ) -> Result<ReviewView> {
        access::permit(actor, Operation::LinkProject)?;
        let project = self.project_by_code(code).await?;
        let (head, role) = self.visible(actor, review_id).await?;
        access::require_action(role, DocumentAction::LinkProject)?;
        match head.review.project_code.as_deref() {
            Some(linked) if linked == project.code => {
                return self.review_after_change(actor, review_id, role).await;
            }
            Some(_) => return Err(Error::ProjectConflict),
            None => {}
        }
        self.require_deliverable(actor, &project).await?;
        let linked = self
            .store
            .link_project(review_id, None, Some(&project.code), self.clock.now())
            .await;
        match linked {
            Ok(true) => self.review_after_change(actor, review_id, role).await,
            Ok(false) => Err(Error::ProjectConflict),
            Err(StoreError::NotFound) => Err(Error::NotFound("document")),
            Err(other) => Err(other.into()),
        }
    }

    /// `DELETE /api/projects/{code}/docs/{reviewId}`: by an editor of the document who is an
    /// editor or manager in the project, or by its owner.
    pub async fn unlink_project(
        &self,
        actor: &Actor,
        code: &str,
        review_id: &str,
    ) -> Result<ReviewView> {
        access::permit(actor, Operation::LinkProject)?;
        let project = self.project_by_code(code).await?;
        let (head, role) = self.visible(actor, review_id).await?;
        access::require_action(role, DocumentAction::UnlinkProject)?;
        if head.review.project_code.as_deref() != Some(project.code.as_str()) {
            return Err(Error::NotFound("link to this project"));
        }
        if role < Role::Owner {
            let project_role = self.store.project_role(&project.code, actor.id()).await?;
            if project_role < Some(ProjectRole::Editor) {
                return Err(Error::ProjectRoleRequired);
            }
        }
        let unlinked = self
            .store
            .link_project(review_id, Some(&project.code), None, self.clock.now())
            .await;
        match unlinked {
            Ok(true) => self.review_after_change(actor, review_id, role).await,
            Ok(false) => Err(Error::NotFound("link to this project")),
            Err(StoreError::NotFound) => Err(Error::NotFound("document")),
            Err(other) => Err(other.into()),
        }
    }

    /// A project documents may be created in or linked to by `actor`: in the snapshot (409),
    /// active (403), and the caller an editor or manager there (403 `project_role_required`).
    /// Org admins and the shared import token deliver into any project.
    pub(super) async fn require_deliverable(
        &self,
        actor: &Actor,
        project: &ProjectRecord,
    ) -> Result<()> {
        if !project.in_snapshot {
            return Err(Error::ProjectNotInSnapshot);
        }
        if !project.active {
            return Err(Error::forbidden(format!(
                "project {} is inactive",
                project.code
            )));
        }
        if actor.account.is_admin || matches!(actor.credential, Credential::Shared(_)) {
            return Ok(());
        }
        let role = self.store.project_role(&project.code, actor.id()).await?;
        if role >= Some(ProjectRole::Editor) {
            Ok(())
        } else {
            Err(Error::ProjectRoleRequired)
        }
    }

    /// A project by code: 400 for a malformed code, 404 `project_not_found` for an unknown one.
    pub(super) async fn project_by_code(&self, code: &str) -> Result<ProjectRecord> {
        if !is_valid_project_code(code) {
            return Err(Error::invalid(
                "project must match ^[A-Z0-9][A-Z0-9-]{0,31}$",
            ));
        }
        self.store
            .project(code)
            .await?
            .ok_or(Error::ProjectNotFound)
    }

    /// A project the caller can see (org admins and internal members see all; external members
    /// only those where they hold a role: others are `project_not_found`), with their role.
    async fn visible_project(
        &self,
        actor: &Actor,
        code: &str,
    ) -> Result<(ProjectRecord, Option<ProjectRole>)> {
        let project = self.project_by_code(code).await?;
        let role = self.store.project_role(&project.code, actor.id()).await?;
        if actor.account.membership == Membership::External && role.is_none() {
            return Err(Error::ProjectNotFound);
        }
        Ok((project, role))
    }

    async fn roles_view(
        &self,
        project: &ProjectRecord,
        role: Option<ProjectRole>,
    ) -> Result<ProjectRoles> {
        let members = self.store.project_members(&project.code).await?;
        Ok(ProjectRoles {
            project: project_view(project, role),
            roles: members
                .iter()
                .map(|member| ProjectRoleView {
                    user: member_view(&member.account),
                    email: member.account.email.clone(),
                    role: member.role,
                })
                .collect(),
        })
    }

    /// A member named in a roles change: exists, not removed, not a service principal, and
    /// named once in the whole change.
    async fn member_by_email(&self, email: &str, named: &mut Vec<String>) -> Result<Account> {
        let email = normalize_email(email)?;
        if named.contains(&email) {
            return Err(Error::invalid(format!(
                "{email} is named more than once in this change"
            )));
        }
        let account = self
            .store
            .account_by_email(&email)
            .await?
            .filter(|account| {
                account.status != UserStatus::Removed && account.user.provider != Provider::Service
            })
            .ok_or_else(|| {
                Error::invalid(format!(
                    "{email} is not a member of the organization; register them first"
                ))
            })?;
        named.push(email);
        Ok(account)
    }
}

fn project_view(project: &ProjectRecord, role: Option<ProjectRole>) -> ProjectView {
    ProjectView {
        code: project.code.clone(),
        name: project.name.clone(),
        company: project.company.clone(),
        status: project_status(project).to_string(),
        in_snapshot: project.in_snapshot,
        role,
    }
}
