//! Mapping of sqlx errors to `StoreError`: what retrying can cure becomes `Unavailable`, a taken
//! unique key `AlreadyExists`, everything else `Internal`.

use docreview_core::store::StoreError;

/// SQLSTATE codes (and classes) that say "the database cannot serve this now", not "this is wrong".
fn transient(code: &str) -> bool {
    // 08: connection exception; 53: insufficient resources (too many connections, disk full).
    code.starts_with("08")
        || code.starts_with("53")
        || matches!(
            code,
            // query_canceled: the statement timeout fired.
            "57014"
            // admin_shutdown, crash_shutdown, cannot_connect_now: a restart or failover.
            | "57P01" | "57P02" | "57P03"
            // serialization_failure, deadlock_detected, lock_not_available: try again.
            | "40001" | "40P01" | "55P03"
        )
}

/// Whether `error` is one that retrying later may cure.
pub fn is_unavailable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| transient(&code)),
        _ => false,
    }
}

pub fn map_error(error: sqlx::Error) -> StoreError {
    if is_unavailable(&error) {
        StoreError::Unavailable(Box::new(error))
    } else {
        StoreError::Internal(Box::new(error))
    }
}

/// For an insert whose unique keys all name `what`: a taken key is `AlreadyExists(what)`, a
/// reference to a missing row (foreign key) `NotFound`.
pub fn unique(what: &'static str) -> impl Fn(sqlx::Error) -> StoreError {
    move |error| {
        let code = match &error {
            sqlx::Error::Database(db) => db.code().map(std::borrow::Cow::into_owned),
            _ => None,
        };
        match code.as_deref() {
            Some("23505") => StoreError::AlreadyExists(what),
            Some("23503") => StoreError::NotFound,
            _ => map_error(error),
        }
    }
}
