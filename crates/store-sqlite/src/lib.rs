//! The SQLite backend: one database file, WAL, `synchronous=FULL`, migrations embedded.
//!
//! Writes are group-committed (`writer`): a single writer thread owns the write connection,
//! takes every write waiting in its queue, runs each inside its own savepoint of one
//! transaction, and commits once. One fsync then acknowledges many writes, which is what lets
//! durable writes outrun the disk's fsync rate. A write is answered only after its transaction
//! is committed, so a 2xx survives `kill -9`. Reads (`readers`) use a small pool of connections;
//! WAL lets them run beside the writer and see only committed data.
//!
//! The `Store` port is implemented one domain a module (`accounts`, `reviews`, `comments`,
//! `organization`, `search`), each method one read snapshot or one group-committed write. Who
//! may see a document is written once, in `visibility`.

mod accounts;
mod columns;
mod comments;
mod invitations;
mod migrations;
mod organization;
mod outbox;
mod readers;
mod reviews;
mod search;
mod sql;
mod text;
mod visibility;
mod webhooks;
mod workflow;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use docreview_core::events::{EVENT_BUFFER, ReviewEvent};
use docreview_core::store::{Store, StoreError, StoreResult};
use tokio::sync::broadcast;

use crate::readers::ReaderPool;
use crate::sql::internal;
use crate::writer::Writer;

pub struct SqliteStore {
    path: PathBuf,
    writer: Writer,
    readers: Arc<ReaderPool>,
    /// Committed changes, for live listeners in this process (SQLite has no other nodes).
    events: broadcast::Sender<ReviewEvent>,
    /// People whose notifications changed, for their live unread counts.
    people: broadcast::Sender<String>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    pub fn open(path: &Path) -> StoreResult<Self> {
        create_private(path).map_err(|e| StoreError::Unavailable(Box::new(e)))?;
        let mut connection = readers::open_connection(path, false)?;
        migrations::apply(&mut connection)?;
        Ok(SqliteStore {
            events: broadcast::channel(EVENT_BUFFER).0,
            people: broadcast::channel(EVENT_BUFFER).0,
            path: path.to_path_buf(),
            writer: Writer::start(connection)?,
            readers: Arc::new(ReaderPool::new(path)),
        })
    }
}

/// Makes the folders up to `path` and an empty database file at it, when missing, for their
/// owner alone whatever the umask: the database holds password and token hashes and every
/// document, and SQLite would create it readable by all (0644; its `-wal` and `-shm` files take
/// the database's mode). Folders and files that exist keep theirs.
fn create_private(path: &Path) -> std::io::Result<()> {
    let mut folders = std::fs::DirBuilder::new();
    folders.recursive(true);
    let mut file = std::fs::OpenOptions::new();
    file.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        folders.mode(0o700);
        file.mode(0o600);
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        folders.create(parent)?;
    }
    match file.open(path) {
        Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => Err(error),
        _ => Ok(()),
    }
}

impl SqliteStore {
    /// Tells listeners in this process that these people's notifications changed (after the
    /// commit that changed them), each once.
    pub(crate) fn tell_people(&self, mut people: Vec<String>) {
        people.sort();
        people.dedup();
        for person in people {
            // Nobody listening is not an error.
            let _ = self.people.send(person);
        }
    }
}

#[async_trait::async_trait]
impl Store for SqliteStore {
    fn subscribe(&self) -> broadcast::Receiver<ReviewEvent> {
        self.events.subscribe()
    }

    fn subscribe_people(&self) -> broadcast::Receiver<String> {
        self.people.subscribe()
    }

    async fn ping(&self) -> StoreResult<()> {
        self.lookup(|conn| conn.query_row("SELECT 1", [], |_| Ok(())).map_err(internal))
    }

    fn pool_usage(&self) -> docreview_core::store::PoolUsage {
        self.readers.usage()
    }
}
