//! Passages as readers and agents see them: a phrase found whatever its case and white space,
//! passages widened to whole words, and text shown with its block boundaries.
//!
//! The text anchors count (a browser's `textContent`) runs blocks together: `<h2>Plan</h2><p>Send`
//! is `"PlanSend"`. Readers see a break there, so what they copy has one; these functions let such a
//! copy find its passage, and show pages with the break while positions stay the text's own.

use std::ops::Range;

use memchr::memmem;

use crate::indexed::IndexedText;

/// Code points a passage is widened by at most on each side to reach a word's edge: a word
/// longer than that is cut rather than swallowing a run of text written without spaces.
const MAX_WIDEN: usize = 48;

/// Whether `c` is part of a word that spaces or punctuation delimit: letters, digits and `_`,
/// except in scripts written without spaces (Chinese, Japanese, Thai, …), where any two
/// characters may be a word's edge.
pub fn is_word_char(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !is_unspaced_script(c)
}

fn is_unspaced_script(c: char) -> bool {
    matches!(
        u32::from(c),
        0x0E00..=0x0EFF // Thai, Lao
            | 0x1000..=0x109F // Myanmar
            | 0x1780..=0x17FF // Khmer
            | 0x3040..=0x30FF // Hiragana, Katakana
            | 0x3400..=0x4DBF // CJK extension A
            | 0x4E00..=0x9FFF // CJK unified ideographs
            | 0xF900..=0xFAFF // CJK compatibility ideographs
            | 0x20000..=0x3FFFF // CJK extensions B and later
    )
}

/// Whether a block starts or ends at `at` (`breaks` sorted, as `DocumentText::block_breaks`).
fn is_break(breaks: &[usize], at: usize) -> bool {
    breaks.binary_search(&at).is_ok()
}

/// `start..end` (code points) trimmed of white space at its ends and widened to whole words: a
/// passage that starts or ends inside a word takes the rest of that word (at most 48 code points
/// on each side), never across a block boundary. "cklog has gro" becomes "backlog has grown".
pub fn widen_to_words(
    text: &IndexedText,
    breaks: &[usize],
    start: usize,
    end: usize,
) -> (usize, usize) {
    let end = end.min(text.char_len());
    let mut start = start.min(end);
    let passage: Vec<char> = text.slice(start, end).chars().collect();
    let leading = passage.iter().take_while(|c| c.is_whitespace()).count();
    if leading == passage.len() {
        return (start, end);
    }
    let trailing = passage
        .iter()
        .rev()
        .take_while(|c| c.is_whitespace())
        .count();
    start += leading;
    let mut end = end - trailing;
    let first = passage[leading];
    let last = passage[passage.len() - 1 - trailing];

    if is_word_char(first) {
        let before: Vec<char> = text
            .slice(start.saturating_sub(MAX_WIDEN), start)
            .chars()
            .collect();
        for c in before.iter().rev() {
            if !is_word_char(*c) || is_break(breaks, start) {
                break;
            }
            start -= 1;
        }
    }
    if is_word_char(last) {
        for c in text.slice(end, end + MAX_WIDEN).chars() {
            if !is_word_char(c) || is_break(breaks, end) {
                break;
            }
            end += 1;
        }
    }
    (start, end)
}

/// `text[start..end]` as a reader sees it: a line break where two blocks meet with no white
/// space between them. Every other character is the text's own, so a passage's position in the
/// text is its position here less the line breaks before it.
pub fn readable(text: &IndexedText, breaks: &[usize], start: usize, end: usize) -> String {
    let end = end.min(text.char_len());
    let start = start.min(end);
    let slice = text.slice(start, end);
    let first = breaks.partition_point(|&b| b <= start);
    let mut inner = breaks[first..].iter().take_while(|&&b| b < end).peekable();
    let mut out = String::with_capacity(slice.len() + 16);
    let mut previous = text
        .slice(start.saturating_sub(1), start)
        .chars()
        .next()
        .filter(|_| start > 0);
    for (offset, c) in slice.chars().enumerate() {
        let at = start + offset;
        if inner.next_if(|&&b| b == at).is_some()
            && previous.is_some_and(|p| !p.is_whitespace())
            && !c.is_whitespace()
        {
            out.push('\n');
        }
        out.push(c);
        previous = Some(c);
    }
    out
}

