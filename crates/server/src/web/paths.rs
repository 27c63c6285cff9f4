//! Every path of the web app, in one place. Each is written once, as axum's route pattern
//! (`/reviews/{review_id}`): the routers take the pattern from [`route`], and the pages and
//! handlers link with the function of the same name, which fills the pattern in. A path changes
//! here or nowhere. (The API's paths belong to the API's routers and its OpenAPI document.)

/// Declares each path once: a pattern in [`route`] and a function that fills it in. The
/// pattern is also the function's format string, its `{captures}` naming the arguments.
macro_rules! paths {
    ($( $(#[$doc:meta])* $name:ident($($arg:ident),*) = $pattern:literal; )*) => {
        /// The route patterns, for the routers.
        #[allow(non_upper_case_globals)] // named like the functions that fill them in
        pub mod route {
            $( pub const $name: &str = $pattern; )*
        }

        $(
            $(#[$doc])*
            pub fn $name($($arg: impl std::fmt::Display),*) -> String {
                format!($pattern)
            }
        )*
    };
}

paths! {
    /// The documents list.
    home() = "/";
    login() = "/login";
    logout() = "/logout";
    account() = "/account";
    account_tokens() = "/account/tokens";
    account_token_revoke(token_id) = "/account/tokens/{token_id}/revoke";
    account_password() = "/account/password";
    cli_login() = "/cli-login";
    cli_login_deny() = "/cli-login/deny";
    organization() = "/org";
    organization_members() = "/org/members";
    organization_member_change() = "/org/members/change";
    organization_invitations() = "/org/invitations";
    organization_invitation_revoke() = "/org/invitations/revoke";
    /// The organization's webhooks (DESIGN.md §8.3).
    webhooks() = "/org/webhooks";
    /// One webhook and its deliveries (`?cursor=` pages back).
    webhook(webhook_id) = "/org/webhooks/{webhook_id}";
    webhook_ping(webhook_id) = "/org/webhooks/{webhook_id}/ping";
    webhook_rotate(webhook_id) = "/org/webhooks/{webhook_id}/rotate-secret";
    webhook_active(webhook_id) = "/org/webhooks/{webhook_id}/active";
    webhook_delete(webhook_id) = "/org/webhooks/{webhook_id}/delete";
    webhook_redeliver(webhook_id, delivery_id) =
        "/org/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver";
    /// An invitation's page: the link mailed to the person invited (built by core, like
    /// [`unsubscribe`]).
    #[allow(dead_code)]
    invitation(secret) = "/invite/{secret}";
    /// A password reset's page, mailed (built by core).
    #[allow(dead_code)]
    password_reset(secret) = "/reset/{secret}";
    forgot_password() = "/forgot-password";
    markdown_preview() = "/markdown-preview";
    /// The person's notifications.
    inbox() = "/inbox";
    inbox_read() = "/inbox/read";
    inbox_open(notification_id) = "/inbox/{notification_id}/open";
    inbox_mail() = "/inbox/mail";
    /// Reached from the API's pages and by typing it.
    #[allow(dead_code)]
    api_docs() = "/api/docs";
    /// Mails carry this link, which core builds from the public URL (core knows no web paths).
    #[allow(dead_code)]
    unsubscribe(token) = "/unsubscribe/{token}";

    /// The review screen.
    review(review_id) = "/reviews/{review_id}";
    review_versions(review_id) = "/reviews/{review_id}/versions";
    version_view(review_id, version_id) = "/reviews/{review_id}/versions/{version_id}/view";
    version_changes(review_id, version_id) = "/reviews/{review_id}/versions/{version_id}/changes";
    /// The Runs menu as it stands (asked for when a run starts or ends on screen).
    runs_menu(review_id) = "/reviews/{review_id}/runs";
    run_cancel(review_id, run_id) = "/reviews/{review_id}/runs/{run_id}/cancel";

    /// The comments panel, whole.
    panel(review_id) = "/reviews/{review_id}/panel";
    /// Threads by id (`?ids=`).
    threads(review_id) = "/reviews/{review_id}/threads";
    threads_sync(review_id) = "/reviews/{review_id}/threads/sync";
    /// One thread (the page asks by id, through [`threads`]).
    #[allow(dead_code)]
    thread(review_id, comment_id) = "/reviews/{review_id}/threads/{comment_id}";

    comments(review_id) = "/reviews/{review_id}/comments";
    comment_replies(review_id, comment_id) = "/reviews/{review_id}/comments/{comment_id}/replies";
    comment_status(review_id, comment_id) = "/reviews/{review_id}/comments/{comment_id}/status";
    comment_edit(review_id, comment_id) = "/reviews/{review_id}/comments/{comment_id}/edit";
    comment_cancel(review_id, comment_id) = "/reviews/{review_id}/comments/{comment_id}/cancel";
    comment_apply(review_id, comment_id) = "/reviews/{review_id}/comments/{comment_id}/apply";
    comment_reactions(review_id, comment_id) =
        "/reviews/{review_id}/comments/{comment_id}/reactions";
    reply_reactions(review_id, comment_id, message_id) =
        "/reviews/{review_id}/comments/{comment_id}/replies/{message_id}/reactions";
    reply_edit(review_id, comment_id, message_id) =
        "/reviews/{review_id}/comments/{comment_id}/replies/{message_id}/edit";
    reply_cancel(review_id, comment_id, message_id) =
        "/reviews/{review_id}/comments/{comment_id}/replies/{message_id}/cancel";

    /// The review bar (outcome, reviewers, decisions, finalizing) alone, asked for when the
    /// events stream says the review changed; its writes below answer with it.
    review_bar(review_id) = "/reviews/{review_id}/workflow";
    review_decisions(review_id) = "/reviews/{review_id}/workflow/decisions";
    review_reviewers(review_id) = "/reviews/{review_id}/workflow/reviewers";
    review_finalize(review_id) = "/reviews/{review_id}/workflow/finalize";
    review_reopen(review_id) = "/reviews/{review_id}/workflow/reopen";

    settings(review_id) = "/reviews/{review_id}/settings";
    settings_title(review_id) = "/reviews/{review_id}/settings/title";
    settings_tags(review_id) = "/reviews/{review_id}/settings/tags";
    settings_archive(review_id) = "/reviews/{review_id}/settings/archive";
    settings_project(review_id) = "/reviews/{review_id}/settings/project";
    settings_unlink(review_id) = "/reviews/{review_id}/settings/unlink";
    review_delete(review_id) = "/reviews/{review_id}/delete";
    share(review_id) = "/reviews/{review_id}/share";
    share_mode(review_id) = "/reviews/{review_id}/share/mode";
    share_people(review_id) = "/reviews/{review_id}/share/people";
    share_remove(review_id) = "/reviews/{review_id}/share/remove";
    share_owner(review_id) = "/reviews/{review_id}/share/owner";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_its_pattern_filled_in() {
        assert_eq!(
            route::reply_edit,
            "/reviews/{review_id}/comments/{comment_id}/replies/{message_id}/edit"
        );
        assert_eq!(
            reply_edit("r1", "c2", "m3"),
            "/reviews/r1/comments/c2/replies/m3/edit"
        );
        assert_eq!(home(), "/");
    }
}
