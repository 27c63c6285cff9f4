//! `/org/webhooks`: the organization's webhooks, for its admins (DESIGN.md §8.3): register one
//! (its signing secret shown once), and per webhook its deliveries, redeliver, ping, rotate the
//! secret, disable or enable, delete. Each form calls the core use case the API calls; the core
//! decides who may and what is refused (a private address, a bad URL, an unknown event type),
//! and the page says so in place with the form kept.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use docreview_api::{
    DeliveryView, NewWebhook, PageQuery, ProjectView, WebhookChange, WebhookEventType, WebhookView,
};
use docreview_core::Error;
use serde::Deserialize;

use crate::AppState;
use crate::web::error::WebError;
use crate::web::extract::{CsrfForm, SignedIn};
use crate::web::layout::{Layout, Nav};
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::webhooks, get(list).post(create))
        .route(paths::route::webhook, get(show))
        .route(paths::route::webhook_ping, post(ping))
        .route(paths::route::webhook_rotate, post(rotate))
        .route(paths::route::webhook_active, post(active))
        .route(paths::route::webhook_delete, post(delete))
        .route(paths::route::webhook_redeliver, post(redeliver))
}

/// What the last form did, or why the core refused it.
struct Notice {
    refused: bool,
    text: String,
}

impl Notice {
    fn done(text: impl Into<String>) -> Self {
        Notice {
            refused: false,
            text: text.into(),
        }
    }

    fn status(notice: Option<&Notice>) -> StatusCode {
        match notice {
            Some(Notice { refused: true, .. }) => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        }
    }
}

/// A refusal a person can act on becomes a notice; anything else (not an admin, no such
/// webhook) is the app's error page.
fn refusal(error: Error) -> Result<Notice, WebError> {
    match error {
        Error::InvalidRequest(text)
        | Error::InvalidTransition(text)
        | Error::AlreadyExists(text) => Ok(Notice {
            refused: true,
            text,
        }),
        error => Err(WebError::core(error, false)),
    }
}

/// A webhook's secret, in the answer to create or rotate: the only time it is shown.
struct NewSecret {
    value: String,
    rotated: bool,
}

impl NewSecret {
    fn of(webhook: &WebhookView, rotated: bool) -> Option<Self> {
        webhook.secret.as_ref().map(|secret| NewSecret {
            value: secret.expose().to_string(),
            rotated,
        })
    }
}

/// The create form as it was sent, kept when the core refuses it.
#[derive(Default)]
struct Draft {
    url: String,
    /// `true`: every event type (`["*"]`).
    all_events: bool,
    events: Vec<String>,
    project: String,
    description: String,
}

impl Draft {
    fn from_pairs(pairs: Vec<(String, String)>) -> Self {
        let mut draft = Draft::default();
        for (name, value) in pairs {
            match name.as_str() {
                "url" => draft.url = value.trim().to_string(),
                "which" => draft.all_events = value == "all",
                "events" => draft.events.push(value),
                "project" => draft.project = value.trim().to_string(),
                "description" => draft.description = value.trim().to_string(),
                _ => {}
            }
        }
        draft
    }

    fn request(&self) -> NewWebhook {
        NewWebhook {
            url: self.url.clone(),
            events: if self.all_events {
                vec!["*".to_string()]
            } else {
                self.events.clone()
            },
            project_code: Some(self.project.clone()).filter(|code| !code.is_empty()),
            description: Some(self.description.clone()).filter(|text| !text.is_empty()),
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "webhooks.html")]
struct WebhooksPage {
    layout: Layout,
    webhooks: Vec<WebhookView>,
    projects: Vec<ProjectView>,
    notice: Option<Notice>,
    /// The webhook just registered and its secret.
    created: Option<(WebhookView, NewSecret)>,
    /// The create form's values (kept after a refusal).
    draft: Draft,
}

impl WebhooksPage {
    #[allow(
        clippy::unused_self,
        reason = "called by the askama template as a method of the page"
    )]
    fn event_types(&self) -> Vec<&'static str> {
        WebhookEventType::ALL
            .iter()
            .map(|kind| kind.as_str())
            .collect()
    }

    #[allow(
        clippy::unused_self,
        reason = "called by the askama template as a method of the page"
    )]
    fn when(&self, rfc3339: &str) -> String {
        when(rfc3339)
    }

    fn ticked(&self, event: &str) -> bool {
        self.draft.events.iter().any(|e| e == event)
    }
}

