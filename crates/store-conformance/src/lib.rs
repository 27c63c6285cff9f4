//! The storage conformance suite: one set of checks every `Store` backend must pass, so the
//! backends cannot drift apart.
//!
//! Each check is a `pub async fn check_…(store: Arc<dyn Store>)` that gets a fresh, empty,
//! migrated store and panics on the first difference. A backend wires them all at once in an
//! integration test, with a factory that returns each check's store together with what must be
//! released after it (a temporary directory, a scratch database):
//!
//! ```ignore
//! async fn fresh_store() -> Option<FreshStore> {
//!     // None: this backend is not configured here.
//!     let dir = tempfile::tempdir().ok()?;
//!     let store = MyStore::open(dir.path())?;
//!     Some(FreshStore::new(store, dir))
//! }
//! docreview_store_conformance::conformance_tests!(fresh_store);
//! ```
//!
//! The expansion is one `#[tokio::test]` per check (multi-threaded runtime, so the concurrency
//! checks really run concurrently); the test crate needs `tokio` with the `macros` and
//! `rt-multi-thread` features among its dev-dependencies.

use std::sync::Arc;

use docreview_core::store::Store;

mod accounts;
mod comments;
mod concurrency;
mod events;
pub mod fixtures;
mod invitations;
mod listing;
mod manage;
mod notifications;
mod organization;
mod outbox;
mod projects;
mod reviews;
mod runs;
mod search;
mod sessions;
mod versions;
mod visibility;
mod webhooks;
mod workflow;

pub use accounts::{check_accounts, check_ensure_account, check_tokens, check_users_and_projects};
pub use comments::{
    check_comment_thread_and_live_comments, check_write_comments_cas, check_write_comments_upserts,
};
pub use concurrency::{
    check_concurrent_comment_writes_one_wins,
    check_concurrent_retrying_writers_get_distinct_revisions,
    check_concurrent_version_and_comment_writes,
    check_concurrent_writers_on_the_latest_version_all_succeed,
    check_replies_need_only_a_live_comment, check_run_comments_need_only_a_running_run,
    check_thread_revisions_rise_with_their_thread, check_writes_guarded_by_a_thread_revision,
};
pub use events::check_document_changes_are_announced;
pub use invitations::{
    check_accepting_an_invitation_is_single_use, check_invitations_round_trip,
    check_password_resets_are_single_use,
};
pub use listing::{check_list_filters, check_list_pagination, check_list_visibility};
pub use manage::{check_delete_review, check_update_review};
pub use notifications::{
    check_handles, check_mentions_round_trip, check_notification_listing_and_reading,
};
pub use organization::{
    check_list_accounts, check_password_hash, check_remove_account, check_the_last_admin_stays,
    check_token_listing_and_revocation, check_update_account,
};
pub use outbox::{
    check_instance_keys_and_digest_people, check_outbox_claims_and_outcomes,
    check_outbox_completion_writes_what_follows, check_outbox_concurrent_claims_take_each_row_once,
    check_outbox_rows_commit_with_their_change,
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
    check_search_comments_visibility, check_search_follows_visibility_and_projects,
    check_search_long_document_snippets, check_search_members_seeing_many_documents,
    check_search_queries_without_words, check_search_ranks_the_newest_window, check_search_reviews,
    check_search_reviews_ranking_and_paging, check_search_snippets,
    check_search_snippets_replies_and_order, check_search_splits_words_at_punctuation,
    check_search_text,
};
pub use sessions::{check_login_codes, check_sessions, check_setting_a_password_ends_sessions};
pub use versions::{
    check_suggestions_and_applied_versions, check_write_version_append,
    check_write_version_replace, check_write_version_stale,
};
pub use visibility::check_visibility_matrix;
pub use webhooks::{check_webhook_deliveries, check_webhooks_round_trip};
pub use workflow::{
    check_comment_assignee, check_finalize_and_reopen, check_reactions,
    check_reviewers_and_decisions,
};

/// A fresh store for one check, and the guard that releases its resources (a temporary
/// directory, a scratch database) when dropped: after the check, also when it fails.
pub struct FreshStore {
    pub store: Arc<dyn Store>,
    pub cleanup: Box<dyn Send>,
}

impl FreshStore {
    pub fn new(store: impl Store, cleanup: impl Send + 'static) -> Self {
        FreshStore {
            store: Arc::new(store),
            cleanup: Box::new(cleanup),
        }
    }
}

/// Expands to one `#[tokio::test]` per conformance check, each calling `$factory().await` (an
/// async fn returning `Option<FreshStore>`) for its own fresh store. `None` skips the test with
/// a note: the backend is not configured on this machine.
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
            check_suggestions_and_applied_versions,
            check_concurrent_comment_writes_one_wins,
            check_concurrent_retrying_writers_get_distinct_revisions,
            check_concurrent_writers_on_the_latest_version_all_succeed,
            check_run_comments_need_only_a_running_run,
            check_replies_need_only_a_live_comment,
            check_writes_guarded_by_a_thread_revision,
    check_thread_revisions_rise_with_their_thread,
            check_the_last_admin_stays,
            check_concurrent_version_and_comment_writes,
            check_token_listing_and_revocation,
            check_password_hash,
            check_list_accounts,
            check_update_account,
            check_remove_account,
            check_sessions,
            check_login_codes,
            check_setting_a_password_ends_sessions,
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
            check_search_splits_words_at_punctuation,
            check_search_queries_without_words,
            check_search_snippets_replies_and_order,
            check_search_ranks_the_newest_window,
            check_search_long_document_snippets,
            check_search_follows_visibility_and_projects,
            check_search_members_seeing_many_documents,
            check_document_changes_are_announced,
            check_visibility_matrix,
            check_outbox_rows_commit_with_their_change,
            check_outbox_claims_and_outcomes,
            check_outbox_concurrent_claims_take_each_row_once,
            check_outbox_completion_writes_what_follows,
            check_instance_keys_and_digest_people,
            check_handles,
            check_mentions_round_trip,
            check_notification_listing_and_reading,
            check_reviewers_and_decisions,
            check_finalize_and_reopen,
            check_comment_assignee,
            check_reactions,
            check_webhooks_round_trip,
            check_webhook_deliveries,
            check_invitations_round_trip,
            check_accepting_an_invitation_is_single_use,
            check_password_resets_are_single_use,
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
                let Some($crate::FreshStore { store, cleanup }) = $factory().await else {
                    eprintln!(
                        "note: {} skipped: this backend is not configured here",
                        stringify!($check)
                    );
                    return;
                };
                // The check takes the last handle to the store; the cleanup runs after it.
                $crate::$check(store).await;
                drop(cleanup);
            }
        )+
    };
}
