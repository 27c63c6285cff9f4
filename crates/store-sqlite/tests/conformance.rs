//! Runs the storage conformance suite against the SQLite backend, each check on a fresh
//! database file in its own temporary directory (deleted after the check).

use docreview_store_conformance::FreshStore;
use docreview_store_sqlite::SqliteStore;

#[allow(
    clippy::unused_async,
    reason = "the conformance macro awaits a factory; PostgreSQL's needs it"
)]
async fn fresh_store() -> Option<FreshStore> {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = SqliteStore::open(&dir.path().join("docreview.db")).expect("open SQLite store");
    Some(FreshStore::new(store, dir))
}

docreview_store_conformance::conformance_tests!(fresh_store);
