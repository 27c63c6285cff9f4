//! Turning a client's locator into an anchor, and carrying anchors onto a new version.

pub use docreview_api::wire::Locator;
use docreview_api::{BatchItemError, QuoteCandidate};
use docreview_text::{IndexedText, MatchKind, QUOTE_CONTEXT, TextMatch, TextQuote};

use crate::error::{Error, Result};
use crate::model::{Anchor, AnchorState, Position, Quote, SectionSpec};
use crate::texts::VersionText;

/// How far a quote's occurrences are counted (enough to say "many").
pub const AMBIGUITY_COUNT_LIMIT: usize = 1_000;

/// How many passages a quote that cannot be placed is offered.
const CANDIDATES: usize = 3;

/// Why a quote cannot be placed as sent, and the passages it may have meant.
#[derive(Debug)]
pub struct QuoteTrouble {
    pub error: BatchItemError,
    pub message: String,
    pub candidates: Vec<QuoteCandidate>,
}

/// A quote [`resolve`] would refuse (it does not occur, even ignoring white space), or would
/// place by guessing (it occurs more than once and no prefix, suffix or position says which).
/// A batch refuses both, offering the passages meant: the closest ones, or the first
/// occurrences.
pub fn quote_trouble(locator: &Locator, text: &VersionText) -> Option<QuoteTrouble> {
    let quote = locator.quote.as_ref().filter(|q| !q.exact.is_empty())?;
    let text = &text.text;
    let count = docreview_text::count_exact(text, &quote.exact, AMBIGUITY_COUNT_LIMIT);
    let candidates = |found: Vec<TextMatch>| {
        found
            .iter()
            .map(|m| candidate(text, m.start, m.end))
            .collect()
    };
    if count == 0 && docreview_text::find_ignoring_whitespace(text, &quote.exact, None).is_none() {
        let candidates: Vec<QuoteCandidate> =
            candidates(docreview_text::nearest(text, &quote.exact, CANDIDATES));
        let message = if candidates.is_empty() {
            "locator.quote was not found in the document's text, nor anything close to it"
        } else {
            "locator.quote was not found in the document's text; `candidates` has the closest passages"
        };
        return Some(QuoteTrouble {
            error: BatchItemError::QuoteNotFound,
            message: message.to_string(),
            candidates,
        });
    }
    let unguided = quote.prefix.is_empty() && quote.suffix.is_empty() && locator.position.is_none();
    (count > 1 && unguided).then(|| QuoteTrouble {
        error: BatchItemError::QuoteAmbiguous,
        message: format!(
            "locator.quote occurs {}{count} times; send a prefix, suffix or position to say \
             which (`candidates` has the first ones)",
            if count == AMBIGUITY_COUNT_LIMIT {
                "at least "
            } else {
                ""
            }
        ),
        candidates: candidates(docreview_text::occurrences(text, &quote.exact, CANDIDATES)),
    })
}

fn candidate(text: &IndexedText, start: usize, end: usize) -> QuoteCandidate {
    QuoteCandidate {
        quote: quote_at(text, start, end).into(),
        position: Position { start, end }.into(),
    }
}

/// Resolves `locator` against the text of version `version_id` (the latest).
/// `structure` holds the sections supplied at creation for documents without headings.
pub fn resolve(
    locator: &Locator,
    version_id: &str,
    text: &VersionText,
    structure: Option<&[SectionSpec]>,
) -> Result<Anchor> {
    let section_known = |id: &str| {
        text.sections.iter().any(|s| s.id == id)
            || structure.is_some_and(|specs| specs.iter().any(|s| s.id == id))
    };
    if let Some(id) = &locator.section_id
        && !section_known(id)
    {
        return Err(Error::invalid(format!(
            "locator.sectionId `{id}` is not a section of this version"
        )));
    }
    let text_len = text.text.char_len();
    let range = match (&locator.quote, &locator.position) {
        (Some(quote), position) => {
            if quote.exact.is_empty() {
                return Err(Error::invalid("locator.quote.exact must not be empty"));
            }
            let hint = position.as_ref().map(|p| p.start);
            match docreview_text::find_exact(&text.text, &to_text_quote(&quote.into()), hint) {
                Some(found) => Some((found.start, found.end)),
                // A quote copied from the rendered page has line breaks where blocks meet (the
                // text has none) or other white space: found without comparing white space, and
                // anchored to the text's own passage.
                None => Some(
                    docreview_text::find_ignoring_whitespace(&text.text, &quote.exact, hint)
                        .ok_or_else(|| {
                            Error::invalid("locator.quote was not found in the document's text")
                        })?,
                ),
            }
        }
        (None, Some(position)) => {
            if position.start >= position.end || position.end > text_len {
                return Err(Error::invalid(format!(
                    "locator.position must satisfy start < end <= {text_len} (the text's length in code points)"
                )));
            }
            Some((position.start, position.end))
        }
        (None, None) => None,
    };
    let Some((start, end)) = range else {
        return Ok(Anchor {
            version_id: version_id.to_string(),
            section_id: locator.section_id.clone(),
            quote: None,
            position: None,
            state: AnchorState::Exact,
        });
    };
    let section_id = locator
        .section_id
        .clone()
        .or_else(|| text.section_at(start).map(|section| section.id.clone()));
    Ok(Anchor {
        version_id: version_id.to_string(),
        section_id,
        quote: Some(quote_at(&text.text, start, end)),
        position: Some(Position { start, end }),
        state: AnchorState::Exact,
    })
}

