//! The caller's own account: profile and personal tokens.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use docreview_api::{
    ErrorBody, MeView, PageQuery, PasswordChange, ProfileChange, Revoked, TokenList,
};
use docreview_core::access::Operation;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, ApiQuery, Caller};
use crate::limits::ClientAddress;
use crate::routes::allow;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::Account, routes!(me)))
        .routes(allow(Operation::Profile, routes!(update_me)))
        .routes(allow(Operation::Account, routes!(tokens)))
        .routes(allow(Operation::Account, routes!(revoke)))
        .routes(allow(Operation::Account, routes!(change_password)))
}

/// Change one's own password from a signed-in browser, proving the current one. Every session
/// of the person ends; the answer's `Set-Cookie` signs this browser in again.
#[utoipa::path(put, path = "/api/me/password", tag = "account", operation_id = "changePassword",
    request_body = PasswordChange,
    responses(
        (status = 204, description = "Changed; this browser has a new session cookie"),
        (status = 400, description = "`invalid_request`: the new password breaks the rule (at least 10 characters)", body = ErrorBody),
        (status = 403, description = "`forbidden`: the current password is wrong, or the caller is not a browser session", body = ErrorBody),
        (status = 429, description = "`rate_limited`: too many wrong current passwords", body = ErrorBody),
    ))]
async fn change_password(
    State(state): State<AppState>,
    Caller(actor): Caller,
    address: Option<Extension<ClientAddress>>,
    ApiJson(change): ApiJson<PasswordChange>,
) -> Result<Response, ApiError> {
    let signed_in = state
        .service
        .change_my_password(
            &actor,
            change.current_password.expose(),
            change.new_password.expose(),
            &address.map_or_else(|| "unknown".to_string(), |a| a.0.attempt_key()),
        )
        .await?;
    let max_age = (signed_in.expires_at - state.service.now()) / 1000;
    let mut response = StatusCode::NO_CONTENT.into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        state
            .web
            .session_cookie(signed_in.cookie_value.expose(), max_age),
    );
    Ok(response)
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
