//! `/`: the documents the signed-in person can see. Browsing filters the list (tag, archived,
//! project, mine) newest activity first; a search box searches document text or comments with
//! highlighted snippets; both page with the API's cursors. Uploading goes from the page's
//! module straight to the API (`POST /api/reviews/import-html`), which shows its progress.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use docreview_api::{
    CommentResult, CommentSearchQuery, DocResult, DocSearchQuery, ListQuery, ProjectView,
    ReviewSummaryView,
};
use docreview_core::Error;
use serde::{Deserialize, Serialize};

use crate::AppState;
use crate::web::error::WebError;
use crate::web::extract::SignedIn;
use crate::web::layout::{Layout, Nav};
use crate::web::paths;
use crate::web::settings::project_choices;

pub fn router() -> Router<AppState> {
    Router::new().route(paths::route::home, get(list))
}

const PAGE_SIZE: usize = 50;

/// The page's query string, as its forms send it (empty fields mean "not set").
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
struct Params {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    q: String,
    /// `comments` searches comments; anything else searches documents.
    #[serde(default, rename = "in", skip_serializing_if = "String::is_empty")]
    within: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    tag: String,
    /// `archived` or `all`; otherwise only documents in use.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    show: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    project: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    mine: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    cursor: String,
    /// Set when the review screen deleted a document and came here: said once, never carried on.
    #[serde(default, skip_serializing)]
    deleted: String,
}

impl Params {
    fn searching(&self) -> bool {
        !self.q.trim().is_empty()
    }

    fn in_comments(&self) -> bool {
        self.within == "comments"
    }

    fn filtered(&self) -> bool {
        !self.tag.is_empty() || !self.show.is_empty() || !self.project.is_empty() || self.mine()
    }

    fn mine(&self) -> bool {
        !self.mine.is_empty()
    }

    fn archived(&self) -> Option<bool> {
        match self.show.as_str() {
            "all" => None,
            "archived" => Some(true),
            _ => Some(false),
        }
    }

    fn cursor(&self) -> Option<String> {
        Some(self.cursor.clone()).filter(|cursor| !cursor.is_empty())
    }

    /// This page's URL continued at `cursor`.
    fn continued_at(&self, cursor: &str) -> String {
        let next = Params {
            cursor: cursor.to_string(),
            ..self.clone()
        };
        format!(
            "{}?{}",
            paths::home(),
            serde_urlencoded::to_string(&next).unwrap_or_default()
        )
    }
}

enum Results {
    Documents(Vec<ReviewSummaryView>),
    DocumentMatches(Vec<DocResult>),
    CommentMatches(Vec<CommentResult>),
}

#[derive(Template, WebTemplate)]
#[template(path = "documents.html")]
struct DocumentsPage {
    layout: Layout,
    params: Params,
    projects: Vec<ProjectView>,
    results: Results,
    /// Why the search could not run (e.g. nothing searchable in `q`), said beside the box.
    problem: Option<String>,
    next_page: Option<String>,
    /// Whether this page continues an earlier one (a "first page" link is offered).
    continued: bool,
}

async fn list(
    State(state): State<AppState>,
    signed_in: SignedIn,
    Query(params): Query<Params>,
) -> Result<Response, WebError> {
    let actor = &signed_in.actor;
    let service = &state.service;
    let outcome = if params.searching() && params.in_comments() {
        service
            .search_comments(
                actor,
                CommentSearchQuery {
                    q: Some(params.q.clone()),
                    limit: Some(PAGE_SIZE),
                    cursor: params.cursor(),
                    ..CommentSearchQuery::default()
                },
            )
            .await
            .map(|found| (Results::CommentMatches(found.results), found.next_cursor))
    } else if params.searching() {
        service
            .search_docs(
                actor,
                DocSearchQuery {
                    q: Some(params.q.clone()),
                    limit: Some(PAGE_SIZE),
                    cursor: params.cursor(),
                },
            )
            .await
            .map(|found| (Results::DocumentMatches(found.results), found.next_cursor))
    } else {
        service
            .list_reviews(
                actor,
                ListQuery {
                    tag: Some(params.tag.clone()).filter(|tag| !tag.is_empty()),
                    archived: params.archived(),
                    project: Some(params.project.clone()).filter(|code| !code.is_empty()),
                    owner: params.mine().then(|| "me".to_string()),
                    limit: Some(PAGE_SIZE),
                    cursor: params.cursor(),
                    ..ListQuery::default()
                },
            )
            .await
            .map(|list| (Results::Documents(list.reviews), list.next_cursor))
    };
    // A query or cursor the use case refuses is the person's to fix: said on the page.
    let (results, next_cursor, problem) = match outcome {
        Ok((results, next)) => (results, next, None),
        Err(Error::InvalidRequest(message)) => {
            (Results::Documents(Vec::new()), None, Some(message))
        }
        Err(error) => return Err(WebError::core(error, false)),
    };
    // Offered in the filter and the upload form; without them the page still works.
    let projects = project_choices(service, actor).await.unwrap_or_default();
    let status = if problem.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    let page = DocumentsPage {
        layout: Layout::for_user("Documents", Nav::Documents, &signed_in),
        next_page: next_cursor.map(|cursor| params.continued_at(&cursor)),
        continued: !params.cursor.is_empty(),
        params,
        projects,
        results,
        problem,
    };
    Ok((status, page).into_response())
}

impl DocumentsPage {
    fn category_label(hit: &CommentResult) -> &'static str {
        crate::web::panel::category_label(hit.category)
    }

    fn selected(&self, field: &str, value: &str) -> bool {
        let current = match field {
            "in" => &self.params.within,
            "show" => &self.params.show,
            "project" => &self.params.project,
            _ => return false,
        };
        current == value
    }
}
