//! Documents: create, upload, list, read, versions, structure and bundles.

use std::sync::Arc;

use docreview_api::requests::{CreateReview, ListQuery};
use docreview_api::views::{DomContext, ReviewList, ReviewSummaryView, ReviewView};

use super::manage::grants_of;
use super::{Service, check_length, page, parse_html};
use crate::access::{self, Actor, DocumentAction, Operation};
use crate::anchor;
use crate::clock::rfc3339;
use crate::error::{Error, Result};
use crate::ids::is_valid_client_review_id;
use crate::model::{
    AccessGrant, AccessMode, Membership, Millis, ProjectRole, ReviewHead, ReviewRecord,
    ReviewState, ReviewSummaryRecord, Role, Scope, Section, SectionSpec, VersionRecord,
    WebhookEventType,
};
use crate::outbox::Sink;
use crate::store::{NewReview, ReviewQuery, StoreError, VersionWrite};
use crate::texts::{UnshownImage, VersionText, source_hash};
use crate::view::{self, Viewer};

const MAX_TAGS: usize = 32;
/// Ids that would be shadowed by a route under `/api/reviews/`.
const RESERVED_REVIEW_IDS: &[&str] = &["import-html"];

/// `POST /api/reviews/import-html`.
#[derive(Debug, Default)]
pub struct HtmlUpload {
    pub html: Vec<u8>,
    pub file_name: Option<String>,
    pub title: Option<String>,
    pub label: Option<String>,
    pub project: Option<String>,
    pub tags: Vec<String>,
}

pub use docreview_api::words::VersionMode;

/// `POST /api/reviews/{id}/import-html`.
#[derive(Debug)]
pub struct VersionUpload {
    pub html: Vec<u8>,
    pub label: Option<String>,
    pub mode: VersionMode,
    pub base_version_id: Option<String>,
}

/// A list or search row as the caller sees it; `None` when they cannot see it at all.
pub(crate) fn review_summary(actor: &Actor, row: ReviewSummaryRecord) -> Option<ReviewSummaryView> {
    let review = row.review;
    let role = access::role_with_grant(
        actor,
        &review.owner_id,
        review.access_mode,
        row.grant,
        row.project_role,
    )?;
    Some(ReviewSummaryView {
        review_id: review.id,
        title: review.title,
        tags: review.tags,
        archived: review.archived,
        owner: row.owner,
        role,
        created_at: rfc3339(review.created_at),
        updated_at: rfc3339(review.updated_at),
        latest_version_id: review.latest_version_id,
        comment_count: row.comment_count,
        open_comment_count: row.open_comment_count,
        project: row
            .project
            .as_ref()
            .map(|project| view::project_link(project, row.project_role)),
    })
}

/// A new document's title when none is given (API and web alike): its `<title>`, then its
/// first `<h1>`, then the uploaded file's name without its extension, then its first heading
/// of any level; "Untitled" for a document with none of these. Cut to the title's 300
/// characters.
fn default_title(text: &VersionText, file_name: Option<&str>) -> String {
    let file_stem = file_name
        .map(|name| name.rsplit_once('.').map_or(name, |(stem, _)| stem).trim())
        .filter(|stem| !stem.is_empty());
    let heading = |level: Option<u8>| {
        text.sections
            .iter()
            .find(|section| level.is_none_or(|level| section.level == level))
            .map(|section| section.text.as_str())
            .filter(|heading| !heading.is_empty())
    };
    let title = text
        .title
        .as_deref()
        .or_else(|| heading(Some(1)))
        .or(file_stem)
        .or_else(|| heading(None))
        .unwrap_or("Untitled");
    title.chars().take(300).collect()
}

/// What a new document is made of, whichever way it arrived.
struct NewDocument {
    review_id: Option<String>,
    title: Option<String>,
    /// The uploaded file's name, the title's last resort (see [`default_title`]).
    file_name: Option<String>,
    html: Vec<u8>,
    label: Option<String>,
    project: Option<String>,
    tags: Vec<String>,
    mode: Option<AccessMode>,
    grants: Vec<AccessGrant>,
    structure: Option<Vec<SectionSpec>>,
}

