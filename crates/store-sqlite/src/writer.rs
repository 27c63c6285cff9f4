//! The group commit: one writer thread owns the write connection and commits every write
//! waiting in its queue in one transaction, each in its own savepoint, answering each caller
//! only once that commit is durable.

use std::sync::mpsc;

use docreview_core::events::{EventKind, ReviewEvent};
use docreview_core::store::{StoreError, StoreResult};
use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::SqliteStore;
use crate::sql::{internal, query_optional, unavailable};

/// At most this many writes share one commit.
const MAX_BATCH: usize = 512;

/// Work for the writer thread: runs inside the open transaction and returns what to do once the
/// transaction's fate is known.
type Job = Box<dyn FnOnce(&Connection) -> Delivery + Send>;
type Delivery = Box<dyn FnOnce(StoreResult<()>) + Send>;

/// The queue to the writer thread, which runs until every sender is dropped.
pub(crate) struct Writer(mpsc::Sender<Job>);

impl Writer {
    pub(crate) fn start(connection: Connection) -> StoreResult<Writer> {
        let (sender, receiver) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || write_loop(&connection, &receiver))
            .map_err(|e| StoreError::Internal(Box::new(e)))?;
        Ok(Writer(sender))
    }
}

impl SqliteStore {
    /// Runs `work` in the next group commit; resolves once that commit is durable.
    pub(crate) async fn write<T, F>(&self, work: F) -> StoreResult<T>
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
            .0
            .send(job)
            .map_err(|_| unavailable("the writer thread has stopped"))?;
        answer
            .await
            .map_err(|_| unavailable("the writer thread has stopped"))?
    }

    /// A write that changes document `review_id`: once it is committed, listeners hear `kind`
    /// with the document's revisions as this write left them.
    pub(crate) async fn write_change<T, F>(
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
    pub(crate) async fn write_announced<T, F>(&self, work: F) -> StoreResult<T>
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
        #[allow(clippy::cast_precision_loss)] // at most MAX_BATCH
        metrics::histogram!("docreview_sqlite_commit_batch_size").record(batch.len() as f64);
        let started = std::time::Instant::now();
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
        metrics::histogram!("docreview_sqlite_commit_seconds")
            .record(started.elapsed().as_secs_f64());
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
    if let Ok(delivery) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(conn))) {
        Some(delivery)
    } else {
        tracing::error!("a database write panicked; it was rolled back");
        let _ = conn.execute_batch("ROLLBACK TO job; RELEASE job");
        None
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
pub(crate) fn review_event(
    conn: &Connection,
    review_id: &str,
    kind: EventKind,
) -> StoreResult<Option<ReviewEvent>> {
    query_optional(
        conn,
        "SELECT comments_revision, structure_revision, latest_version_id, change_seq \
         FROM reviews WHERE id = ?1",
        [review_id],
        |row| {
            Ok(ReviewEvent {
                kind,
                review_id: review_id.to_string(),
                comments_revision: row.integer(0)?,
                structure_revision: row.integer(1)?,
                latest_version_id: row.text(2)?,
                change_seq: row.integer(3)?,
            })
        },
    )
}
