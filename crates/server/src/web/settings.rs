//! A document's settings and sharing, from the review screen: its title, tags, archive flag,
//! project link, new versions and deletion (the Settings dialog), and who may open it (the
//! Share dialog). Each form calls the same core use case as the API; the dialogs offer only
//! what the caller's role allows (the core's [`access::may`]), and a refusal is said beside its
//! form with what was typed kept there. New versions go from the dialog's module straight to
//! `POST /api/reviews/{id}/import-html`, which shows the upload's progress.

use std::collections::HashMap;

use askama::Template;
use axum::Router;
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use docreview_api::requests::{MetaChange, OwnerChange, PageQuery, SharingChange, TitleChange};
use docreview_api::views::{MemberView, ProjectView, ReviewView, SharingView};
use docreview_core::Error;
use docreview_core::access::{self, Actor, DocumentAction};
use docreview_core::model::{AccessMode, GrantRole, Role};
use serde::Deserialize;

use crate::AppState;
use crate::web::error::{WebError, describe};
use crate::web::extract::{CsrfForm, OnReview, SignedIn};
use crate::web::htmx::{Htmx, HxRedirect};
use crate::web::paths;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::route::settings, get(settings))
        .route(paths::route::settings_title, post(rename))
        .route(paths::route::settings_tags, post(retag))
        .route(paths::route::settings_archive, post(archive))
        .route(paths::route::settings_project, post(link))
        .route(paths::route::settings_unlink, post(unlink))
        .route(paths::route::review_delete, post(delete))
        .route(paths::route::share, get(share))
        .route(paths::route::share_mode, post(share_mode))
        .route(paths::route::share_people, post(share_person))
        .route(paths::route::share_remove, post(unshare_person))
        .route(paths::route::share_owner, post(transfer))
}

/// The projects a page offers to choose from: the first 200 the caller may see (an
/// organization rarely has more; the API lists them all).
pub async fn project_choices(
    service: &docreview_core::service::Service,
    actor: &Actor,
) -> Result<Vec<ProjectView>, Error> {
    let first = PageQuery {
        limit: Some(200),
        cursor: None,
    };
    Ok(service.list_projects(actor, first).await?.projects)
}

/// What the caller may do to the document, as the core decides: which dialogs and which of
/// their forms the screen offers.
#[derive(Debug, Clone, Default)]
pub struct Offered(Vec<DocumentAction>);

impl Offered {
    pub fn of(actor: &Actor, role: Role) -> Offered {
        use DocumentAction as A;
        Offered(
            [
                A::Rename,
                A::ChangeMeta,
                A::AddVersion,
                A::Delete,
                A::ReadSharing,
                A::ChangeSharing,
                A::TransferOwnership,
                A::LinkProject,
                A::UnlinkProject,
            ]
            .into_iter()
            .filter(|action| access::may(actor, role, *action))
            .collect(),
        )
    }

    fn has(&self, action: DocumentAction) -> bool {
        self.0.contains(&action)
    }

    pub fn rename(&self) -> bool {
        self.has(DocumentAction::Rename)
    }

    pub fn change_meta(&self) -> bool {
        self.has(DocumentAction::ChangeMeta)
    }

    pub fn add_version(&self) -> bool {
        self.has(DocumentAction::AddVersion)
    }

    pub fn delete(&self) -> bool {
        self.has(DocumentAction::Delete)
    }

    pub fn read_sharing(&self) -> bool {
        self.has(DocumentAction::ReadSharing)
    }

    pub fn change_sharing(&self) -> bool {
        self.has(DocumentAction::ChangeSharing)
    }

    pub fn transfer(&self) -> bool {
        self.has(DocumentAction::TransferOwnership)
    }

    pub fn link_project(&self) -> bool {
        self.has(DocumentAction::LinkProject)
    }

    pub fn unlink_project(&self) -> bool {
        self.has(DocumentAction::UnlinkProject)
    }