impl Service {
    pub async fn create_review(&self, actor: &Actor, input: CreateReview) -> Result<ReviewView> {
        access::permit(actor, Operation::Deliver)?;
        let review = input.review;
        let (mode, grants) = match review.access {
            Some(access_input) => {
                let entries = access_input.allowed_users.unwrap_or_default();
                if !entries.is_empty() {
                    access::require_scope(actor, Scope::Access)?;
                }
                (access_input.mode, grants_of(entries)?)
            }
            None => (None, Vec::new()),
        };
        let source = review.source.unwrap_or_default();
        self.create_document(
            actor,
            NewDocument {
                review_id: review.review_id,
                title: review.title,
                file_name: None,
                html: source.html.unwrap_or_default().into_bytes(),
                label: source.label,
                project: input.project,
                tags: review.tags.unwrap_or_default(),
                mode,
                grants,
                structure: review.structure.map(|s| s.sections),
            },
        )
        .await
    }

    pub async fn import_html(&self, actor: &Actor, upload: HtmlUpload) -> Result<ReviewView> {
        access::permit(actor, Operation::Deliver)?;
        self.create_document(
            actor,
            NewDocument {
                review_id: None,
                title: upload.title,
                file_name: upload.file_name,
                html: upload.html,
                label: upload.label,
                project: upload.project,
                tags: upload.tags,
                mode: None,
                grants: Vec::new(),
                structure: None,
            },
        )
        .await
    }

