//! The one-click unsubscribe of every notification mail (RFC 8058): `POST /unsubscribe/{token}`
//! (what a mail client sends for `List-Unsubscribe-Post`, or the button of the page) turns the
//! person's mail off; `GET` shows that page, so opening the link never changes anything by
//! itself (link scanners open links). The signed token is the whole credential: no session,
//! no CSRF token (a forger would need the token itself).

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::AppState;
use crate::web::error::{describe, message_page};
use crate::web::layout::{Layout, Nav};
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new().route(paths::route::unsubscribe, get(confirm).post(unsubscribe))
}

#[derive(Template, WebTemplate)]
#[template(path = "unsubscribe.html")]
struct ConfirmPage {
    layout: Layout,
    email: String,
    mail_enabled: bool,
}

async fn confirm(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    match state.service.unsubscribe_target(&token).await {
        Ok(account) => ConfirmPage {
            layout: Layout::anonymous("Stop mail", Nav::None),
            email: account.email,
            mail_enabled: state.service.mail_enabled(),
        }
        .into_response(),
        Err(error) => refused(&error),
    }
}

async fn unsubscribe(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    match state.service.unsubscribe(&token).await {
        Ok(account) => message_page(
            StatusCode::OK,
            "No more mail",
            &format!(
                "docreview sends no more notification mail to {}. You can turn it on again on your Account page.",
                account.email
            ),
        ),
        Err(error) => refused(&error),
    }
}

fn refused(error: &docreview_core::Error) -> Response {
    if matches!(error, docreview_core::Error::NotFound(_)) {
        return message_page(
            StatusCode::NOT_FOUND,
            "Link not valid",
            "This unsubscribe link is not one this server made. Change your mail settings on your Account page.",
        );
    }
    let (status, heading, message) = describe(error);
    message_page(status, heading, &message)
}
