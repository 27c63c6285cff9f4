//! Text-quote anchoring: locating a W3C `TextQuoteSelector` (exact + prefix + suffix) in a
//! text, exactly or approximately, and building quotes from ranges.
//!
//! Approximate matching follows Hypothesis' `match-quote`: candidates come from an
//! edit-distance search of the quote and are ranked by quote similarity first, then by
//! how well the surrounding text agrees with prefix and suffix, then by closeness to the
//! expected position. Both searches look around the position hint before scanning the
//! whole text, because most quotes move little between versions; the approximate one
//! also tries the places where pieces of the quote or its context still occur exactly.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "char offsets, lengths and edit counts are bounded by one document's length (at most \
              the upload limit, far below i64::MAX), so the usize/isize casts of seed \
              positions cannot wrap; a position is clamped at 0 before it is cast back"
)]

use std::ops::Range;

use memchr::memmem;
use serde::{Deserialize, Serialize};

use crate::approx::{Pattern, anchored_similarity, best_anchored_prefixes, search};
use crate::indexed::IndexedText;

/// Code points of context stored before and after a quote.
pub const QUOTE_CONTEXT: usize = 32;

/// Code points searched on each side of the hint before falling back to the whole text.
/// Edits elsewhere in a document shift passages, usually by far less than this.
const HINT_WINDOW: usize = 8 * 1024;

/// Context chars compared per side when scoring approximate candidates; bounds the cost
/// of scoring when callers store unusually long context.
const MAX_SCORED_CONTEXT: usize = 64;

/// At most this many approximate candidates (the ones with fewest errors) are scored.
/// Only repetitive texts produce more, and then the extra ones are no better.
const MAX_CANDIDATES: usize = 64;

/// Longest quote (code points) searched approximately. The search costs about
/// `len / 128` word operations per text char, so this bounds a whole-text search of a
/// 1 MB text to a few hundred milliseconds; longer quotes re-anchor only exactly.
const MAX_FUZZY_LEN: usize = 8192;

/// Seeds are exact pieces of the quote (and of its context) of this many code points:
/// long enough to be selective, short enough that light edits leave some intact.
const SEED_MIN: usize = 8;
const SEED_MAX: usize = 16;
/// Pieces of the quote used as seeds; long quotes use pieces spread along them.
const MAX_QUOTE_SEEDS: usize = 8;
/// A seed occurring more often than this is too common to point anywhere.
const MAX_SEED_HITS: usize = 16;
/// Beyond this many seeded regions, one full search is no slower.
const MAX_SEED_REGIONS: usize = 64;
/// Slack around a seeded region beyond the error allowance, for inserted text.
const SEED_PAD: usize = 16;

/// Equally good starts of one approximate match compared by their prefix; more only
/// arise in degenerate (repetitive) text.
const MAX_TIED_STARTS: usize = 8;

/// Weights of Hypothesis' `match-quote` score: the quote dominates, the context decides
/// between near-equal quote matches, and position only breaks ties.
const QUOTE_WEIGHT: f64 = 50.0;
const PREFIX_WEIGHT: f64 = 20.0;
const SUFFIX_WEIGHT: f64 = 20.0;
const POSITION_WEIGHT: f64 = 2.0;

/// Lowest normalised score accepted for an approximate match.
///
/// Calibration: an edit within the limit with intact context scores ≥ 0.86; a quote with
/// 10% errors whose suffix was rewritten still scores 0.73; a chance look-alike of a
/// deleted passage (quote ~80% similar, context ~40% similar) scores ≈ 0.63.
const MIN_SCORE: f64 = 0.72;

/// A W3C Web Annotation `TextQuoteSelector`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextQuote {
    pub exact: String,
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub suffix: String,
}

/// How a quote was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    Exact,
    Fuzzy,
}

/// A located quote, in code points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextMatch {
    pub start: usize,
    pub end: usize,
    pub kind: MatchKind,
}

/// The most errors an approximate match of an `n`-char quote may have: a quarter of its
/// length, at least one, but always fewer than `n` (an all-errors match says nothing).
pub fn max_errors(n: usize) -> usize {
    (n / 4).max(1).min(n.saturating_sub(1))
}

/// The quote for a code-point range, with `context` code points of prefix and suffix
/// (clamped at the ends of the text).
pub fn quote_at(text: &IndexedText, start: usize, end: usize, context: usize) -> TextQuote {
    let end = end.min(text.char_len());
    let start = start.min(end);
    TextQuote {
        exact: text.slice(start, end).to_owned(),
        prefix: text.slice(start.saturating_sub(context), start).to_owned(),
        suffix: text.slice(end, end.saturating_add(context)).to_owned(),
    }
}

/// An exact occurrence and how well its surroundings agree with the quote's context.
#[derive(Clone, Copy)]
struct ExactCandidate {
    start: usize,
    context: usize,
    distance: usize,
}