/// The part of a text between two code points, as a search sees it: white space left out and
/// letters in lower case (where that is one letter for one), with where each character came from.
struct Folded {
    text: String,
    /// The code point in the text of each character of `text`.
    origin: Vec<usize>,
}

impl Folded {
    fn new(text: &IndexedText, within: &Range<usize>, fold_case: bool) -> Self {
        let mut folded = String::new();
        let mut origin = Vec::new();
        for (offset, c) in text.slice(within.start, within.end).chars().enumerate() {
            if !c.is_whitespace() {
                folded.push(if fold_case { fold(c) } else { c });
                origin.push(within.start + offset);
            }
        }
        Folded {
            text: folded,
            origin,
        }
    }

    /// Every occurrence of `needle` (already folded), overlapping ones included, as code-point
    /// ranges of the original text, in text order; at most `limit`.
    fn find_all(&self, needle: &str, limit: usize) -> Vec<(usize, usize)> {
        let needle_len = needle.chars().count();
        let Some(first) = needle.chars().next() else {
            return Vec::new();
        };
        let finder = memmem::Finder::new(needle.as_bytes());
        let haystack = self.text.as_bytes();
        let mut found = Vec::new();
        let (mut byte, mut chars_before) = (0, 0);
        let mut counted_to = 0;
        while found.len() < limit {
            let Some(at) = finder.find(&haystack[byte..]) else {
                break;
            };
            let start_byte = byte + at;
            chars_before += self.text[counted_to..start_byte].chars().count();
            counted_to = start_byte;
            let index = chars_before;
            found.push((self.origin[index], self.origin[index + needle_len - 1] + 1));
            byte = start_byte + first.len_utf8();
        }
        found
    }
}

/// A character in lower case, when that is a single character (as search compares them).
fn fold(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(single), None) => single,
        _ => c,
    }
}

fn folded_needle(phrase: &str, fold_case: bool) -> String {
    phrase
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if fold_case { fold(c) } else { c })
        .collect()
}

/// Where `phrase` occurs in the part `within` of `text` when neither case nor white space is
/// compared ("plan send" finds `"PlanSend"` and `"Plan\n send"`): code-point ranges in text order
/// (overlapping ones included), at most `limit`. Empty for a phrase of white space alone.
pub fn find_phrase(
    text: &IndexedText,
    phrase: &str,
    within: Range<usize>,
    limit: usize,
) -> Vec<(usize, usize)> {
    let needle = folded_needle(phrase, true);
    if needle.is_empty() {
        return Vec::new();
    }
    Folded::new(text, &within, true).find_all(&needle, limit)
}

