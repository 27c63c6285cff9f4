//! The PostgreSQL backend: a connection pool shared by any number of server nodes, migrations
//! embedded and applied at connect.
//!
//! Every write method is one transaction, and every rule that must hold across nodes is decided
//! by the database inside it: the comments revision is a compare-and-swap
//! (`UPDATE … WHERE comments_revision = $n`), and a new version locks its document's row first.
//! Reads that return several record kinds run in one `REPEATABLE READ` snapshot. Nothing a node
//! keeps in memory needs sharing, so nodes can be added or removed freely.
//!
//! `connect` waits for the database (exponential backoff, bounded by `PgOptions::retry_for`) so a
//! server started alongside PostgreSQL, or during a failover, comes up cleanly.
//!
//! The `Store` port is implemented one domain a module (`accounts`, `reviews`, `comments`,
//! `organization`, `search`), with the same SQL as the SQLite backend statement for statement
//! where the dialects allow; the conformance suite (`docreview-store-conformance`) holds both to
//! the same behaviour. Who may see a document is written once, in `visibility`.

mod accounts;
mod columns;
mod comments;
mod error;
mod events;
mod invitations;
mod migrations;
mod organization;
mod outbox;
mod reviews;
mod search;
mod sql;
mod visibility;
mod webhooks;
mod workflow;

pub use events::{EVENTS_CHANNEL, PEOPLE_CHANNEL};

use std::str::FromStr;
use std::time::Duration;

use docreview_core::events::{EVENT_BUFFER, ReviewEvent};
use docreview_core::store::{Store, StoreError, StoreResult};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, Executor, PgConnection, PgPool};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::error::map_error;

/// Longest pause between two connection attempts: long enough not to hammer a recovering
/// server, short enough that startup follows it closely.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(5);
pub(crate) const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// Pool and timeout settings of a [`PgStore`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// Most connections this node holds open at once.
    pub max_connections: u32,
    /// Longest a single statement may run (`SET statement_timeout`); zero disables the limit.
    /// A statement cut off answers `StoreError::Unavailable`.
    pub statement_timeout: Duration,
    /// Longest one attempt to open a connection, or to get one from a busy pool, may take.
    pub connect_timeout: Duration,
    /// How long `connect` keeps retrying an unreachable database before giving up.
    pub retry_for: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            max_connections: 16,
            statement_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            retry_for: Duration::from_secs(60),
        }
    }
}

/// `Store` on PostgreSQL. Cheap to share behind an `Arc`; the pool inside is shared by all clones.
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    /// Changes heard on `EVENTS_CHANNEL`, from this node's writes and every other node's.
    events: broadcast::Sender<ReviewEvent>,
    /// People whose notifications changed, heard on `PEOPLE_CHANNEL`.
    people: broadcast::Sender<String>,
    /// The database URL without its password, for logs and `Debug`.
    target: String,
    options: PgOptions,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the pool's own `Debug`: its connect options would print the password.
        f.debug_struct("PgStore")
            .field("target", &self.target)
            .field("options", &self.options)
            .field("connections", &self.pool.size())
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://user:password@host:port/database?…`), waiting up to
    /// `options.retry_for` for an unreachable server, then applies pending migrations.
    ///
    /// Errors: `Unavailable` when the server could not be reached in time; `Internal` for a
    /// malformed URL or an error retrying cannot cure (bad password, missing database).
    pub async fn connect(url: &str, options: PgOptions) -> StoreResult<PgStore> {
        let target = redact_url(url);
        // sqlx would read any scheme as PostgreSQL; a SQLite URL here is a configuration mistake.
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(StoreError::Internal(
                format!("not a PostgreSQL URL: {target}").into(),
            ));
        }
        let connect_options = PgConnectOptions::from_str(url)
            .map_err(|error| {
                // sqlx's parse errors never quote the URL, but say which URL we mean.
                StoreError::Internal(format!("invalid PostgreSQL URL {target}: {error}").into())
            })?
            .application_name("docreview");

        let deadline = Instant::now() + options.retry_for;
        let mut backoff = FIRST_BACKOFF;
        let mut attempt: u32 = 1;
        loop {
            match Self::prepare(&connect_options, options.connect_timeout).await {
                Ok(()) => break,
                Err(error) if !matches!(error, StoreError::Unavailable(_)) => {
                    tracing::error!(%target, %error, "cannot use the PostgreSQL database");
                    return Err(error);
                }
                Err(error) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        tracing::error!(%target, attempt, %error, "PostgreSQL stayed unreachable; giving up");
                        return Err(error);
                    }
                    let pause = backoff.min(left);
                    tracing::warn!(
                        %target,
                        attempt,
                        retry_in_ms = u64::try_from(pause.as_millis()).unwrap_or(u64::MAX),
                        %error,
                        "PostgreSQL is unreachable; retrying"
                    );
                    tokio::time::sleep(pause).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    attempt += 1;
                }
            }
        }

        let timeout_ms = options.statement_timeout.as_millis();
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections.max(1))
            .acquire_timeout(options.connect_timeout)
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    // Per connection, overriding the server's or role's default.
                    conn.execute(format!("SET statement_timeout = {timeout_ms}").as_str())
                        .await?;
                    Ok(())
                })
            })
            .connect_lazy_with(connect_options.clone());
        tracing::info!(%target, max_connections = options.max_connections, "connected to PostgreSQL");
        // The listener holds its connection for good, so it gets its own rather than one of the
        // pool's `max_connections`.
        let listener_pool = PgPoolOptions::new()
            .max_connections(1)
            .connect_lazy_with(connect_options);
        let events = broadcast::channel(EVENT_BUFFER).0;
        let people = broadcast::channel(EVENT_BUFFER).0;
        tokio::spawn(crate::events::forward_notifications(
            listener_pool,
            events.clone(),
            people.clone(),
        ));
        Ok(PgStore {
            pool,
            events,
            people,
            target,
            options,
        })
    }

    /// One connection attempt: opens a connection, applies pending migrations on it, closes it.
    /// Migrations use their own connection, without the statement timeout, because a schema
    /// change on a large table (or waiting for another node's) may rightly take longer.
    async fn prepare(options: &PgConnectOptions, connect_timeout: Duration) -> StoreResult<()> {
        let mut conn = tokio::time::timeout(connect_timeout, PgConnection::connect_with(options))
            .await
            .map_err(|_| {
                StoreError::Unavailable(
                    format!("no connection within {} ms", connect_timeout.as_millis()).into(),
                )
            })?
            .map_err(map_error)?;
        let applied = migrations::apply(&mut conn).await;
        // Closing politely is a courtesy; a failure here changes nothing for the caller.
        let _ = conn.close().await;
        applied
    }

    /// Answers whether the database takes queries now (for readiness probes).
    pub async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map_err(map_error)?;
        Ok(())
    }

    /// The connection pool, for callers needing what the `Store` trait does not offer.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