impl ExactCandidate {
    /// More context agreement wins, then closeness to the hint, then the earlier one.
    fn beats(&self, other: &ExactCandidate) -> bool {
        (other.context, self.distance, self.start) < (self.context, other.distance, other.start)
    }
}

/// Exact occurrences only. Among several occurrences of `quote.exact`, picks the one whose
/// surrounding text best agrees with prefix/suffix (longest common suffix of the text
/// before it with `prefix` plus longest common prefix of the text after it with `suffix`),
/// ties broken by distance to `hint` (a start offset), then by earliest.
/// `None` when `exact` is empty or absent.
pub fn find_exact(text: &IndexedText, quote: &TextQuote, hint: Option<usize>) -> Option<TextMatch> {
    find_exact_within(text, quote, hint, 0..text.char_len())
}

/// [`find_exact`] among the occurrences that start within `within` (code points; a section).
pub fn find_exact_within(
    text: &IndexedText,
    quote: &TextQuote,
    hint: Option<usize>,
    within: Range<usize>,
) -> Option<TextMatch> {
    if quote.exact.is_empty() || within.start >= within.end {
        return None;
    }
    let finder = memmem::Finder::new(quote.exact.as_bytes());
    let exact_len = quote.exact.chars().count();
    let full_context = quote.prefix.chars().count() + quote.suffix.chars().count();
    let hint = hint.map(|h| h.min(text.char_len()));
    let (first, last) = (
        text.char_to_byte(within.start),
        text.char_to_byte(within.end - 1),
    );

    if let Some(h) = hint {
        // Symmetric, so that occurrences outside (farther than `reach`) are farther from the
        // hint than any inside: one inside with full context agreement cannot be beaten.
        let reach = HINT_WINDOW + exact_len;
        let from = text.char_to_byte(h.saturating_sub(reach)).max(first);
        let to = text.char_to_byte(h.saturating_add(reach)).min(last);
        let best = best_exact(text, quote, &finder, hint, from, to);
        let whole_range = from == first && to == last;
        if whole_range || best.is_some_and(|c: ExactCandidate| c.context == full_context) {
            return best.map(|c| exact_match(c.start, exact_len));
        }
    }
    best_exact(text, quote, &finder, hint, first, last).map(|c| exact_match(c.start, exact_len))
}

/// How many times `exact` occurs starting within `within` (overlapping occurrences included, as
/// `find_exact` considers them), counting at most `limit`.
pub fn count_exact(text: &IndexedText, exact: &str, within: Range<usize>, limit: usize) -> usize {
    exact_starts(text, exact, within).take(limit).count()
}

/// The first `limit` exact occurrences of `exact` starting within `within`, in text order
/// (overlapping ones included).
pub fn occurrences(
    text: &IndexedText,
    exact: &str,
    within: Range<usize>,
    limit: usize,
) -> Vec<TextMatch> {
    let len = exact.chars().count();
    exact_starts(text, exact, within)
        .take(limit)
        .map(|byte| exact_match(text.byte_to_char(byte), len))
        .collect()
}

/// Byte offsets where `exact` starts within the code points `within`, overlapping occurrences
/// included.
fn exact_starts<'a>(
    text: &'a IndexedText,
    exact: &'a str,
    within: Range<usize>,
) -> impl Iterator<Item = usize> + 'a {
    let finder = memmem::Finder::new(exact.as_bytes());
    // Advancing by the first char's width keeps positions on char boundaries.
    let step = exact.chars().next().map_or(0, char::len_utf8);
    let haystack = text.as_str().as_bytes();
    let mut pos = text.char_to_byte(within.start);
    let stop = text.char_to_byte(within.end);
    std::iter::from_fn(move || {
        if step == 0 || pos >= stop {
            return None;
        }
        let byte = pos + finder.find(&haystack[pos..])?;
        if byte >= stop {
            return None;
        }
        pos = byte + step;
        Some(byte)
    })
}

/// Places a quote that does not occur in `text` may have meant: up to `limit` passages within
/// [`max_errors`] edits of `exact` that end within `within`, fewest edits first, then in text
/// order, none overlapping. Empty when nothing is that close, or the quote is too long to search
/// approximately. The passages are as close as edits make them, so may start or end inside a
/// word (see `widen_to_words`).
pub fn nearest(
    text: &IndexedText,
    exact: &str,
    within: Range<usize>,
    limit: usize,
) -> Vec<TextMatch> {
    let chars: Vec<char> = exact.chars().collect();
    let k = max_errors(chars.len());
    if chars.is_empty() || k == 0 || chars.len() > MAX_FUZZY_LEN {
        return Vec::new();
    }
    let quote = TextQuote {
        exact: exact.to_owned(),
        prefix: String::new(),
        suffix: String::new(),
    };
    let matcher = Approx::new(text, &quote, &chars, k, None);
    let mut ends = Vec::new();
    matcher.collect_candidates(within.start, within.end, &mut ends);
    ends.sort_unstable_by_key(|&(end, errors)| (errors, end));
    let mut found: Vec<TextMatch> = Vec::new();
    for (end, _) in ends {
        if found.len() == limit {
            break;
        }
        let (start, _) = matcher.start_of(end);
        if found.iter().all(|m| end <= m.start || m.end <= start) {
            found.push(TextMatch {
                start,
                end,
                kind: MatchKind::Fuzzy,
            });
        }
    }
    found
}