    /// Whether the Settings dialog has anything to offer.
    pub fn any_setting(&self) -> bool {
        self.0.iter().any(|action| {
            !matches!(
                action,
                DocumentAction::ReadSharing
                    | DocumentAction::ChangeSharing
                    | DocumentAction::TransferOwnership
            )
        })
    }
}

/// A refused form, offered again: which form, the core's reason, and what was typed.
#[derive(Debug, Default)]
struct Refusal {
    form: &'static str,
    message: String,
    typed: HashMap<&'static str, String>,
}

impl Refusal {
    fn new(form: &'static str, typed: &[(&'static str, &str)]) -> Refusal {
        Refusal {
            form,
            message: String::new(),
            typed: typed.iter().map(|(k, v)| (*k, (*v).to_string())).collect(),
        }
    }
}

/// The Settings dialog's body.
#[derive(Template)]
#[template(path = "review/settings.html")]
struct SettingsFragment {
    review: ReviewView,
    offered: Offered,
    /// Tags in use elsewhere that this document does not carry yet.
    suggested_tags: Vec<String>,
    projects: Vec<ProjectView>,
    /// What the last write did, said at the top.
    done: Option<&'static str>,
    refusal: Option<Refusal>,
}

/// The Share dialog's body.
#[derive(Template)]
#[template(path = "review/share.html")]
struct ShareFragment {
    review: ReviewView,
    offered: Offered,
    sharing: SharingView,
    /// The caller's user id (their own row says "you").
    viewer_id: String,
    /// Members who may be added or made owner (empty when the caller cannot change sharing).
    members: Vec<MemberView>,
    done: Option<&'static str>,
    refusal: Option<Refusal>,
}

/// What the templates ask of a fragment with forms.
trait Forms {
    fn refusal(&self) -> Option<&Refusal>;

    /// Whether the fragment shows `form` (a refusal is said beside it).
    fn shows(&self, form: &str) -> bool;

    /// A refusal whose form is no longer shown (the caller's role changed meanwhile): said at
    /// the top instead.
    fn unplaced(&self) -> Option<&str> {
        self.refusal()
            .filter(|refusal| !self.shows(refusal.form))
            .map(|refusal| refusal.message.as_str())
    }

    /// The reason `form` was refused, if it was.
    fn refused(&self, form: &str) -> Option<&str> {
        self.refusal()
            .filter(|refusal| refusal.form == form)
            .map(|refusal| refusal.message.as_str())
    }

    /// What a field shows: what was typed into it before a refusal, else `current`.
    fn value<'a>(&'a self, form: &str, field: &str, current: &'a str) -> &'a str {
        self.refusal()
            .filter(|refusal| refusal.form == form)
            .and_then(|refusal| refusal.typed.get(field))
            .map_or(current, String::as_str)
    }
}

impl Forms for SettingsFragment {
    fn refusal(&self) -> Option<&Refusal> {
        self.refusal.as_ref()
    }

    fn shows(&self, form: &str) -> bool {
        let offered = &self.offered;
        match form {
            "title" => offered.rename(),
            "tags" | "archive" => offered.change_meta(),
            "project" => offered.link_project() && self.review.project.is_none(),
            "unlink" => self.review.project.is_some(),
            "delete" => offered.delete(),
            _ => false,
        }
    }
}

impl Forms for ShareFragment {
    fn refusal(&self) -> Option<&Refusal> {
        self.refusal.as_ref()
    }

    fn shows(&self, form: &str) -> bool {
        match form {
            "mode" | "add" | "change" | "remove" => self.offered.change_sharing(),
            "owner" => self.offered.transfer(),
            _ => false,
        }
    }
}

#[allow(
    clippy::unused_self,
    reason = "called by the askama template as methods of its context"
)]
impl SettingsFragment {
    fn tags_text(&self) -> String {
        self.review.tags.join(", ")
    }