async fn render_list(
    state: &AppState,
    signed_in: &SignedIn,
    notice: Option<Notice>,
    created: Option<(WebhookView, NewSecret)>,
    draft: Draft,
) -> Result<Response, WebError> {
    let actor = &signed_in.actor;
    let webhooks = state
        .service
        .list_webhooks(actor)
        .await
        .map_err(|error| WebError::core(error, false))?
        .webhooks;
    let projects = state
        .service
        .list_projects(
            actor,
            PageQuery {
                limit: Some(200),
                cursor: None,
            },
        )
        .await
        .map(|list| list.projects)
        .unwrap_or_default();
    let status = Notice::status(notice.as_ref());
    let page = WebhooksPage {
        layout: Layout::for_user("Webhooks", Nav::Organization, signed_in),
        webhooks,
        projects,
        notice,
        created,
        draft,
    };
    Ok((status, page).into_response())
}

async fn list(State(state): State<AppState>, signed_in: SignedIn) -> Result<Response, WebError> {
    render_list(&state, &signed_in, None, None, Draft::default()).await
}

async fn create(
    State(state): State<AppState>,
    signed_in: SignedIn,
    CsrfForm(pairs): CsrfForm<Vec<(String, String)>>,
) -> Result<Response, WebError> {
    let draft = Draft::from_pairs(pairs);
    match state
        .service
        .create_webhook(&signed_in.actor, draft.request())
        .await
    {
        Ok(webhook) => {
            let secret = NewSecret::of(&webhook, false);
            let notice = Notice::done(format!("The webhook to {} is registered.", webhook.url));
            let created = secret.map(|secret| (webhook, secret));
            render_list(&state, &signed_in, Some(notice), created, Draft::default()).await
        }
        Err(error) => {
            let notice = refusal(error)?;
            render_list(&state, &signed_in, Some(notice), None, draft).await
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "webhook.html")]
struct WebhookPage {
    layout: Layout,
    webhook: WebhookView,
    deliveries: Vec<DeliveryView>,
    /// The next page of older deliveries.
    older: Option<String>,
    /// Whether this is the newest page (the one that refreshes itself while a delivery waits
    /// for its first attempt).
    newest: bool,
    notice: Option<Notice>,
    secret: Option<NewSecret>,
}

impl WebhookPage {
    #[allow(
        clippy::unused_self,
        reason = "called by the askama template as a method of the page"
    )]
    fn when(&self, rfc3339: &str) -> String {
        when(rfc3339)
    }

    /// Whether the list should ask for itself again: a delivery on the newest page waits for
    /// its first attempt to end (due at once, over within the 10 s timeout; an attempt counts
    /// once it starts, and ends with a response status or an error). A delivery waiting for a
    /// retry shows when that is due; a reload shows how it went.
    fn awaiting_first_attempt(&self) -> bool {
        self.newest
            && self.deliveries.iter().any(|d| {
                d.status.as_str() == "pending"
                    && d.last_response_status.is_none()
                    && d.last_error.is_none()
            })
    }
}

/// `2026-11-27T05:10:11.123Z` as `2026-11-27 05:10:11 UTC`.
fn when(rfc3339: &str) -> String {
    match rfc3339.get(..19) {
        Some(head) if rfc3339.ends_with('Z') => format!("{} UTC", head.replace('T', " ")),
        _ => rfc3339.to_string(),
    }
}

#[derive(Deserialize)]
struct Older {
    cursor: Option<String>,
}

async fn render_one(
    state: &AppState,
    signed_in: &SignedIn,
    webhook_id: &str,
    cursor: Option<String>,
    notice: Option<Notice>,
    secret: Option<NewSecret>,
) -> Result<Response, WebError> {
    let actor = &signed_in.actor;
    let core = |error| WebError::core(error, false);
    let webhook = state
        .service
        .webhook(actor, webhook_id)
        .await
        .map_err(core)?;
    let newest = cursor.is_none();
    let page = state
        .service
        .webhook_deliveries(
            actor,
            webhook_id,
            PageQuery {
                limit: Some(20),
                cursor,
            },
        )
        .await
        .map_err(core)?;
    let status = Notice::status(notice.as_ref());
    let page = WebhookPage {
        layout: Layout::for_user("Webhook", Nav::Organization, signed_in),
        webhook,
        deliveries: page.deliveries,
        older: page.next_cursor,
        newest,
        notice,
        secret,
    };
    Ok((status, page).into_response())
}

