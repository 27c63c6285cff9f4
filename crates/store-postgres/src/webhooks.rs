//! `WebhookStore` on PostgreSQL: the webhooks table, and their deliveries read from the outbox.

use docreview_core::store::columns;
use docreview_core::store::{
    DeliveryRecord, StoreResult, WebhookRecord, WebhookStore, count_param,
};

use crate::PgStore;
use crate::error::map_error;
use crate::sql::{decode_all, decode_optional};

/// A webhook, for `columns::webhook`.
const WEBHOOK_COLUMNS: &str = "id, url, events, project_code, description, active, secret, \
     previous_secret, previous_expires_at, created_by, created_at";

/// A delivery, for `columns::delivery`.
const DELIVERY_COLUMNS: &str = "id, target, event_id, kind, payload, attempts, status, \
     last_response_status, last_error, created_at, next_attempt_at";

#[async_trait::async_trait]
impl WebhookStore for PgStore {
    async fn create_webhook(&self, webhook: WebhookRecord) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO webhooks (id, url, events, project_code, description, active, secret, \
             previous_secret, previous_expires_at, created_by, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(&webhook.id)
        .bind(&webhook.url)
        .bind(columns::to_json(&webhook.events))
        .bind(&webhook.project_code)
        .bind(&webhook.description)
        .bind(webhook.active)
        .bind(&webhook.secret)
        .bind(&webhook.previous_secret)
        .bind(webhook.previous_expires_at)
        .bind(&webhook.created_by)
        .bind(webhook.created_at)
        .execute(&self.pool)
        .await
        .map_err(map_error)?;
        Ok(())
    }

    async fn webhook(&self, id: &str) -> StoreResult<Option<WebhookRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        decode_optional(row, |row| columns::webhook(row, 0))
    }

    async fn webhooks(&self) -> StoreResult<Vec<WebhookRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {WEBHOOK_COLUMNS} FROM webhooks ORDER BY created_at, id"
        ))
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| columns::webhook(row, 0))
    }

    async fn update_webhook(&self, webhook: WebhookRecord) -> StoreResult<bool> {
        let changed = sqlx::query(
            "UPDATE webhooks SET url = $2, events = $3, project_code = $4, description = $5, \
             active = $6, secret = $7, previous_secret = $8, previous_expires_at = $9 \
             WHERE id = $1",
        )
        .bind(&webhook.id)
        .bind(&webhook.url)
        .bind(columns::to_json(&webhook.events))
        .bind(&webhook.project_code)
        .bind(&webhook.description)
        .bind(webhook.active)
        .bind(&webhook.secret)
        .bind(&webhook.previous_secret)
        .bind(webhook.previous_expires_at)
        .execute(&self.pool)
        .await
        .map_err(map_error)?
        .rows_affected();
        Ok(changed > 0)
    }

    async fn delete_webhook(&self, id: &str) -> StoreResult<bool> {
        let mut tx = self.begin().await?;
        let deleted = sqlx::query("DELETE FROM webhooks WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?
            .rows_affected();
        sqlx::query("DELETE FROM outbox WHERE sink = 'webhook' AND target = $1")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        tx.commit().await.map_err(map_error)?;
        Ok(deleted > 0)
    }

    async fn disable_webhook(&self, id: &str) -> StoreResult<bool> {
        let changed = sqlx::query("UPDATE webhooks SET active = FALSE WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(map_error)?
            .rows_affected();
        Ok(changed > 0)
    }

    async fn webhook_deliveries(
        &self,
        webhook_id: &str,
        after: Option<String>,
        limit: usize,
    ) -> StoreResult<Vec<DeliveryRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM outbox WHERE sink = 'webhook' AND target = $1 \
             AND ($2::text IS NULL OR id < $2::text) ORDER BY id DESC LIMIT $3"
        ))
        .bind(webhook_id)
        .bind(after)
        .bind(count_param(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| columns::delivery(row, 0))
    }

    async fn webhook_delivery(
        &self,
        webhook_id: &str,
        delivery_id: &str,
    ) -> StoreResult<Option<DeliveryRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM outbox \
             WHERE sink = 'webhook' AND target = $1 AND id = $2"
        ))
        .bind(webhook_id)
        .bind(delivery_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        decode_optional(row, |row| columns::delivery(row, 0))
    }
}