fn exact_match(start: usize, len: usize) -> TextMatch {
    TextMatch {
        start,
        end: start + len,
        kind: MatchKind::Exact,
    }
}

/// The best exact occurrence starting at a byte in `from..=to` (overlapping ones included).
fn best_exact(
    text: &IndexedText,
    quote: &TextQuote,
    finder: &memmem::Finder<'_>,
    hint: Option<usize>,
    from: usize,
    to: usize,
) -> Option<ExactCandidate> {
    let s = text.as_str();
    let exact = quote.exact.as_bytes();
    // Advancing by the first char's width keeps positions on char boundaries while still
    // finding overlapping occurrences ("aa" in "aaa").
    let step = quote.exact.chars().next().map_or(1, char::len_utf8);
    let end_limit = to.saturating_add(exact.len()).min(s.len());
    let mut best: Option<ExactCandidate> = None;
    let mut pos = from;
    while pos < end_limit {
        let Some(found) = finder.find(&s.as_bytes()[pos..end_limit]) else {
            break;
        };
        let byte = pos + found;
        pos = byte + step;
        let before = s[..byte].chars().rev();
        let after = s[byte + exact.len()..].chars();
        let context = common_prefix_len(before, quote.prefix.chars().rev())
            + common_prefix_len(after, quote.suffix.chars());
        let start = text.byte_to_char(byte);
        let candidate = ExactCandidate {
            start,
            context,
            distance: hint.map_or(0, |h| h.abs_diff(start)),
        };
        if best.is_none_or(|b| candidate.beats(&b)) {
            best = Some(candidate);
        }
    }
    best
}

/// Byte range of code points `start..end` of `s`, clamped.
fn char_range_bytes(s: &str, start: usize, end: usize) -> std::ops::Range<usize> {
    let byte_at = |n: usize| s.char_indices().nth(n).map_or(s.len(), |(b, _)| b);
    let from = byte_at(start);
    from..byte_at(end).max(from)
}

fn common_prefix_len(a: impl Iterator<Item = char>, b: impl Iterator<Item = char>) -> usize {
    a.zip(b).take_while(|(x, y)| x == y).count()
}

/// Re-anchors a quote onto a (possibly edited) text: an exact occurrence when there is one
/// (see [`find_exact`]), else the best approximate match, else `None` (orphaned).
///
/// Approximate rule: candidates are substrings within [`max_errors`] edits (Levenshtein:
/// substitutions, insertions, deletions; `max(1, len/4)`, below `len`) of `exact`. They are
/// searched within 8192 code points of the hint first, then around exact occurrences of
/// pieces of the quote and its context, and in the whole text only when neither yields an
/// acceptable match. Each is scored `(50·q + 20·p + 20·s + 2·h) / 92` with
/// `q = 1 - errors/len(exact)`, `p`/`s` the similarity of the adjoining text to
/// prefix/suffix (1 when that context is empty), `h = 1 - |start - hint| / len(text)`
/// (1 without hint). The best candidate is accepted when its score is at least 0.72, which
/// rejects chance look-alikes of deleted passages. Quotes longer than 8192 code points
/// are only re-anchored exactly, to bound the cost.
pub fn reanchor(text: &IndexedText, quote: &TextQuote, hint: Option<usize>) -> Option<TextMatch> {
    if let Some(found) = find_exact(text, quote, hint) {
        return Some(found);
    }
    let exact: Vec<char> = quote.exact.chars().collect();
    let k = max_errors(exact.len());
    if exact.is_empty() || k == 0 || exact.len() > MAX_FUZZY_LEN {
        return None;
    }
    let matcher = Approx::new(text, quote, &exact, k, hint);
    let whole = (0, text.char_len());
    // Cheapest first: near the hint, then around exact pieces of the quote and its
    // context, and only then the whole text (which deleted passages always need).
    if let Some(h) = matcher.hint {
        let window = (
            h.saturating_sub(HINT_WINDOW),
            h.saturating_add(exact.len() + k + HINT_WINDOW),
        );
        let found = matcher.best_in(&[window]);
        if found.is_some() || (window.0 == 0 && window.1 >= whole.1) {
            return found;
        }
    }
    if let Some(regions) = matcher.seed_regions()
        && let Some(found) = matcher.best_in(&regions)
    {
        return Some(found);
    }
    matcher.best_in(&[whole])
}

/// One approximate re-anchoring: the compiled quote and what scoring needs.
struct Approx<'a> {
    text: &'a IndexedText,
    quote: &'a TextQuote,
    len: usize,
    max_errors: usize,
    hint: Option<usize>,
    forward: Pattern,
    /// The quote reversed, to find where a match ending at a known place starts.
    backward: Pattern,
}

