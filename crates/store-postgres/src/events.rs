//! Change events between nodes: every write that changes a document (or someone's
//! notifications) queues a `NOTIFY` in its transaction, and every node listens on the channels
//! and forwards what it hears to its own listeners.

use docreview_core::events::{EventKind, ReviewEvent};
use docreview_core::store::StoreResult;
use sqlx::postgres::PgListener;
use sqlx::{PgPool, Postgres, Transaction};
use tokio::sync::broadcast;

use crate::error::map_error;
use crate::{FIRST_BACKOFF, MAX_BACKOFF};

/// The `LISTEN`/`NOTIFY` channel carrying document change events between nodes.
pub const EVENTS_CHANNEL: &str = "docreview_events";

/// The channel carrying the ids of people whose notifications changed.
pub const PEOPLE_CHANNEL: &str = "docreview_people";

/// Queues a notice for each person (once each): their notifications changed. Heard on every
/// node when, and only if, this transaction commits.
pub(crate) async fn tell_people(
    tx: &mut Transaction<'_, Postgres>,
    mut people: Vec<String>,
) -> StoreResult<()> {
    if people.is_empty() {
        return Ok(());
    }
    people.sort();
    people.dedup();
    sqlx::query("SELECT pg_notify($1, person) FROM unnest($2::text[]) AS person")
        .bind(PEOPLE_CHANNEL)
        .bind(&people)
        .execute(&mut **tx)
        .await
        .map_err(map_error)?;
    Ok(())
}

/// Queues a change event for the document's current revisions. `NOTIFY` is transactional:
/// listeners on every node hear it when, and only if, this transaction commits.
pub(crate) async fn notify(
    tx: &mut Transaction<'_, Postgres>,
    review_id: &str,
    kind: EventKind,
) -> StoreResult<()> {
    sqlx::query(
        "SELECT pg_notify($3, json_build_object('kind', $2::text, 'reviewId', id, \
         'commentsRevision', comments_revision, 'structureRevision', structure_revision, \
         'latestVersionId', latest_version_id, 'changeSeq', change_seq)::text) \
         FROM reviews WHERE id = $1",
    )
    .bind(review_id)
    .bind(kind.as_str())
    .bind(EVENTS_CHANNEL)
    .execute(&mut **tx)
    .await
    .map_err(map_error)?;
    Ok(())
}

/// Listens on `EVENTS_CHANNEL` and `PEOPLE_CHANNEL` for as long as the process runs, forwarding
/// what it hears to this node's listeners; reconnects with backoff when the connection drops
/// (events sent while it is down are missed, and the next event carries the current revisions
/// anyway; an unread count is read whole whenever it is shown).
pub(crate) async fn forward_notifications(
    pool: PgPool,
    events: broadcast::Sender<ReviewEvent>,
    people: broadcast::Sender<String>,
) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        match listen(&pool).await {
            Ok(mut listener) => {
                backoff = FIRST_BACKOFF;
                let error = loop {
                    match listener.recv().await {
                        Ok(notification) if notification.channel() == PEOPLE_CHANNEL => {
                            // Nobody listening on this node is not an error.
                            drop(people.send(notification.payload().to_string()));
                        }
                        Ok(notification) => {
                            match serde_json::from_str::<ReviewEvent>(notification.payload()) {
                                // Nobody listening on this node is not an error.
                                Ok(event) => drop(events.send(event)),
                                Err(error) => {
                                    tracing::warn!(%error, "ignoring a malformed change event");
                                }
                            }
                        }
                        Err(error) => break error,
                    }
                };
                tracing::warn!(%error, "change-event listener disconnected; reconnecting");
            }
            Err(error) => {
                tracing::warn!(%error, retry_in_ms = backoff.as_millis(), "change-event listener cannot connect");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

async fn listen(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener
        .listen_all([EVENTS_CHANNEL, PEOPLE_CHANNEL])
        .await?;
    Ok(listener)
}