    fn latest_label(&self) -> &str {
        self.review
            .source
            .versions
            .last()
            .map_or("", |version| version.label.as_str())
    }

    fn next_label(&self) -> String {
        format!("v{}", self.review.source.versions.len() + 1)
    }

    fn comment_count(&self) -> usize {
        self.review.comments.len()
    }
}

#[allow(
    clippy::unused_self,
    reason = "called by the askama template as methods of its context"
)]
impl ShareFragment {
    fn restricted(&self) -> bool {
        self.sharing.mode == AccessMode::Restricted
    }

    fn checked(&self, mode: &str) -> bool {
        self.value("mode", "mode", self.sharing.mode.as_str()) == mode
    }

    /// A shared person's name, when they are a member we know.
    fn name_of(&self, email: &str) -> Option<&str> {
        self.members
            .iter()
            .find(|member| member.email == email)
            .map(|member| member.display_name.as_str())
    }
}

/// One request's context: who asks, about which document, whether htmx sent it.
struct Request {
    state: AppState,
    signed_in: SignedIn,
    review_id: String,
    htmx: Htmx,
}

impl FromRequestParts<AppState> for Request {
    type Rejection = WebError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let on = OnReview::from_request_parts(parts, state).await?;
        Ok(Request {
            state: state.clone(),
            signed_in: on.signed_in,
            review_id: on.review_id,
            htmx: on.htmx,
        })
    }
}

impl Request {
    fn core(&self, error: Error) -> WebError {
        self.htmx.core(error)
    }

    async fn review(&self) -> Result<ReviewView, WebError> {
        self.state
            .service
            .get_review(&self.signed_in.actor, &self.review_id, false)
            .await
            .map_err(|error| self.core(error))
    }

    /// The Settings dialog as the document now stands, with `done` said or `refusal` offered.
    async fn settings(
        &self,
        done: Option<&'static str>,
        refusal: Option<Refusal>,
    ) -> Result<Response, WebError> {
        let actor = &self.signed_in.actor;
        let review = self.review().await?;
        let offered = Offered::of(actor, review.role);
        let suggested_tags = if offered.change_meta() {
            let known = self
                .state
                .service
                .known_tags(actor)
                .await
                .map_err(|error| self.core(error))?;
            known
                .into_iter()
                .filter(|tag| !review.tags.contains(tag))
                .collect()
        } else {
            Vec::new()
        };
        let projects = if offered.link_project() && review.project.is_none() {
            project_choices(&self.state.service, actor)
                .await
                .map_err(|error| self.core(error))?
        } else {
            Vec::new()
        };
        let status = refusal_status(refusal.as_ref());
        let fragment = SettingsFragment {
            review,
            offered,
            suggested_tags,
            projects,
            done,
            refusal,
        };
        self.answer(status, &fragment)
    }

    /// The Share dialog as the document now stands.
    async fn share(
        &self,
        done: Option<&'static str>,
        refusal: Option<Refusal>,
    ) -> Result<Response, WebError> {
        let actor = &self.signed_in.actor;
        let service = &self.state.service;
        let core = |error| self.core(error);
        let review = self.review().await?;
        let offered = Offered::of(actor, review.role);
        let sharing = service
            .sharing(actor, &self.review_id)
            .await
            .map_err(core)?;
        let members = if offered.change_sharing() {
            service
                .share_suggestions(actor, &self.review_id)
                .await
                .map_err(core)?
        } else {
            Vec::new()
        };
        let status = refusal_status(refusal.as_ref());
        let fragment = ShareFragment {
            review,
            offered,
            sharing,
            viewer_id: actor.id().to_string(),
            members,
            done,
            refusal,
        };
        self.answer(status, &fragment)
    }

    fn answer(&self, status: StatusCode, fragment: &impl Template) -> Result<Response, WebError> {
        Ok((status, self.htmx.fragment(fragment)?).into_response())
    }

