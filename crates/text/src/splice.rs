//! Changing a document's text while keeping its HTML: suggested changes are spliced into the
//! original bytes, never into a re-serialized page.
//!
//! Each edit replaces a range of the text (code points, as anchors count them). Within the
//! range, the old and new passages are compared word by word, and only what changed is
//! touched: removed characters lose their source bytes, added text is escaped and written
//! where the text it replaces was (or just after the character before it). Markup inside the
//! range (tags, comments) is never removed, so a passage that crosses elements keeps them, and
//! every byte outside the edited characters stays as it was. The result is parsed again and
//! must read as the edited text, or nothing is returned.

use std::ops::Range;
use std::time::Duration;

use similar::{Algorithm, ChangeTag, TextDiff};

use crate::html::{DocumentText, extract};
use crate::source::{Alignment, Piece, PieceKind, SourceMap};

/// Longest the word comparison of one passage may take before it compares coarser.
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// One change to a document's text: code points `start..end` become `text` (`start == end`
/// inserts `text` there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextEdit<'a> {
    pub start: usize,
    pub end: usize,
    pub text: &'a str,
}

/// A document with edits spliced in, and its text as parsed again.
#[derive(Debug, Clone)]
pub struct Spliced {
    pub html: String,
    pub text: DocumentText,
}

/// Why edits could not be spliced. `edit` is an index into the edits as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SpliceError {
    #[error("edit {edit} reaches past the end of the text")]
    OutOfRange { edit: usize },
    #[error("edits {first} and {second} change the same text")]
    Overlap { first: usize, second: usize },
    /// Characters the edit changes have no single place in the source: text the parser moved
    /// (out of a table), or half of a reference that stands for two characters.
    #[error("the text edit {edit} changes cannot be traced to the document's source")]
    Untraceable { edit: usize },
    /// The spliced document does not read as the edited text: a rule of HTML the splice
    /// cannot keep (a newline right after `<pre>`, text inside `<xmp>`).
    #[error("the changed document would not read as the changed text")]
    Unverified,
}

/// The first two of `ranges` (code-point `start..end`) that change the same text: overlapping
/// ranges, an insertion strictly inside a range, or two insertions at one place.
pub fn overlapping(ranges: &[(usize, usize)]) -> Option<(usize, usize)> {
    for (first, &(a_start, a_end)) in ranges.iter().enumerate() {
        for (second, &(b_start, b_end)) in ranges.iter().enumerate().skip(first + 1) {
            let clash = match (a_start == a_end, b_start == b_end) {
                (true, true) => a_start == b_start,
                (true, false) => b_start < a_start && a_start < b_end,
                (false, true) => a_start < b_start && b_start < a_end,
                (false, false) => a_start < b_end && b_start < a_end,
            };
            if clash {
                return Some((first, second));
            }
        }
    }
    None
}

/// Splices `edits` of `text` (the text `extract` gives for `html`) into `html`.
pub fn splice(html: &str, text: &str, edits: &[TextEdit]) -> Result<Spliced, SpliceError> {
    let text_len = text.chars().count();
    if let Some(edit) = edits
        .iter()
        .position(|edit| edit.start > edit.end || edit.end > text_len)
    {
        return Err(SpliceError::OutOfRange { edit });
    }
    let ranges: Vec<(usize, usize)> = edits.iter().map(|edit| (edit.start, edit.end)).collect();
    if let Some((first, second)) = overlapping(&ranges) {
        return Err(SpliceError::Overlap { first, second });
    }
    let mut order: Vec<usize> = (0..edits.len()).collect();
    order.sort_by_key(|&index| (edits[index].start, edits[index].end));

    let map = SourceMap::scan(html);
    let alignment = Alignment::new(&map.text, text);
    let chars: Vec<char> = text.chars().collect();
    let mut planner = Planner {
        html,
        map: &map,
        alignment: &alignment,
        edits: Vec::new(),
    };
    for (rank, &index) in order.iter().enumerate() {
        let edit = &edits[index];
        let old: String = chars[edit.start..edit.end].iter().collect();
        planner
            .plan(rank, edit.start..edit.end, &old, edit.text)
            .ok_or(SpliceError::Untraceable { edit: index })?;
    }
    planner.protect_fragile_pieces();
    let new_html = planner.apply().ok_or(SpliceError::Unverified)?;

    let mut expected = String::with_capacity(text.len());
    let mut cursor = 0;
    for &index in &order {
        let edit = &edits[index];
        expected.extend(&chars[cursor..edit.start]);
        expected.push_str(edit.text);
        cursor = edit.end;
    }
    expected.extend(&chars[cursor..]);

    let reparsed = extract(&new_html);
    if reparsed.text != expected {
        return Err(SpliceError::Unverified);
    }
    Ok(Spliced {
        html: new_html,
        text: reparsed,
    })
}