impl<'a> Approx<'a> {
    fn new(
        text: &'a IndexedText,
        quote: &'a TextQuote,
        exact: &[char],
        max_errors: usize,
        hint: Option<usize>,
    ) -> Self {
        let reversed: Vec<char> = exact.iter().rev().copied().collect();
        Self {
            text,
            quote,
            len: exact.len(),
            max_errors,
            hint: hint.map(|h| h.min(text.char_len())),
            forward: Pattern::new(exact),
            backward: Pattern::new(&reversed),
        }
    }

    /// The best acceptable match lying within one of the code-point ranges `regions`
    /// (sorted and disjoint).
    fn best_in(&self, regions: &[(usize, usize)]) -> Option<TextMatch> {
        let mut candidates: Vec<(usize, usize)> = Vec::new();
        for &(from, to) in regions {
            self.collect_candidates(from, to, &mut candidates);
        }
        if candidates.len() > MAX_CANDIDATES {
            let hint = self.hint.unwrap_or(0);
            candidates.sort_by_key(|&(end, errors)| (errors, end.abs_diff(hint)));
            candidates.truncate(MAX_CANDIDATES);
        }
        let mut best: Option<(f64, TextMatch)> = None;
        for (end, _) in candidates {
            let (start, errors) = self.start_of(end);
            let score = self.score(start, end, errors);
            #[allow(
                clippy::float_cmp,
                reason = "a tie is the same computed score; break it by position"
            )]
            if best.is_none_or(|(s, m)| score > s || (score == s && start < m.start)) {
                let found = TextMatch {
                    start,
                    end,
                    kind: MatchKind::Fuzzy,
                };
                best = Some((score, found));
            }
        }
        best.filter(|(score, _)| *score >= MIN_SCORE)
            .map(|(_, found)| found)
    }

    /// Adds `(end, errors)` for the promising match ends within code points `from..to`.
    fn collect_candidates(&self, from: usize, to: usize, out: &mut Vec<(usize, usize)>) {
        let from = from.min(self.text.char_len());
        let window = self.text.slice(from, to);
        // Ends within max_errors of a true match form a contiguous run around it; keep the
        // fewest-error end of each run (first and last when tied, as either may be the
        // better-scoring boundary).
        let mut run: Option<Run> = None;
        search(&self.forward, window, self.max_errors, |end, errors| {
            let end = from + end;
            match &mut run {
                Some(r) if r.last + 1 == end && end - r.first_end < self.len => r.add(end, errors),
                _ => {
                    if let Some(done) = run.replace(Run::new(end, errors)) {
                        done.emit(out);
                    }
                }
            }
        });
        if let Some(done) = run {
            done.emit(out);
        }
    }

    /// Regions where the quote probably is, judged by exact occurrences of pieces of the
    /// quote and of its context. `None` when the pieces are too common to tell anything
    /// (or too many regions result), so that only a full search can decide.
    fn seed_regions(&self) -> Option<Vec<(usize, usize)>> {
        let exact = &self.quote.exact;
        let piece = (self.len / 2).clamp(SEED_MIN, SEED_MAX);
        // (seed text, quote start minus seed start, in code points)
        let mut seeds: Vec<(&str, isize)> = Vec::new();
        let pieces = self.len / piece;
        let step = pieces.div_ceil(MAX_QUOTE_SEEDS).max(1);
        for p in (0..pieces).step_by(step) {
            let at = p * piece;
            let byte_range = char_range_bytes(exact, at, at + piece);
            seeds.push((&exact[byte_range], -(at as isize)));
        }
        let prefix_len = self.quote.prefix.chars().count();
        if prefix_len >= SEED_MIN {
            let take = prefix_len.min(piece);
            let byte_range = char_range_bytes(&self.quote.prefix, prefix_len - take, prefix_len);
            seeds.push((&self.quote.prefix[byte_range], take as isize));
        }
        if self.quote.suffix.chars().count() >= SEED_MIN {
            let byte_range = char_range_bytes(&self.quote.suffix, 0, piece);
            seeds.push((&self.quote.suffix[byte_range], -(self.len as isize)));
        }

        let haystack = self.text.as_str().as_bytes();
        let mut starts: Vec<usize> = Vec::new();
        for (seed, offset) in seeds {
            let hits: Vec<usize> = memmem::find_iter(haystack, seed.as_bytes())
                .take(MAX_SEED_HITS + 1)
                .collect();
            if hits.len() > MAX_SEED_HITS {
                continue;
            }
            for byte in hits {
                let at = self.text.byte_to_char(byte) as isize;
                starts.push((at + offset).max(0) as usize);
            }
        }
        if starts.is_empty() {
            return None;
        }
        starts.sort_unstable();
        let pad = self.max_errors + SEED_PAD;
        let mut regions: Vec<(usize, usize)> = Vec::new();
        for start in starts {
            let region = (start.saturating_sub(pad), start + self.len + pad);
            match regions.last_mut() {
                Some(last) if last.1 >= region.0 => last.1 = last.1.max(region.1),
                _ => regions.push(region),
            }
        }
        (regions.len() <= MAX_SEED_REGIONS).then_some(regions)
    }

    /// Start of the best alignment of the quote ending at `end`, and its edit count.
    /// Equally good starts are told apart by the prefix, then by keeping the quote's length.
    fn start_of(&self, end: usize) -> (usize, usize) {
        let lo = end.saturating_sub(self.len + self.max_errors);
        let before = self.text.slice(lo, end).chars().rev();
        let (errors, mut lengths) = best_anchored_prefixes(&self.backward, before);
        lengths.sort_by_key(|len| len.abs_diff(self.len));
        lengths.truncate(MAX_TIED_STARTS);
        let mut best = (
            end - lengths.first().copied().unwrap_or(0),
            f64::NEG_INFINITY,
        );
        for len in lengths {
            let start = end - len;
            let prefix = self.context_similarity(&self.quote.prefix, start, true);
            if prefix > best.1 {
                best = (start, prefix);
            }
        }
        (best.0, errors)
    }

    fn score(&self, start: usize, end: usize, errors: usize) -> f64 {
        let quote = 1.0 - errors as f64 / self.len as f64;
        let prefix = self.context_similarity(&self.quote.prefix, start, true);
        let suffix = self.context_similarity(&self.quote.suffix, end, false);
        let position = match self.hint {
            Some(h) if self.text.char_len() > 0 => {
                1.0 - h.abs_diff(start) as f64 / self.text.char_len() as f64
            }
            _ => 1.0,
        };
        (QUOTE_WEIGHT * quote
            + PREFIX_WEIGHT * prefix
            + SUFFIX_WEIGHT * suffix
            + POSITION_WEIGHT * position)
            / (QUOTE_WEIGHT + PREFIX_WEIGHT + SUFFIX_WEIGHT + POSITION_WEIGHT)
    }

    /// Similarity of the text adjoining `at` (before it when `before`) to the stored context,
    /// comparing from the side touching the match outwards.
    fn context_similarity(&self, context: &str, at: usize, before: bool) -> f64 {
        let used = context.chars().count().min(MAX_SCORED_CONTEXT);
        let reach = used + used / 2 + 1;
        if before {
            let expected = context.chars().rev().take(used);
            let actual = self.text.slice(at.saturating_sub(reach), at).chars().rev();
            anchored_similarity(expected, actual)
        } else {
            let expected = context.chars().take(used);
            let actual = self.text.slice(at, at.saturating_add(reach)).chars();
            anchored_similarity(expected, actual)
        }
    }
}

