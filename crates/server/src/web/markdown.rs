//! Comment and reply bodies on the web app's screens: the one Markdown renderer
//! ([`docreview_text::render_markdown`]) for every place a body is shown, and the composer's
//! preview, which asks the server so that a preview is exactly what will be shown.

use askama::Template;
use axum::Router;
use axum::response::Response;
use axum::routing::post;
use serde::Deserialize;

use crate::AppState;
use crate::web::error::{WebError, form_urlencoded_component};
use crate::web::extract::{CsrfForm, SignedIn};
use crate::web::htmx::Htmx;
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new().route(paths::route::markdown_preview, post(preview))
}

/// A body as HTML, safe to insert into a page, its resolved `@handle`s made links to what the
/// person wrote on this document. Templates call it by path:
/// `{{ crate::web::markdown::body_html(c.body, c.mentions, review_id)|safe }}`.
pub fn body_html(body: &str, mentions: &[docreview_api::Mention], review_id: &str) -> String {
    let hrefs: Vec<String> = mentions
        .iter()
        .map(|mention| {
            format!(
                "{}?status=all&author={}",
                paths::review(review_id),
                form_urlencoded_component(&mention.user_id)
            )
        })
        .collect();
    let linked: Vec<docreview_text::Mention<'_>> = mentions
        .iter()
        .zip(&hrefs)
        .map(|(mention, href)| docreview_text::Mention {
            handle: &mention.handle,
            href,
        })
        .collect();
    docreview_text::render_markdown(body, &linked)
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
        // Mentions are resolved when the body is written: the preview shows them as typed.
        html: docreview_text::render_markdown(&form.body, &[]),
    })
}
