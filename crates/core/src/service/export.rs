//! `GET /api/reviews/{id}/export`: a review written out in one of the formats of
//! [`crate::export`]; `POST /api/reviews/{id}/import-annotations`: annotations made elsewhere
//! ([`crate::import`]) written in.

use std::collections::HashMap;

use docreview_api::requests::{NewComment, NewReply, StatusChange};
use docreview_api::views::{AnnotationImport, ImportFailure};
use docreview_api::wire::Locator;
use docreview_api::words::{CommentStatus, ExportFormat, ImportItemError, Role};

use super::Service;
use crate::access::{self, Actor, Operation};
use crate::clock::rfc3339;
use crate::error::{Error, Result};
use crate::export::{self, Export, Exported, Person, VersionSource};
use crate::import;

impl Service {
    /// The review as the caller reads it, in `format` (`w3c`, `native`, `csv`, `markdown`).
    /// The lossless `native` file names people by email and holds every version's HTML: it is
    /// for the document's editors and owner, who could rebuild it anyway.
    pub async fn export_review(
        &self,
        actor: &Actor,
        review_id: &str,
        format: Option<&str>,
    ) -> Result<Export> {
        access::permit(actor, Operation::Read)?;
        let format = parse_format(format)?;
        // One read of the document's records gives both the caller's view and the versions.
        let state = self.state_of(review_id).await?;
        let (role, project_role) = self.access_of(actor, &state.head).await?;
        if format == ExportFormat::Native {
            access::require_role(role, Role::Editor, "format=native")?;
        }
        let review = self.view_of(actor, &state, role, project_role, false);
        let versions = &state.versions;
        let sections = versions
            .iter()
            .find(|version| version.id == review.latest_version_id)
            .map(|version| version.sections.clone())
            .unwrap_or_default();
        let mut people = HashMap::new();
        let mut sources = Vec::new();
        if format == ExportFormat::Native {
            for user in everyone_named(&review) {
                if let Some(account) = self.store.account_by_id(&user).await? {
                    people.insert(
                        user,
                        Person {
                            email: account.email,
                            display_name: account.user.display_name,
                        },
                    );
                }
            }
            for version in versions {
                let (_, html) = self
                    .store
                    .version_html(review_id, &version.id)
                    .await?
                    .ok_or(Error::NotFound("version"))?;
                sources.push(VersionSource {
                    version_id: version.id.clone(),
                    label: version.label.clone(),
                    created_at: version.created_at,
                    html: String::from_utf8_lossy(&html).into_owned(),
                });
            }
        }
        let exported_at = rfc3339(self.clock.now());
        Ok(export::write(
            format,
            &Exported {
                review: &review,
                sections: &sections,
                people: &people,
                versions: &sources,
                exported_at: &exported_at,
            },
        ))
    }
}

