//! A person's notifications (DESIGN.md §8.1): the list, marking read, mail settings, and the
//! live unread count as Server-Sent Events.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use docreview_api::{
    NotificationList, NotificationQuery, NotificationSettings, NotificationsRead, UnreadCount,
};
use docreview_core::Service;
use docreview_core::access::{Actor, Operation};
use futures_util::{Stream, StreamExt, stream};
use tokio::sync::broadcast::error::RecvError;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiQuery, Caller};
use crate::listener::StreamAdmission;
use crate::routes::allow;
use crate::routes::events::stream_slot;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(allow(Operation::Account, routes!(list)))
        .routes(allow(Operation::Profile, routes!(mark_read)))
        .routes(allow(Operation::Account, routes!(settings)))
        .routes(allow(Operation::Profile, routes!(change_settings)))
        .routes(allow(Operation::Account, routes!(my_events)))
}

/// The caller's notifications, newest first. Only those on documents the caller can read now
/// are listed and counted.
#[utoipa::path(get, path = "/api/notifications", tag = "notifications",
    operation_id = "listNotifications", params(NotificationQuery),
    responses((status = 200, description = "A page of notifications, and the unread count",
        body = NotificationList)))]
async fn list(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiQuery(query): ApiQuery<NotificationQuery>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.notifications(&actor, query).await?).into_response())
}

/// Mark notifications read: `{ "ids": [...] }` or `{ "all": true }`.
#[utoipa::path(post, path = "/api/notifications/read", tag = "notifications",
    operation_id = "markNotificationsRead", request_body = NotificationsRead,
    responses((status = 200, description = "The unread count after", body = UnreadCount)))]
async fn mark_read(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiJson(input): ApiJson<NotificationsRead>,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.mark_notifications_read(&actor, input).await?).into_response())
}

/// How the caller's notifications reach them by mail.
#[utoipa::path(get, path = "/api/me/notification-settings", tag = "notifications",
    operation_id = "notificationSettings",
    responses((status = 200, description = "The settings", body = NotificationSettings)))]
async fn settings(
    State(state): State<AppState>,
    Caller(actor): Caller,
) -> Result<Response, ApiError> {
    Ok(Json(state.service.notification_settings(&actor).await?).into_response())
}

/// Change how the caller's notifications reach them by mail.
#[utoipa::path(patch, path = "/api/me/notification-settings", tag = "notifications",
    operation_id = "changeNotificationSettings", request_body = NotificationSettings,
    responses((status = 200, description = "The settings, changed", body = NotificationSettings)))]
async fn change_settings(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiJson(input): ApiJson<NotificationSettings>,
) -> Result<Response, ApiError> {
    Ok(Json(
        state
            .service
            .set_notification_settings(&actor, input)
            .await?,
    )
    .into_response())
}

/// One event of the caller's stream, as Server-Sent Events frame it.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // Describes what `my_events` writes.
struct NotificationMessage {
    /// Always `notification`.
    event: String,
    /// An `UnreadCount`, as JSON.
    #[schema(content_media_type = "application/json")]
    data: String,
}

/// The caller's unread count, live, as Server-Sent Events: a `notification` event with the
/// current count first, then one whenever the caller's notifications change (added, withdrawn,
/// read), through any node.
#[utoipa::path(get, path = "/api/me/events", tag = "notifications", operation_id = "myEvents",
    responses((status = 200, description = "Server-Sent Events named `notification`, each with \
        an `UnreadCount` as its JSON data", body = NotificationMessage,
        content_type = "text/event-stream")))]
async fn my_events(
    State(state): State<AppState>,
    Caller(actor): Caller,
    admission: Option<Extension<StreamAdmission>>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    // Subscribe before counting, so no change can fall between the two.
    let receiver = state.service.watch_people();
    let current = state.service.my_unread_count(&actor).await?;
    let slot = stream_slot(admission)?;
    let shutdown = state.shutdown.clone();
    let service = Arc::clone(&state.service);
    let held = (crate::telemetry::Subscriber::new(), slot);
    let changes = stream::unfold(
        (receiver, held, service, actor),
        |(mut receiver, held, service, actor)| async move {
            loop {
                match receiver.recv().await {
                    Ok(person) if person == actor.id() => {}
                    // Fell behind: the count is read again anyway.
                    Err(RecvError::Lagged(_)) => {}
                    Ok(_) => continue,
                    Err(RecvError::Closed) => return None,
                }
                if let Some(count) = count_for(&service, &actor).await {
                    return Some((count, (receiver, held, service, actor)));
                }
            }
        },
    );
    let stream = stream::once(async move { current })
        .chain(changes)
        .map(|count| Ok(to_sse(&count)))
        .take_until(async move { shutdown.cancelled().await });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// The unread count now; `None` (no event) when it cannot be read at this moment.
async fn count_for(service: &Service, actor: &Actor) -> Option<UnreadCount> {
    match service.my_unread_count(actor).await {
        Ok(count) => Some(count),
        Err(error) => {
            tracing::warn!(
                error = error.detail(),
                "could not count unread notifications"
            );
            None
        }
    }
}

fn to_sse(count: &UnreadCount) -> Event {
    let data = serde_json::to_string(count).unwrap_or_else(|_| "{}".to_string());
    Event::default().event("notification").data(data)
}