/// A change to the source bytes: `start..end` becomes `text`. `rank` orders edits at one
/// place as the text edits they come from are ordered.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ByteEdit {
    start: usize,
    end: usize,
    text: String,
    rank: usize,
}

/// Where added text goes in the source.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// Just before this text character (inside its element).
    Before(usize),
    /// Just after this text character (inside its element).
    After(usize),
}

struct Planner<'a> {
    html: &'a str,
    map: &'a SourceMap,
    alignment: &'a Alignment,
    edits: Vec<ByteEdit>,
}

impl Planner<'_> {
    /// Plans one text edit: the passage `range` (reading `old`) becomes `new`. `None` when
    /// the characters it changes cannot be traced to the source.
    fn plan(&mut self, rank: usize, range: Range<usize>, old: &str, new: &str) -> Option<()> {
        let diff = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .timeout(DIFF_DEADLINE)
            .diff_words(old, new);
        let mut at = range.start;
        let mut removed = 0;
        let mut added = String::new();
        let changes: Vec<(ChangeTag, &str)> = diff
            .iter_all_changes()
            .map(|change| (change.tag(), change.value()))
            .collect();
        for (tag, value) in changes
            .into_iter()
            .chain(std::iter::once((ChangeTag::Equal, "")))
        {
            match tag {
                ChangeTag::Delete => removed += value.chars().count(),
                ChangeTag::Insert => added.push_str(value),
                ChangeTag::Equal => {
                    if removed > 0 || !added.is_empty() {
                        self.change(rank, &range, at..at + removed, &added)?;
                    }
                    at += removed + value.chars().count();
                    removed = 0;
                    added.clear();
                }
            }
        }
        Some(())
    }

    /// Characters `gone` of the passage `passage` are replaced by `added`.
    fn change(
        &mut self,
        rank: usize,
        passage: &Range<usize>,
        gone: Range<usize>,
        added: &str,
    ) -> Option<()> {
        if !added.is_empty() {
            // Added text takes the place of what it replaces, else follows the character
            // before it in the passage, else precedes the one after it.
            let place = if !gone.is_empty() {
                Place::Before(gone.start)
            } else if gone.start > passage.start {
                Place::After(gone.start - 1)
            } else if gone.start < passage.end || gone.start == 0 {
                Place::Before(gone.start)
            } else {
                Place::After(gone.start - 1)
            };
            let at = self.byte_at(place)?;
            self.edits.push(ByteEdit {
                start: at,
                end: at,
                text: escape(added),
                rank,
            });
        }
        if !gone.is_empty() {
            for scanned in self.alignment.scanned(gone)? {
                self.remove(rank, scanned)?;
            }
        }
        Some(())
    }

    /// The source offset of `place`.
    fn byte_at(&self, place: Place) -> Option<usize> {
        let (char_at, after) = match place {
            Place::Before(at) => (at, false),
            Place::After(at) => (at, true),
        };
        let scanned = self.alignment.scanned_char(char_at)?;
        let piece = &self.map.pieces[self.map.piece_at(scanned)?];
        let offset = scanned - piece.first_char + usize::from(after);
        match piece.kind {
            PieceKind::Verbatim { .. } => Some(self.verbatim_byte(piece, offset)),
            PieceKind::Decoded { .. } if offset == 0 => Some(piece.bytes.0),
            PieceKind::Decoded { .. } if offset == piece.char_count() => Some(piece.bytes.1),
            PieceKind::Decoded { .. } => None,
        }
    }

    /// Removes the source of scanned characters `range`.
    fn remove(&mut self, rank: usize, range: Range<usize>) -> Option<()> {
        let mut index = self.map.piece_at(range.start)?;
        while let Some(piece) = self.map.pieces.get(index) {
            if piece.first_char >= range.end {
                break;
            }
            let chars = piece.chars();
            let from = range.start.max(chars.start) - chars.start;
            let to = range.end.min(chars.end) - chars.start;
            let (start, end) = match piece.kind {
                PieceKind::Verbatim { .. } => (
                    self.verbatim_byte(piece, from),
                    self.verbatim_byte(piece, to),
                ),
                PieceKind::Decoded { .. } if from == 0 && to == piece.char_count() => piece.bytes,
                PieceKind::Decoded { .. } => return None,
            };
            self.edits.push(ByteEdit {
                start,
                end,
                text: String::new(),
                rank,
            });
            index += 1;
        }
        Some(())
    }

    fn verbatim_byte(&self, piece: &Piece, chars: usize) -> usize {
        let (start, end) = piece.bytes;
        self.html[start..end]
            .char_indices()
            .nth(chars)
            .map_or(end, |(offset, _)| start + offset)
    }

    /// A reference without its semicolon, or a lone `&`, `<` or `\r`, changes meaning with
    /// what follows it: when an edit starts right after one, it is written out in full.
    fn protect_fragile_pieces(&mut self) {
        let mut starts: Vec<usize> = self.edits.iter().map(|edit| edit.start).collect();
        starts.sort_unstable();
        starts.dedup();
        for start in starts {
            let index = self
                .map
                .pieces
                .partition_point(|piece| piece.bytes.1 < start);
            let Some(piece) = self.map.pieces.get(index) else {
                continue;
            };
            let PieceKind::Decoded {
                chars,
                count,
                fragile: true,
            } = piece.kind
            else {
                continue;
            };
            let (from, to) = piece.bytes;
            let removed = self
                .edits
                .iter()
                .any(|edit| edit.start < to && from < edit.end);
            if to == start && !removed {
                let written: String = chars[..usize::from(count)].iter().collect();
                self.edits.push(ByteEdit {
                    start: from,
                    end: to,
                    text: escape(&written),
                    rank: 0,
                });
            }
        }
    }

    /// The source with every edit made; `None` when two edits claim the same bytes.
    fn apply(mut self) -> Option<String> {
        self.edits
            .sort_by_key(|edit| (edit.start, edit.end, edit.rank));
        let mut out = String::with_capacity(self.html.len());
        let mut cursor = 0;
        for edit in &self.edits {
            if edit.start < cursor {
                return None;
            }
            out.push_str(&self.html[cursor..edit.start]);
            out.push_str(&edit.text);
            cursor = edit.end;
        }
        out.push_str(&self.html[cursor..]);
        Some(out)
    }
}

