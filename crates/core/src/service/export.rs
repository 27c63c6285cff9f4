//! `GET /api/reviews/{id}/export`: a review written out in one of the formats of
//! [`crate::export`].

use std::collections::HashMap;

use docreview_api::words::{ExportFormat, Role};

use super::Service;
use crate::access::{self, Actor, Operation};
use crate::clock::rfc3339;
use crate::error::{Error, Result};
use crate::export::{self, Export, Exported, Person, VersionSource};

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
        let review = self.get_review(actor, review_id, false).await?;
        if format == ExportFormat::Native {
            access::require_role(review.role, Role::Editor, "format=native")?;
        }
        let versions = self.store.versions(review_id).await?;
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
            for version in &versions {
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
