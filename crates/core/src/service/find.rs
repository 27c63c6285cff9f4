//! Finding a phrase in a document's text: its occurrences with their sections and context, each a
//! locator that anchors a comment to exactly it, so an agent can comment without reading it all.

use docreview_api::requests::FindQuery;
use docreview_api::views::{FindResults, Occurrence};

use super::{Service, page};
use crate::access::{self, Actor, Operation};
use crate::anchor::{self, AMBIGUITY_COUNT_LIMIT};
use crate::error::{Error, Result};

/// The longest phrase looked for, in characters.
const MAX_PHRASE: usize = 1_000;
/// Characters of context on each side of an occurrence.
const CONTEXT: usize = 80;

impl Service {
    /// The occurrences of `q` in a version's text (the latest by default), case and white space
    /// not compared, in text order, a page at a time; with `sectionId`, those starting in that
    /// section.
    pub async fn find(
        &self,
        actor: &Actor,
        review_id: &str,
        query: FindQuery,
    ) -> Result<FindResults> {
        access::permit(actor, Operation::Read)?;
        let phrase = query.q.unwrap_or_default();
        let length = phrase.chars().count();
        if phrase.trim().is_empty() || length > MAX_PHRASE {
            return Err(Error::invalid(format!(
                "q must be 1 to {MAX_PHRASE} characters, not all white space (got {length})"
            )));
        }
        let limit = page::limit(query.limit)?;
        let offset = page::offset(query.cursor.as_deref(), AMBIGUITY_COUNT_LIMIT)?;
        let (head, _) = self.visible(actor, review_id).await?;
        let version_id = query
            .version_id
            .unwrap_or_else(|| head.review.latest_version_id.clone());
        let version = self
            .store
            .version(review_id, &version_id)
            .await?
            .ok_or(Error::NotFound("version"))?;
        let text = self
            .version_text(review_id, &version.id, &version.source_hash)
            .await?;
        let within = match &query.section_id {
            None => 0..text.text.char_len(),
            Some(id) => {
                let section = text.sections.iter().find(|s| &s.id == id).ok_or_else(|| {
                    Error::invalid(format!(
                        "sectionId `{id}` is not a heading section of this version"
                    ))
                })?;
                section.start..section.end
            }
        };
        let found = docreview_text::find_phrase(&text.text, &phrase, within, AMBIGUITY_COUNT_LIMIT);
        let occurrences = found
            .iter()
            .skip(offset)
            .take(limit)
            .map(|&(start, end)| {
                let candidate = anchor::candidate(&text, start, end);
                Occurrence {
                    quote: candidate.quote,
                    position: candidate.position,
                    section_id: candidate.section_id,
                    context: docreview_text::readable(
                        &text.text,
                        &text.block_breaks,
                        start.saturating_sub(CONTEXT),
                        end + CONTEXT,
                    ),
                }
            })
            .collect();
        let next = offset + limit;
        Ok(FindResults {
            review_id: head.review.id,
            version_id: version.id,
            total: found.len(),
            occurrences,
            next_cursor: (next < found.len()).then(|| page::offset_cursor(next)),
        })
    }
}
