//! The core's error: every way a use case can refuse, in the words of the interface reference.

use crate::store::StoreError;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No usable credential; the failure says which (the 401's `reason`).
    #[error("{}", .0.advice())]
    Unauthorized(AuthFailure),
    /// A personal token lacks the scope the operation needs.
    #[error("this token lacks the `{0}` scope; issue a token with it")]
    InsufficientScope(&'static str),
    /// The credential or role does not allow the operation on something the caller can see.
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    InvalidRequest(String),
    /// A batch sent with `atomic: true` in which some items failed; nothing was written.
    #[error("{} of the batch's comments failed; none was written", .0.len())]
    BatchRejected(Vec<docreview_api::BatchFailure>),
    /// A locator's quote is not in the text (or not in the section it names); the passages it
    /// may have meant come with the refusal.
    #[error("{message}")]
    QuoteNotFound {
        message: String,
        candidates: Vec<docreview_api::QuoteCandidate>,
    },
    /// The document, comment or other identifier does not exist or is not visible.
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("the comments were changed since revision you sent; current revision is {current}")]
    RevisionConflict { current: i64 },
    /// The thread changed since the `threadRevision` the client sent.
    #[error("the thread was changed since you read it; its thread revision is now {current}")]
    ThreadConflict { current: i64 },
    #[error("the target version is no longer the latest; latest is {latest}")]
    StaleVersion { latest: String },
    #[error("{0}")]
    AlreadyExists(String),
    #[error("{0}")]
    InvalidTransition(String),
    /// The review is finalized: nothing that changes its discussion is written until it is
    /// reopened.
    #[error("the review is finalized; reopen it first")]
    ReviewFinalized,
    /// A suggestion where none may be (DESIGN.md §8.5): on a comment that is not `revise`,
    /// `add` or `delete`, or not on a quoted passage; or applying a comment with none.
    #[error("{0}")]
    NotASuggestion(String),
    /// A suggestion's passage is not exactly where it was on the base version.
    #[error("{0}")]
    SuggestionOutdated(String),
    /// Two suggestions change the same text.
    #[error("{0}")]
    SuggestionsOverlap(String),
    /// A suggestion on a closed (resolved or applied) comment.
    #[error("{0}")]
    SuggestionClosed(String),
    /// Finalizing needs every comment closed.
    #[error("{0} comments are still open; close them before finalizing")]
    OpenCommentsRemain(i64),
    #[error("an external member must name a project")]
    ProjectRequired,
    #[error("you need an editor or manager role in this project")]
    ProjectRoleRequired,
    #[error("project not found")]
    ProjectNotFound,
    #[error("the project is not in the current project snapshot")]
    ProjectNotInSnapshot,
    #[error("the document is already linked to another project")]
    ProjectConflict,
    /// Too many failed attempts, or writes, from one address or credential; try again after
    /// this many seconds.
    #[error("too many requests (a rate limit); try again in {retry_after_secs} s")]
    RateLimited { retry_after_secs: u64 },
    /// An HTML document over the configured limit.
    #[error("the HTML is {bytes} bytes; the limit is {limit} bytes")]
    DocumentTooLarge { bytes: usize, limit: usize },
    /// Something broke that the caller cannot fix; the cause is logged, never returned.
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The database cannot be reached right now.
    #[error("the service is temporarily unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Why a credential was not accepted (DESIGN.md §6: the `reason` of a 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    /// No credential at all.
    Missing,
    /// Not a credential this service could have issued (wrong scheme, shape or checksum).
    Malformed,
    /// Well-formed, but no such token or session (or a wrong password).
    Unknown,
    Expired,
    Revoked,
    /// The holder is suspended or removed.
    Suspended,
}

impl AuthFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthFailure::Missing => "missing",
            AuthFailure::Malformed => "malformed",
            AuthFailure::Unknown => "unknown",
            AuthFailure::Expired => "expired",
            AuthFailure::Revoked => "revoked",
            AuthFailure::Suspended => "suspended",
        }
    }

    /// What the caller can do about it.
    fn advice(self) -> &'static str {
        match self {
            AuthFailure::Missing => {
                "authentication required: send `Authorization: Bearer <token>` or sign in"
            }
            AuthFailure::Malformed => {
                "the credential is malformed: send `Authorization: Bearer <token>` with a token this service issued"
            }
            AuthFailure::Unknown => {
                "the credential is not known here: sign in again or use another token"
            }
            AuthFailure::Expired => "the credential has expired: sign in again or make a new token",
            AuthFailure::Revoked => "the token was revoked: make a new token",
            AuthFailure::Suspended => "the account is suspended: ask an organization admin",
        }
    }
}

impl Error {
    /// The message with its cause, for the log. The message alone never names the cause of an
    /// internal or unavailable error, because it is what a client is shown.
    pub fn detail(&self) -> String {
        match self {
            Error::Internal(source) | Error::Unavailable(source) => format!("{self}: {source}"),
            _ => self.to_string(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidRequest(message.into())
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Error::Forbidden(message.into())
    }
}

impl From<StoreError> for Error {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::RevisionConflict { current } => Error::RevisionConflict { current },
            StoreError::StaleVersion { latest } => Error::StaleVersion { latest },
            StoreError::AlreadyExists(what) => {
                Error::AlreadyExists(format!("{what} already exists"))
            }
            StoreError::NotFound => Error::NotFound("document"),
            StoreError::LastAdmin => Error::InvalidTransition(
                "the organization needs at least one active administrator".into(),
            ),
            StoreError::RunNotRunning => {
                Error::InvalidTransition("the run is no longer running".into())
            }
            StoreError::ReviewFinalized => Error::ReviewFinalized,
            StoreError::OpenComments(count) => Error::OpenCommentsRemain(count),
            StoreError::Unavailable(source) => Error::Unavailable(source),
            StoreError::Internal(source) => Error::Internal(source),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn the_cause_is_in_the_detail_and_never_in_the_message() {
        let error = Error::Internal("relation \"users\" does not exist".into());
        assert_eq!(error.to_string(), "internal error");
        assert_eq!(
            error.detail(),
            "internal error: relation \"users\" does not exist"
        );
        let unavailable = Error::Unavailable("connection refused".into());
        assert!(unavailable.detail().ends_with(": connection refused"));
        assert_eq!(
            Error::NotFound("document").detail(),
            Error::NotFound("document").to_string()
        );
    }
}
