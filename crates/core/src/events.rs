//! Live events: what changed on a document, as `GET /api/reviews/{id}/events` streams it.
//!
//! Events are a side effect of committed writes and are emitted by the store: SQLite broadcasts
//! them in-process after the commit; PostgreSQL sends them with `NOTIFY` inside the write
//! transaction (delivered only on commit) and every node forwards what it hears with `LISTEN`,
//! so a listener on one node sees writes made through any node.

use serde::{Deserialize, Serialize};

/// How many events a slow listener may fall behind before it skips some; the next event
/// carries the current revisions anyway.
pub const EVENT_BUFFER: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    /// Comments, replies, status, anchors or runs changed.
    Comments,
    /// A version was added or replaced.
    Version,
    /// The document's own fields changed (title, tags, sharing), or a run started.
    Review,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Comments => "comments",
            EventKind::Version => "version",
            EventKind::Review => "review",
        }
    }
}

/// One change of one document, with its revisions after the change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewEvent {
    pub kind: EventKind,
    pub review_id: String,
    pub comments_revision: i64,
    pub structure_revision: i64,
    pub latest_version_id: String,
    pub change_seq: i64,
}
