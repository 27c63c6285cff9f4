//! Who may call what (DESIGN.md §2) and which role a caller holds on a document (§3).
//!
//! The server's extractors only collect credentials into an `Actor`; every decision is made here.

use crate::error::{Error, Result};
use crate::model::{
    AccessMode, Account, GrantRole, Membership, Millis, ProjectRole, ReviewHead, Role, Scope,
    SharedKind, UserStatus,
};
use crate::store::Visibility;

/// How the caller proved who they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    Personal {
        token_id: String,
        scopes: Vec<Scope>,
        expires_at: Millis,
    },
    Shared(SharedKind),
    /// A browser session cookie.
    Session {
        session_id: String,
    },
}

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Actor {
    pub account: Account,
    pub credential: Credential,
}

impl Actor {
    pub fn id(&self) -> &str {
        self.account.id()
    }

    /// The expiry to announce in `x-cr-token-expires-at`, for personal tokens.
    pub fn token_expires_at(&self) -> Option<Millis> {
        match &self.credential {
            Credential::Personal { expires_at, .. } => Some(*expires_at),
            _ => None,
        }
    }

    fn shared_kind(&self) -> Option<SharedKind> {
        match self.credential {
            Credential::Shared(kind) => Some(kind),
            _ => None,
        }
    }
}

/// The operation classes of DESIGN.md §2, each with the schemes and scope it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// List and read documents, dom-context, bundles, search.
    Read,
    /// Start and finish runs, write comments in runs.
    Run,
    /// Cancel a running run: what an agent does as it finishes, and what a person does to stop
    /// an agent's run from the web app (DESIGN.md §2 names no class for it; `docs/web.md` says why).
    StopRun,
    /// Human comments, replies, edits, cancels, re-anchors, resolve and reopen.
    Comment,
    /// Create a document (JSON or HTML upload) or give it a new body.
    Deliver,
    /// Title, tags, archive flag, deletion.
    Manage,
    ReadSharing,
    ChangeSharing,
    /// Transfer ownership, change project roles.
    Grant,
    LinkProject,
    /// Own profile, own tokens, list projects, own notifications (reading).
    Account,
    /// Changing one's own handle, name, notifications and their settings (DESIGN.md §8: a
    /// personal token needs `comments` for §8.1 writes).
    Profile,
    OrgRead,
    OrgWrite,
    /// The review workflow (DESIGN.md §8.4): reviewers, decisions, finalizing, assignment,
    /// reactions. A personal token needs `docs` (§8).
    Workflow,
}

impl Operation {
    /// The class's name, as the API contract shows it (`x-cr-operation`).
    pub fn as_str(self) -> &'static str {
        use Operation as Op;
        match self {
            Op::Read => "read",
            Op::Run => "run",
            Op::StopRun => "stop_run",
            Op::Comment => "comment",
            Op::Deliver => "deliver",
            Op::Manage => "manage",
            Op::ReadSharing => "read_sharing",
            Op::ChangeSharing => "change_sharing",
            Op::Grant => "grant",
            Op::LinkProject => "link_project",
            Op::Account => "account",
            Op::Profile => "profile",
            Op::OrgRead => "org_read",
            Op::OrgWrite => "org_write",
            Op::Workflow => "workflow",
        }
    }

    pub fn accepts_shared(self, kind: SharedKind) -> bool {
        use Operation as Op;
        match kind {
            SharedKind::Agent => matches!(self, Op::Read | Op::Run | Op::StopRun | Op::Comment),
            SharedKind::Import => matches!(self, Op::Read | Op::Deliver),
            SharedKind::Manage => matches!(self, Op::Manage | Op::ReadSharing | Op::ChangeSharing),
        }
    }

    /// A person signed in to the web app may do whatever their role allows, except act as an
    /// agent: runs are for agents' tokens (a person may only stop one, [`Operation::StopRun`]). This departs from DESIGN.md §2's table (which lists
    /// cookies for reading, comments and the account only) so the web app can offer every
    /// screen through the same use cases; `docs/web.md` says why.
    pub fn accepts_session(self) -> bool {
        self != Operation::Run
    }

    /// The scope a personal token needs; `None` means any scope will do.
    pub fn scope(self) -> Option<Scope> {
        use Operation as Op;
        match self {
            Op::Read | Op::ReadSharing | Op::Account | Op::OrgRead => None,
            Op::Run | Op::StopRun | Op::Comment | Op::Profile => Some(Scope::Comments),
            Op::Deliver | Op::Manage | Op::LinkProject | Op::Workflow => Some(Scope::Docs),
            Op::ChangeSharing | Op::Grant => Some(Scope::Access),
            Op::OrgWrite => Some(Scope::Org),
        }
    }
}