    async fn create_document(&self, actor: &Actor, doc: NewDocument) -> Result<ReviewView> {
        self.check_html(&doc.html)?;
        if actor.account.membership == Membership::External && doc.project.is_none() {
            return Err(Error::ProjectRequired);
        }
        let review_id = match (&doc.project, doc.review_id) {
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    "review.reviewId must not be sent together with project",
                ));
            }
            (_, Some(id)) if RESERVED_REVIEW_IDS.contains(&id.as_str()) => {
                return Err(Error::invalid(format!(
                    "`{id}` is reserved; choose another review.reviewId"
                )));
            }
            (_, Some(id)) if !is_valid_client_review_id(&id) => {
                return Err(Error::invalid(
                    "review.reviewId must match ^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$",
                ));
            }
            (_, Some(id)) => id,
            (_, None) => self.new_id("rv_", self.clock.now()),
        };
        // Projects arrive with the project snapshot (`admin import-projects`).
        let project_code = match &doc.project {
            Some(code) => {
                let project = self.project_by_code(code).await?;
                self.require_deliverable(actor, &project).await?;
                Some(project.code)
            }
            None => None,
        };
        let tags = normalize_tags(doc.tags)?;
        if let Some(sections) = &doc.structure {
            for section in sections {
                check_length("structure section id", &section.id, 1, 200)?;
                if !(1..=6).contains(&section.level) {
                    return Err(Error::invalid("structure section level must be 1 to 6"));
                }
            }
        }
        let text = parse_html(doc.html.clone()).await?;
        let title = match doc.title {
            Some(title) => title.trim().to_string(),
            None => default_title(&text, doc.file_name.as_deref()),
        };
        check_length("title", &title, 1, 300)?;
        let label = doc.label.unwrap_or_else(|| "v1".to_string());
        check_length("label", &label, 1, 100)?;
        let now = self.clock.now();
        let hash = source_hash(&doc.html);
        let version = VersionRecord {
            id: self.new_id("ver_", now),
            review_id: review_id.clone(),
            label,
            created_at: now,
            source_hash: hash.clone(),
            sections: text.sections.clone(),
        };
        let record = ReviewRecord {
            id: review_id.clone(),
            title,
            owner_id: actor.id().to_string(),
            access_mode: doc.mode.unwrap_or(AccessMode::Link),
            tags,
            archived: false,
            comments_revision: 0,
            structure_revision: 1,
            change_seq: 1,
            created_at: now,
            updated_at: now,
            latest_version_id: version.id.clone(),
            latest_source_hash: hash.clone(),
            structure: doc.structure,
            project_code,
            finalized: None,
        };
        let mut created = self.event_on(WebhookEventType::ReviewCreated, actor, &record, now);
        created.version_id = Some(version.id.clone());
        let new = NewReview {
            review: record,
            grants: doc.grants,
            version,
            html: doc.html,
            search_text: text.search_text(),
            outbox: vec![created.entry()],
        };
        match self.store.create_review(new).await {
            Ok(()) => self.wake(Sink::Event),
            Err(StoreError::AlreadyExists(_)) => {
                return Err(Error::AlreadyExists(format!(
                    "a document with id `{review_id}` already exists"
                )));
            }
            Err(other) => return Err(other.into()),
        }
        self.texts.insert(&hash, Arc::new(text));
        self.get_review(actor, &review_id, false).await
    }

    pub async fn get_review(
        &self,
        actor: &Actor,
        review_id: &str,
        include_deleted: bool,
    ) -> Result<ReviewView> {
        access::permit(actor, Operation::Read)?;
        let state = self.state_of(review_id).await?;
        let (role, project_role) = self.access_of(actor, &state.head).await?;
        if include_deleted {
            access::require_role(role, Role::Editor, "includeDeleted")?;
        }
        Ok(self.view_of(actor, &state, role, project_role, include_deleted))
    }

    /// The document as it stands after a change the caller just made, for the write's answer.
    /// Rendered with the caller's current role or, when the change took their access away
    /// (unlinking the project that gave it), with the role they made the change with. Part of
    /// the write, so it needs no read permission of its own (the manage token has none).
    pub(crate) async fn review_after_change(
        &self,
        actor: &Actor,
        review_id: &str,
        role_before: Role,
    ) -> Result<ReviewView> {
        let state = self.state_of(review_id).await?;
        let (role, project_role) = match self.access_of(actor, &state.head).await {
            Ok(access) => access,
            Err(Error::NotFound(_)) => (role_before, None),
            Err(other) => return Err(other),
        };
        Ok(self.view_of(actor, &state, role, project_role, false))
    }

    pub(super) async fn state_of(&self, review_id: &str) -> Result<ReviewState> {
        self.store
            .review_state(review_id)
            .await?
            .ok_or(Error::NotFound("document"))
    }

    pub(super) fn view_of(
        &self,
        actor: &Actor,
        state: &ReviewState,
        role: Role,
        project_role: Option<ProjectRole>,
        include_deleted: bool,
    ) -> ReviewView {
        let viewer = Viewer {
            user_id: actor.id(),
            reactor: actor.id(),
            now: self.clock.now(),
            include_deleted,
        };
        let project = state
            .project
            .as_ref()
            .map(|project| view::project_link(project, project_role));
        view::review_view(state, role, project, &viewer)
    }

    pub async fn list_reviews(&self, actor: &Actor, query: ListQuery) -> Result<ReviewList> {
        access::permit(actor, Operation::Read)?;
        let limit = page::limit(query.limit)?;
        let owner_id = match query.owner.as_deref() {
            None => None,
            Some("me") => Some(actor.id().to_string()),
            Some(_) => return Err(Error::invalid("owner accepts only `me`")),
        };
        let after = query.cursor.as_deref().map(decode_cursor).transpose()?;
        let Some(visibility) = access::visibility(actor) else {
            return Ok(ReviewList {
                reviews: Vec::new(),
                next_cursor: None,
            });
        };
        let rows = self
            .store
            .list_reviews(ReviewQuery {
                visibility,
                title_contains: query.q.filter(|q| !q.trim().is_empty()),
                tag: query.tag,
                archived: query.archived,
                project: query.project,
                owner_id,
                after,
                limit: limit + 1,
            })
            .await?;
        let more = rows.len() > limit;
        let last_key = rows
            .get(limit.min(rows.len()).saturating_sub(1))
            .map(|row| (row.review.updated_at, row.review.id.clone()));
        let reviews = rows
            .into_iter()
            .take(limit)
            .filter_map(|row| review_summary(actor, row))
            .collect();
        let next_cursor = if more {
            last_key.map(|(at, id)| encode_cursor(at, &id))
        } else {
            None
        };
        Ok(ReviewList {
            reviews,
            next_cursor,
        })
    }

    /// The images of a version its readers will not see (see [`VersionText::unshown_images`]),
    /// read from the cached text: what the review screen warns about after an upload.
    pub async fn unshown_images(
        &self,
        actor: &Actor,
        review_id: &str,
        version_id: &str,
    ) -> Result<Vec<UnshownImage>> {
        access::permit(actor, Operation::Read)?;
        self.visible(actor, review_id).await?;
        let version = self
            .store
            .version(review_id, version_id)
            .await?
            .ok_or(Error::NotFound("version"))?;
        let text = self
            .version_text(review_id, &version.id, &version.source_hash)
            .await?;
        Ok(text.unshown_images())
    }

    pub async fn dom_context(
        &self,
        actor: &Actor,
        review_id: &str,
        version_id: Option<&str>,
    ) -> Result<DomContext> {
        access::permit(actor, Operation::Read)?;
        let (head, _) = self.visible(actor, review_id).await?;
        let version_id = version_id.unwrap_or(&head.review.latest_version_id);
        let version = self
            .store
            .version(review_id, version_id)
            .await?
            .ok_or(Error::NotFound("version"))?;
        let sections = match (&head.review.structure, version.sections.is_empty()) {
            (Some(specs), true) => {
                let text = self
                    .version_text(review_id, &version.id, &version.source_hash)
                    .await?;
                sections_from_structure(specs, text.text.char_len())
            }
            _ => version.sections,
        };
        Ok(DomContext {
            review_id: head.review.id,
            version_id: version.id,
            structure_revision: head.review.structure_revision,
            sections,
        })
    }

    /// The HTML of a version, byte for byte as uploaded.
    pub async fn bundle(
        &self,
        actor: &Actor,
        review_id: &str,
        version_id: &str,
    ) -> Result<Vec<u8>> {
        access::permit(actor, Operation::Read)?;
        self.visible(actor, review_id).await?;
        let (_, html) = self
            .store
            .version_html(review_id, version_id)
            .await?
            .ok_or(Error::NotFound("version"))?;
        Ok(html)
    }

    /// Adds a version, or rewrites the latest one, and carries every comment's anchor onto it.
    pub async fn import_version(
        &self,
        actor: &Actor,
        review_id: &str,
        upload: VersionUpload,
    ) -> Result<ReviewView> {
        access::permit(actor, Operation::Deliver)?;
        self.check_html(&upload.html)?;
        if let Some(label) = &upload.label {
            check_length("label", label, 1, 100)?;
        }
        let (head, role) = self.visible(actor, review_id).await?;
        access::require_action(role, DocumentAction::AddVersion)?;
        let text = Arc::new(parse_html(upload.html.clone()).await?);
        let hash = source_hash(&upload.html);
        let base = upload.base_version_id.clone();
        let mut head = head;
        for _ in 0..super::MAX_ATTEMPTS {
            // A stale base is 409; an unknown one is 400.
            self.require_latest(&head, base.as_deref()).await?;
            let latest = self
                .store
                .version(review_id, &head.review.latest_version_id)
                .await?
                .ok_or(Error::NotFound("version"))?;
            let now = self.clock.now();
            let (version, append) = match upload.mode {
                VersionMode::AddVersion => {
                    let count = self.store.versions(review_id).await?.len();
                    let label = upload
                        .label
                        .clone()
                        .unwrap_or_else(|| format!("v{}", count + 1));
                    (
                        VersionRecord {
                            id: self.new_id("ver_", now),
                            review_id: review_id.to_string(),
                            label,
                            created_at: now,
                            source_hash: hash.clone(),
                            sections: text.sections.clone(),
                        },
                        true,
                    )
                }
                VersionMode::Replace => (
                    VersionRecord {
                        label: upload.label.clone().unwrap_or_else(|| latest.label.clone()),
                        source_hash: hash.clone(),
                        sections: text.sections.clone(),
                        ..latest.clone()
                    },
                    false,
                ),
            };
            let write = self
                .version_write(
                    actor,
                    &head,
                    &latest,
                    version,
                    append,
                    upload.html.clone(),
                    &text,
                    now,
                )
                .await?;
            match self.store.write_version(write).await {
                Ok(_) => {
                    self.wake(Sink::Event);
                    self.texts.insert(&hash, Arc::clone(&text));
                    return self.get_review(actor, review_id, false).await;
                }
                Err(StoreError::StaleVersion { latest }) if base.is_some() => {
                    return Err(Error::StaleVersion { latest });
                }
                Err(StoreError::StaleVersion { .. } | StoreError::RevisionConflict { .. }) => {
                    head = self.visible(actor, review_id).await?.0;
                }
                Err(other) => return Err(other.into()),
            }
        }
        Err(Error::Unavailable(
            "too much concurrent activity on this document; try again".into(),
        ))
    }

    /// The write that makes `version` the document's latest (appended) or rewrites the latest
    /// in place: every live comment re-anchored onto its text, the structure compared with
    /// `latest`'s, and an appended version announced. Shared by uploads and applied
    /// suggestions, which add what they close (`VersionWrite::closed`).
    #[allow(clippy::too_many_arguments)] // each is a different part of the one write
    pub(super) async fn version_write(
        &self,
        actor: &Actor,
        head: &ReviewHead,
        latest: &VersionRecord,
        version: VersionRecord,
        append: bool,
        html: Vec<u8>,
        text: &Arc<VersionText>,
        now: Millis,
    ) -> Result<VersionWrite> {
        let review_id = head.review.id.clone();
        let comments = self.store.live_comments(&review_id).await?;
        let structure = head.review.structure.clone();
        let target_version = version.id.clone();
        let moved_text = Arc::clone(text);
        let anchors = tokio::task::spawn_blocking(move || {
            comments
                .into_iter()
                .map(|comment| {
                    let moved = anchor::reanchor(
                        &comment.anchor,
                        &target_version,
                        &moved_text,
                        structure.as_deref(),
                    );
                    (comment.id, moved)
                })
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|error| Error::Internal(Box::new(error)))?;
        let structure_changed = !same_headings(&latest.sections, &version.sections);
        // Rewriting the latest body in place adds no version, so it announces none.
        let outbox = if append {
            let mut added = self.event_on(
                WebhookEventType::ReviewVersionAdded,
                actor,
                &head.review,
                now,
            );
            added.version_id = Some(version.id.clone());
            vec![added.entry()]
        } else {
            Vec::new()
        };
        Ok(VersionWrite {
            review_id,
            expected_latest_version_id: head.review.latest_version_id.clone(),
            expected_comments_revision: head.review.comments_revision,
            version,
            html,
            append,
            anchors,
            structure_changed,
            at: now,
            search_text: text.search_text(),
            outbox,
            closed: Vec::new(),
        })
    }

    pub(super) fn check_html(&self, html: &[u8]) -> Result<()> {
        if html.len() > self.settings.max_html_bytes {
            return Err(Error::DocumentTooLarge {
                bytes: html.len(),
                limit: self.settings.max_html_bytes,
            });
        }
        if std::str::from_utf8(html).is_err() {
            return Err(Error::invalid("the HTML must be UTF-8 encoded"));
        }
        Ok(())
    }
}

