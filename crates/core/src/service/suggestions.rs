//! Suggestions that apply (DESIGN.md §8.5): a `revise`, `add` or `delete` comment on a quoted
//! passage may carry the passage's replacement; applying a set of them makes one new version
//! whose HTML is the base version's bytes with exactly those passages changed
//! (`docreview_text::splice`, never a re-serialized page). The applied comments are closed with
//! a status event `{ reason: "applied", versionId }` in the same write; every other comment is
//! re-anchored as for any new version (`Service::version_write`).
//!
//! Every refusal comes before anything is written: the base must be the latest version (409
//! `stale_target_version`), each comment must carry a suggestion (400 `not_a_suggestion`), be
//! open (409 `suggestion_closed`) and sit exactly on its quote in the base (409
//! `suggestion_outdated`), and no two may change the same text (409 `suggestions_overlap`).

use std::collections::HashSet;
use std::sync::Arc;

use docreview_api::requests::ApplySuggestions;
use docreview_api::views::SuggestionsApplied;
use docreview_text::{SpliceError, TextEdit};

use super::{Service, check_length, parse_html};
use crate::access::{self, Actor, DocumentAction, Operation};
use crate::error::{Error, Result};
use crate::model::{
    Anchor, AnchorState, Category, CommentRecord, CommentStatus, StatusEventRecord, VersionRecord,
};
use crate::outbox::Sink;
use crate::store::StoreError;
use crate::texts::source_hash;

/// The longest suggested text, like a comment's body.
const MAX_SUGGESTION: usize = 20_000;
/// The most suggestions one version applies, like a batch of comments.
const MAX_APPLIED: usize = 200;
/// The `reason` of the status event that closes an applied comment.
pub const APPLIED: &str = "applied";

/// The suggestion a new comment may carry: only on `revise`, `add` or `delete` and a quoted
/// passage (400 `not_a_suggestion` otherwise); a `delete` suggests `""`, an `add` some text.
pub(super) fn check_suggestion(category: Category, anchor: &Anchor, text: &str) -> Result<String> {
    if !matches!(
        category,
        Category::Revise | Category::Add | Category::Delete
    ) {
        return Err(Error::NotASuggestion(format!(
            "a suggestion goes on a revise, add or delete comment; this one is {category}"
        )));
    }
    if anchor.quote.is_none() {
        return Err(Error::NotASuggestion(
            "a suggestion changes a passage: give the comment a quote (locator.quote)".into(),
        ));
    }
    match category {
        Category::Delete if !text.is_empty() => Err(Error::invalid(
            "a delete comment suggests removing its passage: its suggestion's text is \"\"",
        )),
        Category::Add if text.is_empty() => Err(Error::invalid(
            "an add comment's suggestion is the text to insert after its passage; it is empty",
        )),
        _ => {
            if !text.is_empty() {
                check_length("suggestion.text", text, 1, MAX_SUGGESTION)?;
            }
            Ok(text.to_string())
        }
    }
}

