//! The caller's own account: profile and personal tokens.

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use docreview_api::{ErrorBody, MeView, PageQuery, ProfileChange, Revoked, TokenList};
use docreview_core::access::Operation;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, ApiQuery, Caller};
use crate::routes::allow;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::Account, routes!(me)))
        .routes(allow(Operation::Profile, routes!(update_me)))
        .routes(allow(Operation::Account, routes!(tokens)))
        .routes(allow(Operation::Account, routes!(revoke)))
}

/// The caller's profile, and the expiry of the token used.
#[utoipa::path(get, path = "/api/me", tag = "account", operation_id = "me",
    responses((status = 200, description = "The caller", body = MeView)))]
async fn me(State(state): State<AppState>, Caller(actor): Caller) -> Result<Response, ApiError> {
    Ok(Json(state.service.me(&actor).await?).into_response())
}

/// Change the caller's handle or display name (at least one). A handle is stored in lower
/// case; one another person holds is 409 `already_exists`.
#[utoipa::path(patch, path = "/api/me", tag = "account", operation_id = "updateMe",
    request_body = ProfileChange,
    responses(
        (status = 200, description = "The caller, changed", body = MeView),
        (status = 409, description = "`already_exists`: another person holds the handle", body = ErrorBody),
    ))]
async fn update_me(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiJson(change): ApiJson<ProfileChange>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.update_me(&actor, change).await?).into_response())
}

/// The caller's personal tokens (never their values).
#[utoipa::path(get, path = "/api/me/tokens", tag = "account", operation_id = "myTokens",
    params(PageQuery),
    responses((status = 200, description = "A page of tokens", body = TokenList)))]
async fn tokens(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.my_tokens(&actor, query).await?).into_response())
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct TokenPath {
    /// The token's id (not its value).
    token_id: String,
}

/// Revoke one of the caller's personal tokens.
#[utoipa::path(delete, path = "/api/me/tokens/{token_id}", tag = "account", operation_id = "revokeMyToken",
    params(TokenPath),
    responses((status = 200, description = "Revoked", body = Revoked)))]
async fn revoke(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(TokenPath { token_id }): ApiPath<TokenPath>,
) -> Result<Response, ApiError> {
    let token = state.service.revoke_my_token(&actor, &token_id).await?;
    Ok(Json(Revoked { token }).into_response())
}
