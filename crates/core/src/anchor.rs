//! Turning a client's locator into an anchor, and carrying anchors onto a new version.

use std::ops::Range;

pub use docreview_api::wire::Locator;
use docreview_api::{BatchItemError, QuoteCandidate};
use docreview_text::{IndexedText, MatchKind, QUOTE_CONTEXT, TextQuote};

use crate::error::{Error, Result};
use crate::model::{Anchor, AnchorState, Position, Quote, SectionSpec};
use crate::texts::VersionText;

/// How far a quote's occurrences are counted (enough to say "many").
pub const AMBIGUITY_COUNT_LIMIT: usize = 1_000;

/// How many occurrences of a quote that occurs more than once a refusal lists (`find` pages
/// them all).
pub const OCCURRENCES_LISTED: usize = 10;

/// How many passages a quote that cannot be found is offered.
const CANDIDATES: usize = 3;

/// Why a quote cannot be placed as sent, and the passages it may have meant.
#[derive(Debug)]
pub struct QuoteTrouble {
    pub error: BatchItemError,
    pub message: String,
    pub candidates: Vec<QuoteCandidate>,
}

/// The part of the text a locator's quote is looked for in: the section `sectionId` names (the
/// occurrences that start in it, subsections included), else the whole text. Sections supplied
/// with `review.structure` have no place in the text, so they narrow nothing.
fn scope(locator: &Locator, text: &VersionText) -> Range<usize> {
    locator
        .section_id
        .as_deref()
        .and_then(|id| text.sections.iter().find(|s| s.id == id))
        .map_or(0..text.text.char_len(), |s| s.start..s.end)
}

/// Where `exact` occurs starting within `within`: its exact occurrences, or when there are
/// none, those found without comparing white space (a quote copied from the rendered page has a
/// line break where blocks meet, which the text lacks). At most `limit`, in text order.
fn occurrences(
    text: &IndexedText,
    exact: &str,
    within: Range<usize>,
    limit: usize,
) -> Vec<(usize, usize)> {
    let found: Vec<(usize, usize)> =
        docreview_text::occurrences(text, exact, within.clone(), limit)
            .iter()
            .map(|m| (m.start, m.end))
            .collect();
    if found.is_empty() {
        docreview_text::find_ignoring_whitespace(text, exact, within, limit)
    } else {
        found
    }
}

/// A quote [`resolve`] would refuse (it does not occur in its scope, even ignoring white space),
/// or would place by guessing (it occurs more than once and no prefix, suffix or position says
/// which). A batch refuses both, offering the passages meant: where the quote occurs outside the
/// section named, else the closest passages (whole words), or the first occurrences.
pub fn quote_trouble(locator: &Locator, text: &VersionText) -> Option<QuoteTrouble> {
    let quote = locator.quote.as_ref().filter(|q| !q.exact.is_empty())?;
    let found = occurrences(
        &text.text,
        &quote.exact,
        scope(locator, text),
        AMBIGUITY_COUNT_LIMIT,
    );
    if found.is_empty() {
        return Some(not_found(locator, text));
    }
    let unguided = quote.prefix.is_empty() && quote.suffix.is_empty() && locator.position.is_none();
    let count = found.len();
    (count > 1 && unguided).then(|| QuoteTrouble {
        error: BatchItemError::QuoteAmbiguous,
        message: format!(
            "locator.quote occurs {}{count} times{}; send one of `candidates` back as the \
             locator (the first {}, each with its section), or say which with sectionId, prefix, \
             suffix or position (`find` lists every occurrence)",
            if count == AMBIGUITY_COUNT_LIMIT {
                "at least "
            } else {
                ""
            },
            in_section(locator),
            OCCURRENCES_LISTED.min(count),
        ),
        candidates: found
            .iter()
            .take(OCCURRENCES_LISTED)
            .map(|&(start, end)| candidate(text, start, end))
            .collect(),
    })
}

fn in_section(locator: &Locator) -> String {
    locator
        .section_id
        .as_ref()
        .map(|id| format!(" in section `{id}`"))
        .unwrap_or_default()
}