#[async_trait::async_trait]
impl Store for PgStore {
    fn subscribe(&self) -> broadcast::Receiver<ReviewEvent> {
        self.events.subscribe()
    }

    fn subscribe_people(&self) -> broadcast::Receiver<String> {
        self.people.subscribe()
    }

    async fn ping(&self) -> StoreResult<()> {
        PgStore::ping(self).await
    }

    async fn share_rate_counts(
        &self,
        window: docreview_core::model::Millis,
        counts: Vec<(String, i64)>,
    ) -> StoreResult<Option<Vec<(String, i64)>>> {
        let mut tx = self.begin().await?;
        // Past minutes are no longer read; a scan of a table of (keys × 2) rows.
        sqlx::query("DELETE FROM rate_counts WHERE window_start < $1")
            .bind(window)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        let (keys, counts): (Vec<String>, Vec<i64>) = counts.into_iter().unzip();
        let totals: Vec<(String, i64)> = sqlx::query_as(
            "INSERT INTO rate_counts (key, window_start, count) \
             SELECT key, $1, count FROM unnest($2::text[], $3::bigint[]) AS added(key, count) \
             ON CONFLICT (key, window_start) DO UPDATE SET count = rate_counts.count + excluded.count \
             RETURNING key, count",
        )
        .bind(window)
        .bind(&keys)
        .bind(&counts)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_error)?;
        tx.commit().await.map_err(map_error)?;
        Ok(Some(totals))
    }

    fn pool_usage(&self) -> docreview_core::store::PoolUsage {
        docreview_core::store::PoolUsage {
            open: usize::try_from(self.pool.size()).unwrap_or(usize::MAX),
            idle: self.pool.num_idle(),
            max: usize::try_from(self.options.max_connections).unwrap_or(usize::MAX),
        }
    }
}

/// `url` with any password replaced by `***`, both in the user part and in a `password=` parameter.
pub fn redact_url(url: &str) -> String {
    let (main, query) = match url.split_once('?') {
        Some((main, query)) => (main, Some(query)),
        None => (url, None),
    };
    let mut out = match main.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = match rest.find('/') {
                Some(at) => rest.split_at(at),
                None => (rest, ""),
            };
            let authority = match authority.rsplit_once('@') {
                Some((userinfo, host)) => match userinfo.split_once(':') {
                    Some((user, _password)) => format!("{user}:***@{host}"),
                    None => format!("{userinfo}@{host}"),
                },
                None => authority.to_string(),
            };
            format!("{scheme}://{authority}{path}")
        }
        None => main.to_string(),
    };
    if let Some(query) = query {
        let params: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                _ => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords() {
        assert_eq!(
            redact_url("postgres://app:s3cr:et@db.local:5432/docs?sslmode=require"),
            "postgres://app:***@db.local:5432/docs?sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://app@db/docs?password=hunter2&application_name=x"),
            "postgres://app@db/docs?password=***&application_name=x"
        );
        assert_eq!(
            redact_url("postgresql://localhost/docs"),
            "postgresql://localhost/docs"
        );
        assert_eq!(redact_url("postgres://u:p@host"), "postgres://u:***@host");
    }

    // A runtime, because even a lazy pool starts its maintenance task.
    #[tokio::test]
    async fn debug_never_shows_the_password() {
        let store = PgStore {
            pool: PgPoolOptions::new().connect_lazy_with(
                PgConnectOptions::from_str("postgres://app:hunter2@127.0.0.1:1/docs")
                    .expect("valid url"),
            ),
            events: broadcast::channel(1).0,
            people: broadcast::channel(1).0,
            target: redact_url("postgres://app:hunter2@127.0.0.1:1/docs"),
            options: PgOptions::default(),
        };
        let shown = format!("{store:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("127.0.0.1:1/docs"), "{shown}");
    }
}