/// `text` as HTML text content: markup characters as references, a carriage return as one
/// (written as is, the parser would read it as a line feed).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(html: &str, find: &str, replacement: &str) -> Result<String, SpliceError> {
        let text = extract(html).text;
        let byte = text.find(find).expect("passage in text");
        let start = text[..byte].chars().count();
        let end = start + find.chars().count();
        splice(
            html,
            &text,
            &[TextEdit {
                start,
                end,
                text: replacement,
            }],
        )
        .map(|spliced| spliced.html)
    }

    #[test]
    fn replaces_a_word_inside_its_element() {
        assert_eq!(
            apply(
                "<p>The <b>quick</b> fox</p>",
                "The quick fox",
                "The slow fox"
            )
            .unwrap(),
            "<p>The <b>slow</b> fox</p>"
        );
    }

    #[test]
    fn a_passage_across_elements_keeps_them() {
        assert_eq!(
            apply(
                "<p>one <i>two</i></p> <p>three four</p>",
                "two three",
                "2 3"
            )
            .unwrap(),
            "<p>one <i>2</i></p> <p>3 four</p>"
        );
        assert_eq!(
            apply("<p>a <b>bold</b> c</p>", "a bold c", "").unwrap(),
            "<p><b></b></p>"
        );
    }

    #[test]
    fn keeps_references_and_escapes_new_text() {
        assert_eq!(
            apply("<p>Fish &amp; chips &eacute;</p>", "chips", "<peas> & mash").unwrap(),
            "<p>Fish &amp; &lt;peas&gt; &amp; mash &eacute;</p>"
        );
        assert_eq!(
            apply("<p>caf&eacute; au lait</p>", "café", "tea").unwrap(),
            "<p>tea au lait</p>"
        );
    }

    #[test]
    fn writes_out_a_reference_that_would_change_meaning() {
        // Without its semicolon, `&not` followed by "in;" would read as `&notin;` (∉).
        assert_eq!(
            apply("<p>a &not in;</p>", "¬ in;", "¬in;").unwrap(),
            "<p>a ¬in;</p>"
        );
        assert_eq!(apply("<p>a < b</p>", " b", "b").unwrap(), "<p>a &lt;b</p>");
    }

    #[test]
    fn inserts_after_a_passage() {
        let html = "<p>Ship on <em>Monday</em>.</p>";
        let text = extract(html).text;
        let spliced = splice(
            html,
            &text,
            &[TextEdit {
                start: 14,
                end: 14,
                text: " or Tuesday",
            }],
        )
        .unwrap();
        assert_eq!(spliced.html, "<p>Ship on <em>Monday or Tuesday</em>.</p>");
        assert_eq!(spliced.text.text, "Ship on Monday or Tuesday.");
    }

    #[test]
    fn several_edits_at_once() {
        let html = "<p>alpha beta</p><p>gamma delta</p>";
        let text = extract(html).text;
        let spliced = splice(
            html,
            &text,
            &[
                TextEdit {
                    start: 16,
                    end: 21,
                    text: "DELTA",
                },
                TextEdit {
                    start: 0,
                    end: 5,
                    text: "ALPHA",
                },
            ],
        )
        .unwrap();
        assert_eq!(spliced.html, "<p>ALPHA beta</p><p>gamma DELTA</p>");
    }

    #[test]
    fn refusals() {
        let html = "<p>abc</p>";
        let edit = |start, end| TextEdit {
            start,
            end,
            text: "x",
        };
        assert_eq!(
            splice(html, "abc", &[edit(1, 4)]).unwrap_err(),
            SpliceError::OutOfRange { edit: 0 }
        );
        assert_eq!(
            splice(html, "abc", &[edit(0, 2), edit(1, 3)]).unwrap_err(),
            SpliceError::Overlap {
                first: 0,
                second: 1
            }
        );
        // A newline right after <pre> is dropped by the parser: the result would not read as
        // the edited text.
        assert_eq!(
            apply("<pre>abc</pre>", "abc", "\nabc").unwrap_err(),
            SpliceError::Unverified
        );
        // A two-character reference cut in half.
        assert_eq!(
            apply("<p>&NotEqualTilde;</p>", "\u{338}", "").unwrap_err(),
            SpliceError::Untraceable { edit: 0 }
        );
    }

    #[test]
    fn overlap_rules() {
        assert_eq!(overlapping(&[(0, 3), (3, 5)]), None);
        assert_eq!(overlapping(&[(3, 3), (3, 5)]), None);
        assert_eq!(overlapping(&[(0, 3), (3, 3)]), None);
        assert_eq!(overlapping(&[(0, 4), (2, 2)]), Some((0, 1)));
        assert_eq!(overlapping(&[(2, 2), (2, 2)]), Some((0, 1)));
        assert_eq!(overlapping(&[(0, 2), (5, 9), (1, 3)]), Some((0, 2)));
    }
}
