//! `/org`: the organization's members, for its admins: register an external member (with a role
//! on a project, so they can work at once), suspend or reactivate a member, remove an external
//! member, name or remove admins. Each form calls the core use case the API calls; the core
//! decides who may (e.g. the last admin stays).

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use docreview_api::{
    InvitationView, MemberChange, MemberRef, MemberStatus, MemberView, NewInvitation, NewMember,
    PageQuery, ProjectView, RoleGrant, RolesChange,
};
use docreview_core::Error;
use docreview_core::model::Membership;
use docreview_core::model::ProjectRole;
use serde::Deserialize;

use crate::AppState;
use crate::web::error::WebError;
use crate::web::extract::{CsrfForm, SignedIn};
use crate::web::layout::{Layout, Nav};
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::organization, get(members))
        .route(paths::route::organization_members, post(register))
        .route(paths::route::organization_member_change, post(change))
        .route(paths::route::organization_invitations, post(invite))
        .route(
            paths::route::organization_invitation_revoke,
            post(revoke_invitation),
        )
}

const EVERYONE: PageQuery = PageQuery {
    limit: Some(200),
    cursor: None,
};

#[derive(Template, WebTemplate)]
#[template(path = "org.html")]
struct OrgPage {
    layout: Layout,
    /// `None` for someone the core does not let read the organization.
    members: Option<Vec<MemberView>>,
    projects: Vec<ProjectView>,
    /// What the last form did, or why it was refused.
    notice: Option<Notice>,
    /// The pending invitations (admins only).
    invitations: Vec<InvitationView>,
    /// The invitation just made, with its link: the only time the link is shown.
    invited: Option<Invited>,
}

struct Invited {
    email: String,
    link: String,
}

struct Notice {
    refused: bool,
    text: String,
}

async fn render(
    state: &AppState,
    signed_in: &SignedIn,
    notice: Option<Notice>,
    invited: Option<Invited>,
) -> Result<Response, WebError> {
    let actor = &signed_in.actor;
    let invitations = match state.service.list_invitations(actor).await {
        Ok(list) => list.invitations,
        Err(Error::Forbidden(_)) => Vec::new(),
        Err(error) => return Err(WebError::core(error, false)),
    };
    let members = match state.service.list_members(actor, EVERYONE).await {
        Ok(list) => Some(list.members),
        Err(Error::Forbidden(_)) => None,
        Err(error) => return Err(WebError::core(error, false)),
    };
    let projects = state
        .service
        .list_projects(actor, EVERYONE)
        .await
        .map(|list| list.projects)
        .unwrap_or_default();
    let status = match &notice {
        Some(Notice { refused: true, .. }) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    let page = OrgPage {
        layout: Layout::for_user("Organization", Nav::Organization, signed_in),
        members,
        projects,
        notice,
        invitations,
        invited,
    };
    Ok((status, page).into_response())
}

async fn members(State(state): State<AppState>, signed_in: SignedIn) -> Result<Response, WebError> {
    render(&state, &signed_in, None, None).await
}

/// The answer to a form: the page again, saying what happened or what the core refused
/// (refusals a person can act on; anything else is the error page).
async fn after(
    state: &AppState,
    signed_in: &SignedIn,
    outcome: Result<String, Error>,
) -> Result<Response, WebError> {
    let notice = match outcome {
        Ok(done) => Notice {
            refused: false,
            text: done,
        },
        Err(
            Error::InvalidRequest(message)
            | Error::InvalidTransition(message)
            | Error::AlreadyExists(message)
            | Error::Forbidden(message),
        ) => Notice {
            refused: true,
            text: message,
        },
        Err(
            error @ (Error::NotFound(_) | Error::ProjectNotFound | Error::ProjectNotInSnapshot),
        ) => Notice {
            refused: true,
            text: error.to_string(),
        },
        Err(error) => return Err(WebError::core(error, false)),
    };
    render(state, signed_in, Some(notice), None).await
}

#[derive(Deserialize)]
struct InvitationForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    name: String,
    /// Ticked: an external member.
    external: Option<String>,
    /// A project code, or empty for none.
    #[serde(default)]
    project: String,
    #[serde(default)]
    role: String,
}

