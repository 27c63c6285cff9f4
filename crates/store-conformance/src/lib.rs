//! The storage conformance suite: one set of checks every `Store` backend must pass, so the
//! backends cannot drift apart.
//!
//! Each check is a `pub async fn check_…(store: Arc<dyn Store>)` that gets a fresh, empty,
//! migrated store and panics on the first difference. A backend wires them all at once in an
//! integration test:
//!
//! ```ignore
//! async fn fresh_store() -> Option<Arc<dyn Store>> { /* None: backend not configured here */ }
//! docreview_store_conformance::conformance_tests!(fresh_store);
//! ```
//!
//! The expansion is one `#[tokio::test]` per check (multi-threaded runtime, so the concurrency
//! checks really run concurrently); the test crate needs `tokio` with the `macros` and
//! `rt-multi-thread` features among its dev-dependencies.

mod accounts;
mod cleanup;
mod comments;
mod concurrency;
pub mod fixtures;
mod listing;
mod manage;
mod organization;
mod projects;
mod reviews;
mod runs;
mod search;
mod sessions;
mod versions;

pub use accounts::{check_accounts, check_ensure_account, check_tokens, check_users_and_projects};
pub use cleanup::StoreWithCleanup;
pub use comments::{
    check_comment_thread_and_live_comments, check_write_comments_cas, check_write_comments_upserts,
};
pub use concurrency::{
    check_concurrent_comment_writes_one_wins,
    check_concurrent_retrying_writers_get_distinct_revisions,
    check_concurrent_version_and_comment_writes,
};
pub use listing::{check_list_filters, check_list_pagination, check_list_visibility};
pub use manage::{check_delete_review, check_update_review};
pub use organization::{
    check_list_accounts, check_password_hash, check_remove_account,
    check_token_listing_and_revocation, check_update_account,
};
pub use projects::{
    check_change_project_roles, check_import_projects, check_link_project, check_list_projects,
    check_visibility_with_project_roles,
};
pub use reviews::{
    check_create_review_duplicates, check_create_review_round_trip, check_version_bodies,
};
pub use runs::check_runs;
pub use search::{
    check_search_comments_filters, check_search_comments_follow_writes,
    check_search_comments_matches, check_search_comments_ranking_and_paging,
    check_search_comments_visibility, check_search_reviews,
    check_search_reviews_ranking_and_paging, check_search_snippets, check_search_text,
};
pub use sessions::{check_login_codes, check_sessions};
pub use versions::{
    check_write_version_append, check_write_version_replace, check_write_version_stale,
};

/// Expands to one `#[tokio::test]` per conformance check, each calling `$factory().await` (an
/// async fn returning `Option<Arc<dyn Store>>`) for its own fresh store. `None` skips the test
/// with a note: the backend is not configured on this machine.
#[macro_export]
macro_rules! conformance_tests {
    ($factory:path) => {
        $crate::__conformance_tests!(
            $factory;
            check_accounts,
            check_ensure_account,
            check_tokens,
            check_users_and_projects,
            check_create_review_round_trip,
            check_create_review_duplicates,
            check_version_bodies,
            check_list_visibility,
            check_list_filters,
            check_list_pagination,
            check_write_comments_cas,
            check_write_comments_upserts,
            check_comment_thread_and_live_comments,
            check_runs,
            check_write_version_append,
            check_write_version_replace,
            check_write_version_stale,
            check_concurrent_comment_writes_one_wins,
            check_concurrent_retrying_writers_get_distinct_revisions,
            check_concurrent_version_and_comment_writes,
            check_token_listing_and_revocation,
            check_password_hash,
            check_list_accounts,
            check_update_account,
            check_remove_account,
            check_sessions,
            check_login_codes,
            check_update_review,
            check_delete_review,
            check_import_projects,
            check_list_projects,
            check_change_project_roles,
            check_link_project,
            check_visibility_with_project_roles,
            check_search_comments_matches,
            check_search_comments_follow_writes,
            check_search_comments_filters,
            check_search_comments_visibility,
            check_search_snippets,
            check_search_comments_ranking_and_paging,
            check_search_reviews,
            check_search_reviews_ranking_and_paging,
            check_search_text,
        );
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    ($factory:path; $($check:ident),+ $(,)?) => {
        $(
            #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                let Some(store) = $factory().await else {
                    eprintln!(
                        "note: {} skipped: this backend is not configured here",
                        stringify!($check)
                    );
                    return;
                };
                $crate::$check(store).await;
            }
        )+
    };
}
