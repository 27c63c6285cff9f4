//! The organization: members and administrators (org admins only).

use axum::extract::{FromRequest, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use docreview_core::service::{MemberChange, MemberRef, MemberView, NewMember, PageQuery};
use serde::{Deserialize, Serialize};

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiQuery, Authorized, op};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/api/org/members",
            get(members).post(register).patch(update).delete(remove),
        )
        .route(
            "/api/org/admins",
            get(admins).put(add_admin).delete(remove_admin),
        )
}

/// `{ "member": Member }`.
#[derive(Serialize)]
struct MemberBody {
    member: MemberView,
}

/// `{ "admin": Member }`.
#[derive(Serialize)]
struct AdminBody {
    admin: MemberView,
}

async fn members(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::OrgRead>,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.list_members(&actor, query).await?).into_response())
}

async fn register(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::OrgWrite>,
    ApiJson(new): ApiJson<NewMember>,
) -> Result<Response, ApiError> {
    let member = state.service.register_member(&actor, new).await?;
    Ok((StatusCode::CREATED, Json(MemberBody { member })).into_response())
}

async fn update(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::OrgWrite>,
    ApiJson(change): ApiJson<MemberChange>,
) -> Result<Response, ApiError> {
    let member = state.service.update_member(&actor, change).await?;
    Ok(Json(MemberBody { member }).into_response())
}

async fn remove(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::OrgWrite>,
    request: Request,
) -> Result<Response, ApiError> {
    let member = member_ref(request).await?;
    let member = state.service.remove_member(&actor, member).await?;
    Ok(Json(MemberBody { member }).into_response())
}

async fn admins(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::OrgRead>,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.list_admins(&actor, query).await?).into_response())
}

async fn add_admin(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::OrgWrite>,
    request: Request,
) -> Result<Response, ApiError> {
    let member = member_ref(request).await?;
    let admin = state.service.add_admin(&actor, member).await?;
    Ok(Json(AdminBody { admin }).into_response())
}

async fn remove_admin(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::OrgWrite>,
    request: Request,
) -> Result<Response, ApiError> {
    let member = member_ref(request).await?;
    let admin = state.service.remove_admin(&actor, member).await?;
    Ok(Json(AdminBody { admin }).into_response())
}

#[derive(Deserialize)]
struct EmailQuery {
    email: Option<String>,
}

/// The member a request names: `?email=` or a JSON body `{ "email" }` (DESIGN.md §4.6).
async fn member_ref(request: Request) -> Result<MemberRef, ApiError> {
    let query: EmailQuery =
        serde_urlencoded::from_str(request.uri().query().unwrap_or_default())
            .map_err(|error| ApiError::invalid(format!("invalid query parameters: {error}")))?;
    if let Some(email) = query.email {
        return Ok(MemberRef { email });
    }
    if !request
        .headers()
        .contains_key(axum::http::header::CONTENT_TYPE)
    {
        return Err(ApiError::invalid(
            "name the member with ?email= or a JSON body { \"email\" }",
        ));
    }
    let ApiJson(member) = ApiJson::<MemberRef>::from_request(request, &()).await?;
    Ok(member)
}