/// The refusal of a quote that is not in its scope, with the passages it may have meant.
fn not_found(locator: &Locator, text: &VersionText) -> QuoteTrouble {
    let exact = locator.quote.as_ref().map_or("", |q| q.exact.as_str());
    let whole = 0..text.text.char_len();
    let scope = scope(locator, text);
    let offer =
        |found: &[(usize, usize)]| found.iter().map(|&(s, e)| candidate(text, s, e)).collect();
    if scope != whole {
        let elsewhere = occurrences(&text.text, exact, whole.clone(), CANDIDATES);
        if !elsewhere.is_empty() {
            return QuoteTrouble {
                error: BatchItemError::QuoteNotFound,
                message: format!(
                    "locator.quote is not{}; it occurs elsewhere (`candidates`, each with its \
                     section)",
                    in_section(locator)
                ),
                candidates: offer(&elsewhere),
            };
        }
    }
    let mut closest = close_passages(text, exact, scope.clone());
    if closest.is_empty() && scope != whole {
        closest = close_passages(text, exact, whole);
    }
    let message = if closest.is_empty() {
        format!(
            "locator.quote was not found{} in the document's text, nor anything close to it",
            in_section(locator)
        )
    } else {
        format!(
            "locator.quote was not found{} in the document's text; `candidates` has the \
             closest passages, each ready to send back as the locator",
            in_section(locator)
        )
    };
    QuoteTrouble {
        error: BatchItemError::QuoteNotFound,
        message,
        candidates: offer(&closest),
    }
}

/// The passages closest to `exact` within `within`, widened to whole words (a passage offered
/// as "cklog has grown" would anchor two characters into "backlog"), without repeats.
fn close_passages(text: &VersionText, exact: &str, within: Range<usize>) -> Vec<(usize, usize)> {
    let mut passages: Vec<(usize, usize)> = Vec::new();
    for found in docreview_text::nearest(&text.text, exact, within, CANDIDATES) {
        let passage =
            docreview_text::widen_to_words(&text.text, &text.block_breaks, found.start, found.end);
        if passage.0 < passage.1 && !passages.contains(&passage) {
            passages.push(passage);
        }
    }
    passages
}

/// A passage as a locator that anchors to exactly it: its quote with the context stored with
/// every anchor (which tells it from any other occurrence), its position, and its section.
pub fn candidate(text: &VersionText, start: usize, end: usize) -> QuoteCandidate {
    QuoteCandidate {
        quote: quote_at(&text.text, start, end).into(),
        position: Position { start, end }.into(),
        section_id: text.section_at(start).map(|section| section.id.clone()),
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
            let within = scope(locator, text);
            let exact = docreview_text::find_exact_within(
                &text.text,
                &to_text_quote(&quote.into()),
                hint,
                within.clone(),
            );
            match exact {
                Some(found) => Some((found.start, found.end)),
                // Copied from the rendered page (line breaks where blocks meet): anchored to
                // the text's own passage, the one nearest the position when one was sent.
                None => Some(
                    occurrences(&text.text, &quote.exact, within, AMBIGUITY_COUNT_LIMIT)
                        .into_iter()
                        .min_by_key(|&(start, _)| hint.map_or(0, |h| start.abs_diff(h)))
                        .ok_or_else(|| {
                            let trouble = not_found(locator, text);
                            Error::QuoteNotFound {
                                message: trouble.message,
                                candidates: trouble.candidates,
                            }
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

/// How many places a quote sent with nothing to tell its occurrences apart (no prefix, suffix
/// or position) could mean within its scope, counted up to [`AMBIGUITY_COUNT_LIMIT`]; `None`
/// when something told them apart or it occurs once.
pub fn unguided_matches(locator: &Locator, text: &VersionText) -> Option<usize> {
    let quote = locator.quote.as_ref()?;
    if locator.position.is_some() || !quote.prefix.is_empty() || !quote.suffix.is_empty() {
        return None;
    }
    let count = occurrences(
        &text.text,
        &quote.exact,
        scope(locator, text),
        AMBIGUITY_COUNT_LIMIT,
    )
    .len();
    (count > 1).then_some(count)
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
            Err(Error::QuoteNotFound { .. })
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