/// Two heading lists are the same structure when ids, levels and texts agree in order.
fn same_headings(a: &[Section], b: &[Section]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.id == y.id && x.level == y.level && x.text == y.text)
}

/// Sections supplied at creation, for documents without headings: each spans the whole text.
fn sections_from_structure(specs: &[SectionSpec], text_len: usize) -> Vec<Section> {
    let mut open: Vec<(u8, String)> = Vec::new();
    specs
        .iter()
        .map(|spec| {
            while open.last().is_some_and(|(level, _)| *level >= spec.level) {
                open.pop();
            }
            let path = open.iter().map(|(_, id)| id.clone()).collect();
            open.push((spec.level, spec.id.clone()));
            Section {
                id: spec.id.clone(),
                level: spec.level,
                text: spec.text.clone(),
                path,
                start: 0,
                end: text_len,
            }
        })
        .collect()
}

/// Trims, de-duplicates and checks tags: at most 32, each 1–64 characters.
pub(crate) fn normalize_tags(tags: Vec<String>) -> Result<Vec<String>> {
    let mut unique: Vec<String> = Vec::new();
    for tag in tags {
        let tag = tag.trim().to_string();
        check_length("tag", &tag, 1, 64)?;
        if !unique.contains(&tag) {
            unique.push(tag);
        }
    }
    if unique.len() > MAX_TAGS {
        return Err(Error::invalid(format!("at most {MAX_TAGS} tags")));
    }
    Ok(unique)
}