async fn invite(
    State(state): State<AppState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<InvitationForm>,
) -> Result<Response, WebError> {
    let project = form.project.trim();
    let role = if project.is_empty() {
        Ok(None)
    } else {
        ProjectRole::parse(&form.role).map(Some).ok_or_else(|| {
            Error::invalid(format!(
                "unknown role `{}`: viewer, editor or manager",
                form.role
            ))
        })
    };
    let outcome = match role {
        Ok(role) => {
            state
                .service
                .invite(
                    &signed_in.actor,
                    NewInvitation {
                        email: form.email.clone(),
                        display_name: Some(form.name.trim().to_string())
                            .filter(|name| !name.is_empty()),
                        membership: if form.external.is_some() {
                            Membership::External
                        } else {
                            Membership::Internal
                        },
                        project_code: role.map(|_| project.to_string()),
                        project_role: role,
                    },
                )
                .await
        }
        Err(error) => Err(error),
    };
    match outcome {
        Ok(body) => {
            let invitation = body.invitation;
            let link = invitation
                .accept_url
                .as_ref()
                .map(|url| url.expose().to_string())
                .unwrap_or_default();
            let mailed = if state.service.mail_enabled() {
                " The link is mailed to them too."
            } else {
                " Mail is not set up here: send them the link yourself."
            };
            let notice = Notice {
                refused: false,
                text: format!("{} is invited.{mailed}", invitation.email),
            };
            let invited = Invited {
                email: invitation.email,
                link,
            };
            render(&state, &signed_in, Some(notice), Some(invited)).await
        }
        Err(error) => after(&state, &signed_in, Err(error)).await,
    }
}

#[derive(Deserialize)]
struct RevokeForm {
    #[serde(default)]
    id: String,
}

async fn revoke_invitation(
    State(state): State<AppState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<RevokeForm>,
) -> Result<Response, WebError> {
    let outcome = state
        .service
        .revoke_invitation(&signed_in.actor, &form.id)
        .await
        .map(|()| "The invitation is revoked: its link no longer works.".to_string());
    after(&state, &signed_in, outcome).await
}

#[derive(Deserialize)]
struct Registration {
    #[serde(default)]
    email: String,
    #[serde(default)]
    name: String,
    /// A project code, or empty for none.
    #[serde(default)]
    project: String,
    #[serde(default)]
    role: String,
}

async fn register(
    State(state): State<AppState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<Registration>,
) -> Result<Response, WebError> {
    let service = &state.service;
    let actor = &signed_in.actor;
    let role = match form.role.as_str() {
        "" => None,
        word => Some(ProjectRole::parse(word).ok_or_else(|| {
            Error::invalid(format!("unknown role `{word}`: viewer, editor or manager"))
        })),
    }
    .transpose();
    let outcome = async {
        let role = role?;
        let member = service
            .register_member(
                actor,
                NewMember {
                    email: form.email.clone(),
                    display_name: form.name.clone(),
                },
            )
            .await?;
        let project = form.project.trim();
        if project.is_empty() {
            return Ok(format!(
                "{} is registered. Give them a role on a project so they can see its documents.",
                member.email
            ));
        }
        let role = role.unwrap_or(ProjectRole::Viewer);
        service
            .change_project_roles(
                actor,
                project,
                RolesChange {
                    add: vec![RoleGrant {
                        email: member.email.clone(),
                        role,
                    }],
                    remove: Vec::new(),
                },
            )
            .await?;
        Ok(format!(
            "{} is registered, {} on {project}.",
            member.email,
            role.as_str()
        ))
    }
    .await;
    after(&state, &signed_in, outcome).await
}

/// One member's row action: `suspend`, `activate`, `remove`, `make-admin`, `remove-admin`.
#[derive(Deserialize)]
struct Change {
    email: String,
    action: String,
}

async fn change(
    State(state): State<AppState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<Change>,
) -> Result<Response, WebError> {
    let service = &state.service;
    let actor = &signed_in.actor;
    let member = || MemberRef {
        email: form.email.clone(),
    };
    let status = |status| MemberChange {
        email: form.email.clone(),
        status: Some(status),
        display_name: None,
    };
    let outcome = match form.action.as_str() {
        "suspend" => service
            .update_member(actor, status(MemberStatus::Suspended))
            .await
            .map(|m| {
                format!(
                    "{} is suspended: their sessions and tokens stop working.",
                    m.email
                )
            }),
        "activate" => service
            .update_member(actor, status(MemberStatus::Active))
            .await
            .map(|m| format!("{} is active again.", m.email)),
        "remove" => service
            .remove_member(actor, member())
            .await
            .map(|m| format!("{} is removed.", m.email)),
        "make-admin" => service
            .add_admin(actor, member())
            .await
            .map(|m| format!("{} is an admin now.", m.email)),
        "remove-admin" => service
            .remove_admin(actor, member())
            .await
            .map(|m| format!("{} is no longer an admin.", m.email)),
        other => Err(Error::invalid(format!("unknown action `{other}`"))),
    };
    after(&state, &signed_in, outcome).await
}
