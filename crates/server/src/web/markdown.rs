//! Comment and reply bodies on the web app's screens: the one Markdown renderer
//! ([`docreview_text::render_markdown`]) for every place a body is shown, and the composer's
//! preview, which asks the server so that a preview is exactly what will be shown.

use askama::Template;
use axum::Router;
use axum::response::Response;
use axum::routing::post;
use serde::Deserialize;

use crate::AppState;
use crate::web::error::WebError;
use crate::web::extract::{CsrfForm, SignedIn};
use crate::web::htmx::Htmx;
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new().route(paths::route::markdown_preview, post(preview))
}

/// A body as HTML, safe to insert into a page. Templates call it by path:
/// `{{ crate::web::markdown::body_html(c.body)|safe }}`.
pub fn body_html(body: &str) -> String {
    docreview_text::render_markdown(body, &[])
}

#[derive(Deserialize)]
struct PreviewForm {
    body: String,
}

#[derive(Template)]
#[template(path = "partials/preview.html")]
struct Preview {
    html: String,
}

/// `POST /markdown-preview`: what a body being written will look like once sent.
async fn preview(
    _signed_in: SignedIn,
    htmx: Htmx,
    CsrfForm(form): CsrfForm<PreviewForm>,
) -> Result<Response, WebError> {
    htmx.fragment(&Preview {
        html: body_html(&form.body),
    })
}
