//! The organization: members and administrators (org admins only).

use axum::Json;
use axum::extract::{FromRequest, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use docreview_api::{
    AdminBody, AdminList, InvitationBody, InvitationList, MemberBody, MemberChange, MemberList,
    MemberRef, NewInvitation, NewMember, PageQuery,
};
use docreview_core::access::Operation;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Caller};
use crate::routes::allow;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::OrgRead, routes!(members)))
        .routes(allow(
            Operation::OrgWrite,
            routes!(register, update, remove),
        ))
        .routes(allow(Operation::OrgRead, routes!(admins)))
        .routes(allow(Operation::OrgWrite, routes!(add_admin, remove_admin)))
        .routes(allow(Operation::OrgRead, routes!(invitations)))
        .routes(allow(Operation::OrgWrite, routes!(invite)))
        .routes(allow(Operation::OrgWrite, routes!(revoke_invitation)))
}

/// Invite someone to join the organization (admins only). The answer's `acceptUrl` is shown
/// this once (only its hash is stored); it is also mailed when mail is set up.
#[utoipa::path(post, path = "/api/org/invitations", tag = "org", operation_id = "invite",
    request_body = NewInvitation,
    responses(
        (status = 201, description = "Invited; valid 7 days, single use", body = InvitationBody),
        (status = 400, description = "`invalid_request`: a bad email or name, or `projectCode` without `projectRole`", body = ErrorBody),
        (status = 403, description = "`forbidden` (not an org admin) or `insufficient_scope` (a token without `org`)", body = ErrorBody),
        (status = 404, description = "`project_not_found`", body = ErrorBody),
        (status = 409, description = "`already_exists`: the email has an account; or `project_not_in_snapshot`", body = ErrorBody),
    ))]
async fn invite(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiJson(new): ApiJson<NewInvitation>,
) -> Result<Response, ApiError> {
    let body = state.service.invite(&actor, new).await?;
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// The pending invitations (neither accepted, revoked nor expired), newest first (admins only).
#[utoipa::path(get, path = "/api/org/invitations", tag = "org", operation_id = "listInvitations",
    responses((status = 200, description = "The pending invitations, without their links", body = InvitationList)))]
async fn invitations(
    State(state): State<AppState>,
    Caller(actor): Caller,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.list_invitations(&actor).await?).into_response())
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct InvitationPath {
    /// The invitation's id (`inv_…`).
    id: String,
}

/// Revoke a pending invitation: its link stops working at once (admins only).
#[utoipa::path(delete, path = "/api/org/invitations/{id}", tag = "org", operation_id = "revokeInvitation",
    params(InvitationPath),
    responses(
        (status = 204, description = "Revoked"),
        (status = 404, description = "`not_found`: no pending invitation has this id", body = ErrorBody),
    ))]
async fn revoke_invitation(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(InvitationPath { id }): ApiPath<InvitationPath>,
) -> Result<Response, ApiError> {
    state.service.revoke_invitation(&actor, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The organization's members (admins only).
#[utoipa::path(get, path = "/api/org/members", tag = "org", operation_id = "listMembers",
    params(PageQuery), responses((status = 200, description = "A page of members", body = MemberList)))]
async fn members(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.list_members(&actor, query).await?).into_response())
}

/// Register an external member, with a role in a project.
#[utoipa::path(post, path = "/api/org/members", tag = "org", operation_id = "registerMember",
    request_body = NewMember,
    responses(
        (status = 201, description = "Registered", body = MemberBody),
        (status = 409, description = "`already_exists` or `project_not_in_snapshot`", body = ErrorBody),
    ))]
async fn register(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiJson(new): ApiJson<NewMember>,
) -> Result<Response, ApiError> {
    let member = state.service.register_member(&actor, new).await?;
    Ok((StatusCode::CREATED, Json(MemberBody { member })).into_response())
}