/// A run of consecutive match ends, tracking where its error count is lowest.
struct Run {
    first_end: usize,
    last: usize,
    errors: usize,
    first_best: usize,
    last_best: usize,
}

impl Run {
    fn new(end: usize, errors: usize) -> Self {
        Self {
            first_end: end,
            last: end,
            errors,
            first_best: end,
            last_best: end,
        }
    }

    fn add(&mut self, end: usize, errors: usize) {
        self.last = end;
        if errors < self.errors {
            self.errors = errors;
            self.first_best = end;
            self.last_best = end;
        } else if errors == self.errors {
            self.last_best = end;
        }
    }

    fn emit(self, out: &mut Vec<(usize, usize)>) {
        out.push((self.first_best, self.errors));
        if self.last_best != self.first_best {
            out.push((self.last_best, self.errors));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A range holding every offset of the tests' texts.
    const ALL: Range<usize> = 0..usize::MAX;

    #[test]
    fn occurrences_lists_each_place_in_text_order() {
        let text = IndexedText::new("née, née and née".to_string());
        let found = occurrences(&text, "née", ALL, 2);
        assert_eq!(
            found.iter().map(|m| (m.start, m.end)).collect::<Vec<_>>(),
            vec![(0, 3), (5, 8)]
        );
        assert_eq!(count_exact(&text, "née", ALL, 10), 3);
        assert_eq!(count_exact(&text, "", ALL, 10), 0);
        assert_eq!(
            count_exact(&IndexedText::new("aaa".to_string()), "aa", ALL, 10),
            2
        );
    }

    #[test]
    fn nearest_offers_close_passages_fewest_edits_first() {
        let text = IndexedText::new(
            "The launch is planned for March. The lunch is planned for noon.".to_string(),
        );
        let found = nearest(&text, "The launch is plannd for", ALL, 3);
        let passages: Vec<&str> = found.iter().map(|m| text.slice(m.start, m.end)).collect();
        assert_eq!(passages.first(), Some(&"The launch is planned for"));
        assert!(passages.len() >= 2, "{passages:?}");
        assert!(nearest(&text, "completely unrelated words", ALL, 3).is_empty());
        assert!(nearest(&text, "", ALL, 3).is_empty());
    }

    #[test]
    fn searches_keep_within_their_range() {
        let text = IndexedText::new("the cat sat; the cat ran; the cat hid".to_string());
        assert_eq!(count_exact(&text, "the cat", 5..20, 10), 1);
        assert_eq!(
            count_exact(&text, "the cat", 13..14, 10),
            1,
            "a start inside suffices"
        );
        assert_eq!(
            occurrences(&text, "the cat", 1..text.char_len(), 10)
                .iter()
                .map(|m| m.start)
                .collect::<Vec<_>>(),
            vec![13, 26]
        );
        let q = quote("", "the cat", "");
        assert_eq!(find_exact_within(&text, &q, None, 1..40), exact(13, 20));
        assert_eq!(find_exact_within(&text, &q, Some(0), 20..40), exact(26, 33));
        assert_eq!(find_exact_within(&text, &q, None, 27..40), None);
        assert_eq!(find_exact_within(&text, &q, None, 5..5), None);
        let found = nearest(&text, "the cot", 20..text.char_len(), 3);
        assert!(found.iter().all(|m| m.end > 20), "{found:?}");
    }

    #[test]
    fn counts_every_occurrence_up_to_a_limit() {
        let text = IndexedText::new("the cat sat; the cat ran; aaa".to_string());
        assert_eq!(count_exact(&text, "the cat", ALL, 10), 2);
        assert_eq!(
            count_exact(&text, "aa", ALL, 10),
            2,
            "overlapping occurrences count"
        );
        assert_eq!(count_exact(&text, "dog", ALL, 10), 0);
        assert_eq!(count_exact(&text, "", ALL, 10), 0);
        assert_eq!(count_exact(&text, "a", ALL, 3), 3, "stops at the limit");
    }

    fn quote(prefix: &str, exact: &str, suffix: &str) -> TextQuote {
        TextQuote {
            exact: exact.to_owned(),
            prefix: prefix.to_owned(),
            suffix: suffix.to_owned(),
        }
    }

    #[allow(
        clippy::unnecessary_wraps,
        reason = "compared with the search's `Option` answer"
    )]
    fn exact(start: usize, end: usize) -> Option<TextMatch> {
        Some(TextMatch {
            start,
            end,
            kind: MatchKind::Exact,
        })
    }

