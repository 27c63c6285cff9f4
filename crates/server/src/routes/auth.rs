//! `POST /api/auth/cli/token`: the last step of the command-line login, where a one-time code and
//! the PKCE verifier behind its challenge become a personal token. Takes no credentials.

use std::net::SocketAddr;

use axum::Json;
use axum::extract::FromRequest;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use docreview_api::{CodeExchange, ExchangedToken, PasswordResetRequest};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::ApiJson;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(exchange))
        .routes(routes!(password_reset))
}

/// Ask for a password reset link by mail. The answer is 202 whatever the email (it does not
/// tell whether an account exists); the mail goes out only to an active member who signs in
/// with a password, when mail is set up. The link works once, for 1 hour. Takes no credentials.
#[utoipa::path(post, path = "/api/auth/password-reset", tag = "account", operation_id = "requestPasswordReset",
    request_body = PasswordResetRequest,
    responses(
        (status = 202, description = "Accepted (whatever the email)"),
        (status = 400, description = "`invalid_request`: not JSON, no `email`, or not an email address", body = docreview_api::ErrorBody),
        (status = 429, description = "`rate_limited`: more than 5 requests an hour for this email (known or not)", body = docreview_api::ErrorBody),
    ))]
async fn password_reset(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<PasswordResetRequest>,
) -> Result<Response, ApiError> {
    state.service.request_password_reset(request)?;
    Ok(StatusCode::ACCEPTED.into_response())
}

/// Exchange the one-time code of the command-line login page, with the PKCE verifier behind
/// its challenge, for a personal token (shown this once). Takes no credentials.
#[utoipa::path(post, path = "/api/auth/cli/token", tag = "account", operation_id = "exchangeCliCode",
    request_body = CodeExchange,
    responses((status = 200, description = "The new token", body = ExchangedToken)))]
async fn exchange(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    let address = client_address(&request);
    let ApiJson(exchange) = ApiJson::<CodeExchange>::from_request(request, &()).await?;
    let token = state.service.exchange_cli_code(exchange, &address).await?;
    Ok(Json(token).into_response())
}

/// The key failed attempts are counted under (`ClientAddress::attempt_key`: IPv6 by /64) of the
/// client's address: the one `limits::per_address` found (behind a trusted proxy, the forwarded
/// one), else the peer's.
pub fn client_address(request: &Request) -> String {
    if let Some(address) = request.extensions().get::<crate::limits::ClientAddress>() {
        return address.attempt_key();
    }
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(
            || "unknown".to_string(),
            |info| crate::limits::ClientAddress(info.0.ip()).attempt_key(),
        )
}