/// Checks the credential's scheme and scope against an operation: 403 `forbidden` for a scheme
/// the operation does not accept, 403 `insufficient_scope` for a missing scope.
pub fn permit(actor: &Actor, operation: Operation) -> Result<()> {
    match &actor.credential {
        Credential::Personal { scopes, .. } => match operation.scope() {
            Some(needed) if !scopes.contains(&needed) => {
                Err(Error::InsufficientScope(needed.as_str()))
            }
            _ => Ok(()),
        },
        Credential::Shared(kind) if operation.accepts_shared(*kind) => Ok(()),
        Credential::Session { .. } if operation.accepts_session() => Ok(()),
        _ => Err(Error::forbidden(
            "this kind of credential cannot perform this operation",
        )),
    }
}

/// Checks an extra scope a personal token needs for part of a request (e.g. sharing rows on
/// create). A browser session holds every scope; shared tokens hold none.
pub fn require_scope(actor: &Actor, scope: Scope) -> Result<()> {
    match &actor.credential {
        Credential::Personal { scopes, .. } if !scopes.contains(&scope) => {
            Err(Error::InsufficientScope(scope.as_str()))
        }
        Credential::Personal { .. } | Credential::Session { .. } => Ok(()),
        Credential::Shared(_) => Err(Error::forbidden(
            "this kind of credential cannot change sharing",
        )),
    }
}

/// The caller's role on a document, or `None` when they cannot see it (which must read as 404).
/// `project_role` is the caller's role in the project the document is linked to, if any.
pub fn role_on(
    actor: &Actor,
    head: &ReviewHead,
    project_role: Option<ProjectRole>,
) -> Option<Role> {
    if let Some(kind) = actor.shared_kind() {
        return Some(shared_role(kind));
    }
    account_role(&actor.account, head, project_role)
}

/// The role a member holds on a document, whoever asks (e.g. a new owner must be able to see it).
/// A grant names the account by its email exactly: emails are stored normalized (lower case,
/// `normalize_email`), and the stores' visibility filters compare them as stored.
pub fn account_role(
    account: &Account,
    head: &ReviewHead,
    project_role: Option<ProjectRole>,
) -> Option<Role> {
    let grant = head
        .grants
        .iter()
        .find(|grant| grant.email == account.email)
        .map(|grant| grant.role);
    member_role(
        account,
        &head.review.owner_id,
        head.review.access_mode,
        grant,
        project_role,
    )
}

/// `role_on` for callers that already know the caller's grant and project role (list and search
/// queries compute both in SQL).
pub fn role_with_grant(
    actor: &Actor,
    owner_id: &str,
    mode: AccessMode,
    grant: Option<GrantRole>,
    project_role: Option<ProjectRole>,
) -> Option<Role> {
    if let Some(kind) = actor.shared_kind() {
        return Some(shared_role(kind));
    }
    member_role(&actor.account, owner_id, mode, grant, project_role)
}

fn shared_role(kind: SharedKind) -> Role {
    match kind {
        SharedKind::Agent | SharedKind::Import => Role::Editor,
        SharedKind::Manage => Role::Owner,
    }
}

/// DESIGN.md §3 for one member: admins and the owner own; a project role counts for everyone;
/// sharing and link mode count only for internal members.
fn member_role(
    account: &Account,
    owner_id: &str,
    mode: AccessMode,
    grant: Option<GrantRole>,
    project_role: Option<ProjectRole>,
) -> Option<Role> {
    if account.status != UserStatus::Active {
        return None;
    }
    if account.is_admin || account.id() == owner_id {
        return Some(Role::Owner);
    }
    let by_project = project_role.map(project_document_role);
    if account.membership == Membership::External {
        return by_project;
    }
    let shared = grant.map(GrantRole::role);
    let by_link = (mode == AccessMode::Link).then_some(Role::Viewer);
    shared.max(by_link).max(by_project)
}

/// What the caller may see in lists and searches, as the stores filter it; `None` when they can
/// see no document at all. The same rule as `role_on`, in the shape a query can apply; the
/// conformance suite checks each backend's filter against `role_on`, document by document.
pub fn visibility(actor: &Actor) -> Option<Visibility> {
    if actor.shared_kind().is_some() {
        return Some(Visibility::All {
            user_id: actor.id().to_string(),
        });
    }
    account_visibility(&actor.account)
}

/// `visibility` for a member (`member_role`): nothing unless active; everything for admins;
/// else their own, their projects', and, if internal, shared and link-mode documents.
pub fn account_visibility(account: &Account) -> Option<Visibility> {
    if account.status != UserStatus::Active {
        return None;
    }
    let user_id = account.id().to_string();
    Some(if account.is_admin {
        Visibility::All { user_id }
    } else {
        Visibility::Member {
            user_id,
            email: account.email.clone(),
            internal: account.membership == Membership::Internal,
        }
    })
}

