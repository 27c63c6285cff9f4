//! Live events: what changed on a document, as `GET /api/reviews/{id}/events` streams it.
//!
//! Events are a side effect of committed writes and are emitted by the store: SQLite broadcasts
//! them in-process after the commit; PostgreSQL sends them with `NOTIFY` inside the write
//! transaction (delivered only on commit) and every node forwards what it hears with `LISTEN`,
//! so a listener on one node sees writes made through any node.

pub use docreview_api::events::{EventKind, ReviewEvent};

/// How many events a slow listener may fall behind before it skips some; the next event
/// carries the current revisions anyway.
pub const EVENT_BUFFER: usize = 1024;
