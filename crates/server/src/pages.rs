//! The few server-rendered pages browser sign-in needs: sign in and out, and the approval page
//! of the command-line login (DESIGN.md §2). Plain HTML forms, no scripts.
//!
//! Forms are protected against cross-site posting: sign-in by its `Origin`, the approval form
//! by the session's CSRF token as well.

use axum::Router;
use axum::extract::{Form, FromRequest, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use docreview_core::Error;
use docreview_core::access::Actor;
use docreview_core::identity;
use docreview_core::model::Scope;
use docreview_core::service::CliLoginRequest;
use serde::Deserialize;

use crate::AppState;
use crate::routes::client_address;
use crate::session;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(home))
        .route("/login", get(login_form).post(login))
        .route("/logout", post(logout))
        .route("/cli-login", get(cli_login_form).post(cli_login_approve))
}

/// The signed-in user and their cookie value, when the request carries a usable session.
async fn signed_in(state: &AppState, headers: &HeaderMap) -> Option<(Actor, String)> {
    let cookie = session::cookie_value(headers)?;
    let actor = state.service.authenticate_session(cookie).await.ok()?;
    Some((actor, cookie.to_string()))
}

async fn home(State(state): State<AppState>, headers: HeaderMap) -> Response {
    match signed_in(&state, &headers).await {
        Some((actor, _)) => page(
            StatusCode::OK,
            "docreview",
            &format!(
                "<p>Signed in as <strong>{}</strong> ({}).</p>\
                 <p>The API is at <code>/api</code>; see the README for a walk-through.</p>\
                 <form method=\"post\" action=\"/logout\"><button>Sign out</button></form>",
                escape(&actor.account.user.display_name),
                escape(&actor.account.email)
            ),
        ),
        None => redirect("/login"),
    }
}

#[derive(Deserialize)]
struct NextQuery {
    next: Option<String>,
}

async fn login_form(Query(query): Query<NextQuery>) -> Response {
    login_page(StatusCode::OK, "", &safe_next(query.next.as_deref()))
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
        return page(
            StatusCode::FORBIDDEN,
            "Sign-in refused",
            "<p>This sign-in did not come from this site's sign-in page.</p>\
             <p><a href=\"/login\">Sign in again</a></p>",
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
        Err(Error::RateLimited { retry_after_secs }) => login_page(
            StatusCode::TOO_MANY_REQUESTS,
            &format!("Too many failed attempts. Try again in {retry_after_secs} seconds."),
            &next,
        ),
        Err(Error::Unauthorized) => login_page(
            StatusCode::UNAUTHORIZED,
            "The email or password is wrong.",
            &next,
        ),
        Err(error) => failure(&error),
    }
}

async fn logout(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(cookie) = session::cookie_value(&headers) {
        if !state.web.is_same_origin(&headers) {
            return page(
                StatusCode::FORBIDDEN,
                "Sign-out refused",
                "<p>This sign-out did not come from this site.</p>",
            );
        }
        if let Err(error) = state.service.sign_out(cookie).await {
            return failure(&error);
        }
    }
    let mut response = redirect("/login");
    response
        .headers_mut()
        .insert(header::SET_COOKIE, state.web.cleared_cookie());
    response
}

#[derive(Deserialize)]
struct CliLoginQuery {
    challenge: Option<String>,
    name: Option<String>,
    scopes: Option<String>,
}

/// The approval page the CLI opens: `/cli-login?challenge=…&name=…[&scopes=docs,comments]`.
async fn cli_login_form(
    State(state): State<AppState>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    let Some((actor, cookie)) = signed_in(&state, &headers).await else {
        let here = request
            .uri()
            .path_and_query()
            .map_or("/cli-login", |p| p.as_str());
        return redirect(&format!("/login?next={}", percent_encode(here)));
    };
    let Ok(Query(query)) = Query::<CliLoginQuery>::try_from_uri(request.uri()) else {
        return bad_cli_request("The link is malformed.");
    };
    let challenge = query.challenge.unwrap_or_default();
    if !identity::is_valid_pkce_challenge(&challenge) {
        return bad_cli_request("The link has no valid PKCE challenge.");
    }
    let name = query
        .name
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| "command-line client".into());
    let scopes = match parse_scopes(query.scopes.as_deref()) {
        Ok(scopes) => scopes,
        Err(message) => return bad_cli_request(&message),
    };
    let scope_list = scopes
        .iter()
        .map(|scope| scope.as_str())
        .collect::<Vec<_>>()
        .join(",");
    page(
        StatusCode::OK,
        "Approve command-line login",
        &format!(
            "<p><strong>{name}</strong> asks for a personal token for <strong>{who}</strong> \
             ({email}) with the scopes <code>{scopes}</code>, valid for 90 days.</p>\
             <p>Approve only if you started this login in your own terminal just now.</p>\
             <form method=\"post\" action=\"/cli-login\">\
             <input type=\"hidden\" name=\"challenge\" value=\"{challenge}\">\
             <input type=\"hidden\" name=\"name\" value=\"{name}\">\
             <input type=\"hidden\" name=\"scopes\" value=\"{scopes}\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <button>Approve</button></form>",
            name = escape(&name),
            who = escape(&actor.account.user.display_name),
            email = escape(&actor.account.email),
            scopes = escape(&scope_list),
            challenge = escape(&challenge),
            csrf = escape(&identity::csrf_token(&cookie)),
        ),
    )
}

