//! The body of every error answer.

use serde::{Deserialize, Serialize};

/// The body of every error answer (DESIGN.md §5).
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// A short machine code; clients branch on this.
    pub error: String,
    /// The HTTP status, repeated.
    pub status: u16,
    /// For display only.
    pub message: String,
    /// On 401: `missing`, `malformed`, `unknown`, `expired`, `revoked` or `suspended`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// On 409 `comments revision conflict`: the document's current `commentsRevision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<i64>,
    /// On 409 `thread revision conflict`: the thread's current `threadRevision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_thread_revision: Option<i64>,
    /// On 409 `stale_target_version`: the latest version's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_version_id: Option<String>,
    /// On 400 for a batch sent with `atomic: true`: the items that failed (none was written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<Vec<crate::views::BatchFailure>>,
    /// On 400 for a locator whose quote is not in the text: where it occurs outside the section
    /// named, else the closest passages, each a locator that anchors to exactly that passage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<Vec<crate::views::QuoteCandidate>>,
    /// On 409 `open_comments_remain`: how many comments are still open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_count: Option<i64>,
    /// On 5xx: the request's id (also in `x-request-id`), to find it in the server's log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}