    #[allow(
        clippy::unnecessary_wraps,
        reason = "compared with the search's `Option` answer"
    )]
    fn fuzzy(start: usize, end: usize) -> Option<TextMatch> {
        Some(TextMatch {
            start,
            end,
            kind: MatchKind::Fuzzy,
        })
    }

    /// Deterministic pseudo-prose, so that passages are unique but look like text.
    fn prose(seed: u64, words: usize) -> String {
        const VOCAB: [&str; 24] = [
            "the", "review", "of", "document", "changes", "and", "comments", "is", "a", "process",
            "that", "reader", "anchors", "to", "text", "quote", "which", "may", "move", "when",
            "editors", "rewrite", "sections", "later",
        ];
        let mut x = seed.max(1);
        let mut out = String::new();
        for i in 0..words {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i > 0 {
                out.push(if x.is_multiple_of(11) { '\n' } else { ' ' });
            }
            out.push_str(VOCAB[(x >> 8) as usize % VOCAB.len()]);
        }
        out
    }

    fn char_index(text: &str, needle: &str) -> usize {
        let byte = text.find(needle).expect("needle present in test text");
        text[..byte].chars().count()
    }

    #[test]
    fn quote_at_clamps_context() {
        let text = IndexedText::from("héllo wörld");
        assert_eq!(quote_at(&text, 1, 4, 32), quote("h", "éll", "o wörld"));
        assert_eq!(quote_at(&text, 6, 11, 3), quote("lo ", "wörld", ""));
        assert_eq!(quote_at(&text, 0, 2, 0), quote("", "hé", ""));
        assert_eq!(quote_at(&text, 9, 99, 2), quote("ör", "ld", ""));
        assert_eq!(quote_at(&text, 50, 60, 2), quote("ld", "", ""));
    }

    #[test]
    fn find_exact_single_occurrence() {
        let text = IndexedText::from("alpha beta gamma");
        assert_eq!(
            find_exact(&text, &quote("", "beta", ""), None),
            exact(6, 10)
        );
    }

    #[test]
    fn find_exact_missing_or_empty_is_none() {
        let text = IndexedText::from("alpha beta gamma");
        assert_eq!(find_exact(&text, &quote("", "delta", ""), None), None);
        assert_eq!(
            find_exact(&text, &quote("alpha", "", "beta"), Some(5)),
            None
        );
        assert_eq!(
            find_exact(&IndexedText::from(""), &quote("", "a", ""), None),
            None
        );
    }

    #[test]
    fn find_exact_uses_context_to_pick_duplicate() {
        let text = IndexedText::from("one: same words. two: same words. three: same words.");
        let q = quote("two: ", "same words", ". three");
        assert_eq!(find_exact(&text, &q, None), exact(22, 32));
        // Context beats a hint pointing at another occurrence.
        assert_eq!(find_exact(&text, &q, Some(5)), exact(22, 32));
        // A partial prefix still counts for more than none.
        assert_eq!(
            find_exact(&text, &quote("XXee: ", "same words", ""), None),
            exact(41, 51)
        );
    }

    #[test]
    fn find_exact_uses_hint_then_earliest_on_ties() {
        let text = IndexedText::from("xx ab xx ab xx ab xx");
        let q = quote("", "ab", "");
        assert_eq!(find_exact(&text, &q, Some(10)), exact(9, 11));
        assert_eq!(find_exact(&text, &q, Some(16)), exact(15, 17));
        assert_eq!(find_exact(&text, &q, None), exact(3, 5));
        // Equidistant: the earlier one.
        assert_eq!(find_exact(&text, &q, Some(6)), exact(3, 5));
    }

    #[test]
    fn find_exact_finds_overlapping_occurrences() {
        let text = IndexedText::from("aaa");
        assert_eq!(find_exact(&text, &quote("a", "aa", ""), None), exact(1, 3));
    }

    #[test]
    fn find_exact_reports_code_points() {
        let text = IndexedText::from("日本語 😀 café 😀 café!");
        assert_eq!(
            find_exact(&text, &quote("😀 ", "café", "!"), None),
            exact(13, 17)
        );
        assert_eq!(
            find_exact(&text, &quote("", "café", ""), Some(99)),
            exact(13, 17)
        );
        assert_eq!(
            find_exact(&text, &quote("", "語 😀", ""), None),
            exact(2, 5)
        );
    }

    #[test]
    fn find_exact_far_from_hint_falls_back_to_whole_text() {
        let body = prose(1, 6000);
        let text = IndexedText::new(format!("{body} unique marker {body}"));
        let at = char_index(text.as_str(), "unique marker");
        assert!(at > HINT_WINDOW * 2);
        assert_eq!(
            find_exact(&text, &quote("", "unique marker", ""), Some(0)),
            exact(at, at + 13)
        );
    }

    #[test]
    fn reanchor_moved_passage_is_exact_at_new_place() {
        let old = prose(2, 400);
        let old = IndexedText::new(old);
        let start = 1000;
        let q = quote_at(&old, start, start + 80, QUOTE_CONTEXT);
        // Move the passage to the very start of the new version.
        let moved = format!(
            "{}{}{}",
            q.exact,
            old.slice(0, start),
            old.slice(start + 80, old.char_len())
        );
        let new = IndexedText::new(moved);
        assert_eq!(reanchor(&new, &q, Some(start)), exact(0, 80));
    }

    #[test]
    fn reanchor_edited_passage_is_fuzzy_with_correct_range() {
        let before = prose(3, 300);
        let passage = "the reviewers agreed that the second paragraph needs a clearer summary";
        let after = prose(4, 300);
        let old = IndexedText::new(format!("{before} {passage} {after}"));
        let start = char_index(old.as_str(), passage);
        let q = quote_at(&old, start, start + passage.chars().count(), QUOTE_CONTEXT);

        // Words changed inside, and a longer text inserted before it (stale hint).
        let edited = "the reviewers agreed that the 2nd paragraph needs a clear summary";
        let new_text = format!("{} {before} {edited} {after}", prose(5, 50));
        let new = IndexedText::new(new_text);
        let new_start = char_index(new.as_str(), edited);
        let len = edited.chars().count();
        assert_eq!(
            reanchor(&new, &q, Some(start)),
            fuzzy(new_start, new_start + len)
        );
        // Also without a hint.
        assert_eq!(reanchor(&new, &q, None), fuzzy(new_start, new_start + len));
    }

    #[test]
    fn reanchor_edit_at_passage_edges_keeps_the_edited_span() {
        let old = IndexedText::from(
            "intro text. The quick brown fox jumps over the lazy dog. outro text.",
        );
        let q = quote_at(&old, 12, 56, QUOTE_CONTEXT);
        assert_eq!(q.exact, "The quick brown fox jumps over the lazy dog.");
        let new =
            IndexedText::from("intro text. A quick brown fox jumps over the lazy cat. outro text.");
        assert_eq!(reanchor(&new, &q, Some(12)), fuzzy(12, 54));
    }

    #[test]
    fn reanchor_duplicated_edited_passage_follows_context() {
        let passage = "please double check these numbers before publishing";
        let text = format!(
            "In the budget section: {passage}. Unrelated filler here. In the staffing section: {passage}. End."
        );
        let old = IndexedText::new(text);
        let second = old.as_str().rfind(passage).expect("passage present");
        let second = old.as_str()[..second].chars().count();
        let q = quote_at(
            &old,
            second,
            second + passage.chars().count(),
            QUOTE_CONTEXT,
        );

        // Both copies get the same small edit, so no exact match remains.
        let edited = "please double-check these numbers before publishing";
        let new = IndexedText::new(old.as_str().replace(passage, edited));
        let expect = new.as_str().rfind(edited).expect("edited present");
        let expect = new.as_str()[..expect].chars().count();
        let len = edited.chars().count();
        assert_eq!(reanchor(&new, &q, None), fuzzy(expect, expect + len));
        // Context outweighs a hint pointing at the other copy.
        assert_eq!(reanchor(&new, &q, Some(23)), fuzzy(expect, expect + len));
    }

    #[test]
    fn reanchor_deleted_passage_is_orphaned() {
        let before = prose(6, 400);
        let after = prose(7, 400);
        let passage = "the budget table was wrong and has been replaced entirely";
        let old = IndexedText::new(format!("{before} {passage} {after}"));
        let start = char_index(old.as_str(), passage);
        let q = quote_at(&old, start, start + passage.chars().count(), QUOTE_CONTEXT);
        let new = IndexedText::new(format!("{before} {after}"));
        assert_eq!(reanchor(&new, &q, Some(start)), None);
        assert_eq!(reanchor(&new, &q, None), None);

        // A passage made of the document's own vocabulary is the hard case: look-alikes
        // exist, but their context disagrees.
        let own_words: String = prose(8, 12);
        let old = IndexedText::new(format!("{before} {own_words} {after}"));
        let start = char_index(old.as_str(), &own_words);
        let q = quote_at(
            &old,
            start,
            start + own_words.chars().count(),
            QUOTE_CONTEXT,
        );
        assert_eq!(reanchor(&new, &q, Some(start)), None);

        // A similar sentence survives elsewhere, within the error allowance of the deleted
        // one; its context gives it away.
        let deleted = "the quarterly budget was approved by the board in March";
        let similar = "the quarterly budget was rejected by the board in May";
        let old = IndexedText::new(format!("{before} {deleted}. {after} {similar}."));
        let start = char_index(old.as_str(), deleted);
        let q = quote_at(&old, start, start + deleted.chars().count(), QUOTE_CONTEXT);
        let new = IndexedText::new(format!("{before} {after} {similar}."));
        let similar_at = char_index(new.as_str(), similar);
        let probe = quote("", deleted, "");
        assert_eq!(
            reanchor(&new, &probe, None).map(|m| m.start),
            Some(similar_at),
            "without context the look-alike is accepted"
        );
        assert_eq!(reanchor(&new, &q, Some(start)), None);
    }

    #[test]
    fn reanchor_short_quotes_need_context() {
        let new = IndexedText::from("nothing like it here at all");
        assert_eq!(reanchor(&new, &quote("", "x", ""), None), None);
        assert_eq!(reanchor(&new, &quote("a ", "hexe", " b"), None), None);
        let new = IndexedText::from("before cats after");
        assert_eq!(
            reanchor(&new, &quote("before ", "cat", " after"), None),
            exact(7, 10)
        );
        assert_eq!(
            reanchor(&new, &quote("before ", "cots", " after"), None),
            fuzzy(7, 11)
        );
    }

    #[test]
    fn reanchor_multibyte_fuzzy_offsets() {
        let old = IndexedText::from("前文です。日本語のテキストを編集しました。後文です。");
        let q = quote_at(&old, 5, 20, 5);
        assert_eq!(q.exact, "日本語のテキストを編集しました");
        let new = IndexedText::from("😀前文です。日本語のテキストを修正しました。後文です。");
        assert_eq!(reanchor(&new, &q, Some(5)), fuzzy(6, 21));
    }

    #[test]
    fn reanchor_long_quote_with_scattered_edits() {
        let old_text = prose(9, 3000);
        let old = IndexedText::new(old_text.clone());
        let start = 2000;
        let q = quote_at(&old, start, start + 4000, QUOTE_CONTEXT);
        // Replace every 50th char of the quoted span with '#'.
        let mut chars: Vec<char> = old_text.chars().collect();
        for i in (start..start + 4000).step_by(50) {
            chars[i] = '#';
        }
        let new = IndexedText::new(chars.into_iter().collect());
        assert_eq!(reanchor(&new, &q, Some(start)), fuzzy(start, start + 4000));
        // With the edited span moved far away, the whole-text search still finds it.
        assert_eq!(
            reanchor(&new, &q, Some(new.char_len())),
            fuzzy(start, start + 4000)
        );
    }

    #[test]
    fn reanchor_overlong_quote_is_exact_only() {
        let old_text = prose(10, 3000);
        let old = IndexedText::new(old_text.clone());
        let q = quote_at(&old, 100, 100 + MAX_FUZZY_LEN + 1, QUOTE_CONTEXT);
        assert_eq!(
            reanchor(&old, &q, Some(100)),
            exact(100, 101 + MAX_FUZZY_LEN)
        );
        let mut chars: Vec<char> = old_text.chars().collect();
        chars[5000] = '#';
        let new = IndexedText::new(chars.into_iter().collect());
        assert_eq!(reanchor(&new, &q, Some(100)), None);
    }

    #[test]
    fn text_quote_serde_defaults_context() {
        let q: TextQuote = serde_json::from_str(r#"{"exact":"x"}"#).expect("valid json");
        assert_eq!(q, quote("", "x", ""));
    }
}
