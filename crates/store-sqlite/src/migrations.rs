//! Embedded schema migrations, applied in order at start; each runs in its own transaction.

use docreview_core::store::StoreResult;
use rusqlite::Connection;

use crate::internal;

/// `(version, sql)`, in order. Versions match the PostgreSQL backend's.
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

pub fn apply(conn: &mut Connection) -> StoreResult<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
    )
    .map_err(internal)?;
    for (version, sql) in MIGRATIONS {
        // IMMEDIATE: two processes starting at once must not both apply the same migration.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(internal)?;
        let applied: bool = tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = ?1)",
                [version],
                |row| row.get(0),
            )
            .map_err(internal)?;
        if !applied {
            tx.execute_batch(sql).map_err(internal)?;
            tx.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, unixepoch('subsec') * 1000)",
                [version],
            )
            .map_err(internal)?;
            tracing::info!(version, "applied schema migration");
        }
        tx.commit().map_err(internal)?;
    }
    Ok(())
}
