//! The command-line login's approval page (DESIGN.md §2): the CLI opens
//! `/cli-login?challenge=…&name=…[&scopes=docs,comments]`; the signed-in person approves (and
//! sees a one-time code to type into the terminal) or denies.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use docreview_core::Error;
use docreview_core::identity;
use docreview_core::model::Scope;
use docreview_core::service::CliLoginRequest;
use serde::Deserialize;

use crate::AppState;
use crate::web::error::WebError;
use crate::web::extract::{CsrfForm, SignedIn};
use crate::web::layout::{Layout, Nav};
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::cli_login, get(form).post(approve))
        .route(paths::route::cli_login_deny, post(deny))
}

#[derive(Deserialize)]
struct LoginLink {
    challenge: Option<String>,
    name: Option<String>,
    scopes: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "cli_login.html")]
struct ApprovalPage {
    layout: Layout,
    client_name: String,
    challenge: String,
    scopes: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "cli_login_result.html")]
struct ResultPage {
    layout: Layout,
    heading: String,
    code: Option<String>,
    message: String,
}

fn result_page(
    status: StatusCode,
    signed_in: &SignedIn,
    heading: &str,
    code: Option<String>,
    message: &str,
) -> Response {
    let page = ResultPage {
        layout: Layout::for_user(heading, Nav::None, signed_in),
        heading: heading.to_string(),
        code,
        message: message.to_string(),
    };
    (status, page).into_response()
}

fn bad_link(signed_in: &SignedIn, message: &str) -> Response {
    result_page(
        StatusCode::BAD_REQUEST,
        signed_in,
        "Command-line login",
        None,
        &format!("{message} Start the login again from your terminal."),
    )
}

async fn form(signed_in: SignedIn, query: Result<Query<LoginLink>, QueryRejection>) -> Response {
    let Ok(Query(link)) = query else {
        return bad_link(&signed_in, "The link is malformed.");
    };
    let challenge = link.challenge.unwrap_or_default();
    if !identity::is_valid_pkce_challenge(&challenge) {
        return bad_link(&signed_in, "The link has no valid PKCE challenge.");
    }
    let scopes = match parse_scopes(link.scopes.as_deref()) {
        Ok(scopes) => scopes,
        Err(message) => return bad_link(&signed_in, &message),
    };
    let page = ApprovalPage {
        layout: Layout::for_user("Approve command-line login", Nav::None, &signed_in),
        client_name: client_name(link.name),
        challenge,
        scopes: scope_list(&scopes),
    };
    page.into_response()
}

#[derive(Deserialize)]
struct Approval {
    challenge: String,
    name: String,
    scopes: Option<String>,
}

async fn approve(
    State(state): State<AppState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<Approval>,
) -> Response {
    let scopes = match parse_scopes(form.scopes.as_deref()) {
        Ok(scopes) => scopes,
        Err(message) => return bad_link(&signed_in, &message),
    };
    let request = CliLoginRequest {
        challenge: form.challenge,
        token_name: client_name(Some(form.name)),
        scopes,
    };
    match state
        .service
        .approve_cli_login(&signed_in.actor, request)
        .await
    {
        Ok(code) => result_page(
            StatusCode::OK,
            &signed_in,
            "Login approved",
            Some(code.expose().to_string()),
            "Type this code into your terminal. It works once, within 10 minutes, and only for \
             the terminal that started this login.",
        ),
        Err(Error::InvalidRequest(message)) => bad_link(&signed_in, &format!("{message}.")),
        Err(error) => WebError::core(error, false).into_response(),
    }
}

async fn deny(signed_in: SignedIn, CsrfForm(_): CsrfForm<Approval>) -> Response {
    result_page(
        StatusCode::OK,
        &signed_in,
        "Login denied",
        None,
        "No token was issued; the terminal's login will not complete. If you did not start \
         this login yourself, someone may be trying to get access to your account.",
    )
}

/// The name the token will carry (as the CLI asked), or a generic one.
fn client_name(name: Option<String>) -> String {
    name.map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "command-line client".into())
}

fn scope_list(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|scope| scope.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// Scopes named in the login link (comma-separated); none means `comments`.
fn parse_scopes(text: Option<&str>) -> Result<Vec<Scope>, String> {
    let scopes = text
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|scope| !scope.is_empty())
        .map(|scope| {
            Scope::parse(scope).ok_or_else(|| {
                format!("Unknown scope “{scope}”; scopes are docs, access, comments and org.")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(if scopes.is_empty() {
        vec![Scope::Comments]
    } else {
        scopes
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_default_to_comments_and_reject_unknown_words() {
        assert_eq!(parse_scopes(None), Ok(vec![Scope::Comments]));
        assert_eq!(
            parse_scopes(Some("docs, comments")),
            Ok(vec![Scope::Docs, Scope::Comments])
        );
        assert!(parse_scopes(Some("root")).is_err());
    }
}
