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
    let status = if problem.is_some() {
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
    };
    Ok((status, page).into_response())
}

async fn profile(State(state): State<AppState>, signed_in: SignedIn) -> Result<Response, WebError> {
    render(&state, &signed_in, None, None).await
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
