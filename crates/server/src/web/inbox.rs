//! `/inbox`: the signed-in person's notifications (DESIGN.md §8.1): why each came, on which
//! document, the excerpt and when; opening one marks it read and goes to its thread; mark one or
//! all read; how they reach the person by mail. The navigation's count is kept live by
//! `assets/js/bell.js` from `GET /api/me/events`.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use docreview_api::{
    EmailFrequency, NotificationQuery, NotificationSettings, NotificationView, NotificationsRead,
};
use docreview_core::mail::reason_phrase;
use serde::{Deserialize, Serialize};

use crate::AppState;
use crate::web::error::{WebError, form_urlencoded_component};
use crate::web::extract::{CsrfForm, SignedIn};
use crate::web::layout::{Layout, Nav};
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::inbox, get(inbox))
        .route(paths::route::inbox_read, post(mark_read))
        .route(paths::route::inbox_open, post(open))
        .route(paths::route::inbox_mail, post(change_mail))
}

const PAGE_SIZE: usize = 50;

/// The page's address: only unread ones, and where the page starts.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
struct InboxQuery {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unread: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cursor: Option<String>,
}

impl InboxQuery {
    fn unread_only(&self) -> bool {
        self.unread
            .as_deref()
            .is_some_and(|value| !value.is_empty())
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "inbox.html")]
struct InboxPage {
    layout: Layout,
    notifications: Vec<NotificationView>,
    unread_count: i64,
    unread_only: bool,
    older: Option<String>,
    mail: NotificationSettings,
    /// What the last form did, said at the top.
    done: Option<&'static str>,
}

#[allow(
    clippy::unused_self,
    clippy::trivially_copy_pass_by_ref,
    reason = "called by the askama template as methods of its context, with its loop's references"
)]
impl InboxPage {
    /// "Grace Hopper mentioned you", "docreview reported a webhook that keeps failing".
    fn headline(&self, item: &NotificationView) -> String {
        let who = item
            .actor
            .as_ref()
            .map_or("docreview", |actor| actor.display_name.as_str());
        format!("{who} {}", reason_phrase(item.reason))
    }

    fn frequencies(&self) -> &'static [EmailFrequency] {
        EmailFrequency::ALL
    }

    fn frequency_label(&self, frequency: &EmailFrequency) -> &'static str {
        match frequency {
            EmailFrequency::Instant => "A mail for each notification",
            EmailFrequency::Daily => "One digest a day",
            EmailFrequency::Off => "No mail",
        }
    }
}

async fn inbox(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Query(query): Query<InboxQuery>,
) -> Result<Response, WebError> {
    render(&state, &signed_in, query, None).await
}

async fn render(
    state: &AppState,
    signed_in: &SignedIn,
    query: InboxQuery,
    done: Option<&'static str>,
) -> Result<Response, WebError> {
    let core = |error| WebError::core(error, false);
    let unread_only = query.unread_only();
    let list = state
        .service
        .notifications(
            &signed_in.actor,
            NotificationQuery {
                unread: unread_only.then_some(true),
                limit: Some(PAGE_SIZE),
                cursor: query.cursor,
            },
        )
        .await
        .map_err(core)?;
    let mail = state
        .service
        .notification_settings(&signed_in.actor)
        .await
        .map_err(core)?;
    let older = list.next_cursor.map(|cursor| {
        let next = InboxQuery {
            unread: unread_only.then(|| "1".to_string()),
            cursor: Some(cursor),
        };
        format!(
            "{}?{}",
            paths::inbox(),
            serde_urlencoded::to_string(next).unwrap_or_default()
        )
    });
    Ok(InboxPage {
        layout: Layout::for_user("Inbox", Nav::Inbox, signed_in),
        notifications: list.notifications,
        unread_count: list.unread_count,
        unread_only,
        older,
        mail,
        done,
    }
    .into_response())
}

/// One notification (`id`), or all of them (`all`).
#[derive(Deserialize)]
struct ReadForm {
    id: Option<String>,
    all: Option<String>,
}

async fn mark_read(
    State(state): State<AppState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<ReadForm>,
) -> Result<Response, WebError> {
    let input = match (form.id, form.all) {
        (_, Some(_)) => NotificationsRead {
            ids: None,
            all: Some(true),
        },
        (Some(id), None) => NotificationsRead {
            ids: Some(vec![id]),
            all: None,
        },
        (None, None) => {
            return Err(WebError::bad_form(
                "Say which notification to mark read.",
                false,
            ));
        }
    };
    state
        .service
        .mark_notifications_read(&signed_in.actor, input)
        .await
        .map_err(|error| WebError::core(error, false))?;
    Ok(Redirect::to(&paths::inbox()).into_response())
}

/// Where an opened notification goes: its thread, or its document.
#[derive(Deserialize)]
struct OpenForm {
    review: Option<String>,
    comment: Option<String>,
}

/// Opens a notification: marks it read, then goes to its thread (or its document). The path is
/// built here from the ids, so the form cannot send anyone elsewhere.
async fn open(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<OpenForm>,
) -> Result<Response, WebError> {
    state
        .service
        .mark_notifications_read(
            &signed_in.actor,
            NotificationsRead {
                ids: Some(vec![id]),
                all: None,
            },
        )
        .await
        .map_err(|error| WebError::core(error, false))?;
    let segment = |id: &str| form_urlencoded_component(id).replace('/', "%2F");
    let to = match (form.review.as_deref(), form.comment.as_deref()) {
        (Some(review), Some(comment)) => {
            format!(
                "{}#thread-{}",
                paths::review(segment(review)),
                segment(comment)
            )
        }
        (Some(review), None) => paths::review(segment(review)),
        _ => paths::inbox(),
    };
    Ok(Redirect::to(&to).into_response())
}

#[derive(Deserialize)]
struct MailForm {
    email: String,
}

async fn change_mail(
    State(state): State<AppState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<MailForm>,
) -> Result<Response, WebError> {
    let Some(email) = EmailFrequency::parse(&form.email) else {
        return Err(WebError::bad_form("Choose instant, daily or off.", false));
    };
    state
        .service
        .set_notification_settings(
            &signed_in.actor,
            NotificationSettings {
                email,
                mail_enabled: false,
            },
        )
        .await
        .map_err(|error| WebError::core(error, false))?;
    render(
        &state,
        &signed_in,
        InboxQuery::default(),
        Some("Mail setting saved."),
    )
    .await
}