/// Carries an anchor onto a new version: exact quote match, else approximate, else orphaned.
/// The quote a comment was written against is kept, so a later version can still find it.
pub fn reanchor(
    anchor: &Anchor,
    version_id: &str,
    text: &VersionText,
    structure: Option<&[SectionSpec]>,
) -> Anchor {
    let mut moved = anchor.clone();
    moved.version_id = version_id.to_string();
    match &anchor.quote {
        Some(quote) => {
            let hint = anchor.position.as_ref().map(|p| p.start);
            if let Some(found) = docreview_text::reanchor(&text.text, &to_text_quote(quote), hint) {
                moved.position = Some(Position {
                    start: found.start,
                    end: found.end,
                });
                moved.section_id = text
                    .section_at(found.start)
                    .map(|s| s.id.clone())
                    .or(moved.section_id);
                moved.state = match found.kind {
                    MatchKind::Exact => AnchorState::Exact,
                    MatchKind::Fuzzy => AnchorState::Fuzzy,
                };
            } else {
                moved.position = None;
                moved.state = AnchorState::Orphaned;
            }
        }
        None => {
            moved.state = match &anchor.section_id {
                Some(id)
                    if !text.sections.iter().any(|s| &s.id == id)
                        && !structure.is_some_and(|specs| specs.iter().any(|s| &s.id == id)) =>
                {
                    AnchorState::Orphaned
                }
                _ => AnchorState::Exact,
            };
        }
    }
    moved
}

fn quote_at(text: &IndexedText, start: usize, end: usize) -> Quote {
    let quote = docreview_text::quote_at(text, start, end, QUOTE_CONTEXT);
    Quote {
        exact: quote.exact,
        prefix: quote.prefix,
        suffix: quote.suffix,
    }
}

fn to_text_quote(quote: &Quote) -> TextQuote {
    TextQuote {
        exact: quote.exact.clone(),
        prefix: quote.prefix.clone(),
        suffix: quote.suffix.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use docreview_api::wire;

    fn text(html: &str) -> VersionText {
        VersionText::from_html(html)
    }

    #[test]
    fn quote_resolves_with_context_and_section() {
        let v1 = text("<h1 id=intro>Intro</h1><p>The cat sat on the mat.</p>");
        let locator = Locator {
            quote: Some(wire::Quote {
                exact: "cat sat".into(),
                prefix: String::new(),
                suffix: String::new(),
            }),
            ..Locator::default()
        };
        let anchor = resolve(&locator, "ver_1", &v1, None).expect("resolves");
        let position = anchor.position.expect("position");
        assert_eq!(v1.text.slice(position.start, position.end), "cat sat");
        assert_eq!(anchor.section_id.as_deref(), Some("intro"));
        assert_eq!(
            anchor.quote.as_ref().map(|q| q.prefix.ends_with("The ")),
            Some(true)
        );
    }

    #[test]
    fn unknown_quote_and_bad_positions_are_rejected() {
        let v1 = text("<p>hello</p>");
        let missing = Locator {
            quote: Some(wire::Quote {
                exact: "absent".into(),
                prefix: String::new(),
                suffix: String::new(),
            }),
            ..Locator::default()
        };
        assert!(matches!(
            resolve(&missing, "v", &v1, None),
            Err(Error::InvalidRequest(_))
        ));
        let past_end = Locator {
            position: Some(wire::Position { start: 2, end: 99 }),
            ..Locator::default()
        };
        assert!(matches!(
            resolve(&past_end, "v", &v1, None),
            Err(Error::InvalidRequest(_))
        ));
        let unknown_section = Locator {
            section_id: Some("nope".into()),
            ..Locator::default()
        };
        assert!(matches!(
            resolve(&unknown_section, "v", &v1, None),
            Err(Error::InvalidRequest(_))
        ));
    }

    #[test]
    fn anchors_follow_moved_text_and_orphan_deleted_text() {
        let v1 = text("<p>alpha beta gamma</p><p>delta epsilon</p>");
        let locator = Locator {
            quote: Some(wire::Quote {
                exact: "delta epsilon".into(),
                prefix: String::new(),
                suffix: String::new(),
            }),
            ..Locator::default()
        };
        let anchor = resolve(&locator, "v1", &v1, None).expect("resolves");
        let v2 = text("<p>delta epsilon</p><p>alpha beta gamma</p>");
        let moved = reanchor(&anchor, "v2", &v2, None);
        assert_eq!(moved.state, AnchorState::Exact);
        assert_eq!(moved.position, Some(Position { start: 0, end: 13 }));
        assert_eq!(moved.version_id, "v2");
        let v3 = text("<p>alpha beta gamma</p>");
        let orphaned = reanchor(&anchor, "v3", &v3, None);
        assert_eq!(orphaned.state, AnchorState::Orphaned);
        assert_eq!(orphaned.position, None);
        assert_eq!(orphaned.quote, anchor.quote);
    }
}