fn encode_cursor(at: Millis, id: &str) -> String {
    page::encode(&format!("{at}:{id}"))
}

fn decode_cursor(cursor: &str) -> Result<(Millis, String)> {
    let key = page::decode(cursor)?;
    let (at, id) = key.split_once(':').ok_or_else(page::not_ours)?;
    Ok((at.parse().map_err(|_| page::not_ours())?, id.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        let cursor = encode_cursor(42, "rv_x");
        assert_eq!(decode_cursor(&cursor).ok(), Some((42, "rv_x".to_string())));
        assert!(decode_cursor("!!!").is_err());
        assert!(decode_cursor(&page::encode("nocolon")).is_err());
    }

    #[test]
    fn tags_are_trimmed_deduplicated_and_bounded() {
        assert_eq!(
            normalize_tags(vec![" a ".into(), "a".into(), "b".into()]).ok(),
            Some(vec!["a".into(), "b".into()])
        );
        assert!(normalize_tags(vec![String::new()]).is_err());
        assert!(normalize_tags((0..33).map(|i| i.to_string()).collect()).is_err());
    }

    #[test]
    fn structure_sections_get_paths() {
        let specs = vec![
            SectionSpec {
                id: "a".into(),
                level: 1,
                text: "A".into(),
            },
            SectionSpec {
                id: "b".into(),
                level: 2,
                text: "B".into(),
            },
            SectionSpec {
                id: "c".into(),
                level: 1,
                text: "C".into(),
            },
        ];
        let sections = sections_from_structure(&specs, 10);
        assert_eq!(sections[1].path, vec!["a".to_string()]);
        assert!(sections[2].path.is_empty());
    }
}
