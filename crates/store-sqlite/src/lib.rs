//! The SQLite backend: one database file, WAL, `synchronous=FULL`, migrations embedded.
//!
//! Writes are group-committed: a single writer thread owns the write connection, takes every
//! write waiting in its queue, runs each inside its own savepoint of one transaction, and commits
//! once. One fsync then acknowledges many writes, which is what lets durable writes outrun the
//! disk's fsync rate. A write is answered only after its transaction is committed, so a 2xx
//! survives `kill -9`. Reads use a small pool of connections on the blocking thread pool; WAL
//! lets them run beside the writer and see only committed data.

mod migrations;
mod rows;
mod search;
mod store;
mod text;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

use docreview_core::events::{EVENT_BUFFER, EventKind, ReviewEvent};
use docreview_core::store::{StoreError, StoreResult};
use rusqlite::{Connection, OpenFlags};
use tokio::sync::{Semaphore, broadcast, oneshot};

/// At most this many writes share one commit.
const MAX_BATCH: usize = 512;
const READERS: usize = 8;
const BUSY_TIMEOUT_MS: u64 = 10_000;

pub struct SqliteStore {
    path: PathBuf,
    writer: mpsc::Sender<Job>,
    readers: Arc<ReaderPool>,
    /// Committed changes, for live listeners in this process (SQLite has no other nodes).
    events: broadcast::Sender<ReviewEvent>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Work for the writer thread: runs inside the open transaction and returns what to do once the
/// transaction's fate is known.
type Job = Box<dyn FnOnce(&Connection) -> Delivery + Send>;
type Delivery = Box<dyn FnOnce(StoreResult<()>) + Send>;

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    pub fn open(path: &Path) -> StoreResult<Self> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| StoreError::Unavailable(Box::new(e)))?;
        }
        let mut writer = open_connection(path, false)?;
        migrations::apply(&mut writer)?;
        let (sender, receiver) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || write_loop(&writer, &receiver))
            .map_err(|e| StoreError::Internal(Box::new(e)))?;
        Ok(SqliteStore {
            events: broadcast::channel(EVENT_BUFFER).0,
            path: path.to_path_buf(),
            writer: sender,
            readers: Arc::new(ReaderPool {
                path: path.to_path_buf(),
                idle: Mutex::new(Vec::new()),
                permits: Semaphore::new(READERS),
            }),
        })
    }

    /// Runs `work` in the next group commit; resolves once that commit is durable.
    async fn write<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |conn: &Connection| {
            let outcome = in_savepoint(conn, work);
            Box::new(move |committed: StoreResult<()>| {
                let _ = reply.send(committed.and(outcome));
            })
        });
        self.writer
            .send(job)
            .map_err(|_| unavailable("the writer thread has stopped"))?;
        answer
            .await
            .map_err(|_| unavailable("the writer thread has stopped"))?
    }

    /// A write that changes document `review_id`: once it is committed, listeners hear `kind`
    /// with the document's revisions as this write left them.
    async fn write_change<T, F>(
        &self,
        review_id: String,
        kind: EventKind,
        work: F,
    ) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        self.write_announced(move |conn| {
            let value = work(conn)?;
            let event = review_event(conn, &review_id, kind)?.ok_or(StoreError::NotFound)?;
            Ok((value, Some(event)))
        })
        .await
    }

    /// A write that may change a document: once it is committed, listeners hear the event the
    /// work returned (none when it changed nothing).
    async fn write_announced<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<(T, Option<ReviewEvent>)> + Send + 'static,
    {
        let (value, event) = self.write(work).await?;
        if let Some(event) = event {
            // Nobody listening is not an error.
            let _ = self.events.send(event);
        }
        Ok(value)
    }

    /// Runs `work` on a pooled read connection on the blocking thread pool, inside one read
    /// transaction (a consistent snapshot). For reads that scan many rows.
    async fn read<T, F>(&self, work: F) -> StoreResult<T>
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
    fn lookup<T>(&self, work: impl FnOnce(&Connection) -> StoreResult<T>) -> StoreResult<T> {
        self.readers.with_snapshot(work)
    }
}

struct ReaderPool {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    permits: Semaphore,
}

impl ReaderPool {
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

fn open_connection(path: &Path, read_only: bool) -> StoreResult<Connection> {
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

/// The writer thread: one transaction per batch of queued writes, one commit per batch.
fn write_loop(conn: &Connection, queue: &mpsc::Receiver<Job>) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        if let Err(error) = conn.execute_batch("BEGIN IMMEDIATE") {
            // Dropping the jobs unrun answers each caller "unavailable"; nothing was written.
            tracing::error!(%error, writes = batch.len(), "could not begin a write transaction");
            continue;
        }
        let deliveries: Vec<Delivery> = batch
            .into_iter()
            .filter_map(|job| run_contained(conn, job))
            .collect();
        let committed = match conn.execute_batch("COMMIT") {
            Ok(()) => Ok(()),
            Err(error) => {
                tracing::error!(%error, "group commit failed; rolling back the batch");
                let _ = conn.execute_batch("ROLLBACK");
                Err(StoreError::Unavailable(Box::new(error)))
            }
        };
        for deliver in deliveries {
            deliver(match &committed {
                Ok(()) => Ok(()),
                Err(error) => Err(unavailable(&error.to_string())),
            });
        }
    }
}

/// Runs a job, containing a panic (a bug) to that job: its savepoint is rolled back and its caller
/// is answered "unavailable" (its reply channel is dropped), while the writer thread, and every
/// other write in the batch, carry on.
fn run_contained(conn: &Connection, job: Job) -> Option<Delivery> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(conn))) {
        Ok(delivery) => Some(delivery),
        Err(_) => {
            tracing::error!("a database write panicked; it was rolled back");
            let _ = conn.execute_batch("ROLLBACK TO job; RELEASE job");
            None
        }
    }
}

/// Runs one job in its own savepoint, so a job that fails leaves no trace in the batch.
fn in_savepoint<T>(
    conn: &Connection,
    work: impl FnOnce(&Connection) -> StoreResult<T>,
) -> StoreResult<T> {
    conn.execute_batch("SAVEPOINT job").map_err(internal)?;
    match work(conn) {
        Ok(value) => {
            conn.execute_batch("RELEASE job").map_err(internal)?;
            Ok(value)
        }
        Err(error) => {
            conn.execute_batch("ROLLBACK TO job; RELEASE job")
                .map_err(internal)?;
            Err(error)
        }
    }
}

/// Document `review_id` as an event of `kind` would announce it now; `None` when it is gone.
fn review_event(
    conn: &Connection,
    review_id: &str,
    kind: EventKind,
) -> StoreResult<Option<ReviewEvent>> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached(
        "SELECT comments_revision, structure_revision, latest_version_id, change_seq \
         FROM reviews WHERE id = ?1",
    )
    .map_err(internal)?
    .query_row([review_id], |row| {
        Ok(ReviewEvent {
            kind,
            review_id: review_id.to_string(),
            comments_revision: row.get(0)?,
            structure_revision: row.get(1)?,
            latest_version_id: row.get(2)?,
            change_seq: row.get(3)?,
        })
    })
    .optional()
    .map_err(internal)
}

fn internal(error: rusqlite::Error) -> StoreError {
    StoreError::Internal(Box::new(error))
}

fn unavailable(message: &str) -> StoreError {
    StoreError::Unavailable(message.to_string().into())
}