/// Where `exact` occurs in the part `within` of `text` when white space is not compared (case
/// is): for quotes copied from a rendered page, which has a line break where blocks meet although
/// the text has none, or other white space than the markup holds. Code-point ranges in text
/// order, at most `limit`.
pub fn find_ignoring_whitespace(
    text: &IndexedText,
    exact: &str,
    within: Range<usize>,
    limit: usize,
) -> Vec<(usize, usize)> {
    let needle = folded_needle(exact, false);
    if needle.is_empty() {
        return Vec::new();
    }
    Folded::new(text, &within, false).find_all(&needle, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widened(text: &str, breaks: &[usize], passage: &str) -> String {
        let indexed = IndexedText::from(text);
        let byte = text.find(passage).expect("passage in text");
        let start = text[..byte].chars().count();
        let end = start + passage.chars().count();
        let (start, end) = widen_to_words(&indexed, breaks, start, end);
        indexed.slice(start, end).to_string()
    }

    #[test]
    fn passages_widen_to_whole_words() {
        let text = "The backlog has grown since March.";
        assert_eq!(widened(text, &[], "cklog has gro"), "backlog has grown");
        assert_eq!(widened(text, &[], " backlog "), "backlog");
        assert_eq!(widened(text, &[], "backlog has"), "backlog has");
        assert_eq!(widened(text, &[], "e backlog"), "The backlog");
        assert_eq!(widened(text, &[], "March."), "March.");
        assert_eq!(
            widened("a   b", &[], "   "),
            "   ",
            "white space alone stays"
        );
    }

    #[test]
    fn widening_stops_at_block_boundaries_and_in_unspaced_scripts() {
        // "Plan" is a heading, "Send" a paragraph: they are two words though nothing separates them.
        assert_eq!(
            widened("PlanSend questions", &[4], "end quest"),
            "Send questions"
        );
        assert_eq!(widened("PlanSend questions", &[4], "lanS"), "PlanSend");
        assert_eq!(widened("日本語のテキストです", &[], "本語"), "本語");
        let long = format!("{}xyz", "a".repeat(200));
        assert_eq!(widened(&long, &[], "xyz").chars().count(), 3 + MAX_WIDEN);
    }

    #[test]
    fn readable_text_shows_block_boundaries_without_moving_characters() {
        let text = IndexedText::from("PlanSend questions\nSystemOwner");
        // Breaks: after the heading "Plan", before and after the paragraph, between cells.
        let breaks = [0, 4, 18, 19, 25, 30];
        assert_eq!(
            readable(&text, &breaks, 0, 30),
            "Plan\nSend questions\nSystem\nOwner"
        );
        assert_eq!(
            readable(&text, &breaks, 4, 8),
            "Send",
            "a break at the start is not shown"
        );
        assert_eq!(readable(&text, &breaks, 2, 6), "an\nSe");
        assert_eq!(readable(&text, &[], 0, 8), "PlanSend");
        let removed: String = readable(&text, &breaks, 0, 30)
            .chars()
            .enumerate()
            .filter(|&(at, c)| !(c == '\n' && [4, 26].contains(&at)))
            .map(|(_, c)| c)
            .collect();
        assert_eq!(removed, text.as_str(), "only line breaks were added");
    }

    #[test]
    fn phrases_are_found_whatever_their_case_and_white_space() {
        let text = IndexedText::from("PlanSend questions. Plan send\n QUESTIONS. Ünïcode über");
        let all = find_phrase(&text, "plan  send questions", 0..text.char_len(), 10);
        assert_eq!(all, vec![(0, 18), (20, 40)]);
        assert_eq!(text.slice(20, 40), "Plan send\n QUESTIONS");
        assert_eq!(
            find_phrase(&text, "plan send questions", 0..text.char_len(), 1),
            vec![(0, 18)]
        );
        assert_eq!(
            find_phrase(&text, "plan send questions", 1..text.char_len(), 10),
            vec![(20, 40)],
            "only within the range"
        );
        assert_eq!(
            find_phrase(&text, "ÜBER", 0..text.char_len(), 10),
            vec![(50, 54)]
        );
        assert!(find_phrase(&text, "  ", 0..text.char_len(), 10).is_empty());
        assert!(find_phrase(&text, "absent", 0..text.char_len(), 10).is_empty());
        let overlapping = IndexedText::from("aaa");
        assert_eq!(
            find_phrase(&overlapping, "aa", 0..3, 10),
            vec![(0, 2), (1, 3)]
        );
    }

    #[test]
    fn quotes_are_found_whatever_their_white_space_but_not_their_case() {
        let text = IndexedText::from("Scopealpha word\n  next Scopealpha");
        let all = 0..text.char_len();
        assert_eq!(
            find_ignoring_whitespace(&text, "Scope\nalpha", all.clone(), 10),
            vec![(0, 10), (23, 33)]
        );
        assert_eq!(
            find_ignoring_whitespace(&text, "word next", all.clone(), 10),
            vec![(11, 22)]
        );
        assert!(find_ignoring_whitespace(&text, "scope alpha", all.clone(), 10).is_empty());
        assert!(find_ignoring_whitespace(&text, "  ", all, 10).is_empty());
    }
}