    /// After a write: the dialog with `done` said, or with the refusal beside its form. A
    /// failure of the service itself is the app's usual notice.
    async fn after<T>(
        &self,
        outcome: Result<T, Error>,
        done: &'static str,
        refused: Refusal,
        dialog: Dialog,
    ) -> Result<Response, WebError> {
        let refusal = match outcome {
            Ok(_) => None,
            Err(error @ (Error::Internal(_) | Error::Unavailable(_))) => {
                return Err(self.core(error));
            }
            Err(error) => Some(Refusal {
                message: describe(&error).2,
                ..refused
            }),
        };
        let done = refusal.is_none().then_some(done);
        match dialog {
            Dialog::Settings => self.settings(done, refusal).await,
            Dialog::Share => self.share(done, refusal).await,
        }
    }
}

#[derive(Clone, Copy)]
enum Dialog {
    Settings,
    Share,
}

fn refusal_status(refusal: Option<&Refusal>) -> StatusCode {
    // 422: htmx swaps it in place (the page's responseHandling) while the request still reads
    // as refused.
    if refusal.is_some() {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::OK
    }
}

async fn settings(request: Request) -> Result<Response, WebError> {
    request.settings(None, None).await
}

#[derive(Deserialize)]
struct TitleForm {
    title: String,
}

async fn rename(
    request: Request,
    CsrfForm(form): CsrfForm<TitleForm>,
) -> Result<Response, WebError> {
    let outcome = request
        .state
        .service
        .rename_review(
            &request.signed_in.actor,
            &request.review_id,
            TitleChange {
                title: form.title.clone(),
            },
        )
        .await;
    let refused = Refusal::new("title", &[("title", &form.title)]);
    request
        .after(outcome, "Renamed.", refused, Dialog::Settings)
        .await
}

#[derive(Deserialize)]
struct TagsForm {
    #[serde(default)]
    tags: String,
}

async fn retag(request: Request, CsrfForm(form): CsrfForm<TagsForm>) -> Result<Response, WebError> {
    let tags = form
        .tags
        .split(',')
        .map(str::trim)
        .filter(|tag| !tag.is_empty())
        .map(str::to_string)
        .collect();
    let outcome = request
        .state
        .service
        .change_meta(
            &request.signed_in.actor,
            &request.review_id,
            MetaChange {
                tags: Some(tags),
                archived: None,
            },
        )
        .await;
    let refused = Refusal::new("tags", &[("tags", &form.tags)]);
    request
        .after(outcome, "Tags saved.", refused, Dialog::Settings)
        .await
}

#[derive(Deserialize)]
struct ArchiveForm {
    archived: bool,
}

async fn archive(
    request: Request,
    CsrfForm(form): CsrfForm<ArchiveForm>,
) -> Result<Response, WebError> {
    let outcome = request
        .state
        .service
        .change_meta(
            &request.signed_in.actor,
            &request.review_id,
            MetaChange {
                tags: None,
                archived: Some(form.archived),
            },
        )
        .await;
    let done = if form.archived {
        "Archived: it is listed under Archived, and stays readable and open to comments."
    } else {
        "Restored from the archive."
    };
    request
        .after(
            outcome,
            done,
            Refusal::new("archive", &[]),
            Dialog::Settings,
        )
        .await
}

#[derive(Deserialize)]
struct ProjectForm {
    #[serde(default)]
    project: String,
}

async fn link(
    request: Request,
    CsrfForm(form): CsrfForm<ProjectForm>,
) -> Result<Response, WebError> {
    let outcome = if form.project.is_empty() {
        Err(Error::invalid("choose a project to link it to"))
    } else {
        request
            .state
            .service
            .link_project(&request.signed_in.actor, &form.project, &request.review_id)
            .await
    };
    let refused = Refusal::new("project", &[("project", &form.project)]);
    request
        .after(outcome, "Linked to the project.", refused, Dialog::Settings)
        .await
}

