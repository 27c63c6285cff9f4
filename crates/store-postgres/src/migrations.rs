//! Embedded schema migrations, applied in order at connect, each in its own transaction.
//!
//! Every migration transaction first takes one transaction-scoped advisory lock, so when several
//! nodes start at once they apply each migration one after another: the first applies it, the
//! others find it recorded in `schema_migrations` and skip it.

use docreview_core::store::StoreResult;
use sqlx::{Connection, Executor, PgConnection};

use crate::error::map_error;

/// `(version, sql)`, in order. Versions match the SQLite backend's.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../migrations/0001_initial.sql")),
    (
        2,
        include_str!("../migrations/0002_sessions_projects_search.sql"),
    ),
    (3, include_str!("../migrations/0003_rate_counts.sql")),
    (
        5,
        include_str!("../migrations/0005_outbox_notifications.sql"),
    ),
    (6, include_str!("../migrations/0006_webhooks.sql")),
    (7, include_str!("../migrations/0007_workflow.sql")),
    (8, include_str!("../migrations/0008_suggestions.sql")),
    (
        13,
        include_str!("../migrations/0013_invitations_passwords.sql"),
    ),
    (15, include_str!("../migrations/0015_thread_revisions.sql")),
];

/// The advisory lock key serializing migrations: "docrevie" in ASCII, unlikely to meet another
/// application's key in a shared database.
const LOCK_KEY: i64 = 0x646f_6372_6576_6965;

pub async fn apply(conn: &mut PgConnection) -> StoreResult<()> {
    for (version, sql) in MIGRATIONS {
        let mut tx = conn.begin().await.map_err(map_error)?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(LOCK_KEY)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        // Created under the lock, so two nodes never race to create it. Checked first rather
        // than `IF NOT EXISTS`, which would log a notice at every start.
        let has_table: bool =
            sqlx::query_scalar("SELECT to_regclass('schema_migrations') IS NOT NULL")
                .fetch_one(&mut *tx)
                .await
                .map_err(map_error)?;
        if !has_table {
            tx.execute(
                "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)",
            )
            .await
            .map_err(map_error)?;
        }
        let applied: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)",
        )
        .bind(version)
        .fetch_one(&mut *tx)
        .await
        .map_err(map_error)?;
        if !applied {
            // A plain string runs as a simple query: the whole file, several statements, at once.
            tx.execute(*sql).await.map_err(map_error)?;
            sqlx::query(
                "INSERT INTO schema_migrations (version, applied_at) \
                 VALUES ($1, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)",
            )
            .bind(version)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
            tracing::info!(version, "applied schema migration");
        }
        tx.commit().await.map_err(map_error)?;
    }
    Ok(())
}