/// Suspend or reactivate a member, or change an external member's name.
#[utoipa::path(patch, path = "/api/org/members", tag = "org", operation_id = "updateMember",
    request_body = MemberChange,
    responses(
        (status = 200, description = "Changed", body = MemberBody),
        (status = 409, description = "`invalid_transition` (e.g. the last active admin)", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiJson(change): ApiJson<MemberChange>,
) -> Result<Response, ApiError> {
    let member = state.service.update_member(&actor, change).await?;
    Ok(Json(MemberBody { member }).into_response())
}

/// Remove an external member.
#[utoipa::path(delete, path = "/api/org/members", tag = "org", operation_id = "removeMember",
    params(EmailQuery), request_body(content = Option<MemberRef>, description = "Instead of `?email=`"),
    responses(
        (status = 200, description = "Removed", body = MemberBody),
        (status = 409, description = "`invalid_transition`", body = ErrorBody),
    ))]
async fn remove(
    State(state): State<AppState>,
    Caller(actor): Caller,
    request: Request,
) -> Result<Response, ApiError> {
    let member = member_ref(request).await?;
    let member = state.service.remove_member(&actor, member).await?;
    Ok(Json(MemberBody { member }).into_response())
}

/// The organization's administrators.
#[utoipa::path(get, path = "/api/org/admins", tag = "org", operation_id = "listAdmins",
    params(PageQuery), responses((status = 200, description = "A page of admins", body = AdminList)))]
async fn admins(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.list_admins(&actor, query).await?).into_response())
}

/// Make a member an administrator.
#[utoipa::path(put, path = "/api/org/admins", tag = "org", operation_id = "addAdmin",
    params(EmailQuery), request_body(content = Option<MemberRef>, description = "Instead of `?email=`"),
    responses(
        (status = 200, description = "Now an admin", body = AdminBody),
        (status = 409, description = "`invalid_transition`", body = ErrorBody),
    ))]
async fn add_admin(
    State(state): State<AppState>,
    Caller(actor): Caller,
    request: Request,
) -> Result<Response, ApiError> {
    let member = member_ref(request).await?;
    let admin = state.service.add_admin(&actor, member).await?;
    Ok(Json(AdminBody { admin }).into_response())
}

/// Take the administrator role from a member (never from the last active one).
#[utoipa::path(delete, path = "/api/org/admins", tag = "org", operation_id = "removeAdmin",
    params(EmailQuery), request_body(content = Option<MemberRef>, description = "Instead of `?email=`"),
    responses(
        (status = 200, description = "No longer an admin", body = AdminBody),
        (status = 409, description = "`invalid_transition`: the last active admin", body = ErrorBody),
    ))]
async fn remove_admin(
    State(state): State<AppState>,
    Caller(actor): Caller,
    request: Request,
) -> Result<Response, ApiError> {
    let member = member_ref(request).await?;
    let admin = state.service.remove_admin(&actor, member).await?;
    Ok(Json(AdminBody { admin }).into_response())
}

/// The member a request names, in the query (or, instead, a JSON body `{ "email" }`).
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct EmailQuery {
    /// The member's email.
    email: Option<String>,
}

/// The member a request names: `?email=` or a JSON body `{ "email" }` (DESIGN.md §4.6).
async fn member_ref(request: Request) -> Result<MemberRef, ApiError> {
    let query: EmailQuery =
        serde_urlencoded::from_str(request.uri().query().unwrap_or_default())
            .map_err(|error| ApiError::invalid(format!("invalid query parameters: {error}")))?;
    // A body, when sent, is read and checked even if the query names the member too.
    let body = if request
        .headers()
        .contains_key(axum::http::header::CONTENT_TYPE)
    {
        let ApiJson(member) = ApiJson::<Option<MemberRef>>::from_request(request, &()).await?;
        member
    } else {
        None
    };
    match (query.email, body) {
        (Some(email), None) => Ok(MemberRef { email }),
        (None, Some(member)) => Ok(member),
        (Some(email), Some(member)) if email == member.email => Ok(member),
        (Some(_), Some(_)) => Err(ApiError::invalid(
            "the query and the body name different members; name the member once",
        )),
        (None, None) => Err(ApiError::invalid(
            "name the member with ?email= or a JSON body { \"email\" }",
        )),
    }
}