async fn unlink(
    request: Request,
    CsrfForm(form): CsrfForm<ProjectForm>,
) -> Result<Response, WebError> {
    let outcome = request
        .state
        .service
        .unlink_project(&request.signed_in.actor, &form.project, &request.review_id)
        .await;
    request
        .after(
            outcome,
            "Unlinked from the project.",
            Refusal::new("unlink", &[]),
            Dialog::Settings,
        )
        .await
}

#[derive(Deserialize)]
struct DeleteForm {}

/// Deletes the document, then the browser goes to the documents list, which says so.
async fn delete(request: Request, CsrfForm(_): CsrfForm<DeleteForm>) -> Result<Response, WebError> {
    let outcome = request
        .state
        .service
        .delete_review(&request.signed_in.actor, &request.review_id)
        .await;
    match outcome {
        Ok(()) => Ok((
            StatusCode::NO_CONTENT,
            HxRedirect(format!("{}?deleted=1", paths::home())),
            (),
        )
            .into_response()),
        refused => {
            request
                .after(refused, "", Refusal::new("delete", &[]), Dialog::Settings)
                .await
        }
    }
}

async fn share(request: Request) -> Result<Response, WebError> {
    request.share(None, None).await
}

#[derive(Deserialize)]
struct ModeForm {
    #[serde(default)]
    mode: String,
}

async fn share_mode(
    request: Request,
    CsrfForm(form): CsrfForm<ModeForm>,
) -> Result<Response, WebError> {
    let outcome = match AccessMode::parse(&form.mode) {
        Some(mode) => {
            request
                .state
                .service
                .change_sharing(
                    &request.signed_in.actor,
                    &request.review_id,
                    SharingChange {
                        mode: Some(mode),
                        allowed_users: None,
                    },
                )
                .await
        }
        None => Err(Error::invalid("choose who can open it")),
    };
    let refused = Refusal::new("mode", &[("mode", &form.mode)]);
    request
        .after(outcome, "Saved.", refused, Dialog::Share)
        .await
}

#[derive(Deserialize)]
struct PersonForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    role: String,
    /// `add` (the add form) or `change` (a listed person's role).
    #[serde(default)]
    form: String,
}

async fn share_person(
    request: Request,
    CsrfForm(form): CsrfForm<PersonForm>,
) -> Result<Response, WebError> {
    let outcome = match GrantRole::parse(&form.role) {
        Some(role) => {
            request
                .state
                .service
                .share_with(
                    &request.signed_in.actor,
                    &request.review_id,
                    &form.email,
                    Some(role),
                )
                .await
        }
        None => Err(Error::invalid("choose a role: editor or viewer")),
    };
    let (which, done) = if form.form == "change" {
        ("change", "Role changed.")
    } else {
        ("add", "Added.")
    };
    let refused = Refusal::new(which, &[("email", &form.email), ("role", &form.role)]);
    request.after(outcome, done, refused, Dialog::Share).await
}

#[derive(Deserialize)]
struct EmailForm {
    #[serde(default)]
    email: String,
}

async fn unshare_person(
    request: Request,
    CsrfForm(form): CsrfForm<EmailForm>,
) -> Result<Response, WebError> {
    let outcome = request
        .state
        .service
        .share_with(
            &request.signed_in.actor,
            &request.review_id,
            &form.email,
            None,
        )
        .await;
    let refused = Refusal::new("remove", &[("email", &form.email)]);
    request
        .after(outcome, "Removed.", refused, Dialog::Share)
        .await
}

async fn transfer(
    request: Request,
    CsrfForm(form): CsrfForm<EmailForm>,
) -> Result<Response, WebError> {
    let outcome = request
        .state
        .service
        .transfer_owner(
            &request.signed_in.actor,
            &request.review_id,
            OwnerChange {
                email: form.email.clone(),
            },
        )
        .await;
    let refused = Refusal::new("owner", &[("email", &form.email)]);
    request
        .after(outcome, "Ownership transferred.", refused, Dialog::Share)
        .await
}
