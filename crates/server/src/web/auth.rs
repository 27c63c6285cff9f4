//! Sign in and sign out (DESIGN.md §2). After signing in, the person lands on the page they
//! asked for (`next`, a path on this site only).

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Form, FromRequest, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use docreview_core::Error;
use serde::Deserialize;

use crate::AppState;
use crate::routes::client_address;
use crate::session;
use crate::web::error::{WebError, message_page};
use crate::web::extract::MaybeSignedIn;
use crate::web::layout::{Layout, Nav};
use crate::web::paths;
use crate::web::session::SessionEnded;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::login, get(login_form).post(login))
        .route(paths::route::logout, post(logout))
}

#[derive(Template, WebTemplate)]
#[template(path = "login.html")]
struct LoginPage {
    layout: Layout,
    notice: String,
    next: String,
}

fn login_page(status: StatusCode, notice: &str, next: &str) -> Response {
    let page = LoginPage {
        layout: Layout::anonymous("Sign in", Nav::None),
        notice: notice.to_string(),
        next: next.to_string(),
    };
    (status, page).into_response()
}

#[derive(Deserialize)]
struct NextQuery {
    next: Option<String>,
}

async fn login_form(
    MaybeSignedIn(signed_in): MaybeSignedIn,
    ended: Option<axum::Extension<SessionEnded>>,
    Query(query): Query<NextQuery>,
) -> Response {
    let next = safe_next(query.next.as_deref());
    if signed_in.is_some() {
        return redirect(&next);
    }
    let notice = if ended.is_some() {
        "Your session has ended. Sign in again to continue."
    } else {
        ""
    };
    login_page(StatusCode::OK, notice, &next)
}

#[derive(Deserialize)]
struct LoginForm {
    email: String,
    password: String,
    next: Option<String>,
}

async fn login(State(state): State<AppState>, request: Request) -> Response {
    // Login CSRF: a sign-in form posted from another site would sign the victim in as the
    // attacker. Browsers send `Origin` on every form post.
    if !state.web.is_same_origin(request.headers()) {
        return message_page(
            StatusCode::FORBIDDEN,
            "Sign-in refused",
            "This sign-in did not come from this site's sign-in page. Open the sign-in page and try again.",
        );
    }
    let address = client_address(&request);
    let Ok(Form(form)) = Form::<LoginForm>::from_request(request, &()).await else {
        return login_page(
            StatusCode::BAD_REQUEST,
            "Enter your email and password.",
            "/",
        );
    };
    let next = safe_next(form.next.as_deref());
    match state
        .service
        .sign_in(&form.email, &form.password, &address)
        .await
    {
        Ok(signed_in) => {
            let max_age = (signed_in.expires_at - state.service.now()) / 1000;
            let mut response = redirect(&next);
            response.headers_mut().insert(
                header::SET_COOKIE,
                state
                    .web
                    .session_cookie(signed_in.cookie_value.expose(), max_age),
            );
            response
        }
        Err(Error::RateLimited { retry_after_secs }) => {
            let mut page = login_page(
                StatusCode::TOO_MANY_REQUESTS,
                &format!("Too many failed attempts. Try again in {retry_after_secs} seconds."),
                &next,
            );
            page.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
            page
        }
        Err(Error::Unauthorized(_)) => login_page(
            StatusCode::UNAUTHORIZED,
            "The email or password is wrong.",
            &next,
        ),
        Err(error) => WebError::core(error, false).into_response(),
    }
}

async fn logout(State(state): State<AppState>, headers: HeaderMap) -> Response {
    // The credential layer has already refused a cross-site sign-out of a live session.
    if let Some(cookie) = session::cookie_value(&headers)
        && let Err(error) = state.service.sign_out(cookie).await
    {
        return WebError::core(error, false).into_response();
    }
    let mut response = redirect(&paths::login());
    response
        .headers_mut()
        .insert(header::SET_COOKIE, state.web.cleared_cookie());
    response
}

pub fn redirect(to: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(location) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// Where to go after signing in: a path on this site only (never `//host` or a full URL).
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.starts_with("/\\")
                && !path.chars().any(char::is_control) =>
        {
            path.to_string()
        }
        _ => "/".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(
            safe_next(Some("/cli-login?challenge=x")),
            "/cli-login?challenge=x"
        );
        assert_eq!(safe_next(Some("//evil.example/")), "/");
        assert_eq!(safe_next(Some("/\\evil.example")), "/");
        assert_eq!(safe_next(Some("https://evil.example/")), "/");
        assert_eq!(safe_next(None), "/");
    }
}
