//! Runs the storage conformance suite against the SQLite backend, each check on a fresh
//! database file in its own temporary directory (deleted when the check's store is dropped).

use std::sync::Arc;

use docreview_core::store::Store;
use docreview_store_conformance::StoreWithCleanup;
use docreview_store_sqlite::SqliteStore;

async fn fresh_store() -> Option<Arc<dyn Store>> {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = SqliteStore::open(&dir.path().join("docreview.db")).expect("open SQLite store");
    Some(Arc::new(StoreWithCleanup::new(Arc::new(store), dir)))
}

docreview_store_conformance::conformance_tests!(fresh_store);
