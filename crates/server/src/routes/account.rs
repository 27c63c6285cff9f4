//! The caller's own account: profile and personal tokens.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use axum::{Json, Router};
use docreview_core::service::{PageQuery, TokenView};
use serde::Serialize;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiPath, ApiQuery, Authorized, op};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/me", get(me))
        .route("/api/me/tokens", get(tokens))
        .route("/api/me/tokens/{token_id}", delete(revoke))
}

async fn me(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Account>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.me(&actor).await?).into_response())
}

async fn tokens(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Account>,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.my_tokens(&actor, query).await?).into_response())
}

/// `{ "token": Token }`, with `revokedAt` set.
#[derive(Serialize)]
struct Revoked {
    token: TokenView,
}

async fn revoke(
    State(state): State<AppState>,
    Authorized(actor, ..): Authorized<op::Account>,
    ApiPath(token_id): ApiPath<String>,
) -> Result<Response, ApiError> {
    let token = state.service.revoke_my_token(&actor, &token_id).await?;
    Ok(Json(Revoked { token }).into_response())
}