/// Looks up the caller's role, turning "cannot see" into 404.
pub fn visible_role(
    actor: &Actor,
    head: &ReviewHead,
    project_role: Option<ProjectRole>,
) -> Result<Role> {
    role_on(actor, head, project_role).ok_or(Error::NotFound("document"))
}

/// Requires at least `needed` on a document the caller can see.
pub fn require_role(role: Role, needed: Role, what: &str) -> Result<()> {
    if role >= needed {
        Ok(())
    } else {
        Err(Error::forbidden(format!(
            "{what} needs the {needed} role on this document"
        )))
    }
}

/// What can be done to a document beyond reading and commenting, each with the role it needs
/// (DESIGN.md §3). The use cases check these, and screens ask [`may`] which to offer, so the
/// rule is written once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentAction {
    Rename,
    /// Tags and the archive flag.
    ChangeMeta,
    /// Add a version or replace the latest one's body.
    AddVersion,
    Delete,
    ReadSharing,
    ChangeSharing,
    TransferOwnership,
    LinkProject,
    UnlinkProject,
    /// Ask someone to review, or take the request back.
    RequestReview,
    /// Finalize or reopen the review.
    Finalize,
}

impl DocumentAction {
    /// The least role that may do it.
    pub fn needed_role(self) -> Role {
        use DocumentAction as A;
        match self {
            A::Rename
            | A::ChangeMeta
            | A::AddVersion
            | A::ReadSharing
            | A::LinkProject
            | A::UnlinkProject
            | A::RequestReview
            | A::Finalize => Role::Editor,
            A::Delete | A::ChangeSharing | A::TransferOwnership => Role::Owner,
        }
    }

    /// The operation class the credential must be allowed (DESIGN.md §2).
    pub fn operation(self) -> Operation {
        use DocumentAction as A;
        match self {
            A::Rename | A::ChangeMeta | A::Delete => Operation::Manage,
            A::AddVersion => Operation::Deliver,
            A::ReadSharing => Operation::ReadSharing,
            A::ChangeSharing => Operation::ChangeSharing,
            A::TransferOwnership => Operation::Grant,
            A::LinkProject | A::UnlinkProject => Operation::LinkProject,
            A::RequestReview | A::Finalize => Operation::Workflow,
        }
    }

    /// What it is, as a refusal names it ("… needs the editor role on this document").
    fn what(self) -> &'static str {
        use DocumentAction as A;
        match self {
            A::Rename => "changing the title",
            A::ChangeMeta => "changing tags or the archive flag",
            A::AddVersion => "adding a version",
            A::Delete => "deleting the document",
            A::ReadSharing => "reading the sharing settings",
            A::ChangeSharing => "changing the sharing settings",
            A::TransferOwnership => "transferring ownership",
            A::LinkProject => "linking the document to a project",
            A::UnlinkProject => "unlinking the document from a project",
            A::RequestReview => "asking for a review",
            A::Finalize => "finalizing or reopening the review",
        }
    }
}

/// Requires the role `action` needs on a document the caller can see (403 `forbidden`).
pub fn require_action(role: Role, action: DocumentAction) -> Result<()> {
    require_role(role, action.needed_role(), action.what())
}

/// Whether `actor`, holding `role` on a document, may do `action` there: what a screen offers.
pub fn may(actor: &Actor, role: Role, action: DocumentAction) -> bool {
    permit(actor, action.operation()).is_ok() && role >= action.needed_role()
}