fn parse_format(format: Option<&str>) -> Result<ExportFormat> {
    let choices = || {
        ExportFormat::ALL
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match format {
        None | Some("") => Err(Error::invalid(format!(
            "format is required: one of {}",
            choices()
        ))),
        Some(word) => ExportFormat::parse(word).ok_or_else(|| {
            Error::invalid(format!(
                "format `{word}` is not known: one of {}",
                choices()
            ))
        }),
    }
}

/// The ids of the owner and of everyone who wrote or changed something in the discussion.
fn everyone_named(review: &docreview_api::views::ReviewView) -> Vec<String> {
    let mut ids = vec![review.owner.id.clone()];
    for comment in &review.comments {
        ids.push(comment.author.id.clone());
        ids.extend(comment.thread.iter().map(|m| m.author.id.clone()));
        ids.extend(comment.status_events.iter().map(|e| e.by.id.clone()));
    }
    ids.sort();
    ids.dedup();
    ids
}

impl Service {
    /// `POST /api/reviews/{id}/import-annotations`: annotations from a W3C Web Annotation file
    /// or a Hypothesis export, written as the caller's comments and replies on the latest
    /// version (who wrote each, and when, kept in its body). An annotation that cannot be
    /// written (not a comment, a quote not in the text, a reply whose thread did not come in)
    /// is reported by its place in the file and the rest are written; a refusal of the whole
    /// request (the document, the caller's rights) stops it, keeping what was written.
    pub async fn import_annotations(
        &self,
        actor: &Actor,
        review_id: &str,
        file: &serde_json::Value,
    ) -> Result<AnnotationImport> {
        access::permit(actor, Operation::Comment)?;
        let (head, _) = self.visible(actor, review_id).await?;
        let list = import::annotations(file).map_err(Error::invalid)?;
        let mut report = AnnotationImport {
            imported: 0,
            replies: 0,
            comments_revision: head.review.comments_revision,
            failed: Vec::new(),
        };
        let fail = |report: &mut AnnotationImport, index, id: &Option<String>, error, message| {
            report.failed.push(ImportFailure {
                index,
                id: id.clone(),
                error,
                message,
            });
        };
        // The comment each annotation of the file became: its own, or its thread's.
        let mut threads: HashMap<String, String> = HashMap::new();
        let mut replies = Vec::new();
        for (index, annotation) in list.iter().enumerate() {
            let incoming = match import::read(annotation) {
                Ok(incoming) => incoming,
                Err(message) => {
                    let id = annotation
                        .get("id")
                        .and_then(|id| id.as_str())
                        .map(str::to_string);
                    fail(
                        &mut report,
                        index,
                        &id,
                        ImportItemError::NotAComment,
                        message,
                    );
                    continue;
                }
            };
            if incoming.body.trim().is_empty() {
                let message = "the annotation has no text to write".to_string();
                fail(
                    &mut report,
                    index,
                    &incoming.source_id,
                    ImportItemError::NotAComment,
                    message,
                );
                continue;
            }
            if incoming.reply_to.is_some() {
                replies.push((index, incoming));
                continue;
            }
            let input = NewComment {
                body: import::body_with_attribution(&incoming),
                category: incoming.category,
                locator: incoming.quote.clone().map(|quote| Locator {
                    quote: Some(quote),
                    ..Locator::default()
                }),
                base_comments_revision: None,
                suggestion: None,
            };
            match self.add_comment(actor, review_id, input).await {
                Ok(written) => {
                    report.imported += 1;
                    report.comments_revision = written.comments_revision;
                    if let Some(id) = &incoming.source_id {
                        threads.insert(id.clone(), written.comment.id.clone());
                    }
                    if incoming.status == Some(CommentStatus::Closed) {
                        let change = StatusChange {
                            status: CommentStatus::Closed,
                            base_comments_revision: None,
                            base_thread_revision: None,
                        };
                        let closed = self
                            .set_status(actor, review_id, &written.comment.id, change)
                            .await?;
                        report.comments_revision = closed.comments_revision;
                    }
                }
                Err(error) => {
                    let (code, message) = item_error(error)?;
                    fail(&mut report, index, &incoming.source_id, code, message);
                }
            }
        }
        for (index, incoming) in replies {
            let parent = incoming.reply_to.as_deref().unwrap_or_default();
            let Some(comment_id) = threads.get(parent).cloned() else {
                let message = format!("it answers `{parent}`, which was not imported");
                fail(
                    &mut report,
                    index,
                    &incoming.source_id,
                    ImportItemError::ParentNotImported,
                    message,
                );
                continue;
            };
            let input = NewReply {
                body: import::body_with_attribution(&incoming),
                run_id: None,
                base_comments_revision: None,
                base_thread_revision: None,
            };
            match self.reply(actor, review_id, &comment_id, input).await {
                Ok(written) => {
                    report.replies += 1;
                    report.comments_revision = written.comments_revision;
                    if let Some(id) = incoming.source_id.clone() {
                        threads.insert(id, comment_id);
                    }
                }
                Err(error) => {
                    let (code, message) = item_error(error)?;
                    fail(&mut report, index, &incoming.source_id, code, message);
                }
            }
        }
        Ok(report)
    }
}

/// What an annotation's own refusal says in the report; any other refusal stops the import.
fn item_error(error: Error) -> Result<(ImportItemError, String)> {
    match error {
        Error::QuoteNotFound { message, .. } => Ok((ImportItemError::QuoteNotFound, message)),
        Error::InvalidRequest(message) => Ok((ImportItemError::InvalidRequest, message)),
        other => Err(other),
    }
}
