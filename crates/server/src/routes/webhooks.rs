//! Webhooks (DESIGN.md §8.3): org admins register them, see their deliveries, ping, rotate
//! secrets and redeliver. Reads need any scope, writes `org`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use docreview_api::{
    DeliveryBody, DeliveryList, NewWebhook, PageQuery, WebhookBody, WebhookChange, WebhookList,
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
        .routes(allow(Operation::OrgRead, routes!(list)))
        .routes(allow(Operation::OrgWrite, routes!(create)))
        .routes(allow(Operation::OrgRead, routes!(show)))
        .routes(allow(Operation::OrgWrite, routes!(update, delete)))
        .routes(allow(Operation::OrgWrite, routes!(ping)))
        .routes(allow(Operation::OrgWrite, routes!(rotate_secret)))
        .routes(allow(Operation::OrgRead, routes!(deliveries)))
        .routes(allow(Operation::OrgWrite, routes!(redeliver)))
}

/// `{webhookId}` in a path.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct WebhookPath {
    /// The webhook's id.
    webhook_id: String,
}

/// `{webhookId}/deliveries/{deliveryId}` in a path.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct DeliveryPath {
    /// The webhook's id.
    webhook_id: String,
    /// The delivery's id.
    delivery_id: String,
}

/// The organization's webhooks (org admins only).
#[utoipa::path(get, path = "/api/webhooks", tag = "webhooks", operation_id = "listWebhooks",
    responses((status = 200, description = "Every webhook (without secrets)", body = WebhookList)))]
async fn list(State(state): State<AppState>, Caller(actor): Caller) -> Result<Response, ApiError> {
    Ok(Json(state.service.list_webhooks(&actor).await?).into_response())
}

/// Register a webhook; the answer holds its signing secret, shown only here.
#[utoipa::path(post, path = "/api/webhooks", tag = "webhooks", operation_id = "createWebhook",
    request_body = NewWebhook,
    responses(
        (status = 201, description = "Registered, with its `secret`", body = WebhookBody),
        (status = 400, description = "`invalid_request`: a bad url (not https, or resolving to a private address), an unknown event type or project", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiJson(new): ApiJson<NewWebhook>,
) -> Result<Response, ApiError> {
    let webhook = state.service.create_webhook(&actor, new).await?;
    Ok((StatusCode::CREATED, Json(WebhookBody { webhook })).into_response())
}

/// One webhook.
#[utoipa::path(get, path = "/api/webhooks/{webhook_id}", tag = "webhooks",
    operation_id = "getWebhook", params(WebhookPath),
    responses(
        (status = 200, description = "The webhook (without its secret)", body = WebhookBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
    ))]
async fn show(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(WebhookPath { webhook_id }): ApiPath<WebhookPath>,
) -> Result<Response, ApiError> {
    let webhook = state.service.webhook(&actor, &webhook_id).await?;
    Ok(Json(WebhookBody { webhook }).into_response())
}

/// Change a webhook's url, events, project, description, or turn it off and on.
#[utoipa::path(patch, path = "/api/webhooks/{webhook_id}", tag = "webhooks",
    operation_id = "updateWebhook", params(WebhookPath), request_body = WebhookChange,
    responses(
        (status = 200, description = "Changed", body = WebhookBody),
        (status = 400, description = "`invalid_request`", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(WebhookPath { webhook_id }): ApiPath<WebhookPath>,
    ApiJson(change): ApiJson<WebhookChange>,
) -> Result<Response, ApiError> {
    let webhook = state
        .service
        .update_webhook(&actor, &webhook_id, change)
        .await?;
    Ok(Json(WebhookBody { webhook }).into_response())
}

/// Delete a webhook, with its delivery history.
#[utoipa::path(delete, path = "/api/webhooks/{webhook_id}", tag = "webhooks",
    operation_id = "deleteWebhook", params(WebhookPath),
    responses(
        (status = 200, description = "Deleted", body = WebhookBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(WebhookPath { webhook_id }): ApiPath<WebhookPath>,
) -> Result<Response, ApiError> {
    let webhook = state.service.delete_webhook(&actor, &webhook_id).await?;
    Ok(Json(WebhookBody { webhook }).into_response())
}

/// Send a `ping` event to this webhook.
#[utoipa::path(post, path = "/api/webhooks/{webhook_id}/ping", tag = "webhooks",
    operation_id = "pingWebhook", params(WebhookPath),
    responses(
        (status = 202, description = "The ping's delivery, queued", body = DeliveryBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
    ))]
async fn ping(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(WebhookPath { webhook_id }): ApiPath<WebhookPath>,
) -> Result<Response, ApiError> {
    let delivery = state.service.ping_webhook(&actor, &webhook_id).await?;
    Ok((StatusCode::ACCEPTED, Json(DeliveryBody { delivery })).into_response())
}

/// A new signing secret, shown only here; the previous one also signs for 24 hours.
#[utoipa::path(post, path = "/api/webhooks/{webhook_id}/rotate-secret", tag = "webhooks",
    operation_id = "rotateWebhookSecret", params(WebhookPath),
    responses(
        (status = 200, description = "The webhook with its new `secret`", body = WebhookBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
    ))]
async fn rotate_secret(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(WebhookPath { webhook_id }): ApiPath<WebhookPath>,
) -> Result<Response, ApiError> {
    let webhook = state
        .service
        .rotate_webhook_secret(&actor, &webhook_id)
        .await?;
    Ok(Json(WebhookBody { webhook }).into_response())
}

/// The webhook's deliveries, newest first (kept 30 days after they finish).
#[utoipa::path(get, path = "/api/webhooks/{webhook_id}/deliveries", tag = "webhooks",
    operation_id = "listWebhookDeliveries", params(WebhookPath, PageQuery),
    responses(
        (status = 200, description = "A page of deliveries", body = DeliveryList),
        (status = 404, description = "`not_found`", body = ErrorBody),
    ))]
async fn deliveries(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(WebhookPath { webhook_id }): ApiPath<WebhookPath>,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    let list = state
        .service
        .webhook_deliveries(&actor, &webhook_id, query)
        .await?;
    Ok(Json(list).into_response())
}

/// Deliver a delivery's event again: a new delivery, same body, same `webhook-id`.
#[utoipa::path(post, path = "/api/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver",
    tag = "webhooks", operation_id = "redeliverWebhookDelivery", params(DeliveryPath),
    responses(
        (status = 202, description = "The new delivery, queued", body = DeliveryBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
    ))]
async fn redeliver(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(DeliveryPath {
        webhook_id,
        delivery_id,
    }): ApiPath<DeliveryPath>,
) -> Result<Response, ApiError> {
    let delivery = state
        .service
        .redeliver(&actor, &webhook_id, &delivery_id)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(DeliveryBody { delivery })).into_response())
}
