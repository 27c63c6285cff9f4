//! `/account`: the signed-in person's profile and personal tokens: make one (its value shown
//! once, on the answer to the form), see each one in use with its scopes, expiry and last use,
//! revoke one.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use docreview_api::{MeView, PageQuery, TokenView};
use docreview_core::Error;
use docreview_core::model::Scope;
use serde::Deserialize;

use crate::AppState;
use crate::web::error::WebError;
use crate::web::extract::{CsrfForm, SignedIn};
use crate::web::layout::{Layout, Nav};
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::account, get(profile))
        .route(paths::route::account_tokens, post(create_token))
        .route(paths::route::account_token_revoke, post(revoke_token))
        .route(paths::route::account_password, post(change_password))
}

/// A token just made: the only time its value is ever shown.
struct NewToken {
    name: String,
    value: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "account.html")]
struct AccountPage {
    layout: Layout,
    me: MeView,
    tokens: Vec<TokenView>,
    created: Option<NewToken>,
    /// Why the last form was refused, said beside it.
    problem: Option<String>,
    /// Why the password form was refused, or that it worked.
    password_notice: Option<(bool, String)>,
}

impl AccountPage {
    fn scopes(token: &TokenView) -> String {
        token
            .scopes
            .iter()
            .map(|scope| scope.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

async fn render(
    state: &AppState,
    signed_in: &SignedIn,
    created: Option<NewToken>,
    problem: Option<String>,
) -> Result<Response, WebError> {
    render_with(state, signed_in, created, problem, None).await
}

async fn render_with(
    state: &AppState,
    signed_in: &SignedIn,
    created: Option<NewToken>,
    problem: Option<String>,
    password_notice: Option<(bool, String)>,
) -> Result<Response, WebError> {
    let service = &state.service;
    let me = service
        .me(&signed_in.actor)
        .await
        .map_err(|error| WebError::core(error, false))?;
    let tokens = service
        .my_tokens(
            &signed_in.actor,
            PageQuery {
                limit: Some(200),
                cursor: None,
            },
        )
        .await
        .map_err(|error| WebError::core(error, false))?
        .tokens;
    let status = if problem.is_some()
        || password_notice
            .as_ref()
            .is_some_and(|(refused, _)| *refused)
    {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    let page = AccountPage {
        layout: Layout::for_user("Account", Nav::Account, signed_in),
        me,
        tokens,
        created,
        problem,
        password_notice,
    };
    Ok((status, page).into_response())
}

#[derive(Deserialize)]
struct ProfileQuery {
    password: Option<String>,
}

async fn profile(
    State(state): State<AppState>,
    signed_in: SignedIn,
    axum::extract::Query(query): axum::extract::Query<ProfileQuery>,
) -> Result<Response, WebError> {
    let notice = (query.password.as_deref() == Some("changed")).then(|| {
        (
            false,
            "Your password is changed. Every other session of yours has ended.".to_string(),
        )
    });
    render_with(&state, &signed_in, None, None, notice).await
}

#[derive(Deserialize)]
struct PasswordForm {
    #[serde(default)]
    current: String,
    #[serde(default)]
    new: String,
}

/// Changes the password (the core checks the current one and the rule); every session ends and
/// this browser gets a new one, so the answer redirects with the new cookie.
async fn change_password(
    State(state): State<AppState>,
    signed_in: SignedIn,
    address: Option<axum::Extension<crate::limits::ClientAddress>>,
    CsrfForm(form): CsrfForm<PasswordForm>,
) -> Result<Response, WebError> {
    let address = address.map_or_else(|| "unknown".to_string(), |a| a.0.0.to_string());
    match state
        .service
        .change_my_password(&signed_in.actor, &form.current, &form.new, &address)
        .await
    {
        Ok(session) => {
            let max_age = (session.expires_at - state.service.now()) / 1000;
            let mut response =
                Redirect::to(&format!("{}?password=changed", paths::account())).into_response();
            response.headers_mut().insert(
                axum::http::header::SET_COOKIE,
                state
                    .web
                    .session_cookie(session.cookie_value.expose(), max_age),
            );
            Ok(response)
        }
        Err(Error::InvalidRequest(message) | Error::Forbidden(message)) => {
            render_with(&state, &signed_in, None, None, Some((true, message))).await
        }
        Err(error) => Err(WebError::core(error, false)),
    }
}

/// The new-token form: a name and a box per scope (none ticked means `comments`).
#[derive(Deserialize)]
struct TokenForm {
    #[serde(default)]
    name: String,
    docs: Option<String>,
    access: Option<String>,
    comments: Option<String>,
    org: Option<String>,
}

impl TokenForm {
    fn scopes(&self) -> Vec<Scope> {
        [
            (&self.docs, Scope::Docs),
            (&self.access, Scope::Access),
            (&self.comments, Scope::Comments),
            (&self.org, Scope::Org),
        ]
        .into_iter()
        .filter_map(|(ticked, scope)| ticked.is_some().then_some(scope))
        .collect()
    }
}

async fn create_token(
    State(state): State<AppState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<TokenForm>,
) -> Result<Response, WebError> {
    match state
        .service
        .create_my_token(&signed_in.actor, &form.name, form.scopes())
        .await
    {
        Ok(issued) => {
            let created = NewToken {
                name: issued.record.name,
                value: issued.value.expose().to_string(),
            };
            render(&state, &signed_in, Some(created), None).await
        }
        Err(Error::InvalidRequest(message)) => {
            render(&state, &signed_in, None, Some(message)).await
        }
        Err(error) => Err(WebError::core(error, false)),
    }
}

#[derive(Deserialize)]
struct Confirm {}

async fn revoke_token(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Path(token_id): Path<String>,
    CsrfForm(Confirm {}): CsrfForm<Confirm>,
) -> Result<Response, WebError> {
    match state
        .service
        .revoke_my_token(&signed_in.actor, &token_id)
        .await
    {
        // Back to the list, which holds only tokens in use (a reload resends nothing).
        Ok(_) => Ok(Redirect::to(&paths::account()).into_response()),
        Err(Error::NotFound(_)) => {
            render(
                &state,
                &signed_in,
                None,
                Some("That token is not one of yours, or it was already revoked.".into()),
            )
            .await
        }
        Err(error) => Err(WebError::core(error, false)),
    }
}
