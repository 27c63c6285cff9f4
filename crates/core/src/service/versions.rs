//! Reading a document's comments against any of its versions: where each comment's passage is
//! in an older version, how many comments each version holds exactly, approximately or not at
//! all, and what changed in the text from one version to the next. Comments are stored anchored
//! to the latest version only; an older version gets the same re-anchoring a new version does,
//! computed on read and never stored.

use std::sync::Arc;

use super::Service;
use crate::access::{self, Actor, Operation};
use crate::anchor;
use crate::error::{Error, Result};
use crate::model::{Anchor, AnchorState, CommentRecord, ReviewHead, VersionRecord};

/// How a version holds the document's live comments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionCounts {
    pub version_id: String,
    pub exact: usize,
    pub fuzzy: usize,
    pub orphaned: usize,
}

pub use docreview_text::{Change as TextChange, ChangeKind as TextChangeKind};

impl Service {
    /// Every live comment's anchor on `version_id`, by comment id: as stored for the latest
    /// version, carried over (exact, fuzzy or orphaned) for an older one.
    pub async fn anchors_on_version(
        &self,
        actor: &Actor,
        review_id: &str,
        version_id: &str,
    ) -> Result<Vec<(String, Anchor)>> {
        access::permit(actor, Operation::Read)?;
        let (head, _) = self.visible(actor, review_id).await?;
        let version = self.version_of(review_id, version_id).await?;
        let comments = self.store.live_comments(review_id).await?;
        self.carry_anchors(&head, &version, comments).await
    }

    /// For every version, oldest first, how many live comments it holds in each anchor state.
    pub async fn anchor_counts(
        &self,
        actor: &Actor,
        review_id: &str,
    ) -> Result<Vec<VersionCounts>> {
        access::permit(actor, Operation::Read)?;
        let (head, _) = self.visible(actor, review_id).await?;
        let versions = self.store.versions(review_id).await?;
        let comments = self.store.live_comments(review_id).await?;
        let mut counts = Vec::with_capacity(versions.len());
        for version in versions {
            let anchors = self
                .carry_anchors(&head, &version, comments.clone())
                .await?;
            let count = |state| anchors.iter().filter(|(_, a)| a.state == state).count();
            counts.push(VersionCounts {
                exact: count(AnchorState::Exact),
                fuzzy: count(AnchorState::Fuzzy),
                orphaned: count(AnchorState::Orphaned),
                version_id: version.id,
            });
        }
        Ok(counts)
    }

    /// What changed in the text from the version before `version_id` to it (empty for the
    /// first version), word by word.
    pub async fn version_changes(
        &self,
        actor: &Actor,
        review_id: &str,
        version_id: &str,
    ) -> Result<Vec<TextChange>> {
        access::permit(actor, Operation::Read)?;
        self.visible(actor, review_id).await?;
        let versions = self.store.versions(review_id).await?;
        let at = versions
            .iter()
            .position(|v| v.id == version_id)
            .ok_or(Error::NotFound("version"))?;
        let Some(previous) = at.checked_sub(1).map(|i| &versions[i]) else {
            return Ok(Vec::new());
        };
        let current = &versions[at];
        let old = self
            .version_text(review_id, &previous.id, &previous.source_hash)
            .await?;
        let new = self
            .version_text(review_id, &current.id, &current.source_hash)
            .await?;
        tokio::task::spawn_blocking(move || {
            docreview_text::word_changes(old.text.as_str(), new.text.as_str())
        })
        .await
        .map_err(|error| Error::Internal(Box::new(error)))
    }

    async fn version_of(&self, review_id: &str, version_id: &str) -> Result<VersionRecord> {
        self.store
            .version(review_id, version_id)
            .await?
            .ok_or(Error::NotFound("version"))
    }

    /// The comments' anchors on `version`: stored ones for the latest, re-anchored otherwise.
    async fn carry_anchors(
        &self,
        head: &ReviewHead,
        version: &VersionRecord,
        comments: Vec<CommentRecord>,
    ) -> Result<Vec<(String, Anchor)>> {
        if version.id == head.review.latest_version_id {
            return Ok(comments.into_iter().map(|c| (c.id, c.anchor)).collect());
        }
        let text = self
            .version_text(&head.review.id, &version.id, &version.source_hash)
            .await?;
        let structure = head.review.structure.clone();
        let version_id = version.id.clone();
        let text = Arc::clone(&text);
        tokio::task::spawn_blocking(move || {
            comments
                .into_iter()
                .map(|comment| {
                    let carried =
                        anchor::reanchor(&comment.anchor, &version_id, &text, structure.as_deref());
                    (comment.id, carried)
                })
                .collect()
        })
        .await
        .map_err(|error| Error::Internal(Box::new(error)))
    }
}