impl Service {
    /// `POST /api/reviews/{id}/suggestions/apply` (editor+): one new version with the
    /// suggestions of `commentIds` spliced into `baseVersionId`.
    pub async fn apply_suggestions(
        &self,
        actor: &Actor,
        review_id: &str,
        input: ApplySuggestions,
    ) -> Result<SuggestionsApplied> {
        access::permit(actor, Operation::Deliver)?;
        if input.comment_ids.is_empty() || input.comment_ids.len() > MAX_APPLIED {
            return Err(Error::invalid(format!(
                "commentIds names 1 to {MAX_APPLIED} comments"
            )));
        }
        let mut seen = HashSet::new();
        if let Some(twice) = input
            .comment_ids
            .iter()
            .find(|id| !seen.insert(id.as_str()))
        {
            return Err(Error::invalid(format!("commentIds names {twice} twice")));
        }
        if let Some(label) = &input.label {
            check_length("label", label, 1, 100)?;
        }
        let (mut head, role) = self.visible(actor, review_id).await?;
        access::require_action(role, DocumentAction::AddVersion)?;
        for _ in 0..super::MAX_ATTEMPTS {
            self.require_latest(&head, Some(&input.base_version_id))
                .await?;
            if head.review.finalized.is_some() {
                return Err(Error::ReviewFinalized);
            }
            let base = self
                .store
                .version(review_id, &input.base_version_id)
                .await?
                .ok_or(Error::NotFound("version"))?;
            let (_, html) = self
                .store
                .version_html(review_id, &base.id)
                .await?
                .ok_or(Error::NotFound("version"))?;
            let html = String::from_utf8(html)
                .map_err(|_| Error::invalid("the base version's HTML is not UTF-8"))?;
            let base_text = self
                .version_text(review_id, &base.id, &base.source_hash)
                .await?;
            let live = self.store.live_comments(review_id).await?;
            let applied: Vec<&CommentRecord> = input
                .comment_ids
                .iter()
                .map(|id| {
                    live.iter()
                        .find(|c| &c.id == id)
                        .ok_or(Error::NotFound("comment"))
                })
                .collect::<Result<_>>()?;
            let edits = applied
                .iter()
                .map(|comment| edit_of(comment, &base.id, &base_text.text))
                .collect::<Result<Vec<_>>>()?;
            let ranges: Vec<(usize, usize)> = edits.iter().map(|e| (e.start, e.end)).collect();
            if let Some((first, second)) = docreview_text::overlapping(&ranges) {
                return Err(overlap(&applied, first, second));
            }
            let spliced = {
                let owned: Vec<(usize, usize, String)> = edits
                    .iter()
                    .map(|e| (e.start, e.end, e.text.to_string()))
                    .collect();
                let text = base_text.text.as_str().to_string();
                tokio::task::spawn_blocking(move || {
                    let edits: Vec<TextEdit> = owned
                        .iter()
                        .map(|(start, end, text)| TextEdit {
                            start: *start,
                            end: *end,
                            text,
                        })
                        .collect();
                    docreview_text::splice(&html, &text, &edits)
                })
                .await
                .map_err(|error| Error::Internal(Box::new(error)))?
            };
            let spliced = spliced.map_err(|error| match error {
                SpliceError::Overlap { first, second } => overlap(&applied, first, second),
                SpliceError::OutOfRange { edit } => Error::SuggestionOutdated(format!(
                    "the passage of {} is not in the base version",
                    applied[edit].id
                )),
                SpliceError::Untraceable { edit } => Error::invalid(format!(
                    "the passage of {} has no single place in the HTML's source (half of a \
                     character reference that stands for two characters, or text the parser \
                     moved); change it by a new version",
                    applied[edit].id
                )),
                SpliceError::Unverified => Error::invalid(
                    "with these changes the page would not read as the changed text (an HTML \
                     rule the splice cannot keep, e.g. inside <pre> or <xmp>); change it by a \
                     new version",
                ),
            })?;
            let new_html = spliced.html.into_bytes();
            self.check_html(&new_html)?;
            let text = Arc::new(parse_html(new_html.clone()).await?);
            let hash = source_hash(&new_html);
            let now = self.clock.now();
            let count = self.store.versions(review_id).await?.len();
            let version = VersionRecord {
                id: self.new_id("ver_", now),
                review_id: review_id.to_string(),
                label: input
                    .label
                    .clone()
                    .unwrap_or_else(|| format!("v{}", count + 1)),
                created_at: now,
                source_hash: hash.clone(),
                sections: text.sections.clone(),
            };
            let version_id = version.id.clone();
            let mut write = self
                .version_write(actor, &head, &base, version, true, new_html, &text, now)
                .await?;
            for comment in &applied {
                let thread = self
                    .store
                    .comment_thread(review_id, &comment.id)
                    .await?
                    .ok_or(Error::NotFound("comment"))?;
                write.closed.push(StatusEventRecord {
                    comment_id: comment.id.clone(),
                    seq: thread.events.iter().map(|e| e.seq).max().unwrap_or(0) + 1,
                    status: CommentStatus::Closed,
                    by_id: actor.id().to_string(),
                    ts: now,
                    reason: Some(APPLIED.to_string()),
                    version_id: Some(version_id.clone()),
                });
            }
            match self.store.write_version(write).await {
                Ok(_) => {
                    self.wake(Sink::Event);
                    self.texts.insert(&hash, text);
                    let review = self.get_review(actor, review_id, false).await?;
                    return Ok(SuggestionsApplied {
                        review,
                        version_id,
                        applied: input.comment_ids.clone(),
                    });
                }
                Err(StoreError::StaleVersion { latest }) => {
                    return Err(Error::StaleVersion { latest });
                }
                // A comment changed meanwhile (a status, an edit): check everything again.
                Err(StoreError::RevisionConflict { .. }) => {
                    head = self.visible(actor, review_id).await?.0;
                }
                Err(other) => return Err(other.into()),
            }
        }
        Err(Error::Unavailable(
            "too much concurrent activity on this document; try again".into(),
        ))
    }
}

/// The text edit a comment's suggestion makes on the base version: its passage replaced
/// (`revise`, `delete`) or text inserted after it (`add`). Refused unless the comment carries
/// a suggestion, is open, and its anchor sits exactly on its quote in `base_text`.
fn edit_of<'a>(
    comment: &'a CommentRecord,
    base_version_id: &str,
    base_text: &docreview_text::IndexedText,
) -> Result<TextEdit<'a>> {
    let Some(text) = comment.suggestion.as_deref() else {
        return Err(Error::NotASuggestion(format!(
            "{} carries no suggestion",
            comment.id
        )));
    };
    if comment.status != CommentStatus::Open {
        return Err(Error::SuggestionClosed(format!(
            "{} is closed; reopen it to apply its suggestion",
            comment.id
        )));
    }
    let anchor = &comment.anchor;
    let outdated = || {
        Error::SuggestionOutdated(format!(
            "the passage of {} is no longer exactly where it was on {base_version_id}; \
             re-anchor the comment (or suggest again) first",
            comment.id
        ))
    };
    let (Some(quote), Some(position)) = (&anchor.quote, anchor.position) else {
        return Err(outdated());
    };
    let on_passage = anchor.version_id == base_version_id
        && anchor.state == AnchorState::Exact
        && position.start <= position.end
        && position.end <= base_text.char_len()
        && base_text.slice(position.start, position.end) == quote.exact;
    if !on_passage {
        return Err(outdated());
    }
    let start = if comment.category == Category::Add {
        position.end
    } else {
        position.start
    };
    Ok(TextEdit {
        start,
        end: position.end,
        text,
    })
}

fn overlap(applied: &[&CommentRecord], first: usize, second: usize) -> Error {
    Error::SuggestionsOverlap(format!(
        "the suggestions of {} and {} change the same text; apply one, then the other",
        applied[first].id, applied[second].id
    ))
}