#[derive(Deserialize)]
struct ApprovalForm {
    challenge: String,
    name: String,
    scopes: Option<String>,
    csrf: String,
}

async fn cli_login_approve(State(state): State<AppState>, request: Request) -> Response {
    let headers = request.headers().clone();
    let Some((actor, cookie)) = signed_in(&state, &headers).await else {
        return redirect("/login");
    };
    let Ok(Form(form)) = Form::<ApprovalForm>::from_request(request, &()).await else {
        return bad_cli_request("The approval form is incomplete.");
    };
    if !identity::csrf_matches(&cookie, &form.csrf) || !state.web.is_same_origin(&headers) {
        return page(
            StatusCode::FORBIDDEN,
            "Approval refused",
            "<p>This approval did not come from this site's approval page.</p>",
        );
    }
    let scopes = match parse_scopes(form.scopes.as_deref()) {
        Ok(scopes) => scopes,
        Err(message) => return bad_cli_request(&message),
    };
    let request = CliLoginRequest {
        challenge: form.challenge,
        token_name: form.name,
        scopes,
    };
    match state.service.approve_cli_login(&actor, request).await {
        Ok(code) => page(
            StatusCode::OK,
            "Login approved",
            &format!(
                "<p>Type this code into your terminal:</p>\
                 <p class=\"code\">{}</p>\
                 <p>It works once, within 10 minutes, and only for the terminal that started \
                 this login.</p>",
                escape(code.expose())
            ),
        ),
        Err(Error::InvalidRequest(message)) => bad_cli_request(&message),
        Err(error) => failure(&error),
    }
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

fn login_page(status: StatusCode, message: &str, next: &str) -> Response {
    let notice = if message.is_empty() {
        String::new()
    } else {
        format!("<p class=\"notice\">{}</p>", escape(message))
    };
    page(
        status,
        "Sign in to docreview",
        &format!(
            "{notice}<form method=\"post\" action=\"/login\">\
             <label>Email <input type=\"email\" name=\"email\" autocomplete=\"username\" required autofocus></label>\
             <label>Password <input type=\"password\" name=\"password\" autocomplete=\"current-password\" required></label>\
             <input type=\"hidden\" name=\"next\" value=\"{}\">\
             <button>Sign in</button></form>",
            escape(next)
        ),
    )
}

fn bad_cli_request(message: &str) -> Response {
    page(
        StatusCode::BAD_REQUEST,
        "Command-line login",
        &format!(
            "<p class=\"notice\">{}</p><p>Start the login again from your terminal.</p>",
            escape(message)
        ),
    )
}

fn failure(error: &Error) -> Response {
    let status = match error {
        Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    tracing::error!(%error, "a sign-in page failed");
    page(
        status,
        "Something went wrong",
        "<p>The service could not complete this step. Try again in a moment.</p>",
    )
}

/// A complete page: no scripts may run, styles inline, forms post only here.
fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>\
         body{{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}}\
         label{{display:block;margin:.75rem 0}}input{{display:block;width:100%;padding:.4rem;font:inherit}}\
         button{{margin-top:1rem;padding:.5rem 1.25rem;font:inherit}}\
         .notice{{color:#a00}}.code{{font:2rem monospace;letter-spacing:.15em}}\
         </style></head><body><h1>{title}</h1>{body}</body></html>",
        title = escape(title)
    );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}

fn redirect(to: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(location) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// Where to go after signing in: a path on this site only (never `//host` or a full URL).
fn safe_next(next: Option<&str>) -> String {
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

fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3 / 2);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
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

    #[test]
    fn escapes_markup_and_encodes_urls() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(percent_encode("/cli-login?a=b&c"), "/cli-login%3Fa%3Db%26c");
    }

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
