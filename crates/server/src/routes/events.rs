//! Live document changes as Server-Sent Events, so open screens update without polling.

use std::convert::Infallible;

use axum::Extension;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use docreview_api::events::ReviewEvent;
use docreview_core::access::Operation;
use futures_util::{Stream, StreamExt, stream};
use tokio::sync::broadcast::error::RecvError;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiPath, Caller};
use crate::listener::{StreamAdmission, StreamSlot};
use crate::routes::{ReviewPath, allow};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// One event of the stream, as Server-Sent Events frame it.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // Describes what `to_sse` writes.
struct EventMessage {
    /// What changed: `review`, `comments` or `version`.
    event: docreview_api::events::EventKind,
    /// A `ReviewEvent`, as JSON.
    #[schema(content_media_type = "application/json")]
    data: String,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(allow(Operation::Read, routes!(events)))
}

/// Live changes of a document, as Server-Sent Events.
///
/// `review` first (the current revisions), then `comments`, `version` and `review` events as
/// changes are committed through any node. A listener that falls far behind skips events; the
/// next one carries the current revisions.
#[utoipa::path(get, path = "/api/reviews/{review_id}/events", tag = "reviews",
    operation_id = "reviewEvents", params(ReviewPath),
    responses((status = 200, description = "Server-Sent Events named `review`, `comments` or \
        `version`, each with a `ReviewEvent` as its JSON data", body = EventMessage,
        content_type = "text/event-stream")))]
async fn events(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiPath(ReviewPath { review_id }): ApiPath<ReviewPath>,
    admission: Option<Extension<StreamAdmission>>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let (current, receiver) = state.service.watch(&actor, &review_id).await?;
    let slot = stream_slot(admission)?;
    let shutdown = state.shutdown.clone();
    // Counted on /metrics while the stream lives (it is dropped when the client goes), and
    // under the stream caps by its slot.
    let held = (crate::telemetry::Subscriber::new(), slot);
    let changes = stream::unfold((receiver, held), move |(mut receiver, held)| {
        let review_id = review_id.clone();
        async move {
            loop {
                match receiver.recv().await {
                    Ok(event) if event.review_id == review_id => {
                        return Some((event, (receiver, held)));
                    }
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return None,
                }
            }
        }
    });
    let stream = stream::once(async move { current })
        .chain(changes)
        .map(|event| Ok(to_sse(&event)))
        .take_until(async move { shutdown.cancelled().await });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// A place under the listener's stream caps (none when the router is served without the
/// listener, as in tests of the router alone); 429 when they are full.
pub fn stream_slot(
    admission: Option<Extension<StreamAdmission>>,
) -> Result<Option<StreamSlot>, ApiError> {
    match admission {
        Some(Extension(admission)) => admission.admit().map(Some).ok_or(ApiError::TooManyStreams),
        None => Ok(None),
    }
}

fn to_sse(event: &ReviewEvent) -> Event {
    let data = serde_json::to_string(event).unwrap_or_else(|_| "{}".to_string());
    Event::default().event(event.kind.as_str()).data(data)
}
