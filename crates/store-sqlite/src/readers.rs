//! Reads: a pool of read-only connections, each read inside one read transaction (a consistent
//! snapshot), beside the writer thanks to WAL.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use docreview_core::store::{StoreError, StoreResult};
use rusqlite::{Connection, OpenFlags};
use tokio::sync::Semaphore;

use crate::SqliteStore;
use crate::sql::{internal, unavailable};

/// Reads running at once on the blocking thread pool.
const READERS: usize = 8;
const BUSY_TIMEOUT_MS: u64 = 10_000;

impl SqliteStore {
    /// Runs `work` on a pooled read connection on the blocking thread pool, inside one read
    /// transaction (a consistent snapshot). For reads that scan many rows.
    pub(crate) async fn read<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let pool = Arc::clone(&self.readers);
        let _permit = pool
            .permits
            .acquire()
            .await
            .map_err(|_| unavailable("reader pool closed"))?;
        let worker = Arc::clone(&pool);
        tokio::task::spawn_blocking(move || worker.with_snapshot(work))
            .await
            .map_err(|e| StoreError::Internal(Box::new(e)))?
    }

    /// Runs a point lookup by key on the calling thread. Such a read takes microseconds against a
    /// WAL database (it never waits for the writer), less than handing it to another thread,
    /// which mattered on the hot path of every request (token check, document head).
    pub(crate) fn lookup<T>(
        &self,
        work: impl FnOnce(&Connection) -> StoreResult<T>,
    ) -> StoreResult<T> {
        self.readers.with_snapshot(work)
    }
}

pub(crate) struct ReaderPool {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    permits: Semaphore,
}

impl ReaderPool {
    pub(crate) fn new(path: &Path) -> Self {
        ReaderPool {
            path: path.to_path_buf(),
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(READERS),
        }
    }

    /// The read connections: those pooled reads hold now, and those waiting idle. (Point
    /// lookups on the calling thread borrow one too, for microseconds, outside the count.)
    pub(crate) fn usage(&self) -> docreview_core::store::PoolUsage {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len();
        let busy = READERS.saturating_sub(self.permits.available_permits());
        docreview_core::store::PoolUsage {
            open: idle + busy,
            idle,
            max: READERS,
        }
    }

    fn take(&self) -> StoreResult<Connection> {
        let pooled = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        match pooled {
            Some(conn) => Ok(conn),
            None => open_connection(&self.path, true),
        }
    }

    fn give_back(&self, conn: Connection) {
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(conn);
    }

    /// Runs `work` on an idle connection inside one read transaction. The transaction statements
    /// are cached like any other, so a read parses no SQL.
    fn with_snapshot<T>(&self, work: impl FnOnce(&Connection) -> StoreResult<T>) -> StoreResult<T> {
        let conn = self.take()?;
        let begun = conn
            .prepare_cached("BEGIN")
            .and_then(|mut begin| begin.execute([]));
        let outcome = begun.map_err(internal).and_then(|_| {
            let value = work(&conn);
            let end = if value.is_ok() { "COMMIT" } else { "ROLLBACK" };
            conn.prepare_cached(end)
                .and_then(|mut end| end.execute([]))
                .map_err(internal)?;
            value
        });
        // A connection left inside a transaction (a failed COMMIT) is dropped, not reused.
        if conn.is_autocommit() {
            self.give_back(conn);
        }
        outcome
    }
}

/// Opens a connection as every one of ours is set up: WAL, `synchronous=FULL`, foreign keys.
pub(crate) fn open_connection(path: &Path, read_only: bool) -> StoreResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)
        .map_err(|e| StoreError::Unavailable(Box::new(e)))?;
    conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))
        .map_err(internal)?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(internal)?;
    // FULL: the WAL is synced at every commit, so an acknowledged write survives power loss.
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(internal)?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(internal)?;
    if read_only {
        conn.pragma_update(None, "query_only", "ON")
            .map_err(internal)?;
    }
    // Room for the hot point lookups and every shape of search statement (filters vary), so a
    // burst of searches never pushes the former out to be parsed again.
    conn.set_prepared_statement_cache_capacity(128);
    Ok(conn)
}
