//! Live events of a document, as its event stream sends them.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    /// Comments, replies, status, anchors or runs changed.
    Comments,
    /// A version was added or replaced.
    Version,
    /// The document's own fields changed (title, tags, sharing, reviewers, decisions,
    /// finalized), or a run started.
    Review,
    /// A reaction was added to or taken from a comment or reply (no revision moves).
    Reactions,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Comments => "comments",
            EventKind::Version => "version",
            EventKind::Review => "review",
            EventKind::Reactions => "reactions",
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
