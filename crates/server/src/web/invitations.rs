//! The pages behind single-use links (DESIGN.md §8.2): `/invite/{secret}` (choose a name and a
//! password, become a member, be signed in), `/reset/{secret}` (choose a new password; every
//! session ends), and `/forgot-password` (ask for a reset mail). No session exists yet, so
//! these forms are checked like the sign-in form: the `Origin` must be this site's. The core
//! decides everything (the password rule, single use, expiry); a link that cannot be used shows
//! a friendly page and nothing is created.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Form, FromRequest, Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use docreview_api::PasswordResetRequest;
use docreview_core::Error;
use serde::Deserialize;

use crate::AppState;
use crate::web::auth::redirect;
use crate::web::error::{WebError, describe, message_page};
use crate::web::layout::{Layout, Nav};
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::invitation, get(invitation).post(accept))
        .route(paths::route::password_reset, get(reset_form).post(reset))
        .route(paths::route::forgot_password, get(forgot_form).post(forgot))
}

#[derive(Template, WebTemplate)]
#[template(path = "invite.html")]
struct InvitePage {
    layout: Layout,
    email: String,
    inviter: String,
    name: String,
    problem: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "reset.html")]
struct ResetPage {
    layout: Layout,
    email: String,
    problem: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "forgot.html")]
struct ForgotPage {
    layout: Layout,
    sent: bool,
    /// Why the address typed was refused (not an email address, too many requests), with it.
    problem: Option<(String, String)>,
}

/// The page of a link that cannot be used (unknown, used, revoked or expired).
fn spent(what: &str) -> Response {
    message_page(
        StatusCode::NOT_FOUND,
        &format!("This {what} link cannot be used"),
        &format!(
            "The {what} link is unknown, was used already, was withdrawn, or has expired. \
             Ask for a new one (an administrator sends invitations; a reset link can be asked \
             for on the sign-in page)."
        ),
    )
}

/// A form posted from another site (or without `Origin`) is refused, like a sign-in.
fn cross_site() -> Response {
    message_page(
        StatusCode::FORBIDDEN,
        "Refused",
        "This form did not come from this site. Open the link again and retry.",
    )
}

async fn invitation(State(state): State<AppState>, Path(secret): Path<String>) -> Response {
    match state.service.open_invitation(&secret).await {
        Ok(open) => InvitePage {
            layout: Layout::anonymous("Join docreview", Nav::None),
            email: open.email,
            inviter: open.inviter,
            name: open.display_name.unwrap_or_default(),
            problem: None,
        }
        .into_response(),
        Err(Error::NotFound(_)) => spent("invitation"),
        Err(error) => WebError::core(error, false).into_response(),
    }
}

#[derive(Deserialize)]
struct AcceptForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    password: String,
}

async fn accept(
    State(state): State<AppState>,
    Path(secret): Path<String>,
    request: Request,
) -> Response {
    if !state.web.is_same_origin(request.headers()) {
        return cross_site();
    }
    let form = Form::<AcceptForm>::from_request(request, &())
        .await
        .map_or_else(
            |_| AcceptForm {
                name: String::new(),
                password: String::new(),
            },
            |Form(form)| form,
        );
    match state
        .service
        .accept_invitation(&secret, &form.name, &form.password)
        .await
    {
        Ok((_, signed_in)) => {
            let max_age = (signed_in.expires_at - state.service.now()) / 1000;
            let mut response = redirect(&paths::home());
            response.headers_mut().insert(
                header::SET_COOKIE,
                state
                    .web
                    .session_cookie(signed_in.cookie_value.expose(), max_age),
            );
            response
        }
        Err(Error::NotFound(_)) => spent("invitation"),
        Err(Error::InvalidRequest(problem) | Error::AlreadyExists(problem)) => {
            match state.service.open_invitation(&secret).await {
                Ok(open) => (
                    StatusCode::BAD_REQUEST,
                    InvitePage {
                        layout: Layout::anonymous("Join docreview", Nav::None),
                        email: open.email,
                        inviter: open.inviter,
                        name: form.name,
                        problem: Some(problem),
                    },
                )
                    .into_response(),
                Err(_) => spent("invitation"),
            }
        }
        Err(error) => WebError::core(error, false).into_response(),
    }
}

async fn reset_form(State(state): State<AppState>, Path(secret): Path<String>) -> Response {
    match state.service.open_password_reset(&secret).await {
        Ok(account) => ResetPage {
            layout: Layout::anonymous("Choose a new password", Nav::None),
            email: account.email,
            problem: None,
        }
        .into_response(),
        Err(Error::NotFound(_)) => spent("password reset"),
        Err(error) => WebError::core(error, false).into_response(),
    }
}

#[derive(Deserialize)]
struct ResetForm {
    #[serde(default)]
    password: String,
}

async fn reset(
    State(state): State<AppState>,
    Path(secret): Path<String>,
    request: Request,
) -> Response {
    if !state.web.is_same_origin(request.headers()) {
        return cross_site();
    }
    let password = Form::<ResetForm>::from_request(request, &())
        .await
        .map_or_else(|_| String::new(), |Form(form)| form.password);
    match state.service.reset_password(&secret, &password).await {
        Ok(account) => message_page(
            StatusCode::OK,
            "Password changed",
            &format!(
                "The password of {} is changed, and every session of yours has ended. Sign in with the new password.",
                account.email
            ),
        ),
        Err(Error::NotFound(_)) => spent("password reset"),
        Err(Error::InvalidRequest(problem)) => {
            match state.service.open_password_reset(&secret).await {
                Ok(account) => (
                    StatusCode::BAD_REQUEST,
                    ResetPage {
                        layout: Layout::anonymous("Choose a new password", Nav::None),
                        email: account.email,
                        problem: Some(problem),
                    },
                )
                    .into_response(),
                Err(_) => spent("password reset"),
            }
        }
        Err(error) => WebError::core(error, false).into_response(),
    }
}

async fn forgot_form() -> Response {
    ForgotPage {
        layout: Layout::anonymous("Forgot password", Nav::None),
        sent: false,
        problem: None,
    }
    .into_response()
}

#[derive(Deserialize)]
struct ForgotForm {
    #[serde(default)]
    email: String,
}

async fn forgot(State(state): State<AppState>, request: Request) -> Response {
    if !state.web.is_same_origin(request.headers()) {
        return cross_site();
    }
    let email = Form::<ForgotForm>::from_request(request, &())
        .await
        .map_or_else(|_| String::new(), |Form(form)| form.email);
    let typed = email.clone();
    match state
        .service
        .request_password_reset(PasswordResetRequest { email })
    {
        Ok(()) => ForgotPage {
            layout: Layout::anonymous("Forgot password", Nav::None),
            sent: true,
            problem: None,
        }
        .into_response(),
        Err(error @ (Error::InvalidRequest(_) | Error::RateLimited { .. })) => {
            let (status, _, message) = describe(&error);
            let page = ForgotPage {
                layout: Layout::anonymous("Forgot password", Nav::None),
                sent: false,
                problem: Some((message, typed)),
            };
            (status, page).into_response()
        }
        Err(error) => WebError::core(error, false).into_response(),
    }
}