async fn show(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Path(webhook_id): Path<String>,
    Query(older): Query<Older>,
) -> Result<Response, WebError> {
    let cursor = older.cursor.filter(|c| !c.is_empty());
    render_one(&state, &signed_in, &webhook_id, cursor, None, None).await
}

/// The webhook's page after a form: what it did, or the refusal.
async fn after<T>(
    state: &AppState,
    signed_in: &SignedIn,
    webhook_id: &str,
    outcome: Result<T, Error>,
    said: impl FnOnce(T) -> (Notice, Option<NewSecret>),
) -> Result<Response, WebError> {
    let (notice, secret) = match outcome {
        Ok(value) => said(value),
        Err(error) => (refusal(error)?, None),
    };
    render_one(state, signed_in, webhook_id, None, Some(notice), secret).await
}

/// The forms without fields of their own carry only the CSRF token.
#[derive(Deserialize)]
struct Bare {}

async fn ping(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Path(webhook_id): Path<String>,
    CsrfForm(Bare {}): CsrfForm<Bare>,
) -> Result<Response, WebError> {
    let outcome = state
        .service
        .ping_webhook(&signed_in.actor, &webhook_id)
        .await;
    after(&state, &signed_in, &webhook_id, outcome, |_| {
        (
            Notice::done("A ping is on its way; its delivery is listed below."),
            None,
        )
    })
    .await
}

async fn rotate(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Path(webhook_id): Path<String>,
    CsrfForm(Bare {}): CsrfForm<Bare>,
) -> Result<Response, WebError> {
    let outcome = state
        .service
        .rotate_webhook_secret(&signed_in.actor, &webhook_id)
        .await;
    after(&state, &signed_in, &webhook_id, outcome, |webhook| {
        (
            Notice::done("The secret is rotated."),
            NewSecret::of(&webhook, true),
        )
    })
    .await
}

#[derive(Deserialize)]
struct Active {
    #[serde(default)]
    active: String,
}

async fn active(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Path(webhook_id): Path<String>,
    CsrfForm(form): CsrfForm<Active>,
) -> Result<Response, WebError> {
    let change = WebhookChange {
        active: Some(form.active == "true"),
        ..WebhookChange::default()
    };
    let outcome = state
        .service
        .update_webhook(&signed_in.actor, &webhook_id, change)
        .await;
    after(&state, &signed_in, &webhook_id, outcome, |webhook| {
        let text = if webhook.active {
            "The webhook is enabled: new events are delivered again."
        } else {
            "The webhook is disabled: no events are delivered until it is enabled again."
        };
        (Notice::done(text), None)
    })
    .await
}

async fn delete(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Path(webhook_id): Path<String>,
    CsrfForm(Bare {}): CsrfForm<Bare>,
) -> Result<Response, WebError> {
    match state
        .service
        .delete_webhook(&signed_in.actor, &webhook_id)
        .await
    {
        Ok(webhook) => {
            let notice = Notice::done(format!(
                "The webhook to {} is deleted, with its deliveries.",
                webhook.url
            ));
            render_list(&state, &signed_in, Some(notice), None, Draft::default()).await
        }
        Err(error) => {
            let notice = refusal(error)?;
            render_one(&state, &signed_in, &webhook_id, None, Some(notice), None).await
        }
    }
}

async fn redeliver(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Path((webhook_id, delivery_id)): Path<(String, String)>,
    CsrfForm(Bare {}): CsrfForm<Bare>,
) -> Result<Response, WebError> {
    let outcome = state
        .service
        .redeliver(&signed_in.actor, &webhook_id, &delivery_id)
        .await;
    after(&state, &signed_in, &webhook_id, outcome, |_| {
        (
            Notice::done("The event is delivered again, as a new delivery with the same id."),
            None,
        )
    })
    .await
}