/// The document role a project role gives on the project's documents (DESIGN.md §3).
fn project_document_role(role: ProjectRole) -> Role {
    match role {
        ProjectRole::Manager | ProjectRole::Editor => Role::Editor,
        ProjectRole::Viewer => Role::Viewer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Provider, ReviewRecord, User};

    fn account(id: &str, membership: Membership, admin: bool) -> Account {
        Account {
            user: User {
                id: id.into(),
                provider: Provider::Local,
                display_name: id.into(),
                handle: String::new(),
            },
            email: format!("{id}@example.com"),
            membership,
            status: UserStatus::Active,
            is_admin: admin,
            created_at: 0,
        }
    }

    fn personal(account: Account, scopes: &[Scope]) -> Actor {
        Actor {
            account,
            credential: Credential::Personal {
                token_id: "tok_1".into(),
                scopes: scopes.to_vec(),
                expires_at: 0,
            },
        }
    }

    fn head(mode: AccessMode, grants: Vec<crate::model::AccessGrant>) -> ReviewHead {
        ReviewHead {
            review: ReviewRecord {
                id: "rv_1".into(),
                title: "t".into(),
                owner_id: "owner".into(),
                access_mode: mode,
                tags: vec![],
                archived: false,
                comments_revision: 0,
                structure_revision: 1,
                change_seq: 1,
                created_at: 0,
                updated_at: 0,
                latest_version_id: "ver_1".into(),
                latest_source_hash: "sha256:00".into(),
                structure: None,
                project_code: None,
                finalized: None,
            },
            grants,
        }
    }

    #[test]
    fn scopes_and_schemes() {
        let reader = personal(
            account("u", Membership::Internal, false),
            &[Scope::Comments],
        );
        assert!(permit(&reader, Operation::Read).is_ok());
        assert!(permit(&reader, Operation::Comment).is_ok());
        assert!(matches!(
            permit(&reader, Operation::Deliver),
            Err(Error::InsufficientScope("docs"))
        ));
        let agent = Actor {
            account: account("svc_agent", Membership::Internal, false),
            credential: Credential::Shared(SharedKind::Agent),
        };
        assert!(permit(&agent, Operation::Run).is_ok());
        assert!(matches!(
            permit(&agent, Operation::Deliver),
            Err(Error::Forbidden(_))
        ));
        let session = Actor {
            account: account("u", Membership::Internal, false),
            credential: Credential::Session {
                session_id: "ses_1".into(),
            },
        };
        for operation in [
            Operation::Read,
            Operation::Comment,
            Operation::Deliver,
            Operation::Manage,
            Operation::ReadSharing,
            Operation::ChangeSharing,
            Operation::Grant,
            Operation::LinkProject,
            Operation::Account,
            Operation::OrgRead,
            Operation::OrgWrite,
        ] {
            assert!(permit(&session, operation).is_ok(), "{operation:?}");
        }
        assert!(matches!(
            permit(&session, Operation::Run),
            Err(Error::Forbidden(_))
        ));
        assert!(permit(&session, Operation::StopRun).is_ok());
        assert!(permit(&agent, Operation::StopRun).is_ok());
        assert!(require_scope(&session, Scope::Access).is_ok());
        assert!(matches!(
            require_scope(&agent, Scope::Access),
            Err(Error::Forbidden(_))
        ));
    }

    #[test]
    fn document_actions_follow_design_section_three() {
        let session = Actor {
            account: account("u", Membership::Internal, false),
            credential: Credential::Session {
                session_id: "ses_1".into(),
            },
        };
        assert!(may(&session, Role::Editor, DocumentAction::Rename));
        assert!(may(&session, Role::Editor, DocumentAction::ReadSharing));
        assert!(!may(&session, Role::Viewer, DocumentAction::AddVersion));
        assert!(!may(&session, Role::Editor, DocumentAction::Delete));
        assert!(!may(&session, Role::Editor, DocumentAction::ChangeSharing));
        assert!(may(
            &session,
            Role::Owner,
            DocumentAction::TransferOwnership
        ));
        let docs_only = personal(account("u", Membership::Internal, false), &[Scope::Docs]);
        assert!(may(&docs_only, Role::Owner, DocumentAction::Delete));
        assert!(!may(&docs_only, Role::Owner, DocumentAction::ChangeSharing));
        assert!(matches!(
            require_action(Role::Viewer, DocumentAction::Rename),
            Err(Error::Forbidden(message)) if message == "changing the title needs the editor role on this document"
        ));
    }

    #[test]
    fn roles_follow_design_section_three() {
        let internal = personal(account("u", Membership::Internal, false), &[]);
        let external = personal(account("x", Membership::External, false), &[]);
        let admin = personal(account("a", Membership::Internal, true), &[]);
        let owner = personal(account("owner", Membership::Internal, false), &[]);
        assert_eq!(
            role_on(&internal, &head(AccessMode::Link, vec![]), None),
            Some(Role::Viewer)
        );
        assert_eq!(
            role_on(&internal, &head(AccessMode::Restricted, vec![]), None),
            None
        );
        assert_eq!(
            role_on(&external, &head(AccessMode::Link, vec![]), None),
            None
        );
        assert_eq!(
            role_on(&admin, &head(AccessMode::Restricted, vec![]), None),
            Some(Role::Owner)
        );
        assert_eq!(
            role_on(&owner, &head(AccessMode::Restricted, vec![]), None),
            Some(Role::Owner)
        );
        let shared = head(
            AccessMode::Restricted,
            vec![crate::model::AccessGrant {
                email: "u@example.com".into(),
                role: GrantRole::Editor,
            }],
        );
        assert_eq!(role_on(&internal, &shared, None), Some(Role::Editor));
        // Emails are stored normalized; a grant names them exactly, as the stores compare.
        let other_case = head(
            AccessMode::Restricted,
            vec![crate::model::AccessGrant {
                email: "U@EXAMPLE.com".into(),
                role: GrantRole::Editor,
            }],
        );
        assert_eq!(role_on(&internal, &other_case, None), None);
    }
}
