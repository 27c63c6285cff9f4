//! `WebhookStore` on SQLite: the webhooks table, and their deliveries read from the outbox.

use docreview_core::store::columns;
use docreview_core::store::{
    DeliveryRecord, StoreResult, WebhookRecord, WebhookStore, count_param,
};
use rusqlite::params;

use crate::SqliteStore;
use crate::sql::{execute, internal, query_all};

/// A webhook, for `columns::webhook`.
const WEBHOOK_COLUMNS: &str = "id, url, events, project_code, description, active, secret, \
     previous_secret, previous_expires_at, created_by, created_at";

/// A delivery, for `columns::delivery`.
const DELIVERY_COLUMNS: &str = "id, target, event_id, kind, payload, attempts, status, \
     last_response_status, last_error, created_at, next_attempt_at";

#[async_trait::async_trait]
impl WebhookStore for SqliteStore {
    async fn create_webhook(&self, webhook: WebhookRecord) -> StoreResult<()> {
        self.write(move |conn| {
            execute(
                conn,
                "INSERT INTO webhooks (id, url, events, project_code, description, active, secret, \
                 previous_secret, previous_expires_at, created_by, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    webhook.id,
                    webhook.url,
                    columns::to_json(&webhook.events),
                    webhook.project_code,
                    webhook.description,
                    webhook.active,
                    webhook.secret,
                    webhook.previous_secret,
                    webhook.previous_expires_at,
                    webhook.created_by,
                    webhook.created_at,
                ],
            )
            .map_err(internal)?;
            Ok(())
        })
        .await
    }

    async fn webhook(&self, id: &str) -> StoreResult<Option<WebhookRecord>> {
        let id = id.to_string();
        self.read(move |tx| {
            query_all(
                tx,
                &format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?1"),
                [id],
                |row| columns::webhook(row, 0),
            )
        })
        .await
        .map(|rows| rows.into_iter().next())
    }

    async fn webhooks(&self) -> StoreResult<Vec<WebhookRecord>> {
        self.read(move |tx| {
            query_all(
                tx,
                &format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks ORDER BY created_at, id"),
                [],
                |row| columns::webhook(row, 0),
            )
        })
        .await
    }

    async fn update_webhook(&self, webhook: WebhookRecord) -> StoreResult<bool> {
        self.write(move |conn| {
            let changed = execute(
                conn,
                "UPDATE webhooks SET url = ?2, events = ?3, project_code = ?4, description = ?5, \
                 active = ?6, secret = ?7, previous_secret = ?8, previous_expires_at = ?9 \
                 WHERE id = ?1",
                params![
                    webhook.id,
                    webhook.url,
                    columns::to_json(&webhook.events),
                    webhook.project_code,
                    webhook.description,
                    webhook.active,
                    webhook.secret,
                    webhook.previous_secret,
                    webhook.previous_expires_at,
                ],
            )
            .map_err(internal)?;
            Ok(changed > 0)
        })
        .await
    }

    async fn delete_webhook(&self, id: &str) -> StoreResult<bool> {
        let id = id.to_string();
        self.write(move |conn| {
            let deleted =
                execute(conn, "DELETE FROM webhooks WHERE id = ?1", [&id]).map_err(internal)?;
            execute(
                conn,
                "DELETE FROM outbox WHERE sink = 'webhook' AND target = ?1",
                [&id],
            )
            .map_err(internal)?;
            Ok(deleted > 0)
        })
        .await
    }

    async fn disable_webhook(&self, id: &str) -> StoreResult<bool> {
        let id = id.to_string();
        self.write(move |conn| {
            let changed = execute(conn, "UPDATE webhooks SET active = 0 WHERE id = ?1", [id])
                .map_err(internal)?;
            Ok(changed > 0)
        })
        .await
    }

    async fn webhook_deliveries(
        &self,
        webhook_id: &str,
        after: Option<String>,
        limit: usize,
    ) -> StoreResult<Vec<DeliveryRecord>> {
        let webhook_id = webhook_id.to_string();
        self.read(move |tx| {
            query_all(
                tx,
                &format!(
                    "SELECT {DELIVERY_COLUMNS} FROM outbox WHERE sink = 'webhook' AND target = ?1 \
                     AND (?2 IS NULL OR id < ?2) ORDER BY id DESC LIMIT ?3"
                ),
                params![webhook_id, after, count_param(limit)],
                |row| columns::delivery(row, 0),
            )
        })
        .await
    }

    async fn webhook_delivery(
        &self,
        webhook_id: &str,
        delivery_id: &str,
    ) -> StoreResult<Option<DeliveryRecord>> {
        let webhook_id = webhook_id.to_string();
        let delivery_id = delivery_id.to_string();
        self.read(move |tx| {
            query_all(
                tx,
                &format!(
                    "SELECT {DELIVERY_COLUMNS} FROM outbox \
                     WHERE sink = 'webhook' AND target = ?1 AND id = ?2"
                ),
                params![webhook_id, delivery_id],
                |row| columns::delivery(row, 0),
            )
        })
        .await
        .map(|rows| rows.into_iter().next())
    }
}
